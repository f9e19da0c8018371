//! The DynamoDB seam: one client per warm instance, the table name, and a
//! count of round trips.
//!
//! Every request to DynamoDB passes an SDK interceptor that counts it, per
//! operation, for the whole instance ([`RoundTrips`], read by the tests) and
//! for the call being served (a task-local, written to the call's log line).
//! Retries by the SDK count as round trips: each is one.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::config::{Credentials, Region, SharedInterceptor};
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_runtime_api::client::interceptors::context::BeforeTransmitInterceptorContextRef;
use aws_smithy_runtime_api::client::orchestrator::Metadata;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::config_bag::ConfigBag;
use aws_smithy_types::timeout::TimeoutConfig;

use crate::config::Config;
use crate::error::ToolError;

tokio::task_local! {
    static CALL_ROUND_TRIPS: Arc<AtomicU64>;
}

/// Runs `fut` with a fresh per-call round-trip counter and returns the count with its output.
pub async fn counting_round_trips<F: std::future::Future>(fut: F) -> (F::Output, u64) {
    let counter = Arc::new(AtomicU64::new(0));
    let out = CALL_ROUND_TRIPS.scope(counter.clone(), fut).await;
    (out, counter.load(Ordering::Relaxed))
}

/// Round trips made by one client, by operation name.
#[derive(Debug, Default)]
pub struct RoundTrips(Mutex<BTreeMap<String, u64>>);

impl RoundTrips {
    /// The counts so far.
    pub fn snapshot(&self) -> BTreeMap<String, u64> {
        self.0.lock().map(|m| m.clone()).unwrap_or_default()
    }

    fn record(&self, operation: &str) {
        if let Ok(mut map) = self.0.lock() {
            *map.entry(operation.to_owned()).or_default() += 1;
        }
    }
}

#[derive(Debug)]
struct CountRoundTrips(Arc<RoundTrips>);

impl Intercept for CountRoundTrips {
    fn name(&self) -> &'static str {
        "CountRoundTrips"
    }

    fn read_before_transmit(
        &self,
        _context: &BeforeTransmitInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), aws_smithy_runtime_api::box_error::BoxError> {
        let operation = cfg.load::<Metadata>().map(|m| m.name()).unwrap_or("Unknown");
        self.0.record(operation);
        let _ = CALL_ROUND_TRIPS.try_with(|c| c.fetch_add(1, Ordering::Relaxed));
        Ok(())
    }
}

/// The table and the client that reaches it.
#[derive(Debug, Clone)]
pub struct Db {
    client: Client,
    table: Arc<str>,
    round_trips: Arc<RoundTrips>,
}

impl Db {
    /// Connects as `config` says: AWS (region and credentials from the
    /// standard AWS environment) or the endpoint override.
    pub async fn connect(config: &Config) -> Self {
        let round_trips = Arc::new(RoundTrips::default());
        let timeouts = TimeoutConfig::builder()
            .connect_timeout(Duration::from_secs(2))
            .operation_attempt_timeout(Duration::from_secs(3))
            .operation_timeout(Duration::from_secs(8))
            .build();
        let builder = match &config.dynamodb_endpoint {
            Some(endpoint) => {
                // A local or self-hosted DynamoDB API: no AWS account involved, so
                // the environment's credentials are used only if present.
                let shared = aws_config::defaults(aws_config::BehaviorVersion::latest())
                    .region(Region::new(
                        std::env::var("AWS_REGION").unwrap_or_else(|_| "us-east-1".to_owned()),
                    ))
                    .credentials_provider(local_credentials())
                    .load()
                    .await;
                aws_sdk_dynamodb::config::Builder::from(&shared).endpoint_url(endpoint)
            }
            None => {
                let shared = aws_config::defaults(aws_config::BehaviorVersion::latest()).load().await;
                aws_sdk_dynamodb::config::Builder::from(&shared)
            }
        };
        let client = Client::from_conf(
            builder
                .timeout_config(timeouts)
                .interceptor(SharedInterceptor::new(CountRoundTrips(round_trips.clone())))
                .build(),
        );
        Self {
            client,
            table: Arc::from(config.table.as_str()),
            round_trips,
        }
    }

    /// The SDK client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The table name.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// The instance-wide round-trip counts.
    pub fn round_trips(&self) -> &Arc<RoundTrips> {
        &self.round_trips
    }
}

fn local_credentials() -> Credentials {
    match (
        std::env::var("AWS_ACCESS_KEY_ID"),
        std::env::var("AWS_SECRET_ACCESS_KEY"),
    ) {
        (Ok(id), Ok(secret)) => Credentials::new(id, secret, None, None, "environment"),
        _ => Credentials::new("local", "local", None, None, "draftline-local"),
    }
}

/// Maps a DynamoDB failure to the contract: throttling, timeouts, network and
/// 5xx are DEPENDENCY_UNAVAILABLE (retryable); anything else is a bug of ours.
/// `what_did_not_happen` is the sentence the model needs ("No draft was created.").
pub fn store_error<E, R>(err: SdkError<E, R>, what_did_not_happen: &str) -> ToolError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    R: std::fmt::Debug + Send + Sync + 'static,
{
    let transient = match &err {
        SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) | SdkError::ResponseError(_) => true,
        SdkError::ServiceError(service) => matches!(
            service.err().code(),
            Some(
                "ProvisionedThroughputExceededException"
                    | "ThrottlingException"
                    | "RequestLimitExceeded"
                    | "InternalServerError"
                    | "ServiceUnavailable"
                    | "TransactionInProgressException"
            )
        ),
        _ => false,
    };
    if transient {
        ToolError::dependency(err, what_did_not_happen)
    } else {
        ToolError::internal(err)
    }
}
