//! Money: exact decimals, a currency on every amount, one rounding rule.
//!
//! Amounts are `rust_decimal::Decimal` (never floating point) and travel as
//! strings (`"288000.00"`). Line totals are rounded to 2 decimals, half away
//! from zero ([`ROUNDING_RULE`]); sums are of rounded lines.

use rust_decimal::{Decimal, RoundingStrategy};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The rounding rule, stated in every document that has amounts.
pub const ROUNDING_RULE: &str =
    "each line total = qty x unit price, rounded to 2 decimals half away from zero; totals are sums of rounded lines";

/// The rounding rule of documents with tax, stated in each of them.
pub const TAX_ROUNDING_RULE: &str = "each line: net = qty x unit price, rounded to 2 decimals half away from zero; \
tax = net x rate / 100, rounded the same way; line total = net + tax. Document totals are sums of the rounded lines";

/// An amount in a currency.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Money {
    /// Exact decimal amount as a string, 2 decimals (`"288000.00"`).
    #[schemars(regex(pattern = r"^-?[0-9]+\.[0-9]{2}$"))]
    pub amount: String,
    /// ISO 4217 currency code (`IDR`).
    pub currency: String,
}

impl Money {
    /// `amount` rounded by the rule, in `currency`.
    pub fn new(amount: Decimal, currency: &str) -> Self {
        Self {
            amount: round(amount).to_string(),
            currency: currency.to_owned(),
        }
    }
}

/// The error of an amount too large to compute exactly (more than 28
/// significant digits): a stored price or quantity is wrong. `what` names
/// the amount for the log.
pub fn overflow(what: &str) -> draftline_contract::ErpError {
    draftline_contract::ErpError::internal(format!(
        "{what} is too large to compute exactly: a stored amount is wrong"
    ))
}

/// `qty` × `unit_price`, rounded by the rule, or `None` when the product
/// does not fit.
pub fn net(unit_price: Decimal, qty: i64) -> Option<Decimal> {
    unit_price.checked_mul(Decimal::from(qty)).map(round)
}

/// One line's amounts by the rounding rule: its [`net`], the tax on the
/// rounded net, and their sum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineAmounts {
    /// qty × unit price, rounded.
    pub net: Decimal,
    /// The tax on `net` (zero where the document taxes nothing).
    pub tax: Decimal,
    /// net + tax.
    pub total: Decimal,
}

impl LineAmounts {
    /// The amounts of `qty` at `unit_price`, taxed by `tax` (given the
    /// rounded net); `None` when one does not fit.
    pub fn of(unit_price: Decimal, qty: i64, tax: impl FnOnce(Decimal) -> Option<Decimal>) -> Option<Self> {
        let net = net(unit_price, qty)?;
        let tax = tax(net)?;
        Some(Self {
            net,
            tax,
            total: net.checked_add(tax)?,
        })
    }

    /// A document's sums of `lines`: the nets, the taxes and the total
    /// (their sum); `None` when one does not fit.
    pub fn sum<'a>(lines: impl IntoIterator<Item = &'a Self>) -> Option<Self> {
        let (net, tax) = lines
            .into_iter()
            .try_fold((Decimal::ZERO, Decimal::ZERO), |(net, tax), line| {
                Some((net.checked_add(line.net)?, tax.checked_add(line.tax)?))
            })?;
        Some(Self {
            net,
            tax,
            total: net.checked_add(tax)?,
        })
    }
}

/// The sum of `amounts`, or `None` when it does not fit.
pub fn sum(amounts: impl IntoIterator<Item = Decimal>) -> Option<Decimal> {
    amounts.into_iter().try_fold(Decimal::ZERO, Decimal::checked_add)
}

/// The largest total a draft may have: the most a tenant's limits can
/// count (`policy::amount::MAX_HUNDREDTHS`, 99999999999999.99).
pub fn largest_total() -> Decimal {
    Decimal::new(draftline_contract::policy::amount::MAX_HUNDREDTHS, 2)
}

/// The refusal of the first line whose total takes the draft's past
/// [`largest_total`], given each line's total in order with its index in
/// the input (`lines[i]`); `None` when the whole draft fits. No stored
/// amount is wrong here: the order is too large to be one draft.
pub fn past_largest(line_totals: &[(usize, Decimal)], currency: &str) -> Option<draftline_contract::FieldIssue> {
    let largest = largest_total();
    let mut running = Decimal::ZERO;
    for (i, total) in line_totals {
        running = running.checked_add(*total).unwrap_or(Decimal::MAX);
        if running > largest {
            let message = if running == *total {
                format!("This line alone comes to {total} {currency}")
            } else {
                format!("This line takes the draft's total to {running} {currency}")
            };
            return Some(draftline_contract::FieldIssue::new(
                format!("lines[{i}]"),
                format!(
                    "{message}, past the largest total a draft may have, {largest} {currency}. Order less on this \
                     line, or split the order into drafts of at most {largest} {currency} each."
                ),
            ));
        }
    }
    None
}

/// A draft's total as a tenant's policy counts it (whole hundredths), or
/// an internal error for one it cannot count (negative, or beyond 10^14).
pub fn counted(total: &Money) -> Result<draftline_contract::policy::Amount, draftline_contract::ErpError> {
    draftline_contract::policy::Amount::parse(&total.amount, &total.currency).map_err(|reason| {
        draftline_contract::ErpError::internal(format!("a draft's total cannot be counted against limits: {reason}"))
    })
}

/// Rounds to 2 decimals, half away from zero, always showing 2 decimals.
pub fn round(amount: Decimal) -> Decimal {
    let mut rounded = amount.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero);
    rounded.rescale(2);
    rounded
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    #[test]
    fn amounts_are_exact_and_rounded_half_away_from_zero() {
        assert_eq!(Money::new(Decimal::from_str("0.125").unwrap(), "IDR").amount, "0.13");
        assert_eq!(Money::new(Decimal::from_str("-0.125").unwrap(), "IDR").amount, "-0.13");
        assert_eq!(Money::new(Decimal::from(288_000), "IDR").amount, "288000.00");
        let third = Decimal::from(1) / Decimal::from(3);
        assert_eq!(Money::new(third * Decimal::from(3), "IDR").amount, "1.00");
    }

    #[test]
    fn arithmetic_that_does_not_fit_is_none_not_a_panic() {
        assert_eq!(net(Decimal::MAX, 2), None);
        assert_eq!(LineAmounts::of(Decimal::ONE, 1, |_| Some(Decimal::MAX)), None);
        let max = LineAmounts::of(Decimal::MAX, 1, |_| Some(Decimal::ZERO)).unwrap();
        assert_eq!(LineAmounts::sum([max, max].iter()), None);
        assert_eq!(sum([Decimal::MAX, Decimal::ONE]), None);
        assert_eq!(sum([Decimal::from(2), Decimal::from(3)]), Some(Decimal::from(5)));
    }

    #[test]
    fn a_lines_net_is_rounded_before_its_tax_and_a_documents_sums_are_of_rounded_lines() {
        let d = |s: &str| Decimal::from_str(s).unwrap();
        // 3 x 0.335 = 1.005 rounds to 1.01; 11 % of 1.01 = 0.1111 rounds to 0.11.
        let line = LineAmounts::of(d("0.335"), 3, |net| Some(round(net * d("0.11")))).unwrap();
        assert_eq!((line.net, line.tax, line.total), (d("1.01"), d("0.11"), d("1.12")));
        let sums = LineAmounts::sum([line, line].iter()).unwrap();
        assert_eq!((sums.net, sums.tax, sums.total), (d("2.02"), d("0.22"), d("2.24")));
    }
}
