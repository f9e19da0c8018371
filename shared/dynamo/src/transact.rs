//! One `TransactWriteItems` and the one reading of how it failed, for every
//! transaction draftline writes (a draft with its key record, a key's claim
//! or release, a person's decision). Outcomes are recognised by the SDK's
//! typed errors and the cancellation reasons' codes, never by message text.

use futures::FutureExt;

use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::TransactWriteItem;
use draftline_contract::store::{Cancelled, TransactFailure};

use crate::{Db, uncertain_write_error};

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
                    Some("ConditionalCheckFailed") => {
                        Cancelled::ConditionFailed(reason.item().and_then(crate::writes::attributes))
                    }
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
