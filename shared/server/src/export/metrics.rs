//! Each call counted and timed as OpenTelemetry metrics, with the SDK's
//! own instruments and aggregation, collected on demand.
//!
//! A function has no background time to export on: Lambda freezes an
//! instance between invocations, and Vercel may too. So there is no
//! periodic reader; a [`ManualReader`] is collected by the flush that
//! carries a call's spans ([`super::flush`]), before the call's answer
//! leaves. Calls served at the same time share one collection and one
//! request.
//!
//! Every label is a bounded, non-secret name: the tool (one the function
//! serves, or `_unknown`), the transport, an error code, a stage, an
//! operation kind. No tenant, user, key, argument or note is a label:
//! those are per-call facts and stay in the span and the audit item.

use std::sync::{Arc, Weak};
use std::time::Duration;

use opentelemetry::metrics::{Counter, Histogram, MeterProvider as _};
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::reader::MetricReader;
use opentelemetry_sdk::metrics::{InstrumentKind, ManualReader, Pipeline, SdkMeterProvider, Temporality};

use super::DeliveryAttempt;
use super::settings;
use crate::pipeline::outcome::CallLine;

/// Bucket boundaries of every duration histogram, in seconds: a read
/// takes a fraction of a millisecond, a Tryton draft up to seconds (the
/// specification's HTTP defaults start at 5 ms, too coarse for these).
const DURATION_BUCKETS: [f64; 16] = [
    0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// The metric names, as exported (and listed in docs/observability.md).
pub mod names {
    /// Calls, by `tool`, `transport` and `code` (`OK` for a success).
    pub const CALLS: &str = "draftline.calls";
    /// Call latency in seconds, by `tool` and `code`.
    pub const CALL_DURATION: &str = "draftline.call.duration";
    /// Time in each stage in seconds, by `tool` and `stage`.
    pub const STAGE_DURATION: &str = "draftline.stage.duration";
    /// Answers replayed from their key record, by `tool`.
    pub const REPLAYS: &str = "draftline.replays";
    /// Keys used again with other arguments (422), by `tool`.
    pub const KEY_CONFLICTS: &str = "draftline.idempotency.conflicts";
    /// Answers "this key is still being worked on" (409), by `tool`.
    pub const IN_FLIGHT: &str = "draftline.idempotency.in_flight";
    /// Calls refused for who the caller is or may do, by `tool` and `code`.
    pub const REFUSALS: &str = "draftline.authorization.refusals";
    /// Near-duplicate questions asked of a person (INPUT_REQUIRED), by `tool`.
    pub const QUESTIONS: &str = "draftline.near_duplicate.questions";
    /// DynamoDB requests (SDK attempts), by `tool`.
    pub const DYNAMODB_REQUESTS: &str = "draftline.dynamodb.requests";
    /// Tryton requests, by `tool`.
    pub const TRYTON_REQUESTS: &str = "draftline.tryton.requests";
    /// Tryton requests that got no answer (refused, reset, timed out), by `tool`.
    pub const TRYTON_FAILURES: &str = "draftline.tryton.failures";
    /// Stored items a call could not read and went on without (treated as
    /// absent and written anew), by `tool` and `record`.
    pub const UNREADABLE: &str = "draftline.stored.unreadable";
    /// Spans dropped, oldest first, from a full export queue (the collector
    /// does not keep up or does not answer).
    pub const DROPPED_SPANS: &str = "draftline.export.dropped_spans";
    /// Delivery attempts of the outbox's events, by `outcome` (`delivered`,
    /// `retried`, `dead`) and `channel` (`webhook`, `mail`).
    pub const DELIVERIES: &str = "draftline.deliveries";
    /// From an event to its delivery in seconds, by `channel`.
    pub const DELIVERY_LATENCY: &str = "draftline.delivery.latency";
}

/// Bucket boundaries of the delivery latency, in seconds: a first attempt
/// follows its commit within a second or a sweep, a retry within hours.
const LATENCY_BUCKETS: [f64; 14] = [
    0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3_600.0, 14_400.0,
];

/// The instance's reader: the provider registers its pipeline with it,
/// and the flush collects from it.
#[derive(Debug, Clone)]
struct SharedReader(Arc<ManualReader>);

impl SharedReader {
    /// A reader collecting with `temporality`.
    fn new(temporality: settings::Temporality) -> Self {
        Self(Arc::new(
            ManualReader::builder()
                .with_temporality(match temporality {
                    settings::Temporality::Cumulative => Temporality::Cumulative,
                    settings::Temporality::Delta => Temporality::Delta,
                    settings::Temporality::LowMemory => Temporality::LowMemory,
                })
                .build(),
        ))
    }
}

impl MetricReader for SharedReader {
    fn register_pipeline(&self, pipeline: Weak<Pipeline>) {
        self.0.register_pipeline(pipeline);
    }

    fn collect(&self, rm: &mut ResourceMetrics) -> OTelSdkResult {
        self.0.collect(rm)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.0.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.0.shutdown_with_timeout(timeout)
    }

    fn temporality(&self, kind: InstrumentKind) -> Temporality {
        self.0.temporality(kind)
    }
}

/// A warm instance's instruments.
#[derive(Debug)]
pub(super) struct Metrics {
    /// Kept so the instruments stay registered (dropping it shuts them down).
    _provider: SdkMeterProvider,
    reader: SharedReader,
    calls: Counter<u64>,
    call_duration: Histogram<f64>,
    stage_duration: Histogram<f64>,
    replays: Counter<u64>,
    key_conflicts: Counter<u64>,
    in_flight: Counter<u64>,
    refusals: Counter<u64>,
    questions: Counter<u64>,
    dynamodb_requests: Counter<u64>,
    tryton_requests: Counter<u64>,
    tryton_failures: Counter<u64>,
    unreadable: Counter<u64>,
    dropped_spans: Counter<u64>,
    deliveries: Counter<u64>,
    delivery_latency: Histogram<f64>,
}

/// The histogram of the time from an event to its delivery.
fn delivery_latency(meter: &opentelemetry::metrics::Meter) -> Histogram<f64> {
    meter
        .f64_histogram(names::DELIVERY_LATENCY)
        .with_unit("s")
        .with_description("From an event to its delivery, by channel")
        .with_boundaries(LATENCY_BUCKETS.to_vec())
        .build()
}

impl Metrics {
    pub(super) fn new(resource: Resource, temporality: settings::Temporality, scope: InstrumentationScope) -> Self {
        let reader = SharedReader::new(temporality);
        let provider = SdkMeterProvider::builder()
            .with_reader(reader.clone())
            .with_resource(resource)
            .build();
        let meter = provider.meter_with_scope(scope);
        let counter = |name: &'static str, unit: &'static str, description: &'static str| {
            meter
                .u64_counter(name)
                .with_unit(unit)
                .with_description(description)
                .build()
        };
        let histogram = |name: &'static str, description: &'static str| {
            meter
                .f64_histogram(name)
                .with_unit("s")
                .with_description(description)
                .with_boundaries(DURATION_BUCKETS.to_vec())
                .build()
        };
        Self {
            calls: counter(names::CALLS, "{call}", "Tool calls, by tool, transport and code"),
            call_duration: histogram(names::CALL_DURATION, "Tool call latency, by tool and code"),
            stage_duration: histogram(names::STAGE_DURATION, "Time in each stage of a call, by tool and stage"),
            replays: counter(names::REPLAYS, "{call}", "Answers replayed from their key record"),
            key_conflicts: counter(
                names::KEY_CONFLICTS,
                "{call}",
                "Idempotency keys used again with other arguments",
            ),
            in_flight: counter(
                names::IN_FLIGHT,
                "{call}",
                "Answers that the call's key is still being worked on",
            ),
            refusals: counter(
                names::REFUSALS,
                "{call}",
                "Calls refused for who the caller is or what it may do",
            ),
            questions: counter(names::QUESTIONS, "{call}", "Near-duplicate questions asked of a person"),
            dynamodb_requests: counter(
                names::DYNAMODB_REQUESTS,
                "{request}",
                "DynamoDB requests (SDK attempts)",
            ),
            tryton_requests: counter(names::TRYTON_REQUESTS, "{request}", "Requests to Tryton's REST API"),
            tryton_failures: counter(
                names::TRYTON_FAILURES,
                "{request}",
                "Requests to Tryton that got no answer",
            ),
            unreadable: counter(
                names::UNREADABLE,
                "{item}",
                "Stored items a call could not read and went on without",
            ),
            dropped_spans: counter(
                names::DROPPED_SPANS,
                "{span}",
                "Spans dropped, oldest first, from a full export queue",
            ),
            deliveries: counter(
                names::DELIVERIES,
                "{attempt}",
                "Delivery attempts, by outcome and channel",
            ),
            delivery_latency: delivery_latency(&meter),
            _provider: provider,
            reader,
        }
    }

    /// Counts one delivery attempt, and times it from its event if it was
    /// delivered.
    pub(super) fn delivery(&self, attempted: &DeliveryAttempt<'_>) {
        let channel = KeyValue::new("channel", attempted.channel);
        self.deliveries
            .add(1, &[KeyValue::new("outcome", attempted.outcome), channel.clone()]);
        if let Some(latency) = attempted.latency {
            self.delivery_latency.record(latency.as_secs_f64(), &[channel]);
        }
    }

    /// Counts and times the call `line` tells, under the name `tool`.
    pub(super) fn record(&self, tool: &'static str, line: &CallLine<'_>) {
        let code = line.code.unwrap_or("OK");
        let by_tool = [KeyValue::new("tool", tool)];
        self.calls.add(
            1,
            &[
                KeyValue::new("tool", tool),
                KeyValue::new("transport", line.transport),
                KeyValue::new("code", code),
            ],
        );
        self.call_duration.record(
            line.duration.as_secs_f64(),
            &[KeyValue::new("tool", tool), KeyValue::new("code", code)],
        );
        for (stage, spent) in line.recorded.stages.iter() {
            if !spent.is_zero() {
                self.stage_duration.record(
                    spent.as_secs_f64(),
                    &[KeyValue::new("tool", tool), KeyValue::new("stage", stage.as_str())],
                );
            }
        }
        if line.replayed {
            self.replays.add(1, &by_tool);
        }
        match (code, line.status) {
            ("CONFLICT", 422) => self.key_conflicts.add(1, &by_tool),
            ("CONFLICT", _) => self.in_flight.add(1, &by_tool),
            ("UNAUTHENTICATED" | "FORBIDDEN", _) => self
                .refusals
                .add(1, &[KeyValue::new("tool", tool), KeyValue::new("code", code)]),
            ("INPUT_REQUIRED", _) => self.questions.add(1, &by_tool),
            _ => {}
        }
        let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
        if line.sdk_attempts > 0 {
            self.dynamodb_requests.add(count(line.sdk_attempts), &by_tool);
        }
        if line.tryton_requests > 0 {
            self.tryton_requests.add(count(line.tryton_requests), &by_tool);
            let unanswered = line
                .recorded
                .requests
                .iter()
                .filter(|request| request.system == "tryton" && !request.answered)
                .count();
            if unanswered > 0 {
                self.tryton_failures.add(count(unanswered), &by_tool);
            }
        }
        for record in &line.recorded.unreadable {
            self.unreadable
                .add(1, &[KeyValue::new("tool", tool), KeyValue::new("record", *record)]);
        }
    }

    /// Counts `spans` dropped from the full export queue.
    pub(super) fn dropped_spans(&self, spans: u64) {
        self.dropped_spans.add(spans, &[]);
    }

    /// Everything recorded since the last collection (or in all, for
    /// cumulative temporality); `None` when nothing was recorded.
    pub(super) fn collect(&self) -> Option<ResourceMetrics> {
        let mut collected = ResourceMetrics::default();
        match self.reader.collect(&mut collected) {
            Ok(()) if collected.scope_metrics().next().is_some() => Some(collected),
            Ok(()) => None,
            Err(err) => {
                tracing::warn!(error = %err, "metrics not collected");
                None
            }
        }
    }
}
