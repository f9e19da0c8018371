//! `GET /api/tools`: the caller's tool list in every format, filtered by scope.

use draftline_contract::identity::Scopes;
use draftline_contract::schema::strict_violations;
use serde_json::Value;

use crate::helpers::{TestApp, spawn_app};

async fn list(app: &TestApp, user: &str, format: &str) -> (u16, Value) {
    let response = app
        .http
        .get(app.url(&format!("/api/tools?format={format}")))
        .bearer_auth(app.token(user))
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

/// The names a demo user may use, from the registry itself.
fn allowed(app: &TestApp, user: &str) -> Vec<String> {
    let scopes = Scopes::from_claim(draftline_erp::demo::user(user).unwrap().scope);
    app.server
        .app
        .registry()
        .visible_to(&scopes)
        .map(|d| d.name.to_owned())
        .collect()
}

#[tokio::test]
async fn every_format_lists_exactly_the_tools_the_callers_scopes_allow() {
    let app = spawn_app().await;
    for user in ["buyer-sby", "clerk-sby", "buyer-jkt", "sales-bdg"] {
        let expected = allowed(&app, user);
        assert!(!expected.is_empty(), "{user} may use some tool");

        let (status, ai) = list(&app, user, "ai-sdk").await;
        assert_eq!(status, 200);
        let names: Vec<&str> = ai["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, expected, "{user} ai-sdk");
        for tool in ai["tools"].as_array().unwrap() {
            assert_eq!(
                tool["url"],
                format!("{}/api/{}", app.server.url(), tool["name"].as_str().unwrap())
            );
            assert!(strict_violations(&tool["inputSchema"]).is_empty());
        }

        let (_, mcp) = list(&app, user, "mcp").await;
        let names: Vec<&str> = mcp["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, expected, "{user} mcp");

        let (_, openai) = list(&app, user, "openai").await;
        let mut names = Vec::new();
        for entry in openai["tools"].as_array().unwrap() {
            if entry["type"] == "tool_search" {
                continue;
            }
            assert_eq!(entry["type"], "namespace");
            assert!(
                entry["description"].as_str().unwrap().to_lowercase().contains("cannot"),
                "a namespace says what it cannot do"
            );
            for function in entry["tools"].as_array().unwrap() {
                assert_eq!(function["strict"], true);
                assert_eq!(function["defer_loading"], true);
                assert!(
                    function["name"]
                        .as_str()
                        .unwrap()
                        .starts_with(entry["name"].as_str().unwrap())
                );
                assert!(strict_violations(&function["parameters"]).is_empty());
                names.push(function["name"].as_str().unwrap().to_owned());
            }
        }
        names.sort();
        assert_eq!(names, expected, "{user} openai");

        let (_, openapi) = list(&app, user, "openapi").await;
        assert_eq!(openapi["openapi"], "3.1.0");
        let paths: Vec<String> = openapi["paths"].as_object().unwrap().keys().cloned().collect();
        let expected_paths: Vec<String> = expected.iter().map(|n| format!("/api/{n}")).collect();
        assert_eq!(paths, expected_paths, "{user} openapi");
    }
}

#[tokio::test]
async fn a_clerk_never_sees_the_draft_tool_and_is_refused_if_it_calls_it() {
    let app = spawn_app().await;
    for format in ["ai-sdk", "mcp", "openai", "openapi"] {
        let (_, body) = list(&app, "clerk-sby", format).await;
        assert!(!body.to_string().contains("purchasing_create_po_draft"), "{format}");
    }
    let reply = app
        .call(
            "clerk-sby",
            "purchasing_create_po_draft",
            &crate::helpers::po_input("r"),
            &[("idempotency-key", "k".into())],
        )
        .await;
    assert_eq!(reply.status, 403);
    assert!(reply.message().contains("purchasing:draft"));
}

#[tokio::test]
async fn the_tool_list_needs_a_token_and_a_known_format() {
    let app = spawn_app().await;
    let response = app.http.get(app.url("/api/tools")).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 401);
    assert!(
        response.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .contains("resource_metadata=")
    );
    let post = app.http.post(app.url("/api/tools")).send().await.unwrap();
    assert_eq!(post.status().as_u16(), 405);
    assert_eq!(post.headers()["allow"], "GET");
    let (status, body) = list(&app, "buyer-sby", "yaml").await;
    assert_eq!(status, 400);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("ai-sdk, mcp, openai, openapi")
    );
}
