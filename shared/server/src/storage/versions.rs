//! A tenant's document kept in versions (its agent policy, its
//! notification settings): one current item and one item per version,
//! written together.
//!
//! - `pk = <partition>`, `sk = CURRENT`: the document in force (`version`,
//!   `document` as JSON text, `updated_at`, `updated_by`);
//! - `pk = <partition>`, `sk = V#<version, 10 digits>`: every version ever
//!   set, so a version named elsewhere can be read back.
//!
//! A set is one `TransactWriteItems`: the current item under the condition
//! that its version is the one the change was made from, and the new
//! version's item under `attribute_not_exists`: two concurrent sets cannot
//! both win, and a version number is never given twice.

use chrono::{DateTime, SecondsFormat, Utc};

use super::Table;
use draftline_contract::error::ToolError;
use draftline_contract::store::{
    Attributes, Cancelled, Condition, Query, TableKey, TransactFailure, Value, Write, cancelled_error,
};

/// The sort key of the document in force.
const CURRENT_SK: &str = "CURRENT";

/// Why a set did not change anything.
#[derive(Debug)]
pub enum SetFailure {
    /// The stored document is not the version the change was made from.
    Moved {
        /// The version stored now (0: none).
        stored: u64,
    },
    /// The store failed.
    Store(ToolError),
}

/// One version of a document, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    /// 1 for the first set, one more for each set after it.
    pub number: u64,
    /// The document, as JSON text (its own `version` field is `number`).
    pub document: String,
    /// When it was set (RFC 3339, UTC).
    pub updated_at: String,
    /// Who set it.
    pub updated_by: String,
}

/// What a set expects to replace.
#[derive(Debug, Clone, Copy)]
enum Based {
    /// No document.
    Nothing,
    /// The document of this version.
    Version(u64),
    /// A current item that says no version (written by hand).
    Unversioned,
}

/// One tenant's versioned document of one kind.
#[derive(Debug, Clone)]
pub struct Versions<'a> {
    table: &'a dyn Table,
    partition: String,
    /// The `kind` of the current item; its versions' is `<kind>_version`.
    kind: &'static str,
    /// What a failure says did not happen ("The policy was not changed.").
    unchanged: &'static str,
}

/// The key of the document in force in `partition`.
pub fn current_key(partition: &str) -> TableKey {
    TableKey {
        pk: partition.to_owned(),
        sk: CURRENT_SK.to_owned(),
    }
}

/// The version a document item says it is.
pub fn version_of(item: &Attributes) -> Option<u64> {
    item.get("version").and_then(Value::as_n).and_then(|n| n.parse().ok())
}

impl<'a> Versions<'a> {
    /// The `kind` documents in `partition` of `table`; a failed set says
    /// `unchanged`.
    pub fn new(table: &'a dyn Table, partition: String, kind: &'static str, unchanged: &'static str) -> Self {
        Self {
            table,
            partition,
            kind,
            unchanged,
        }
    }

    /// The current item, if any (one strongly consistent `GetItem`).
    pub async fn current(&self) -> Result<Option<Attributes>, ToolError> {
        let mut found = self
            .table
            .get(vec![current_key(&self.partition)], "Nothing was read.")
            .await?;
        Ok(found.pop())
    }

    /// Stores the next version, if the stored one is still `based_on`
    /// (none stored counts as 0; `None` overwrites whatever is stored,
    /// even an item that cannot be read). `document(n)` is the document as
    /// version `n`. Returns what was stored.
    pub async fn set(
        &self,
        based_on: Option<u64>,
        document: impl FnOnce(u64) -> Result<String, ToolError>,
        by: &str,
        now: DateTime<Utc>,
    ) -> Result<Version, SetFailure> {
        // With none in force, the new version still comes after the last
        // of the history: a current item removed by hand leaves its
        // versions, and a version number is never given twice.
        let (stored_now, based) = match based_on {
            Some(0) => (self.last().await?, Based::Nothing),
            Some(version) => (version, Based::Version(version)),
            None => match self.current().await.map_err(SetFailure::Store)? {
                None => (self.last().await?, Based::Nothing),
                Some(item) => match version_of(&item) {
                    Some(version) => (version, Based::Version(version)),
                    None => (self.last().await?, Based::Unversioned),
                },
            },
        };
        let number = stored_now.saturating_add(1);
        let version = Version {
            number,
            document: document(number).map_err(SetFailure::Store)?,
            updated_at: now.to_rfc3339_opts(SecondsFormat::Millis, true),
            updated_by: by.to_owned(),
        };
        let writes = self.put_items(&version, based).map_err(SetFailure::Store)?;
        // A token of its own per set (26 characters, within the 36 allowed).
        let token = ulid::Ulid::new().to_string();
        match self.table.transact(writes, &token, self.unchanged).await {
            Ok(()) => Ok(version),
            Err(TransactFailure::Cancelled(reasons))
                if reasons.iter().any(|r| matches!(r, Cancelled::ConditionFailed(_))) =>
            {
                let stored = match reasons.first() {
                    Some(Cancelled::ConditionFailed(Some(item))) => version_of(item),
                    Some(Cancelled::ConditionFailed(None)) => Some(0),
                    _ => None,
                };
                Err(SetFailure::Moved {
                    stored: stored.unwrap_or(number),
                })
            }
            Err(TransactFailure::Cancelled(reasons)) => {
                Err(SetFailure::Store(cancelled_error(&reasons, self.unchanged)))
            }
            Err(TransactFailure::InProgress) => Err(SetFailure::Moved { stored: number }),
            Err(TransactFailure::Failed(err)) => Err(SetFailure::Store(err)),
        }
    }

    /// Stores `document` as version 1 unless one is stored: a seed, which
    /// never replaces one a person set. Two conditional puts (the version,
    /// then the current item), so instances seeding at once cannot both
    /// win and nothing is overwritten. Returns whether it was stored.
    pub async fn seed(&self, document: String, by: &str, now: DateTime<Utc>) -> Result<bool, ToolError> {
        let version = Version {
            number: 1,
            document,
            updated_at: now.to_rfc3339_opts(SecondsFormat::Millis, true),
            updated_by: by.to_owned(),
        };
        let [current, history] = self.items(&version)?;
        for item in [history, current] {
            if self.table.write(Write::PutNew(item), self.unchanged).await?.is_err() {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The last version in the history (0 when there is none): one
    /// `Query`, newest first.
    async fn last(&self) -> Result<u64, SetFailure> {
        let newest = Query {
            sk_prefix: Some("V#".to_owned()),
            newest_first: true,
            limit: Some(1),
            consistent: true,
            ..Query::partition(self.partition.as_str())
        };
        let found = self.table.query(&newest, self.unchanged).await;
        Ok(found
            .map_err(SetFailure::Store)?
            .items
            .first()
            .and_then(version_of)
            .unwrap_or(0))
    }

    /// The current item and the version's item of `version`.
    fn items(&self, version: &Version) -> Result<[Attributes; 2], ToolError> {
        let number = i64::try_from(version.number).map_err(ToolError::internal)?;
        let item = |sk: String, kind: String| {
            Attributes::from([
                ("pk".to_owned(), Value::s(&self.partition)),
                ("sk".to_owned(), Value::S(sk)),
                ("kind".to_owned(), Value::S(kind)),
                ("version".to_owned(), Value::n(number)),
                ("document".to_owned(), Value::s(&version.document)),
                ("updated_at".to_owned(), Value::s(&version.updated_at)),
                ("updated_by".to_owned(), Value::s(&version.updated_by)),
            ])
        };
        Ok([
            item(CURRENT_SK.to_owned(), self.kind.to_owned()),
            item(format!("V#{:010}", version.number), format!("{}_version", self.kind)),
        ])
    }

    fn put_items(&self, version: &Version, based: Based) -> Result<Vec<Write>, ToolError> {
        let [current, history] = self.items(version)?;
        let condition = match based {
            Based::Nothing => Condition::Absent("pk".to_owned()),
            Based::Version(version) => {
                let version = i64::try_from(version).map_err(ToolError::internal)?;
                Condition::Equals("version".to_owned(), Value::n(version))
            }
            // One written by hand without a version: it cannot be read,
            // and a set replaces it.
            Based::Unversioned => Condition::All(vec![
                Condition::Exists("pk".to_owned()),
                Condition::Absent("version".to_owned()),
            ]),
        };
        Ok(vec![Write::PutIf(current, Some(condition)), Write::PutNew(history)])
    }
}
