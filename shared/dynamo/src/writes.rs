//! The store-neutral write set ([`draftline_contract::store`]) as DynamoDB
//! sees it: every value as an `AttributeValue`, every write as one
//! `TransactWriteItem` with its expressions. The only place the neutral
//! types and the SDK's meet.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::{AttributeValue, Put, TransactWriteItem, Update as SdkUpdate};
use draftline_contract::ToolError;
use draftline_contract::store::{Attributes, Condition, TableKey, Update, Value, ValueType, Write, WriteSet};

use crate::{Db, Item};

/// `value` as DynamoDB stores it.
pub fn attribute(value: &Value) -> AttributeValue {
    match value {
        Value::S(text) => AttributeValue::S(text.clone()),
        Value::N(number) => AttributeValue::N(number.clone()),
        Value::Bool(b) => AttributeValue::Bool(*b),
        Value::Null => AttributeValue::Null(true),
        Value::L(values) => AttributeValue::L(values.iter().map(attribute).collect()),
        Value::M(map) => AttributeValue::M(map.iter().map(|(k, v)| (k.clone(), attribute(v))).collect()),
        Value::Ss(texts) => AttributeValue::Ss(texts.clone()),
    }
}

/// A stored `AttributeValue` as a neutral value (`None`: a type draftline
/// never stores, such as binary).
pub fn value(attribute: &AttributeValue) -> Option<Value> {
    Some(match attribute {
        AttributeValue::S(text) => Value::S(text.clone()),
        AttributeValue::N(number) => Value::N(number.clone()),
        AttributeValue::Bool(b) => Value::Bool(*b),
        AttributeValue::Null(_) => Value::Null,
        AttributeValue::L(values) => Value::L(values.iter().map(value).collect::<Option<_>>()?),
        AttributeValue::M(map) => Value::M(
            map.iter()
                .map(|(k, v)| value(v).map(|v| (k.clone(), v)))
                .collect::<Option<_>>()?,
        ),
        AttributeValue::Ss(texts) => Value::Ss(texts.clone()),
        _ => return None,
    })
}

/// An SDK item as neutral attributes (`None`: it holds a type draftline
/// never stores).
pub fn attributes(item: &Item) -> Option<Attributes> {
    item.iter()
        .map(|(name, v)| value(v).map(|v| (name.clone(), v)))
        .collect()
}

/// Neutral attributes as an SDK item.
pub fn item(attributes: &Attributes) -> Item {
    attributes
        .iter()
        .map(|(name, v)| (name.clone(), attribute(v)))
        .collect()
}

/// A neutral key as an SDK key.
pub fn key(key: &TableKey) -> Item {
    HashMap::from([
        ("pk".to_owned(), AttributeValue::S(key.pk.clone())),
        ("sk".to_owned(), AttributeValue::S(key.sk.clone())),
    ])
}

/// An expression's name and value maps, each `None` when empty (DynamoDB
/// refuses an empty map).
type Maps = (Option<HashMap<String, String>>, Option<HashMap<String, AttributeValue>>);

/// An expression's placeholders: every name as `#n<i>`, every value as
/// `:v<i>` (no attribute name is ever a reserved word then).
#[derive(Default)]
struct Placeholders {
    names: HashMap<String, String>,
    values: HashMap<String, AttributeValue>,
}

impl Placeholders {
    fn name(&mut self, name: &str) -> String {
        if let Some((placeholder, _)) = self.names.iter().find(|(_, n)| *n == name) {
            return placeholder.clone();
        }
        let placeholder = format!("#n{}", self.names.len());
        self.names.insert(placeholder.clone(), name.to_owned());
        placeholder
    }

    fn value(&mut self, value: AttributeValue) -> String {
        let placeholder = format!(":v{}", self.values.len());
        self.values.insert(placeholder.clone(), value);
        placeholder
    }

    fn condition(&mut self, condition: &Condition) -> String {
        match condition {
            Condition::Absent(name) => format!("attribute_not_exists({})", self.name(name)),
            Condition::Equals(name, v) => format!("{} = {}", self.name(name), self.value(attribute(v))),
            Condition::NotOfType(name, kind) => {
                let code = match kind {
                    ValueType::N => "N",
                    ValueType::S => "S",
                };
                let name = self.name(name);
                format!(
                    "NOT attribute_type({name}, {})",
                    self.value(AttributeValue::S(code.to_owned()))
                )
            }
            Condition::All(all) => {
                let parts: Vec<String> = all.iter().map(|c| format!("({})", self.condition(c))).collect();
                parts.join(" AND ")
            }
        }
    }

    fn names(self) -> Maps {
        let non_empty_names = (!self.names.is_empty()).then_some(self.names);
        let non_empty_values = (!self.values.is_empty()).then_some(self.values);
        (non_empty_names, non_empty_values)
    }
}

fn put(db: &Db, attributes: &Attributes, condition: Option<&Condition>) -> Result<TransactWriteItem, ToolError> {
    let mut placeholders = Placeholders::default();
    let expression = condition.map(|c| placeholders.condition(c));
    let (names, values) = placeholders.names();
    let put = Put::builder()
        .table_name(db.table())
        .set_item(Some(item(attributes)))
        .set_condition_expression(expression)
        .set_expression_attribute_names(names)
        .set_expression_attribute_values(values)
        .build()
        .map_err(ToolError::internal)?;
    Ok(TransactWriteItem::builder().put(put).build())
}

/// An update's expressions.
struct Rendered {
    expression: String,
    condition: Option<String>,
    names: Option<HashMap<String, String>>,
    values: Option<HashMap<String, AttributeValue>>,
}

fn render(update: &Update) -> Rendered {
    let mut p = Placeholders::default();
    let mut set = Vec::new();
    for (name, v) in &update.set {
        set.push(format!("{} = {}", p.name(name), p.value(attribute(v))));
    }
    for (name, v) in &update.set_if_absent {
        let name = p.name(name);
        set.push(format!("{name} = if_not_exists({name}, {})", p.value(attribute(v))));
    }
    let add: Vec<String> = update
        .add
        .iter()
        .map(|(name, n)| format!("{} {}", p.name(name), p.value(AttributeValue::N(n.to_string()))))
        .collect();
    let remove: Vec<String> = update.remove.iter().map(|name| p.name(name)).collect();
    let mut expression = Vec::new();
    for (clause, parts) in [("SET", set), ("ADD", add), ("REMOVE", remove)] {
        if !parts.is_empty() {
            expression.push(format!("{clause} {}", parts.join(", ")));
        }
    }
    let condition = update.condition.as_ref().map(|c| p.condition(c));
    let (names, values) = p.names();
    Rendered {
        expression: expression.join(" "),
        condition,
        names,
        values,
    }
}

fn update(db: &Db, update: &Update) -> Result<TransactWriteItem, ToolError> {
    let rendered = render(update);
    let built = SdkUpdate::builder()
        .table_name(db.table())
        .set_key(Some(key(&update.key)))
        .update_expression(rendered.expression)
        .set_condition_expression(rendered.condition)
        .set_expression_attribute_names(rendered.names)
        .set_expression_attribute_values(rendered.values)
        .build()
        .map_err(ToolError::internal)?;
    Ok(TransactWriteItem::builder().update(built).build())
}

/// The transaction items of `writes`, in order.
pub fn transact_items(db: &Db, writes: &WriteSet) -> Result<Vec<TransactWriteItem>, ToolError> {
    writes
        .0
        .iter()
        .map(|write| match write {
            Write::PutNew(attributes) => put(db, attributes, Some(&Condition::Absent("pk".to_owned()))),
            Write::PutIf(attributes, condition) => put(db, attributes, condition.as_ref()),
            Write::Update(u) => update(db, u),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_update_names_every_attribute_and_value_by_placeholder_once() {
        let mut update = Update::of(TableKey {
            pk: "T#demo#B#SBY-01#NEAR#PO#V-00231".to_owned(),
            sk: "ITEMS#BRG-0042".to_owned(),
        });
        update.set = vec![("kind".to_owned(), Value::s("near_duplicate"))];
        update.set_if_absent = vec![("expires_at".to_owned(), Value::n(9))];
        update.add = vec![("v".to_owned(), 1)];
        update.remove = vec!["d#PO-1".to_owned()];
        update.condition = Some(Condition::All(vec![
            Condition::Equals("v".to_owned(), Value::n(3)),
            Condition::NotOfType("w".to_owned(), ValueType::S),
            Condition::Absent("pk".to_owned()),
        ]));
        let rendered = render(&update);
        assert_eq!(
            rendered.expression,
            "SET #n0 = :v0, #n1 = if_not_exists(#n1, :v1) ADD #n2 :v2 REMOVE #n3"
        );
        assert_eq!(
            rendered.condition.as_deref(),
            Some("(#n2 = :v3) AND (NOT attribute_type(#n4, :v4)) AND (attribute_not_exists(#n5))")
        );
        let names = rendered.names.unwrap();
        assert_eq!(names["#n2"], "v");
        assert_eq!(names["#n3"], "d#PO-1");
        assert_eq!(rendered.values.unwrap()[":v4"], AttributeValue::S("S".to_owned()));
        // Nothing to name: no maps at all (DynamoDB refuses empty ones).
        let bare = render(&Update::of(update.key.clone()));
        assert!(bare.names.is_none() && bare.values.is_none() && bare.condition.is_none());
    }

    #[test]
    fn stored_values_round_trip_and_a_type_draftline_never_stores_is_none() {
        let stored = AttributeValue::M(HashMap::from([(
            "a".to_owned(),
            AttributeValue::L(vec![
                AttributeValue::N("1".into()),
                AttributeValue::Null(true),
                AttributeValue::Ss(vec!["x".into()]),
                AttributeValue::Bool(true),
            ]),
        )]));
        assert_eq!(attribute(&value(&stored).unwrap()), stored);
        assert_eq!(value(&AttributeValue::B(vec![1].into())), None);
    }
}
