//! Each call exported as OpenTelemetry spans and metrics over OTLP/HTTP
//! protobuf, with OpenTelemetry's own SDK and exporters
//! (`opentelemetry_sdk`, `opentelemetry-otlp`) over draftline's HTTP client.
//!
//! - [`settings`]: the standard `OTEL_*` variables; without an endpoint
//!   there is no [`Exporter`] at all, and a call pays one `Option` check.
//! - [`spans`]: the spans of one call, built from its recorder with the ids
//!   it already used (the call's span id, the caller's parent, each Tryton
//!   request's forwarded span id).
//! - [`metrics`]: the instruments each call is counted and timed with.
//! - `flush`: a call's spans and the metrics leave before the instance
//!   can be frozen (the last call in flight waits for them), and calls
//!   served at the same time share the requests (group commit).
//! - `client`: [`draftline_http::Client`] as OpenTelemetry's `HttpClient`.
//! - `otlp`: the [`Exporter`], built once per warm instance.
//!
//! The export is the cargo feature `otlp`: OpenTelemetry's crates add
//! ~117 kB to a function binary (inventory_get_stock: 7.91 → 8.02 MB), and
//! the 8 MB size goal has no room for them. Without the feature an endpoint
//! set is one warn line at start, and nothing else.
//!
//! A call's spans and metrics are exported when it ends, after its log line;
//! the last call in flight on the instance waits for them before its answer
//! is sent, at most the flush timeout (300 ms or less): a collector that is
//! down or slow costs one warn line, never the call, and after a few
//! failed flushes in a row no call waits for it at all (a breaker; the
//! queue is bounded, dropping its oldest spans first).

pub mod settings;

#[cfg(feature = "otlp")]
mod client;
#[cfg(feature = "otlp")]
mod flush;
#[cfg(feature = "otlp")]
pub mod metrics;
#[cfg(feature = "otlp")]
mod otlp;
#[cfg(feature = "otlp")]
pub mod spans;

#[cfg(feature = "otlp")]
pub use flush::{InFlight, QueueStats};
#[cfg(feature = "otlp")]
pub use otlp::Exporter;
pub use settings::{ExportSettings, Sampling, Temporality};

/// One delivery attempt of an outbox event, as telemetry tells it: a span
/// linked to the span of the call that wrote the event, and the delivery
/// metrics. The sweeper (`crate::events::sweep`) fills it in.
#[derive(Debug)]
pub struct DeliveryAttempt<'a> {
    /// The event (its `webhook-id`) and its type.
    pub event_id: &'a str,
    pub event_type: &'a str,
    /// The endpoint's id, or `mail:<user id>`.
    pub endpoint: &'a str,
    /// `webhook` or `mail`.
    pub channel: &'static str,
    /// Which attempt this is (1 for the first).
    pub attempt: u32,
    /// The span of the call that wrote the event, if a call did.
    pub traceparent: Option<&'a str>,
    /// `delivered`, `retried` or `dead`.
    pub outcome: &'static str,
    /// The endpoint's answer, if one came.
    pub status: Option<u16>,
    /// Why it failed, if it did.
    pub error: Option<&'a str>,
    /// When the attempt was made, and when it ended.
    pub started: std::time::SystemTime,
    pub ended: std::time::SystemTime,
    /// From the event to its delivery, when it was delivered.
    pub latency: Option<std::time::Duration>,
}

/// Without the `otlp` feature there is never an exporter: this type has
/// no value.
#[cfg(not(feature = "otlp"))]
#[derive(Debug, Clone)]
pub enum Exporter {}

#[cfg(not(feature = "otlp"))]
impl Exporter {
    /// `None`, with a warn line saying why nothing will be exported.
    pub fn build(settings: &ExportSettings) -> Option<Self> {
        let _ = settings;
        tracing::warn!(
            "OTEL_EXPORTER_OTLP_ENDPOINT is set, but this build has no OTLP export: \
             build the functions with `--features otlp`"
        );
        None
    }

    pub(crate) fn begin(&self) -> InFlight {
        match *self {}
    }

    pub(crate) async fn export_call(
        &self,
        _recorder: &crate::edge::trace::CallRecorder,
        _tool: &'static str,
        _line: &crate::pipeline::outcome::CallLine<'_>,
        _left: Option<std::time::Duration>,
        _flight: InFlight,
    ) {
        match *self {}
    }

    pub(crate) async fn export_delivery(&self, _attempted: &DeliveryAttempt<'_>) {
        match *self {}
    }
}

/// Without the `otlp` feature no call is counted in flight: this type has
/// no value.
#[cfg(not(feature = "otlp"))]
#[derive(Debug)]
pub enum InFlight {}
