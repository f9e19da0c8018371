//! The exporter: OpenTelemetry's OTLP/HTTP protobuf span and metric
//! exporters over draftline's HTTP client.

use std::sync::Arc;
use std::time::Duration;

use opentelemetry::trace::{SpanContext, SpanId, SpanKind, TraceContextExt, TraceFlags, TraceId, TraceState};
use opentelemetry::{Context, InstrumentationScope, KeyValue};
use opentelemetry_otlp::{ExporterBuildError, Protocol, RetryPolicy, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{Sampler, SamplingDecision, ShouldSample, SpanExporter as _};

use super::DeliveryAttempt;
use super::flush::{Flusher, InFlight, Inner};
use super::metrics::Metrics;
use super::settings::{ExportSettings, Sampling};
use super::{client, spans};
use crate::edge::trace::CallRecorder;
use crate::pipeline::outcome::CallLine;

/// The exporter of a warm instance, built once from its settings.
#[derive(Debug, Clone)]
pub struct Exporter {
    inner: Arc<Inner>,
}

impl Exporter {
    /// The exporter `settings` describe; `None` (with a warn line) if
    /// OpenTelemetry refuses to build it (say, a compression it lacks in
    /// `OTEL_EXPORTER_OTLP_COMPRESSION`).
    pub fn build(settings: &ExportSettings) -> Option<Self> {
        let resource = resource(settings);
        let scope = InstrumentationScope::builder("draftline")
            .with_version(env!("CARGO_PKG_VERSION"))
            .build();
        let spans = match &settings.traces_endpoint {
            Some(endpoint) => {
                let builder = over_http(
                    opentelemetry_otlp::SpanExporter::builder().with_http(),
                    endpoint,
                    settings,
                );
                let mut otlp = built("span", builder.build())?;
                otlp.set_resource(&resource);
                Some(otlp)
            }
            None => None,
        };
        let metrics = match &settings.metrics_endpoint {
            Some(endpoint) => {
                let builder = over_http(
                    opentelemetry_otlp::MetricExporter::builder().with_http(),
                    endpoint,
                    settings,
                );
                let otlp = built("metric", builder.build())?;
                Some((Metrics::new(resource, settings.temporality, scope.clone()), otlp))
            }
            None => None,
        };
        Some(Self {
            inner: Arc::new(Inner {
                spans,
                metrics,
                sampler: sampler(settings.sampling),
                scope,
                flush_timeout: settings.flush_timeout,
                flusher: Flusher::default(),
            }),
        })
    }

    /// The export queue's state now (its cap, what it dropped, whether
    /// its breaker is open).
    pub fn queue_stats(&self) -> super::flush::QueueStats {
        self.inner.flusher.stats()
    }

    /// A call begins: counted in flight until it is exported
    /// ([`Self::export_call`]) or dropped.
    pub(crate) fn begin(&self) -> InFlight {
        InFlight::begin(&self.inner)
    }

    /// Records the metrics of the call of `tool` that `recorder` recorded
    /// and `line` tells, and exports them with its spans (if the sampler
    /// keeps it). The last call in `flight` on the instance waits for its
    /// flush, at most the flush timeout and at most `left` (what the
    /// platform still allows the call, when it says); the others answer
    /// at once ([`super::flush`]). A failure is one warn line; it never
    /// fails or holds up the call.
    pub(crate) async fn export_call(
        &self,
        recorder: &CallRecorder,
        tool: &'static str,
        line: &CallLine<'_>,
        left: Option<Duration>,
        flight: InFlight,
    ) {
        let inner = &self.inner;
        if let Some((metrics, _)) = &inner.metrics {
            metrics.record(tool, line);
        }
        let spans = if inner.spans.is_some() && inner.sampled(recorder, tool) {
            spans::call_spans(recorder, tool, line, &inner.scope)
        } else {
            Vec::new()
        };
        let what = match (spans.is_empty(), inner.metrics.is_some()) {
            (false, true) => "spans and metrics",
            (false, false) => "spans",
            (true, _) => "metrics",
        };
        let count = spans.len();
        let bound = left.map_or(inner.flush_timeout, |left| left.min(inner.flush_timeout));
        if bound.is_zero() {
            if spans.is_empty() && inner.metrics.is_none() {
                return;
            }
            // The metrics stay recorded and leave with the next flush.
            tracing::warn!(
                request_id = line.request_id,
                spans = count,
                "{what} not exported: the invocation has no time left"
            );
            return;
        }
        let Some(flushed) = inner.queue(spans, flight, line.request_id, what) else {
            return;
        };
        match tokio::time::timeout(bound, flushed).await {
            Ok(Ok(Ok(()))) => {}
            Ok(Ok(Err(err))) => {
                tracing::warn!(request_id = line.request_id, spans = count, error = %err, "{what} not exported")
            }
            Ok(Err(_)) => tracing::warn!(
                request_id = line.request_id,
                spans = count,
                "{what} not exported: the flush stopped"
            ),
            Err(_) => tracing::warn!(
                request_id = line.request_id,
                spans = count,
                timeout_ms = u64::try_from(bound.as_millis()).unwrap_or(u64::MAX),
                "{what} not exported: the collector did not answer in time"
            ),
        }
    }
}

impl Exporter {
    /// Records the metrics of one delivery attempt and exports its span
    /// (if the sampler keeps its trace), waiting for the flush at most the
    /// flush timeout. A failure is one warn line.
    pub(crate) async fn export_delivery(&self, attempted: &DeliveryAttempt<'_>) {
        let inner = &self.inner;
        if let Some((metrics, _)) = &inner.metrics {
            metrics.delivery(attempted);
        }
        let span = inner
            .spans
            .as_ref()
            .and_then(|_| spans::delivery_span(attempted, &inner.scope))
            .filter(|span| {
                let decision = inner.sampler.should_sample(
                    None,
                    span.span_context.trace_id(),
                    &span.name,
                    &span.span_kind,
                    &[],
                    &[],
                );
                decision.decision == SamplingDecision::RecordAndSample
            });
        let event_id = attempted.event_id;
        let what = "delivery spans and metrics";
        let Some(flushed) = inner.queue(span.into_iter().collect(), self.begin(), event_id, what) else {
            return;
        };
        match tokio::time::timeout(inner.flush_timeout, flushed).await {
            Ok(Ok(Ok(()))) => {}
            Ok(Ok(Err(err))) => tracing::warn!(event_id, error = %err, "{what} not exported"),
            Ok(Err(_)) => tracing::warn!(event_id, "{what} not exported: the flush stopped"),
            Err(_) => tracing::warn!(event_id, "{what} not exported: the collector did not answer in time"),
        }
    }
}

impl Inner {
    fn sampled(&self, recorder: &CallRecorder, tool: &str) -> bool {
        let context = recorder.context();
        let trace_id = TraceId::from_bytes(context.trace_id_bytes());
        let parent = context.parent_span_id_bytes().map(|parent| {
            let flags = if context.sampled() {
                TraceFlags::SAMPLED
            } else {
                TraceFlags::default()
            };
            let remote = SpanContext::new(trace_id, SpanId::from_bytes(parent), flags, true, TraceState::default());
            Context::new().with_remote_span_context(remote)
        });
        let decision = self.sampler.should_sample(
            parent.as_ref(),
            trace_id,
            &spans::call_span_name(tool),
            &SpanKind::Server,
            &[],
            &[],
        );
        decision.decision == SamplingDecision::RecordAndSample
    }
}

/// The exporter built, or `None` with a warn line naming `kind`.
fn built<E>(kind: &str, built: Result<E, ExporterBuildError>) -> Option<E> {
    built
        .inspect_err(|err| tracing::warn!(error = %err, "OTLP export is off: the {kind} exporter could not be built"))
        .ok()
}

/// An exporter's builder sending protobuf to `endpoint` through
/// draftline's HTTP client, in one attempt within the flush timeout (a
/// retry would outlast the flush bound).
fn over_http<B: WithExportConfig + WithHttpConfig>(builder: B, endpoint: &str, settings: &ExportSettings) -> B {
    builder
        .with_http_client(client::CollectorClient::new(settings.flush_timeout))
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(endpoint)
        .with_timeout(settings.flush_timeout)
        .with_retry_policy(RetryPolicy::disabled())
}

/// The instance's resource: `service.name`, the listed attributes, and a
/// `service.instance.id` of its own unless one is listed (cumulative
/// metrics of two warm instances must not read as one series).
fn resource(settings: &ExportSettings) -> Resource {
    let listed_instance = settings
        .resource_attributes
        .iter()
        .any(|(key, _)| key == "service.instance.id");
    let mut builder = Resource::builder_empty()
        .with_service_name(settings.service_name.clone())
        .with_attributes(
            settings
                .resource_attributes
                .iter()
                .map(|(key, value)| KeyValue::new(key.clone(), value.clone())),
        );
    if !listed_instance {
        builder = builder.with_attribute(KeyValue::new("service.instance.id", hex_id()));
    }
    builder.build()
}

/// 16 random bytes as hex.
fn hex_id() -> String {
    let id: [u8; 16] = rand::random();
    id.iter().map(|b| format!("{b:02x}")).collect()
}

fn sampler(sampling: Sampling) -> Sampler {
    match sampling {
        Sampling::AlwaysOn => Sampler::AlwaysOn,
        Sampling::AlwaysOff => Sampler::AlwaysOff,
        Sampling::TraceIdRatio(ratio) => Sampler::TraceIdRatioBased(ratio),
        Sampling::ParentBasedAlwaysOn => Sampler::ParentBased(Box::new(Sampler::AlwaysOn)),
        Sampling::ParentBasedAlwaysOff => Sampler::ParentBased(Box::new(Sampler::AlwaysOff)),
        Sampling::ParentBasedTraceIdRatio(ratio) => Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(ratio))),
    }
}
