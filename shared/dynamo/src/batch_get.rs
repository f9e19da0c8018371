//! Reading keys together: `BatchGetItem`, strongly consistent, with the keys
//! DynamoDB leaves unprocessed (under throttling) asked for again. The key
//! lookup of a draft (with the tenant's policy), the examiner's counters and
//! the built-in ERP's reads all go through [`Db::batch_get`].

use futures::FutureExt;
use std::collections::HashMap;

use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::operation::batch_get_item::BatchGetItemError;
use aws_sdk_dynamodb::types::{AttributeValue, KeysAndAttributes};
use draftline_contract::{ErpError, ToolError};

use crate::{Db, HttpResponse, erp_store_error, store_error};

/// An item, or a key, of the table.
pub type Item = HashMap<String, AttributeValue>;

/// The most keys one `BatchGetItem` carries (DynamoDB's limit).
const MAX_KEYS: usize = 100;

/// How many times keys left unprocessed are asked for before the read
/// gives up (each time is one more request).
const MAX_ROUNDS: u32 = 5;

/// Why a batch read failed.
#[derive(Debug)]
pub enum BatchGetFailure {
    /// The request failed (after the SDK's own retries).
    Store(Box<SdkError<BatchGetItemError, HttpResponse>>),
    /// DynamoDB left keys unprocessed [`MAX_ROUNDS`] times.
    Unprocessed,
    /// The request could not be built (a bug).
    Invalid(aws_sdk_dynamodb::error::BuildError),
}

impl BatchGetFailure {
    /// The contract's error for a caller, with what did not happen.
    pub fn into_tool_error(self, what_did_not_happen: &str) -> ToolError {
        match self {
            Self::Store(err) => store_error(*err, what_did_not_happen),
            Self::Unprocessed => ToolError::dependency("BatchGetItem left keys unprocessed", what_did_not_happen),
            Self::Invalid(err) => ToolError::internal(err),
        }
    }

    /// The port's error, for a backend keeping the ERP's data in this table.
    pub fn into_erp_error(self) -> ErpError {
        match self {
            Self::Store(err) => erp_store_error(*err),
            Self::Unprocessed => ErpError::StoreUnavailable("BatchGetItem left keys unprocessed 5 times".into()),
            Self::Invalid(err) => ErpError::internal(err),
        }
    }
}

impl Db {
    /// The items at `keys` that exist, in no particular order: one
    /// strongly consistent `BatchGetItem` per 100 keys, and again only for
    /// keys DynamoDB left unprocessed (at most [`MAX_ROUNDS`] times).
    pub async fn batch_get(&self, keys: Vec<Item>) -> Result<Vec<Item>, BatchGetFailure> {
        let mut found = Vec::with_capacity(keys.len());
        for chunk in keys.chunks(MAX_KEYS) {
            let mut pending = Some(
                KeysAndAttributes::builder()
                    .set_keys(Some(chunk.to_vec()))
                    .consistent_read(true)
                    .build()
                    .map_err(BatchGetFailure::Invalid)?,
            );
            let mut rounds: u32 = 0;
            while let Some(request) = pending.take() {
                rounds = rounds.saturating_add(1);
                if rounds > MAX_ROUNDS {
                    return Err(BatchGetFailure::Unprocessed);
                }
                let out = self
                    .client()
                    .batch_get_item()
                    .request_items(self.table(), request)
                    .send()
                    .boxed()
                    .await
                    .map_err(|err| BatchGetFailure::Store(Box::new(err)))?;
                if let Some(items) = out.responses().and_then(|r| r.get(self.table())) {
                    found.extend(items.iter().cloned());
                }
                pending = out
                    .unprocessed_keys()
                    .and_then(|u| u.get(self.table()))
                    .filter(|k| !k.keys().is_empty())
                    .cloned();
            }
        }
        Ok(found)
    }
}

/// Whether `item` is the item at `key` (same `pk` and `sk`).
pub fn same_key(item: &Item, key: &Item) -> bool {
    item.get("pk") == key.get("pk") && item.get("sk") == key.get("sk")
}
