//! The store-neutral write set ([`draftline_contract::store`]) as DynamoDB
//! sees it: every value as an `AttributeValue`, every write as one
//! `TransactWriteItem` with its expressions. The only place the neutral
//! types and the SDK's meet.

use futures::FutureExt;
use std::collections::HashMap;
use std::fmt::Write as _;

use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::operation::{delete_item::DeleteItemError, put_item::PutItemError, update_item::UpdateItemError};
use aws_sdk_dynamodb::types::{
    AttributeValue, Delete, Put, ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update as SdkUpdate,
};
use draftline_contract::ToolError;
use draftline_contract::store::{Attributes, Condition, TableKey, Update, Value, ValueType, Write, WriteSet};

use crate::{Db, Item};

/// `request` with the condition of `part` (a transaction item's put,
/// update or delete, which have the same four fields).
macro_rules! conditioned {
    ($request:expr, $part:ident) => {
        $request
            .set_condition_expression($part.condition_expression)
            .set_expression_attribute_names($part.expression_attribute_names)
            .set_expression_attribute_values($part.expression_attribute_values)
            .set_return_values_on_condition_check_failure($part.return_values_on_condition_check_failure)
    };
}

/// What `request`, sent alone, came to: written, its condition failed
/// (with the item as stored), or the store failed.
macro_rules! alone {
    ($request:expr, $error:ident, $failed:expr) => {
        match $request.send().boxed().await {
            Ok(_) => Ok(Ok(())),
            Err(SdkError::ServiceError(e)) if e.err().is_conditional_check_failed_exception() => {
                Ok(Err(match e.err() {
                    $error::ConditionalCheckFailedException(e) => e.item().and_then(attributes),
                    _ => None,
                }))
            }
            Err(other) => Err(crate::store_error(other, $failed)),
        }
    };
}

/// `value` as DynamoDB stores it.
pub fn attribute(value: &Value) -> AttributeValue {
    into_attribute(value.clone())
}

/// A stored `AttributeValue` as a neutral value (`None`: a type draftline
/// never stores, such as binary).
pub fn value(attribute: &AttributeValue) -> Option<Value> {
    into_value(attribute.clone())
}

/// An SDK item as neutral attributes (`None`: it holds a type draftline
/// never stores).
pub fn attributes(item: &Item) -> Option<Attributes> {
    into_attributes(item.clone())
}

/// `value` as DynamoDB stores it, moved.
pub fn into_attribute(value: Value) -> AttributeValue {
    match value {
        Value::S(text) => AttributeValue::S(text),
        Value::N(number) => AttributeValue::N(number),
        Value::Bool(b) => AttributeValue::Bool(b),
        Value::Null => AttributeValue::Null(true),
        Value::L(values) => AttributeValue::L(values.into_iter().map(into_attribute).collect()),
        Value::M(map) => AttributeValue::M(map.into_iter().map(|(k, v)| (k, into_attribute(v))).collect()),
        Value::Ss(texts) => AttributeValue::Ss(texts),
    }
}

/// A stored `AttributeValue` as a neutral value, moved (`None`: a type
/// draftline never stores).
pub fn into_value(attribute: AttributeValue) -> Option<Value> {
    Some(match attribute {
        AttributeValue::S(text) => Value::S(text),
        AttributeValue::N(number) => Value::N(number),
        AttributeValue::Bool(b) => Value::Bool(b),
        AttributeValue::Null(_) => Value::Null,
        AttributeValue::L(values) => Value::L(values.into_iter().map(into_value).collect::<Option<_>>()?),
        AttributeValue::M(map) => Value::M(
            map.into_iter()
                .map(|(k, v)| into_value(v).map(|v| (k, v)))
                .collect::<Option<_>>()?,
        ),
        AttributeValue::Ss(texts) => Value::Ss(texts),
        _ => return None,
    })
}

/// An SDK item as neutral attributes, moved.
pub fn into_attributes(item: Item) -> Option<Attributes> {
    item.into_iter()
        .map(|(name, v)| into_value(v).map(|v| (name, v)))
        .collect()
}

/// Neutral attributes as an SDK item, moved.
pub fn into_item(attributes: Attributes) -> Item {
    attributes
        .into_iter()
        .map(|(name, v)| (name, into_attribute(v)))
        .collect()
}

/// Neutral attributes as an SDK item.
pub fn item(attributes: &Attributes) -> Item {
    into_item(attributes.clone())
}

/// A neutral key as an SDK key.
pub fn key(key: &TableKey) -> Item {
    HashMap::from([
        ("pk".to_owned(), AttributeValue::S(key.pk.clone())),
        ("sk".to_owned(), AttributeValue::S(key.sk.clone())),
    ])
}

/// Attributes draftline names as themselves that have no underscore:
/// checked against DynamoDB's reserved words (none of them is one).
const UNRESERVED: [&str; 5] = ["pk", "sk", "kind", "drafts", "calls"];

/// Whether an expression may name `attribute` as itself: a letter, then
/// letters, digits and at least one underscore (`expires_at`, `v_IDR`),
/// or one of [`UNRESERVED`]. None of DynamoDB's reserved words has an
/// underscore; anything else goes through a placeholder. Fewer
/// placeholders are fewer bytes signed and sent with every write.
fn plain(attribute: &str) -> bool {
    let mut bytes = attribute.bytes();
    UNRESERVED.contains(&attribute)
        || (bytes.next().is_some_and(|first| first.is_ascii_alphabetic())
            && attribute.contains('_')
            && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_'))
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

/// An expression's placeholders: every name that is not [`plain`] as
/// `#n<i>`, every value as `:v<i>`. Expressions are written into one
/// buffer each.
#[derive(Default)]
pub(crate) struct Placeholders {
    /// The names behind `#n0`, `#n1`, …
    names: Vec<String>,
    /// The values behind `:v0`, `:v1`, …
    values: Vec<AttributeValue>,
}

impl Placeholders {
    /// Writes how an expression names `name`.
    pub(crate) fn write_name(&mut self, name: &str, out: &mut String) {
        if plain(name) {
            out.push_str(name);
            return;
        }
        let at = match self.names.iter().position(|n| n == name) {
            Some(at) => at,
            None => {
                self.names.push(name.to_owned());
                self.names.len() - 1
            }
        };
        let _ = write!(out, "#n{at}");
    }

    /// Writes a placeholder for `value`.
    pub(crate) fn write_value(&mut self, value: AttributeValue, out: &mut String) {
        let _ = write!(out, ":v{}", self.values.len());
        self.values.push(value);
    }

    /// How an expression names `name`.
    pub(crate) fn name(&mut self, name: &str) -> String {
        let mut out = String::new();
        self.write_name(name, &mut out);
        out
    }

    /// A placeholder for `value`.
    pub(crate) fn value(&mut self, value: AttributeValue) -> String {
        let mut out = String::new();
        self.write_value(value, &mut out);
        out
    }

    /// `condition` as an expression.
    pub(crate) fn condition(&mut self, condition: &Condition) -> String {
        let mut out = String::with_capacity(64);
        self.write_condition(condition, &mut out);
        out
    }

    fn write_condition(&mut self, condition: &Condition, out: &mut String) {
        let mut call = |p: &mut Self, function: &str, name: &str, value: Option<AttributeValue>| {
            out.push_str(function);
            out.push('(');
            p.write_name(name, out);
            if let Some(value) = value {
                out.push_str(", ");
                p.write_value(value, out);
            }
            out.push(')');
        };
        match condition {
            Condition::Absent(name) => call(self, "attribute_not_exists", name, None),
            Condition::Exists(name) => call(self, "attribute_exists", name, None),
            Condition::NotOfType(name, kind) => {
                let code = match kind {
                    ValueType::N => "N",
                    ValueType::S => "S",
                };
                call(
                    self,
                    "NOT attribute_type",
                    name,
                    Some(AttributeValue::S(code.to_owned())),
                );
            }
            Condition::BeginsWith(name, prefix) => {
                call(self, "begins_with", name, Some(AttributeValue::S(prefix.clone())));
            }
            Condition::Equals(name, v) => self.write_comparison(name, " = ", attribute(v), out),
            Condition::AtMost(name, max) => {
                self.write_comparison(name, " <= ", AttributeValue::N(max.to_string()), out)
            }
            Condition::All(all) => self.write_joined(all, " AND ", out),
            Condition::Any(any) => self.write_joined(any, " OR ", out),
            Condition::Not(condition) => {
                out.push_str("NOT ");
                self.write_wrapped(condition, out);
            }
        }
    }

    fn write_comparison(&mut self, name: &str, operator: &str, value: AttributeValue, out: &mut String) {
        self.write_name(name, out);
        out.push_str(operator);
        self.write_value(value, out);
    }

    /// `conditions` joined by `operator`, each compound one in
    /// parentheses (DynamoDB refuses parentheses around a lone operand).
    fn write_joined(&mut self, conditions: &[Condition], operator: &str, out: &mut String) {
        if let [only] = conditions {
            return self.write_condition(only, out);
        }
        for (i, condition) in conditions.iter().enumerate() {
            if i > 0 {
                out.push_str(operator);
            }
            self.write_wrapped(condition, out);
        }
    }

    /// `condition`, in parentheses when it joins others.
    fn write_wrapped(&mut self, condition: &Condition, out: &mut String) {
        if compound(condition) {
            out.push('(');
            self.write_condition(condition, out);
            out.push(')');
        } else {
            self.write_condition(condition, out);
        }
    }

    pub(crate) fn names(self) -> Maps {
        let names: HashMap<String, String> = (self.names.into_iter().enumerate())
            .map(|(i, name)| (format!("#n{i}"), name))
            .collect();
        let values: HashMap<String, AttributeValue> = (self.values.into_iter().enumerate())
            .map(|(i, value)| (format!(":v{i}"), value))
            .collect();
        (
            (!names.is_empty()).then_some(names),
            (!values.is_empty()).then_some(values),
        )
    }
}

fn put(db: &Db, attributes: Attributes, condition: Option<&Condition>) -> Result<TransactWriteItem, ToolError> {
    let rendered = Rendered::condition(condition);
    let put = Put::builder()
        .table_name(db.table())
        .set_item(Some(into_item(attributes)));
    let put = conditioned!(put, rendered).build().map_err(ToolError::internal)?;
    Ok(TransactWriteItem::builder().put(put).build())
}

fn delete(db: &Db, key_of: &TableKey, condition: Option<&Condition>) -> Result<TransactWriteItem, ToolError> {
    let rendered = Rendered::condition(condition);
    let delete = Delete::builder().table_name(db.table()).set_key(Some(key(key_of)));
    let delete = conditioned!(delete, rendered).build().map_err(ToolError::internal)?;
    Ok(TransactWriteItem::builder().delete(delete).build())
}

/// A write's expressions, named as the SDK's put, update and delete name
/// them (so [`conditioned`] sets them on any of the three).
struct Rendered {
    update_expression: String,
    condition_expression: Option<String>,
    expression_attribute_names: Option<HashMap<String, String>>,
    expression_attribute_values: Option<HashMap<String, AttributeValue>>,
    /// A conditional write's failure carries the item as stored (the
    /// caller reads why: a key record's answer, a counter's use).
    return_values_on_condition_check_failure: Option<ReturnValuesOnConditionCheckFailure>,
}

impl Rendered {
    /// `update_expression` and `condition`, with the names and values
    /// `placeholders` gathered for both; a failed condition hands back the
    /// item as stored.
    fn of(update_expression: String, condition: Option<&Condition>, mut placeholders: Placeholders) -> Self {
        let condition_expression = condition.map(|c| placeholders.condition(c));
        let (names, values) = placeholders.names();
        Self {
            update_expression,
            return_values_on_condition_check_failure: condition_expression
                .as_ref()
                .map(|_| ReturnValuesOnConditionCheckFailure::AllOld),
            condition_expression,
            expression_attribute_names: names,
            expression_attribute_values: values,
        }
    }

    /// The expressions of a put's or a delete's `condition`.
    fn condition(condition: Option<&Condition>) -> Self {
        Self::of(String::new(), condition, Placeholders::default())
    }
}

fn render(update: &Update) -> Rendered {
    let mut p = Placeholders::default();
    let mut expression = String::with_capacity(64);
    let clause = |expression: &mut String, keyword: &str, first: bool| {
        expression.push_str(if first {
            if expression.is_empty() { "" } else { " " }
        } else {
            ", "
        });
        if first {
            expression.push_str(keyword);
            expression.push(' ');
        }
    };
    for (i, (name, v)) in update.set.iter().enumerate() {
        clause(&mut expression, "SET", i == 0);
        p.write_comparison(name, " = ", attribute(v), &mut expression);
    }
    for (i, (name, v)) in update.set_if_absent.iter().enumerate() {
        clause(&mut expression, "SET", i == 0 && update.set.is_empty());
        let name = p.name(name);
        let _ = write!(expression, "{name} = if_not_exists({name}, ");
        p.write_value(attribute(v), &mut expression);
        expression.push(')');
    }
    for (i, (name, n)) in update.add.iter().enumerate() {
        clause(&mut expression, "ADD", i == 0);
        p.write_name(name, &mut expression);
        expression.push(' ');
        p.write_value(AttributeValue::N(n.to_string()), &mut expression);
    }
    for (i, name) in update.remove.iter().enumerate() {
        clause(&mut expression, "REMOVE", i == 0);
        p.write_name(name, &mut expression);
    }
    Rendered::of(expression, update.condition.as_ref(), p)
}

fn update(db: &Db, update: &Update) -> Result<TransactWriteItem, ToolError> {
    let rendered = render(update);
    let built = (SdkUpdate::builder().table_name(db.table()))
        .set_key(Some(key(&update.key)))
        .update_expression(rendered.update_expression);
    let built = conditioned!(built, rendered).build().map_err(ToolError::internal)?;
    Ok(TransactWriteItem::builder().update(built).build())
}

/// The transaction items of `writes`, in order.
pub fn transact_items(db: &Db, writes: WriteSet) -> Result<Vec<TransactWriteItem>, ToolError> {
    writes.0.into_iter().map(|write| transact_item(db, write)).collect()
}

/// The transaction item of `write`.
fn transact_item(db: &Db, write: Write) -> Result<TransactWriteItem, ToolError> {
    match write {
        Write::PutNew(attributes) => put(db, attributes, Some(&Condition::Absent("pk".to_owned()))),
        Write::PutIf(attributes, condition) => put(db, attributes, condition.as_ref()),
        Write::Update(u) => update(db, &u),
        Write::Delete(key, condition) => delete(db, &key, condition.as_ref()),
    }
}

/// Sends one write on its own (a `PutItem`, `UpdateItem` or
/// `DeleteItem`). `Ok(Err(stored))`: its condition failed, with the item
/// as stored; `failed` is what a failure tells the caller did not happen.
pub async fn write_one(db: &Db, write: Write, failed: &str) -> Result<Result<(), Option<Attributes>>, ToolError> {
    let item = transact_item(db, write)?;
    let client = db.client();
    if let Some(put) = item.put {
        let request = client.put_item().table_name(put.table_name).set_item(Some(put.item));
        return alone!(conditioned!(request, put), PutItemError, failed);
    }
    if let Some(update) = item.update {
        let request = (client.update_item().table_name(update.table_name))
            .set_key(Some(update.key))
            .update_expression(update.update_expression);
        return alone!(conditioned!(request, update), UpdateItemError, failed);
    }
    let Some(delete) = item.delete else {
        return Err(ToolError::internal("a write rendered as no put, update or delete"));
    };
    let request = client
        .delete_item()
        .table_name(delete.table_name)
        .set_key(Some(delete.key));
    alone!(conditioned!(request, delete), DeleteItemError, failed)
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
    fn an_update_names_plain_attributes_as_themselves_and_the_rest_by_placeholder_once() {
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
            rendered.update_expression,
            "SET kind = :v0, expires_at = if_not_exists(expires_at, :v1) ADD #n0 :v2 REMOVE #n1"
        );
        assert_eq!(
            rendered.condition_expression.as_deref(),
            Some("#n0 = :v3 AND NOT attribute_type(#n2, :v4) AND attribute_not_exists(pk)")
        );
        let names = rendered.expression_attribute_names.unwrap();
        assert_eq!(names["#n0"], "v");
        assert_eq!(names["#n1"], "d#PO-1");
        assert_eq!(names["#n2"], "w");
        assert_eq!(
            names.len(),
            3,
            "kind, expires_at and pk are named as themselves: {names:?}"
        );
        assert!(
            plain("v_IDR")
                && plain("lease_until")
                && plain("pk")
                && !plain("status")
                && !plain("_x")
                && !plain("v_X-1")
        );
        assert_eq!(
            rendered.expression_attribute_values.unwrap()[":v4"],
            AttributeValue::S("S".to_owned())
        );
        // Nothing to name: no maps at all (DynamoDB refuses empty ones).
        let bare = render(&Update::of(update.key.clone()));
        assert!(
            bare.expression_attribute_names.is_none()
                && bare.expression_attribute_values.is_none()
                && bare.condition_expression.is_none()
        );
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
