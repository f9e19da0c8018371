//! The seam between the pipeline and the table it keeps its key records,
//! audit items, limit counters and policies in: [`Table`], five operations
//! on store-neutral items ([`draftline_contract::store`]). Everything above
//! it builds and reads neutral attributes and writes; only its adapters
//! speak to a store:
//!
//! - [`DynamoTable`]: DynamoDB through `draftline-dynamo` (the embedded
//!   engine locally, AWS in production);
//! - [`MemoryTable`]: a map under a lock, applying the same writes and
//!   conditions ([`Write::apply`]), for the pipeline's unit tests.
//!
//! Typed records map to neutral attributes with `serde_dynamo`
//! ([`mapped`]).

mod dynamo;
pub mod mapped;
mod memory;
pub mod versions;

use async_trait::async_trait;

use draftline_contract::error::ToolError;
use draftline_contract::store::{Attributes, Page, Query, TableKey, TransactFailure, Write};

pub use dynamo::DynamoTable;
pub use memory::MemoryTable;

/// A write on its own whose condition failed, with the item as stored
/// (`None`: no item, or the store did not say).
pub type Refused = Option<Attributes>;

/// Where the pipeline keeps what it writes: one table of items, each at a
/// [`TableKey`].
#[async_trait]
pub trait Table: Send + Sync + std::fmt::Debug {
    /// The items at `keys` that exist, in no particular order, read
    /// strongly consistent in one request (one key: a `GetItem`; more: a
    /// `BatchGetItem`). `failed` is what a failure tells the caller did
    /// not happen.
    async fn get(&self, keys: Vec<TableKey>, failed: &str) -> Result<Vec<Attributes>, ToolError>;

    /// `writes` in one transaction, all or none; `token` names the attempt,
    /// so a store's own retries of it are idempotent. A cancellation gives
    /// one reason per write, in order.
    async fn transact(&self, writes: Vec<Write>, token: &str, failed: &str) -> Result<(), TransactFailure>;

    /// One write on its own. `Ok(Err(stored))`: its condition failed.
    async fn write(&self, write: Write, failed: &str) -> Result<Result<(), Refused>, ToolError>;

    /// One page of the items `query` names, in one request.
    async fn query(&self, query: &Query, failed: &str) -> Result<Page, ToolError>;

    /// An item that must be new (an audit item), stored before it returns;
    /// items appended at the same moment may share one request.
    async fn append(&self, item: Attributes, failed: &'static str) -> Result<(), ToolError>;
}
