//! Each call exported as OpenTelemetry spans over OTLP/HTTP protobuf, read
//! by a test receiver that decodes what arrives with opentelemetry-proto's
//! own types: the call span continuing the caller's trace, its stage spans,
//! one span per DynamoDB attempt and per Tryton request, nothing secret in
//! any attribute, and a collector that is down or hangs never failing or
//! holding up a call.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use draftline_cli::{LocalErp, LocalOptions};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{KeyValue, any_value};
use opentelemetry_proto::tonic::trace::v1::Span;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use prost::Message;
use serde_json::{Value, json};
use tokio::net::TcpListener;

use crate::function_process::{function_env, function_token};
use crate::helpers::{
    Backend, TestApp, diff, on_both_backends, po_input, spawn_app, spawn_app_on_erp, spawn_app_with_on,
};
use crate::vercel::VercelFunction;

/// The caller's trace the tests continue.
const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT: &str = "00f067aa0ba902b7";

/// What a test OTLP/HTTP collector received: each `POST /v1/traces` and
/// `POST /v1/metrics` body, raw and decoded.
#[derive(Clone, Default)]
struct Received {
    traces: Arc<Mutex<Vec<(Bytes, ExportTraceServiceRequest)>>>,
    metrics: Arc<Mutex<Vec<(Bytes, ExportMetricsServiceRequest)>>>,
}

/// A collector on 127.0.0.1 that accepts `POST /v1/traces` and
/// `POST /v1/metrics` (protobuf) and answers an empty response, after
/// `hold` for the first traces request.
struct OtlpReceiver {
    /// The base URL (`OTEL_EXPORTER_OTLP_ENDPOINT`).
    url: String,
    received: Received,
}

impl OtlpReceiver {
    async fn start() -> Self {
        Self::holding_first(Duration::ZERO).await
    }

    /// A receiver that answers its first traces request only after `hold`.
    async fn holding_first(hold: Duration) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let received = Received::default();
        let store = received.clone();
        let first = Arc::new(std::sync::atomic::AtomicBool::new(true));
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let store = store.clone();
                let first = first.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |request: hyper::Request<Incoming>| {
                        let store = store.clone();
                        let first = first.clone();
                        async move {
                            let post = request.method() == hyper::Method::POST;
                            let path = request.uri().path().to_owned();
                            let protobuf = request
                                .headers()
                                .get("content-type")
                                .is_some_and(|v| v.as_bytes() == b"application/x-protobuf");
                            let body = request.into_body().collect().await.unwrap().to_bytes();
                            let status = match path.as_str() {
                                "/v1/traces" if post && protobuf => {
                                    if first.swap(false, std::sync::atomic::Ordering::SeqCst) {
                                        tokio::time::sleep(hold).await;
                                    }
                                    let decoded = ExportTraceServiceRequest::decode(body.clone())
                                        .expect("an ExportTraceServiceRequest");
                                    store.traces.lock().unwrap().push((body, decoded));
                                    200
                                }
                                "/v1/metrics" if post && protobuf => {
                                    let decoded = ExportMetricsServiceRequest::decode(body.clone())
                                        .expect("an ExportMetricsServiceRequest");
                                    store.metrics.lock().unwrap().push((body, decoded));
                                    200
                                }
                                _ => 404,
                            };
                            Ok::<_, Infallible>(
                                hyper::Response::builder()
                                    .status(status)
                                    .header("content-type", "application/x-protobuf")
                                    .body(Full::new(Bytes::new()))
                                    .unwrap(),
                            )
                        }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(socket), service)
                        .await;
                });
            }
        });
        Self { url, received }
    }

    /// Every span received so far, with its resource's attributes.
    fn spans(&self) -> Vec<(Vec<KeyValue>, Span)> {
        let received = self.received.traces.lock().unwrap();
        let mut spans = Vec::new();
        for (_, request) in received.iter() {
            for resource_spans in &request.resource_spans {
                let resource = resource_spans
                    .resource
                    .as_ref()
                    .map(|r| r.attributes.clone())
                    .unwrap_or_default();
                for scope in &resource_spans.scope_spans {
                    for span in &scope.spans {
                        spans.push((resource.clone(), span.clone()));
                    }
                }
            }
        }
        spans
    }

    /// How many traces requests arrived.
    fn trace_requests(&self) -> usize {
        self.received.traces.lock().unwrap().len()
    }

    /// Every metrics request received so far, decoded, in order.
    fn metrics(&self) -> Vec<ExportMetricsServiceRequest> {
        self.received
            .metrics
            .lock()
            .unwrap()
            .iter()
            .map(|(_, decoded)| decoded.clone())
            .collect()
    }

    /// Every request body received so far, raw (traces and metrics).
    fn bodies(&self) -> Vec<Bytes> {
        let traces = self.received.traces.lock().unwrap();
        let metrics = self.received.metrics.lock().unwrap();
        traces
            .iter()
            .map(|(raw, _)| raw.clone())
            .chain(metrics.iter().map(|(raw, _)| raw.clone()))
            .collect()
    }
}

/// An attribute's value as text (strings as they are, others printed).
fn text(value: &Option<opentelemetry_proto::tonic::common::v1::AnyValue>) -> String {
    match value.as_ref().and_then(|v| v.value.as_ref()) {
        Some(any_value::Value::StringValue(s)) => s.clone(),
        Some(any_value::Value::BoolValue(b)) => b.to_string(),
        Some(any_value::Value::IntValue(i)) => i.to_string(),
        Some(any_value::Value::DoubleValue(d)) => d.to_string(),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    }
}

fn attribute(attributes: &[KeyValue], key: &str) -> Option<String> {
    attributes.iter().find(|kv| kv.key == key).map(|kv| text(&kv.value))
}

fn attr(span: &Span, key: &str) -> Option<String> {
    attribute(&span.attributes, key)
}

/// A local server on `backend` exporting to `endpoint`, with `extra` settings.
async fn exporting_app(backend: Backend, endpoint: &str, extra: &[(&str, &str)]) -> TestApp {
    let mut settings = vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT".to_owned(), endpoint.to_owned()),
        ("OTEL_SERVICE_NAME".to_owned(), "draftline-test".to_owned()),
    ];
    settings.extend(extra.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    spawn_app_with_on(
        backend,
        LocalOptions {
            settings,
            ..LocalOptions::default()
        },
    )
    .await
}

on_both_backends! {
    #[tokio::test]
    async fn a_po_draft_is_exported_as_its_call_span_its_stages_and_one_span_per_dynamodb_and_tryton_request(backend) {
        let receiver = OtlpReceiver::start().await;
        let app = exporting_app(backend, &receiver.url, &[]).await;
        let (db_before, erp_before) = (app.round_trips(), app.erp_requests());
        let key = "otel-raw-idempotency-key-7f3a";
        let reply = app
            .call(
                "buyer-sby",
                "purchasing_create_po_draft",
                &po_input("otel-draft"),
                &[("idempotency-key", key.to_owned()), ("traceparent", TRACEPARENT.to_owned())],
            )
            .await;
        assert_eq!(reply.status, 201, "{:?}", reply.body);
        let db = diff(&db_before, &app.round_trips());
        let tryton_requests = app.erp_requests() - erp_before;

        // The spans were exported before the answer left: they are here now.
        let spans = receiver.spans();
        let calls: Vec<&Span> = spans.iter().map(|(_, s)| s).filter(|s| s.name == "tool purchasing_create_po_draft").collect();
        assert_eq!(calls.len(), 1, "one call span: {spans:#?}");
        let call = calls[0];
        assert_eq!(call.kind(), SpanKind::Server);
        assert_eq!(hex::encode(&call.trace_id), TRACE_ID);
        assert_eq!(hex::encode(&call.parent_span_id), PARENT, "parented to the caller's span");
        assert_eq!(call.span_id.len(), 8);
        assert!(call.end_time_unix_nano > call.start_time_unix_nano);
        assert_eq!(attr(call, "tool").as_deref(), Some("purchasing_create_po_draft"));
        assert_eq!(attr(call, "outcome").as_deref(), Some("ok"));
        assert_eq!(attr(call, "status").as_deref(), Some("201"));
        assert_eq!(attr(call, "http.response.status_code").as_deref(), Some("201"));
        assert_eq!(attr(call, "retryable").as_deref(), Some("false"));
        assert_eq!(attr(call, "replayed").as_deref(), Some("false"));
        assert_eq!(attr(call, "request_id").as_deref(), reply.header("x-request-id"));
        assert_eq!(attr(call, "user").as_deref(), Some("buyer-sby"));
        assert!(attr(call, "tenant").is_some_and(|t| !t.is_empty()));
        assert_eq!(attr(call, "contract").map(|c| c.len()), Some(12));
        assert_eq!(attr(call, "key_hash").map(|k| k.len()), Some(12));
        for (resource, span) in &spans {
            assert_eq!(hex::encode(&span.trace_id), TRACE_ID, "one trace: {span:?}");
            assert_eq!(attribute(resource, "service.name").as_deref(), Some("draftline-test"));
        }

        // Stage spans are the call span's children.
        let stages: Vec<&Span> = spans.iter().map(|(_, s)| s).filter(|s| s.name.starts_with("stage ")).collect();
        for stage in &stages {
            assert_eq!(stage.parent_span_id, call.span_id, "{stage:?}");
            assert_eq!(stage.kind(), SpanKind::Internal);
        }
        let stage_names: std::collections::BTreeSet<&str> = stages.iter().map(|s| s.name.as_str()).collect();
        for expected in ["stage auth", "stage validation", "stage idempotency", "stage erp"] {
            assert!(stage_names.contains(expected), "{expected} in {stage_names:?}");
        }
        let stage_ids: Vec<&Vec<u8>> = stages.iter().map(|s| &s.span_id).collect();

        // One CLIENT span per DynamoDB attempt: by operation, exactly the
        // requests the app's DynamoDB client sent, and as many as the call
        // logged as its SDK attempts.
        let dynamodb: Vec<&Span> = spans
            .iter()
            .map(|(_, s)| s)
            .filter(|s| attr(s, "db.system").as_deref() == Some("dynamodb"))
            .collect();
        let mut by_operation = std::collections::BTreeMap::new();
        for span in &dynamodb {
            assert_eq!(span.kind(), SpanKind::Client);
            assert!(span.parent_span_id == call.span_id || stage_ids.contains(&&span.parent_span_id), "{span:?}");
            *by_operation.entry(attr(span, "db.operation.name").unwrap()).or_insert(0_u64) += 1;
        }
        assert_eq!(by_operation, db, "a span per DynamoDB request");
        assert_eq!(attr(call, "sdk_attempts"), Some(dynamodb.len().to_string()));

        // One CLIENT span per Tryton request (none on the built-in backend).
        let tryton: Vec<&Span> = spans
            .iter()
            .map(|(_, s)| s)
            .filter(|s| attr(s, "peer.service").as_deref() == Some("tryton"))
            .collect();
        assert_eq!(tryton.len() as u64, tryton_requests, "a span per Tryton request");
        assert_eq!(attr(call, "tryton_requests"), Some(tryton_requests.to_string()));
        if backend == Backend::Tryton {
            assert!(tryton_requests > 0);
        }
        for span in &tryton {
            assert_eq!(span.kind(), SpanKind::Client);
            assert!(span.parent_span_id == call.span_id || stage_ids.contains(&&span.parent_span_id), "{span:?}");
        }
        let mut ids: Vec<&Vec<u8>> = spans.iter().map(|(_, s)| &s.span_id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), spans.len(), "every span has an id of its own");
        assert_eq!(spans.len(), 1 + stages.len() + dynamodb.len() + tryton.len(), "{spans:#?}");

        // Nothing secret in any attribute, nor anywhere in what was sent.
        let token = app.token("buyer-sby");
        let note = po_input("otel-draft")["note"].as_str().unwrap().to_owned();
        for (resource, span) in &spans {
            for kv in resource.iter().chain(&span.attributes) {
                let value = text(&kv.value);
                for secret in [token.as_str(), note.as_str(), key] {
                    assert!(!value.contains(secret), "{} = {value}", kv.key);
                }
            }
        }
        for body in receiver.bodies() {
            for secret in [token.as_bytes(), note.as_bytes(), key.as_bytes()] {
                assert!(!body.windows(secret.len()).any(|w| w == secret), "a secret was exported");
            }
        }
    }
}

fn stock() -> Value {
    json!({"item_code": "BRG-0042"})
}

#[tokio::test]
async fn a_malformed_traceparent_is_exported_as_a_fresh_trace_whose_call_span_has_no_parent() {
    let receiver = OtlpReceiver::start().await;
    let app = exporting_app(Backend::Builtin, &receiver.url, &[]).await;
    let reply = app
        .call(
            "buyer-sby",
            "inventory_get_stock",
            &stock(),
            &[("traceparent", "00-not-a-trace-01".to_owned())],
        )
        .await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    let spans = receiver.spans();
    let call = spans
        .iter()
        .map(|(_, s)| s)
        .find(|s| s.name == "tool inventory_get_stock")
        .expect("a call span");
    assert!(call.parent_span_id.is_empty(), "no parent: {call:?}");
    assert_eq!(call.trace_id.len(), 16);
    assert_ne!(hex::encode(&call.trace_id), TRACE_ID);
    assert_ne!(call.trace_id, vec![0; 16]);
    assert_eq!(
        app.audit_items().await[0]["trace_id"],
        hex::encode(&call.trace_id),
        "the trace the audit item names"
    );
}

#[tokio::test]
async fn the_sampler_settings_decide_which_calls_are_exported() {
    let unsampled = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00";
    for (sampler, traceparent, exported) in [
        // The default follows the caller's decision.
        (None, TRACEPARENT, true),
        (None, unsampled, false),
        (Some("always_on"), unsampled, true),
        (Some("always_off"), TRACEPARENT, false),
        (Some("traceidratio"), TRACEPARENT, false),
    ] {
        let receiver = OtlpReceiver::start().await;
        let mut extra = vec![];
        if let Some(sampler) = sampler {
            extra.push(("OTEL_TRACES_SAMPLER", sampler));
            extra.push(("OTEL_TRACES_SAMPLER_ARG", "0"));
        }
        let app = exporting_app(Backend::Builtin, &receiver.url, &extra).await;
        let reply = app
            .call(
                "buyer-sby",
                "inventory_get_stock",
                &stock(),
                &[("traceparent", traceparent.to_owned())],
            )
            .await;
        assert_eq!(reply.status, 200);
        assert_eq!(!receiver.spans().is_empty(), exported, "{sampler:?} {traceparent}");
    }
}

/// A port nothing listens on.
fn closed_port() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap()
}

/// A collector that accepts connections and never answers.
async fn hanging_collector() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    addr
}

#[tokio::test]
async fn a_collector_that_is_down_or_hangs_never_fails_nor_holds_up_a_call_and_costs_one_warn_line() {
    let app = spawn_app().await;
    let token = function_token("buyer-sby");
    for (what, collector) in [("down", closed_port()), ("hanging", hanging_collector().await)] {
        let mut env = function_env(&app);
        env.push(("OTEL_EXPORTER_OTLP_ENDPOINT".into(), format!("http://{collector}")));
        let function = VercelFunction::start_with_env(env!("CARGO_BIN_EXE_inventory_get_stock"), &env).await;
        for n in 0..2 {
            let request_id = format!("rid-otlp-{what}-{n}");
            let headers = vec![
                ("authorization", format!("Bearer {token}")),
                ("traceparent", TRACEPARENT.to_owned()),
                ("x-request-id", request_id.clone()),
            ];
            let sent = Instant::now();
            let (status, _, body) = function
                .post("/api/inventory_get_stock", &headers, stock().to_string())
                .await;
            let took = sent.elapsed();
            assert_eq!(status, 200, "{what}: {body}");
            // The flush bound is 300 ms; generous slack for a loaded machine.
            assert!(took < Duration::from_secs(3), "{what}: the call took {took:?}");
            let deadline = Instant::now() + Duration::from_secs(10);
            let warned = |function: &VercelFunction| {
                function
                    .process
                    .json_lines()
                    .into_iter()
                    .filter(|line| line["request_id"] == request_id.as_str() && line["level"] == "WARN")
                    .collect::<Vec<_>>()
            };
            while warned(&function).is_empty() && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            let warnings = warned(&function);
            assert_eq!(
                warnings.len(),
                1,
                "{what}: one warn line\n{}",
                function.process.stdout()
            );
            assert!(
                warnings[0]["message"]
                    .as_str()
                    .unwrap()
                    .starts_with("spans and metrics not exported"),
                "{warnings:?}"
            );
            assert!(!warnings[0].to_string().contains(&token), "no token in {warnings:?}");
            let call_line = function
                .process
                .json_lines()
                .into_iter()
                .find(|line| line["request_id"] == request_id.as_str() && line["message"] == "tool call")
                .expect("the call's log line");
            assert!(call_line["duration_ms"].as_f64().unwrap() < 3000.0, "{call_line}");
        }
    }
}

#[tokio::test]
async fn a_function_exports_with_its_service_and_resource_settings_and_sends_nothing_without_an_endpoint() {
    let app = spawn_app().await;
    let receiver = OtlpReceiver::start().await;
    let token = function_token("buyer-sby");
    let headers = vec![
        ("authorization", format!("Bearer {token}")),
        ("traceparent", TRACEPARENT.to_owned()),
    ];

    let mut env = function_env(&app);
    env.push((
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT".into(),
        format!("{}/v1/traces", receiver.url),
    ));
    env.push(("OTEL_SERVICE_NAME".into(), "erp-tools".into()));
    env.push((
        "OTEL_RESOURCE_ATTRIBUTES".into(),
        "deployment.environment=test%20run".into(),
    ));
    let exporting = VercelFunction::start_with_env(env!("CARGO_BIN_EXE_inventory_get_stock"), &env).await;
    let (status, _, _) = exporting
        .post("/api/inventory_get_stock", &headers, stock().to_string())
        .await;
    assert_eq!(status, 200);
    let spans = receiver.spans();
    let (resource, call) = spans
        .iter()
        .find(|(_, s)| s.name == "tool inventory_get_stock")
        .expect("the function exported its call span");
    assert_eq!(attribute(resource, "service.name").as_deref(), Some("erp-tools"));
    assert_eq!(
        attribute(resource, "deployment.environment").as_deref(),
        Some("test run")
    );
    assert_eq!(hex::encode(&call.parent_span_id), PARENT);
    assert!(
        spans
            .iter()
            .any(|(_, s)| attr(s, "db.system").as_deref() == Some("dynamodb")),
        "{spans:#?}"
    );
    let sent = receiver.bodies().len();

    // The same function without an endpoint: nothing is sent, nothing warned.
    let mut env = function_env(&app);
    env.push(("OTEL_SERVICE_NAME".into(), "erp-tools".into()));
    let quiet = VercelFunction::start_with_env(env!("CARGO_BIN_EXE_inventory_get_stock"), &env).await;
    let (status, _, _) = quiet
        .post("/api/inventory_get_stock", &headers, stock().to_string())
        .await;
    assert_eq!(status, 200);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(receiver.bodies().len(), sent, "nothing sent without an endpoint");
    assert!(
        !quiet.process.json_lines().iter().any(|line| line["level"] == "WARN"),
        "{}",
        quiet.process.stdout()
    );
}

#[tokio::test]
async fn a_call_of_a_tool_that_does_not_exist_is_exported_under_one_name_not_the_one_asked_for() {
    let receiver = OtlpReceiver::start().await;
    let app = exporting_app(Backend::Builtin, &receiver.url, &[]).await;
    let reply = app
        .http
        .post(app.url("/api/mcp"))
        .bearer_auth(app.token("buyer-sby"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "no_such_tool_4f9c", "arguments": stock()}})
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);
    let body = reply.text().await.unwrap();
    let spans = receiver.spans();
    let names: Vec<&str> = spans.iter().map(|(_, s)| s.name.as_str()).collect();
    assert!(names.contains(&"tool _unknown"), "{names:?} {body}");
    for (_, span) in &spans {
        assert!(!format!("{span:?}").contains("no_such_tool_4f9c"), "{span:?}");
    }
}

/// The data points of metric `name` in one metrics request: each point's
/// attributes (as text) and its value (a sum's value, a histogram's count).
fn points(request: &ExportMetricsServiceRequest, name: &str) -> Vec<(BTreeMap<String, String>, u64)> {
    use opentelemetry_proto::tonic::metrics::v1::metric::Data;
    use opentelemetry_proto::tonic::metrics::v1::number_data_point::Value as Number;
    let labels = |attributes: &[KeyValue]| {
        attributes
            .iter()
            .map(|kv| (kv.key.clone(), text(&kv.value)))
            .collect::<BTreeMap<_, _>>()
    };
    let mut found = Vec::new();
    for resource in &request.resource_metrics {
        for scope in &resource.scope_metrics {
            for metric in scope.metrics.iter().filter(|m| m.name == name) {
                match &metric.data {
                    Some(Data::Sum(sum)) => {
                        for point in &sum.data_points {
                            let value = match point.value {
                                Some(Number::AsInt(n)) => u64::try_from(n).unwrap(),
                                other => panic!("{name}: an integer sum, not {other:?}"),
                            };
                            found.push((labels(&point.attributes), value));
                        }
                    }
                    Some(Data::Histogram(histogram)) => {
                        for point in &histogram.data_points {
                            found.push((labels(&point.attributes), point.count));
                        }
                    }
                    other => panic!("{name}: a sum or a histogram, not {other:?}"),
                }
            }
        }
    }
    found
}

/// The total of metric `name` over the points whose labels include `with`.
fn total(request: &ExportMetricsServiceRequest, name: &str, with: &[(&str, &str)]) -> u64 {
    points(request, name)
        .into_iter()
        .filter(|(labels, _)| with.iter().all(|(k, v)| labels.get(*k).map(String::as_str) == Some(*v)))
        .map(|(_, value)| value)
        .sum()
}

on_both_backends! {
    #[tokio::test]
    async fn each_call_is_counted_and_timed_as_metrics_by_tool_code_and_stage_and_no_label_is_secret(backend) {
        let receiver = OtlpReceiver::start().await;
        let app = exporting_app(backend, &receiver.url, &[]).await;
        let erp_before = app.erp_requests();
        let po = "purchasing_create_po_draft";
        let key = "otel-metrics-raw-key-91c2";
        let draft = |user: &'static str, key: &'static str, input: Value| {
            let app = &app;
            async move { app.call(user, po, &input, &[("idempotency-key", key.to_owned())]).await }
        };
        assert_eq!(draft("buyer-sby", key, po_input("metrics-1")).await.status, 201);
        let replay = draft("buyer-sby", key, po_input("metrics-1")).await;
        assert_eq!(replay.status, 200, "{:?}", replay.body);
        let mut other = po_input("metrics-1");
        other["needed_by"] = json!("2026-12-20");
        assert_eq!(draft("buyer-sby", key, other).await.status, 422, "the key with other arguments");
        let twin = draft("buyer-sby", "otel-metrics-twin-key", po_input("metrics-2")).await;
        assert_eq!(twin.status, 409, "a near-duplicate question: {:?}", twin.body);
        assert_eq!(twin.body["error"]["code"], "INPUT_REQUIRED");
        assert_eq!(draft("clerk-sby", "otel-metrics-clerk-key", po_input("metrics-3")).await.status, 403);
        let read = app.call("buyer-sby", "inventory_get_stock", &stock(), &[]).await;
        assert_eq!(read.status, 200);

        // Cumulative (the default): the last export holds every call so far,
        // and it left before the last call's answer.
        let exported = receiver.metrics();
        let last = exported.last().expect("metrics were exported");
        let calls = |tool: &str, code: &str| total(last, "draftline.calls", &[("tool", tool), ("code", code)]);
        assert_eq!(calls(po, "OK"), 2, "the draft and its replay");
        assert_eq!(calls(po, "CONFLICT"), 1);
        assert_eq!(calls(po, "INPUT_REQUIRED"), 1);
        assert_eq!(calls(po, "FORBIDDEN"), 1);
        assert_eq!(calls("inventory_get_stock", "OK"), 1);
        assert_eq!(total(last, "draftline.calls", &[("transport", "http")]), 6);
        assert_eq!(total(last, "draftline.replays", &[("tool", po)]), 1);
        assert_eq!(total(last, "draftline.idempotency.conflicts", &[("tool", po)]), 1);
        assert_eq!(total(last, "draftline.idempotency.in_flight", &[]), 0);
        assert_eq!(
            total(last, "draftline.authorization.refusals", &[("tool", po), ("code", "FORBIDDEN")]),
            1
        );
        assert_eq!(total(last, "draftline.near_duplicate.questions", &[("tool", po)]), 1);
        // One latency point per call; stage times where a stage was passed.
        assert_eq!(total(last, "draftline.call.duration", &[("tool", po)]), 5);
        assert_eq!(total(last, "draftline.call.duration", &[("tool", po), ("code", "OK")]), 2);
        for stage in ["auth", "validation", "idempotency", "erp"] {
            assert!(
                total(last, "draftline.stage.duration", &[("tool", po), ("stage", stage)]) >= 1,
                "{stage}: {:?}",
                points(last, "draftline.stage.duration")
            );
        }
        assert!(total(last, "draftline.dynamodb.requests", &[("tool", po)]) >= 3);
        let tryton_requests = app.erp_requests() - erp_before;
        assert_eq!(total(last, "draftline.tryton.requests", &[]), tryton_requests);
        assert_eq!(total(last, "draftline.tryton.failures", &[]), 0);
        if backend == Backend::Tryton {
            assert!(tryton_requests > 0);
        }

        // Every label is a bounded name; none carries a token, key or note.
        let resource = &last.resource_metrics[0].resource.as_ref().unwrap().attributes;
        assert_eq!(attribute(resource, "service.name").as_deref(), Some("draftline-test"));
        assert_eq!(attribute(resource, "service.instance.id").map(|id| id.len()), Some(32));
        let token = app.token("buyer-sby");
        let note = po_input("x")["note"].as_str().unwrap().to_owned();
        for request in &exported {
            for metric in request.resource_metrics.iter().flat_map(|r| &r.scope_metrics).flat_map(|s| &s.metrics) {
                for (labels, _) in points(request, &metric.name) {
                    for (name, value) in &labels {
                        assert!(["tool", "transport", "code", "stage"].contains(&name.as_str()), "{name} on {}", metric.name);
                        for secret in [token.as_str(), note.as_str(), key, "buyer-sby"] {
                            assert!(!value.contains(secret), "{}: {name} = {value}", metric.name);
                        }
                    }
                }
            }
        }
    }
}

#[tokio::test]
async fn calls_served_at_the_same_time_share_their_export_and_the_last_in_flight_answers_after_every_span_left() {
    // The collector holds its first request: the calls that end meanwhile
    // queue, and the next flush carries them together. A call that ends
    // while another is in flight answers at once; the last in flight
    // answers only once every call's spans are at the collector, so an
    // instance frozen after its last answer has nothing left to send.
    let receiver = OtlpReceiver::holding_first(Duration::from_millis(150)).await;
    let app = exporting_app(Backend::Builtin, &receiver.url, &[("OTEL_METRICS_EXPORTER", "none")]).await;
    let calls = (0..8).map(|n| {
        let (app, receiver) = (&app, &receiver);
        async move {
            let reply = app
                .call(
                    "buyer-sby",
                    "inventory_get_stock",
                    &stock(),
                    &[("x-request-id", format!("rid-shared-{n}"))],
                )
                .await;
            // How many of the calls' spans were at the collector when this
            // answer came.
            let exported = receiver
                .spans()
                .iter()
                .filter(|(_, s)| s.name == "tool inventory_get_stock")
                .count();
            (reply.status, exported)
        }
    });
    let answers = futures::future::join_all(calls).await;
    assert!(answers.iter().all(|(status, _)| *status == 200), "{answers:?}");
    assert!(
        answers.iter().any(|(_, exported)| *exported == 8),
        "the last in flight answered after all 8 spans left: {answers:?}"
    );
    let requests = receiver.trace_requests();
    assert!(requests < 8, "8 calls at once in {requests} export requests");
    assert!(receiver.metrics().is_empty(), "OTEL_METRICS_EXPORTER=none: no metrics");
}

#[tokio::test]
async fn an_mcp_tools_call_continues_the_traceparent_its_meta_carries_on_both_revisions() {
    let receiver = OtlpReceiver::start().await;
    let app = exporting_app(Backend::Builtin, &receiver.url, &[]).await;
    for (n, version) in ["2025-11-25", "2026-07-28"].into_iter().enumerate() {
        let request_id = format!("rid-mcp-otel-{n}");
        let mut meta = json!({"traceparent": TRACEPARENT, "tracestate": "rojo=00f067aa0ba902b7"});
        let mut request = app
            .http
            .post(app.url("/api/mcp"))
            .bearer_auth(app.token("buyer-sby"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", version)
            .header("x-request-id", &request_id)
            // The HTTP request's own trace loses to the one the message carries.
            .header("traceparent", "00-11111111111111111111111111111111-2222222222222222-01");
        if version == "2026-07-28" {
            meta["io.modelcontextprotocol/protocolVersion"] = json!(version);
            meta["io.modelcontextprotocol/clientInfo"] = json!({"name": "otlp-tests", "version": "1.0.0"});
            meta["io.modelcontextprotocol/clientCapabilities"] = json!({});
            request = request
                .header("mcp-method", "tools/call")
                .header("mcp-name", "inventory_get_stock");
        }
        let body = json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
            "params": {"name": "inventory_get_stock", "arguments": stock(), "_meta": meta}});
        let reply = request.body(body.to_string()).send().await.unwrap();
        assert_eq!(reply.status(), 200, "{version}");
        let text = reply.text().await.unwrap();
        assert!(!text.contains("\"isError\":true"), "{version}: {text}");
        let spans = receiver.spans();
        let call = spans
            .iter()
            .map(|(_, s)| s)
            .find(|s| attr(s, "request_id").as_deref() == Some(request_id.as_str()))
            .unwrap_or_else(|| panic!("{version}: the call span: {spans:#?}"));
        assert_eq!(call.name, "tool inventory_get_stock");
        assert_eq!(attr(call, "transport").as_deref(), Some("mcp"));
        assert_eq!(hex::encode(&call.trace_id), TRACE_ID, "{version}");
        assert_eq!(hex::encode(&call.parent_span_id), PARENT, "{version}");
        assert_eq!(call.trace_state, "rojo=00f067aa0ba902b7");
    }
}

/// A proxy on 127.0.0.1 in front of `upstream` (Tryton) that keeps the
/// `traceparent` of each request it forwards: what Tryton received.
async fn tracing_proxy(upstream: String) -> (String, Arc<Mutex<Vec<Option<String>>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = seen.clone();
    let client = reqwest::Client::new();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let (kept, client, upstream) = (kept.clone(), client.clone(), upstream.clone());
            tokio::spawn(async move {
                let service = service_fn(move |request: hyper::Request<Incoming>| {
                    let (kept, client, upstream) = (kept.clone(), client.clone(), upstream.clone());
                    async move {
                        let (parts, body) = request.into_parts();
                        let traceparent = parts.headers.get("traceparent").map(|v| v.to_str().unwrap().to_owned());
                        kept.lock().unwrap().push(traceparent);
                        let body = body.collect().await.unwrap().to_bytes();
                        let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
                        let mut forwarded = client.request(parts.method.clone(), format!("{upstream}{path}"));
                        for (name, value) in &parts.headers {
                            if name != "host" && name != "content-length" {
                                forwarded = forwarded.header(name, value);
                            }
                        }
                        let answer = forwarded.body(body).send().await.unwrap();
                        let mut response = hyper::Response::builder().status(answer.status());
                        for (name, value) in answer.headers() {
                            if name != "content-length" && name != "transfer-encoding" && name != "connection" {
                                response = response.header(name, value);
                            }
                        }
                        let bytes = answer.bytes().await.unwrap();
                        Ok::<_, Infallible>(response.body(Full::new(bytes)).unwrap())
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(socket), service)
                    .await;
            });
        }
    });
    (url, seen)
}

#[tokio::test]
async fn tryton_receives_in_its_traceparent_the_span_id_of_each_exported_tryton_span() {
    let receiver = OtlpReceiver::start().await;
    let database = tokio::task::spawn_blocking(crate::tryton::fresh_database)
        .await
        .unwrap();
    let (proxy, seen) = tracing_proxy(database.url.trim_end_matches('/').to_owned()).await;
    let mut proxied = database.clone();
    proxied.url = proxy;
    let settings = vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT".to_owned(), receiver.url.clone()),
        ("OTEL_SERVICE_NAME".to_owned(), "draftline-test".to_owned()),
    ];
    let app = spawn_app_on_erp(
        LocalErp::Tryton(proxied),
        LocalOptions {
            settings,
            ..LocalOptions::default()
        },
    )
    .await;
    let erp_before = app.erp_requests();
    let reply = app
        .call(
            "buyer-sby",
            "purchasing_create_po_draft",
            &po_input("otel-tryton-ids"),
            &[
                ("idempotency-key", "otel-tryton-ids-key".to_owned()),
                ("traceparent", TRACEPARENT.to_owned()),
            ],
        )
        .await;
    assert_eq!(reply.status, 201, "{:?}", reply.body);
    let tryton_requests = app.erp_requests() - erp_before;
    assert!(tryton_requests > 0);

    // What Tryton received in the caller's trace, by span id.
    let received: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .flatten()
        .filter_map(|traceparent| {
            let parts: Vec<&str> = traceparent.split('-').collect();
            (parts.len() == 4 && parts[1] == TRACE_ID).then(|| parts[2].to_owned())
        })
        .collect();
    let exported: Vec<String> = receiver
        .spans()
        .iter()
        .map(|(_, s)| s)
        .filter(|s| attr(s, "peer.service").as_deref() == Some("tryton"))
        .map(|s| hex::encode(&s.span_id))
        .collect();
    assert_eq!(received.len() as u64, tryton_requests, "{received:?}");
    let (mut received, mut exported) = (received, exported);
    received.sort();
    exported.sort();
    assert_eq!(received, exported, "each Tryton request is the span Tryton saw");
}

#[tokio::test]
async fn a_call_that_ends_while_another_is_in_flight_answers_at_once_and_its_spans_leave_within_a_second() {
    use crate::tryton_proxy::{Fault, Target, behind_a_proxy};
    let receiver = OtlpReceiver::start().await;
    let (app, proxy) = behind_a_proxy(LocalOptions {
        no_near_duplicate_check: true,
        settings: vec![
            ("OTEL_EXPORTER_OTLP_ENDPOINT".to_owned(), receiver.url.clone()),
            ("OTEL_METRICS_EXPORTER".to_owned(), "none".to_owned()),
        ],
        ..LocalOptions::default()
    })
    .await;
    // A draft whose create Tryton never answers stays in flight (until the
    // request timeout, 5 s).
    proxy.then(Target::CreatePurchase, Fault::Hang);
    let order = json!({
        "vendor_code": "V-00231", "needed_by": "2026-12-15", "client_ref": "held-1", "note": null,
        "lines": [{"item_code": "BRG-0042", "qty": 1, "uom": "BOX"}]
    });
    let headers = [
        ("idempotency-key", "held-1".to_owned()),
        ("x-request-id", "rid-held".to_owned()),
    ];
    let held_answered = std::sync::atomic::AtomicBool::new(false);
    let held = async {
        let reply = app
            .call("buyer-sby", "purchasing_create_po_draft", &order, &headers)
            .await;
        held_answered.store(true, std::sync::atomic::Ordering::SeqCst);
        reply
    };
    let exported = |request_id: &str| {
        receiver
            .spans()
            .iter()
            .any(|(_, s)| attr(s, "request_id").as_deref() == Some(request_id))
    };
    let read_meanwhile = async {
        let waited = Instant::now();
        while proxy.seen(Target::CreatePurchase) == 0 {
            assert!(
                waited.elapsed() < Duration::from_secs(10),
                "the draft reached its create"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let reply = app
            .call(
                "buyer-sby",
                "inventory_get_stock",
                &stock(),
                &[("x-request-id", "rid-meanwhile".to_owned())],
            )
            .await;
        let at_answer = exported("rid-meanwhile");
        let answered = Instant::now();
        while !exported("rid-meanwhile") && answered.elapsed() < Duration::from_secs(4) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let draft_in_flight = !held_answered.load(std::sync::atomic::Ordering::SeqCst);
        (reply.status, at_answer, answered.elapsed(), draft_in_flight)
    };
    let (held, (status, at_answer, arrived_after, draft_in_flight)) = tokio::join!(held, read_meanwhile);
    assert_eq!(status, 200);
    assert!(
        !at_answer,
        "another call in flight: the read answered before its spans left"
    );
    assert!(
        exported("rid-meanwhile") && arrived_after < Duration::from_millis(2500),
        "its spans left within a second or so ({arrived_after:?})"
    );
    assert!(draft_in_flight, "they left while the draft was still in flight");
    // The draft, the last call in flight, answered only after its own spans left.
    assert!(held.status >= 500, "{:?}", held.body);
    assert!(exported("rid-held"), "the last call in flight waited for its flush");
}

/// `calls` unauthenticated calls carrying a sampled `traceparent`, over 64
/// connections at once: their rate, in calls a second.
async fn refused_per_second(app: &TestApp, calls: usize) -> f64 {
    const CONNECTIONS: usize = 64;
    let url = app.url("/api/inventory_get_stock");
    let started = Instant::now();
    let tasks: Vec<_> = (0..CONNECTIONS)
        .map(|n| {
            let (http, url) = (app.http.clone(), url.clone());
            tokio::spawn(async move {
                for _ in (n..calls).step_by(CONNECTIONS) {
                    let reply = http
                        .post(&url)
                        .header("traceparent", TRACEPARENT)
                        .header("content-type", "application/json")
                        .body(stock().to_string())
                        .send()
                        .await
                        .unwrap();
                    assert_eq!(reply.status(), 401);
                    reply.bytes().await.unwrap();
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    calls as f64 / started.elapsed().as_secs_f64()
}

/// A throughput ratio, so it is measured alone (scripts/test runs it in a
/// step of its own): among the suite's parallel tests, the two cores' load
/// swings by more than the bound between one round and the next.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "measured alone: scripts/test runs it after the suite"]
async fn a_collector_that_never_answers_costs_no_throughput_and_its_queue_stays_within_its_cap() {
    let without = spawn_app().await;
    assert!(without.server.app.exporter().is_none(), "no collector configured");
    let dead = exporting_app(Backend::Builtin, &format!("http://{}", hanging_collector().await), &[]).await;
    let exporter = dead.server.app.exporter().expect("an exporter");
    // Warm both; a few flushes time out in a row and the breaker opens.
    refused_per_second(&without, 512).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while !exporter.queue_stats().open {
        assert!(Instant::now() < deadline, "{:?}", exporter.queue_stats());
        refused_per_second(&dead, 256).await;
    }
    // Thousands of calls each, in alternating rounds (so that other tests
    // running at the same time load both alike): the median round's ratio.
    let mut ratios = Vec::new();
    let (mut base, mut with_dead) = (0f64, 0f64);
    for _ in 0..9 {
        let round_base = refused_per_second(&without, 1500).await;
        let round_dead = refused_per_second(&dead, 1500).await;
        ratios.push(round_dead / round_base);
        base += round_base / 9.0;
        with_dead += round_dead / 9.0;
    }
    ratios.sort_by(f64::total_cmp);
    let ratio = ratios[ratios.len() / 2];
    assert!(
        ratio >= 0.8,
        "{with_dead:.0} calls/s with a collector that never answers, {base:.0} with none (rounds: {ratios:.2?})"
    );
    let stats = exporter.queue_stats();
    // It filled, and never held more: the oldest calls' spans went.
    assert_eq!(stats.most_queued, stats.cap, "{stats:?}");
    assert!(stats.open, "{stats:?}");
    assert!(stats.dropped_spans > 0, "the oldest spans were dropped: {stats:?}");
    eprintln!(
        "{with_dead:.0} calls/s with a collector that never answers, {base:.0} with none (median ratio {ratio:.2}); \
         {stats:?}"
    );
}

#[tokio::test]
async fn a_stored_item_a_call_could_not_read_is_counted_by_tool_and_record() {
    use aws_sdk_dynamodb::types::AttributeValue::S;
    let receiver = OtlpReceiver::start().await;
    let app = exporting_app(Backend::Builtin, &receiver.url, &[]).await;
    // The marker of po_input's items, without a version.
    app.put_item(std::collections::HashMap::from([
        ("pk".to_owned(), S("T#demo#B#SBY-01#NEAR#PO#V-00231".to_owned())),
        ("sk".to_owned(), S("ITEMS#BRG-0042,BRG-0043".to_owned())),
        ("kind".to_owned(), S("near_duplicate".to_owned())),
    ]))
    .await;
    let po = "purchasing_create_po_draft";
    let reply = app
        .call(
            "buyer-sby",
            po,
            &po_input("unreadable-1"),
            &[("idempotency-key", "otel-unreadable-1".to_owned())],
        )
        .await;
    assert_eq!(reply.status, 201, "{:?}", reply.body);
    let exported = receiver.metrics();
    let last = exported.last().expect("metrics were exported");
    let unreadable = |record: &str| total(last, "draftline.stored.unreadable", &[("tool", po), ("record", record)]);
    assert_eq!(
        unreadable("near_duplicate"),
        1,
        "{:?}",
        points(last, "draftline.stored.unreadable")
    );
    // Written anew by that draft: the next one reads it and counts nothing more.
    let again = app
        .call(
            "buyer-sby",
            po,
            &po_input("unreadable-2"),
            &[("idempotency-key", "otel-unreadable-2".to_owned())],
        )
        .await;
    assert_eq!(again.status, 409, "{:?}", again.body);
    let exported = receiver.metrics();
    let last = exported.last().expect("metrics were exported");
    assert_eq!(
        total(
            last,
            "draftline.stored.unreadable",
            &[("tool", po), ("record", "near_duplicate")]
        ),
        1
    );
}

#[tokio::test]
async fn each_delivery_attempt_is_a_span_linked_to_the_drafts_call_and_is_counted_by_outcome() {
    let receiver = OtlpReceiver::start().await;
    // The endpoint fails the first attempt, then takes the second.
    let endpoint = crate::webhooks::Endpoint::start(vec![(500, None)]).await;
    let app = crate::helpers::spawn_app_with(LocalOptions {
        settings: vec![
            ("OTEL_EXPORTER_OTLP_ENDPOINT".to_owned(), receiver.url.clone()),
            ("OTEL_SERVICE_NAME".to_owned(), "draftline-test".to_owned()),
        ],
        ..crate::webhooks::sweeping(None)
    })
    .await;
    crate::webhooks::set_endpoints(
        &app,
        json!([{"id": "orchestrator", "url": endpoint.url, "events": ["draft.created"],
                "secrets": [crate::webhooks::SECRET]}]),
    )
    .await;
    let trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    let drafted = app
        .call(
            "buyer-sby",
            "purchasing_create_po_draft",
            &po_input("otlp-delivery"),
            &[
                ("idempotency-key", "otlp-delivery".to_owned()),
                ("traceparent", format!("00-{trace_id}-00f067aa0ba902b7-01")),
            ],
        )
        .await;
    assert_eq!(drafted.status, 201, "{:?}", drafted.body);
    let call_span = receiver
        .spans()
        .into_iter()
        .map(|(_, span)| span)
        .find(|span| span.name == "tool purchasing_create_po_draft")
        .expect("the draft's call span was exported");
    assert_eq!(hex::encode(&call_span.trace_id), trace_id);

    endpoint.wait_for(1).await;
    // Past the first backoff (30 s, at most +20 %): the second attempt.
    app.clock.advance(chrono::Duration::seconds(61));
    endpoint.wait_for(2).await;
    let deliveries = || {
        receiver
            .spans()
            .into_iter()
            .map(|(_, span)| span)
            .filter(|span| span.name == "deliver draft.created")
            .collect::<Vec<Span>>()
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while deliveries().len() < 2 {
        assert!(Instant::now() < deadline, "two delivery spans: {:?}", deliveries());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let spans = deliveries();
    let event_id = endpoint.received()[0].header("webhook-id").to_owned();
    for (span, (attempt, outcome, status)) in spans.iter().zip([(1, "retried", 500), (2, "delivered", 200)]) {
        assert_eq!(span.kind, SpanKind::Client as i32);
        assert_ne!(hex::encode(&span.trace_id), trace_id, "a trace of its own");
        assert!(span.parent_span_id.is_empty(), "a root span");
        assert_eq!(span.links.len(), 1, "linked to the draft's call");
        assert_eq!(hex::encode(&span.links[0].trace_id), trace_id);
        assert_eq!(span.links[0].span_id, call_span.span_id, "the call span itself");
        for (key, value) in [
            ("draftline.event.id", event_id.clone()),
            ("draftline.event.type", "draft.created".to_owned()),
            ("draftline.delivery.channel", "webhook".to_owned()),
            ("draftline.delivery.endpoint", "orchestrator".to_owned()),
            ("draftline.delivery.attempt", attempt.to_string()),
            ("draftline.delivery.outcome", outcome.to_owned()),
            ("http.response.status_code", status.to_string()),
        ] {
            assert_eq!(attr(span, key).as_deref(), Some(value.as_str()), "{key}: {span:?}");
        }
    }

    // Counted by outcome and channel, the delivery timed from its event.
    let last = receiver.metrics().last().cloned().expect("metrics were exported");
    let deliveries = |outcome: &str| {
        total(
            &last,
            "draftline.deliveries",
            &[("outcome", outcome), ("channel", "webhook")],
        )
    };
    assert_eq!(
        (deliveries("retried"), deliveries("delivered"), deliveries("dead")),
        (1, 1, 0)
    );
    assert_eq!(
        total(&last, "draftline.delivery.latency", &[("channel", "webhook")]),
        1,
        "{:?}",
        points(&last, "draftline.delivery.latency")
    );
}
