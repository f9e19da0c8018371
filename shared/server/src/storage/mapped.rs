//! Typed records as neutral attributes, derived with serde: written
//! through `serde_dynamo` (strings as `S`, numbers as `N`, maps as `M`, an
//! absent option absent), read back by a deserializer over the neutral
//! values themselves ([`from_attributes`]), which builds no second map on
//! the way (a replay reads its record this way on every call). The bounds
//! on stored numbers stay checks after reading.

use std::collections::HashMap;

use draftline_contract::store::{Attributes, Value};
use serde::Serialize;
use serde::de::value::{Error, MapDeserializer, SeqDeserializer};
use serde::de::{DeserializeOwned, Deserializer, Error as _, IntoDeserializer, Visitor};
use serde_dynamo::AttributeValue as Mapped;

/// `record` as attributes (`None`: it holds something no table stores,
/// such as a float that is not finite).
pub fn to_attributes<T: Serialize>(record: &T) -> Option<Attributes> {
    let item: HashMap<String, Mapped> = serde_dynamo::to_item(record).ok()?;
    item.into_iter().map(|(name, v)| Some((name, neutral(v)?))).collect()
}

/// The record `item` holds (`None`: it is not one). Reads what
/// [`to_attributes`] writes: a number as any integer or float field, an
/// absent attribute as `None` (or its `serde(default)`), unknown
/// attributes (the item's key) ignored.
pub fn from_attributes<T: DeserializeOwned>(item: Attributes) -> Option<T> {
    let fields = MapDeserializer::new(item.into_iter().map(|(name, v)| (name, Stored(v))));
    T::deserialize(fields).ok()
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

/// One stored value, deserialized as itself.
struct Stored(Value);

impl<'de> IntoDeserializer<'de, Error> for Stored {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

impl<'de> Deserializer<'de> for Stored {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::S(text) => visitor.visit_string(text),
            Value::N(number) => {
                if let Ok(n) = number.parse::<i64>() {
                    visitor.visit_i64(n)
                } else if let Ok(n) = number.parse::<u64>() {
                    visitor.visit_u64(n)
                } else {
                    let n = number
                        .parse::<f64>()
                        .map_err(|_| Error::custom("a number that does not parse"))?;
                    visitor.visit_f64(n)
                }
            }
            Value::Bool(b) => visitor.visit_bool(b),
            Value::Null => visitor.visit_unit(),
            Value::L(values) => visitor.visit_seq(SeqDeserializer::new(values.into_iter().map(Stored))),
            Value::M(map) => visitor.visit_map(MapDeserializer::new(map.into_iter().map(|(k, v)| (k, Stored(v))))),
            Value::Ss(texts) => visitor.visit_seq(SeqDeserializer::new(texts.into_iter())),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            value => visitor.visit_some(Stored(value)),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Sample {
        name: String,
        count: u16,
        signed: i64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        flags: Vec<String>,
        nested: std::collections::BTreeMap<String, i64>,
    }

    #[test]
    fn a_record_reads_back_what_serde_dynamo_wrote_and_an_odd_item_is_none() {
        let sample = Sample {
            name: "n".to_owned(),
            count: 201,
            signed: -5,
            note: None,
            flags: vec!["a".to_owned()],
            nested: [("x".to_owned(), 1)].into(),
        };
        let mut item = to_attributes(&sample).unwrap();
        assert_eq!(item.get("count"), Some(&Value::n(201)));
        assert!(!item.contains_key("note"));
        item.insert("pk".to_owned(), Value::s("ignored"));
        assert_eq!(from_attributes::<Sample>(item.clone()), Some(sample));
        item.insert("count".to_owned(), Value::n(70_000));
        assert_eq!(from_attributes::<Sample>(item.clone()), None, "out of a u16's range");
        item.insert("count".to_owned(), Value::s("201"));
        assert_eq!(from_attributes::<Sample>(item), None, "a string is no number");
    }
}
