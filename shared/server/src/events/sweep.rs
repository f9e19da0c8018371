//! Delivery: a sweep reads the outbox items that are due, across tenants,
//! from the `gsi1` index (partition `OUTBOX#DUE`, sorted by when each is
//! due; an item leaves the index when nothing more is to be done with it).
//!
//! - A due **event** fans out: in one transaction, it is marked sent and
//!   a **delivery** item is written for each endpoint of its tenant that
//!   receives its type (`EVT#<event>` → `DLV#<event>#<endpoint>`).
//! - A due **delivery** is claimed (its attempt counted and its due time
//!   moved past a lease, under the condition that no one else claimed it),
//!   sent, and marked: delivered, due again after a backoff, or dead.
//!
//! Delivery is at least once: a sweeper stopped after a send and before
//! its mark leaves the delivery claimed, and it is due again when the lease
//! lapses, with the same `webhook-id`. Each delivery is its own item, so a
//! failing endpoint is retried on its own schedule and delays no other.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use chrono::{DateTime, SecondsFormat, Utc};
use futures::StreamExt as _;

use super::delivery::{DELIVERY_KIND, DUE_INDEX, DUE_PARTITION, Delivery, due_sort_key, tenant_of};
use super::endpoint::Reach;
use super::mail::{self, Mailer};
use super::settings::{Endpoint, NotifySettings, NotifyStore};
use super::{EVENT_KIND, EventType, sign};
use crate::export::{DeliveryAttempt, Exporter};
use crate::storage::Table;
use crate::storage::mapped::{from_attributes, to_attributes};
use draftline_contract::clock::Clock;
use draftline_contract::error::ToolError;
use draftline_contract::identity::TenantId;
use draftline_contract::store::{Attributes, Condition, Query, TableKey, TransactFailure, Value, Write};

/// How long a claimed delivery is someone's before it is due again, by
/// default: longer than an attempt may take.
pub const LEASE: Duration = Duration::from_secs(60);

/// How long an event's deliveries are retried before they are dead.
pub const RETRY_WINDOW: Duration = Duration::from_secs(24 * 3600);

/// The most items one sweep reads.
const PAGE: i32 = 100;

/// The most deliveries one sweep sends at once.
const IN_FLIGHT: usize = 16;

/// The most sweeps [`Sweeper::run`] keeps going at once.
pub const SWEEPS_AT_ONCE: usize = 4;

/// What one delivery attempt may take, connect to last byte.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);

/// The most of an endpoint's answer read (the rest is not).
const MAX_ANSWER: usize = 16 * 1024;

/// What one sweep did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Swept {
    /// Events fanned out to their endpoints.
    pub fanned_out: usize,
    /// Deliveries an endpoint accepted.
    pub delivered: usize,
    /// Deliveries that failed and are due again.
    pub retried: usize,
    /// Deliveries given up on.
    pub dead: usize,
}

/// The branch and module of the document an event `payload` is about.
fn placed(payload: &str) -> (String, &'static str) {
    let event: serde_json::Value = serde_json::from_str(payload).unwrap_or_default();
    let branch = event["data"]["branch"].as_str().unwrap_or_default().to_owned();
    let module = match event["data"]["document"]["kind"].as_str() {
        Some("quote") => "sales",
        _ => "purchasing",
    };
    (branch, module)
}

/// How one attempt ended.
enum Attempt {
    /// A 2xx answer.
    Delivered(u16),
    /// No 2xx answer; worth trying again.
    Failed(Option<u16>, String),
    /// Never to be sent: the endpoint is gone or not allowed.
    Refused(String),
}

/// Delivers the outbox: one sweep at a time ([`Sweeper::sweep`]), or
/// forever ([`Sweeper::run`]).
#[derive(Clone)]
pub struct Sweeper {
    table: Arc<dyn Table>,
    clock: Arc<dyn Clock>,
    http: draftline_http::Client,
    reach: Reach,
    mailer: Option<Mailer>,
    lease: Duration,
    exporter: Option<Exporter>,
}

impl std::fmt::Debug for Sweeper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sweeper")
            .field("reach", &self.reach)
            .finish_non_exhaustive()
    }
}

impl Attempt {
    /// Its answer's status and its error, for telemetry.
    fn told(&self) -> (Option<u16>, Option<String>) {
        match self {
            Self::Delivered(status) => (Some(*status), None),
            Self::Failed(status, why) => (*status, Some(why.clone())),
            Self::Refused(why) => (None, Some(why.clone())),
        }
    }
}

impl Sweeper {
    /// A sweeper of `table`'s outbox, on `clock`, sending where `reach`
    /// allows.
    pub fn new(table: Arc<dyn Table>, clock: Arc<dyn Clock>, reach: Reach) -> Self {
        Self {
            table,
            clock,
            http: draftline_http::Client::guarded(Duration::from_secs(5), reach.guard()),
            reach,
            mailer: None,
            lease: LEASE,
            exporter: None,
        }
    }

    /// The sweeper, exporting a span and the metrics of each attempt
    /// through `exporter` (docs/observability.md).
    pub fn with_exporter(self, exporter: Option<Exporter>) -> Self {
        Self { exporter, ..self }
    }

    /// The sweeper, claiming each delivery for `lease` instead of
    /// [`LEASE`] (at least the attempt's own time limit).
    pub fn with_lease(self, lease: Duration) -> Self {
        Self {
            lease: lease.max(SEND_TIMEOUT),
            ..self
        }
    }

    /// The sweeper, also sending e-mail through `mailer`. Without one, no
    /// e-mail is written at all.
    pub fn with_mailer(self, mailer: Mailer) -> Self {
        Self {
            mailer: Some(mailer),
            ..self
        }
    }

    /// Sweeps every `every`, forever; a failed sweep is a warn line and the
    /// next one tries again. A sweep held up by an endpoint that hangs (up
    /// to an attempt's time limit) does not hold up the next: up to
    /// [`SWEEPS_AT_ONCE`] run at once, and a held delivery is claimed, so
    /// no other sweep sends it.
    pub async fn run(self, every: Duration) {
        let sweeper = Arc::new(self);
        let mut ticks = tokio::time::interval(every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut sweeps = tokio::task::JoinSet::new();
        loop {
            ticks.tick().await;
            while sweeps.try_join_next().is_some() {}
            if sweeps.len() >= SWEEPS_AT_ONCE {
                continue;
            }
            let sweeper = Arc::clone(&sweeper);
            sweeps.spawn(async move {
                if let Err(err) = sweeper.sweep().await {
                    tracing::warn!(error = %err, "the outbox sweep failed; the next one tries again");
                }
            });
        }
    }

    /// One sweep: fans out the due events and sends the due deliveries
    /// (those just fanned out among them).
    pub async fn sweep(&self) -> Result<Swept, ToolError> {
        let now = self.clock.now();
        let due = Query {
            index: Some(DUE_INDEX),
            filter: Some(Condition::AtMost("due_at".to_owned(), now.timestamp())),
            limit: Some(PAGE),
            ..Query::partition(DUE_PARTITION)
        };
        let page = self.table.query(&due, "Nothing was delivered.").await?;
        let mut swept = Swept::default();
        let (mut events, mut deliveries) = (Vec::new(), Vec::new());
        for item in page.items {
            match item.get("kind").and_then(Value::as_s) {
                Some(EVENT_KIND) => events.push(item),
                Some(DELIVERY_KIND) => deliveries.extend(from_attributes::<Delivery>(item)),
                _ => {}
            }
        }
        let mut settings = std::collections::HashMap::new();
        let mut fan_outs = Vec::with_capacity(events.len());
        for event in events {
            let Some(tenant) = event.get("pk").and_then(Value::as_s).and_then(tenant_of) else {
                continue;
            };
            let in_force = self.settings_of(&mut settings, &tenant).await;
            fan_outs.push(async move { self.fan_out(&event, in_force.as_deref(), now).await });
        }
        let mut fanning = futures::stream::iter(fan_outs).buffer_unordered(IN_FLIGHT);
        while let Some(fanned) = fanning.next().await {
            if let Some(fanned) = fanned {
                swept.fanned_out += 1;
                deliveries.extend(fanned);
            }
        }
        drop(fanning);
        for tenant in deliveries.iter().filter_map(Delivery::tenant) {
            self.settings_of(&mut settings, &tenant).await;
        }
        let mut sends = futures::stream::iter(deliveries.into_iter().map(|delivery| {
            let tenant = delivery.tenant();
            let endpoint =
                tenant
                    .and_then(|t| settings.get(&t).cloned().flatten())
                    .and_then(|settings: Arc<NotifySettings>| {
                        settings.endpoints.iter().find(|e| e.id == delivery.endpoint).cloned()
                    });
            self.deliver(delivery, endpoint)
        }))
        .buffer_unordered(IN_FLIGHT);
        while let Some(outcome) = sends.next().await {
            match outcome {
                Some(Outcome::Delivered) => swept.delivered += 1,
                Some(Outcome::Retried) => swept.retried += 1,
                Some(Outcome::Dead) => swept.dead += 1,
                None => {}
            }
        }
        Ok(swept)
    }

    /// The endpoints of `tenant`, read once per sweep (`None`: none, or
    /// settings that cannot be read, which is logged).
    async fn settings_of(
        &self,
        read: &mut std::collections::HashMap<TenantId, Option<Arc<NotifySettings>>>,
        tenant: &TenantId,
    ) -> Option<Arc<NotifySettings>> {
        if !read.contains_key(tenant) {
            let endpoints = match NotifyStore::new(self.table.as_ref(), tenant).in_force().await {
                Ok(Some((_, settings))) => Some(Arc::new(settings)),
                Ok(None) => None,
                Err(err) => {
                    tracing::error!(%tenant, error = %err, "the notification settings cannot be read");
                    None
                }
            };
            read.insert(tenant.clone(), endpoints);
        }
        read.get(tenant).cloned().flatten()
    }

    /// Marks the event `item` sent and writes its deliveries, in one
    /// transaction: one per endpoint of `settings` that receives its type,
    /// and one per person its e-mail goes to; `None` if another sweeper did
    /// first (or the store failed: it stays due).
    async fn fan_out(
        &self,
        item: &Attributes,
        settings: Option<&NotifySettings>,
        now: DateTime<Utc>,
    ) -> Option<Vec<Delivery>> {
        let s = |name: &str| item.get(name).and_then(Value::as_s).map(str::to_owned);
        let (pk, sk, event_id, payload) = (s("pk")?, s("sk")?, s("event_id")?, s("payload")?);
        let kind = match s("event_type")?.as_str() {
            "draft.created" => EventType::DraftCreated,
            "draft.decided" => EventType::DraftDecided,
            _ => return None,
        };
        let endpoints = settings.map(|s| s.endpoints.as_slice()).unwrap_or_default();
        let webhooks = endpoints
            .iter()
            .filter(|endpoint| endpoint.wants(kind))
            .map(|endpoint| (endpoint.id.clone(), None));
        let mails = match (&self.mailer, settings) {
            (Some(_), Some(settings)) => {
                let drafted_for = s("drafted_for");
                let place = placed(&payload);
                settings
                    .recipients(kind, (&place.0, place.1), drafted_for.as_deref())
                    .into_iter()
                    .map(|(person, address)| (format!("mail:{person}"), Some(address)))
                    .collect()
            }
            _ => Vec::new(),
        };
        let deliveries = Delivery::fanned_out(item, webhooks.chain(mails), now.timestamp())?;
        let mut sent = draftline_contract::store::Update::of(TableKey { pk, sk });
        sent.set.push(("state".to_owned(), Value::s("sent")));
        sent.set
            .push(("deliveries".to_owned(), Value::n(deliveries.len() as i64)));
        sent.remove = vec![DUE_INDEX.pk.to_owned(), DUE_INDEX.sk.to_owned()];
        sent.condition = Some(Condition::Equals("state".to_owned(), Value::s("pending")));
        let mut writes = vec![Write::Update(sent)];
        writes.extend(deliveries.iter().filter_map(to_attributes).map(Write::PutNew));
        match self
            .table
            .transact(writes, &ulid::Ulid::new().to_string(), "The event was not sent.")
            .await
        {
            Ok(()) => Some(deliveries),
            Err(TransactFailure::Failed(err)) => {
                tracing::warn!(event_id, error = %err, "fanning an event out failed; it stays due");
                None
            }
            Err(_) => None,
        }
    }

    /// Claims `delivery`, sends it to `endpoint` and marks how it went;
    /// `None` if another sweeper claimed it first or the store failed.
    async fn deliver(&self, delivery: Delivery, endpoint: Option<Endpoint>) -> Option<Outcome> {
        let now = self.clock.now();
        let claimed = self.claim(&delivery, now).await?;
        let started = std::time::SystemTime::now();
        let attempt = match (&claimed.to, endpoint) {
            (Some(to), _) => self.mail(&claimed, to, now).await,
            (None, None) => Attempt::Refused(format!(
                "the endpoint '{}' is no longer in the tenant's notification settings",
                delivery.endpoint
            )),
            (None, Some(endpoint)) => self.send(&claimed, &endpoint, now).await,
        };
        let told = self.exporter.as_ref().map(|_| attempt.told());
        let outcome = self.mark(&claimed, attempt, self.clock.now()).await?;
        if let (Some(exporter), Some((status, error))) = (&self.exporter, told) {
            let latency = matches!(outcome, Outcome::Delivered)
                .then(|| happened_at(&claimed.payload))
                .flatten()
                .and_then(|at| (self.clock.now() - at).to_std().ok());
            let attempted = DeliveryAttempt {
                event_id: &claimed.event_id,
                event_type: &claimed.event_type,
                endpoint: &claimed.endpoint,
                channel: if claimed.to.is_some() { "mail" } else { "webhook" },
                attempt: claimed.attempts,
                traceparent: claimed.traceparent.as_deref(),
                outcome: outcome.as_str(),
                status,
                error: error.as_deref(),
                started,
                ended: std::time::SystemTime::now(),
                latency,
            };
            exporter.export_delivery(&attempted).await;
        }
        Some(outcome)
    }

    /// Counts an attempt and moves the delivery's due time past the lease,
    /// if no one else has since it was read.
    async fn claim(&self, delivery: &Delivery, now: DateTime<Utc>) -> Option<Delivery> {
        let due_at = now.timestamp() + self.lease.as_secs() as i64;
        let mut claim = draftline_contract::store::Update::of(delivery.key());
        claim.set = vec![
            ("due_at".to_owned(), Value::n(due_at)),
            (DUE_INDEX.sk.to_owned(), Value::S(due_sort_key(due_at, &delivery.sk))),
        ];
        claim.add = vec![("attempts".to_owned(), 1)];
        claim.condition = Some(Condition::All(vec![
            Condition::Equals("state".to_owned(), Value::s("pending")),
            Condition::Equals("attempts".to_owned(), Value::n(i64::from(delivery.attempts))),
        ]));
        match self.table.write(Write::Update(claim), "Nothing was delivered.").await {
            Ok(Ok(())) => Some(Delivery {
                attempts: delivery.attempts + 1,
                due_at,
                ..delivery.clone()
            }),
            Ok(Err(_)) => None,
            Err(err) => {
                tracing::warn!(event_id = delivery.event_id, error = %err, "claiming a delivery failed");
                None
            }
        }
    }

    /// One e-mail of the delivery's event to `to`.
    async fn mail(&self, delivery: &Delivery, to: &str, now: DateTime<Utc>) -> Attempt {
        let Some(mailer) = &self.mailer else {
            return Attempt::Refused("no mail server is set here (DRAFTLINE_SMTP_URL)".to_owned());
        };
        let kind = match delivery.event_type.as_str() {
            "draft.created" => EventType::DraftCreated,
            _ => EventType::DraftDecided,
        };
        let Some(message) = mail::compose(kind, &delivery.payload, to) else {
            return Attempt::Refused("the event's payload cannot be read".to_owned());
        };
        match mailer.send(&message, now).await {
            Ok(()) => Attempt::Delivered(250),
            Err(why) => Attempt::Failed(None, why),
        }
    }

    /// One POST of the delivery's payload, signed with the endpoint's secrets.
    async fn send(&self, delivery: &Delivery, endpoint: &Endpoint, now: DateTime<Utc>) -> Attempt {
        let uri = match self.reach.check_url(&endpoint.url) {
            Ok(uri) => uri,
            Err(why) => return Attempt::Refused(why),
        };
        let timestamp = now.timestamp();
        let body = Bytes::from(delivery.payload.clone());
        let signature = sign::signature(&endpoint.keys(), &delivery.event_id, timestamp, &body);
        let request = http::Request::post(uri)
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::USER_AGENT, "draftline-webhooks/1")
            .header("webhook-id", &delivery.event_id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature)
            .body(body);
        let Ok(request) = request else {
            return Attempt::Refused("the endpoint's URL cannot carry a request".to_owned());
        };
        let limits = draftline_http::Limits {
            timeout: Some(SEND_TIMEOUT),
            max_body: MAX_ANSWER,
        };
        match self.http.send(request, limits).await {
            Ok(answer) if answer.status().is_success() => Attempt::Delivered(answer.status().as_u16()),
            Ok(answer) if answer.status().is_redirection() => Attempt::Failed(
                Some(answer.status().as_u16()),
                format!(
                    "answered {} (a redirect, which is not followed): set the endpoint's final URL",
                    answer.status()
                ),
            ),
            Ok(answer) => Attempt::Failed(Some(answer.status().as_u16()), format!("answered {}", answer.status())),
            Err(err) if err.kind() == draftline_http::ErrorKind::Refused => Attempt::Refused(err.to_string()),
            // An answer too large still came: the endpoint took it.
            Err(err) if err.kind() == draftline_http::ErrorKind::TooLarge => Attempt::Failed(None, err.to_string()),
            Err(err) => Attempt::Failed(None, err.to_string()),
        }
    }

    /// Marks a claimed delivery by how its attempt went.
    async fn mark(&self, claimed: &Delivery, attempt: Attempt, now: DateTime<Utc>) -> Option<Outcome> {
        let mut mark = draftline_contract::store::Update::of(claimed.key());
        mark.condition = Some(Condition::Equals(
            "attempts".to_owned(),
            Value::n(i64::from(claimed.attempts)),
        ));
        let leave_index = vec![DUE_INDEX.pk.to_owned(), DUE_INDEX.sk.to_owned()];
        let outcome = match attempt {
            Attempt::Delivered(status) => {
                mark.set = vec![
                    ("state".to_owned(), Value::s("delivered")),
                    ("last_status".to_owned(), Value::n(i64::from(status))),
                    (
                        "delivered_at".to_owned(),
                        Value::S(now.to_rfc3339_opts(SecondsFormat::Millis, true)),
                    ),
                ];
                mark.remove = leave_index;
                Outcome::Delivered
            }
            Attempt::Failed(status, why) => {
                let next = now.timestamp() + backoff(claimed.attempts).as_secs() as i64;
                if let Some(status) = status {
                    mark.set.push(("last_status".to_owned(), Value::n(i64::from(status))));
                }
                mark.set.push(("last_error".to_owned(), Value::S(why)));
                if next > claimed.since + RETRY_WINDOW.as_secs() as i64 {
                    mark.set.push(("state".to_owned(), Value::s("dead")));
                    mark.remove = leave_index;
                    Outcome::Dead
                } else {
                    mark.set.push(("due_at".to_owned(), Value::n(next)));
                    mark.set
                        .push((DUE_INDEX.sk.to_owned(), Value::S(due_sort_key(next, &claimed.sk))));
                    Outcome::Retried
                }
            }
            Attempt::Refused(why) => {
                mark.set = vec![
                    ("state".to_owned(), Value::s("dead")),
                    ("last_error".to_owned(), Value::S(why)),
                ];
                mark.remove = leave_index;
                Outcome::Dead
            }
        };
        match self
            .table
            .write(Write::Update(mark), "The delivery was not marked.")
            .await
        {
            Ok(Ok(())) => Some(outcome),
            // Claimed again since (this attempt outlived its lease): the
            // newer attempt marks it.
            Ok(Err(_)) => None,
            Err(err) => {
                tracing::warn!(event_id = claimed.event_id, error = %err, "marking a delivery failed; it is sent again");
                None
            }
        }
    }
}

/// How a marked delivery ended.
enum Outcome {
    Delivered,
    Retried,
    Dead,
}

impl Outcome {
    fn as_str(&self) -> &'static str {
        match self {
            Self::Delivered => "delivered",
            Self::Retried => "retried",
            Self::Dead => "dead",
        }
    }
}

/// When the event in `payload` happened (its `timestamp`).
fn happened_at(payload: &str) -> Option<DateTime<Utc>> {
    #[derive(serde::Deserialize)]
    struct Stamped {
        timestamp: DateTime<Utc>,
    }
    serde_json::from_str::<Stamped>(payload).ok().map(|s| s.timestamp)
}

/// How long after its `attempts`-th failed attempt a delivery is due
/// again: 30 s doubling to at most 4 h, each ±20 % at random (jitter, so
/// that an endpoint back from an outage is not met by every delivery at
/// once). About 14 attempts fit the retry window.
pub fn backoff(attempts: u32) -> Duration {
    let base = 30u64
        .saturating_mul(1u64 << attempts.saturating_sub(1).min(16))
        .min(4 * 3600);
    let jitter = rand::random_range(0.8..1.2);
    Duration::from_secs_f64(base as f64 * jitter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_back_off_with_jitter_to_four_hours_and_fill_about_a_day() {
        let first = backoff(1).as_secs_f64();
        assert!((24.0..=36.0).contains(&first), "{first}");
        assert!((48.0..=72.0).contains(&backoff(2).as_secs_f64()));
        let cap = backoff(30).as_secs_f64();
        assert!((0.8 * 14_400.0..=1.2 * 14_400.0).contains(&cap), "{cap}");
        let mut waited = 0.0;
        let mut attempts = 0;
        while waited <= RETRY_WINDOW.as_secs_f64() {
            attempts += 1;
            waited += backoff(attempts).as_secs_f64();
        }
        assert!((11..=18).contains(&attempts), "{attempts}");
    }
}
