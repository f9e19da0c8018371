//! The IAM actions each deployed function's DynamoDB requests need, seen
//! as they are made: the evidence the deployment template's roles are
//! checked against (`tests/api/grants.rs`).
//!
//! The local server serves every function on one port and runs each
//! request inside [`Db::serving`](crate::Db::serving), naming the function that would serve it
//! when deployed. Every request the [`Db`](crate::Db)'s client makes then
//! records the actions IAM authorises it by, for that function:
//! `TransactWriteItems` is authorised per item (a `Put` is `PutItem`, an
//! `Update` `UpdateItem`, a `Delete` `DeleteItem`, a `ConditionCheck`
//! `ConditionCheckItem`), `TransactGetItems` as `GetItem`, every other
//! operation as itself. A shared audit write carries the functions of all
//! the calls whose items it writes. Outside `Db::serving` (a deployed
//! function, set-up, tests' own requests) nothing is recorded.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::sync::{Arc, Mutex};

use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsInput;
use aws_sdk_dynamodb::operation::update_item::UpdateItemInput;
use aws_smithy_runtime_api::client::interceptors::context::Input;

tokio::task_local! {
    static SERVING: Functions;
}

/// The deployed functions a request is made for (one; several for a shared
/// audit write).
pub(crate) type Functions = Arc<[&'static str]>;

/// Runs `fut` as deployed function `function` would: it is recorded as
/// served (a function whose calls need no request shows with none), and
/// its DynamoDB requests as that function's.
pub(crate) async fn serving<F: Future>(grants: &Grants, function: &'static str, fut: F) -> F::Output {
    if let Ok(mut map) = grants.0.lock() {
        map.entry(function).or_default();
    }
    SERVING.scope(Arc::from([function]), fut).await
}

/// The functions the current task serves, if any.
pub(crate) fn current() -> Option<Functions> {
    SERVING.try_with(Arc::clone).ok()
}

/// Runs `fut` for `functions` (the shared audit writer, for the calls of a
/// group).
pub(crate) async fn serving_all<F: Future>(functions: Functions, fut: F) -> F::Output {
    SERVING.scope(functions, fut).await
}

/// Per deployed function served, the IAM actions its requests needed,
/// and the partition keys of the items it updated (a role may grant
/// `UpdateItem` on some keys only: `dynamodb:LeadingKeys`).
#[derive(Debug, Default)]
pub struct Grants(Mutex<BTreeMap<&'static str, Seen>>);

/// What one function's requests needed.
#[derive(Debug, Default, Clone)]
pub struct Seen {
    /// The IAM actions (`dynamodb:GetItem`, ...).
    pub actions: BTreeSet<&'static str>,
    /// The partition keys of the items it updated (`UpdateItem`, alone or
    /// in a transaction).
    pub updated: BTreeSet<String>,
}

impl Grants {
    /// What was recorded so far.
    pub fn snapshot(&self) -> BTreeMap<&'static str, Seen> {
        self.0.lock().map(|m| m.clone()).unwrap_or_default()
    }

    /// Records that operation `operation` with `input` was sent, for the
    /// functions the current task serves.
    pub(crate) fn record(&self, operation: &str, input: &Input) {
        let Some(functions) = current() else { return };
        let actions = actions_of(operation, input);
        let updated = updated_keys(input);
        if let Ok(mut map) = self.0.lock() {
            for function in functions.iter() {
                let seen = map.entry(function).or_default();
                seen.actions.extend(actions.iter().copied());
                seen.updated.extend(updated.iter().cloned());
            }
        }
    }
}

/// The partition keys of the items `input` updates.
fn updated_keys(input: &Input) -> Vec<String> {
    let pk = |key: Option<&std::collections::HashMap<String, aws_sdk_dynamodb::types::AttributeValue>>| {
        key.and_then(|k| k.get("pk")).and_then(|v| v.as_s().ok()).cloned()
    };
    if let Some(update) = input.downcast_ref::<UpdateItemInput>() {
        return pk(update.key()).into_iter().collect();
    }
    if let Some(transaction) = input.downcast_ref::<TransactWriteItemsInput>() {
        return transaction
            .transact_items()
            .iter()
            .filter_map(|item| pk(item.update().map(|u| u.key())))
            .collect();
    }
    Vec::new()
}

/// The IAM actions that authorise `operation` with `input`.
fn actions_of(operation: &str, input: &Input) -> Vec<&'static str> {
    if operation == "TransactWriteItems" {
        let Some(input) = input.downcast_ref::<TransactWriteItemsInput>() else {
            return vec!["dynamodb:TransactWriteItems"];
        };
        let mut actions: Vec<&'static str> = input
            .transact_items()
            .iter()
            .filter_map(|item| {
                if item.put().is_some() {
                    Some("dynamodb:PutItem")
                } else if item.update().is_some() {
                    Some("dynamodb:UpdateItem")
                } else if item.delete().is_some() {
                    Some("dynamodb:DeleteItem")
                } else if item.condition_check().is_some() {
                    Some("dynamodb:ConditionCheckItem")
                } else {
                    None
                }
            })
            .collect();
        actions.sort_unstable();
        actions.dedup();
        return actions;
    }
    vec![match operation {
        "TransactGetItems" | "GetItem" => "dynamodb:GetItem",
        "BatchGetItem" => "dynamodb:BatchGetItem",
        "Query" => "dynamodb:Query",
        "Scan" => "dynamodb:Scan",
        "PutItem" => "dynamodb:PutItem",
        "UpdateItem" => "dynamodb:UpdateItem",
        "DeleteItem" => "dynamodb:DeleteItem",
        "BatchWriteItem" => "dynamodb:BatchWriteItem",
        "DescribeTable" => "dynamodb:DescribeTable",
        _ => "dynamodb:(an operation draftline does not use)",
    }]
}
