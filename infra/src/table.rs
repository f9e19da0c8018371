//! The one DynamoDB table of draftline.
//!
//! `dynamodb/table.json` is written in the shape of the DynamoDB
//! `CreateTable` API (plus `TimeToLiveAttribute`). The CLI and the tests
//! create the table from it here; the CloudFormation template is checked
//! against it by the test suite, so the three can never drift apart.

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, GlobalSecondaryIndex, KeySchemaElement, KeyType, Projection, ProjectionType,
    ScalarAttributeType, StreamSpecification, StreamViewType, TimeToLiveSpecification,
};
use serde::Deserialize;

/// The raw text of the table definition.
pub const TABLE_JSON: &str = include_str!("../dynamodb/table.json");

/// The table definition, as `dynamodb/table.json` states it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct TableDefinition {
    /// Key attributes and their types.
    pub attribute_definitions: Vec<AttributeSpec>,
    /// The primary key.
    pub key_schema: Vec<KeySpec>,
    /// Always `PAY_PER_REQUEST` (on demand).
    pub billing_mode: String,
    /// Secondary indexes for the access patterns that need them.
    pub global_secondary_indexes: Vec<IndexSpec>,
    /// The attribute DynamoDB TTL expires items by.
    pub time_to_live_attribute: String,
    /// The table's stream: what the notify function reads.
    pub stream_specification: StreamSpec,
}

/// A table's stream.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct StreamSpec {
    /// Always on: the notify function's first attempt rides on it.
    pub stream_enabled: bool,
    /// `NEW_IMAGE`: a record carries the item as written, which is all
    /// the notify function reads.
    pub stream_view_type: String,
}

/// One attribute definition.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct AttributeSpec {
    pub attribute_name: String,
    /// `S`, `N` or `B`.
    pub attribute_type: String,
}

/// One element of a key schema.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct KeySpec {
    pub attribute_name: String,
    /// `HASH` or `RANGE`.
    pub key_type: String,
}

/// One global secondary index.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct IndexSpec {
    pub index_name: String,
    /// Its key.
    pub key_schema: Vec<KeySpec>,
    /// What it projects.
    pub projection: ProjectionSpec,
}

/// A projection.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct ProjectionSpec {
    /// `ALL`, `KEYS_ONLY` or `INCLUDE`.
    pub projection_type: String,
}

/// What can go wrong creating the table.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    /// The definition file does not parse or names an unknown type.
    #[error("infra/dynamodb/table.json is invalid: {0}")]
    Definition(String),
    /// DynamoDB refused the request.
    #[error("DynamoDB refused to create table {table}: {source}")]
    Create {
        /// The table name.
        table: String,
        /// The SDK error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl TableDefinition {
    /// The definition shipped with this build.
    pub fn shipped() -> Result<Self, TableError> {
        serde_json::from_str(TABLE_JSON).map_err(|e| TableError::Definition(e.to_string()))
    }
}

fn key_schema(specs: &[KeySpec]) -> Result<Vec<KeySchemaElement>, TableError> {
    specs
        .iter()
        .map(|k| {
            KeySchemaElement::builder()
                .attribute_name(&k.attribute_name)
                .key_type(KeyType::from(k.key_type.as_str()))
                .build()
                .map_err(|e| TableError::Definition(e.to_string()))
        })
        .collect()
}

/// Whether the table was made now or was already there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Created {
    /// The table was created by this call.
    New,
    /// The table already existed; nothing changed.
    AlreadyExisted,
}

/// Creates `table` from the shipped definition and turns on TTL. A table
/// that already exists is left as it is.
pub async fn create_table(client: &Client, table: &str) -> Result<Created, TableError> {
    let def = TableDefinition::shipped()?;
    let attributes = def
        .attribute_definitions
        .iter()
        .map(|a| {
            AttributeDefinition::builder()
                .attribute_name(&a.attribute_name)
                .attribute_type(ScalarAttributeType::from(a.attribute_type.as_str()))
                .build()
                .map_err(|e| TableError::Definition(e.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let indexes = def
        .global_secondary_indexes
        .iter()
        .map(|g| {
            GlobalSecondaryIndex::builder()
                .index_name(&g.index_name)
                .set_key_schema(Some(key_schema(&g.key_schema)?))
                .projection(
                    Projection::builder()
                        .projection_type(ProjectionType::from(g.projection.projection_type.as_str()))
                        .build(),
                )
                .build()
                .map_err(|e| TableError::Definition(e.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let created = client
        .create_table()
        .table_name(table)
        .set_attribute_definitions(Some(attributes))
        .set_key_schema(Some(key_schema(&def.key_schema)?))
        .billing_mode(BillingMode::from(def.billing_mode.as_str()))
        .set_global_secondary_indexes(Some(indexes))
        .stream_specification(
            StreamSpecification::builder()
                .stream_enabled(def.stream_specification.stream_enabled)
                .stream_view_type(StreamViewType::from(def.stream_specification.stream_view_type.as_str()))
                .build()
                .map_err(|e| TableError::Definition(e.to_string()))?,
        )
        .send()
        .await;
    match created {
        Ok(_) => {}
        Err(SdkError::ServiceError(e)) if e.err().is_resource_in_use_exception() => {
            return Ok(Created::AlreadyExisted);
        }
        Err(e) => {
            return Err(TableError::Create {
                table: table.to_owned(),
                source: Box::new(e),
            });
        }
    }
    wait_until_active(client, table).await?;
    client
        .update_time_to_live()
        .table_name(table)
        .time_to_live_specification(
            TimeToLiveSpecification::builder()
                .attribute_name(&def.time_to_live_attribute)
                .enabled(true)
                .build()
                .map_err(|e| TableError::Definition(e.to_string()))?,
        )
        .send()
        .await
        .map_err(|e| TableError::Create {
            table: table.to_owned(),
            source: Box::new(e),
        })?;
    Ok(Created::New)
}

async fn wait_until_active(client: &Client, table: &str) -> Result<(), TableError> {
    use aws_sdk_dynamodb::types::TableStatus;
    for _ in 0..120 {
        let described = client
            .describe_table()
            .table_name(table)
            .send()
            .await
            .map_err(|e| TableError::Create {
                table: table.to_owned(),
                source: Box::new(e),
            })?;
        if described.table().and_then(|t| t.table_status()) == Some(&TableStatus::Active) {
            return Ok(());
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    Err(TableError::Create {
        table: table.to_owned(),
        source: "the table did not become ACTIVE within 60 s".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_definition_parses_and_has_ttl_and_on_demand_billing() {
        let def = TableDefinition::shipped().unwrap();
        assert_eq!(def.billing_mode, "PAY_PER_REQUEST");
        assert_eq!(def.time_to_live_attribute, "expires_at");
        assert_eq!(def.key_schema[0].attribute_name, "pk");
        assert_eq!(def.key_schema[1].attribute_name, "sk");
        assert_eq!(
            def.stream_specification,
            StreamSpec {
                stream_enabled: true,
                stream_view_type: "NEW_IMAGE".to_owned()
            }
        );
    }
}
