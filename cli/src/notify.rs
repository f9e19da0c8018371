//! `draftline notify show|set|secret|sweep`: a tenant's webhook endpoints,
//! read and written in the table the sweeper reads them from
//! (`draftline_server::events::settings`), and a sweep of the outbox run
//! from here. A file is parsed strictly before
//! anything is written: an invalid one, or an endpoint webhooks may not be
//! sent to, is refused with the JSON path of each problem, and the table
//! is not touched; a valid one becomes the next version.

use chrono::{DateTime, Utc};
use draftline_contract::identity::TenantId;
use draftline_dynamo::Db;
use draftline_server::events::endpoint::Reach;
use draftline_server::events::mail::Mailer;
use draftline_server::events::settings::{NotifySettings, NotifyStore};
use draftline_server::events::sweep::{Sweeper, Swept};
use draftline_server::storage::DynamoTable;
use draftline_server::storage::versions::{SetFailure, Version};

use crate::policy::describe;

/// The tenant's settings in force as `notify show` prints them (pretty
/// JSON, `version` set; each secret shown by its last 4 characters unless
/// `with_secrets`), or `None` when it has none.
pub async fn show(db: &Db, tenant: &TenantId, with_secrets: bool) -> anyhow::Result<Option<String>> {
    let table = DynamoTable::new(db.clone());
    let Some((_, settings)) = NotifyStore::new(&table, tenant)
        .in_force()
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?
    else {
        return Ok(None);
    };
    let shown = if with_secrets { settings } else { settings.redacted() };
    Ok(Some(serde_json::to_string_pretty(&shown)?))
}

/// Parses `file` (endpoints judged by what `reach` allows here) and stores
/// it as the tenant's next settings version.
pub async fn set(
    db: &Db,
    tenant: &TenantId,
    file: &[u8],
    (by, reach): (&str, Reach),
    now: DateTime<Utc>,
) -> anyhow::Result<Version> {
    let settings = NotifySettings::parse(file, reach)
        .map_err(|issues| anyhow::anyhow!("{}", describe("notification settings file", &issues)))?;
    let table = DynamoTable::new(db.clone());
    NotifyStore::new(&table, tenant)
        .set(&settings, by, now)
        .await
        .map_err(|failure| match failure {
            SetFailure::Moved { stored } => anyhow::anyhow!(
                "the file was edited from version {}, but version {stored} is stored now: run `draftline notify \
                 show --with-secrets`, apply your change to it, and set it again (or set \"version\" to null to \
                 overwrite). Nothing was changed.",
                settings.version.unwrap_or_default()
            ),
            SetFailure::Store(err) => anyhow::anyhow!("the table did not answer: {err}. Nothing was changed."),
        })
}

/// The most sweeps `sweep` runs until the outbox has nothing due.
const MAX_SWEEPS: usize = 10_000;

/// Sweeps `db`'s outbox from here (endpoints as `reach` allows, e-mail
/// through `mailer` if given): once, or until a sweep finds nothing to do.
/// The sweeps run, and what they did, summed.
pub async fn sweep(db: &Db, reach: Reach, mailer: Option<Mailer>, until_empty: bool) -> anyhow::Result<(usize, Swept)> {
    let clock = std::sync::Arc::new(draftline_contract::clock::SystemClock);
    let mut sweeper = Sweeper::new(std::sync::Arc::new(DynamoTable::new(db.clone())), clock, reach);
    if let Some(mailer) = mailer {
        sweeper = sweeper.with_mailer(mailer);
    }
    let mut total = Swept::default();
    for run in 1..=MAX_SWEEPS {
        let swept = sweeper.sweep().await.map_err(|e| anyhow::anyhow!("{e}"))?;
        total.fanned_out += swept.fanned_out;
        total.delivered += swept.delivered;
        total.retried += swept.retried;
        total.dead += swept.dead;
        if !until_empty || swept == Swept::default() {
            return Ok((run, total));
        }
    }
    Ok((MAX_SWEEPS, total))
}
