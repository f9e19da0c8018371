//! Webhooks (issue 46, step 2): the outbox's events reach a tenant's
//! endpoints, signed by the Standard Webhooks specification, once each,
//! from a sweeper running beside `draftline serve` on its own DynamoDB
//! client. The receiver here is a real HTTP server on a real socket; each
//! signature is checked with HMAC-SHA256 computed here, not with
//! draftline's signing code (the clients suite checks them with the
//! `standardwebhooks` npm package too).

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use draftline_cli::{LocalOptions, Sweep};
use draftline_contract::clock::Clock as _;
use draftline_contract::identity::TenantId;
use draftline_server::events::endpoint::Reach;
use draftline_server::events::mail::Mailer;
use hmac::{Hmac, Mac};
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};

use crate::helpers::{TestApp, po_input, spawn_app_with};
use crate::review::{Reviewer, agent_po};

/// One POST an endpoint received.
#[derive(Debug, Clone)]
pub(crate) struct Received {
    headers: http::HeaderMap,
    body: Bytes,
}

impl Received {
    pub(crate) fn header(&self, name: &str) -> &str {
        self.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default()
    }

    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

/// An endpoint on 127.0.0.1: it records each request and answers with
/// the next of its scripted answers (then 200).
#[derive(Clone)]
pub(crate) struct Endpoint {
    pub(crate) url: String,
    received: Arc<Mutex<Vec<Received>>>,
}

impl Endpoint {
    pub(crate) async fn start(script: Vec<(u16, Option<&'static str>)>) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr: SocketAddr = listener.local_addr().unwrap();
        let received = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(VecDeque::from(script)));
        let (log, answers) = (received.clone(), script.clone());
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let (log, answers) = (log.clone(), answers.clone());
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request: http::Request<hyper::body::Incoming>| {
                        let (log, answers) = (log.clone(), answers.clone());
                        async move {
                            let (parts, body) = request.into_parts();
                            let body = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
                            log.lock().unwrap().push(Received {
                                headers: parts.headers,
                                body,
                            });
                            let (status, location) = answers.lock().unwrap().pop_front().unwrap_or((200, None));
                            let mut answer = http::Response::builder().status(status);
                            if let Some(location) = location {
                                answer = answer.header("location", location);
                            }
                            Ok::<_, std::convert::Infallible>(
                                answer.body(Full::new(Bytes::from_static(b"ok"))).unwrap(),
                            )
                        }
                    });
                    let io = hyper_util::rt::TokioIo::new(socket);
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, service)
                        .await;
                });
            }
        });
        Self {
            url: format!("http://{addr}/hooks/draftline"),
            received,
        }
    }

    pub(crate) fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// Waits (at most 15 s) until it received `n` requests.
    pub(crate) async fn wait_for(&self, n: usize) -> Vec<Received> {
        for _ in 0..150 {
            if self.received().len() >= n {
                return self.received();
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the endpoint received {:?}, not {n}", self.received());
    }
}

/// Local server options with a sweeper every 50 ms (a poll every 200 ms),
/// loopback endpoints allowed, and e-mail through `mailer` (`None`: kept
/// on the local mail page).
pub(crate) fn sweeping(mailer: Option<Mailer>) -> LocalOptions {
    LocalOptions {
        sweep: Some(Sweep {
            every: Duration::from_millis(50),
            poll_every: Duration::from_millis(200),
            reach: Reach { loopback: true },
            mailer,
            lease: None,
        }),
        ..LocalOptions::default()
    }
}

/// The local server on the built-in backend, sweeping.
async fn spawn_app_sweeping() -> TestApp {
    spawn_app_with(sweeping(None)).await
}

fn demo() -> TenantId {
    TenantId::parse("demo").unwrap()
}

/// Sets the demo tenant's settings to `endpoints`, loopback allowed.
pub(crate) async fn set_endpoints(app: &TestApp, endpoints: Value) {
    set_settings(app, json!({"version": null, "endpoints": endpoints})).await;
}

/// Sets the demo tenant's notification settings to `settings`, loopback allowed.
pub(crate) async fn set_settings(app: &TestApp, settings: Value) {
    draftline_cli::notify::set(
        &app.inspect,
        &demo(),
        settings.to_string().as_bytes(),
        ("test", Reach { loopback: true }),
        app.clock.now(),
    )
    .await
    .unwrap();
}

pub(crate) const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const NEXT_SECRET: &str = "whsec_c2Vjb25kLXNlY3JldC1mb3Itcm90YXRpb24tdGVzdA==";

/// The signatures a receiver holding `secret` accepts: `v1,` and the
/// base64 of HMAC-SHA256 over `id.timestamp.body`.
pub(crate) fn expected_signature(secret: &str, received: &Received) -> String {
    let key = STANDARD.decode(secret.strip_prefix("whsec_").unwrap()).unwrap();
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(&key).unwrap();
    mac.update(received.header("webhook-id").as_bytes());
    mac.update(b".");
    mac.update(received.header("webhook-timestamp").as_bytes());
    mac.update(b".");
    mac.update(&received.body);
    format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
}

/// The outbox's delivery items: (event id, endpoint, state, attempts, last error).
async fn deliveries(app: &TestApp) -> Vec<(String, String, String, String, Option<String>)> {
    app.scan_all()
        .await
        .into_iter()
        .filter(|item| item.get("kind").and_then(|k| k.as_s().ok()).map(String::as_str) == Some("delivery"))
        .map(|item| {
            let s = |name: &str| item.get(name).and_then(|v| v.as_s().ok()).cloned();
            (
                s("event_id").unwrap(),
                s("endpoint").unwrap(),
                s("state").unwrap(),
                item["attempts"].as_n().unwrap().clone(),
                s("last_error"),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_fresh_draft_is_one_signed_webhook_whose_id_is_its_event_and_a_replay_sends_nothing() {
    let app = spawn_app_sweeping().await;
    let endpoint = Endpoint::start(vec![]).await;
    set_endpoints(
        &app,
        json!([{"id": "orchestrator", "url": endpoint.url, "events": ["draft.created"], "secrets": [SECRET]}]),
    )
    .await;
    let headers = [
        ("idempotency-key", "hook-1".to_owned()),
        ("x-agent-run-id", "run-hooks".to_owned()),
        ("x-tool-call-id", "call-7".to_owned()),
    ];
    let drafted = app
        .call("buyer-sby", "purchasing_create_po_draft", &po_input("hook-1"), &headers)
        .await;
    assert_eq!(drafted.status, 201, "{:?}", drafted.body);
    let replay = app
        .call("buyer-sby", "purchasing_create_po_draft", &po_input("hook-1"), &headers)
        .await;
    assert_eq!(replay.status, 200);

    let got = endpoint.wait_for(1).await;
    let hook = &got[0];
    assert_eq!(hook.header("content-type"), "application/json");
    assert_eq!(hook.header("webhook-signature"), expected_signature(SECRET, hook));
    let id = hook.header("webhook-id");
    assert!(id.starts_with("evt_"), "{id}");
    let sent_at: i64 = hook.header("webhook-timestamp").parse().unwrap();
    assert_eq!(sent_at, app.clock.now().timestamp());
    let event = hook.json();
    assert_eq!(event["type"], "draft.created");
    let (data, draft) = (&event["data"], &drafted.body["data"]);
    assert_eq!(data["document"]["number"], draft["po_number"]);
    assert_eq!(
        (&data["run_id"], &data["tool_call_id"]),
        (&json!("run-hooks"), &json!("call-7"))
    );
    assert_eq!(data["review_url"], draft["review_url"]);

    // Swept again and again: still the one delivery, marked delivered.
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(endpoint.received().len(), 1, "{:?}", endpoint.received());
    assert_eq!(
        deliveries(&app).await,
        [(
            id.to_owned(),
            "orchestrator".to_owned(),
            "delivered".to_owned(),
            "1".to_owned(),
            None
        )]
    );
}

#[tokio::test]
async fn a_decision_is_one_webhook_to_the_endpoints_that_want_it_signed_with_both_secrets_in_a_rotation() {
    let app = spawn_app_sweeping().await;
    let (decisions, drafts) = (Endpoint::start(vec![]).await, Endpoint::start(vec![]).await);
    set_endpoints(
        &app,
        json!([
            {"id": "decisions", "url": decisions.url, "events": ["draft.decided"], "secrets": [SECRET, NEXT_SECRET]},
            {"id": "drafts", "url": drafts.url, "events": ["draft.created"], "secrets": [SECRET]}
        ]),
    )
    .await;
    let draft = agent_po(
        &app,
        "buyer-sby",
        "run-decide-hook",
        "decide-hook-1",
        po_input("decide-hook-1"),
    )
    .await;
    let number = draft["po_number"].as_str().unwrap();
    drafts.wait_for(1).await;
    let person = Reviewer::sign_in(&app.server.url(), "approver-sby").await;
    person.decide(number, "reject", "Order BOX, not PCS").await;

    let got = decisions.wait_for(1).await;
    let hook = &got[0];
    let event = hook.json();
    assert_eq!(event["type"], "draft.decided");
    assert_eq!(event["data"]["document"]["number"], number);
    assert_eq!(
        event["data"]["decision"],
        json!({"verdict": "rejected", "decided_by": "approver-sby", "reason": "Order BOX, not PCS"})
    );
    // One signature per secret: a receiver holding either verifies it.
    let signatures: Vec<&str> = hook.header("webhook-signature").split(' ').collect();
    assert_eq!(
        signatures,
        [expected_signature(SECRET, hook), expected_signature(NEXT_SECRET, hook)]
    );
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(decisions.received().len(), 1, "the created event is not theirs");
    assert_eq!(drafts.received().len(), 1, "the decided event is not theirs");
    assert_ne!(drafts.received()[0].header("webhook-id"), hook.header("webhook-id"));
}

#[tokio::test]
async fn an_unsafe_endpoint_is_refused_at_set_with_its_reason_and_a_redirect_is_not_followed() {
    let app = spawn_app_sweeping().await;
    let strict = Reach::default();
    for (url, says) in [
        (
            "http://127.0.0.1:9/hook",
            "loopback address, allowed only where DRAFTLINE_WEBHOOKS_ALLOW_LOOPBACK",
        ),
        (
            "https://169.254.169.254/latest/meta-data/",
            "169.254.169.254 is the cloud metadata address",
        ),
        ("https://10.1.2.3/hook", "10.1.2.3 is a private address"),
        ("http://hooks.example.com/hook", "https only"),
    ] {
        let file = json!({"endpoints": [{"id": "x", "url": url, "events": ["draft.created"], "secrets": [SECRET]}]});
        let refused = draftline_cli::notify::set(
            &app.inspect,
            &demo(),
            file.to_string().as_bytes(),
            ("test", strict),
            app.clock.now(),
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(
            refused.contains("endpoints[0].url") && refused.contains(says),
            "{url}: {refused}"
        );
        assert!(refused.contains("nothing was changed"), "{refused}");
    }
    let none = draftline_cli::notify::show(&app.inspect, &demo(), false).await.unwrap();
    assert_eq!(none, None, "nothing was stored");

    // An endpoint that redirects to a private address: the redirect is not
    // followed, and the delivery is due again with the reason.
    let redirecting = Endpoint::start(vec![(302, Some("http://10.0.0.1/internal"))]).await;
    set_endpoints(
        &app,
        json!([{"id": "moved", "url": redirecting.url, "events": ["draft.created"], "secrets": [SECRET]}]),
    )
    .await;
    agent_po(&app, "buyer-sby", "run-redirect", "redirect-1", po_input("redirect-1")).await;
    redirecting.wait_for(1).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let found = deliveries(&app).await;
    assert_eq!(found.len(), 1, "{found:?}");
    let (_, endpoint, state, attempts, error) = &found[0];
    assert_eq!(
        (endpoint.as_str(), state.as_str(), attempts.as_str()),
        ("moved", "pending", "1")
    );
    assert!(
        error
            .as_deref()
            .unwrap_or_default()
            .contains("a redirect, which is not followed"),
        "{error:?}"
    );
    assert_eq!(redirecting.received().len(), 1, "due again only after its backoff");
    let shown = draftline_cli::notify::show(&app.inspect, &demo(), false)
        .await
        .unwrap()
        .unwrap();
    assert!(!shown.contains(SECRET) && shown.contains("whsec_…LaSw"), "{shown}");
}

/// The demo tenant's delivery of `event` to `endpoint` once its state is
/// `state` (waiting at most 10 s).
async fn wait_for_state(
    app: &TestApp,
    endpoint: &str,
    state: &str,
) -> (String, String, String, String, Option<String>) {
    for _ in 0..100 {
        if let Some(found) = deliveries(app)
            .await
            .into_iter()
            .find(|d| d.1 == endpoint && d.2 == state)
        {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no {state} delivery to {endpoint}: {:?}", deliveries(app).await);
}

#[tokio::test]
async fn an_endpoint_that_fails_twice_gets_one_webhook_id_three_times_and_the_page_shows_three_attempts() {
    let app = spawn_app_sweeping().await;
    let endpoint = Endpoint::start(vec![(500, None), (503, None)]).await;
    set_endpoints(
        &app,
        json!([{"id": "flaky", "url": endpoint.url, "events": ["draft.created"], "secrets": [SECRET]}]),
    )
    .await;
    agent_po(&app, "buyer-sby", "run-retry", "retry-1", po_input("retry-1")).await;
    endpoint.wait_for(1).await;
    // Due again only after its backoff: 30 s ±20 % after the first
    // failure, 60 s ±20 % after the second.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(endpoint.received().len(), 1, "not before its backoff");
    app.clock.advance(chrono::Duration::seconds(37));
    endpoint.wait_for(2).await;
    app.clock.advance(chrono::Duration::seconds(73));
    let got = endpoint.wait_for(3).await;
    let (_, _, _, attempts, error) = wait_for_state(&app, "flaky", "delivered").await;
    assert_eq!(
        (attempts.as_str(), error.as_deref()),
        ("3", Some("answered 503 Service Unavailable"))
    );
    let ids: Vec<&str> = got.iter().map(|hook| hook.header("webhook-id")).collect();
    assert!(ids.iter().all(|id| *id == ids[0]), "one webhook-id: {ids:?}");
    for hook in &got {
        assert_eq!(hook.header("webhook-signature"), expected_signature(SECRET, hook));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(endpoint.received().len(), 3);

    let admin = Reviewer::sign_in(&app.server.url(), "approver-sby").await;
    let page = admin.get("/review/notifications").await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("<td class=\"attempts\">3</td>"), "{}", page.body);
    assert!(
        page.body.contains(&endpoint.url) && page.body.contains("delivery-delivered"),
        "{}",
        page.body
    );
    assert!(
        !page.body.contains(SECRET) && !page.body.contains("Send again"),
        "{}",
        page.body
    );
    // Without the scope, nothing is shown.
    let buyer = Reviewer::sign_in(&app.server.url(), "buyer-sby").await;
    let refused = buyer.get("/review/notifications").await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(refused.body.contains("notify:admin") && !refused.body.contains(&endpoint.url));
}

#[tokio::test]
async fn an_endpoint_down_past_the_retry_window_is_dead_and_send_again_delivers_it_with_its_id() {
    let app = spawn_app_sweeping().await;
    // Nothing listens there: each attempt fails to connect.
    let down = {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        format!("http://{}/hooks", listener.local_addr().unwrap())
    };
    set_endpoints(
        &app,
        json!([{"id": "partner", "url": down, "events": ["draft.created"], "secrets": [SECRET]}]),
    )
    .await;
    agent_po(&app, "buyer-sby", "run-dead", "dead-1", po_input("dead-1")).await;
    // Five hours at a time: past each backoff (at most 4 h + 20 %), until
    // the next attempt would fall outside the day.
    let mut dead = None;
    for _ in 0..8 {
        if let Some(found) = deliveries(&app).await.into_iter().find(|d| d.2 == "dead") {
            dead = Some(found);
            break;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        app.clock.advance(chrono::Duration::hours(5));
    }
    let Some((event, _, _, attempts, error)) = dead else {
        panic!("never dead: {:?}", deliveries(&app).await);
    };
    assert!(attempts.parse::<u32>().unwrap() >= 5, "{attempts}");
    assert!(error.unwrap_or_default().contains("could not connect"));

    let admin = Reviewer::sign_in(&app.server.url(), "approver-sby").await;
    let page = admin.get("/review/notifications").await;
    assert!(
        page.body.contains("delivery-dead") && page.body.contains("Send again"),
        "{}",
        page.body
    );
    // The partner is back, at a new address; an admin sends the event again.
    let back = Endpoint::start(vec![]).await;
    set_endpoints(
        &app,
        json!([{"id": "partner", "url": back.url, "events": ["draft.created"], "secrets": [SECRET]}]),
    )
    .await;
    let form = "/review/notifications/send-again";
    let fields = [
        ("csrf", page.field_after(form, "csrf")),
        ("event_id", page.field_after(form, "event_id")),
        ("endpoint", page.field_after(form, "endpoint")),
    ];
    let fields: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
    // A form of another session sends nothing.
    let forged = [("csrf", "not-this-sessions"), fields[1], fields[2]];
    assert_eq!(admin.post(form, &forged).await.status, 403);
    let sent = admin.post(form, &fields).await;
    assert!(sent.location().ends_with(&format!("sent={event}")), "{sent:?}");
    let got = back.wait_for(1).await;
    assert_eq!(got[0].header("webhook-id"), event);
    assert_eq!(got[0].header("webhook-signature"), expected_signature(SECRET, &got[0]));
    wait_for_state(&app, "partner", "delivered").await;
    // Sent again twice: the second finds nothing dead.
    let again = admin.post(form, &fields).await;
    assert!(again.location().ends_with("sent=none"), "{again:?}");
    // Each attempt is audited, the forged one as denied.
    let mut outcomes: Vec<String> = app
        .audit_items()
        .await
        .iter()
        .filter(|a| a.get("tool").map(String::as_str) == Some("review.send_again"))
        .map(|a| format!("{} {}", a["outcome"], a["on_behalf_of"]))
        .collect();
    outcomes.sort();
    assert_eq!(
        outcomes,
        ["denied approver-sby", "ok approver-sby", "ok approver-sby"],
        "{outcomes:?}"
    );
}

#[tokio::test]
async fn on_tryton_a_draft_confirmed_in_tryton_is_one_draft_decided_webhook_however_often_it_is_polled() {
    let app = crate::helpers::spawn_app_with_on(crate::helpers::Backend::Tryton, sweeping(None)).await;
    let endpoint = Endpoint::start(vec![]).await;
    set_endpoints(
        &app,
        json!([{"id": "decisions", "url": endpoint.url, "events": ["draft.decided"], "secrets": [SECRET]}]),
    )
    .await;
    let drafted = app
        .create_po_draft("buyer-sby", "tryton-hook-1", &po_input("tryton-hook-1"))
        .await;
    assert_eq!(drafted.status, 201, "{:?}", drafted.body);
    let draft = &drafted.body["data"];
    // A person confirms it in Tryton's own workflow, over Tryton's API.
    crate::near_duplicates::press_in_tryton(&app, "approver-sby", "purchase.purchase", draft, "quote").await;

    let got = endpoint.wait_for(1).await;
    let event = got[0].json();
    assert_eq!(event["type"], "draft.decided");
    assert_eq!(event["data"]["document"]["number"], draft["po_number"]);
    assert_eq!(event["data"]["branch"], "SBY-01");
    assert_eq!(event["data"]["review_url"], draft["review_url"]);
    assert_eq!(
        (
            &event["data"]["decision"]["verdict"],
            &event["data"]["decision"]["decided_by"]
        ),
        (&json!("approved"), &json!("approver-sby"))
    );
    assert_eq!(got[0].header("webhook-signature"), expected_signature(SECRET, &got[0]));

    // Polled again, by the server's poller and by another one on the
    // same table: the decision is announced once.
    let poller = draftline_review::poll::Poller::new(
        std::sync::Arc::new(draftline_server::storage::DynamoTable::new(app.inspect.clone())),
        app.server.backend.erp(),
        demo(),
        app.server.app.review_pages().to_owned(),
        std::sync::Arc::new(app.clock.clone()),
    );
    assert_eq!(poller.poll().await.unwrap(), 0);
    assert_eq!(poller.poll().await.unwrap(), 0);
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(endpoint.received().len(), 1, "{:?}", endpoint.received());
    let decided = app
        .scan_all()
        .await
        .into_iter()
        .filter(|item| {
            let text = |name: &str| item.get(name).and_then(|v| v.as_s().ok()).cloned();
            (text("kind").as_deref(), text("event_type").as_deref()) == (Some("event"), Some("draft.decided"))
        })
        .count();
    assert_eq!(decided, 1, "one event, however often it was read");
}

/// An endpoint on 127.0.0.1 that reads each request and never answers;
/// it notes when the sender gives up and closes the connection.
async fn hanging_endpoint() -> (String, Arc<std::sync::atomic::AtomicBool>) {
    use tokio::io::AsyncReadExt as _;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hooks", listener.local_addr().unwrap());
    let closed = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let noted = closed.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let noted = noted.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                while matches!(socket.read(&mut buf).await, Ok(n) if n > 0) {}
                noted.store(true, std::sync::atomic::Ordering::SeqCst);
            });
        }
    });
    (url, closed)
}

#[tokio::test]
async fn an_endpoint_that_hangs_delays_neither_another_endpoint_nor_the_next_event() {
    let app = spawn_app_sweeping().await;
    let (hangs, given_up) = hanging_endpoint().await;
    let prompt = Endpoint::start(vec![]).await;
    set_endpoints(
        &app,
        json!([
            {"id": "hangs", "url": hangs, "events": ["draft.created"], "secrets": [SECRET]},
            {"id": "prompt", "url": prompt.url, "events": ["draft.created"], "secrets": [SECRET]},
        ]),
    )
    .await;
    // Two item sets: no near-duplicate question.
    for (n, item) in [(1, "BRG-0042"), (2, "VBT-0220")] {
        let key = format!("hang-{n}");
        let mut input = po_input(&key);
        input["lines"] = json!([{"item_code": item, "qty": 2, "uom": "PCS"}]);
        let drafted = app
            .call(
                "buyer-sby",
                "purchasing_create_po_draft",
                &input,
                &[("idempotency-key", key.clone())],
            )
            .await;
        assert_eq!(drafted.status, 201, "{:?}", drafted.body);
        // The other endpoint has each event while the first attempt to the
        // hanging one still waits (its 10 s are not over).
        prompt.wait_for(n).await;
        assert!(
            !given_up.load(std::sync::atomic::Ordering::SeqCst),
            "event {n} reached the other endpoint only after the hanging one was given up on"
        );
    }
    let ids: Vec<String> = prompt
        .received()
        .iter()
        .map(|hook| hook.header("webhook-id").to_owned())
        .collect();
    assert_eq!(ids.len(), 2);
    assert_ne!(ids[0], ids[1]);
}
