//! The tool catalogue, one file per tool, and the input rules they share.

pub mod inventory_get_stock;
pub mod purchasing_create_po_draft;
pub mod purchasing_get_po;

use std::borrow::Cow;

use validator::ValidationError;

fn format_error(message: String) -> ValidationError {
    ValidationError::new("format").with_message(Cow::Owned(message))
}

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

/// A document number (`PO-SBY-000124`).
pub fn po_number(value: &str) -> Result<(), ValidationError> {
    let parts: Vec<&str> = value.split('-').collect();
    let ok = matches!(parts.as_slice(), ["PO", branch, seq]
        if (2..=8).contains(&branch.len())
            && branch.bytes().all(|b| b.is_ascii_uppercase())
            && seq.len() == 6
            && seq.bytes().all(|b| b.is_ascii_digit()));
    if ok {
        Ok(())
    } else {
        Err(format_error(format!(
            "'{}' is not a purchase order number: they look like PO-SBY-000124",
            value.chars().take(40).collect::<String>()
        )))
    }
}
