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

use validator::ValidationError;

/// A tool over the ERP port: its struct and `new`.
macro_rules! erp_tool {
    ($tool:ident) => {
        /// The tool.
        #[derive(Clone)]
        pub struct $tool {
            erp: std::sync::Arc<dyn $crate::port::Erp>,
        }

        impl $tool {
            /// The tool over `erp`.
            pub fn new(erp: std::sync::Arc<dyn $crate::port::Erp>) -> Self {
                Self { erp }
            }
        }
    };
}
pub(crate) use erp_tool;

/// `Ok` when the value is `ok`, else a format error with `message`.
fn checked(ok: bool, message: impl FnOnce() -> String) -> Result<(), ValidationError> {
    if ok {
        return Ok(());
    }
    Err(ValidationError::new("format").with_message(Cow::Owned(message())))
}

/// A value as an error message quotes it: its first 40 characters.
fn quoted(value: &str) -> String {
    value.chars().take(40).collect()
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
    checked(ok, || {
        format!(
            "'{}' is not a code: codes are 1-32 characters of A-Z, 0-9 and '-' (for example BRG-0042)",
            quoted(value)
        )
    })
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
    checked(ok, || {
        "search text must be 1-64 characters without control characters (part of a name, or a code)".to_owned()
    })
}

/// A cursor as handed out by a list tool: 1-512 of `A-Z a-z 0-9 - _ .`.
pub fn cursor(value: &str) -> Result<(), ValidationError> {
    let ok = !value.is_empty()
        && value.len() <= draftline_contract::cursor::MAX_CURSOR_LEN
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    checked(ok, || {
        "this is not a cursor this tool handed out; pass next_cursor from the previous answer unchanged, or send \
         cursor null to start from the first page"
            .to_owned()
    })
}

/// A caller's own reference: 1-64 of `A-Z a-z 0-9 . _ - :`.
pub fn client_ref(value: &str) -> Result<(), ValidationError> {
    let ok = !value.is_empty()
        && value.len() <= 64
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b':'));
    checked(ok, || {
        "client_ref must be 1-64 characters of letters, digits, '.', '_', '-', ':' (for example reorder-2026-11-29-BRG-0042)"
            .to_owned()
    })
}

/// A purchase-order number (`PO-SBY-000124`), in the one grammar of [`crate::numbers`].
pub fn po_number(value: &str) -> Result<(), ValidationError> {
    checked(crate::numbers::is_document_number("PO", value), || {
        format!(
            "'{}' is not a purchase order number: they look like PO-SBY-000124",
            quoted(value)
        )
    })
}

/// A quote number (`QT-BDG-000012`), in the one grammar of [`crate::numbers`].
pub fn quote_number(value: &str) -> Result<(), ValidationError> {
    checked(crate::numbers::is_document_number("QT", value), || {
        format!(
            "'{}' is not a quote number: they look like QT-BDG-000012",
            quoted(value)
        )
    })
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
