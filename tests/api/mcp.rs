//! The MCP endpoint (`POST /api/mcp`) over real HTTP: the 2025-11-25
//! handshake revision, the stateless 2026-07-28 revision, auth, origin
//! checks, and tool calls through the one pipeline.

use std::collections::BTreeSet;

use draftline_cli::demo_spec;
use draftline_contract::identity::Scopes;
use draftline_contract::tool::{Tier, ToolDefinition};
use draftline_server::listing;
use draftline_server::mcp::tools::{PAGE_SIZE, cursor_after};
use serde_json::{Value, json};

use crate::helpers::{TestApp, on_both_backends, po_input, spawn_app, spawn_app_drafting_freely_on, spawn_app_on};

const LEGACY: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";
const DEMO_USERS: [&str; 4] = ["buyer-sby", "clerk-sby", "buyer-jkt", "sales-bdg"];

/// An MCP answer, read fully.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: reqwest::header::HeaderMap,
    text: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
    fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or_else(|_| panic!("a JSON body: {:?} {}", self.status, self.text))
    }
    fn result(&self) -> Value {
        let body = self.json();
        assert!(body.get("error").is_none(), "expected a result: {body}");
        body["result"].clone()
    }
    fn error_code(&self) -> i64 {
        self.json()["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("an error: {}", self.text))
    }
}

/// POSTs `body` to `/api/mcp` with exactly `headers`.
async fn post(app: &TestApp, headers: &[(&str, String)], body: impl Into<reqwest::Body>) -> Answer {
    let mut request = app.http.post(app.url("/api/mcp")).body(body);
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    let response = request.send().await.expect("the server answers");
    Answer {
        status: response.status().as_u16(),
        headers: response.headers().clone(),
        text: response.text().await.unwrap(),
    }
}

/// The headers an MCP client sends, with `user`'s token.
fn client_headers(app: &TestApp, user: &str) -> Vec<(&'static str, String)> {
    vec![
        ("authorization", format!("Bearer {}", app.token(user))),
        ("content-type", "application/json".into()),
        ("accept", "application/json, text/event-stream".into()),
    ]
}

/// A 2025-11-25 request (after the handshake: with the version header).
async fn legacy(app: &TestApp, user: &str, method: &str, params: Value) -> Answer {
    let mut headers = client_headers(app, user);
    headers.push(("mcp-protocol-version", LEGACY.into()));
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    post(app, &headers, body.to_string()).await
}

/// A 2026-07-28 request: version and capabilities in `_meta`, mirrored headers.
async fn modern(app: &TestApp, user: &str, method: &str, mut params: Value) -> Answer {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "api-tests", "version": "1.0.0"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let mut headers = client_headers(app, user);
    headers.push(("mcp-protocol-version", MODERN.into()));
    headers.push(("mcp-method", method.into()));
    if let Some(name) = params.get("name").and_then(Value::as_str) {
        headers.push(("mcp-name", name.into()));
    }
    let body = json!({"jsonrpc": "2.0", "id": "m-1", "method": method, "params": params});
    post(app, &headers, body.to_string()).await
}

async fn call_tool(app: &TestApp, user: &str, name: &str, arguments: Value) -> Answer {
    legacy(app, user, "tools/call", json!({"name": name, "arguments": arguments})).await
}

/// Every tool, as the listing of `user` must show it: those their scopes allow, by name.
fn expected_tools<'a>(app: &'a TestApp, user: &str) -> Vec<&'a ToolDefinition> {
    let scopes = Scopes::from_claim(&demo_spec(user).unwrap().scope);
    let mut tools: Vec<&ToolDefinition> = app
        .server
        .app
        .registry()
        .all()
        .filter(|definition| scopes.grants(definition.scope))
        .collect();
    tools.sort_by_key(|definition| definition.name);
    tools
}

fn names(tools: &Value) -> Vec<String> {
    tools
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn initialize_negotiates_2025_11_25_and_describes_the_tiers() {
    let app = spawn_app().await;
    let mut headers = client_headers(&app, "buyer-sby");
    headers.retain(|(name, _)| *name != "mcp-protocol-version");
    let initialize = |version: &str| {
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "api-tests", "version": "1.0.0"}
        }})
        .to_string()
    };
    let answer = post(&app, &headers, initialize(LEGACY)).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    assert_eq!(answer.header("content-type"), Some("application/json"));
    assert_eq!(
        answer.header("mcp-session-id"),
        None,
        "a stateless server issues no session"
    );
    let body = answer.json();
    assert_eq!(body["id"], 0);
    let result = &body["result"];
    assert_eq!(result["protocolVersion"], LEGACY);
    assert_eq!(result["capabilities"], json!({"tools": {"listChanged": false}}));
    assert_eq!(result["serverInfo"]["name"], "draftline");
    assert_eq!(result["serverInfo"]["title"], "draftline ERP tools");
    assert!(result["serverInfo"]["version"].is_string());
    assert!(result.get("resultType").is_none(), "legacy results carry no resultType");
    let instructions = result["instructions"].as_str().unwrap();
    for phrase in ["Read tools", "Draft tools", "client_ref", "replayed", "isError"] {
        assert!(
            instructions.contains(phrase),
            "instructions mention {phrase}: {instructions}"
        );
    }

    // An older handshake revision is echoed; one we do not speak gets our newest.
    let older = post(&app, &headers, initialize("2025-06-18")).await;
    assert_eq!(older.result()["protocolVersion"], "2025-06-18");
    let ancient = post(&app, &headers, initialize("2024-11-05")).await;
    assert_eq!(ancient.result()["protocolVersion"], LEGACY);
}

#[tokio::test]
async fn the_initialized_notification_is_accepted_with_202_and_no_body() {
    let app = spawn_app().await;
    let mut headers = client_headers(&app, "buyer-sby");
    headers.push(("mcp-protocol-version", LEGACY.into()));
    let answer = post(
        &app,
        &headers,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
    )
    .await;
    assert_eq!(answer.status, 202);
    assert_eq!(answer.text, "");
    assert_eq!(answer.header("mcp-session-id"), None);
    let other = post(
        &app,
        &headers,
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}).to_string(),
    )
    .await;
    assert_eq!(other.status, 202, "any notification is accepted");
}

#[tokio::test]
async fn ping_answers_an_empty_result() {
    let app = spawn_app().await;
    let answer = legacy(&app, "clerk-sby", "ping", json!({})).await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.json(), json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
}

#[tokio::test]
async fn tools_list_shows_each_demo_user_exactly_the_tools_their_scopes_allow() {
    let app = spawn_app().await;
    for user in DEMO_USERS {
        let answer = legacy(&app, user, "tools/list", json!({})).await;
        assert_eq!(answer.status, 200, "{user}: {}", answer.text);
        let result = answer.result();
        let expected = expected_tools(&app, user);
        assert!(expected.len() <= PAGE_SIZE, "one page holds the whole catalogue");
        assert!(result.get("nextCursor").is_none(), "{user}: one page");
        let listed = names(&result["tools"]);
        let expected_names: Vec<String> = expected.iter().map(|d| d.name.to_owned()).collect();
        assert_eq!(listed, expected_names, "{user}: exactly the allowed tools, sorted");
        for (entry, definition) in result["tools"].as_array().unwrap().iter().zip(&expected) {
            assert_eq!(
                entry,
                &listing::mcp_tool(definition),
                "{user}: {} as the listing builds it",
                definition.name
            );
        }
    }
    // The demo scopes in plain words.
    let buyer = names(&legacy(&app, "buyer-sby", "tools/list", json!({})).await.result()["tools"]);
    let clerk = names(&legacy(&app, "clerk-sby", "tools/list", json!({})).await.result()["tools"]);
    let sales = names(&legacy(&app, "sales-bdg", "tools/list", json!({})).await.result()["tools"]);
    for tool in ["inventory_get_stock", "purchasing_create_po_draft", "purchasing_get_po"] {
        assert!(buyer.contains(&tool.to_owned()), "buyer-sby sees {tool}");
    }
    assert!(clerk.contains(&"inventory_get_stock".to_owned()));
    assert!(
        clerk.iter().all(|name| name.starts_with("inventory_")),
        "clerk-sby: {clerk:?}"
    );
    assert!(
        sales.iter().all(|name| !name.starts_with("purchasing_")),
        "sales-bdg: {sales:?}"
    );
}

#[tokio::test]
async fn annotations_follow_the_tier_and_every_schema_is_strict() {
    let app = spawn_app().await;
    let result = legacy(&app, "buyer-sby", "tools/list", json!({})).await.result();
    let tools = result["tools"].as_array().unwrap();
    assert!(!tools.is_empty());
    for tool in tools {
        let name = tool["name"].as_str().unwrap();
        let definition = app.server.app.registry().get(name).unwrap().definition();
        let annotations = &tool["annotations"];
        let expected = match definition.tier {
            Tier::Read => json!([true, false, true, false]),
            Tier::Draft => json!([false, false, true, false]),
        };
        assert_eq!(
            json!([
                annotations["readOnlyHint"],
                annotations["destructiveHint"],
                annotations["idempotentHint"],
                annotations["openWorldHint"]
            ]),
            expected,
            "{name}: readOnly, destructive, idempotent, openWorld"
        );
        assert!(
            tool["title"].as_str().is_some_and(|t| !t.is_empty()),
            "{name} has a title"
        );
        assert!(
            tool["description"].as_str().is_some_and(|d| d.len() > 40),
            "{name} is described"
        );
        let input = &tool["inputSchema"];
        assert_eq!(input["type"], "object", "{name}");
        assert_eq!(input["additionalProperties"], false, "{name}: strict input");
        // A tool without inputs may leave out `properties` and `required`.
        let properties: BTreeSet<&str> = input["properties"]
            .as_object()
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let required: BTreeSet<&str> = input["required"]
            .as_array()
            .map(|r| r.iter().map(|r| r.as_str().unwrap()).collect())
            .unwrap_or_default();
        assert_eq!(
            properties, required,
            "{name}: every property is required (optional ones are nullable)"
        );
        assert!(tool["outputSchema"].is_object(), "{name} has an outputSchema");
    }
}

#[tokio::test]
async fn tools_list_pages_with_an_opaque_cursor() {
    let app = spawn_app().await;
    let all = names(&legacy(&app, "buyer-sby", "tools/list", json!({})).await.result()["tools"]);
    assert!(all.len() >= 2);
    // A cursor continues after the tool it names; the last page has no cursor.
    let rest = legacy(
        &app,
        "buyer-sby",
        "tools/list",
        json!({"cursor": cursor_after(&all[0])}),
    )
    .await;
    let rest = rest.result();
    assert_eq!(names(&rest["tools"]), all[1..].to_vec());
    assert!(rest.get("nextCursor").is_none());
    let past_the_end = legacy(
        &app,
        "buyer-sby",
        "tools/list",
        json!({"cursor": cursor_after(&all[all.len() - 1])}),
    )
    .await;
    assert_eq!(past_the_end.result()["tools"], json!([]));
    // A cursor we did not issue is invalid params.
    for cursor in [json!("not-a-cursor"), json!(7)] {
        let answer = legacy(&app, "buyer-sby", "tools/list", json!({"cursor": cursor})).await;
        assert_eq!(answer.error_code(), -32602, "{}", answer.text);
    }
}

on_both_backends! {
    #[tokio::test]
    async fn a_read_tool_returns_structured_content_and_the_same_data_as_text(backend) {
        let app = spawn_app_on(backend).await;
        let answer = call_tool(
            &app,
            "buyer-sby",
            "inventory_get_stock",
            json!({"item_code": "BRG-0042"}),
        )
        .await;
        assert_eq!(answer.status, 200, "{}", answer.text);
        let result = answer.result();
        assert_eq!(result["isError"], false);
        let data = &result["structuredContent"];
        assert_eq!(data["item_code"], "BRG-0042");
        assert_eq!(data["branch_id"], "SBY-01", "the caller's branch only");
        assert_eq!(result["content"][0]["type"], "text");
        let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(&text, data, "the text is the JSON of the data");
        assert_eq!(result["_meta"]["replayed"], false);
        let request_id = result["_meta"]["requestId"].as_str().unwrap();
        assert_eq!(answer.header("x-request-id"), Some(request_id));
        let audits = app.audit_items().await;
        assert_eq!(audits.len(), 1);
        assert_eq!(audits[0]["tool"], "inventory_get_stock");
        assert_eq!(audits[0]["transport"], "mcp");
        assert_eq!(audits[0]["outcome"], "ok");
        assert_eq!(audits[0]["request_id"], request_id);
    }
}

on_both_backends! {
    #[tokio::test]
    async fn a_draft_retried_with_the_same_client_ref_is_replayed_not_created_twice(backend) {
        let app = spawn_app_drafting_freely_on(backend).await;
        let before = app.documents("purchase_order").await;
        let first = call_tool(
            &app,
            "buyer-sby",
            "purchasing_create_po_draft",
            po_input("mcp-reorder-1"),
        )
        .await;
        let first = first.result();
        assert_eq!(first["isError"], false, "{first}");
        assert_eq!(first["_meta"]["replayed"], false);
        let po = &first["structuredContent"];
        assert_eq!(po["status"], "draft");
        assert_eq!(po["drafted_on_behalf_of"], "buyer-sby");
        let number = po["po_number"].as_str().unwrap().to_owned();

        // The client timed out and sends the same call again.
        let again = call_tool(
            &app,
            "buyer-sby",
            "purchasing_create_po_draft",
            po_input("mcp-reorder-1"),
        )
        .await;
        let again = again.result();
        assert_eq!(again["isError"], false, "{again}");
        assert_eq!(again["_meta"]["replayed"], true);
        assert_eq!(again["structuredContent"]["po_number"], number.as_str());
        assert_eq!(again["structuredContent"], first["structuredContent"]);
        assert_eq!(app.documents("purchase_order").await, before + 1, "one document");

        // The key is the user and the client_ref: a new client_ref is a new draft.
        let other = call_tool(
            &app,
            "buyer-sby",
            "purchasing_create_po_draft",
            po_input("mcp-reorder-2"),
        )
        .await;
        let other = other.result();
        assert_eq!(other["_meta"]["replayed"], false);
        assert_ne!(other["structuredContent"]["po_number"], number.as_str());
        assert_eq!(app.documents("purchase_order").await, before + 2);

        let keys: BTreeSet<String> = app
            .audit_items()
            .await
            .into_iter()
            .filter(|audit| audit["tool"] == "purchasing_create_po_draft")
            .map(|audit| {
                assert_eq!(audit["transport"], "mcp");
                audit["idempotency_key"].clone()
            })
            .collect();
        assert_eq!(
            keys,
            BTreeSet::from(["mcp-reorder-1".to_owned(), "mcp-reorder-2".to_owned()])
        );
    }
}

on_both_backends! {
    #[tokio::test]
    async fn concurrent_identical_drafts_through_mcp_create_one_document(backend) {
        let app = spawn_app_on(backend).await;
        let before = app.documents("purchase_order").await;
        let call = || call_tool(&app, "buyer-sby", "purchasing_create_po_draft", po_input("mcp-race"));
        let answers = futures::future::join_all((0..8).map(|_| call())).await;
        let mut numbers = BTreeSet::new();
        let mut fresh = 0;
        for answer in &answers {
            let result = answer.result();
            if result["isError"] == true {
                // Still in flight: retryable, says so, and created nothing.
                assert_eq!(result["_meta"]["error"]["code"], "CONFLICT", "{result}");
                assert_eq!(result["_meta"]["error"]["retryable"], true);
                continue;
            }
            if result["_meta"]["replayed"] == false {
                fresh += 1;
            }
            numbers.insert(result["structuredContent"]["po_number"].as_str().unwrap().to_owned());
        }
        assert_eq!(fresh, 1, "exactly one call creates the draft");
        assert_eq!(numbers.len(), 1, "every answer names the same draft: {numbers:?}");
        assert_eq!(app.documents("purchase_order").await, before + 1);
    }
}

on_both_backends! {
    #[tokio::test]
    async fn a_tool_failure_is_an_is_error_result_with_the_model_readable_message(backend) {
        let app = spawn_app_on(backend).await;
        let mut input = po_input("bad-unit");
        input["lines"][0]["uom"] = json!("KG");
        let answer = call_tool(&app, "buyer-sby", "purchasing_create_po_draft", input).await;
        assert_eq!(answer.status, 200, "a tool failure is a result, not an HTTP error");
        let result = answer.result();
        assert_eq!(result["isError"], true);
        let message = result["content"][0]["text"].as_str().unwrap();
        assert!(message.contains("lines[0].uom"), "{message}");
        assert!(message.contains("No draft was created"), "{message}");
        let error: Value = serde_json::from_str(result["content"][1]["text"].as_str().unwrap()).unwrap();
        assert_eq!(error["code"], "VALIDATION_ERROR");
        assert_eq!(error["retryable"], false);
        assert_eq!(error["details"][0]["path"], "lines[0].uom");
        assert_eq!(result["_meta"]["error"], error);
        assert!(
            result.get("structuredContent").is_none(),
            "no structuredContent: clients check it against the outputSchema even on errors"
        );

        // A document of another branch reads exactly like a missing one.
        let missing = call_tool(
            &app,
            "buyer-sby",
            "purchasing_get_po",
            json!({"po_number": "PO-SBY-999999"}),
        )
        .await;
        let missing = missing.result();
        assert_eq!(missing["isError"], true);
        assert_eq!(missing["_meta"]["error"]["code"], "NOT_FOUND");
    }
}

#[tokio::test]
async fn an_unknown_tool_is_a_json_rpc_invalid_params_error() {
    let app = spawn_app().await;
    let answer = call_tool(&app, "buyer-sby", "purchasing_post_invoice", json!({})).await;
    assert_eq!(answer.status, 200);
    let body = answer.json();
    assert_eq!(body["id"], 1);
    assert_eq!(body["error"]["code"], -32602);
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("Unknown tool") && message.contains("purchasing_post_invoice"),
        "{message}"
    );
    // Malformed parameters are protocol errors too.
    let no_name = legacy(&app, "buyer-sby", "tools/call", json!({"arguments": {}})).await;
    assert_eq!(no_name.error_code(), -32602);
    let bad_arguments = legacy(
        &app,
        "buyer-sby",
        "tools/call",
        json!({"name": "inventory_get_stock", "arguments": [1]}),
    )
    .await;
    assert_eq!(bad_arguments.error_code(), -32602);
}

#[tokio::test]
async fn an_unknown_method_is_method_not_found() {
    let app = spawn_app().await;
    for method in ["resources/list", "prompts/get", "tools/delete"] {
        let answer = legacy(&app, "buyer-sby", method, json!({})).await;
        assert_eq!(answer.status, 200, "{method}");
        assert_eq!(answer.error_code(), -32601, "{method}");
        assert_eq!(answer.json()["id"], 1);
    }
    // In the stateless revision an unknown (or removed) method is HTTP 404.
    for method in ["unknown/method", "initialize", "ping"] {
        let answer = modern(&app, "buyer-sby", method, json!({})).await;
        assert_eq!(answer.status, 404, "{method}: {}", answer.text);
        assert_eq!(answer.error_code(), -32601, "{method}");
        assert_eq!(answer.json()["id"], "m-1");
    }
}

#[tokio::test]
async fn malformed_json_is_a_parse_error_and_a_batch_is_an_invalid_request() {
    let app = spawn_app().await;
    let headers = client_headers(&app, "buyer-sby");
    let parse_error = post(&app, &headers, "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ").await;
    assert_eq!(parse_error.status, 400);
    assert_eq!(parse_error.error_code(), -32700);
    let batch = json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "id": 2, "method": "ping"}]);
    let batch = post(&app, &headers, batch.to_string()).await;
    assert_eq!(batch.status, 400);
    assert_eq!(batch.error_code(), -32600);
    let no_method = post(&app, &headers, json!({"jsonrpc": "2.0", "id": 5}).to_string()).await;
    assert_eq!(no_method.status, 400);
    assert_eq!(no_method.error_code(), -32600);
    assert_eq!(no_method.json()["id"], 5);
}

#[tokio::test]
async fn get_and_delete_are_405_with_allow_post() {
    let app = spawn_app().await;
    let token = format!("Bearer {}", app.token("buyer-sby"));
    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let response = app
            .http
            .request(method.clone(), app.url("/api/mcp"))
            .header("authorization", &token)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", "anything")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 405, "{method}");
        assert_eq!(response.headers()["allow"], "POST");
        assert!(response.headers().get("mcp-session-id").is_none());
    }
}

#[tokio::test]
async fn a_request_without_a_valid_token_is_401_with_the_resource_metadata_challenge() {
    let app = spawn_app().await;
    let metadata = format!("{}/.well-known/oauth-protected-resource", app.server.url());
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {}}).to_string();
    let anonymous = [
        ("content-type", "application/json".to_owned()),
        ("accept", "application/json, text/event-stream".to_owned()),
    ];
    let answer = post(&app, &anonymous, body.clone()).await;
    assert_eq!(answer.status, 401);
    assert_eq!(
        answer.header("www-authenticate"),
        Some(format!("Bearer resource_metadata=\"{metadata}\"").as_str())
    );
    let error = answer.json();
    assert_eq!(error["id"], 9);
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("No bearer token was sent")
    );
    assert_eq!(error["error"]["data"]["code"], "UNAUTHENTICATED");
    let mut forged = anonymous.to_vec();
    forged.push(("authorization", "Bearer not.a.jwt".to_owned()));
    let answer = post(&app, &forged, body).await;
    assert_eq!(answer.status, 401);
    assert!(
        answer
            .header("www-authenticate")
            .unwrap()
            .contains("error=\"invalid_token\"")
    );
    assert!(app.audit_items().await.is_empty(), "listing is not a call");

    // A tool call without a token is refused the same way and counted in the anonymous trace.
    let call = json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call",
        "params": {"name": "purchasing_create_po_draft", "arguments": po_input("no-token")}});
    let answer = post(&app, &anonymous, call.to_string()).await;
    assert_eq!(answer.status, 401);
    assert!(answer.header("www-authenticate").unwrap().contains(&metadata));
    assert_eq!(answer.json()["id"], 10);
    assert!(
        app.audit_items().await.is_empty(),
        "an unverified caller names no partition"
    );
    let trace = app.anonymous_trace().await;
    assert_eq!(
        trace.get(&("purchasing_create_po_draft".to_owned(), "missing".to_owned())),
        Some(&1)
    );
    assert_eq!(app.count_kind("idempotency_key").await, 0);
}

#[tokio::test]
async fn a_foreign_origin_is_refused_with_403_before_anything_else() {
    let app = spawn_app().await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    let mut headers = client_headers(&app, "buyer-sby");
    headers.push(("origin", "http://evil.example.com".into()));
    let answer = post(&app, &headers, body.clone()).await;
    assert_eq!(answer.status, 403);
    assert!(
        answer.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("DNS rebinding")
    );
    // No token is needed to be refused: the origin is checked first.
    let answer = post(&app, &[("origin", "https://evil.example.com".to_owned())], body.clone()).await;
    assert_eq!(answer.status, 403);
    // A rebound host name is refused even without an Origin.
    let mut rebound = client_headers(&app, "buyer-sby");
    rebound.push(("host", "evil.example.com".into()));
    assert_eq!(post(&app, &rebound, body.clone()).await.status, 403);
    // The server's own origin and loopback tools (e.g. the MCP Inspector) pass.
    for origin in [app.server.url(), "http://localhost:6274".to_owned()] {
        let mut headers = client_headers(&app, "buyer-sby");
        headers.push(("origin", origin.clone()));
        assert_eq!(post(&app, &headers, body.clone()).await.status, 200, "{origin}");
    }
}

#[tokio::test]
async fn server_discover_lists_the_versions_capabilities_and_identity() {
    let app = spawn_app().await;
    let answer = modern(&app, "clerk-sby", "server/discover", json!({})).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    assert_eq!(answer.header("mcp-session-id"), None);
    let result = answer.result();
    assert_eq!(result["resultType"], "complete");
    assert_eq!(
        result["supportedVersions"],
        json!([MODERN, LEGACY, "2025-06-18", "2025-03-26"])
    );
    assert_eq!(result["capabilities"], json!({"tools": {"listChanged": false}}));
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "draftline"
    );
    assert_eq!(result["serverInfo"]["name"], "draftline");
    assert!(result["instructions"].as_str().unwrap().contains("client_ref"));
    assert_eq!(result["cacheScope"], "public");
    assert!(result["ttlMs"].as_u64().is_some());
}

on_both_backends! {
    #[tokio::test]
    async fn the_stateless_revision_lists_and_calls_tools_without_a_handshake(backend) {
        let app = spawn_app_on(backend).await;
        let listed = modern(&app, "buyer-sby", "tools/list", json!({})).await;
        assert_eq!(listed.status, 200, "{}", listed.text);
        let listed = listed.result();
        assert_eq!(listed["resultType"], "complete");
        assert_eq!(
            listed["cacheScope"], "private",
            "the list depends on the caller's scopes"
        );
        assert!(listed["ttlMs"].as_u64().is_some());
        let expected: Vec<String> = expected_tools(&app, "buyer-sby")
            .iter()
            .map(|d| d.name.to_owned())
            .collect();
        assert_eq!(names(&listed["tools"]), expected);

        let called = modern(
            &app,
            "buyer-sby",
            "tools/call",
            json!({"name": "purchasing_create_po_draft", "arguments": po_input("modern-1")}),
        )
        .await;
        assert_eq!(called.status, 200, "{}", called.text);
        let called = called.result();
        assert_eq!(called["resultType"], "complete");
        assert_eq!(called["isError"], false);
        assert_eq!(called["_meta"]["replayed"], false);
        assert_eq!(
            called["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
            "draftline"
        );
        let again = modern(
            &app,
            "buyer-sby",
            "tools/call",
            json!({"name": "purchasing_create_po_draft", "arguments": po_input("modern-1")}),
        )
        .await;
        assert_eq!(again.result()["_meta"]["replayed"], true);
    }
}

#[tokio::test]
async fn a_modern_request_whose_header_disagrees_with_meta_is_a_header_mismatch() {
    let app = spawn_app().await;
    let body = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {}
    }}})
    .to_string();
    let cases: [(&str, Vec<(&str, String)>); 4] = [
        ("no version header", vec![("mcp-method", "tools/list".into())]),
        (
            "another version in the header",
            vec![
                ("mcp-protocol-version", LEGACY.into()),
                ("mcp-method", "tools/list".into()),
            ],
        ),
        ("no Mcp-Method", vec![("mcp-protocol-version", MODERN.into())]),
        (
            "another method in Mcp-Method",
            vec![
                ("mcp-protocol-version", MODERN.into()),
                ("mcp-method", "prompts/list".into()),
            ],
        ),
    ];
    for (case, extra) in cases {
        let mut headers = client_headers(&app, "buyer-sby");
        headers.extend(extra);
        let answer = post(&app, &headers, body.clone()).await;
        assert_eq!(answer.status, 400, "{case}: {}", answer.text);
        assert_eq!(answer.error_code(), -32020, "{case}");
        assert_eq!(answer.json()["id"], 4, "{case}");
    }
    // Mcp-Name must name the tool the body calls.
    let mut headers = client_headers(&app, "buyer-sby");
    headers.extend([
        ("mcp-protocol-version", MODERN.to_owned()),
        ("mcp-method", "tools/call".to_owned()),
        ("mcp-name", "purchasing_get_po".to_owned()),
    ]);
    let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
        "name": "inventory_get_stock", "arguments": {"item_code": "BRG-0042"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
    }});
    let answer = post(&app, &headers, call.to_string()).await;
    assert_eq!((answer.status, answer.error_code()), (400, -32020));
    assert!(app.audit_items().await.is_empty(), "nothing ran");
}

#[tokio::test]
async fn an_unsupported_protocol_version_is_400_with_the_supported_list() {
    let app = spawn_app().await;
    let body = json!({"jsonrpc": "2.0", "id": 6, "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2099-01-01",
        "io.modelcontextprotocol/clientCapabilities": {}
    }}});
    let mut headers = client_headers(&app, "buyer-sby");
    headers.extend([
        ("mcp-protocol-version", "2099-01-01".to_owned()),
        ("mcp-method", "server/discover".to_owned()),
    ]);
    let answer = post(&app, &headers, body.to_string()).await;
    assert_eq!(answer.status, 400, "{}", answer.text);
    let error = &answer.json()["error"];
    assert_eq!(error["code"], -32022);
    assert_eq!(error["message"], "Unsupported protocol version");
    assert_eq!(error["data"]["requested"], "2099-01-01");
    assert_eq!(
        error["data"]["supported"],
        json!([MODERN, LEGACY, "2025-06-18", "2025-03-26"])
    );

    // A handshake-era request with a version header we do not speak is 400 too.
    let mut headers = client_headers(&app, "buyer-sby");
    headers.push(("mcp-protocol-version", "1999-12-31".into()));
    let legacy_request = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list"});
    let answer = post(&app, &headers, legacy_request.to_string()).await;
    assert_eq!(answer.status, 400);
    assert_eq!(answer.error_code(), -32022);

    // A modern request without its required _meta is invalid params, 400.
    let mut headers = client_headers(&app, "buyer-sby");
    headers.extend([
        ("mcp-protocol-version", MODERN.to_owned()),
        ("mcp-method", "tools/list".to_owned()),
    ]);
    let answer = post(
        &app,
        &headers,
        json!({"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": {}}).to_string(),
    )
    .await;
    assert_eq!((answer.status, answer.error_code()), (400, -32602));
}

#[tokio::test]
async fn a_user_without_the_scope_never_sees_the_tool_and_calling_it_names_the_missing_scope() {
    let app = spawn_app().await;
    for listed in [
        legacy(&app, "clerk-sby", "tools/list", json!({})).await.result(),
        modern(&app, "clerk-sby", "tools/list", json!({})).await.result(),
    ] {
        let listed = names(&listed["tools"]);
        assert!(!listed.contains(&"purchasing_create_po_draft".to_owned()), "{listed:?}");
        assert!(!listed.contains(&"purchasing_get_po".to_owned()), "{listed:?}");
    }
    let before = app.count_kind("purchase_order").await;
    let answer = call_tool(&app, "clerk-sby", "purchasing_create_po_draft", po_input("clerk-try")).await;
    assert_eq!(answer.status, 200);
    let result = answer.result();
    assert_eq!(result["isError"], true);
    let message = result["content"][0]["text"].as_str().unwrap();
    assert!(
        message.contains("purchasing:draft"),
        "names the missing scope: {message}"
    );
    assert!(message.contains("Nothing was read or written"), "{message}");
    assert_eq!(result["_meta"]["error"]["code"], "FORBIDDEN");
    assert_eq!(app.count_kind("purchase_order").await, before);
    let audits = app.audit_items().await;
    assert_eq!(audits.len(), 1);
    assert_eq!(audits[0]["outcome"], "denied");
    assert_eq!(audits[0]["code"], "FORBIDDEN");
    assert_eq!(audits[0]["on_behalf_of"], "clerk-sby");
    assert_eq!(audits[0]["transport"], "mcp");
}

#[tokio::test]
async fn a_client_that_cannot_take_json_is_refused() {
    let app = spawn_app().await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    let mut headers = client_headers(&app, "buyer-sby");
    headers.retain(|(name, _)| *name != "accept");
    headers.push(("accept", "text/event-stream".into()));
    assert_eq!(post(&app, &headers, body.clone()).await.status, 406);
    let mut headers = client_headers(&app, "buyer-sby");
    headers.retain(|(name, _)| *name != "content-type");
    headers.push(("content-type", "text/plain".into()));
    assert_eq!(post(&app, &headers, body).await.status, 415);
}

#[tokio::test]
async fn a_limit_of_the_tenants_policy_is_limit_reached_on_both_revisions() {
    let app = spawn_app().await;
    // A day budget of 1.00 IDR: no purchase order fits.
    app.set_policy(&json!({
        "version": null, "mode": "enforce", "time_zone": "+07:00",
        "limits": {"per_person_per_day": {"max_value": [{"currency": "IDR", "amount": "1.00"}]}},
        "branches": null
    }))
    .await;
    let before = app.documents("purchase_order").await;
    let arguments = json!({"name": "purchasing_create_po_draft", "arguments": po_input("over-budget")});
    for answer in [
        legacy(&app, "buyer-sby", "tools/call", arguments.clone()).await,
        modern(&app, "buyer-sby", "tools/call", arguments.clone()).await,
    ] {
        assert_eq!(
            answer.status, 200,
            "a refusal is a result, not an HTTP error: {}",
            answer.text
        );
        let result = answer.result();
        assert_eq!(result["isError"], true, "{result}");
        let error = &result["_meta"]["error"];
        assert_eq!(error["code"], "LIMIT_REACHED");
        assert_eq!(error["retryable"], false);
        assert_eq!(error["limit"]["name"], "per_person_per_day.max_value");
        assert_eq!(error["limit"]["thisCall"], "3307500.00");
        let message = result["content"][0]["text"].as_str().unwrap();
        assert!(message.contains("No draft was created"), "{message}");
        assert!(message.contains("ask a person to draft this one"), "{message}");
    }
    assert_eq!(app.documents("purchase_order").await, before);
}

#[tokio::test]
async fn a_vendor_outside_the_allow_list_is_refused_over_mcp_with_ask_a_person() {
    let app = spawn_app().await;
    app.set_policy(&json!({
        "version": null, "mode": "enforce", "time_zone": "+07:00",
        "limits": {"counterparties": {"rule": "allow_list", "vendors": ["V-00415"], "customers": null}},
        "branches": null
    }))
    .await;
    let arguments = json!({"name": "purchasing_create_po_draft", "arguments": po_input("not-listed")});
    for answer in [
        legacy(&app, "buyer-sby", "tools/call", arguments.clone()).await,
        modern(&app, "buyer-sby", "tools/call", arguments.clone()).await,
    ] {
        let result = answer.result();
        assert_eq!(result["isError"], true, "{result}");
        assert_eq!(result["_meta"]["error"]["code"], "LIMIT_REACHED");
        assert_eq!(result["_meta"]["error"]["limit"]["name"], "counterparties.vendors");
        let message = result["content"][0]["text"].as_str().unwrap();
        assert!(message.contains("ask a person to draft this one"), "{message}");
    }
}

#[tokio::test]
async fn over_mcp_the_examiner_shows_only_the_callers_own_run_of_a_shared_run_id() {
    let app = spawn_app().await;
    app.set_policy(&json!({
        "version": null, "mode": "enforce", "time_zone": "+07:00",
        "limits": {"per_run": {"max_drafts": 5, "max_value": null}},
        "branches": null
    }))
    .await;
    let run = "shared-run-mcp";
    // buyer-sby drafts twice under the run id (two item sets: no near
    // duplicate); buyer-jkt never.
    for (key, lines) in [("mcp-shared-1", 2), ("mcp-shared-2", 1)] {
        let mut input = po_input(key);
        input["lines"].as_array_mut().unwrap().truncate(lines);
        let headers = [("idempotency-key", key.to_owned()), ("x-agent-run-id", run.to_owned())];
        let reply = app
            .call("buyer-sby", "purchasing_create_po_draft", &input, &headers)
            .await;
        assert_eq!(reply.status, 201, "{:?}", reply.body);
    }
    let examine = |user: &'static str, revision: &'static str| {
        let app = &app;
        async move {
            let mut headers = vec![
                (
                    "authorization",
                    format!("Bearer {}", crate::limits::examiner_token_of(app, user)),
                ),
                ("content-type", "application/json".to_owned()),
                ("accept", "application/json, text/event-stream".to_owned()),
                ("mcp-protocol-version", revision.to_owned()),
                ("x-agent-run-id", run.to_owned()),
            ];
            let mut params = json!({"name": "agent_get_limits", "arguments": {}});
            if revision == MODERN {
                params["_meta"] = json!({
                    "io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientInfo": {"name": "api-tests", "version": "1.0.0"},
                    "io.modelcontextprotocol/clientCapabilities": {}
                });
                headers.push(("mcp-method", "tools/call".to_owned()));
                headers.push(("mcp-name", "agent_get_limits".to_owned()));
            }
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
            let answer = post(app, &headers, body.to_string()).await;
            assert_eq!(answer.status, 200, "{}", answer.text);
            let result = answer.result();
            assert_eq!(result["isError"], false, "{result}");
            result["structuredContent"]["run"]["drafts"].clone()
        }
    };
    for revision in [LEGACY, MODERN] {
        assert_eq!(
            examine("buyer-jkt", revision).await,
            json!({"max": 5, "used": 0, "left": 5}),
            "{revision}: buyer-jkt's run of that id is its own, and empty"
        );
        assert_eq!(
            examine("buyer-sby", revision).await,
            json!({"max": 5, "used": 2, "left": 3}),
            "{revision}"
        );
    }
}

#[tokio::test]
async fn agent_get_limits_is_listed_for_a_caller_with_its_scope_only_and_answers_over_mcp() {
    let app = spawn_app().await;
    app.set_policy(&json!({
        "version": null, "mode": "observe", "time_zone": "+07:00",
        "limits": {"per_run": {"max_drafts": 5, "max_value": null}},
        "branches": null
    }))
    .await;
    let examiner = crate::limits::examiner_token(&app);
    let request = |method: &str, params: Value| {
        let headers = vec![
            ("authorization", format!("Bearer {examiner}")),
            ("content-type", "application/json".to_owned()),
            ("accept", "application/json, text/event-stream".to_owned()),
            ("mcp-protocol-version", LEGACY.to_owned()),
            ("x-agent-run-id", "run-mcp".to_owned()),
        ];
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        (headers, body.to_string())
    };
    let (headers, body) = request("tools/list", json!({}));
    let listed = names(&post(&app, &headers, body).await.result()["tools"]);
    assert!(listed.contains(&"agent_get_limits".to_owned()), "{listed:?}");
    // buyer-sby holds agent:read (DESIGN.md's demo people); no one else does.
    for user in DEMO_USERS {
        let listed = names(&legacy(&app, user, "tools/list", json!({})).await.result()["tools"]);
        let examiner = user == "buyer-sby";
        assert_eq!(
            listed.contains(&"agent_get_limits".to_owned()),
            examiner,
            "{user}: {listed:?}"
        );
    }
    let (headers, body) = request("tools/call", json!({"name": "agent_get_limits", "arguments": {}}));
    let answer = post(&app, &headers, body).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    let result = answer.result();
    assert_eq!(result["isError"], false, "{result}");
    let data = &result["structuredContent"];
    assert_eq!(data["mode"], "observe");
    assert_eq!(
        data["run"]["agent_run"], "run-mcp",
        "the run of the request, as for drafts"
    );
    assert_eq!(data["run"]["drafts"]["left"], 5);
    // buyer-jkt without the scope: not listed, and a call names the scope.
    let refused = call_tool(&app, "buyer-jkt", "agent_get_limits", json!({})).await;
    let result = refused.result();
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(result["_meta"]["error"]["code"], "FORBIDDEN");
}
