//! A function binary on AWS Lambda: a local implementation of the Lambda
//! Runtime API (plain HTTP, as the real one is) hands the real binary API
//! Gateway v2 HTTP API / Function URL events, and the test reads what the
//! binary posts back, as Lambda would turn it into the HTTP response.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::{Mutex, mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::function_process::{CHILD_TIMEOUT, FUNCTION_RESOURCE, FunctionProcess, function_env, function_token};
use crate::helpers::spawn_app;

const PREFIX: &str = "/2018-06-01/runtime";

/// What the function posted for one invocation.
pub(crate) enum Outcome {
    /// `POST /invocation/{id}/response`.
    Response(Value),
    /// `POST /invocation/{id}/error`.
    Error(Value),
}

struct Pending {
    id: String,
    event: Value,
}

#[derive(Default)]
struct RuntimeState {
    queue: Option<Mutex<mpsc::UnboundedReceiver<Pending>>>,
    waiting: std::sync::Mutex<HashMap<String, oneshot::Sender<Outcome>>>,
    init_errors: std::sync::Mutex<Vec<Value>>,
    unexpected: std::sync::Mutex<Vec<String>>,
}

/// The local Lambda Runtime API on 127.0.0.1.
pub(crate) struct LambdaRuntimeApi {
    addr: std::net::SocketAddr,
    state: Arc<RuntimeState>,
    queue: mpsc::UnboundedSender<Pending>,
    next_id: AtomicU64,
    server: JoinHandle<()>,
}

impl Drop for LambdaRuntimeApi {
    fn drop(&mut self) {
        self.server.abort();
    }
}

fn reply(status: StatusCode, body: Value) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

async fn runtime_api(state: Arc<RuntimeState>, request: Request<Incoming>) -> Response<Full<Bytes>> {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let body = match request.into_body().collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => Bytes::new(),
    };
    let parsed = || serde_json::from_slice::<Value>(&body).unwrap_or(Value::Null);
    let Some(route) = path.strip_prefix(PREFIX) else {
        state.unexpected.lock().unwrap().push(format!("{method} {path}"));
        return reply(StatusCode::NOT_FOUND, json!({"errorType": "NotFound"}));
    };
    match (method, route) {
        (Method::GET, "/invocation/next") => {
            let queue = state.queue.as_ref().unwrap();
            // One poller at a time, as the real API; it blocks until an event arrives.
            let Some(pending) = queue.lock().await.recv().await else {
                return reply(StatusCode::GONE, json!({}));
            };
            let deadline = chrono::Utc::now().timestamp_millis() + 30_000;
            let mut response = reply(StatusCode::OK, pending.event);
            let headers = response.headers_mut();
            headers.insert("lambda-runtime-aws-request-id", pending.id.parse().unwrap());
            headers.insert("lambda-runtime-deadline-ms", deadline.to_string().parse().unwrap());
            headers.insert(
                "lambda-runtime-invoked-function-arn",
                "arn:aws:lambda:us-east-1:123456789012:function:draftline-tool"
                    .parse()
                    .unwrap(),
            );
            headers.insert(
                "lambda-runtime-trace-id",
                format!(
                    "Root=1-67891233-abcdef012345678912345678;Parent=53995c3f42cd8ad8;Sampled=0;Lineage=x:{}",
                    pending.id
                )
                .parse()
                .unwrap(),
            );
            response
        }
        (Method::POST, "/init/error") => {
            state.init_errors.lock().unwrap().push(parsed());
            reply(StatusCode::ACCEPTED, json!({"status": "OK"}))
        }
        (Method::POST, route) => {
            let outcome = if let Some(id) = route
                .strip_prefix("/invocation/")
                .and_then(|r| r.strip_suffix("/response"))
            {
                Some((id.to_owned(), Outcome::Response(parsed())))
            } else {
                route
                    .strip_prefix("/invocation/")
                    .and_then(|r| r.strip_suffix("/error"))
                    .map(|id| (id.to_owned(), Outcome::Error(parsed())))
            };
            let Some((id, outcome)) = outcome else {
                state.unexpected.lock().unwrap().push(format!("POST {path}"));
                return reply(StatusCode::NOT_FOUND, json!({"errorType": "NotFound"}));
            };
            match state.waiting.lock().unwrap().remove(&id) {
                Some(waiter) => {
                    let _ = waiter.send(outcome);
                    reply(StatusCode::ACCEPTED, json!({"status": "OK"}))
                }
                None => reply(
                    StatusCode::BAD_REQUEST,
                    json!({"errorMessage": "unknown or already answered request id", "errorType": "InvalidRequestID"}),
                ),
            }
        }
        (method, _) => {
            state.unexpected.lock().unwrap().push(format!("{method} {path}"));
            reply(StatusCode::NOT_FOUND, json!({"errorType": "NotFound"}))
        }
    }
}

impl LambdaRuntimeApi {
    pub(crate) async fn start() -> Self {
        let (sender, receiver) = mpsc::unbounded_channel();
        let state = Arc::new(RuntimeState {
            queue: Some(Mutex::new(receiver)),
            ..RuntimeState::default()
        });
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let served = state.clone();
        let server = tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let state = served.clone();
                connections.spawn(async move {
                    let service = service_fn(move |request| {
                        let state = state.clone();
                        async move { Ok::<_, Infallible>(runtime_api(state, request).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Self {
            addr,
            state,
            queue: sender,
            next_id: AtomicU64::new(1),
            server,
        }
    }

    /// `AWS_LAMBDA_RUNTIME_API`.
    fn host(&self) -> String {
        self.addr.to_string()
    }

    /// Queues `event` as one invocation and waits for what the function posts back.
    pub(crate) async fn invoke(&self, event: Value) -> Outcome {
        let id = format!(
            "8476a536-e9f4-11e8-9739-{:012}",
            self.next_id.fetch_add(1, Ordering::Relaxed)
        );
        let (sender, receiver) = oneshot::channel();
        self.state.waiting.lock().unwrap().insert(id.clone(), sender);
        self.queue.send(Pending { id, event }).unwrap();
        tokio::time::timeout(CHILD_TIMEOUT, receiver)
            .await
            .expect("the function answers the invocation in time")
            .expect("the runtime API is still running")
    }
}

/// An API Gateway v2 HTTP API / Function URL event (payload format 2.0), as AWS sends it.
fn http_api_event(path: &str, headers: &[(&str, String)], body: &str, base64_body: bool) -> Value {
    let mut header_map = serde_json::Map::new();
    for (name, value) in [
        ("host", "abcdefg123.lambda-url.us-east-1.on.aws".to_owned()),
        ("content-type", "application/json".to_owned()),
        ("user-agent", "ai-sdk/5.0 draftline-test".to_owned()),
        ("x-amzn-trace-id", "Root=1-5e723db7-f2dd8a4ce6f7d2f9e1a3c1b0".to_owned()),
        ("x-forwarded-for", "203.0.113.7".to_owned()),
        ("x-forwarded-port", "443".to_owned()),
        ("x-forwarded-proto", "https".to_owned()),
    ] {
        header_map.insert(name.into(), Value::String(value));
    }
    for (name, value) in headers {
        header_map.insert(name.to_ascii_lowercase(), Value::String(value.clone()));
    }
    let body = if base64_body {
        STANDARD.encode(body.as_bytes())
    } else {
        body.to_owned()
    };
    let now = chrono::Utc::now();
    json!({
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": path,
        "rawQueryString": "",
        "headers": header_map,
        "requestContext": {
            "accountId": "123456789012",
            "apiId": "abcdefg123",
            "domainName": "abcdefg123.lambda-url.us-east-1.on.aws",
            "domainPrefix": "abcdefg123",
            "http": {
                "method": "POST",
                "path": path,
                "protocol": "HTTP/1.1",
                "sourceIp": "203.0.113.7",
                "userAgent": "ai-sdk/5.0 draftline-test"
            },
            "requestId": format!("req-{}", now.timestamp_nanos_opt().unwrap_or_default()),
            "routeKey": "$default",
            "stage": "$default",
            "time": now.format("%d/%b/%Y:%H:%M:%S +0000").to_string(),
            "timeEpoch": now.timestamp_millis()
        },
        "body": body,
        "isBase64Encoded": base64_body
    })
}

/// The HTTP response Lambda builds from the function's answer.
struct LambdaReply {
    status: u64,
    headers: serde_json::Map<String, Value>,
    body: Value,
}

impl LambdaReply {
    fn from(outcome: Outcome) -> Self {
        let answer = match outcome {
            Outcome::Response(answer) => answer,
            Outcome::Error(report) => panic!("the function reported an invocation error: {report}"),
        };
        let status = answer["statusCode"].as_u64().expect("statusCode");
        let headers = answer["headers"].as_object().cloned().unwrap_or_default();
        let raw = answer["body"].as_str().unwrap_or_default();
        let text = if answer["isBase64Encoded"] == true {
            String::from_utf8(STANDARD.decode(raw).unwrap()).unwrap()
        } else {
            raw.to_owned()
        };
        let body = serde_json::from_str(&text).unwrap_or_else(|_| panic!("the body is JSON: {text}"));
        Self { status, headers, body }
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .and_then(|(_, v)| v.as_str())
    }
}

pub(crate) fn lambda_env(
    runtime: &LambdaRuntimeApi,
    base: Vec<(String, String)>,
    function: &str,
) -> Vec<(String, String)> {
    let mut env = base;
    env.extend([
        ("AWS_LAMBDA_RUNTIME_API".into(), runtime.host()),
        ("AWS_LAMBDA_FUNCTION_NAME".into(), function.into()),
        ("AWS_LAMBDA_FUNCTION_MEMORY_SIZE".into(), "256".into()),
        ("AWS_LAMBDA_FUNCTION_VERSION".into(), "$LATEST".into()),
        ("AWS_LAMBDA_LOG_GROUP_NAME".into(), format!("/aws/lambda/{function}")),
        (
            "AWS_LAMBDA_LOG_STREAM_NAME".into(),
            "2026/11/29/[$LATEST]0123456789abcdef".into(),
        ),
        ("AWS_EXECUTION_ENV".into(), "AWS_Lambda_provided.al2023".into()),
        ("LAMBDA_TASK_ROOT".into(), "/var/task".into()),
    ]);
    env
}

/// A PO draft input whose `needed_by` is two weeks after today (the function runs on the system clock).
fn po_input_from_today(client_ref: &str) -> Value {
    let needed_by = chrono::Utc::now().date_naive() + chrono::Days::new(14);
    json!({
        "vendor_code": "V-00231",
        "needed_by": needed_by.to_string(),
        "client_ref": client_ref,
        "note": "lambda reorder",
        "lines": [{"item_code": "BRG-0042", "qty": 2, "uom": "BOX"}]
    })
}

#[tokio::test]
async fn a_read_tool_binary_answers_an_http_api_event_through_the_lambda_runtime_api() {
    let app = spawn_app().await;
    let runtime = LambdaRuntimeApi::start().await;
    let function = FunctionProcess::start(
        env!("CARGO_BIN_EXE_inventory_get_stock"),
        &lambda_env(&runtime, function_env(&app), "inventory_get_stock"),
    );

    let token = function_token("buyer-sby");
    let event = http_api_event(
        "/api/inventory_get_stock",
        &[
            ("authorization", format!("Bearer {token}")),
            ("x-request-id", "lambda-read-1".into()),
        ],
        r#"{"item_code":"BRG-0042"}"#,
        false,
    );
    let reply = LambdaReply::from(runtime.invoke(event).await);
    assert_eq!(reply.status, 200, "{:?}\n{}", reply.body, function.output());
    assert_eq!(reply.header("content-type"), Some("application/json"));
    assert_eq!(reply.header("x-request-id"), Some("lambda-read-1"));
    assert_eq!(reply.header("idempotent-replayed"), None);
    assert_eq!(reply.body["ok"], true);
    assert_eq!(reply.body["requestId"], "lambda-read-1");
    assert_eq!(reply.body["data"]["branch_id"], "SBY-01");
    assert_eq!(reply.body["data"]["total_on_hand"], 40);

    // A warm instance serves the next event with the same process.
    let second = http_api_event(
        "/api/inventory_get_stock",
        &[("authorization", format!("Bearer {token}"))],
        r#"{"item_code":"BRG-0042"}"#,
        false,
    );
    let reply = LambdaReply::from(runtime.invoke(second).await);
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_eq!(runtime.state.init_errors.lock().unwrap().len(), 0);
    assert!(runtime.state.unexpected.lock().unwrap().is_empty());
    function.assert_never_printed(crate::function_process::FUNCTION_SECRET, "the JWT secret");
    function.assert_never_printed(&token, "the bearer token");
}

#[tokio::test]
async fn a_draft_tool_binary_creates_then_replays_through_the_lambda_runtime_api() {
    let app = spawn_app().await;
    let runtime = LambdaRuntimeApi::start().await;
    let mut function = FunctionProcess::start(
        env!("CARGO_BIN_EXE_purchasing_create_po_draft"),
        &lambda_env(&runtime, function_env(&app), "purchasing_create_po_draft"),
    );
    let token = function_token("buyer-sby");
    let drafts_before = app.count_kind("purchase_order").await;
    let input = po_input_from_today("lambda-1").to_string();
    let headers = [
        ("authorization", format!("Bearer {token}")),
        ("idempotency-key", "\"lambda-key-1\"".to_owned()),
        ("x-agent-run-id", "run-lambda-1".to_owned()),
    ];

    // API Gateway and Function URLs may hand the body over base64-encoded; both forms work.
    let created = LambdaReply::from(
        runtime
            .invoke(http_api_event(
                "/api/purchasing_create_po_draft",
                &headers,
                &input,
                true,
            ))
            .await,
    );
    assert_eq!(created.status, 201, "{:?}\n{}", created.body, function.output());
    assert_eq!(created.body["ok"], true);
    assert_eq!(created.body["replayed"], false);
    assert_eq!(created.body["data"]["status"], "draft", "{:?}", created.body);
    assert_eq!(created.header("idempotent-replayed"), None);
    let request_id = created.header("x-request-id").unwrap().to_owned();
    assert_eq!(created.body["requestId"], request_id.as_str());
    // Without an X-Request-Id of the caller's, the call is named by its Lambda request id.
    assert!(request_id.starts_with("8476a536-e9f4-11e8-9739-"), "{request_id}");

    let replayed = LambdaReply::from(
        runtime
            .invoke(http_api_event(
                "/api/purchasing_create_po_draft",
                &headers,
                &input,
                false,
            ))
            .await,
    );
    assert_eq!(replayed.status, 200, "{:?}", replayed.body);
    assert_eq!(replayed.header("idempotent-replayed"), Some("true"));
    assert_eq!(replayed.body["replayed"], true);
    assert_eq!(replayed.body["data"], created.body["data"]);
    assert_ne!(replayed.header("x-request-id"), Some(request_id.as_str()));

    // One draft in the table the function shares with the test's server.
    assert_eq!(app.count_kind("purchase_order").await, drafts_before + 1);
    assert_eq!(app.count_kind("idempotency_key").await, 1);

    // Under Lambda too, one JSON line per call carries the id of the response and the audit item.
    // (stdout is read by another thread: wait for the replay's line first.)
    function
        .wait_until_printed("\"outcome\":\"replayed\"", std::time::Duration::from_secs(10))
        .await
        .expect("the function is still running");
    let lines = function.json_lines();
    let logged: Vec<_> = lines.iter().filter(|l| l["message"] == "tool call").collect();
    assert_eq!(logged.len(), 2, "{}", function.output());
    assert_eq!(logged[0]["request_id"], request_id.as_str());
    assert_eq!(logged[0]["outcome"], "ok");
    assert_eq!(logged[1]["outcome"], "replayed");
    let audits = app.audit_items().await;
    assert!(audits.iter().any(|a| a["request_id"] == request_id), "{audits:?}");
    function.assert_never_printed(&token, "the bearer token");
    function.assert_never_printed("lambda reorder", "the note");
}

#[tokio::test]
async fn a_lambda_invocation_without_a_valid_token_is_a_401_with_a_challenge() {
    let app = spawn_app().await;
    let runtime = LambdaRuntimeApi::start().await;
    let _function = FunctionProcess::start(
        env!("CARGO_BIN_EXE_inventory_get_stock"),
        &lambda_env(&runtime, function_env(&app), "inventory_get_stock"),
    );
    // A token for another deployment: right secret, wrong audience.
    let elsewhere = crate::function_process::function_token_for(
        &draftline_cli::demo_spec("buyer-sby").unwrap(),
        "https://elsewhere.example.com",
    );
    for (case, headers) in [
        ("no token", vec![]),
        ("wrong audience", vec![("authorization", format!("Bearer {elsewhere}"))]),
    ] {
        let reply = LambdaReply::from(
            runtime
                .invoke(http_api_event(
                    "/api/inventory_get_stock",
                    &headers,
                    r#"{"item_code":"BRG-0042"}"#,
                    false,
                ))
                .await,
        );
        assert_eq!(reply.status, 401, "{case}: {:?}", reply.body);
        assert_eq!(reply.body["ok"], false, "{case}");
        assert_eq!(reply.body["error"]["code"], "UNAUTHENTICATED", "{case}");
        assert_eq!(reply.body["error"]["retryable"], false, "{case}");
        let challenge = reply.header("www-authenticate").unwrap_or_default();
        assert!(
            challenge.starts_with("Bearer ")
                && challenge.contains(&format!(
                    "resource_metadata=\"{FUNCTION_RESOURCE}/.well-known/oauth-protected-resource\""
                )),
            "{case}: {challenge}"
        );
    }
}

#[tokio::test]
async fn a_function_that_cannot_start_reports_why_to_the_lambda_runtime_api() {
    let app = spawn_app().await;
    let runtime = LambdaRuntimeApi::start().await;
    let env: Vec<(String, String)> = lambda_env(&runtime, function_env(&app), "inventory_get_stock")
        .into_iter()
        .filter(|(k, _)| k != "DRAFTLINE_ISSUER")
        .collect();
    let mut function = FunctionProcess::start(env!("CARGO_BIN_EXE_inventory_get_stock"), &env);
    let status = function.wait_exit(CHILD_TIMEOUT).await;
    assert_eq!(status.code(), Some(1), "{}", function.output());
    let reported = runtime.state.init_errors.lock().unwrap().clone();
    assert_eq!(reported.len(), 1, "{reported:?}");
    assert_eq!(reported[0]["errorType"], "Runtime.ConfigError");
    assert!(
        reported[0]["errorMessage"]
            .as_str()
            .unwrap()
            .contains("DRAFTLINE_ISSUER"),
        "{reported:?}"
    );
    assert!(
        !reported[0]
            .to_string()
            .contains(crate::function_process::FUNCTION_SECRET)
    );
}

/// One request an AWS credential stand-in received: its authorization
/// header and its body.
type Asked = Arc<std::sync::Mutex<Vec<(Option<String>, String)>>>;

/// A stand-in for STS or a container credentials endpoint on 127.0.0.1:
/// answers every request with `status`, `content_type` and `body`, and
/// records what it was asked.
async fn credential_stand_in(status: StatusCode, content_type: &'static str, body: String) -> (String, Asked) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let asked: Asked = Arc::default();
    let log = asked.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (log, body) = (log.clone(), body.clone());
            tokio::spawn(async move {
                let service = service_fn(move |request: Request<Incoming>| {
                    let (log, body) = (log.clone(), body.clone());
                    async move {
                        let authorization = request
                            .headers()
                            .get("authorization")
                            .map(|v| v.to_str().unwrap_or_default().to_owned());
                        let sent = request.into_body().collect().await.unwrap().to_bytes();
                        log.lock()
                            .unwrap()
                            .push((authorization, String::from_utf8_lossy(&sent).into_owned()));
                        let mut response = Response::new(Full::new(Bytes::from(body)));
                        *response.status_mut() = status;
                        response
                            .headers_mut()
                            .insert("content-type", http::HeaderValue::from_static(content_type));
                        Ok::<_, Infallible>(response)
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (url, asked)
}

/// A read tool's binary deployed on AWS (no `DRAFTLINE_DYNAMODB_ENDPOINT`)
/// with `credentials`, reaching the test's engine through a proxy that
/// records each request's signer: the read answers, and every DynamoDB
/// request was signed with the access key `expected_key` and carried a
/// session token (every source here gives temporary credentials).
async fn a_read_on_aws_is_signed_by(credentials: Vec<(String, String)>, expected_key: &str) {
    let app = spawn_app().await;
    let engine = app.server.app.config().dynamodb_endpoint.clone().unwrap();
    let proxy = crate::dynamo_proxy::FaultyDynamo::start(&engine).await;
    let runtime = LambdaRuntimeApi::start().await;
    let mut env: Vec<(String, String)> = function_env(&app)
        .into_iter()
        .filter(|(k, _)| k != "DRAFTLINE_DYNAMODB_ENDPOINT")
        .collect();
    env.push(("AWS_ENDPOINT_URL_DYNAMODB".into(), proxy.endpoint()));
    env.extend(credentials);
    let function = FunctionProcess::start(
        env!("CARGO_BIN_EXE_inventory_get_stock"),
        &lambda_env(&runtime, env, "inventory_get_stock"),
    );
    let token = function_token("buyer-sby");
    let event = http_api_event(
        "/api/inventory_get_stock",
        &[("authorization", format!("Bearer {token}"))],
        r#"{"item_code":"BRG-0042"}"#,
        false,
    );
    let reply = LambdaReply::from(runtime.invoke(event).await);
    assert_eq!(reply.status, 200, "{:?}\n{}", reply.body, function.output());
    assert_eq!(reply.body["data"]["total_on_hand"], 40);
    let signers = proxy.signers();
    assert!(!signers.is_empty(), "the read reached DynamoDB through the proxy");
    assert!(
        signers
            .iter()
            .all(|(key, with_session)| key == expected_key && *with_session),
        "every request signed by {expected_key} with a session token: {signers:?}"
    );
}

#[tokio::test]
async fn a_function_on_aws_finds_its_credentials_in_the_environment() {
    a_read_on_aws_is_signed_by(
        vec![
            ("AWS_ACCESS_KEY_ID".into(), "AKIALAMBDAENV".into()),
            ("AWS_SECRET_ACCESS_KEY".into(), "lambda-secret".into()),
            ("AWS_SESSION_TOKEN".into(), "lambda-session".into()),
        ],
        "AKIALAMBDAENV",
    )
    .await;
}

#[tokio::test]
async fn a_function_on_aws_exchanges_its_web_identity_token_with_sts() {
    let sts_answer = "<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials>\
        <AccessKeyId>ASIAFROMSTS</AccessKeyId><SecretAccessKey>sts-secret</SecretAccessKey>\
        <SessionToken>sts-session</SessionToken><Expiration>2099-01-01T00:00:00Z</Expiration>\
        </Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>";
    let (sts, asked) = credential_stand_in(StatusCode::OK, "text/xml", sts_answer.to_owned()).await;
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("web-identity-token");
    std::fs::write(&token_file, "eyJ.projected-service-account.sig").unwrap();
    a_read_on_aws_is_signed_by(
        vec![
            (
                "AWS_WEB_IDENTITY_TOKEN_FILE".into(),
                token_file.to_string_lossy().into_owned(),
            ),
            (
                "AWS_ROLE_ARN".into(),
                "arn:aws:iam::123456789012:role/draftline-read".into(),
            ),
            ("AWS_ENDPOINT_URL_STS".into(), sts),
        ],
        "ASIAFROMSTS",
    )
    .await;
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 1, "one exchange for a warm instance's credentials");
    assert!(
        asked[0].1.contains("Action=AssumeRoleWithWebIdentity"),
        "{}",
        asked[0].1
    );
    assert!(
        asked[0]
            .1
            .contains("WebIdentityToken=eyJ.projected-service-account.sig"),
        "{}",
        asked[0].1
    );
}

#[tokio::test]
async fn a_function_on_aws_asks_the_container_endpoint_for_its_credentials() {
    let answer = r#"{"AccessKeyId":"ASIAFROMCONTAINER","SecretAccessKey":"c-secret","Token":"c-session","Expiration":"2099-01-01T00:00:00Z"}"#;
    let (container, asked) = credential_stand_in(StatusCode::OK, "application/json", answer.to_owned()).await;
    a_read_on_aws_is_signed_by(
        vec![
            (
                "AWS_CONTAINER_CREDENTIALS_FULL_URI".into(),
                format!("{container}/2023-01-01/credentials"),
            ),
            ("AWS_CONTAINER_AUTHORIZATION_TOKEN".into(), "snapstart-token".into()),
        ],
        "ASIAFROMCONTAINER",
    )
    .await;
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].0.as_deref(), Some("snapstart-token"));
}
