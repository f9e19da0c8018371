//! The near-duplicate marker: one item per branch, kind, counterparty and
//! item set, listing the open agent drafts of exactly those items. It is
//! the one record of a branch's open drafts: the near-duplicate check reads
//! one marker (a keyed read, in the key lookup's batch), and the review
//! pages read a counterparty's markers (one `Query` of their partition).
//!
//! Each open draft is one attribute of the marker, `d#<number>`, holding
//! the draft as JSON; `v` counts the drafts ever added. A draft is added
//! in its own transaction, on the condition that the marker is still as
//! the check read it ([`Seen`]): of two drafts of the same items placed at
//! once, the second's transaction fails, it is prepared again, and asks.
//! A person's decision removes its draft in the decision's own transaction.
//! Drafts older than a day, and all but the [`KEPT`] newest, are dropped by
//! the next draft that reads them, and a marker expires (DynamoDB TTL,
//! `expires_at`) a day after its newest draft, so a counterparty's
//! partition holds the item sets drafted in the last day (and markers
//! written before markers expired, until their item set is drafted or
//! decided on again, which sets their expiry). While the
//! near-duplicate check is off (no window), no draft is marked: nothing
//! reads the marker then, and concurrent drafts of the same items would
//! only contend for it.

use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem, Update};
use chrono::{DateTime, SecondsFormat, Utc};
use draftline_contract::ErpError;
use draftline_contract::identity::{BranchId, TenantId};
use draftline_dynamo::Db;
use draftline_erp::domain::{OpenDraft, OpenDrafts, Seen};
use draftline_erp::port::Window;

use super::attrs::{self, Item as Attrs, nv, sv};
use crate::keys;

/// The prefix of a draft's attribute in a marker.
const ENTRY: &str = "d#";

/// The item kind of a marker.
pub const KIND: &str = "near_duplicate";

/// How long an open draft is remembered for the near-duplicate check.
pub const OPEN_DRAFT_SECONDS: i64 = 86_400;

/// The most open drafts a marker lists: the newest. The question names the
/// newest open draft of the same items (not the caller's own), so a few
/// are enough, and the marker stays a small item however many drafts of
/// the same items are made in a day (after "create another", or by a
/// deployment that drafts one item set all day).
pub const KEPT: usize = 8;

/// `at` as the marker's times are written (RFC 3339, milliseconds, `Z`).
fn text(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// The open drafts `stored` lists that were drafted in the last day before
/// `now` (any time, without it), and the numbers of those it lists that
/// were not (or whose entry does not parse: one warning line and a count
/// each).
fn entries(stored: &Attrs, now: Option<DateTime<Utc>>) -> (Vec<OpenDraft>, Vec<String>) {
    let forgotten = now.map(|now| {
        text(
            now.checked_sub_signed(chrono::Duration::seconds(OPEN_DRAFT_SECONDS))
                .unwrap_or(now),
        )
    });
    let mut listed = Vec::new();
    let mut stale = Vec::new();
    for (name, value) in stored {
        let Some(number) = name.strip_prefix(ENTRY) else {
            continue;
        };
        match value
            .as_s()
            .ok()
            .and_then(|text| serde_json::from_str::<OpenDraft>(text).ok())
        {
            Some(draft)
                if forgotten
                    .as_ref()
                    .is_some_and(|forgotten| draft.created_at < *forgotten) =>
            {
                stale.push(number.to_owned());
            }
            Some(draft) => listed.push(draft),
            None => {
                draftline_dynamo::unreadable(KIND, stored, name);
                stale.push(number.to_owned());
            }
        }
    }
    (listed, stale)
}

/// The marker's version, if it is one [`Marker::read`] accepts.
fn version(stored: &Attrs) -> Option<u64> {
    attrs::int(stored, "near-duplicate marker", "v")
        .ok()
        .and_then(|v| u64::try_from(v).ok())
}

/// The stored version of an unreadable marker, in the words
/// [`Marker::replace`] reads back: `N:<number>`, `S:<text>`, `?` (another
/// type); `None`: there is none.
fn stored_version(stored: &Attrs) -> Option<String> {
    stored.get("v").map(|v| match v {
        AttributeValue::N(n) => format!("N:{n}"),
        AttributeValue::S(s) => format!("S:{s}"),
        _ => "?".to_owned(),
    })
}

/// The open drafts `markers` (a counterparty's, as its partition's `Query`
/// returns them) list that were drafted within `window`: what the review
/// pages show as near-duplicates, from the record the check reads (a
/// marker the check would treat as absent lists nothing here either).
pub fn listed(markers: &[Attrs], window: &Window) -> Vec<OpenDraft> {
    let since = text(window.since);
    markers
        .iter()
        .filter(|marker| version(marker).is_some())
        .flat_map(|marker| entries(marker, Some(window.now)).0)
        .filter(|draft| draft.created_at >= since)
        .collect()
}

/// Where the open drafts of one item set are marked.
#[derive(Debug, Clone, Copy)]
pub struct Marker<'a> {
    /// The tenant.
    pub tenant: &'a TenantId,
    /// The branch.
    pub branch: &'a BranchId,
    /// `PO` or `QT`.
    pub kind: &'a str,
    /// The vendor's or customer's code.
    pub counterparty: &'a str,
    /// The item codes, sorted and without repeats.
    pub items: &'a [String],
}

impl Marker<'_> {
    /// The marker's key.
    pub fn key(&self) -> Attrs {
        Attrs::from([
            (
                "pk".to_owned(),
                sv(keys::near_duplicates(
                    self.tenant,
                    self.branch,
                    self.kind,
                    self.counterparty,
                )),
            ),
            ("sk".to_owned(), sv(keys::near_duplicate_sk(self.items))),
        ])
    }

    /// The open drafts `stored` lists that were drafted within `window`,
    /// and what the marker was read as: absent, or its version and the
    /// drafts the next write drops: those older than a day (when a window
    /// gives the time), and all but the [`KEPT`] − 1 newest, so that with
    /// the new draft it lists at most [`KEPT`]. With no window (a person
    /// already decided), no draft is returned: the marker's state alone.
    ///
    /// A marker that cannot be read never refuses a draft: without a valid
    /// version it is [`Seen::Unreadable`] (absent, and replaced by the next
    /// draft's write), and an entry that does not parse is dropped by the
    /// next write; each is one warning line and a count.
    pub fn read(stored: Option<&Attrs>, window: Option<&Window>) -> OpenDrafts {
        let Some(stored) = stored else {
            return OpenDrafts {
                drafts: Vec::new(),
                seen: Seen::Absent,
            };
        };
        let Some(version) = version(stored) else {
            draftline_dynamo::unreadable(KIND, stored, "no valid version 'v'");
            let listed = stored
                .keys()
                .filter_map(|name| name.strip_prefix(ENTRY))
                .map(str::to_owned)
                .collect();
            return OpenDrafts {
                drafts: Vec::new(),
                seen: Seen::Unreadable {
                    version: stored_version(stored),
                    listed,
                },
            };
        };
        // Without a window no entry is stale by age: only the bound drops.
        let (mut listed, mut stale) = entries(stored, window.map(|window| window.now));
        // Newest first; past the newest KEPT − 1, dropped by the next write.
        listed.sort_by(|a, b| b.created_at.cmp(&a.created_at).then_with(|| b.number.cmp(&a.number)));
        if listed.len() >= KEPT {
            stale.extend(listed.drain(KEPT - 1..).map(|draft| draft.number));
        }
        let drafts = match window {
            Some(window) => {
                let since = text(window.since);
                listed.retain(|draft| draft.created_at >= since);
                listed
            }
            None => Vec::new(),
        };
        OpenDrafts {
            drafts,
            seen: Seen::Version { version, stale },
        }
    }

    /// The write that adds `draft`, made at `now`, to the marker, if it is
    /// still as `seen` says, dropping the drafts that read found stale or
    /// past the newest [`KEPT`], and setting the marker to expire a day
    /// after `now`; none when the marker was not read (the check is off:
    /// nothing is marked). An unreadable marker is replaced by one listing
    /// `draft` alone, if it is still unreadable (of two drafts that read it
    /// at once, the second's transaction fails and it reads again).
    pub fn add(
        &self,
        db: &Db,
        draft: &OpenDraft,
        seen: &Seen,
        now: DateTime<Utc>,
    ) -> Result<Option<TransactWriteItem>, ErpError> {
        let entry = serde_json::to_string(draft).map_err(ErpError::internal)?;
        let expires_at = now.timestamp().saturating_add(OPEN_DRAFT_SECONDS);
        let (version, stale) = match seen {
            Seen::Unread => return Ok(None),
            Seen::Unreadable { version, listed } => {
                return self
                    .replace(db, draft, entry, expires_at, (version.as_deref(), listed))
                    .map(Some);
            }
            Seen::Absent => (None, &[][..]),
            Seen::Version { version, stale } => (Some(version), stale.as_slice()),
        };
        let mut update = Update::builder()
            .table_name(db.table())
            .set_key(Some(self.key()))
            .expression_attribute_names("#e", format!("{ENTRY}{}", draft.number))
            .expression_attribute_names("#v", "v")
            .expression_attribute_names("#kind", "kind")
            .expression_attribute_names("#x", "expires_at")
            .expression_attribute_values(":e", sv(entry))
            .expression_attribute_values(":one", nv(1))
            .expression_attribute_values(":kind", sv(KIND))
            .expression_attribute_values(":x", nv(expires_at));
        let mut expression = "SET #e = :e, #kind = :kind, #x = :x ADD #v :one".to_owned();
        match version {
            None => update = update.condition_expression("attribute_not_exists(pk)"),
            Some(version) => {
                update = update
                    .condition_expression("#v = :seen")
                    .expression_attribute_values(":seen", nv(*version));
                update = drop_entries(update, &mut expression, stale, &draft.number);
            }
        }
        let update = update
            .update_expression(expression)
            .build()
            .map_err(ErpError::internal)?;
        Ok(Some(TransactWriteItem::builder().update(update).build()))
    }

    /// The marker written anew, listing `draft` alone, on the condition
    /// that its version is still as read (`read`: the stored version, in
    /// [`stored_version`]'s words, and every draft it listed, which go): an
    /// update, so the roles that draft need no `PutItem` on markers. Of two
    /// drafts that read it at once, the second's transaction fails, and it
    /// reads the marker again.
    fn replace(
        &self,
        db: &Db,
        draft: &OpenDraft,
        entry: String,
        expires_at: i64,
        (version, listed): (Option<&str>, &[String]),
    ) -> Result<TransactWriteItem, ErpError> {
        let mut update = Update::builder()
            .table_name(db.table())
            .set_key(Some(self.key()))
            .expression_attribute_names("#e", format!("{ENTRY}{}", draft.number))
            .expression_attribute_names("#v", "v")
            .expression_attribute_names("#kind", "kind")
            .expression_attribute_names("#x", "expires_at")
            .expression_attribute_values(":e", sv(entry))
            .expression_attribute_values(":kind", sv(KIND))
            .expression_attribute_values(":x", nv(expires_at));
        // A version other than the one stored, so that a second replacement
        // (which read the same) fails its condition.
        let stored_one = version
            .and_then(|v| v.strip_prefix("N:"))
            .and_then(|n| n.parse::<f64>().ok())
            .is_some_and(|n| n == 1.0);
        update = update.expression_attribute_values(":nv", nv(if stored_one { 2 } else { 1 }));
        update = match version {
            None => update.condition_expression("attribute_not_exists(#v)"),
            Some(v) => match (v.strip_prefix("N:"), v.strip_prefix("S:")) {
                (Some(n), _) => update
                    .condition_expression("#v = :raw")
                    .expression_attribute_values(":raw", AttributeValue::N(n.to_owned())),
                (_, Some(text)) => update
                    .condition_expression("#v = :raw")
                    .expression_attribute_values(":raw", sv(text)),
                _ => update
                    .condition_expression("NOT attribute_type(#v, :n) AND NOT attribute_type(#v, :s)")
                    .expression_attribute_values(":n", sv("N"))
                    .expression_attribute_values(":s", sv("S")),
            },
        };
        let mut expression = "SET #e = :e, #kind = :kind, #x = :x, #v = :nv".to_owned();
        update = drop_entries(update, &mut expression, listed, &draft.number);
        let update = update
            .update_expression(expression)
            .build()
            .map_err(ErpError::internal)?;
        Ok(TransactWriteItem::builder().update(update).build())
    }

    /// The write that removes draft `number` from the marker (a person
    /// decided on it at `decided_at`, epoch seconds). A marker that does
    /// not exist yet (a draft made before markers were kept, while the
    /// check was off, or seeded) is left an empty one at version 0, which
    /// the next draft reads as any other, expiring a day after the
    /// decision; a marker's version is never removed or changed here, nor
    /// the expiry of one that has it (an old marker without one gets the
    /// day after the decision: the drafts it still lists are older).
    pub fn remove(&self, db: &Db, number: &str, decided_at: i64) -> Result<TransactWriteItem, ErpError> {
        let update = Update::builder()
            .table_name(db.table())
            .set_key(Some(self.key()))
            .update_expression(
                "SET #kind = :kind, #v = if_not_exists(#v, :zero), #x = if_not_exists(#x, :gone) REMOVE #e",
            )
            .expression_attribute_names("#e", format!("{ENTRY}{number}"))
            .expression_attribute_names("#kind", "kind")
            .expression_attribute_names("#v", "v")
            .expression_attribute_names("#x", "expires_at")
            .expression_attribute_values(":kind", sv(KIND))
            .expression_attribute_values(":zero", nv(0))
            .expression_attribute_values(":gone", nv(decided_at.saturating_add(OPEN_DRAFT_SECONDS)))
            .build()
            .map_err(ErpError::internal)?;
        Ok(TransactWriteItem::builder().update(update).build())
    }
}

/// `update` also removing the entries of `numbers` (appended to
/// `expression` as its `REMOVE` clause), except `kept`'s, which the same
/// update sets (a path cannot be both set and removed: a number taken again
/// after a sequence was set back by hand).
fn drop_entries(
    mut update: aws_sdk_dynamodb::types::builders::UpdateBuilder,
    expression: &mut String,
    numbers: &[String],
    kept: &str,
) -> aws_sdk_dynamodb::types::builders::UpdateBuilder {
    let mut dropped = Vec::new();
    for (i, number) in numbers.iter().filter(|number| *number != kept).enumerate() {
        let name = format!("#s{i}");
        update = update.expression_attribute_names(name.clone(), format!("{ENTRY}{number}"));
        dropped.push(name);
    }
    if !dropped.is_empty() {
        expression.push_str(" REMOVE ");
        expression.push_str(&dropped.join(", "));
    }
    update
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};

    use super::*;

    /// A marker at version `v` listing drafts `(number, minutes after 09:00)`.
    fn stored(v: i64, drafts: &[(&str, i64)]) -> Attrs {
        let at =
            |minutes: i64| Utc.with_ymd_and_hms(2026, 12, 1, 9, 0, 0).unwrap() + chrono::Duration::minutes(minutes);
        let mut item = Attrs::from([("v".to_owned(), nv(v)), ("kind".to_owned(), sv(KIND))]);
        for (number, minutes) in drafts {
            let draft = OpenDraft {
                number: (*number).to_owned(),
                counterparty: "V-00231".to_owned(),
                lines: Vec::new(),
                agent_run: None,
                created_at: at(*minutes).to_rfc3339_opts(SecondsFormat::Millis, true),
                key: None,
            };
            item.insert(format!("{ENTRY}{number}"), sv(serde_json::to_string(&draft).unwrap()));
        }
        item
    }

    fn window(since_minutes: i64, now_minutes: i64) -> Window {
        let at =
            |minutes: i64| Utc.with_ymd_and_hms(2026, 12, 1, 9, 0, 0).unwrap() + chrono::Duration::minutes(minutes);
        Window {
            since: at(since_minutes),
            now: at(now_minutes),
        }
    }

    fn listed_of(marker: &Attrs) -> Vec<OpenDraft> {
        listed(std::slice::from_ref(marker), &window(0, 60))
    }

    fn numbers(open: &OpenDrafts) -> Vec<&str> {
        open.drafts.iter().map(|d| d.number.as_str()).collect()
    }

    #[test]
    fn a_marker_lists_the_drafts_in_the_window_newest_first_and_drops_those_past_a_day() {
        let marker = stored(3, &[("PO-1", 0), ("PO-2", 60 * 20), ("PO-3", 60 * 30)]);
        let open = Marker::read(Some(&marker), Some(&window(60 * 25, 60 * 31)));
        assert_eq!(numbers(&open), ["PO-3"]);
        assert_eq!(
            open.seen,
            Seen::Version {
                version: 3,
                stale: vec!["PO-1".to_owned()]
            }
        );
    }

    #[test]
    fn a_marker_keeps_the_newest_drafts_so_that_with_the_next_it_lists_at_most_kept() {
        let drafts: Vec<(String, i64)> = (1..=12).map(|n| (format!("PO-{n:02}"), n)).collect();
        let listed: Vec<(&str, i64)> = drafts.iter().map(|(n, m)| (n.as_str(), *m)).collect();
        let marker = stored(12, &listed);
        let open = Marker::read(Some(&marker), Some(&window(0, 60)));
        // The newest KEPT − 1 stay (with the new draft: KEPT); the rest go.
        assert_eq!(
            numbers(&open),
            ["PO-12", "PO-11", "PO-10", "PO-09", "PO-08", "PO-07", "PO-06"]
        );
        let Seen::Version { version, mut stale } = open.seen else {
            panic!("read: {:?}", open.seen)
        };
        stale.sort();
        assert_eq!(version, 12);
        assert_eq!(stale, ["PO-01", "PO-02", "PO-03", "PO-04", "PO-05"]);

        // After a person's decision (no window): its state alone, the same drops.
        let decided = Marker::read(Some(&marker), None);
        assert!(decided.drafts.is_empty());
        assert!(matches!(decided.seen, Seen::Version { version: 12, ref stale } if stale.len() == 5));
    }

    #[test]
    fn a_marker_without_a_valid_version_reads_as_unreadable_and_lists_nothing() {
        let mut no_version = stored(3, &[("PO-1", 0)]);
        no_version.remove("v");
        let mut text_version = stored(3, &[("PO-1", 0)]);
        text_version.insert("v".to_owned(), sv("3"));
        let negative = stored(-1, &[("PO-1", 0)]);
        let mut fraction = stored(3, &[("PO-1", 0)]);
        fraction.insert("v".to_owned(), AttributeValue::N("1.5".to_owned()));
        for (marker, stored_as) in [
            (no_version, None),
            (text_version, Some("S:3")),
            (negative, Some("N:-1")),
            (fraction, Some("N:1.5")),
        ] {
            let open = Marker::read(Some(&marker), Some(&window(0, 60)));
            assert!(open.drafts.is_empty(), "{marker:?}");
            let Seen::Unreadable { version, listed } = open.seen else {
                panic!("{marker:?}: {:?}", open.seen)
            };
            assert_eq!(version.as_deref(), stored_as, "{marker:?}");
            assert_eq!(listed, ["PO-1"], "{marker:?}");
            // The review pages list nothing of it either.
            assert!(listed_of(&marker).is_empty());
        }
    }

    #[test]
    fn an_entry_that_does_not_parse_is_dropped_by_the_next_write_and_the_others_stand() {
        let mut marker = stored(4, &[("PO-1", 10), ("PO-2", 20)]);
        marker.insert(format!("{ENTRY}PO-3"), sv("{not json"));
        marker.insert(format!("{ENTRY}PO-4"), nv(7));
        let open = Marker::read(Some(&marker), Some(&window(0, 60)));
        assert_eq!(numbers(&open), ["PO-2", "PO-1"]);
        let Seen::Version { version, mut stale } = open.seen else {
            panic!("read: {:?}", open.seen)
        };
        stale.sort();
        assert_eq!((version, stale), (4, vec!["PO-3".to_owned(), "PO-4".to_owned()]));
    }

    #[test]
    fn no_marker_reads_as_absent() {
        let open = Marker::read(None, Some(&window(0, 60)));
        assert!(open.drafts.is_empty());
        assert_eq!(open.seen, Seen::Absent);
    }
}
