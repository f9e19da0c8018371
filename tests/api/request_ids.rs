//! One request, one id: the edge mints it once (the caller's valid
//! `X-Request-Id`, else a new one), and the response header, the body, the
//! audit item and the log line all carry that same id, for every kind of
//! endpoint a deployed function serves.

use std::time::{Duration, Instant};

use draftline_contract::settings::Source;
use draftline_review::session::{Session, SessionKeys, SignedInWith};
use draftline_review::settings::ReviewSettings;
use draftline_server::config::Config;
use serde_json::{Value, json};

use crate::function_process::{function_env, function_token};
use crate::helpers::{TestApp, spawn_app};
use crate::vercel::VercelFunction;

/// The JSON lines of a function's stdout that carry `request_id`, once they arrived.
async fn lines_with(function: &VercelFunction, request_id: &str) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !function.process.stdout().contains(request_id) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    function
        .process
        .json_lines()
        .into_iter()
        .filter(|line| line.to_string().contains(request_id))
        .collect()
}

/// Every log line of `function` names `request_id` in its `request_id` field
/// and no other id, and there is at least one.
async fn logged_once_as(function: &VercelFunction, request_id: &str, what: &str) -> Vec<Value> {
    let lines = lines_with(function, request_id).await;
    assert!(
        !lines.is_empty(),
        "{what}: no log line names {request_id}:\n{}",
        function.process.stdout()
    );
    for line in &lines {
        assert_eq!(line["request_id"], request_id, "{what}: {line}");
    }
    lines
}

/// The audit items of request `request_id`.
async fn audited(app: &TestApp, request_id: &str) -> Vec<std::collections::BTreeMap<String, String>> {
    app.all_audit_items()
        .await
        .into_iter()
        .filter(|item| item.get("request_id").map(String::as_str) == Some(request_id))
        .collect()
}

fn header(headers: &reqwest::header::HeaderMap) -> String {
    headers
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn a_tool_call_has_one_request_id_in_its_header_body_audit_item_and_log_line() {
    let app = spawn_app().await;
    let function = VercelFunction::start(env!("CARGO_BIN_EXE_inventory_get_stock"), &app).await;
    let auth = ("authorization", format!("Bearer {}", function_token("buyer-sby")));
    let input = json!({"item_code": "BRG-0042"}).to_string();
    for sent in [Some("rid-tool-1"), Some("not a valid id!"), None] {
        let mut headers = vec![auth.clone()];
        if let Some(id) = sent {
            headers.push(("x-request-id", id.to_owned()));
        }
        let (status, response_headers, body) = function.post("/api/inventory_get_stock", &headers, input.clone()).await;
        assert_eq!(status, 200, "{body}");
        let id = header(&response_headers);
        match sent {
            Some("rid-tool-1") => assert_eq!(id, "rid-tool-1"),
            _ => assert_eq!(id.len(), 26, "a minted ULID: {id}"),
        }
        assert_eq!(body["requestId"], id.as_str());
        let audit = audited(&app, &id).await;
        assert_eq!(audit.len(), 1, "{sent:?}: {audit:?}");
        let lines = logged_once_as(&function, &id, "tool").await;
        assert_eq!(lines.len(), 1, "{lines:?}");
    }
}

#[tokio::test]
async fn an_mcp_tools_call_has_one_request_id_for_the_endpoint_the_pipeline_and_the_audit() {
    let app = spawn_app().await;
    let function = VercelFunction::start(env!("CARGO_BIN_EXE_mcp"), &app).await;
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "inventory_get_stock", "arguments": {"item_code": "BRG-0042"}}});
    for sent in [Some("rid-mcp-1"), None] {
        let mut headers = vec![
            ("authorization", format!("Bearer {}", function_token("buyer-sby"))),
            ("accept", "application/json, text/event-stream".to_owned()),
            ("mcp-protocol-version", "2025-11-25".to_owned()),
        ];
        if let Some(id) = sent {
            headers.push(("x-request-id", id.to_owned()));
        }
        let (status, response_headers, body) = function.post("/api/mcp", &headers, message.to_string()).await;
        assert_eq!(status, 200, "{body}");
        let id = header(&response_headers);
        if let Some(sent) = sent {
            assert_eq!(id, sent);
        }
        assert_eq!(body["result"]["_meta"]["requestId"], id.as_str(), "{body}");
        assert_eq!(audited(&app, &id).await.len(), 1);
        // The endpoint's line and the pipeline's line name the same request.
        let lines = logged_once_as(&function, &id, "mcp").await;
        let messages: Vec<&str> = lines.iter().filter_map(|l| l["message"].as_str()).collect();
        assert!(
            messages.contains(&"tool call") && messages.contains(&"mcp request"),
            "{lines:?}"
        );
    }
}

#[tokio::test]
async fn the_tool_list_the_metadata_and_a_review_page_answer_with_the_request_id_they_were_given() {
    let app = spawn_app().await;
    let token = function_token("buyer-sby");

    let tools = VercelFunction::start(env!("CARGO_BIN_EXE_tools"), &app).await;
    let response = tools
        .http
        .get(tools.url("/api/tools?format=mcp"))
        .bearer_auth(&token)
        .header("x-request-id", "rid-list-1")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(header(response.headers()), "rid-list-1");
    // Refused, the body names the same id.
    let refused = tools
        .http
        .get(tools.url("/api/tools?format=nope"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    let id = header(refused.headers());
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["requestId"], id.as_str());

    let metadata = VercelFunction::start(env!("CARGO_BIN_EXE_oauth_protected_resource"), &app).await;
    let response = metadata
        .http
        .get(metadata.url("/.well-known/oauth-protected-resource"))
        .header("x-request-id", "rid-meta-1")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(header(response.headers()), "rid-meta-1");

    let mut env = function_env(&app);
    env.extend([
        ("DRAFTLINE_OIDC_ISSUER".to_owned(), "http://127.0.0.1:9".to_owned()),
        ("DRAFTLINE_OIDC_CLIENT_ID".to_owned(), "draftline-review".to_owned()),
        ("DRAFTLINE_SESSION_SECRET".to_owned(), "s".repeat(40)),
    ]);
    let review = VercelFunction::start_with_env(env!("CARGO_BIN_EXE_review"), &env).await;
    let deployed = Source::map(env.clone());
    let config = Config::from_source(&deployed).unwrap();
    let keys = SessionKeys::of(&config, &ReviewSettings::from_source(&deployed).unwrap()).unwrap();
    let person = draftline_review::demo::demo_person("approver-sby").unwrap();
    // The function's clock is the system's: a session from now.
    let cookie = keys.seal_session(&Session::start(person, SignedInWith::Oidc, chrono::Utc::now()));
    for (i, path) in ["/review", "/review/nothing", "/review/runs/run-that-never-was"]
        .into_iter()
        .enumerate()
    {
        let response = review
            .http
            .get(review.url(path))
            .header("cookie", format!("{}={cookie}", keys.session_cookie()))
            .header("x-request-id", format!("rid-review-{i}x"))
            .send()
            .await
            .unwrap();
        let id = format!("rid-review-{i}x");
        assert_eq!(header(response.headers()), id, "{path}");
    }
    let lines = logged_once_as(&review, "rid-review-0x", "review").await;
    assert!(lines.iter().any(|l| l["message"] == "review page"), "{lines:?}");
}

/// A valid W3C `traceparent` the tests send.
const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

#[tokio::test]
async fn a_call_names_the_trace_it_continues_in_its_audit_item_and_log_line_and_a_bad_one_starts_afresh() {
    let app = spawn_app().await;
    let function = VercelFunction::start(env!("CARGO_BIN_EXE_inventory_get_stock"), &app).await;
    let auth = ("authorization", format!("Bearer {}", function_token("buyer-sby")));
    let input = json!({"item_code": "BRG-0042"}).to_string();
    let mut fresh = Vec::new();
    for (sent, request_id) in [
        (TRACEPARENT, "rid-trace-1"),
        ("00-not-a-trace-01", "rid-trace-2"),
        ("00-00000000000000000000000000000000-00f067aa0ba902b7-01", "rid-trace-3"),
    ] {
        let headers = vec![
            auth.clone(),
            ("traceparent", sent.to_owned()),
            ("x-request-id", request_id.to_owned()),
        ];
        let (status, _, body) = function.post("/api/inventory_get_stock", &headers, input.clone()).await;
        assert_eq!(status, 200, "a bad traceparent is ignored, never an error: {body}");
        let audit = audited(&app, request_id).await;
        let trace_id = audit[0]["trace_id"].clone();
        let lines = logged_once_as(&function, request_id, "tool").await;
        assert_eq!(lines[0]["trace_id"], trace_id.as_str(), "{lines:?}");
        assert_eq!(trace_id.len(), 32);
        assert!(trace_id.bytes().all(|b| b.is_ascii_hexdigit()), "{trace_id}");
        if sent == TRACEPARENT {
            assert_eq!(trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
        } else {
            fresh.push(trace_id);
        }
    }
    assert_ne!(fresh[0], fresh[1], "each fresh trace is its own");
    assert!(!fresh.contains(&"00000000000000000000000000000000".to_owned()));
}

#[tokio::test]
async fn an_mcp_call_continues_the_trace_its_meta_carries() {
    let app = spawn_app().await;
    let function = VercelFunction::start(env!("CARGO_BIN_EXE_mcp"), &app).await;
    let headers = vec![
        ("authorization", format!("Bearer {}", function_token("buyer-sby"))),
        ("accept", "application/json, text/event-stream".to_owned()),
        ("mcp-protocol-version", "2025-11-25".to_owned()),
        // The HTTP request's own trace loses to the one the message carries.
        (
            "traceparent",
            "00-11111111111111111111111111111111-2222222222222222-01".to_owned(),
        ),
        ("x-request-id", "rid-mcp-trace".to_owned()),
    ];
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "inventory_get_stock", "arguments": {"item_code": "BRG-0042"},
                   "_meta": {"traceparent": TRACEPARENT, "tracestate": "rojo=00f067aa0ba902b7"}}});
    let (status, _, body) = function.post("/api/mcp", &headers, message.to_string()).await;
    assert_eq!(status, 200, "{body}");
    let audit = audited(&app, "rid-mcp-trace").await;
    assert_eq!(audit[0]["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736");
}
