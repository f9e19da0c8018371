//! Document numbers: `<prefix>-<branch code>-<sequence>` (`PO-SBY-000124`).
//!
//! One grammar for the numbers drafts are given and the numbers read tools
//! accept: the branch code is any code a token may carry
//! ([`BranchCode`]), the sequence has at least six digits (zero-padded) and
//! grows a digit past 999999, up to twelve. [`pattern`] is the same
//! grammar as a regular expression for the published schemas.

use draftline_contract::ErpError;
use draftline_contract::identity::BranchCode;

/// The largest sequence number a document can carry (twelve digits).
pub const MAX_SEQUENCE: i64 = 999_999_999_999;

/// The number of the `sequence`-th document of `prefix` in the branch with `code`.
pub fn document_number(prefix: &str, code: &BranchCode, sequence: i64) -> Result<String, ErpError> {
    if !(1..=MAX_SEQUENCE).contains(&sequence) {
        return Err(ErpError::internal(format!(
            "document sequence {sequence} of {prefix}-{code} is outside 1..={MAX_SEQUENCE}"
        )));
    }
    Ok(format!("{prefix}-{code}-{sequence:06}"))
}

/// Whether `value` is a document number of `prefix` in the grammar above.
pub fn is_document_number(prefix: &str, value: &str) -> bool {
    let Some(rest) = value.strip_prefix(prefix).and_then(|r| r.strip_prefix('-')) else {
        return false;
    };
    let Some((branch, digits)) = rest.rsplit_once('-') else {
        return false;
    };
    BranchCode::parse(branch).is_ok() && (6..=12).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit())
}

/// The grammar of [`is_document_number`] as a JSON Schema `pattern`.
pub fn pattern(prefix: &str) -> String {
    format!("^{prefix}-[A-Za-z0-9._-]{{1,16}}-[0-9]{{6,12}}$")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn every_number_a_draft_gets_is_one_a_read_accepts() {
        for (code, sequence) in [
            ("SBY", 1),
            ("SBY1", 42),
            ("a.b_c-d", 7),
            ("X", 999_999),
            ("JKT", 1_000_000),
        ] {
            let number = document_number("PO", &BranchCode::parse(code).unwrap(), sequence).unwrap();
            assert!(is_document_number("PO", &number), "{number}");
        }
        assert_eq!(
            document_number("PO", &BranchCode::parse("SBY").unwrap(), 1_000_000).unwrap(),
            "PO-SBY-1000000"
        );
        assert!(document_number("PO", &BranchCode::parse("SBY").unwrap(), MAX_SEQUENCE + 1).is_err());
        for bad in [
            "PO-SBY-12345",
            "QT-SBY-000001",
            "PO--000001",
            "PO-SBY-0000001234567",
            "PO-SBY-00000a",
            "PO-SBY",
        ] {
            assert!(!is_document_number("PO", bad), "{bad}");
        }
    }

    proptest! {
        #[test]
        fn the_pattern_and_the_check_agree(value in "PO-[A-Za-z0-9._#-]{0,18}-[0-9a]{4,13}") {
            let regex = regex_lite::Regex::new(&pattern("PO")).unwrap();
            prop_assert_eq!(regex.is_match(&value), is_document_number("PO", &value), "{}", value);
        }
    }
}
