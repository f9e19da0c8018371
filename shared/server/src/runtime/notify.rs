//! The notify function (`api/notify.rs`): the events' delivery, run where
//! each platform runs background work. `draftline serve` runs the same
//! sweeper and poller in-process instead.
//!
//! - **AWS Lambda.** Two triggers invoke it (`infra/aws/template.json`).
//!   The table's DynamoDB Stream, filtered to outbox items, brings the
//!   first attempt within seconds of the commit: a batch in which an item
//!   is due now is one sweep ([`Notifier::streamed`]). A stream batch never
//!   fails, because a failed batch would block its shard and its records
//!   expire after 24 h. A failed attempt is left to the EventBridge
//!   schedule, which sweeps every minute and so does the backoff
//!   ([`Notifier::scheduled`]).
//! - **Vercel.** A cron (`vercel.json` `crons`) calls it over HTTP, with
//!   `Authorization: Bearer $CRON_SECRET`. Any other call is refused
//!   ([`cron`]), and without `CRON_SECRET` the function does not start.
//!
//! A scheduled round first polls the decisions made in the ERP's own
//! workflow where the ERP keeps them (Tryton, [`PollDecisions`]), so that
//! their events are swept in the same round.

use std::process::ExitCode;
use std::sync::Arc;

use async_trait::async_trait;
use aws_lambda_events::event::dynamodb;
use bytes::Bytes;
use chrono::{DateTime, Utc};
use http::{Method, Request, Response, StatusCode};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::config::{Config, ConfigError, Source};
use crate::events::delivery::{DELIVERY_KIND, DUE_PARTITION};
use crate::events::sweep::{Sweeper, Swept};
use crate::events::{EVENT_KIND, endpoint::Reach, mail::Mailer};
use crate::storage::DynamoTable;
use draftline_contract::clock::SystemClock;
use draftline_contract::error::ToolError;
use draftline_dynamo::Db;

/// The variable whose value a Vercel cron sends as its bearer token.
pub const CRON_SECRET: &str = "CRON_SECRET";

/// Decisions made in the ERP's own workflow, which draftline learns of by
/// asking (`draftline_review::poll::Poller`).
#[async_trait]
pub trait PollDecisions: Send + Sync {
    /// One poll: the `draft.decided` events it wrote.
    async fn poll(&self) -> Result<usize, ToolError>;
}

/// What one round of the notify function did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Round {
    /// Decisions polled from the ERP and announced (a scheduled round).
    pub polled: usize,
    /// Whether the outbox was swept (a stream batch with nothing due is not).
    pub swept: bool,
    /// Events fanned out to their endpoints and people.
    pub fanned_out: usize,
    /// Deliveries accepted.
    pub delivered: usize,
    /// Deliveries that failed and are due again.
    pub retried: usize,
    /// Deliveries given up on.
    pub dead: usize,
}

impl Round {
    fn of(polled: usize, swept: Swept) -> Self {
        Self {
            polled,
            swept: true,
            fanned_out: swept.fanned_out,
            delivered: swept.delivered,
            retried: swept.retried,
            dead: swept.dead,
        }
    }
}

/// The notify function's work: a sweeper of the outbox and, where the ERP
/// keeps its own decisions, their poller.
#[derive(Clone)]
pub struct Notifier {
    sweeper: Sweeper,
    poller: Option<Arc<dyn PollDecisions>>,
}

impl std::fmt::Debug for Notifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notifier")
            .field("sweeper", &self.sweeper)
            .field("polls", &self.poller.is_some())
            .finish()
    }
}

/// The part of a stream record's new image that says whether it asks for a
/// sweep, read with `serde_dynamo` (every other attribute is ignored).
#[derive(Debug, Deserialize)]
struct Outboxed {
    kind: String,
    due_at: i64,
    gsi1pk: Option<String>,
}

impl Notifier {
    /// A notifier sweeping with `sweeper`, and polling with `poller` if given.
    pub fn new(sweeper: Sweeper, poller: Option<Arc<dyn PollDecisions>>) -> Self {
        Self { sweeper, poller }
    }

    /// A scheduled round (the EventBridge schedule, the Vercel cron): the
    /// ERP's decisions polled, then one sweep. A failed poll is a warn
    /// line, and the sweep still runs; a failed sweep is the round's error.
    pub async fn scheduled(&self) -> Result<Round, ToolError> {
        let polled = match &self.poller {
            Some(poller) => poller.poll().await.unwrap_or_else(|err| {
                tracing::warn!(error = %err, "polling the ERP's decisions failed; the next round tries again");
                0
            }),
            None => 0,
        };
        Ok(Round::of(polled, self.sweeper.sweep().await?))
    }

    /// A batch of the table's stream: one sweep if an item in it is due
    /// by `now`, else nothing. Never an error: a failed sweep is a warn
    /// line, and the schedule sweeps again.
    pub async fn streamed(&self, batch: &dynamodb::Event, now: DateTime<Utc>) -> Round {
        if due_in(batch, now) == 0 {
            return Round::default();
        }
        match self.sweeper.sweep().await {
            Ok(swept) => Round::of(0, swept),
            Err(err) => {
                tracing::warn!(error = %err, "the sweep of a stream batch failed; the schedule sweeps again");
                Round::default()
            }
        }
    }
}

/// How many records of `batch` are outbox items due by `now`: an event
/// just written, or a delivery due again (sent again from the review
/// pages). A delivery just fanned out is not counted (the sweep that wrote
/// it sends it), nor an item claimed or backing off (due later), nor one
/// done (it has left the due index).
pub fn due_in(batch: &dynamodb::Event, now: DateTime<Utc>) -> usize {
    batch
        .records
        .iter()
        .filter(|record| {
            let Ok(item) = serde_dynamo::from_item::<_, Outboxed>(record.change.new_image.clone()) else {
                return false;
            };
            let waiting = item.gsi1pk.as_deref() == Some(DUE_PARTITION) && item.due_at <= now.timestamp();
            match item.kind.as_str() {
                EVENT_KIND => waiting,
                DELIVERY_KIND => waiting && record.event_name == "MODIFY",
                _ => false,
            }
        })
        .count()
}

/// The Vercel cron's call: a scheduled round if it carries
/// `Authorization: Bearer <secret>`, else 401; only `GET` and `POST`.
pub async fn cron(notifier: &Notifier, secret: &str, request: &Request<Bytes>) -> Response<Bytes> {
    let request_id = ulid::Ulid::new().to_string();
    if !matches!(*request.method(), Method::GET | Method::POST) {
        return crate::response::method_not_allowed(
            "GET, POST",
            "The notify function is called by the platform's scheduler with GET.".to_owned(),
            &request_id,
        );
    }
    let bearer = request
        .headers()
        .get(http::header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "));
    if !bearer.is_some_and(|given| crate::confirm::constant_time_eq(given.as_bytes(), secret.as_bytes())) {
        let error = json!({"ok": false, "error": {
            "code": "UNAUTHENTICATED",
            "message": "Only the deployment's scheduler calls this function: send Authorization: Bearer <CRON_SECRET>.",
            "retryable": false,
        }, "requestId": request_id});
        return crate::response::json(StatusCode::UNAUTHORIZED, &error, &request_id);
    }
    match notifier.scheduled().await {
        Ok(round) => crate::response::success(StatusCode::OK, &json!(round), false, &request_id),
        Err(err) => crate::response::failure(&err, &request_id, ""),
    }
}

/// Runs the notify function: reads the configuration (refusing to start
/// without it, or on Vercel without `CRON_SECRET`), builds the sweeper on
/// the table, `poller` if the deployment's ERP keeps its own decisions,
/// and serves the Lambda triggers if `AWS_LAMBDA_RUNTIME_API` is set, else
/// the Vercel cron.
pub async fn run<F>(poller: F) -> ExitCode
where
    F: FnOnce(&Source, &Config, &Db) -> Result<Option<Arc<dyn PollDecisions>>, ConfigError>,
{
    draftline_contract::crypto::install_crypto_provider();
    crate::observe::init_json_logs();
    let source = Source::env();
    let on_lambda = std::env::var_os("AWS_LAMBDA_RUNTIME_API").is_some();
    let built = Config::from_source(&source).and_then(|config| {
        let secret = match on_lambda {
            true => None,
            false => Some(
                source
                    .secret_of_at_least(CRON_SECRET, 16)?
                    .ok_or(ConfigError::Missing(CRON_SECRET))?,
            ),
        };
        Ok((config, secret))
    });
    let (config, secret) = match built {
        Ok(built) => built,
        Err(err) => return super::refuse_to_start(&err).await,
    };
    let db = Db::connect(&config.table, config.dynamodb_endpoint.as_deref()).await;
    let poller = match poller(&source, &config, &db) {
        Ok(poller) => poller,
        Err(err) => return super::refuse_to_start(&err).await,
    };
    let exporter = config.export.as_ref().and_then(crate::export::Exporter::build);
    let mut sweeper =
        Sweeper::new(Arc::new(DynamoTable::new(db)), Arc::new(SystemClock), Reach::from_env()).with_exporter(exporter);
    match Mailer::from_env() {
        Ok(Some(mailer)) => sweeper = sweeper.with_mailer(mailer),
        Ok(None) => {}
        Err(reason) => {
            let err = ConfigError::Invalid {
                name: "DRAFTLINE_SMTP_URL",
                reason,
            };
            return super::refuse_to_start(&err).await;
        }
    }
    let notifier = Arc::new(Notifier::new(sweeper, poller));
    let served = match secret {
        None => on_aws(notifier).await.map_err(|e| e.to_string()),
        Some(secret) => on_vercel(notifier, secret.expose().to_owned())
            .await
            .map_err(|e| e.to_string()),
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("draftline: the function runtime stopped: {err}");
            ExitCode::FAILURE
        }
    }
}

/// Serves the stream's batches and the schedule's events on Lambda.
async fn on_aws(notifier: Arc<Notifier>) -> Result<(), lambda_http::Error> {
    use lambda_http::{LambdaEvent, lambda_runtime};
    lambda_runtime::run(lambda_http::service_fn(move |event: LambdaEvent<serde_json::Value>| {
        let notifier = Arc::clone(&notifier);
        async move {
            let round = match event.payload.get("Records") {
                Some(_) => match serde_json::from_value::<dynamodb::Event>(event.payload) {
                    Ok(batch) => notifier.streamed(&batch, Utc::now()).await,
                    // Never an error for the stream: the schedule sweeps.
                    Err(err) => {
                        tracing::warn!(error = %err, "a stream batch that does not parse; the schedule sweeps");
                        Round::default()
                    }
                },
                None => notifier.scheduled().await?,
            };
            tracing::info!(?round, "notify round");
            Ok::<_, lambda_http::Error>(json!(round))
        }
    }))
    .await
}

/// Serves the cron's calls under the Vercel runtime.
async fn on_vercel(notifier: Arc<Notifier>, secret: String) -> Result<(), vercel_runtime::Error> {
    let secret = Arc::<str>::from(secret);
    let handler = move |request: vercel_runtime::Request| {
        let (notifier, secret) = (Arc::clone(&notifier), Arc::clone(&secret));
        async move {
            let (parts, body) = request.into_parts();
            let request = Request::from_parts(parts, super::vercel::read_body(body).await);
            let response = cron(&notifier, &secret, &request).await;
            let (parts, body) = response.into_parts();
            Ok::<_, vercel_runtime::Error>(Response::from_parts(parts, vercel_runtime::ResponseBody::from(body)))
        }
    };
    vercel_runtime::run(vercel_runtime::service_fn(handler)).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    /// A stream record as Lambda delivers it: `name` (INSERT, MODIFY), and
    /// the new image's `kind`, `due_at` and, if waiting, `gsi1pk`.
    fn record(name: &str, kind: &str, due_at: i64, waiting: bool) -> serde_json::Value {
        let mut image = json!({
            "pk": {"S": "T#demo#OUTBOX"},
            "sk": {"S": "EVT#evt_01"},
            "kind": {"S": kind},
            "due_at": {"N": due_at.to_string()},
            "payload": {"S": "{\"type\":\"draft.created\"}"},
        });
        if waiting {
            image["gsi1pk"] = json!({"S": DUE_PARTITION});
        }
        json!({
            "eventID": "1", "eventName": name, "eventVersion": "1.1", "eventSource": "aws:dynamodb",
            "awsRegion": "us-east-1",
            "eventSourceARN": "arn:aws:dynamodb:us-east-1:123456789012:table/draftline/stream/2026-12-07T00:00:00.000",
            "dynamodb": {
                "ApproximateCreationDateTime": 1_796_601_600.0,
                "Keys": {"pk": {"S": "T#demo#OUTBOX"}, "sk": {"S": "EVT#evt_01"}},
                "NewImage": image,
                "SequenceNumber": "100", "SizeBytes": 120, "StreamViewType": "NEW_IMAGE",
            },
        })
    }

    fn batch(records: Vec<serde_json::Value>) -> dynamodb::Event {
        serde_json::from_value(json!({ "Records": records })).unwrap()
    }

    #[test]
    fn a_stream_batch_asks_for_a_sweep_only_for_an_outbox_item_due_now_that_no_sweep_is_sending() {
        let now = Utc.with_ymd_and_hms(2026, 12, 7, 9, 0, 0).unwrap();
        let at = now.timestamp();
        for (records, due) in [
            (vec![record("INSERT", "event", at, true)], 1),
            // Sent again from the page.
            (vec![record("MODIFY", "delivery", at - 5, true)], 1),
            // Fanned out: the sweep that wrote it sends it.
            (vec![record("INSERT", "delivery", at, true)], 0),
            // Claimed, or backing off: due later.
            (vec![record("MODIFY", "delivery", at + 60, true)], 0),
            (vec![record("INSERT", "event", at + 1, true)], 0),
            // Done: it left the index.
            (vec![record("MODIFY", "event", at, false)], 0),
            (vec![record("MODIFY", "delivery", at, false)], 0),
            // Not an outbox item.
            (vec![record("INSERT", "near_duplicate", at, true)], 0),
            (
                vec![
                    record("INSERT", "event", at, true),
                    record("INSERT", "delivery", at, true),
                    record("INSERT", "event", at - 1, true),
                ],
                2,
            ),
        ] {
            let described = format!("{records:?}");
            assert_eq!(due_in(&batch(records), now), due, "{described}");
        }
    }

    #[test]
    fn a_record_whose_image_lacks_the_outbox_attributes_asks_for_nothing() {
        let now = Utc.with_ymd_and_hms(2026, 12, 7, 9, 0, 0).unwrap();
        let mut bare = record("INSERT", "event", now.timestamp(), true);
        bare["dynamodb"]["NewImage"] = json!({"pk": {"S": "T#demo#IDEM#k"}, "sk": {"S": "IDEM"}});
        assert_eq!(due_in(&batch(vec![bare]), now), 0);
    }
}
