//! The per-caller budget behind `429 RATE_LIMITED` (opt-in with
//! `DRAFTLINE_RATE_LIMIT_PER_MINUTE`).
//!
//! A fixed one-minute window per tenant and user, counted in DynamoDB so the
//! budget holds across every instance of every function: one conditional
//! `UpdateItem` (`ADD calls 1` while `calls < limit`) per call, an item that
//! TTL removes two minutes later. A runaway agent loop is stopped at the
//! tool surface with a message it can act on, and nothing is read or written
//! for the refused call but its audit item.

use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::types::AttributeValue;
use chrono::{DateTime, Utc};

use draftline_contract::error::ToolError;
use draftline_contract::identity::Caller;
use draftline_dynamo::{Db, store_error};

/// Spends one call of `caller`'s budget for the minute of `now`, or refuses.
pub async fn spend(db: &Db, caller: &Caller, now: DateTime<Utc>, limit: u32) -> Result<(), ToolError> {
    let minute = now.timestamp().div_euclid(60);
    let result = db
        .client()
        .update_item()
        .table_name(db.table())
        .key(
            "pk",
            AttributeValue::S(format!("T#{}#BUDGET#{}", caller.tenant(), caller.user())),
        )
        .key("sk", AttributeValue::S(format!("MINUTE#{minute}")))
        .update_expression("ADD calls :one SET expires_at = :expires, kind = :kind")
        .condition_expression("attribute_not_exists(calls) OR calls < :limit")
        .expression_attribute_values(":one", AttributeValue::N("1".into()))
        .expression_attribute_values(":limit", AttributeValue::N(limit.to_string()))
        .expression_attribute_values(":expires", AttributeValue::N(((minute + 2) * 60).to_string()))
        .expression_attribute_values(":kind", AttributeValue::S("budget".into()))
        .send()
        .await;
    match result {
        Ok(_) => Ok(()),
        Err(SdkError::ServiceError(service)) if service.err().is_conditional_check_failed_exception() => {
            let retry_after = (60 - now.timestamp().rem_euclid(60)).max(1) as u64;
            Err(ToolError::RateLimited {
                message: format!(
                    "You have used your budget of {limit} tool calls per minute. Nothing was read or written. \
                     Wait {retry_after} second(s), then retry the same call; if you are looping, stop and tell the \
                     person you act for what you were trying to do."
                ),
                retry_after_seconds: retry_after,
            })
        }
        Err(other) => Err(store_error(other, "Nothing was read or written.")),
    }
}
