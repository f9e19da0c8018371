//! Fault injection: a loopback proxy in front of the embedded DynamoDB
//! engine loses, delays, throttles or breaks answers of chosen operations,
//! so the pipeline meets what a real network and a real DynamoDB do.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use draftline_cli::{LocalOptions, start_local};
use draftline_contract::clock::ManualClock;
use draftline_dynamo::Db;
use draftline_infra::EmbeddedDynamo;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::json;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::helpers::{Backend, TestApp, po_input, seeded_purchase_orders, test_now};

/// What the proxy does to one request of an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    /// Forward it, then drop the connection instead of answering.
    LoseResponse,
    /// Forward it and answer, after this long.
    Delay(Duration),
    /// Answer a DynamoDB throttling error without forwarding.
    Throttle,
    /// Answer an HTML 500 page (not DynamoDB JSON) without forwarding.
    Html500,
}

#[derive(Default)]
struct Plan {
    /// (operation, fault) in the order they apply; each applies to one request.
    faults: Mutex<VecDeque<(&'static str, Fault)>>,
    /// Every request the proxy saw: its operation, and whether it was forwarded.
    seen: Mutex<Vec<(String, bool)>>,
    /// While set, every connection is closed unanswered.
    down: AtomicBool,
}

impl Plan {
    fn take(&self, operation: &str) -> Option<Fault> {
        let mut faults = self.faults.lock().unwrap();
        let at = faults.iter().position(|(op, _)| *op == operation)?;
        faults.remove(at).map(|(_, fault)| fault)
    }
}

/// The proxy: `http://127.0.0.1:<port>` in front of `upstream`.
struct FaultProxy {
    url: String,
    plan: Arc<Plan>,
    task: JoinHandle<()>,
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn forward(
    http: &reqwest::Client,
    upstream: &str,
    parts: &http::request::Parts,
    body: Bytes,
) -> Response<Full<Bytes>> {
    let mut request = http.post(format!("{upstream}{}", parts.uri.path())).body(body);
    for (name, value) in &parts.headers {
        if name != http::header::HOST && name != http::header::CONTENT_LENGTH {
            request = request.header(name, value);
        }
    }
    let answer = request.send().await.expect("the engine answers");
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = answer.status();
    for (name, value) in answer.headers() {
        if name != http::header::CONTENT_LENGTH && name != http::header::TRANSFER_ENCODING {
            response.headers_mut().insert(name, value.clone());
        }
    }
    *response.body_mut() = Full::new(answer.bytes().await.unwrap());
    response
}

impl FaultProxy {
    async fn start(upstream: String) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let plan = Arc::new(Plan::default());
        draftline_contract::crypto::install_crypto_provider();
        let http = reqwest::Client::new();
        let shared = plan.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                if shared.down.load(Ordering::SeqCst) {
                    drop(stream);
                    continue;
                }
                let (plan, http, upstream) = (shared.clone(), http.clone(), upstream.clone());
                tokio::spawn(async move {
                    let service = service_fn(move |request: Request<Incoming>| {
                        let (plan, http, upstream) = (plan.clone(), http.clone(), upstream.clone());
                        async move {
                            let (parts, body) = request.into_parts();
                            let body = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
                            let operation = draftline_dynamo::operation_of(&parts.headers).unwrap_or("").to_owned();
                            if plan.down.load(Ordering::SeqCst) {
                                // Down: even a pooled connection gets no answer.
                                return Err(std::io::Error::other("engine down"));
                            }
                            let fault = plan.take(&operation);
                            let forwarded = !matches!(fault, Some(Fault::Throttle | Fault::Html500));
                            plan.seen.lock().unwrap().push((operation, forwarded));
                            match fault {
                                Some(Fault::Throttle) => {
                                    let mut response = Response::new(Full::new(Bytes::from(
                                        json!({"__type": "com.amazonaws.dynamodb.v20120810#ThrottlingException",
                                               "message": "Rate of requests exceeds the allowed throughput."})
                                        .to_string(),
                                    )));
                                    *response.status_mut() = StatusCode::BAD_REQUEST;
                                    response.headers_mut().insert(
                                        http::header::CONTENT_TYPE,
                                        http::HeaderValue::from_static("application/x-amz-json-1.0"),
                                    );
                                    Ok::<_, std::io::Error>(response)
                                }
                                Some(Fault::Html500) => {
                                    let mut response = Response::new(Full::new(Bytes::from_static(
                                        b"<html><body><h1>500 Internal Server Error</h1></body></html>",
                                    )));
                                    *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
                                    response.headers_mut().insert(
                                        http::header::CONTENT_TYPE,
                                        http::HeaderValue::from_static("text/html"),
                                    );
                                    Ok(response)
                                }
                                Some(Fault::LoseResponse) => {
                                    let _ = forward(&http, &upstream, &parts, body).await;
                                    Err(std::io::Error::other("response lost on purpose"))
                                }
                                Some(Fault::Delay(by)) => {
                                    let response = forward(&http, &upstream, &parts, body).await;
                                    tokio::time::sleep(by).await;
                                    Ok(response)
                                }
                                None => Ok(forward(&http, &upstream, &parts, body).await),
                            }
                        }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Self { url, plan, task }
    }

    fn fail(&self, operation: &'static str, fault: Fault, times: usize) {
        let mut faults = self.plan.faults.lock().unwrap();
        for _ in 0..times {
            faults.push_back((operation, fault));
        }
    }

    fn clear(&self) {
        self.plan.faults.lock().unwrap().clear();
    }

    fn seen(&self, operation: &str) -> usize {
        self.plan
            .seen
            .lock()
            .unwrap()
            .iter()
            .filter(|(op, _)| op == operation)
            .count()
    }

    fn set_down(&self, down: bool) {
        self.plan.down.store(down, Ordering::SeqCst);
    }
}

/// The app behind the proxy; `app.inspect` reads the engine directly.
struct FaultyApp {
    app: TestApp,
    proxy: FaultProxy,
    _engine: EmbeddedDynamo,
}

async fn spawn_faulty_app(call_deadline: Option<Duration>) -> FaultyApp {
    let engine = EmbeddedDynamo::start(None).await.unwrap();
    let proxy = FaultProxy::start(engine.endpoint()).await;
    let clock = ManualClock::new(test_now());
    let server = start_local(LocalOptions {
        dynamodb_endpoint: Some(proxy.url.clone()),
        clock: Some(Arc::new(clock.clone())),
        call_deadline,
        ..LocalOptions::default()
    })
    .await
    .unwrap();
    let mut direct = server.app.config().clone();
    direct.dynamodb_endpoint = Some(engine.endpoint());
    let inspect = Db::connect(&direct.table, direct.dynamodb_endpoint.as_deref()).await;
    FaultyApp {
        app: TestApp::assemble(
            server,
            reqwest::Client::builder()
                .timeout(Duration::from_secs(30))
                .build()
                .unwrap(),
            inspect,
            clock,
            Backend::Builtin,
        )
        .await,
        proxy,
        _engine: engine,
    }
}

#[tokio::test]
async fn a_lost_answer_to_a_committed_draft_is_retried_into_the_same_draft() {
    let faulty = spawn_faulty_app(None).await;
    let app = &faulty.app;
    faulty.proxy.fail("TransactWriteItems", Fault::LoseResponse, 1);
    let first = app.create_po_draft("buyer-sby", "lost-1", &po_input("lost-1")).await;
    assert!(matches!(first.status, 200 | 201), "{:?}", first.body);
    assert_eq!(
        faulty.proxy.seen("TransactWriteItems"),
        2,
        "the SDK sent the same transaction again"
    );
    assert_eq!(app.count_kind("purchase_order").await, seeded_purchase_orders() + 1);
    // The agent's own retry is a replay of that one draft.
    let retry = app.create_po_draft("buyer-sby", "lost-1", &po_input("lost-1")).await;
    assert_eq!(retry.status, 200);
    assert_eq!(retry.body["replayed"], true);
    assert_eq!(retry.body["data"]["po_number"], first.body["data"]["po_number"]);
    assert_eq!(app.count_kind("purchase_order").await, seeded_purchase_orders() + 1);
}

#[tokio::test]
async fn a_draft_whose_every_answer_is_lost_says_it_may_exist_and_its_retry_finds_it() {
    let faulty = spawn_faulty_app(None).await;
    let app = &faulty.app;
    faulty.proxy.fail("TransactWriteItems", Fault::LoseResponse, 3);
    let first = app
        .create_po_draft("buyer-sby", "lost-all", &po_input("lost-all"))
        .await;
    assert_eq!(first.status, 503, "{:?}", first.body);
    assert_eq!(first.error_code(), "DEPENDENCY_UNAVAILABLE");
    assert_eq!(first.body["error"]["retryable"], true);
    assert!(
        first.message().contains("may or may not have been created"),
        "{}",
        first.message()
    );
    assert!(first.header("retry-after").is_some());
    let retry = app
        .create_po_draft("buyer-sby", "lost-all", &po_input("lost-all"))
        .await;
    assert_eq!(retry.status, 200, "{:?}", retry.body);
    assert_eq!(retry.body["replayed"], true);
    assert_eq!(app.count_kind("purchase_order").await, seeded_purchase_orders() + 1);
}

#[tokio::test]
async fn an_engine_that_is_down_is_503_retryable_and_nothing_is_written() {
    let faulty = spawn_faulty_app(None).await;
    let app = &faulty.app;
    let before = app.kinds().await;
    faulty.proxy.set_down(true);
    let reply = app.create_po_draft("buyer-sby", "down-1", &po_input("down-1")).await;
    assert_eq!(reply.status, 503, "{:?}", reply.body);
    assert_eq!(reply.error_code(), "DEPENDENCY_UNAVAILABLE");
    assert_eq!(reply.body["error"]["retryable"], true);
    assert!(reply.header("retry-after").is_some());
    let read = app
        .call(
            "buyer-sby",
            "inventory_get_stock",
            &json!({"item_code": "BRG-0042"}),
            &[],
        )
        .await;
    assert_eq!(read.status, 503);
    faulty.proxy.set_down(false);
    assert_eq!(app.kinds().await, before, "nothing was written, not even half");
    let later = app.create_po_draft("buyer-sby", "down-1", &po_input("down-1")).await;
    assert_eq!(later.status, 201, "{:?}", later.body);
}

#[tokio::test]
async fn throttling_is_retried_a_bounded_number_of_times_then_answered_503_with_retry_after() {
    let faulty = spawn_faulty_app(None).await;
    let app = &faulty.app;
    // Two throttled answers: the SDK's retries get through. (A draft looks
    // its key up in one BatchGetItem, with the tenant's policy and what the
    // draft reads.)
    faulty.proxy.fail("BatchGetItem", Fault::Throttle, 2);
    let before = faulty.proxy.seen("BatchGetItem");
    let ok = app
        .create_po_draft("buyer-sby", "throttled-1", &po_input("throttled-1"))
        .await;
    assert_eq!(ok.status, 201, "{:?}", ok.body);
    assert_eq!(faulty.proxy.seen("BatchGetItem") - before, 3);

    // Throttled for good: three attempts, then a 503 the caller can act on.
    faulty.proxy.fail("BatchGetItem", Fault::Throttle, 10);
    let before = faulty.proxy.seen("BatchGetItem");
    let reply = app
        .create_po_draft("buyer-sby", "throttled-2", &po_input("throttled-2"))
        .await;
    assert_eq!(faulty.proxy.seen("BatchGetItem") - before, 3, "bounded retries");
    assert_eq!(reply.status, 503, "{:?}", reply.body);
    assert_eq!(reply.error_code(), "DEPENDENCY_UNAVAILABLE");
    assert!(reply.header("retry-after").is_some());
    assert!(reply.message().contains("No draft was created"), "{}", reply.message());
    faulty.proxy.clear();
}

#[tokio::test]
async fn an_upstream_html_500_is_503_dependency_unavailable_not_our_bug() {
    let faulty = spawn_faulty_app(None).await;
    let app = &faulty.app;
    // The first draft of an instance looks its key up with the tenant's policy (one BatchGetItem).
    faulty.proxy.fail("BatchGetItem", Fault::Html500, 3);
    let lookup = app.create_po_draft("buyer-sby", "html-1", &po_input("html-1")).await;
    assert_eq!(lookup.status, 503, "{:?}", lookup.body);
    assert!(
        lookup.message().contains("No draft was created"),
        "{}",
        lookup.message()
    );

    faulty.proxy.fail("TransactWriteItems", Fault::Html500, 3);
    let commit = app.create_po_draft("buyer-sby", "html-2", &po_input("html-2")).await;
    assert_eq!(commit.status, 503, "{:?}", commit.body);
    assert_eq!(commit.error_code(), "DEPENDENCY_UNAVAILABLE");
    assert_eq!(commit.body["error"]["retryable"], true);
    assert!(
        commit.message().contains("may or may not have been created"),
        "{}",
        commit.message()
    );
    let retry = app.create_po_draft("buyer-sby", "html-2", &po_input("html-2")).await;
    assert_eq!(
        retry.status, 201,
        "nothing was written behind the HTML page: {:?}",
        retry.body
    );
}

#[tokio::test]
async fn a_call_past_its_deadline_is_503_says_what_may_have_happened_and_is_audited() {
    let faulty = spawn_faulty_app(Some(Duration::from_secs(1))).await;
    let app = &faulty.app;
    // The transaction reaches the engine, but its answer comes after the deadline.
    faulty
        .proxy
        .fail("TransactWriteItems", Fault::Delay(Duration::from_millis(2500)), 1);
    let slow = app
        .call(
            "buyer-sby",
            "purchasing_create_po_draft",
            &po_input("slow-1"),
            &[
                ("idempotency-key", "slow-1".into()),
                ("x-request-id", "slow-request".into()),
            ],
        )
        .await;
    assert_eq!(slow.status, 503, "{:?}", slow.body);
    assert_eq!(slow.error_code(), "DEPENDENCY_UNAVAILABLE");
    assert!(
        slow.message().contains("may or may not have been created"),
        "{}",
        slow.message()
    );
    tokio::time::sleep(Duration::from_millis(2000)).await;
    let audits: Vec<_> = app
        .audit_items()
        .await
        .into_iter()
        .filter(|a| a["request_id"] == "slow-request")
        .collect();
    assert!(
        audits
            .iter()
            .any(|a| a["outcome"] == "tool_error" && a["code"] == "DEPENDENCY_UNAVAILABLE"),
        "the timed-out call is audited: {audits:?}"
    );
    // The commit did land: the retry finds it.
    let retry = app.create_po_draft("buyer-sby", "slow-1", &po_input("slow-1")).await;
    assert_eq!(retry.status, 200, "{:?}", retry.body);
    assert_eq!(retry.body["replayed"], true);

    // A read past its deadline changed nothing and says so.
    faulty.proxy.fail("Query", Fault::Delay(Duration::from_millis(2500)), 1);
    let read = app
        .call(
            "buyer-sby",
            "inventory_get_stock",
            &json!({"item_code": "BRG-0042"}),
            &[],
        )
        .await;
    assert_eq!(read.status, 503, "{:?}", read.body);
    assert!(read.message().contains("Nothing was changed"), "{}", read.message());
}
