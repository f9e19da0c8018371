//! One `TransactWriteItems` and the one reading of how it failed, for every
//! transaction draftline writes (a draft with its key record, a key's claim
//! or release, a person's decision). Outcomes are recognised by the SDK's
//! typed errors and the cancellation reasons' codes, never by message text.

use futures::FutureExt;
use std::collections::HashMap;

use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem};
use draftline_contract::ToolError;

use crate::{Db, uncertain_write_error};

/// Why DynamoDB cancelled one item of a transaction.
#[derive(Debug, Clone, PartialEq)]
pub enum Cancelled {
    /// The item was fine; another one cancelled the transaction.
    Fine,
    /// Its condition failed; the item as stored, when the put asked for it
    /// (`ReturnValuesOnConditionCheckFailure = ALL_OLD`).
    ConditionFailed(Option<HashMap<String, AttributeValue>>),
    /// Another transaction was writing it at the same moment.
    Conflict,
    /// Throttling or capacity: nothing was applied.
    Other(String),
}

/// Why a transaction did not commit. Nothing of it was applied, except
/// with [`TransactFailure::Failed`] of an uncertain outcome.
#[derive(Debug)]
pub enum TransactFailure {
    /// DynamoDB cancelled it: one reason per item, in the items' order.
    Cancelled(Vec<Cancelled>),
    /// Another transaction held an item, or the request token was used for
    /// other items: nothing was applied.
    InProgress,
    /// DynamoDB failed; the error says whether the write may have applied.
    Failed(ToolError),
}

impl TransactFailure {
    /// The reason of item `index`, when the transaction was cancelled.
    pub fn reason(&self, index: usize) -> Option<&Cancelled> {
        match self {
            Self::Cancelled(reasons) => reasons.get(index),
            _ => None,
        }
    }

    /// Whether an item's condition failed or another transaction touched
    /// it: the transaction lost a race and may be prepared again.
    pub fn lost_a_race(&self) -> bool {
        match self {
            Self::Cancelled(reasons) => reasons
                .iter()
                .any(|r| matches!(r, Cancelled::ConditionFailed(_) | Cancelled::Conflict)),
            Self::InProgress => true,
            Self::Failed(_) => false,
        }
    }
}

/// Writes `items` in one transaction with `token` as its
/// `ClientRequestToken` (the SDK's own retries of it are then idempotent).
/// `what_did_not_happen` is the sentence a failure tells the model.
pub async fn transact(
    db: &Db,
    items: Vec<TransactWriteItem>,
    token: &str,
    what_did_not_happen: &str,
) -> Result<(), TransactFailure> {
    let result = db
        .client()
        .transact_write_items()
        .set_transact_items(Some(items))
        .client_request_token(token)
        .send()
        .boxed()
        .await;
    let service = match result {
        Ok(_) => return Ok(()),
        Err(SdkError::ServiceError(service)) => service,
        Err(other) => {
            return Err(TransactFailure::Failed(uncertain_write_error(
                other,
                what_did_not_happen,
            )));
        }
    };
    match service.err() {
        TransactWriteItemsError::TransactionCanceledException(cancelled) => Err(TransactFailure::Cancelled(
            cancelled
                .cancellation_reasons()
                .iter()
                .map(|reason| match reason.code() {
                    None | Some("None") => Cancelled::Fine,
                    Some("ConditionalCheckFailed") => Cancelled::ConditionFailed(reason.item().cloned()),
                    Some("TransactionConflict") => Cancelled::Conflict,
                    Some(other) => Cancelled::Other(other.to_owned()),
                })
                .collect(),
        )),
        TransactWriteItemsError::TransactionInProgressException(_)
        | TransactWriteItemsError::IdempotentParameterMismatchException(_) => Err(TransactFailure::InProgress),
        _ => Err(TransactFailure::Failed(uncertain_write_error(
            SdkError::ServiceError(service),
            what_did_not_happen,
        ))),
    }
}

/// The error of a transaction cancelled for throttling or capacity: nothing
/// was applied, retry.
pub fn cancelled_error(reasons: &[Cancelled], what_did_not_happen: &str) -> ToolError {
    let codes: Vec<&str> = reasons
        .iter()
        .map(|reason| match reason {
            Cancelled::Fine => "None",
            Cancelled::ConditionFailed(_) => "ConditionalCheckFailed",
            Cancelled::Conflict => "TransactionConflict",
            Cancelled::Other(code) => code,
        })
        .collect();
    ToolError::dependency(format!("transaction cancelled: {codes:?}"), what_did_not_happen)
}
