//! Money as a policy counts it: whole hundredths of a currency, so counters
//! in the table add exactly (DynamoDB numbers, no floating point) and the
//! server needs no decimal library.

use std::fmt;

/// The largest amount a policy or a counter holds: 10^16 - 1 hundredths,
/// well inside DynamoDB's 38 digits and `i64`.
pub const MAX_HUNDREDTHS: i64 = 9_999_999_999_999_999;

/// An amount in a currency, in hundredths (`"288000.00" IDR` = 28 800 000).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Amount {
    /// ISO 4217 code, three capital letters (`IDR`).
    pub currency: String,
    /// Hundredths of the currency, at least 0.
    pub hundredths: i64,
}

impl Amount {
    /// `amount` (`"288000.00"`, `"5"`, `"0.5"`: digits, at most two
    /// decimals, no sign) in `currency`, or why not.
    pub fn parse(amount: &str, currency: &str) -> Result<Self, String> {
        Ok(Self {
            currency: currency_code(currency)?.to_owned(),
            hundredths: hundredths(amount)?,
        })
    }

    /// The amount as a decimal string with two decimals (`"288000.00"`).
    pub fn decimal(&self) -> String {
        format_hundredths(self.hundredths)
    }
}

impl fmt::Display for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.decimal(), self.currency)
    }
}

/// `code` if it is an ISO 4217 shape (three capital letters).
pub fn currency_code(code: &str) -> Result<&str, String> {
    if code.len() == 3 && code.bytes().all(|b| b.is_ascii_uppercase()) {
        Ok(code)
    } else {
        Err(format!(
            "'{}' is not a currency code: three capital letters, as in IDR",
            code.chars().take(16).collect::<String>()
        ))
    }
}

/// A non-negative decimal with at most two decimals, in hundredths.
pub fn hundredths(amount: &str) -> Result<i64, String> {
    let refuse = || {
        format!(
            "'{}' is not an amount: digits with at most two decimals and no sign, as in \"50000000.00\"",
            amount.chars().take(32).collect::<String>()
        )
    };
    let (whole, fraction) = amount.split_once('.').unwrap_or((amount, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || whole.len() > 14 || !digits(whole) || fraction.len() > 2 || !digits(fraction) {
        return Err(refuse());
    }
    if amount.ends_with('.') {
        return Err(refuse());
    }
    let whole: i64 = whole.parse().map_err(|_| refuse())?;
    let cents: i64 = match fraction.len() {
        0 => 0,
        1 => fraction.parse::<i64>().map_err(|_| refuse())? * 10,
        _ => fraction.parse().map_err(|_| refuse())?,
    };
    whole
        .checked_mul(100)
        .and_then(|w| w.checked_add(cents))
        .filter(|h| *h <= MAX_HUNDREDTHS)
        .ok_or_else(refuse)
}

/// Hundredths as a decimal string with two decimals (`-` for a negative one).
pub fn format_hundredths(hundredths: i64) -> String {
    let sign = if hundredths < 0 { "-" } else { "" };
    let abs = hundredths.unsigned_abs();
    format!("{sign}{}.{:02}", abs / 100, abs % 100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_parse_to_hundredths_and_back() {
        assert_eq!(hundredths("288000.00"), Ok(28_800_000));
        assert_eq!(hundredths("5"), Ok(500));
        assert_eq!(hundredths("0.5"), Ok(50));
        for bad in ["", "-1", "1.234", "1.", ".5", "1e3", "1,00", "999999999999999"] {
            assert!(hundredths(bad).is_err(), "{bad}");
        }
        assert_eq!(format_hundredths(28_800_050), "288000.50");
        assert_eq!(format_hundredths(-5), "-0.05");
        assert!(currency_code("idr").is_err());
    }
}
