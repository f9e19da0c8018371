//! Typed records as neutral attributes, derived with `serde_dynamo`:
//! strings as `S`, numbers as `N`, maps as `M`, an absent option absent.
//! The bounds on stored numbers stay checks after reading.

use std::collections::HashMap;

use draftline_contract::store::{Attributes, Value};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_dynamo::AttributeValue as Mapped;

/// `record` as attributes (`None`: it holds something no table stores,
/// such as a float that is not finite).
pub fn to_attributes<T: Serialize>(record: &T) -> Option<Attributes> {
    let item: HashMap<String, Mapped> = serde_dynamo::to_item(record).ok()?;
    item.into_iter().map(|(name, v)| Some((name, neutral(v)?))).collect()
}

/// The record `item` holds (`None`: it is not one).
pub fn from_attributes<T: DeserializeOwned>(item: &Attributes) -> Option<T> {
    let item: HashMap<String, Mapped> = item.iter().map(|(name, v)| (name.clone(), mapped(v))).collect();
    serde_dynamo::from_item(item).ok()
}

fn neutral(value: Mapped) -> Option<Value> {
    Some(match value {
        Mapped::S(text) => Value::S(text),
        Mapped::N(number) => Value::N(number),
        Mapped::Bool(b) => Value::Bool(b),
        Mapped::Null(_) => Value::Null,
        Mapped::L(values) => Value::L(values.into_iter().map(neutral).collect::<Option<_>>()?),
        Mapped::M(map) => Value::M(
            map.into_iter()
                .map(|(k, v)| Some((k, neutral(v)?)))
                .collect::<Option<_>>()?,
        ),
        Mapped::Ss(texts) => Value::Ss(texts),
        Mapped::B(_) | Mapped::Ns(_) | Mapped::Bs(_) => return None,
    })
}

fn mapped(value: &Value) -> Mapped {
    match value {
        Value::S(text) => Mapped::S(text.clone()),
        Value::N(number) => Mapped::N(number.clone()),
        Value::Bool(b) => Mapped::Bool(*b),
        Value::Null => Mapped::Null(true),
        Value::L(values) => Mapped::L(values.iter().map(mapped).collect()),
        Value::M(map) => Mapped::M(map.iter().map(|(k, v)| (k.clone(), mapped(v))).collect()),
        Value::Ss(texts) => Mapped::Ss(texts.clone()),
    }
}
