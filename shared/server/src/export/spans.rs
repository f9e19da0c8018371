//! A call's spans, built from what its [`CallRecorder`] holds, with the
//! ids it already used: the call's own span id, the caller's parent, and
//! each Tryton request's span id (the one Tryton received in `traceparent`).

use std::borrow::Cow;
use std::time::{Duration, SystemTime};

use opentelemetry::trace::{SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState};
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanLinks};

use crate::edge::trace::{CallRecorder, Stage, StageSpan, span_id};
use crate::pipeline::outcome::CallLine;

/// The name of the call span: `tool <name>`.
pub fn call_span_name(tool: &str) -> String {
    format!("tool {tool}")
}

/// The spans of one finished call: the call span (SERVER), a span per
/// passage through a stage (its children), and a CLIENT span per DynamoDB
/// attempt and Tryton request (children of the stage span whose interval
/// holds them, else of the call span).
pub(super) fn call_spans(
    recorder: &CallRecorder,
    identified_in: Duration,
    line: &CallLine<'_>,
    scope: &InstrumentationScope,
) -> Vec<SpanData> {
    let context = recorder.context();
    let trace_id = TraceId::from_bytes(context.trace_id_bytes());
    let state = context
        .tracestate()
        .and_then(|state| state.parse::<TraceState>().ok())
        .unwrap_or_default();
    let ran = recorder.started().elapsed();
    // The recorder's offsets are from an Instant; the wall clock is read once.
    let started = SystemTime::now().checked_sub(ran).unwrap_or_else(SystemTime::now);
    let at = |offset: Duration| started + offset;
    let call_id = SpanId::from_bytes(recorder.span_id());
    let span =
        |id: SpanId, parent: SpanId, kind: SpanKind, name: Cow<'static, str>, from: SystemTime, to: SystemTime| {
            SpanData {
                span_context: SpanContext::new(trace_id, id, TraceFlags::SAMPLED, false, state.clone()),
                parent_span_id: parent,
                parent_span_is_remote: false,
                span_kind: kind,
                name,
                start_time: from,
                end_time: to,
                attributes: Vec::new(),
                dropped_attributes_count: 0,
                events: SpanEvents::default(),
                links: SpanLinks::default(),
                status: Status::Unset,
                instrumentation_scope: scope.clone(),
            }
        };
    let recorded = &line.recorded;
    let mut spans = Vec::with_capacity(2 + recorded.stage_spans.len() + recorded.requests.len());

    // The caller was identified just before the recorder started: that time
    // is the call's too, and its first auth span.
    let begun = started.checked_sub(identified_in).unwrap_or(started);
    let mut call = span(
        call_id,
        context
            .parent_span_id_bytes()
            .map_or(SpanId::INVALID, SpanId::from_bytes),
        SpanKind::Server,
        call_span_name(line.tool).into(),
        begun,
        at(ran),
    );
    call.parent_span_is_remote = context.parent_span_id_bytes().is_some();
    call.attributes = call_attributes(line);
    if let Some(err) = line.server_error {
        call.status = Status::error(err.code().as_str());
    }
    spans.push(call);

    let stage_span = |stage: Stage, from: SystemTime, to: SystemTime| {
        let mut stage_span = span(
            SpanId::from_bytes(span_id()),
            call_id,
            SpanKind::Internal,
            format!("stage {}", stage.as_str()).into(),
            from,
            to,
        );
        stage_span.attributes = vec![KeyValue::new("stage", stage.as_str())];
        stage_span
    };
    if !identified_in.is_zero() {
        spans.push(stage_span(Stage::Auth, begun, started));
    }
    let stages: Vec<(StageSpan, SpanId)> = recorded
        .stage_spans
        .iter()
        .map(|passage| {
            let data = stage_span(
                passage.stage,
                at(passage.started),
                at(passage.started + passage.duration),
            );
            let id = data.span_context.span_id();
            spans.push(data);
            (*passage, id)
        })
        .collect();

    for request in &recorded.requests {
        let end = request.started + request.duration;
        // The innermost stage passage that holds the request (stages nest:
        // a draft's ERP work runs inside its idempotency passage).
        let parent = stages
            .iter()
            .filter(|(passage, _)| passage.started <= request.started && end <= passage.started + passage.duration)
            .min_by_key(|(passage, _)| passage.duration)
            .map_or(call_id, |(_, id)| *id);
        let mut data = span(
            SpanId::from_bytes(request.span_id),
            parent,
            SpanKind::Client,
            format!("{} {}", request.system, request.operation).into(),
            at(request.started),
            at(end),
        );
        let mut attributes = vec![
            KeyValue::new("peer.service", request.system),
            KeyValue::new("operation", request.operation.clone()),
            KeyValue::new("answered", request.answered),
        ];
        if request.system == "dynamodb" {
            attributes.push(KeyValue::new("db.system", "dynamodb"));
            attributes.push(KeyValue::new("db.operation.name", request.operation.clone()));
        }
        data.attributes = attributes;
        if !request.answered {
            data.status = Status::error("no answer");
        }
        spans.push(data);
    }
    spans
}

/// The call span's attributes: the log line's names and values, never a
/// token, an argument, a note or a raw idempotency key.
fn call_attributes(line: &CallLine<'_>) -> Vec<KeyValue> {
    let mut attributes = vec![
        KeyValue::new("tool", line.tool.to_owned()),
        KeyValue::new("transport", line.transport),
        KeyValue::new("request_id", line.request_id.to_owned()),
        KeyValue::new("outcome", line.outcome),
        KeyValue::new("status", i64::from(line.status)),
        KeyValue::new("http.response.status_code", i64::from(line.status)),
        KeyValue::new("retryable", line.retryable),
        KeyValue::new("replayed", line.replayed),
        KeyValue::new(
            "dynamodb_round_trips",
            i64::try_from(line.round_trips).unwrap_or(i64::MAX),
        ),
        KeyValue::new("sdk_attempts", i64::try_from(line.sdk_attempts).unwrap_or(i64::MAX)),
        KeyValue::new(
            "tryton_requests",
            i64::try_from(line.tryton_requests).unwrap_or(i64::MAX),
        ),
    ];
    let optional = [
        ("contract", line.contract),
        ("tenant", line.tenant),
        ("user", line.user),
        ("key_hash", line.key_hash.as_deref()),
        ("code", line.code),
        ("agent_run_id", line.agent_run_id),
    ];
    attributes.extend(
        optional
            .into_iter()
            .filter_map(|(name, value)| Some(KeyValue::new(name, value?.to_owned()))),
    );
    attributes
}
