//! Near-duplicates, as a reviewer needs to see them: the open agent drafts
//! of the same counterparty and the same items in the branch — what the
//! draft tools ask a person about before creating a second one, and what
//! a person may have confirmed anyway ("create another").
//!
//! Read through the ERP port ([`Drafting::open_drafts`]), so it works the
//! same on every backend,
//! from the record the draft's own check reads (on the built-in backend,
//! the near-duplicate markers; on Tryton, its drafts). The window is the
//! deployment's near-duplicate window (the default day when the question
//! is turned off; the built-in backend then marks no draft, so the pages
//! show the twins of drafts made while it was on).
//!
//! [`Drafting::open_drafts`]: draftline_erp::port::Drafting::open_drafts

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use draftline_contract::ToolError;
use draftline_erp::domain::{DocumentKind, OpenDraft};
use draftline_erp::port::Scope;
use draftline_server::config::DEFAULT_NEAR_DUPLICATE_WINDOW;

use crate::Context;

/// The open drafts of `kind` for `counterparty` in the person's branch
/// drafted since the window before `around` (and any time after it).
pub async fn open_drafts(
    cx: &Context<'_>,
    kind: DocumentKind,
    counterparty: &str,
    around: &str,
) -> Result<Vec<OpenDraft>, ToolError> {
    let window = cx
        .app
        .config()
        .near_duplicate_window
        .unwrap_or(DEFAULT_NEAR_DUPLICATE_WINDOW);
    let since = parse(around)
        .and_then(|at| {
            chrono::Duration::from_std(window)
                .ok()
                .and_then(|w| at.checked_sub_signed(w))
        })
        .unwrap_or_else(|| cx.app.clock().now());
    let scope = Scope::of(cx.person());
    let now = cx.app.clock().now();
    Ok(cx
        .pages
        .erp()
        .open_drafts(&scope, kind, counterparty, since, now)
        .await?)
}

/// The drafts of `open` other than `number` that ask for exactly `items`
/// (item codes), oldest first.
pub fn twins<'a>(number: &str, items: &BTreeSet<&str>, open: &'a [OpenDraft]) -> Vec<&'a OpenDraft> {
    let mut twins: Vec<&OpenDraft> = open
        .iter()
        .filter(|draft| draft.number != number && draft.same_items(items.iter().copied()))
        .collect();
    twins.sort_by(|a, b| a.created_at.cmp(&b.created_at));
    twins
}

/// The item codes of open draft `number` in `open`, if it is there.
pub fn items_of<'a>(number: &str, open: &'a [OpenDraft]) -> Option<BTreeSet<&'a str>> {
    open.iter()
        .find(|draft| draft.number == number)
        .map(|draft| draft.lines.iter().map(|l| l.item_code.as_str()).collect())
}

fn parse(at: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(at).ok().map(|at| at.with_timezone(&Utc))
}

/// How far apart two drafts were drafted, in words: "3 minutes apart",
/// "less than a minute apart", "2 hours apart".
pub fn apart(a: &str, b: &str) -> String {
    let (Some(a), Some(b)) = (parse(a), parse(b)) else {
        return "drafted the same day".to_owned();
    };
    let gap = (a - b).abs();
    let text = match gap.num_minutes() {
        0 => "less than a minute".to_owned(),
        1 => "1 minute".to_owned(),
        m if m < 120 => format!("{m} minutes"),
        _ => format!("{} hours", gap.num_hours()),
    };
    format!("drafted {text} apart")
}

#[cfg(test)]
mod tests {
    use super::*;
    use draftline_erp::domain::OpenLine;
    use draftline_erp::units::Uom;

    fn open(number: &str, at: &str, items: &[&str]) -> OpenDraft {
        OpenDraft {
            number: number.into(),
            counterparty: "V-00231".into(),
            lines: items
                .iter()
                .map(|code| OpenLine {
                    item_code: (*code).into(),
                    qty: 1,
                    uom: Uom::Box,
                })
                .collect(),
            agent_run: None,
            created_at: at.into(),
            key: None,
        }
    }

    #[test]
    fn twins_are_the_other_open_drafts_of_exactly_the_same_items() {
        let all = vec![
            open("PO-1", "2026-12-01T09:00:00Z", &["A", "B"]),
            open("PO-2", "2026-12-01T09:03:00Z", &["B", "A"]),
            open("PO-3", "2026-12-01T09:04:00Z", &["A"]),
            open("PO-4", "2026-12-01T08:00:00Z", &["A", "B", "C"]),
        ];
        let items = items_of("PO-2", &all).unwrap();
        let found: Vec<&str> = twins("PO-2", &items, &all).iter().map(|d| d.number.as_str()).collect();
        assert_eq!(found, ["PO-1"]);
        assert!(items_of("PO-9", &all).is_none());
        assert_eq!(apart(&all[0].created_at, &all[1].created_at), "drafted 3 minutes apart");
        assert_eq!(apart(&all[1].created_at, &all[0].created_at), "drafted 3 minutes apart");
        assert_eq!(
            apart("2026-12-01T09:00:00Z", "2026-12-01T09:00:30Z"),
            "drafted less than a minute apart"
        );
        assert_eq!(
            apart("2026-12-01T09:00:00Z", "2026-12-01T12:00:00Z"),
            "drafted 3 hours apart"
        );
    }
}
