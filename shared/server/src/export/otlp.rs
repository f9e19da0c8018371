//! The exporter: OpenTelemetry's OTLP/HTTP protobuf span exporter over
//! draftline's HTTP client.

use std::time::Duration;

use opentelemetry::trace::{SpanContext, SpanId, SpanKind, TraceContextExt, TraceFlags, TraceId, TraceState};
use opentelemetry::{Context, InstrumentationScope, KeyValue};
use opentelemetry_otlp::{Protocol, RetryPolicy, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{Sampler, SamplingDecision, ShouldSample, SpanExporter};

use super::settings::{ExportSettings, Sampling};
use super::{client, spans};
use crate::edge::trace::CallRecorder;
use crate::pipeline::outcome::CallLine;

/// The exporter of a warm instance, built once from its settings.
#[derive(Debug)]
pub struct Exporter {
    otlp: opentelemetry_otlp::SpanExporter,
    sampler: Sampler,
    scope: InstrumentationScope,
    flush_timeout: Duration,
}

impl Exporter {
    /// The exporter `settings` describe; `None` (with a warn line) if
    /// OpenTelemetry refuses to build it (say, a compression it lacks in
    /// `OTEL_EXPORTER_OTLP_COMPRESSION`).
    pub fn build(settings: &ExportSettings) -> Option<Self> {
        let built = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(client::CollectorClient::new(settings.flush_timeout))
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(settings.traces_endpoint.clone())
            .with_timeout(settings.flush_timeout)
            // One attempt: a retry would outlast the flush bound.
            .with_retry_policy(RetryPolicy::disabled())
            .build();
        let mut otlp = match built {
            Ok(otlp) => otlp,
            Err(err) => {
                tracing::warn!(error = %err, "OTLP span export is off: the exporter could not be built");
                return None;
            }
        };
        let resource = Resource::builder_empty()
            .with_service_name(settings.service_name.clone())
            .with_attributes(
                settings
                    .resource_attributes
                    .iter()
                    .map(|(key, value)| KeyValue::new(key.clone(), value.clone())),
            )
            .build();
        otlp.set_resource(&resource);
        Some(Self {
            otlp,
            sampler: sampler(settings.sampling),
            scope: InstrumentationScope::builder("draftline")
                .with_version(env!("CARGO_PKG_VERSION"))
                .build(),
            flush_timeout: settings.flush_timeout,
        })
    }

    /// Exports the spans of the call of `tool` that `recorder` recorded and
    /// `line` tells (if the sampler keeps it), waiting at most the flush
    /// timeout, and at most `left` (what the platform still allows the
    /// call, when it says). A failure is one warn line; it never fails or
    /// holds up the call.
    pub(crate) async fn export_call(
        &self,
        recorder: &CallRecorder,
        identified_in: Duration,
        tool: &str,
        line: &CallLine<'_>,
        left: Option<Duration>,
    ) {
        if !self.sampled(recorder, tool) {
            return;
        }
        let bound = left.map_or(self.flush_timeout, |left| left.min(self.flush_timeout));
        let spans = spans::call_spans(recorder, identified_in, tool, line, &self.scope);
        let count = spans.len();
        if bound.is_zero() {
            tracing::warn!(
                request_id = line.request_id,
                spans = count,
                "spans not exported: the invocation has no time left"
            );
            return;
        }
        match tokio::time::timeout(bound, self.otlp.export(spans)).await {
            Ok(Ok(())) => {}
            Ok(Err(err)) => {
                tracing::warn!(request_id = line.request_id, spans = count, error = %err, "spans not exported")
            }
            Err(_) => tracing::warn!(
                request_id = line.request_id,
                spans = count,
                timeout_ms = u64::try_from(bound.as_millis()).unwrap_or(u64::MAX),
                "spans not exported: the collector did not answer in time"
            ),
        }
    }

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
