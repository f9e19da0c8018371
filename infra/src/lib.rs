//! The infrastructure draftline runs on, defined once.
//!
//! - [`table`]: the DynamoDB table definition (`dynamodb/table.json`, the one
//!   source the CLI, the tests and the deployment template share) and the
//!   code that creates it through `aws-sdk-dynamodb`.
//! - [`embedded`]: the embedded DynamoDB-compatible engine (`dynoxide-rs`) on a
//!   loopback port, for the local server and the tests.
//! - [`template`]: the deployment template as CloudFormation sees it (its
//!   loops expanded), each function with its role's grants and its tier.

pub mod embedded;
pub mod table;
pub mod template;

pub use embedded::EmbeddedDynamo;
pub use table::{TableDefinition, create_table};
