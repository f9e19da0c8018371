//! The store-neutral write set ([`draftline_contract::store`]) as DynamoDB
//! sees it: every value as an `AttributeValue`, every write as one
//! `TransactWriteItem` with its expressions. The only place the neutral
//! types and the SDK's meet.

use futures::FutureExt;
use std::collections::HashMap;

use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::operation::{delete_item::DeleteItemError, put_item::PutItemError, update_item::UpdateItemError};
use aws_sdk_dynamodb::types::{
    AttributeValue, Delete, Put, ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update as SdkUpdate,
};
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

/// Whether `condition` renders as operands joined by `AND` or `OR`.
fn compound(condition: &Condition) -> bool {
    match condition {
        Condition::All(all) | Condition::Any(all) => match all.as_slice() {
            [only] => compound(only),
            _ => true,
        },
        _ => false,
    }
}

/// An expression's name and value maps, each `None` when empty (DynamoDB
/// refuses an empty map).
type Maps = (Option<HashMap<String, String>>, Option<HashMap<String, AttributeValue>>);

/// An expression's placeholders: every name as `#n<i>`, every value as
/// `:v<i>` (no attribute name is ever a reserved word then).
#[derive(Default)]
pub(crate) struct Placeholders {
    names: HashMap<String, String>,
    values: HashMap<String, AttributeValue>,
}

impl Placeholders {
    pub(crate) fn name(&mut self, name: &str) -> String {
        if let Some((placeholder, _)) = self.names.iter().find(|(_, n)| *n == name) {
            return placeholder.clone();
        }
        let placeholder = format!("#n{}", self.names.len());
        self.names.insert(placeholder.clone(), name.to_owned());
        placeholder
    }

    pub(crate) fn value(&mut self, value: AttributeValue) -> String {
        let placeholder = format!(":v{}", self.values.len());
        self.values.insert(placeholder.clone(), value);
        placeholder
    }

    pub(crate) fn condition(&mut self, condition: &Condition) -> String {
        match condition {
            Condition::Absent(name) => format!("attribute_not_exists({})", self.name(name)),
            Condition::Exists(name) => format!("attribute_exists({})", self.name(name)),
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
            Condition::All(all) => self.joined(all, " AND "),
            Condition::Any(any) => self.joined(any, " OR "),
            Condition::Not(condition) => format!("NOT {}", self.wrapped(condition)),
            Condition::BeginsWith(name, prefix) => {
                let name = self.name(name);
                format!("begins_with({name}, {})", self.value(AttributeValue::S(prefix.clone())))
            }
            Condition::AtMost(name, max) => {
                let name = self.name(name);
                format!("{name} <= {}", self.value(AttributeValue::N(max.to_string())))
            }
        }
    }

    /// `conditions` joined by `operator`, each compound one in
    /// parentheses (DynamoDB refuses parentheses around a lone operand).
    fn joined(&mut self, conditions: &[Condition], operator: &str) -> String {
        if let [only] = conditions {
            return self.condition(only);
        }
        let parts: Vec<String> = conditions.iter().map(|c| self.wrapped(c)).collect();
        parts.join(operator)
    }

    /// `condition`, in parentheses when it joins others.
    fn wrapped(&mut self, condition: &Condition) -> String {
        let text = self.condition(condition);
        if compound(condition) { format!("({text})") } else { text }
    }

    pub(crate) fn names(self) -> Maps {
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
        .set_return_values_on_condition_check_failure(all_old(condition))
        .build()
        .map_err(ToolError::internal)?;
    Ok(TransactWriteItem::builder().put(put).build())
}

/// A conditional write's failure carries the item as stored (the caller
/// reads why: a key record's answer, a counter's use).
fn all_old(condition: Option<&Condition>) -> Option<ReturnValuesOnConditionCheckFailure> {
    condition.map(|_| ReturnValuesOnConditionCheckFailure::AllOld)
}

fn delete(db: &Db, key_of: &TableKey, condition: Option<&Condition>) -> Result<TransactWriteItem, ToolError> {
    let mut placeholders = Placeholders::default();
    let expression = condition.map(|c| placeholders.condition(c));
    let (names, values) = placeholders.names();
    let delete = Delete::builder()
        .table_name(db.table())
        .set_key(Some(key(key_of)))
        .set_condition_expression(expression)
        .set_expression_attribute_names(names)
        .set_expression_attribute_values(values)
        .set_return_values_on_condition_check_failure(all_old(condition))
        .build()
        .map_err(ToolError::internal)?;
    Ok(TransactWriteItem::builder().delete(delete).build())
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
        .set_return_values_on_condition_check_failure(all_old(update.condition.as_ref()))
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
            Write::Delete(key, condition) => delete(db, key, condition.as_ref()),
        })
        .collect()
}

/// Sends one write on its own (a `PutItem`, `UpdateItem` or
/// `DeleteItem`). `Ok(Err(stored))`: its condition failed, with the item
/// as stored; `failed` is what a failure tells the caller did not happen.
pub async fn write_one(db: &Db, write: &Write, failed: &str) -> Result<Result<(), Option<Attributes>>, ToolError> {
    let item = transact_items(db, &WriteSet(vec![write.clone()]))?
        .pop()
        .ok_or_else(|| ToolError::internal("a write rendered as nothing"))?;
    let client = db.client();
    let refused = |item: Option<&Item>| Ok(Err(item.and_then(attributes)));
    if let Some(put) = item.put {
        return match client
            .put_item()
            .table_name(put.table_name)
            .set_item(Some(put.item))
            .set_condition_expression(put.condition_expression)
            .set_expression_attribute_names(put.expression_attribute_names)
            .set_expression_attribute_values(put.expression_attribute_values)
            .set_return_values_on_condition_check_failure(put.return_values_on_condition_check_failure)
            .send()
            .boxed()
            .await
        {
            Ok(_) => Ok(Ok(())),
            Err(SdkError::ServiceError(e)) if e.err().is_conditional_check_failed_exception() => match e.err() {
                PutItemError::ConditionalCheckFailedException(e) => refused(e.item()),
                _ => refused(None),
            },
            Err(other) => Err(crate::store_error(other, failed)),
        };
    }
    if let Some(update) = item.update {
        return match client
            .update_item()
            .table_name(update.table_name)
            .set_key(Some(update.key))
            .update_expression(update.update_expression)
            .set_condition_expression(update.condition_expression)
            .set_expression_attribute_names(update.expression_attribute_names)
            .set_expression_attribute_values(update.expression_attribute_values)
            .set_return_values_on_condition_check_failure(update.return_values_on_condition_check_failure)
            .send()
            .boxed()
            .await
        {
            Ok(_) => Ok(Ok(())),
            Err(SdkError::ServiceError(e)) if e.err().is_conditional_check_failed_exception() => match e.err() {
                UpdateItemError::ConditionalCheckFailedException(e) => refused(e.item()),
                _ => refused(None),
            },
            Err(other) => Err(crate::store_error(other, failed)),
        };
    }
    let Some(delete) = item.delete else {
        return Err(ToolError::internal("a write rendered as no put, update or delete"));
    };
    match client
        .delete_item()
        .table_name(delete.table_name)
        .set_key(Some(delete.key))
        .set_condition_expression(delete.condition_expression)
        .set_expression_attribute_names(delete.expression_attribute_names)
        .set_expression_attribute_values(delete.expression_attribute_values)
        .set_return_values_on_condition_check_failure(delete.return_values_on_condition_check_failure)
        .send()
        .boxed()
        .await
    {
        Ok(_) => Ok(Ok(())),
        Err(SdkError::ServiceError(e)) if e.err().is_conditional_check_failed_exception() => match e.err() {
            DeleteItemError::ConditionalCheckFailedException(e) => refused(e.item()),
            _ => refused(None),
        },
        Err(other) => Err(crate::store_error(other, failed)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_conditions_get_parentheses_only_where_they_join_others() {
        let eq = |v: &str| Condition::Equals("k".to_owned(), Value::s(v));
        let begins = |v: &str| Condition::BeginsWith("t".to_owned(), v.to_owned());
        let filter = Condition::All(vec![
            eq("a"),
            Condition::Any(vec![
                begins("p_"),
                Condition::All(vec![begins("r."), Condition::Any(vec![eq("b"), eq("c")])]),
                Condition::Not(Box::new(Condition::Any(vec![begins("r."), begins("p_")]))),
            ]),
        ]);
        let mut p = Placeholders::default();
        assert_eq!(
            p.condition(&filter),
            "#n0 = :v0 AND (begins_with(#n1, :v1) OR (begins_with(#n1, :v2) AND (#n0 = :v3 OR #n0 = :v4)) \
             OR NOT (begins_with(#n1, :v5) OR begins_with(#n1, :v6)))"
        );
        // A lone operand is never wrapped (DynamoDB refuses `((a))`).
        let lone = Condition::All(vec![Condition::Any(vec![Condition::All(vec![eq("a")])])]);
        assert_eq!(Placeholders::default().condition(&lone), "#n0 = :v0");
        let not = Condition::Not(Box::new(Condition::All(vec![Condition::Exists("x".to_owned())])));
        assert_eq!(Placeholders::default().condition(&not), "NOT attribute_exists(#n0)");
    }

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
            Some("#n2 = :v3 AND NOT attribute_type(#n4, :v4) AND attribute_not_exists(#n5)")
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
