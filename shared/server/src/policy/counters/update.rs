//! How a counter is written: its `Update` (`ADD` under its limits'
//! conditions), and one counter sent with an `UpdateItem` of its own.

use futures::FutureExt;
use std::collections::HashMap;

use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValuesOnConditionCheckFailure, TransactWriteItem};
use draftline_contract::error::ToolError;
use draftline_dynamo::{Db, store_error};

use super::{CALLS, Counter, DRAFTS, LIMIT_USE, NOTHING_READ, key};

/// Moves one counter with an `UpdateItem` of its own, outside any
/// transaction (a read's rate, the deployment's budget: there is no write
/// to ride in): `update` is its item as [`Counting::items`] built it.
/// `Ok(Err(stored))`: its condition failed, with the counter as stored.
pub async fn spend(
    db: &Db,
    update: TransactWriteItem,
) -> Result<Result<(), Option<HashMap<String, AttributeValue>>>, ToolError> {
    let Some(update) = update.update else {
        return Err(ToolError::internal("a counter's item is not an update"));
    };
    let sent = db
        .client()
        .update_item()
        .table_name(update.table_name)
        .set_key(Some(update.key))
        .update_expression(update.update_expression)
        .set_expression_attribute_names(update.expression_attribute_names)
        .set_expression_attribute_values(update.expression_attribute_values)
        .set_condition_expression(update.condition_expression)
        .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
        .send()
        .boxed()
        .await;
    match sent {
        Ok(_) => Ok(Ok(())),
        Err(SdkError::ServiceError(service)) if service.err().is_conditional_check_failed_exception() => {
            let stored = match service.err() {
                UpdateItemError::ConditionalCheckFailedException(e) => e.item().cloned(),
                _ => None,
            };
            Ok(Err(stored))
        }
        Err(other) => Err(store_error(other, NOTHING_READ)),
    }
}

/// One counter's update: `ADD` what it adds under its bounds.
pub(super) struct CounterUpdate {
    pub(super) expression: String,
    pub(super) condition: Option<String>,
    pub(super) names: Option<HashMap<String, String>>,
    pub(super) values: HashMap<String, AttributeValue>,
}

/// The placeholder `<sign><letter><i>` (`#a0`, `:r1`).
fn placeholder(sign: char, letter: char, i: usize) -> String {
    format!("{sign}{letter}{i}")
}

impl Counter {
    /// Its item's key.
    pub(super) fn key(&self) -> HashMap<String, AttributeValue> {
        key(self.pk.clone(), self.sk.clone())
    }

    /// Its update, under its limits' conditions unless they were lifted:
    /// `ADD drafts :a0, v_IDR :a1 SET kind = :k, expires_at = :e`,
    /// conditioned `(attribute_not_exists(drafts) OR drafts <= :r0) AND …`.
    /// The counters' own attributes are named as themselves (none is a
    /// reserved word, [`plain`]), and a bound names the attribute its
    /// counter adds to: no names map travels with a draft's counters (the
    /// bytes signed and sent with every draft under a policy). Any other
    /// attribute goes through a placeholder (`#a0`, `#b0`).
    pub(super) fn update(&self) -> CounterUpdate {
        let mut names = HashMap::new();
        let mut values = HashMap::with_capacity(self.adds.len() + self.bounds.len() + 2);
        let mut named = |attribute: &String, sign: char, i: usize| -> String {
            if plain(attribute) {
                return attribute.clone();
            }
            let name = placeholder('#', sign, i);
            names.insert(name.clone(), attribute.clone());
            name
        };
        let added: Vec<String> = self
            .adds
            .iter()
            .enumerate()
            .map(|(i, (attribute, _))| named(attribute, 'a', i))
            .collect();
        let mut expression = String::with_capacity(48 + 16 * self.adds.len());
        expression.push_str("ADD ");
        for (i, ((_, n), name)) in self.adds.iter().zip(&added).enumerate() {
            let value = placeholder(':', 'a', i);
            if i > 0 {
                expression.push_str(", ");
            }
            expression.push_str(name);
            expression.push(' ');
            expression.push_str(&value);
            values.insert(value, AttributeValue::N(n.to_string()));
        }
        expression.push_str(" SET kind = :k, expires_at = :e");
        values.insert(":k".to_owned(), AttributeValue::S(LIMIT_USE.into()));
        values.insert(":e".to_owned(), AttributeValue::N(self.expires_at.to_string()));
        let mut condition = String::new();
        if self.conditioned {
            for (i, bound) in self.bounds.iter().enumerate() {
                let name = match self
                    .adds
                    .iter()
                    .position(|(attribute, _)| *attribute == bound.attribute)
                    .and_then(|at| added.get(at))
                {
                    Some(name) => name.clone(),
                    // A limit on what this counter does not add (none is
                    // built so): its attribute is named on its own.
                    None => named(&bound.attribute, 'b', i),
                };
                let room = placeholder(':', 'r', i);
                if !condition.is_empty() {
                    condition.push_str(" AND ");
                }
                let left = bound.max.saturating_sub(bound.this);
                if left >= 0 {
                    condition.push_str("(attribute_not_exists(");
                    condition.push_str(&name);
                    condition.push_str(") OR ");
                    condition.push_str(&name);
                    condition.push_str(" <= ");
                    condition.push_str(&room);
                    condition.push(')');
                } else {
                    // This draft alone is over the limit: no use passes.
                    condition.push_str(&name);
                    condition.push_str(" <= ");
                    condition.push_str(&room);
                }
                values.insert(room, AttributeValue::N(left.to_string()));
            }
        }
        CounterUpdate {
            expression,
            condition: (!condition.is_empty()).then_some(condition),
            // DynamoDB refuses an empty map: none is sent.
            names: (!names.is_empty()).then_some(names),
            values,
        }
    }
}

/// Whether an expression may name `attribute` as itself: the counters'
/// own attributes (`drafts`, `calls`, `v_<currency>` of ASCII letters and
/// digits), none of them among DynamoDB's reserved words (which have no
/// underscore). Anything else is named through a placeholder.
pub(super) fn plain(attribute: &str) -> bool {
    attribute == DRAFTS
        || attribute == CALLS
        || attribute
            .strip_prefix("v_")
            .is_some_and(|code| !code.is_empty() && code.bytes().all(|b| b.is_ascii_alphanumeric()))
}
