//! The IAM actions each deployed function's DynamoDB requests need, seen
//! as they are made: the evidence the deployment template's roles are
//! checked against (`tests/api/grants.rs`).
//!
//! The local server serves every function on one port and runs each
//! request inside [`Db::serving`](crate::Db::serving), naming the function that would serve it
//! when deployed. Every request the [`Db`](crate::Db)'s client makes then
//! records the actions IAM authorises it by, for that function, with the
//! partition key of each item it writes:
//! `TransactWriteItems` is authorised per item (a `Put` is `PutItem`, an
//! `Update` `UpdateItem`, a `Delete` `DeleteItem`, a `ConditionCheck`
//! `ConditionCheckItem`), `TransactGetItems` as `GetItem`, every other
//! operation as itself. A shared audit write carries the functions of all
//! the calls whose items it writes. Outside `Db::serving` (a deployed
//! function, set-up, tests' own requests) nothing is recorded.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::sync::{Arc, Mutex};

use std::collections::HashMap;

use aws_sdk_dynamodb::operation::delete_item::DeleteItemInput;
use aws_sdk_dynamodb::operation::put_item::PutItemInput;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsInput;
use aws_sdk_dynamodb::operation::update_item::UpdateItemInput;
use aws_sdk_dynamodb::types::AttributeValue;
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
/// and for each write action (`PutItem`, `UpdateItem`, `DeleteItem`,
/// `ConditionCheckItem`) the partition keys of the items it wrote: a role
/// grants writes on the key prefixes its calls write only
/// (`dynamodb:LeadingKeys`).
#[derive(Debug, Default)]
pub struct Grants(Mutex<BTreeMap<&'static str, Seen>>);

/// What one function's requests needed.
#[derive(Debug, Default, Clone)]
pub struct Seen {
    /// The IAM actions (`dynamodb:GetItem`, ...), each with the partition
    /// keys of the items it wrote (none for a read).
    pub actions: BTreeMap<&'static str, BTreeSet<String>>,
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
        let requests = requests_of(operation, input);
        if let Ok(mut map) = self.0.lock() {
            for function in functions.iter() {
                let seen = map.entry(function).or_default();
                for (action, pk) in &requests {
                    let keys = seen.actions.entry(action).or_default();
                    keys.extend(pk.iter().cloned());
                }
            }
        }
    }
}

/// The partition key of an item or a key.
fn pk(item: &HashMap<String, AttributeValue>) -> Option<String> {
    item.get("pk").and_then(|v| v.as_s().ok()).cloned()
}

/// The IAM actions that authorise `operation` with `input`, each with the
/// partition key it writes (a write's; `None` for a read).
fn requests_of(operation: &str, input: &Input) -> Vec<(&'static str, Option<String>)> {
    if let Some(transaction) = input.downcast_ref::<TransactWriteItemsInput>() {
        return transaction
            .transact_items()
            .iter()
            .filter_map(|item| {
                if let Some(put) = item.put() {
                    Some(("dynamodb:PutItem", pk(put.item())))
                } else if let Some(update) = item.update() {
                    Some(("dynamodb:UpdateItem", pk(update.key())))
                } else if let Some(delete) = item.delete() {
                    Some(("dynamodb:DeleteItem", pk(delete.key())))
                } else {
                    item.condition_check()
                        .map(|check| ("dynamodb:ConditionCheckItem", pk(check.key())))
                }
            })
            .collect();
    }
    if let Some(put) = input.downcast_ref::<PutItemInput>() {
        return vec![("dynamodb:PutItem", put.item().and_then(pk))];
    }
    if let Some(update) = input.downcast_ref::<UpdateItemInput>() {
        return vec![("dynamodb:UpdateItem", update.key().and_then(pk))];
    }
    if let Some(delete) = input.downcast_ref::<DeleteItemInput>() {
        return vec![("dynamodb:DeleteItem", delete.key().and_then(pk))];
    }
    vec![(
        match operation {
            "TransactGetItems" | "GetItem" => "dynamodb:GetItem",
            "BatchGetItem" => "dynamodb:BatchGetItem",
            "Query" => "dynamodb:Query",
            "Scan" => "dynamodb:Scan",
            "TransactWriteItems" => "dynamodb:TransactWriteItems",
            "PutItem" => "dynamodb:PutItem",
            "UpdateItem" => "dynamodb:UpdateItem",
            "DeleteItem" => "dynamodb:DeleteItem",
            "BatchWriteItem" => "dynamodb:BatchWriteItem",
            "DescribeTable" => "dynamodb:DescribeTable",
            _ => "dynamodb:(an operation draftline does not use)",
        },
        None,
    )]
}
