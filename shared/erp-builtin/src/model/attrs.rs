//! Reading typed values out of DynamoDB items.

use std::str::FromStr;

use aws_sdk_dynamodb::types::AttributeValue;
use draftline_contract::ErpError;
use rust_decimal::Decimal;

/// An item as the SDK returns it.
pub use draftline_dynamo::Item;

/// A stored item is missing an attribute or has the wrong type: our bug, not the caller's.
pub fn corrupt(what: &str, name: &str) -> ErpError {
    ErpError::internal(format!("stored {what} has no valid attribute '{name}'"))
}

/// A string attribute.
pub fn s(item: &Item, what: &str, name: &str) -> Result<String, ErpError> {
    item.get(name)
        .and_then(|v| v.as_s().ok())
        .cloned()
        .ok_or_else(|| corrupt(what, name))
}

/// An optional string attribute.
pub fn s_opt(item: &Item, name: &str) -> Option<String> {
    item.get(name).and_then(|v| v.as_s().ok()).cloned()
}

/// The largest whole number a stored quantity, factor or count may hold.
/// Bounding stored values where they are read keeps every sum and product
/// of them far inside `i64` and `Decimal` (which the arithmetic still checks).
pub const MAX_STORED_INT: i64 = 1_000_000_000_000;

/// The largest absolute amount a stored price or document amount may hold
/// (10^15, with at most 4 decimals).
pub fn max_stored_amount() -> Decimal {
    Decimal::from(1_000_000_000_000_000_i64)
}

/// An integer attribute, within ±[`MAX_STORED_INT`].
pub fn int(item: &Item, what: &str, name: &str) -> Result<i64, ErpError> {
    item.get(name)
        .and_then(|v| v.as_n().ok())
        .and_then(|n| n.parse::<i64>().ok())
        .filter(|n| (-MAX_STORED_INT..=MAX_STORED_INT).contains(n))
        .ok_or_else(|| corrupt(what, name))
}

/// A decimal attribute (stored as a DynamoDB number), within
/// ±[`max_stored_amount`] and with at most 4 decimals.
pub fn dec(item: &Item, what: &str, name: &str) -> Result<Decimal, ErpError> {
    item.get(name)
        .and_then(|v| v.as_n().ok())
        .and_then(|n| Decimal::from_str(n).ok())
        .filter(|d| d.abs() <= max_stored_amount() && d.scale() <= 4)
        .ok_or_else(|| corrupt(what, name))
}

/// A string attribute value.
pub fn sv(value: impl Into<String>) -> AttributeValue {
    AttributeValue::S(value.into())
}

/// A number attribute value.
pub fn nv(value: impl ToString) -> AttributeValue {
    AttributeValue::N(value.to_string())
}

/// A date attribute (stored as `YYYY-MM-DD`).
pub fn date(item: &Item, what: &str, name: &str) -> Result<chrono::NaiveDate, ErpError> {
    item.get(name)
        .and_then(|v| v.as_s().ok())
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| corrupt(what, name))
}

/// A boolean attribute; absent means `false`.
pub fn flag(item: &Item, name: &str) -> bool {
    item.get(name).and_then(|v| v.as_bool().ok()).copied().unwrap_or(false)
}

/// A string-set attribute; absent means empty.
pub fn string_set(item: &Item, name: &str) -> Vec<String> {
    item.get(name).and_then(|v| v.as_ss().ok()).cloned().unwrap_or_default()
}

/// A boolean attribute value.
pub fn bv(value: bool) -> AttributeValue {
    AttributeValue::Bool(value)
}
