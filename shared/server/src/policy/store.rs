//! The tenant's policy in the table, kept in versions
//! ([`crate::storage::versions`]) under `T#<tenant>#POLICY`: the current
//! item (`sk = CURRENT`) and one item per version (`sk = V#<version>`), so
//! the version an audit item names can be read back.

use std::sync::Arc;

use chrono::{DateTime, Utc};

use crate::storage::Table;
pub use crate::storage::versions::SetFailure;
use crate::storage::versions::{self, Versions, version_of};
use draftline_contract::error::ToolError;
use draftline_contract::identity::{BranchId, TenantId};
use draftline_contract::policy::{Applied, Policy};
use draftline_contract::store::{Attributes, TableKey, Value};

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

/// The partition of `tenant`'s policy.
pub fn partition(tenant: &TenantId) -> String {
    format!("T#{tenant}#POLICY")
}

/// The key of `tenant`'s policy in force (read with the key record, [`super::PolicyCache`]).
pub fn current_key(tenant: &TenantId) -> TableKey {
    versions::current_key(&partition(tenant))
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

/// Reads and writes one tenant's policy.
#[derive(Debug, Clone)]
pub struct PolicyStore<'a> {
    versions: Versions<'a>,
}

impl<'a> PolicyStore<'a> {
    /// The store of `tenant`'s policy.
    pub fn new(table: &'a dyn Table, tenant: &TenantId) -> Self {
        Self {
            versions: Versions::new(table, partition(tenant), "policy", "The policy was not changed."),
        }
    }

    /// The policy in force, or that none is, or that the one stored cannot
    /// be read (one strongly consistent `GetItem`).
    pub async fn in_force(&self) -> Result<InForce, ToolError> {
        Ok(InForce::of(self.versions.current().await?.as_ref()))
    }

    /// Stores `policy` as the next version, if the stored one is still
    /// `policy.version` (none stored counts as 0; `None` overwrites
    /// whatever is stored, even one that cannot be read). Returns what was
    /// stored.
    pub async fn set(&self, policy: &Policy, by: &str, now: DateTime<Utc>) -> Result<StoredPolicy, SetFailure> {
        let as_version = |version: u64| Policy {
            version: Some(version),
            ..policy.clone()
        };
        let document = |version: u64| serde_json::to_string(&as_version(version)).map_err(ToolError::internal);
        let stored = self.versions.set(policy.version, document, by, now).await?;
        Ok(StoredPolicy::new(
            stored.number,
            as_version(stored.number),
            stored.updated_at,
            stored.updated_by,
        ))
    }

    /// Stores `policy` as version 1 unless the tenant has a policy: the
    /// demo seed's write, which never replaces one a person set. Returns
    /// whether it was stored.
    pub async fn seed(&self, policy: &Policy, by: &str, now: DateTime<Utc>) -> Result<bool, ToolError> {
        let first = Policy {
            version: Some(1),
            ..policy.clone()
        };
        let document = serde_json::to_string(&first).map_err(ToolError::internal)?;
        self.versions.seed(document, by, now).await
    }
}
