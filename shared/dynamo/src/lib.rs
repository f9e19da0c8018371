//! # draftline-dynamo
//!
//! The DynamoDB seam: one client per warm instance, the table name, a count
//! of round trips, failures classified for the contract, and the batch a
//! draft's one transaction carries, and [`transact`]: every transaction
//! draftline writes, and the one reading of how it failed. The server (key records, audit items)
//! and the built-in ERP backend (its documents) both write through it; no
//! DynamoDB type reaches a tool or the ERP port: a backend's writes cross
//! it as a store-neutral [`WriteSet`](draftline_contract::store::WriteSet),
//! which only [`writes`] turns into `TransactWriteItem`s.
//!
//! Every request to DynamoDB passes an SDK interceptor that counts it, per
//! operation, for the whole instance ([`RoundTrips`], read by the tests) and
//! for the call being served (a task-local, written to the call's log line).
//! Retries by the SDK count as round trips: each is one. The same
//! interceptor records the IAM actions each request needs, per deployed
//! function, on the local server ([`grants`]).

use futures::FutureExt;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::config::{Credentials, Region, SharedInterceptor};
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_smithy_runtime_api::client::interceptors::context::{
    BeforeSerializationInterceptorContextRef, BeforeTransmitInterceptorContextRef,
};
use aws_smithy_runtime_api::client::interceptors::{Intercept, OverriddenHooks};
use aws_smithy_runtime_api::client::orchestrator::Metadata;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::config_bag::ConfigBag;
use aws_smithy_types::timeout::TimeoutConfig;

use draftline_contract::{ErpError, ToolError};

mod append;
mod batch_get;
pub mod credentials;
pub mod grants;
mod http;
mod options;
pub mod query;
mod transact;
pub mod writes;
pub use batch_get::{BatchGetFailure, Item, same_key};
pub use credentials::AwsEnvironment;
pub use draftline_contract::store::{Cancelled, TransactFailure, cancelled_error};
pub use http::operation_of;
pub use options::{ClientOptions, Retries, SdkHeaders};
pub use transact::transact;
pub use writes::transact_items;

tokio::task_local! {
    static CALL_ROUND_TRIPS: Arc<AtomicU64>;
}

/// Runs `fut` with a fresh per-call round-trip counter and returns the count with its output.
pub async fn counting_round_trips<F: std::future::Future>(fut: F) -> (F::Output, u64) {
    let counter = Arc::new(AtomicU64::new(0));
    let out = CALL_ROUND_TRIPS.scope(counter.clone(), fut).await;
    (out, counter.load(Ordering::Relaxed))
}

/// Adds `n` round trips to the call being served (requests another task
/// made for it, such as a shared audit write).
pub(crate) fn count_for_call(n: u64) {
    let _ = CALL_ROUND_TRIPS.try_with(|c| c.fetch_add(n, Ordering::Relaxed));
}

/// A stored item that could not be read, and that the call goes on without
/// (treated as absent, so that one bad item never fails every later call
/// that reads it): one warning line naming its key and what was wrong, and
/// a count in the call's record (the `draftline.stored.unreadable` metric).
pub fn unreadable(record: &'static str, key: &Item, what: &str) {
    let part = |name: &str| key.get(name).and_then(|v| v.as_s().ok()).map_or("", String::as_str);
    unreadable_at(record, (part("pk"), part("sk")), what);
}

/// [`unreadable`], of the item at `(pk, sk)`.
pub fn unreadable_at(record: &'static str, (pk, sk): (&str, &str), what: &str) {
    tracing::warn!(
        record,
        pk,
        sk,
        what,
        "a stored {record} could not be read; it is treated as absent"
    );
    draftline_http::trace::record_unreadable(record);
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
struct CountRoundTrips(Arc<RoundTrips>, Arc<grants::Grants>);

impl Intercept for CountRoundTrips {
    fn name(&self) -> &'static str {
        "CountRoundTrips"
    }

    fn overridden_hooks(&self) -> OverriddenHooks {
        OverriddenHooks::READ_BEFORE_SERIALIZATION | OverriddenHooks::READ_BEFORE_TRANSMIT
    }

    fn read_before_serialization(
        &self,
        context: &BeforeSerializationInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), aws_smithy_runtime_api::box_error::BoxError> {
        let operation = cfg.load::<Metadata>().map(|m| m.name()).unwrap_or("Unknown");
        self.1.record(operation, context.input());
        Ok(())
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
    grants: Arc<grants::Grants>,
    appender: Arc<append::Appender>,
}

impl Db {
    /// Connects to `table`: on AWS (region and credentials from the standard
    /// AWS environment), or at `endpoint` (a local or self-hosted DynamoDB API).
    pub async fn connect(table: &str, endpoint: Option<&str>) -> Self {
        Self::connect_with(table, endpoint, ClientOptions::default()).await
    }

    /// [`Db::connect`] with SDK `options` other than production's (the
    /// floor harness measures each).
    pub async fn connect_with(table: &str, endpoint: Option<&str>, options: ClientOptions) -> Self {
        match endpoint {
            Some(endpoint) => {
                // A local or self-hosted DynamoDB API: no AWS account involved, so
                // the environment's credentials are used only if present.
                let region = std::env::var("AWS_REGION").unwrap_or_else(|_| "us-east-1".to_owned());
                let builder = sdk_config()
                    .region(Region::new(region))
                    .credentials_provider(local_credentials())
                    .endpoint_url(endpoint);
                Self::build(table, builder, Some(endpoint), options)
            }
            None => Self::connect_aws(
                table,
                AwsEnvironment::read(&draftline_contract::settings::Source::env()),
                options,
            ),
        }
    }

    /// Connects to `table` on AWS as `aws` says: region, credentials
    /// ([`credentials`]: environment, web identity or container), endpoint.
    pub fn connect_aws(table: &str, aws: AwsEnvironment, options: ClientOptions) -> Self {
        let mut builder = sdk_config()
            .credentials_provider(aws.credentials)
            .use_fips(aws.use_fips)
            .use_dual_stack(aws.use_dual_stack);
        if let Some(region) = aws.region {
            builder = builder.region(Region::new(region));
        }
        if let Some(endpoint) = &aws.endpoint {
            builder = builder.endpoint_url(endpoint);
        }
        Self::build(table, builder, aws.endpoint.as_deref(), options)
    }

    fn build(
        table: &str,
        builder: aws_sdk_dynamodb::config::Builder,
        endpoint: Option<&str>,
        options: ClientOptions,
    ) -> Self {
        let round_trips = Arc::new(RoundTrips::default());
        let grants = Arc::new(grants::Grants::default());
        let timeouts = TimeoutConfig::builder()
            .connect_timeout(Duration::from_secs(2))
            .operation_attempt_timeout(Duration::from_secs(3))
            .operation_timeout(Duration::from_secs(8))
            .build();
        // Throttling and transient failures are retried by the SDK, bounded
        // (see [`Retries::Standard`]), well inside a call's deadline; then
        // the call answers 503.
        let mut builder = options.apply(builder, endpoint).timeout_config(timeouts);
        if options.count_round_trips {
            builder = builder.interceptor(SharedInterceptor::new(CountRoundTrips(
                round_trips.clone(),
                grants.clone(),
            )));
        }
        let client = Client::from_conf(builder.build());
        Self {
            client,
            table: Arc::from(table),
            round_trips,
            grants,
            appender: Arc::default(),
        }
    }

    /// Writes `item` unless an item with its key exists: one conditional
    /// `PutItem`. `Ok(false)`: one existed, and nothing was written.
    pub async fn put_new(
        &self,
        item: std::collections::HashMap<String, aws_sdk_dynamodb::types::AttributeValue>,
    ) -> Result<bool, SdkError<aws_sdk_dynamodb::operation::put_item::PutItemError, HttpResponse>> {
        let written = self
            .client
            .put_item()
            .table_name(self.table())
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(pk)")
            .send()
            .boxed()
            .await;
        match written {
            Ok(_) => Ok(true),
            Err(SdkError::ServiceError(service)) if service.err().is_conditional_check_failed_exception() => Ok(false),
            Err(err) => Err(err),
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

    /// The IAM actions each deployed function's requests needed (recorded
    /// inside [`Self::serving`] only).
    pub fn grants(&self) -> &Arc<grants::Grants> {
        &self.grants
    }

    /// Runs `fut` as deployed function `function` would (the local server,
    /// which serves every function on one port): its requests are recorded
    /// as that function's ([`grants`]).
    pub async fn serving<F: std::future::Future>(&self, function: &'static str, fut: F) -> F::Output {
        grants::serving(&self.grants, function, fut).await
    }
}

/// The SDK's configuration every client starts from: the latest behaviour
/// version, over draftline's HTTP client.
fn sdk_config() -> aws_sdk_dynamodb::config::Builder {
    aws_sdk_dynamodb::Config::builder()
        .behavior_version(aws_sdk_dynamodb::config::BehaviorVersion::latest())
        .http_client(http::client())
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

/// The raw HTTP response type of every DynamoDB operation.
pub type HttpResponse = aws_smithy_runtime_api::http::Response;

/// Error codes that mean DynamoDB refused the request before applying
/// anything (throttling, capacity): safe to say nothing was written.
const REFUSED_CODES: [&str; 4] = [
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
    "TransactionInProgressException",
];

/// Error codes of a DynamoDB that failed inside (outcome unknown for a write).
const FAILED_CODES: [&str; 2] = ["InternalServerError", "ServiceUnavailable"];

/// How a DynamoDB failure is to be reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// Refused before anything was applied (throttling): nothing was written.
    Refused,
    /// Unavailable: a timeout, a broken connection, a 5xx or an answer that
    /// is not DynamoDB's; a write may or may not have been applied.
    Unavailable,
    /// Our bug: DynamoDB understood the request and rejected it (4xx).
    Ours,
}

/// Classifies a DynamoDB failure by transport, HTTP status and error code,
/// never by message text.
pub fn classify<E>(err: &SdkError<E, HttpResponse>) -> FailureKind
where
    E: ProvideErrorMetadata,
{
    match err {
        SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) | SdkError::ResponseError(_) => {
            FailureKind::Unavailable
        }
        SdkError::ServiceError(service) => {
            let code = service.err().code();
            if code.is_some_and(|c| REFUSED_CODES.contains(&c)) {
                FailureKind::Refused
            } else if code.is_none_or(|c| FAILED_CODES.contains(&c)) || service.raw().status().is_server_error() {
                // No DynamoDB error code means the body was not DynamoDB's
                // (a proxy's HTML page): not a request we got wrong.
                FailureKind::Unavailable
            } else {
                FailureKind::Ours
            }
        }
        _ => FailureKind::Ours,
    }
}

/// Maps a failed DynamoDB request that writes nothing (a read, or a write
/// whose failure leaves nothing behind) to the contract: throttling,
/// timeouts, network, 5xx and foreign answers are DEPENDENCY_UNAVAILABLE
/// (retryable); a request DynamoDB rejected is a bug of ours.
/// `what_did_not_happen` is the sentence the model needs ("No draft was created.").
pub fn store_error<E>(err: SdkError<E, HttpResponse>, what_did_not_happen: &str) -> ToolError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    match classify(&err) {
        FailureKind::Refused | FailureKind::Unavailable => ToolError::dependency(err, what_did_not_happen),
        FailureKind::Ours => ToolError::internal(err),
    }
}

/// The same for a backend keeping the ERP's data in this table: the port's
/// error (facts; the tools word it), not a model-facing one.
pub fn erp_store_error<E>(err: SdkError<E, HttpResponse>) -> ErpError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    match classify(&err) {
        FailureKind::Refused | FailureKind::Unavailable => ErpError::StoreUnavailable(Box::new(err)),
        FailureKind::Ours => ErpError::internal(err),
    }
}

/// Maps a failed write that may have been applied (a draft's transaction):
/// a refusal says nothing was written; any other transient failure says the
/// draft may or may not exist and that a retry with the same key is safe.
pub fn uncertain_write_error<E>(err: SdkError<E, HttpResponse>, what_did_not_happen: &str) -> ToolError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    match classify(&err) {
        FailureKind::Refused => ToolError::dependency(err, what_did_not_happen),
        FailureKind::Unavailable => ToolError::dependency_uncertain(err),
        FailureKind::Ours => ToolError::internal(err),
    }
}
