//! Contract snapshots: what callers and models depend on, frozen. A change
//! to any of these files fails the suite until it is reviewed and accepted
//! (`cargo insta review`, or `INSTA_UPDATE=always cargo test --test api contract`).
//!
//! Evolution rule (README, "Contract evolution"): changes are additive — a new
//! optional output field, a new tool, a new error detail. Removing or renaming
//! a field, tightening an input, or changing a code or status is breaking, and
//! a breaking change ships as a new tool name.

use draftline_cli::{TokenSpec, token_for};
use draftline_contract::error::{AuthFailure, ToolError};
use draftline_server::response;
use serde_json::{Value, json};

use crate::helpers::{TestApp, po_input, spawn_app};

/// Every scope a tool can need, so every tool is listed.
const ALL_SCOPES: &str =
    "purchasing:read purchasing:draft inventory:read sales:read sales:draft finance:read agent:read";

fn all_scopes_token(app: &TestApp) -> String {
    let spec = TokenSpec {
        sub: "contract-reader".into(),
        tenant: "demo".into(),
        branch: "SBY-01".into(),
        branch_code: "SBY".into(),
        scope: ALL_SCOPES.into(),
        roles: vec![],
    };
    token_for(&spec, &app.server.url(), 600).unwrap()
}

/// The server's random port replaced, so snapshots do not depend on it.
fn stable(app: &TestApp, value: Value) -> Value {
    let text = value.to_string().replace(&app.server.url(), "http://127.0.0.1:PORT");
    serde_json::from_str(&text).unwrap()
}

fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_sort_maps(false);
    settings
}

#[tokio::test]
async fn every_tools_definition_is_frozen() {
    let app = spawn_app().await;
    settings().bind(|| {
        for tool in app.server.app.registry().all() {
            insta::assert_json_snapshot!(format!("tool__{}", tool.name), tool);
        }
    });
}

#[tokio::test]
async fn the_four_listing_formats_are_frozen() {
    let app = spawn_app().await;
    let token = all_scopes_token(&app);
    for format in ["ai-sdk", "mcp", "openai", "openapi"] {
        let response = app
            .http
            .get(app.url(&format!("/api/tools?format={format}")))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{format}");
        let body = stable(&app, response.json().await.unwrap());
        settings().bind(|| insta::assert_json_snapshot!(format!("listing__{format}"), body));
    }
}

async fn mcp(app: &TestApp, token: &str, version: &str, method: &str, params: Value) -> Value {
    let mut params = params;
    let mut request = app
        .http
        .post(app.url("/api/mcp"))
        .bearer_auth(token)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", version);
    if version == "2026-07-28" {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientInfo": {"name": "contract-snapshots", "version": "1.0.0"},
            "io.modelcontextprotocol/clientCapabilities": {}
        });
        request = request.header("mcp-method", method);
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let response = request.body(body.to_string()).send().await.unwrap();
    assert_eq!(response.status(), 200, "{method} {version}");
    stable(app, response.json().await.unwrap())
}

#[tokio::test]
async fn mcp_tools_list_and_server_discover_are_frozen() {
    let app = spawn_app().await;
    let token = all_scopes_token(&app);
    let legacy = mcp(&app, &token, "2025-11-25", "tools/list", json!({})).await;
    let modern = mcp(&app, &token, "2026-07-28", "tools/list", json!({})).await;
    let discover = mcp(&app, &token, "2026-07-28", "server/discover", json!({})).await;
    settings().bind(|| {
        insta::assert_json_snapshot!("mcp__tools_list_2025_11_25", legacy);
        insta::assert_json_snapshot!("mcp__tools_list_2026_07_28", modern);
        insta::assert_json_snapshot!("mcp__server_discover", discover);
    });
}

/// An error answer as a caller sees it: status, the headers a client acts
/// on, and the body with the request id blanked.
fn envelope(status: u16, headers: &reqwest::header::HeaderMap, mut body: Value, app: &TestApp) -> Value {
    body["requestId"] = json!("REQUEST_ID");
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    stable(
        app,
        json!({
            "status": status,
            "www-authenticate": header("www-authenticate"),
            "retry-after": header("retry-after"),
            "body": body,
        }),
    )
}

#[tokio::test]
async fn one_error_envelope_per_code_is_frozen() {
    let app = spawn_app().await;
    let mut cases: Vec<(&str, Value)> = Vec::new();

    let mut bad = po_input("contract-invalid");
    bad["lines"][0]["uom"] = json!("KG");
    let reply = app.create_po_draft("buyer-sby", "contract-1", &bad).await;
    cases.push((
        "validation_error",
        envelope(reply.status, &reply.headers, reply.body, &app),
    ));

    let reply = app
        .post_raw("inventory_get_stock", &[], json!({"item_code": "BRG-0042"}).to_string())
        .await;
    cases.push((
        "unauthenticated",
        envelope(reply.status, &reply.headers, reply.body, &app),
    ));

    let reply = app
        .create_po_draft("clerk-sby", "contract-2", &po_input("contract-forbidden"))
        .await;
    cases.push(("forbidden", envelope(reply.status, &reply.headers, reply.body, &app)));

    let reply = app
        .call(
            "buyer-sby",
            "purchasing_get_po",
            &json!({"po_number": "PO-SBY-999999"}),
            &[],
        )
        .await;
    cases.push(("not_found", envelope(reply.status, &reply.headers, reply.body, &app)));

    let first = app
        .create_po_draft("buyer-sby", "contract-3", &po_input("contract-a"))
        .await;
    assert_eq!(first.status, 201);
    let reply = app
        .create_po_draft("buyer-sby", "contract-3", &po_input("contract-b"))
        .await;
    cases.push(("conflict_422", envelope(reply.status, &reply.headers, reply.body, &app)));

    // INPUT_REQUIRED: the same items from the same vendor again, under another key.
    let reply = app
        .create_po_draft("buyer-sby", "contract-4", &po_input("contract-c"))
        .await;
    let mut case = envelope(reply.status, &reply.headers, reply.body, &app);
    case["body"]["error"]["inputRequired"]["requestState"] = json!("REQUEST_STATE");
    for choice in ["create_another", "use_existing"] {
        let text = case["body"]["error"]["inputRequired"]["confirm"][choice]
            .as_str()
            .unwrap_or_default();
        let blanked = format!("{} REQUEST_STATE", text.split(' ').next().unwrap_or_default());
        case["body"]["error"]["inputRequired"]["confirm"][choice] = json!(blanked);
    }
    cases.push(("input_required", case));

    for (name, case) in &cases {
        settings().bind(|| insta::assert_json_snapshot!(format!("error__{name}"), case));
    }

    // The codes a local server cannot be made to answer on demand, rendered
    // through the one place that maps errors to responses.
    let rendered = [
        (
            "conflict_409",
            ToolError::InFlight {
                message: "A call with idempotency key 'k' is still being processed.".into(),
                retry_after_seconds: 2,
            },
        ),
        (
            "rate_limited",
            ToolError::RateLimited {
                message: "You are over your call budget.".into(),
                retry_after_seconds: 30,
            },
        ),
        (
            "dependency_unavailable",
            ToolError::dependency("engine down", "No draft was created."),
        ),
        ("internal_error", ToolError::internal("a bug")),
        (
            "unauthenticated_expired",
            ToolError::Unauthenticated(AuthFailure::Expired),
        ),
    ];
    for (name, err) in rendered {
        let response = response::failure(
            &err,
            "REQUEST_ID",
            "http://127.0.0.1:PORT/.well-known/oauth-protected-resource",
        );
        let header = |n: &str| {
            response
                .headers()
                .get(n)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let case = json!({
            "status": response.status().as_u16(),
            "www-authenticate": header("www-authenticate"),
            "retry-after": header("retry-after"),
            "body": serde_json::from_slice::<Value>(response.body()).unwrap(),
        });
        settings().bind(|| insta::assert_json_snapshot!(format!("error__{name}"), case));
    }
}

/// LIMIT_REACHED, added with the tenant's policy (issue 18): a new code,
/// so a new snapshot beside the others, none of which changed.
#[tokio::test]
async fn the_limit_reached_envelope_is_frozen() {
    let app = spawn_app().await;
    let version = app
        .set_policy(&json!({
            "version": null, "mode": "enforce", "time_zone": "+07:00",
            "limits": {"per_run": {"max_drafts": 1, "max_value": null}},
            "branches": null
        }))
        .await;
    assert_eq!(version, 2, "the demo seeds version 1");
    let headers = |key: &str| {
        [
            ("idempotency-key", key.to_owned()),
            ("x-agent-run-id", "run-17".to_owned()),
        ]
    };
    let first = app
        .call(
            "buyer-sby",
            "purchasing_create_po_draft",
            &po_input("contract-limit-a"),
            &headers("contract-5"),
        )
        .await;
    assert_eq!(first.status, 201, "{:?}", first.body);
    let mut other = po_input("contract-limit-b");
    other["lines"] = json!([{"item_code": "BRG-0042", "qty": 2, "uom": "BOX"}]);
    let reply = app
        .call(
            "buyer-sby",
            "purchasing_create_po_draft",
            &other,
            &headers("contract-6"),
        )
        .await;
    let case = envelope(reply.status, &reply.headers, reply.body, &app);
    settings().bind(|| insta::assert_json_snapshot!("error__limit_reached", case));
}

/// The published JSON Schema of a tenant's policy (`draftline policy
/// schema`): what the people and tools that write policies depend on.
#[test]
fn the_policy_schema_is_frozen() {
    let schema = draftline_contract::policy::schema();
    assert!(draftline_contract::schema::strict_violations(schema).is_empty());
    settings().bind(|| insta::assert_json_snapshot!("policy__schema", schema));
}
