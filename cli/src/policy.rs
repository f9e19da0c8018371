//! `draftline policy show|set|schema`: a tenant's limits for its agents,
//! read and written in the table the functions read them from
//! (`draftline_server::policy`). A file is parsed strictly before anything
//! is written: an invalid one is refused with the JSON path of each
//! problem, and the table is not touched; a valid one becomes the next
//! version. A warm function applies it within `DRAFTLINE_POLICY_CACHE_SECONDS`.

use chrono::{DateTime, Utc};
use draftline_contract::FieldIssue;
use draftline_contract::identity::TenantId;
use draftline_contract::policy::Policy;
use draftline_dynamo::Db;
use draftline_server::policy::{InForce, PolicyStore, SetFailure, StoredPolicy};
use draftline_server::storage::DynamoTable;

/// Why `policy set` changed nothing.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    /// The file is not a valid policy: one issue per problem.
    #[error("{}", describe("policy file", .0))]
    Invalid(Vec<FieldIssue>),
    /// The file says which version it was edited from, and the stored
    /// policy has moved on since.
    #[error(
        "the file was edited from version {based_on}, but version {stored} is stored now: run `draftline policy show`, \
         apply your change to it, and set it again (or set \"version\" to null to overwrite). Nothing was changed."
    )]
    Moved {
        /// The file's `version`.
        based_on: u64,
        /// The stored one.
        stored: u64,
    },
    /// The table could not be read or written.
    #[error("the table did not answer: {0}. Nothing was changed.")]
    Store(String),
}

/// The problems of a `what` (a "policy file"), one per line with its path.
pub(crate) fn describe(what: &str, issues: &[FieldIssue]) -> String {
    let mut text = format!(
        "the {what} has {} problem{}; nothing was changed:",
        issues.len(),
        if issues.len() == 1 { "" } else { "s" }
    );
    for issue in issues {
        let path = if issue.path.is_empty() {
            "(the file)"
        } else {
            &issue.path
        };
        text.push_str(&format!("\n  {path}: {}", issue.message));
    }
    text
}

/// The tenant's stored policy as `policy show` prints it (pretty JSON,
/// `version` set), or `None` when it has none. One stored that cannot be
/// read is an error naming the problem (its drafts are refused).
pub async fn show(db: &Db, tenant: &TenantId) -> anyhow::Result<Option<String>> {
    let in_force = PolicyStore::new(&DynamoTable::new(db.clone()), tenant)
        .in_force()
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    match in_force {
        InForce::Nothing => Ok(None),
        InForce::Policy(stored) => Ok(Some(serde_json::to_string_pretty(&stored.policy)?)),
        InForce::Unreadable(unreadable) => anyhow::bail!(
            "the stored policy{} cannot be read: {}; its agents' drafts are refused until `draftline policy set` \
             stores a valid one",
            unreadable
                .version
                .map_or_else(String::new, |v| format!(" (version {v})")),
            unreadable.problem
        ),
    }
}

/// Parses `file` and stores it as the tenant's next policy version.
pub async fn set(
    db: &Db,
    tenant: &TenantId,
    file: &[u8],
    by: &str,
    now: DateTime<Utc>,
) -> Result<StoredPolicy, Refused> {
    let policy = Policy::parse(file).map_err(Refused::Invalid)?;
    PolicyStore::new(&DynamoTable::new(db.clone()), tenant)
        .set(&policy, by, now)
        .await
        .map_err(|failure| match failure {
            SetFailure::Moved { stored } => Refused::Moved {
                based_on: policy.version.unwrap_or_default(),
                stored,
            },
            SetFailure::Store(err) => Refused::Store(err.to_string()),
        })
}

/// Stores the demo tenant's policy (`demo.json`'s `agent_policy`) as its
/// first version, unless the tenant has a policy already (a table kept
/// with `--data` keeps the one a person set).
pub async fn seed_demo(db: &Db, now: DateTime<Utc>) -> anyhow::Result<()> {
    let tenant = TenantId::parse(draftline_erp::demo::TENANT).map_err(anyhow::Error::msg)?;
    let policy = draftline_erp::demo::agent_policy()
        .map_err(|issues| anyhow::anyhow!("{}", describe("policy file", &issues)))?;
    PolicyStore::new(&DynamoTable::new(db.clone()), &tenant)
        .seed(&policy, "demo seed", now)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    seed_demo_runs(db, &tenant, now).await
}

/// Counts the demo's agent drafts (the Surabaya purchase orders, the
/// Bandung quotes) in their runs' counters, as drafts made through
/// draftline are counted: a run page and `agent_get_limits` then show
/// what the run drafted. Each counter is written only if absent, so a
/// second seed, or a table whose runs went on, is left as it is.
async fn seed_demo_runs(db: &Db, tenant: &TenantId, now: DateTime<Utc>) -> anyhow::Result<()> {
    use std::collections::BTreeMap;

    use draftline_contract::identity::{BranchId, Owner, UserId};
    use draftline_contract::policy::Amount;
    use draftline_server::policy::counters::{self, DRAFTS};

    let purchase_orders = draftline_erp::demo::agent_purchase_orders()
        .into_iter()
        .map(|(po, _)| (po.branch_id, po.drafted_on_behalf_of, po.drafted_by_agent_run, po.total));
    let quotes = draftline_erp::demo::agent_quotes().into_iter().map(|(quote, _)| {
        (
            quote.branch_id,
            quote.drafted_on_behalf_of,
            quote.drafted_by_agent_run,
            quote.total,
        )
    });
    /// A run's owner and id: (branch, person, run).
    type Run = (String, String, String);
    /// What it drafted: drafts, and value per currency in hundredths.
    type Drafted = (i64, BTreeMap<String, i64>);
    let mut runs: BTreeMap<Run, Drafted> = BTreeMap::new();
    for (branch, user, run, total) in purchase_orders.chain(quotes) {
        let Some(run) = run else { continue };
        let value = Amount::parse(&total.amount, &total.currency).map_err(anyhow::Error::msg)?;
        let (drafts, values) = runs.entry((branch, user, run)).or_default();
        *drafts += 1;
        *values.entry(value.currency).or_default() += value.hundredths;
    }
    for ((branch, user, run), (drafts, values)) in runs {
        let (branch, user) = (
            BranchId::parse(&branch).map_err(anyhow::Error::msg)?,
            UserId::parse(&user).map_err(anyhow::Error::msg)?,
        );
        let owner = Owner {
            tenant,
            branch: &branch,
            user: &user,
        };
        let mut adds = vec![(DRAFTS.to_owned(), drafts)];
        adds.extend(
            values
                .into_iter()
                .map(|(currency, n)| (counters::value_attribute(&currency), n)),
        );
        let item = counters::run_counted(owner, &run, adds, now);
        // Only if absent: a second seed, or a run that went on, is kept.
        db.put_new(draftline_dynamo::writes::item(&item))
            .await
            .map_err(|err| anyhow::anyhow!("seeding the counter of run {run}: {err}"))?;
    }
    Ok(())
}
