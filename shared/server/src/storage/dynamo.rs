//! The [`Table`] on DynamoDB: each operation one request of
//! `draftline-dynamo`, the neutral items turned into the SDK's there.

use async_trait::async_trait;

use draftline_contract::error::ToolError;
use draftline_contract::store::{Attributes, Page, Query, TableKey, TransactFailure, Write, WriteSet};
use draftline_dynamo::{Db, writes};
use futures::FutureExt;

use super::{Refused, Table};

/// DynamoDB's table of one deployment.
#[derive(Debug, Clone)]
pub struct DynamoTable {
    db: Db,
}

impl DynamoTable {
    /// The table `db` names.
    pub fn new(db: Db) -> Self {
        Self { db }
    }

    /// The connection (the ERP backend and the review pages share it).
    pub fn db(&self) -> &Db {
        &self.db
    }
}

#[async_trait]
impl Table for DynamoTable {
    async fn get(&self, keys: Vec<TableKey>, failed: &str) -> Result<Vec<Attributes>, ToolError> {
        if let [key] = keys.as_slice() {
            let out = self
                .db
                .client()
                .get_item()
                .table_name(self.db.table())
                .set_key(Some(writes::key(key)))
                .consistent_read(true)
                .send()
                .boxed()
                .await
                .map_err(|e| draftline_dynamo::store_error(e, failed))?;
            return Ok(out.item.and_then(writes::into_attributes).into_iter().collect());
        }
        let keys = keys.iter().map(writes::key).collect();
        let found = self.db.batch_get(keys).await.map_err(|e| e.into_tool_error(failed))?;
        Ok(found.into_iter().filter_map(writes::into_attributes).collect())
    }

    async fn transact(&self, writes: Vec<Write>, token: &str, failed: &str) -> Result<(), TransactFailure> {
        let items = writes::transact_items(&self.db, WriteSet(writes)).map_err(TransactFailure::Failed)?;
        draftline_dynamo::transact(&self.db, items, token, failed).await
    }

    async fn write(&self, write: Write, failed: &str) -> Result<Result<(), Refused>, ToolError> {
        writes::write_one(&self.db, write, failed).await
    }

    async fn query(&self, query: &Query, failed: &str) -> Result<Page, ToolError> {
        draftline_dynamo::query::query(&self.db, query, failed).await
    }

    async fn append(&self, item: Attributes, failed: &'static str) -> Result<(), ToolError> {
        self.db.append(writes::into_item(item), failed).await
    }
}
