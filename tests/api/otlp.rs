//! Each call exported as OpenTelemetry spans over OTLP/HTTP protobuf, read
//! by a test receiver that decodes what arrives with opentelemetry-proto's
//! own types: the call span continuing the caller's trace, its stage spans,
//! one span per DynamoDB attempt and per Tryton request, nothing secret in
//! any attribute, and a collector that is down or hangs never failing or
//! holding up a call.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use draftline_cli::LocalOptions;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{KeyValue, any_value};
use opentelemetry_proto::tonic::trace::v1::Span;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use prost::Message;
use serde_json::{Value, json};
use tokio::net::TcpListener;

use crate::function_process::{function_env, function_token};
use crate::helpers::{Backend, TestApp, diff, on_both_backends, po_input, spawn_app, spawn_app_with_on};
use crate::vercel::VercelFunction;

/// The caller's trace the tests continue.
const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT: &str = "00f067aa0ba902b7";

/// What a test OTLP/HTTP collector received: each `POST /v1/traces` body,
/// raw and decoded.
#[derive(Clone, Default)]
struct Received(Arc<Mutex<Vec<(Bytes, ExportTraceServiceRequest)>>>);

/// A collector on 127.0.0.1 that accepts `POST /v1/traces` (protobuf) and
/// answers an empty `ExportTraceServiceResponse`.
struct OtlpReceiver {
    /// The base URL (`OTEL_EXPORTER_OTLP_ENDPOINT`).
    url: String,
    received: Received,
}

impl OtlpReceiver {
    async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let received = Received::default();
        let store = received.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let store = store.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |request: hyper::Request<Incoming>| {
                        let store = store.clone();
                        async move {
                            let path_ok =
                                request.method() == hyper::Method::POST && request.uri().path() == "/v1/traces";
                            let protobuf = request
                                .headers()
                                .get("content-type")
                                .is_some_and(|v| v.as_bytes() == b"application/x-protobuf");
                            let body = request.into_body().collect().await.unwrap().to_bytes();
                            let status = if path_ok && protobuf {
                                let decoded = ExportTraceServiceRequest::decode(body.clone())
                                    .expect("an ExportTraceServiceRequest");
                                store.0.lock().unwrap().push((body, decoded));
                                200
                            } else {
                                404
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
        let received = self.received.0.lock().unwrap();
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

    /// Every request body received so far, raw.
    fn bodies(&self) -> Vec<Bytes> {
        self.received
            .0
            .lock()
            .unwrap()
            .iter()
            .map(|(raw, _)| raw.clone())
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
                    .starts_with("spans not exported"),
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
