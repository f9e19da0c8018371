//! Reading typed values out of stored items, and making them: the model
//! works on store-neutral attributes ([`draftline_contract::store`]) alone;
//! only the backend's store (`crate::store`) meets the DynamoDB SDK.

use std::str::FromStr;

use draftline_contract::ErpError;
use draftline_contract::store::{TableKey, Value};
use rust_decimal::Decimal;

/// A stored item: its attributes by name, its key among them.
pub type Item = draftline_contract::store::Attributes;

/// The key of `item`, a key this model built (its `pk` and `sk` are text).
pub fn table_key(item: &Item) -> TableKey {
    let text = |name| item.get(name).and_then(Value::as_s).unwrap_or_default().to_owned();
    TableKey {
        pk: text("pk"),
        sk: text("sk"),
    }
}

/// A stored item is missing an attribute or has the wrong type: our bug, not the caller's.
pub fn corrupt(what: &str, name: &str) -> ErpError {
    ErpError::internal(format!("stored {what} has no valid attribute '{name}'"))
}

/// A string attribute.
pub fn s(item: &Item, what: &str, name: &str) -> Result<String, ErpError> {
    item.get(name)
        .and_then(Value::as_s)
        .map(str::to_owned)
        .ok_or_else(|| corrupt(what, name))
}

/// An optional string attribute.
pub fn s_opt(item: &Item, name: &str) -> Option<String> {
    item.get(name).and_then(Value::as_s).map(str::to_owned)
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
        .and_then(Value::as_n)
        .and_then(|n| n.parse::<i64>().ok())
        .filter(|n| (-MAX_STORED_INT..=MAX_STORED_INT).contains(n))
        .ok_or_else(|| corrupt(what, name))
}

/// A decimal attribute (stored as a DynamoDB number), within
/// ±[`max_stored_amount`] and with at most 4 decimals.
pub fn dec(item: &Item, what: &str, name: &str) -> Result<Decimal, ErpError> {
    item.get(name)
        .and_then(Value::as_n)
        .and_then(|n| Decimal::from_str(n).ok())
        .filter(|d| d.abs() <= max_stored_amount() && d.scale() <= 4)
        .ok_or_else(|| corrupt(what, name))
}

/// The key attributes of the item at `pk`, `sk`.
pub fn key(pk: impl Into<String>, sk: impl Into<String>) -> Item {
    Item::from([("pk".to_owned(), sv(pk)), ("sk".to_owned(), sv(sk))])
}

/// A string attribute value.
pub fn sv(value: impl Into<String>) -> Value {
    Value::S(value.into())
}

/// A number attribute value.
pub fn nv(value: impl ToString) -> Value {
    Value::N(value.to_string())
}

/// A date attribute (stored as `YYYY-MM-DD`).
pub fn date(item: &Item, what: &str, name: &str) -> Result<chrono::NaiveDate, ErpError> {
    item.get(name)
        .and_then(Value::as_s)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| corrupt(what, name))
}

/// A boolean attribute; absent means `false`.
pub fn flag(item: &Item, name: &str) -> bool {
    item.get(name).and_then(Value::as_bool).unwrap_or(false)
}

/// A string-set attribute; absent means empty.
pub fn string_set(item: &Item, name: &str) -> Vec<String> {
    item.get(name)
        .and_then(Value::as_ss)
        .map(<[String]>::to_vec)
        .unwrap_or_default()
}

/// A boolean attribute value.
pub fn bv(value: bool) -> Value {
    Value::Bool(value)
}
