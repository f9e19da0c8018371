//! The tenant's policy in the table: one current item and one item per
//! version, written together.
//!
//! - `pk = T#<tenant>#POLICY`, `sk = CURRENT`: the policy in force
//!   (`version`, `document` as JSON text, `updated_at`, `updated_by`);
//! - `pk = T#<tenant>#POLICY`, `sk = V#<version, 10 digits>`: every version
//!   ever set, so the version an audit item names can be read back.
//!
//! A set is one `TransactWriteItems`: the current item under the condition
//! that its version is the one the change was made from, and the new
//! version's item under `attribute_not_exists`: two concurrent sets cannot
//! both win, and a version number is never given twice.

use std::sync::Arc;

use chrono::{DateTime, SecondsFormat, Utc};

use crate::storage::Table;
use draftline_contract::error::ToolError;
use draftline_contract::identity::{BranchId, TenantId};
use draftline_contract::policy::{Applied, Policy};
use draftline_contract::store::{
    Attributes, Cancelled, Condition, Query, TableKey, TransactFailure, Value, Write, cancelled_error,
};

/// The sort key of the policy in force.
const CURRENT_SK: &str = "CURRENT";

/// A policy as stored: the document with its version.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredPolicy {
    /// 1 for the first policy set, one more for each set after it.
    pub version: u64,
    /// The document (its `version` field is this version).
    pub policy: Policy,
    /// When it was set (RFC 3339, UTC).
    pub updated_at: String,
    /// Who set it (`draftline policy set` names the operator).
    pub updated_by: String,
    /// What it holds each branch's agents to, applied once.
    applying: Applying,
}

/// A stored policy applied to each branch it names and to every other:
/// done once, when it is read or set, so that a call under it (every draft
/// of the tenant, while the instance's copy is fresh) applies nothing and
/// shares one [`Applied`].
#[derive(Debug, Clone, PartialEq)]
struct Applying {
    named: Vec<(String, Arc<Applied>)>,
    other: Arc<Applied>,
}

/// Why a set did not change anything.
#[derive(Debug)]
pub enum SetFailure {
    /// The stored policy is not the version the change was made from.
    Moved {
        /// The version stored now (0: none).
        stored: u64,
    },
    /// DynamoDB failed.
    Store(ToolError),
}

/// The partition of `tenant`'s policy.
pub fn partition(tenant: &TenantId) -> String {
    format!("T#{tenant}#POLICY")
}

/// The key of `tenant`'s policy in force (read with the key record, [`super::PolicyCache`]).
pub fn current_key(tenant: &TenantId) -> TableKey {
    TableKey {
        pk: partition(tenant),
        sk: CURRENT_SK.to_owned(),
    }
}

impl StoredPolicy {
    /// `policy` stored as `version`, set at `updated_at` by `updated_by`.
    pub fn new(version: u64, policy: Policy, updated_at: String, updated_by: String) -> Self {
        let (named, other) = policy.applying_to_each(version);
        let applying = Applying {
            named: named
                .into_iter()
                .map(|(branch, applied)| (branch, Arc::new(applied)))
                .collect(),
            other: Arc::new(other),
        };
        Self {
            version,
            policy,
            updated_at,
            updated_by,
            applying,
        }
    }

    /// The limits it sets for the agents of `branch`: the one place a
    /// policy is applied to a caller (the draft, a read's rate, the
    /// examiner).
    pub fn applied_to(&self, branch: &BranchId) -> Arc<Applied> {
        let applying = &self.applying;
        let named = applying.named.iter().find(|(id, _)| id == branch.as_str());
        Arc::clone(named.map_or(&applying.other, |(_, applied)| applied))
    }

    fn attributes(&self, sk: String, kind: &str, tenant: &TenantId) -> Result<Attributes, ToolError> {
        let document = serde_json::to_string(&self.policy).map_err(ToolError::internal)?;
        let version = i64::try_from(self.version).map_err(ToolError::internal)?;
        Ok(Attributes::from([
            ("pk".to_owned(), Value::S(partition(tenant))),
            ("sk".to_owned(), Value::S(sk)),
            ("kind".to_owned(), Value::s(kind)),
            ("version".to_owned(), Value::n(version)),
            ("document".to_owned(), Value::S(document)),
            ("updated_at".to_owned(), Value::s(&self.updated_at)),
            ("updated_by".to_owned(), Value::s(&self.updated_by)),
        ]))
    }

    /// The stored policy of a policy item, or why it cannot be read (a
    /// document written into the table by hand, or by a newer draftline).
    pub fn from_item(item: &Attributes) -> Result<Self, Unreadable> {
        let s = |name: &str| item.get(name).and_then(Value::as_s).map(str::to_owned);
        let version = version_of(item);
        let unreadable = |problem: String| Unreadable { version, problem };
        let Some(version) = version else {
            return Err(unreadable("the item has no version".to_owned()));
        };
        let Some(document) = s("document") else {
            return Err(unreadable("the item has no document".to_owned()));
        };
        match Policy::parse(document.as_bytes()) {
            Ok(policy) => Ok(Self::new(
                version,
                policy,
                s("updated_at").unwrap_or_default(),
                s("updated_by").unwrap_or_default(),
            )),
            Err(issues) => {
                let mut problem = issues
                    .first()
                    .map(|issue| {
                        let path = if issue.path.is_empty() {
                            "the document"
                        } else {
                            &issue.path
                        };
                        format!("{path}: {}", issue.message)
                    })
                    .unwrap_or_else(|| "the document does not parse".to_owned());
                if issues.len() > 1 {
                    problem.push_str(&format!(" (and {} more)", issues.len() - 1));
                }
                Err(unreadable(problem))
            }
        }
    }
}

/// A stored policy that cannot be read. Drafts of its tenant fail closed:
/// they are refused until a valid policy is set again, since no one can
/// tell which limits should hold them. Reads are not blocked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    /// The version the item says it is, if it says.
    pub version: Option<u64>,
    /// What is wrong with it (the first problem, and how many more).
    pub problem: String,
}

impl Unreadable {
    /// The refusal of a draft held to it: retryable after
    /// `retry_after_seconds` (the cache bound: an operator's fix applies
    /// within it), naming the problem.
    pub fn refusal(&self, retry_after_seconds: u64) -> ToolError {
        let version = self.version.map_or_else(String::new, |v| format!(" (version {v})"));
        ToolError::DependencyUnavailable {
            message: format!(
                "The tenant's policy for its agents{version} is stored but cannot be read: {problem}. No draft was \
                 created: drafts are refused while the limits that hold them are unknown. Retry this same call in \
                 {retry_after_seconds} seconds; if it is refused again, tell the person you act for that an \
                 operator must set the policy again (draftline policy set).",
                problem = self.problem,
            ),
            retry_after_seconds,
            cause: None,
            may_have_written: false,
        }
    }
}

/// A tenant's policy as the table holds it.
#[derive(Debug, Clone, Default)]
pub enum InForce {
    /// None: no limits hold its agents.
    #[default]
    Nothing,
    /// The policy in force.
    Policy(Arc<StoredPolicy>),
    /// One is stored that cannot be read: drafts fail closed.
    Unreadable(Arc<Unreadable>),
}

impl InForce {
    /// What the policy item `item` holds (`None`: the tenant has none).
    pub fn of(item: Option<&Attributes>) -> Self {
        match item.map(StoredPolicy::from_item) {
            None => Self::Nothing,
            Some(Ok(stored)) => Self::Policy(Arc::new(stored)),
            Some(Err(unreadable)) => {
                tracing::error!(
                    version = unreadable.version,
                    problem = %unreadable.problem,
                    "the stored policy cannot be read; drafts are refused until it is set again"
                );
                Self::Unreadable(Arc::new(unreadable))
            }
        }
    }

    /// The limits a draft by an agent of `branch` is held to, or (a policy
    /// that cannot be read) its refusal, retryable after
    /// `retry_after_seconds`.
    pub fn for_draft(&self, branch: &BranchId, retry_after_seconds: u64) -> Result<Option<Arc<Applied>>, ToolError> {
        match self {
            Self::Nothing => Ok(None),
            Self::Policy(stored) => Ok(Some(stored.applied_to(branch))),
            Self::Unreadable(unreadable) => Err(unreadable.refusal(retry_after_seconds)),
        }
    }

    /// The limits a read of `branch` is held to (its rate): a policy that
    /// cannot be read sets none, so that no read is blocked by it.
    pub fn for_read(&self, branch: &BranchId) -> Option<Arc<Applied>> {
        match self {
            Self::Policy(stored) => Some(stored.applied_to(branch)),
            Self::Nothing | Self::Unreadable(_) => None,
        }
    }
}

/// What a `set` expects to replace.
#[derive(Debug, Clone, Copy)]
enum Based {
    /// No policy.
    Nothing,
    /// The policy of this version.
    Version(u64),
    /// A policy item that says no version.
    Unversioned,
}

/// Reads and writes one tenant's policy.
#[derive(Debug, Clone, Copy)]
pub struct PolicyStore<'a> {
    table: &'a dyn Table,
    tenant: &'a TenantId,
}

impl<'a> PolicyStore<'a> {
    /// The store of `tenant`'s policy.
    pub fn new(table: &'a dyn Table, tenant: &'a TenantId) -> Self {
        Self { table, tenant }
    }

    /// The policy in force, or that none is, or that the one stored cannot
    /// be read (one strongly consistent `GetItem`).
    pub async fn in_force(&self) -> Result<InForce, ToolError> {
        let found = self
            .table
            .get(vec![current_key(self.tenant)], "Nothing was read.")
            .await?;
        Ok(InForce::of(found.first()))
    }

    /// Stores `policy` as the next version, if the stored one is still
    /// `policy.version` (none stored counts as 0; `None` overwrites
    /// whatever is stored). Returns what was stored.
    pub async fn set(&self, policy: &Policy, by: &str, now: DateTime<Utc>) -> Result<StoredPolicy, SetFailure> {
        // With none in force, the new version still comes after the last
        // of the history: a current item removed by hand leaves its
        // versions, and a version number is never given twice.
        let (stored_now, based_on) = match policy.version {
            Some(0) => (self.last_version().await?, Based::Nothing),
            Some(based_on) => (based_on, Based::Version(based_on)),
            // One that cannot be read is overwritten, its version kept (one
            // that says none: after the last version of the history).
            None => match self.in_force().await.map_err(SetFailure::Store)? {
                InForce::Nothing => (self.last_version().await?, Based::Nothing),
                InForce::Policy(stored) => (stored.version, Based::Version(stored.version)),
                InForce::Unreadable(unreadable) => match unreadable.version {
                    Some(version) => (version, Based::Version(version)),
                    None => (self.last_version().await?, Based::Unversioned),
                },
            },
        };
        let next = stored_now.saturating_add(1);
        let stored = StoredPolicy::new(
            next,
            Policy {
                version: Some(next),
                ..policy.clone()
            },
            now.to_rfc3339_opts(SecondsFormat::Millis, true),
            by.to_owned(),
        );
        let writes = self.put_items(&stored, based_on).map_err(SetFailure::Store)?;
        // A token of its own per set (26 characters, within the 36 allowed).
        let token = ulid::Ulid::new().to_string();
        match self.table.transact(writes, &token, "The policy was not changed.").await {
            Ok(()) => Ok(stored),
            Err(TransactFailure::Cancelled(reasons))
                if reasons.iter().any(|r| matches!(r, Cancelled::ConditionFailed(_))) =>
            {
                let stored = match reasons.first() {
                    Some(Cancelled::ConditionFailed(Some(item))) => version_of(item),
                    Some(Cancelled::ConditionFailed(None)) => Some(0),
                    _ => None,
                };
                Err(SetFailure::Moved {
                    stored: stored.unwrap_or(next),
                })
            }
            Err(TransactFailure::Cancelled(reasons)) => Err(SetFailure::Store(cancelled_error(
                &reasons,
                "The policy was not changed.",
            ))),
            Err(TransactFailure::InProgress) => Err(SetFailure::Moved { stored: next }),
            Err(TransactFailure::Failed(err)) => Err(SetFailure::Store(err)),
        }
    }

    /// Stores `policy` as version 1 unless the tenant has a policy: the
    /// demo seed's write, which never replaces one a person set. Two
    /// conditional puts (the version, then the policy in force), so
    /// instances seeding at once cannot both win and nothing is overwritten.
    /// Returns whether it was stored.
    pub async fn seed(&self, policy: &Policy, by: &str, now: DateTime<Utc>) -> Result<bool, ToolError> {
        let stored = StoredPolicy::new(
            1,
            Policy {
                version: Some(1),
                ..policy.clone()
            },
            now.to_rfc3339_opts(SecondsFormat::Millis, true),
            by.to_owned(),
        );
        for (sk, kind) in [
            (format!("V#{:010}", 1), "policy_version"),
            (CURRENT_SK.to_owned(), "policy"),
        ] {
            let put = Write::PutNew(stored.attributes(sk, kind, self.tenant)?);
            if self.table.write(put, "The policy was not seeded.").await?.is_err() {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The last version in the tenant's history (0 when it has none): one
    /// `Query`, newest first.
    async fn last_version(&self) -> Result<u64, SetFailure> {
        let newest = Query {
            sk_prefix: Some("V#".to_owned()),
            newest_first: true,
            limit: Some(1),
            consistent: true,
            ..Query::partition(partition(self.tenant))
        };
        let found = self.table.query(&newest, "The policy was not changed.").await;
        Ok(found
            .map_err(SetFailure::Store)?
            .items
            .first()
            .and_then(version_of)
            .unwrap_or(0))
    }

    fn put_items(&self, stored: &StoredPolicy, based_on: Based) -> Result<Vec<Write>, ToolError> {
        let current = stored.attributes(CURRENT_SK.to_owned(), "policy", self.tenant)?;
        let condition = match based_on {
            Based::Nothing => Condition::Absent("pk".to_owned()),
            Based::Version(version) => {
                let version = i64::try_from(version).map_err(ToolError::internal)?;
                Condition::Equals("version".to_owned(), Value::n(version))
            }
            // One written by hand without a version: it cannot be read,
            // and `set` replaces it.
            Based::Unversioned => Condition::All(vec![
                Condition::Exists("pk".to_owned()),
                Condition::Absent("version".to_owned()),
            ]),
        };
        let version = stored.attributes(format!("V#{:010}", stored.version), "policy_version", self.tenant)?;
        Ok(vec![Write::PutIf(current, Some(condition)), Write::PutNew(version)])
    }
}

/// The version a policy item says it is.
fn version_of(item: &Attributes) -> Option<u64> {
    item.get("version").and_then(Value::as_n).and_then(|n| n.parse().ok())
}
