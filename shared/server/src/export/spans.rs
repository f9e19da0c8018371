//! A call's spans, built from what its [`CallRecorder`] holds, with the
//! ids it already used: the call's own span id, the caller's parent, and
//! each Tryton request's span id (the one Tryton received in `traceparent`).

use std::borrow::Cow;
use std::time::{Duration, SystemTime};

use opentelemetry::trace::{SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState};
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanLinks};

use super::DeliveryAttempt;
use crate::edge::trace::{CallRecorder, DependencyRequest, Stage, StageSpan, span_id};
use crate::pipeline::outcome::CallLine;

/// The name of the call span: `tool <name>`.
pub fn call_span_name(tool: &str) -> String {
    format!("tool {tool}")
}

/// The spans of one finished call: the call span (SERVER), a span per
/// passage through a stage (its children), and a CLIENT span per DynamoDB
/// attempt and Tryton request (children of the stage span whose interval
/// holds them, else of the call span). `tool` names the call span: the
/// tool called, or `_unknown` for one that does not exist.
pub(super) fn call_spans(
    recorder: &CallRecorder,
    tool: &str,
    line: &CallLine<'_>,
    scope: &InstrumentationScope,
) -> Vec<SpanData> {
    let context = recorder.context();
    let ran = recorder.started().elapsed();
    // The recorder's offsets are from an Instant; the wall clock is read once.
    let started = SystemTime::now().checked_sub(ran).unwrap_or_else(SystemTime::now);
    let at = |offset: Duration| started + offset;
    let trace = Trace {
        id: TraceId::from_bytes(context.trace_id_bytes()),
        state: context
            .tracestate()
            .and_then(|state| state.parse::<TraceState>().ok())
            .unwrap_or_default(),
        scope,
        call: SpanId::from_bytes(recorder.span_id()),
    };
    let recorded = &line.recorded;
    let mut spans = Vec::with_capacity(2 + recorded.stage_spans.len() + recorded.requests.len());

    // The caller was identified just before the recorder started: that time
    // is the call's too, and its first auth span.
    let identified_in = recorder.identified_in();
    let begun = started.checked_sub(identified_in).unwrap_or(started);
    let parent = context
        .parent_span_id_bytes()
        .map_or(SpanId::INVALID, SpanId::from_bytes);
    let mut call = trace.span(
        trace.call,
        parent,
        SpanKind::Server,
        call_span_name(tool).into(),
        (begun, at(ran)),
    );
    call.parent_span_is_remote = context.parent_span_id_bytes().is_some();
    call.attributes = call_attributes(tool, line);
    if let Some(err) = line.server_error {
        call.status = Status::error(err.code().as_str());
    }
    spans.push(call);

    if !identified_in.is_zero() {
        spans.push(trace.stage(Stage::Auth, (begun, started)));
    }
    let stages: Vec<(StageSpan, SpanId)> = recorded
        .stage_spans
        .iter()
        .map(|passage| {
            let data = trace.stage(
                passage.stage,
                (at(passage.started), at(passage.started + passage.duration)),
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
            .map_or(trace.call, |(_, id)| *id);
        spans.push(trace.request(request, parent, (at(request.started), at(end))));
    }
    spans
}

/// What every span of one call shares: its trace, the call span's id, and
/// the instrumentation scope.
struct Trace<'a> {
    id: TraceId,
    state: TraceState,
    scope: &'a InstrumentationScope,
    call: SpanId,
}

impl Trace<'_> {
    /// A span of the call, from `.0` to `.1`, sampled.
    fn span(
        &self,
        id: SpanId,
        parent: SpanId,
        kind: SpanKind,
        name: Cow<'static, str>,
        (from, to): (SystemTime, SystemTime),
    ) -> SpanData {
        SpanData {
            span_context: SpanContext::new(self.id, id, TraceFlags::SAMPLED, false, self.state.clone()),
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
            instrumentation_scope: self.scope.clone(),
        }
    }

    /// The span of one passage through `stage`, a child of the call span.
    fn stage(&self, stage: Stage, during: (SystemTime, SystemTime)) -> SpanData {
        let name = format!("stage {}", stage.as_str()).into();
        let mut span = self.span(
            SpanId::from_bytes(span_id()),
            self.call,
            SpanKind::Internal,
            name,
            during,
        );
        span.attributes = vec![KeyValue::new("stage", stage.as_str())];
        span
    }

    /// The CLIENT span of one DynamoDB attempt or Tryton request, with the
    /// span id it was sent with.
    fn request(&self, request: &DependencyRequest, parent: SpanId, during: (SystemTime, SystemTime)) -> SpanData {
        let name = format!("{} {}", request.system, request.operation).into();
        let mut data = self.span(
            SpanId::from_bytes(request.span_id),
            parent,
            SpanKind::Client,
            name,
            during,
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
        data
    }
}

/// The call span's attributes: the log line's names and values, never a
/// token, an argument, a note or a raw idempotency key.
fn call_attributes(tool: &str, line: &CallLine<'_>) -> Vec<KeyValue> {
    let mut attributes = vec![
        KeyValue::new("tool", tool.to_owned()),
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

/// A link to the span `traceparent` names (the call that wrote an event).
fn link_to(traceparent: &str) -> Option<opentelemetry::trace::Link> {
    let written_by = draftline_http::trace::TraceContext::continued(Some(traceparent), None)?;
    let flags = if written_by.sampled() {
        TraceFlags::SAMPLED
    } else {
        TraceFlags::default()
    };
    let context = SpanContext::new(
        TraceId::from_bytes(written_by.trace_id_bytes()),
        SpanId::from_bytes(written_by.parent_span_id_bytes()?),
        flags,
        true,
        TraceState::default(),
    );
    let attributes = vec![KeyValue::new("draftline.link", "event_written_by")];
    Some(opentelemetry::trace::Link::new(context, attributes, 0))
}

/// The span of one delivery attempt (CLIENT, `deliver <event type>`), in
/// a trace of its own, linked to the span of the call that wrote its event
/// when the event keeps it; `None` if the random ids came out invalid.
pub(super) fn delivery_span(attempted: &DeliveryAttempt<'_>, scope: &InstrumentationScope) -> Option<SpanData> {
    let trace_id = TraceId::from_bytes(rand::random());
    let context = SpanContext::new(
        trace_id,
        SpanId::from_bytes(span_id()),
        TraceFlags::SAMPLED,
        false,
        TraceState::default(),
    );
    if !context.is_valid() {
        return None;
    }
    let links = attempted.traceparent.and_then(link_to);
    let mut attributes = vec![
        KeyValue::new("draftline.event.id", attempted.event_id.to_owned()),
        KeyValue::new("draftline.event.type", attempted.event_type.to_owned()),
        KeyValue::new("draftline.delivery.channel", attempted.channel),
        KeyValue::new("draftline.delivery.endpoint", attempted.endpoint.to_owned()),
        KeyValue::new("draftline.delivery.attempt", i64::from(attempted.attempt)),
        KeyValue::new("draftline.delivery.outcome", attempted.outcome),
    ];
    if let Some(status) = attempted.status {
        attributes.push(KeyValue::new("http.response.status_code", i64::from(status)));
    }
    if let Some(error) = attempted.error {
        attributes.push(KeyValue::new(
            "error.message",
            error.chars().take(256).collect::<String>(),
        ));
    }
    Some(SpanData {
        span_context: context,
        parent_span_id: SpanId::INVALID,
        parent_span_is_remote: false,
        span_kind: SpanKind::Client,
        name: format!("deliver {}", attempted.event_type).into(),
        start_time: attempted.started,
        end_time: attempted.ended,
        attributes,
        dropped_attributes_count: 0,
        events: SpanEvents::default(),
        links: {
            let mut linked = SpanLinks::default();
            linked.links.extend(links);
            linked
        },
        status: match attempted.outcome {
            "delivered" => Status::Ok,
            _ => Status::error(
                attempted
                    .error
                    .unwrap_or("not delivered")
                    .chars()
                    .take(256)
                    .collect::<String>(),
            ),
        },
        instrumentation_scope: scope.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edge::trace::{self, TraceContext};
    use std::time::Instant;

    fn line(recorded: crate::edge::trace::Recorded) -> CallLine<'static> {
        CallLine {
            request_id: "rid-1",
            trace_id: None,
            tool: "purchasing_create_po_draft",
            transport: "http",
            contract: Some("0123456789ab"),
            tenant: Some("acme"),
            user: Some("buyer-sby"),
            key_hash: Some("ba5eba11c0de".to_owned()),
            outcome: "ok",
            status: 201,
            code: None,
            retryable: false,
            replayed: false,
            duration: Duration::from_millis(30),
            recorded,
            round_trips: 2,
            sdk_attempts: 2,
            tryton_requests: 1,
            agent_run_id: None,
            server_error: None,
        }
    }

    #[tokio::test]
    async fn each_request_is_the_child_of_the_innermost_stage_that_holds_it_and_keeps_its_span_id() {
        let context = TraceContext::continued(Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"), None)
            .expect("a valid traceparent");
        let call = CallRecorder::identified(context, Duration::from_millis(3));
        let tryton_id = [7; 8];
        call.run(async {
            trace::stage(Stage::Idempotency, async {
                trace::record_request("dynamodb", "GetItem", [1; 8], Instant::now(), true);
                trace::stage(Stage::Erp, async {
                    let sent = Instant::now();
                    tokio::time::sleep(Duration::from_millis(2)).await;
                    trace::record_request("tryton", "POST purchase.purchase", tryton_id, sent, false);
                })
                .await;
            })
            .await;
        })
        .await;
        tokio::time::sleep(Duration::from_millis(1)).await;
        // Outside every stage: the call span's child.
        let mut recorded = call.recorded();
        recorded.requests.push(trace::DependencyRequest {
            system: "dynamodb",
            operation: "PutItem".into(),
            span_id: [9; 8],
            started: call.started().elapsed(),
            duration: Duration::ZERO,
            answered: true,
        });
        let scope = InstrumentationScope::builder("test").build();
        let spans = call_spans(&call, "purchasing_create_po_draft", &line(recorded), &scope);
        let named = |name: &str| spans.iter().find(|s| s.name == name).expect(name);
        let root = named("tool purchasing_create_po_draft");
        assert_eq!(root.span_kind, SpanKind::Server);
        assert_eq!(root.span_context.span_id(), SpanId::from_bytes(call.span_id()));
        assert_eq!(
            root.parent_span_id,
            SpanId::from_bytes([0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7])
        );
        assert!(root.parent_span_is_remote);
        let auth = named("stage auth");
        assert_eq!(auth.start_time, root.start_time, "identification starts the call");
        let (idempotency, erp) = (named("stage idempotency"), named("stage erp"));
        assert_eq!(idempotency.parent_span_id, root.span_context.span_id());
        assert_eq!(
            named("dynamodb GetItem").parent_span_id,
            idempotency.span_context.span_id()
        );
        let tryton = named("tryton POST purchase.purchase");
        assert_eq!(tryton.span_context.span_id(), SpanId::from_bytes(tryton_id));
        assert_eq!(tryton.parent_span_id, erp.span_context.span_id(), "the innermost stage");
        assert_eq!(tryton.span_kind, SpanKind::Client);
        assert!(matches!(tryton.status, Status::Error { .. }), "no answer is an error");
        assert_eq!(named("dynamodb PutItem").parent_span_id, root.span_context.span_id());
        for span in &spans {
            assert!(span.start_time <= span.end_time, "{span:?}");
            assert!(
                root.start_time <= span.start_time && span.end_time <= root.end_time,
                "{span:?}"
            );
        }
        assert!(root.attributes.contains(&KeyValue::new("key_hash", "ba5eba11c0de")));
    }
}
