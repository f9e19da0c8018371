//! The tool catalogue, one file per tool, and the input rules they share.
//!
//! - inventory: [`inventory_get_stock`], [`inventory_list_below_reorder`]
//! - purchasing: [`purchasing_search_vendors`], [`purchasing_search_pos`],
//!   [`purchasing_get_po`], [`purchasing_create_po_draft`]
//! - sales: [`sales_search_customers`], [`sales_get_customer_summary`],
//!   [`sales_get_quote`], [`sales_create_quote_draft`]
//! - finance: [`finance_list_tax_types`], [`finance_get_account_summary`]
//! - agent: [`agent_get_limits`], the examiner (what the tenant's policy
//!   still leaves this run and person; it reads draftline's counters, not the ERP)
//!
//! List tools take `limit` (1-50, a default when null) and `cursor` (null for
//! the first page, then each answer's `next_cursor` unchanged); cursors are
//! sealed and bound to the caller, tool and filters (`draftline_contract::cursor`).

pub mod agent_get_limits;
pub mod finance_get_account_summary;
pub mod finance_list_tax_types;
pub mod inventory_get_stock;
pub mod inventory_list_below_reorder;
pub mod purchasing_create_po_draft;
pub mod purchasing_get_po;
pub mod purchasing_search_pos;
pub mod purchasing_search_vendors;
pub mod sales_create_quote_draft;
pub mod sales_get_customer_summary;
pub mod sales_get_quote;
pub mod sales_search_customers;

use std::borrow::Cow;

use draftline_contract::ToolError;
use draftline_contract::tool::{Call, Draft, Placement, Stakes};
use validator::ValidationError;

use crate::domain::Reviewable;

/// The start of the near-duplicate window ending `now` (`now` itself when
/// there is no window or it does not fit the calendar).
pub(crate) fn window_start(
    now: chrono::DateTime<chrono::Utc>,
    window: Option<std::time::Duration>,
) -> chrono::DateTime<chrono::Utc> {
    window
        .and_then(|w| chrono::Duration::from_std(w).ok())
        .and_then(|w| now.checked_sub_signed(w))
        .unwrap_or(now)
}

/// Item codes sorted and without repeats: a draft's item set.
pub(crate) fn item_codes<'a>(items: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let codes: std::collections::BTreeSet<&str> = items.into_iter().collect();
    codes.into_iter().map(str::to_owned).collect()
}

/// What the near-duplicate check has to do for a call with `decision`.
pub(crate) enum Check {
    /// Look for an open draft of the same items.
    Look,
    /// A person chose to create another draft anyway.
    Skip,
    /// A person chose the existing draft with this number.
    UseExisting(String),
}

impl Check {
    pub(crate) fn of(
        decision: Option<&draftline_contract::tool::Decision>,
        window: Option<std::time::Duration>,
    ) -> Self {
        use draftline_contract::tool::Decision;
        match decision {
            None if window.is_some() => Self::Look,
            None => Self::Skip,
            Some(Decision::CreateAnother) => Self::Skip,
            Some(Decision::UseExisting(number)) => Self::UseExisting(number.clone()),
        }
    }
}

/// The near-duplicate side of one draft: the items it asks for (sorted,
/// once), what a person already decided about it, and the window it looks
/// back over. Both draft tools ask through it, in the same order: read the
/// open drafts with the other reads, check the lines, then
/// [`settle`](Self::settle).
pub(crate) struct Asking {
    /// The item codes asked for, sorted and without repeats.
    pub codes: Vec<String>,
    check: Check,
    /// The call's time.
    pub now: chrono::DateTime<chrono::Utc>,
    since: chrono::DateTime<chrono::Utc>,
}

impl Asking {
    /// The asking of `call` for a draft of `items`.
    pub(crate) fn of<'a>(call: &Call<'_>, items: impl IntoIterator<Item = &'a str>) -> Self {
        let now = call.clock.now();
        Self {
            codes: item_codes(items),
            check: Check::of(call.decision, call.near_duplicate_window),
            now,
            since: window_start(now, call.near_duplicate_window),
        }
    }

    /// The window to read the open drafts to compare with over: only when
    /// the check looks (no person decided yet, and a window is set).
    pub(crate) fn window(&self) -> Option<crate::port::Window> {
        match self.check {
            Check::Look => Some(crate::port::Window {
                since: self.since,
                now: self.now,
            }),
            Check::Skip | Check::UseExisting(_) => None,
        }
    }

    /// Once the lines are checked: the question when one of `open` already
    /// drafts the same items for `counterparty` (a `kind` document that
    /// `tool` reads), the existing draft when the person chose it (read by
    /// `chosen`), or `None`: go on and draft.
    pub(crate) async fn settle<O, Fut>(
        &self,
        call: &Call<'_>,
        open: &[crate::domain::OpenDraft],
        (counterparty, kind, tool): (&str, &str, &str),
        chosen: impl FnOnce(String) -> Fut,
    ) -> Result<Option<Draft<O>>, ToolError>
    where
        O: Reviewable,
        Fut: std::future::Future<Output = Result<O, ToolError>>,
    {
        let asked = self.codes.iter().map(String::as_str);
        if let Some(question) = near_duplicate(open, call.draft_key, asked, counterparty, kind, tool, self.now) {
            return Err(question);
        }
        match &self.check {
            Check::UseExisting(number) => Ok(Some(existing(chosen(number.clone()).await?, call.review_pages))),
            Check::Look | Check::Skip => Ok(None),
        }
    }
}

/// The question for a person when one of `open` (drafted for
/// `counterparty`) already drafts the same `items`: nothing is created
/// until they decide. `None` when no open draft matches.
pub(crate) fn near_duplicate<'a>(
    open: &[crate::domain::OpenDraft],
    own_key: Option<&str>,
    items: impl IntoIterator<Item = &'a str> + Clone,
    counterparty: &str,
    kind: &str,
    tool: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> Option<ToolError> {
    use draftline_contract::error::{ExistingDraft, Question};
    let existing = open
        .iter()
        .filter(|draft| own_key.is_none() || draft.key.as_deref() != own_key)
        .filter(|draft| draft.same_items(items.clone()))
        .max_by(|a, b| a.created_at.cmp(&b.created_at))?;
    let age = chrono::DateTime::parse_from_rfc3339(&existing.created_at)
        .map(|at| now.signed_duration_since(at.with_timezone(&chrono::Utc)))
        .map(|age| match age.num_minutes() {
            m if m < 1 => "just now".to_owned(),
            1 => "1 minute ago".to_owned(),
            m if m < 120 => format!("{m} minutes ago"),
            _ => format!("{} hours ago", age.num_hours()),
        })
        .unwrap_or_else(|_| "today".to_owned());
    let run = existing
        .agent_run
        .as_deref()
        .map(|run| format!(" from run {run}"))
        .unwrap_or_default();
    let summary = format!("{} from {counterparty}", existing.describe_lines());
    let prompt = format!(
        "{}{run}, {age}, already drafts {summary}. Create another draft anyway?",
        existing.number
    );
    let message = format!(
        "{prompt} Nothing was created: this looks like the same request again (for example a restarted agent \
         run), which an idempotency key cannot catch. Ask the person you act for: create another draft, or use \
         {number}. Their answer reaches draftline through your client, not through the arguments: an MCP \
         2026-07-28 client answers the elicitation; an MCP 2025-11-25 client resends this same call with \
         _meta[\"io.draftline/confirm\"] set to 'create-another <requestState>' or 'use-existing <requestState>'; \
         an HTTP caller resends this same call, same arguments, with the header \
         'Draftline-Confirm: create-another <requestState>' or 'Draftline-Confirm: use-existing <requestState>' \
         (requestState is in error.inputRequired). Do not work around it with a new key or client_ref. To read \
         the existing draft call {tool}.",
        number = existing.number,
    );
    Some(ToolError::InputRequired {
        message,
        question: Box::new(Question {
            existing: ExistingDraft {
                number: existing.number.clone(),
                kind: kind.to_owned(),
                agent_run: existing.agent_run.clone(),
                created_at: existing.created_at.clone(),
                summary,
            },
            prompt,
        }),
        request_state: None,
    })
}

/// A placed draft as the contract's prepared draft: the placement as the
/// backend made it, and the tool's answer for the document it becomes. An
/// atomic document is numbered already; an external one is numbered by the
/// ERP, and `numbered(draft, id, number, created_at)` makes the answer of
/// it. Either answer carries the document's `review_url` under
/// `review_pages`; `stakes` is what the draft commits the company to.
pub(crate) fn prepared<D, O>(
    placement: Placement<O>,
    draft: D,
    numbered: fn(&D, String, String, String) -> O,
    review_pages: &str,
    stakes: Stakes,
) -> Draft<O>
where
    D: Send + Sync + 'static,
    O: Reviewable + Send + Sync + 'static,
{
    let review_pages = review_pages.to_owned();
    match placement {
        Placement::Atomic { document, writes } => Draft::Placed {
            placement: Placement::Atomic {
                document: document.created(),
                writes,
            },
            answer: Box::new(move |_| Ok(document.with_review_url(&review_pages))),
            stakes,
        },
        Placement::External(external) => Draft::Placed {
            placement: Placement::External(external),
            answer: Box::new(move |created| {
                Ok(numbered(
                    &draft,
                    created.document.id.clone(),
                    created.document.number.clone(),
                    created.created_at.clone(),
                )
                .with_review_url(&review_pages))
            }),
            stakes,
        },
    }
}

/// The draft a person chose to keep instead of a new one (they answered
/// "use the existing one"): nothing is created, and it is the answer.
pub(crate) fn existing<O: Reviewable>(document: O, review_pages: &str) -> Draft<O> {
    Draft::Existing {
        document: document.document_ref(),
        output: document.with_review_url(review_pages),
    }
}

fn format_error(message: String) -> ValidationError {
    ValidationError::new("format").with_message(Cow::Owned(message))
}

/// The grammar of [`code`] for the published schemas.
pub const CODE_PATTERN: &str = "^[A-Z0-9-]{1,32}$";
/// The grammar of [`client_ref`] for the published schemas.
pub const CLIENT_REF_PATTERN: &str = "^[A-Za-z0-9._:-]{1,64}$";
/// The grammar of [`cursor`] for the published schemas.
pub const CURSOR_PATTERN: &str = "^[A-Za-z0-9_.-]{1,512}$";
/// The grammar of [`po_number`] for the published schemas ([`crate::numbers::pattern`]).
pub const PO_NUMBER_PATTERN: &str = "^PO-[A-Za-z0-9._-]{1,16}-[0-9]{6,12}$";
/// The grammar of [`quote_number`] for the published schemas ([`crate::numbers::pattern`]).
pub const QUOTE_NUMBER_PATTERN: &str = "^QT-[A-Za-z0-9._-]{1,16}-[0-9]{6,12}$";
/// The grammar of [`search_text`] for the published schemas: no control
/// character, and at least one character that is not white space (the
/// length, 1-64, is a schema keyword of its own).
pub const SEARCH_TEXT_PATTERN: &str =
    "^[^\\u0000-\\u001f\\u007f-\\u009f]*[^\\s\\u0000-\\u001f\\u007f-\\u009f][^\\u0000-\\u001f\\u007f-\\u009f]*$";

/// An ERP code (`BRG-0042`, `V-00231`): 1-32 of `A-Z 0-9 -`.
pub fn code(value: &str) -> Result<(), ValidationError> {
    let ok = !value.is_empty()
        && value.len() <= 32
        && value
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(format_error(format!(
            "'{}' is not a code: codes are 1-32 characters of A-Z, 0-9 and '-' (for example BRG-0042)",
            value.chars().take(40).collect::<String>()
        )))
    }
}

/// The largest page a list tool returns.
pub const MAX_PAGE: u32 = 50;

/// The page size for `limit`, or `default` when it is null.
pub fn page_size(limit: Option<u32>, default: u32) -> usize {
    limit.unwrap_or(default).clamp(1, MAX_PAGE) as usize
}

/// Search text: 1-64 characters, no control characters, not only white space.
pub fn search_text(value: &str) -> Result<(), ValidationError> {
    let ok = value.chars().any(|c| !c.is_whitespace())
        && value.chars().count() <= 64
        && !value.chars().any(char::is_control);
    if ok {
        Ok(())
    } else {
        Err(format_error(
            "search text must be 1-64 characters without control characters (part of a name, or a code)".to_owned(),
        ))
    }
}

/// A cursor as handed out by a list tool: 1-512 of `A-Z a-z 0-9 - _ .`.
pub fn cursor(value: &str) -> Result<(), ValidationError> {
    let ok = !value.is_empty()
        && value.len() <= draftline_contract::cursor::MAX_CURSOR_LEN
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(format_error(
            "this is not a cursor this tool handed out; pass next_cursor from the previous answer unchanged, or send \
             cursor null to start from the first page"
                .to_owned(),
        ))
    }
}

/// A caller's own reference: 1-64 of `A-Z a-z 0-9 . _ - :`.
pub fn client_ref(value: &str) -> Result<(), ValidationError> {
    let ok = !value.is_empty()
        && value.len() <= 64
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b':'));
    if ok {
        Ok(())
    } else {
        Err(format_error(
            "client_ref must be 1-64 characters of letters, digits, '.', '_', '-', ':' (for example reorder-2026-11-29-BRG-0042)"
                .to_owned(),
        ))
    }
}

/// A purchase-order number (`PO-SBY-000124`), in the one grammar of [`crate::numbers`].
pub fn po_number(value: &str) -> Result<(), ValidationError> {
    if crate::numbers::is_document_number("PO", value) {
        Ok(())
    } else {
        Err(format_error(format!(
            "'{}' is not a purchase order number: they look like PO-SBY-000124",
            value.chars().take(40).collect::<String>()
        )))
    }
}

/// A quote number (`QT-BDG-000012`), in the one grammar of [`crate::numbers`].
pub fn quote_number(value: &str) -> Result<(), ValidationError> {
    if crate::numbers::is_document_number("QT", value) {
        Ok(())
    } else {
        Err(format_error(format!(
            "'{}' is not a quote number: they look like QT-BDG-000012",
            value.chars().take(40).collect::<String>()
        )))
    }
}

/// A date that must fall between `today` and `max_days` ahead; `too_far`
/// explains the upper bound ("drafts are for the coming year").
pub fn date_in_window(
    path: &str,
    date: chrono::NaiveDate,
    today: chrono::NaiveDate,
    max_days: i64,
    too_far: &str,
) -> Option<draftline_contract::FieldIssue> {
    if date < today {
        Some(draftline_contract::FieldIssue::new(
            path,
            format!("{date} is in the past; use today ({today}) or a later date"),
        ))
    } else if date.signed_duration_since(today).num_days() > max_days {
        Some(draftline_contract::FieldIssue::new(
            path,
            format!("{date} is more than {max_days} days ahead; {too_far}"),
        ))
    } else {
        None
    }
}

/// One issue per line that repeats an earlier line's item and unit.
pub fn repeated_lines<'a>(
    lines: impl Iterator<Item = (&'a str, crate::units::Uom)>,
) -> Vec<draftline_contract::FieldIssue> {
    let mut seen = std::collections::HashMap::new();
    let mut issues = Vec::new();
    for (i, (item, uom)) in lines.enumerate() {
        if let Some(first) = seen.insert((item, uom), i) {
            issues.push(draftline_contract::FieldIssue::new(
                format!("lines[{i}]"),
                format!("repeats {item} in {uom} (already lines[{first}]); combine them into one line"),
            ));
        }
    }
    issues
}
