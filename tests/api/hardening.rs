//! The holes found by attacking `draftline serve` (issue 8), each kept
//! closed by a test that failed on the code before its fix.

use std::collections::{BTreeMap, BTreeSet};

use aws_sdk_dynamodb::types::AttributeValue;
use draftline_cli::{TokenSpec, token_for};
use serde_json::{Value, json};

use crate::helpers::{TestApp, diff, po_input, spawn_app, spawn_app_drafting_freely};

fn spec(sub: &str, branch: &str, branch_code: &str, scope: &str) -> TokenSpec {
    TokenSpec {
        sub: sub.into(),
        tenant: "demo".into(),
        branch: branch.into(),
        branch_code: branch_code.into(),
        scope: scope.into(),
        roles: vec![],
    }
}

/// MCP `tools/call` of a draft as `user`: the key is the user + `client_ref`.
async fn mcp_draft(app: &TestApp, user: &str, client_ref: &str) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "purchasing_create_po_draft", "arguments": po_input(client_ref)}});
    app.http
        .post(app.url("/api/mcp"))
        .bearer_auth(app.token(user))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .body(body.to_string())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test]
async fn sixty_four_concurrent_fresh_drafts_of_one_branch_all_succeed_with_unique_increasing_numbers() {
    let app = spawn_app_drafting_freely().await;
    let calls = (0..64).map(|i| {
        let app = &app;
        async move {
            let reply = app
                .create_po_draft("buyer-sby", &format!("fresh-{i}"), &po_input(&format!("fresh-{i}")))
                .await;
            (reply.status, reply.body)
        }
    });
    let replies = futures::future::join_all(calls).await;
    let failures: Vec<&(u16, Value)> = replies.iter().filter(|(status, _)| *status != 201).collect();
    assert!(
        failures.is_empty(),
        "{} of 64 failed, e.g. {:?}",
        failures.len(),
        failures.first()
    );
    let numbers: BTreeSet<String> = replies
        .iter()
        .map(|(_, body)| body["data"]["po_number"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(numbers.len(), 64, "every draft has its own number");
    // Numbers only move forward: a draft made after these gets a higher one.
    let next = app.create_po_draft("buyer-sby", "after", &po_input("after")).await;
    let after = next.body["data"]["po_number"].as_str().unwrap().to_owned();
    assert!(
        numbers.iter().all(|n| *n < after),
        "{after} follows every earlier number"
    );
    assert_eq!(
        app.count_kind("purchase_order").await,
        crate::helpers::seeded_purchase_orders() + 65
    );
}

#[tokio::test]
async fn calls_refused_before_anyone_is_identified_leave_a_bounded_expiring_trace() {
    let app = spawn_app().await;
    for i in 0..200 {
        let reply = app
            .post_raw(
                "inventory_get_stock",
                &[("x-agent-run-id", format!("attacker-run-{i}"))],
                json!({"item_code": "BRG-0042"}).to_string(),
            )
            .await;
        assert_eq!(reply.status, 401);
    }
    // A later window flushes what the instance counted in the earlier one.
    app.clock.advance(chrono::Duration::seconds(61));
    let reply = app
        .post_raw("inventory_get_stock", &[], json!({"item_code": "BRG-0042"}).to_string())
        .await;
    assert_eq!(reply.status, 401);

    let items = app.scan_all().await;
    let anonymous: Vec<_> = items
        .iter()
        .filter(|i| i["pk"].as_s().unwrap().starts_with("T#_anonymous"))
        .collect();
    assert!(
        anonymous.len() <= 4,
        "{} items for 201 anonymous calls",
        anonymous.len()
    );
    assert!(
        anonymous.iter().all(|i| i.contains_key("expires_at")),
        "every anonymous trace item expires"
    );
    let counted: u64 = anonymous
        .iter()
        .map(|i| i["count"].as_n().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(counted, 201, "the trace counts every refused call");
    assert!(
        anonymous
            .iter()
            .all(|i| !i["pk"].as_s().unwrap().contains("attacker-run")),
        "the caller's run id picks no partition"
    );
}

#[tokio::test]
async fn a_caller_cannot_occupy_the_key_another_callers_derived_key_maps_to() {
    let app = spawn_app_drafting_freely().await;
    // buyer-jkt squats the MCP-derived key of buyer-sby's client_ref...
    let squat = app
        .create_po_draft("buyer-jkt", "mcp:buyer-sby:reorder-squat", &po_input("reorder-squat"))
        .await;
    assert_eq!(squat.status, 201, "{:?}", squat.body);
    // ...and buyer-sby's own MCP draft with that client_ref still works.
    let own = mcp_draft(&app, "buyer-sby", "reorder-squat").await;
    assert_eq!(own["result"]["isError"], json!(false), "{own}");
    assert_eq!(
        own["result"]["structuredContent"]["po_number"]
            .as_str()
            .unwrap()
            .split('-')
            .nth(1),
        Some("SBY")
    );

    // The same with a run-derived key: buyer-jkt sends buyer-sby's run id.
    let squat = app
        .call(
            "buyer-jkt",
            "purchasing_create_po_draft",
            &po_input("reorder-run"),
            &[("x-agent-run-id", "run-sby-7".into())],
        )
        .await;
    assert_eq!(squat.status, 201);
    let own = app
        .call(
            "buyer-sby",
            "purchasing_create_po_draft",
            &po_input("reorder-run"),
            &[("x-agent-run-id", "run-sby-7".into())],
        )
        .await;
    assert_eq!(own.status, 201, "{:?}", own.body);
    // A caller's own retry is still a replay.
    let retry = app
        .call(
            "buyer-sby",
            "purchasing_create_po_draft",
            &po_input("reorder-run"),
            &[("x-agent-run-id", "run-sby-7".into())],
        )
        .await;
    assert_eq!(retry.status, 200);
    assert_eq!(retry.body["replayed"], true);
    assert_eq!(retry.body["data"]["po_number"], own.body["data"]["po_number"]);
}

#[tokio::test]
async fn a_replay_wins_over_rules_that_depend_on_the_clock() {
    let app = spawn_app().await;
    let mut input = po_input("due-today");
    input["needed_by"] = json!("2026-11-29");
    let first = app.create_po_draft("buyer-sby", "due-today", &input).await;
    assert_eq!(first.status, 201, "{:?}", first.body);
    // The agent's retry arrives just after midnight: needed_by is now in the past.
    app.clock.advance(chrono::Duration::minutes(15 * 60 + 1));
    let retry = app.create_po_draft("buyer-sby", "due-today", &input).await;
    assert_eq!(retry.status, 200, "{:?}", retry.body);
    assert_eq!(retry.body["replayed"], true);
    assert_eq!(retry.body["data"]["po_number"], first.body["data"]["po_number"]);
    // A new draft with that date is refused, as before.
    let fresh = app.create_po_draft("buyer-sby", "due-yesterday", &input).await;
    assert_eq!(fresh.status, 400);
}

#[tokio::test]
async fn every_route_of_the_local_server_refuses_a_foreign_origin_or_host() {
    let app = spawn_app().await;
    let token = app.token("buyer-sby");
    let stock = json!({"item_code": "BRG-0042"}).to_string();
    for (name, value) in [("origin", "http://evil.example"), ("host", "evil.example:3000")] {
        let tool = app
            .http
            .post(app.url("/api/inventory_get_stock"))
            .bearer_auth(&token)
            .header(name, value)
            .body(stock.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(tool.status(), 403, "tool function with {name}: {value}");
        let listing = app
            .http
            .get(app.url("/api/tools?format=mcp"))
            .bearer_auth(&token)
            .header(name, value)
            .send()
            .await
            .unwrap();
        assert_eq!(listing.status(), 403, "tool list with {name}: {value}");
    }
    // Same-origin and loopback callers are served.
    let ok = app
        .http
        .post(app.url("/api/inventory_get_stock"))
        .bearer_auth(&token)
        .header("origin", app.server.url())
        .body(stock)
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);
}

#[tokio::test]
async fn audit_items_are_append_only_even_when_a_request_id_repeats() {
    let app = spawn_app().await;
    let headers = [("x-request-id", "same-request-id".to_owned())];
    let first = app
        .call(
            "buyer-sby",
            "purchasing_create_po_draft",
            &po_input("audit-a"),
            &[("idempotency-key", "audit-a".into()), headers[0].clone()],
        )
        .await;
    assert_eq!(first.status, 201);
    let second = app
        .call(
            "buyer-sby",
            "inventory_get_stock",
            &json!({"item_code": "BRG-0042"}),
            &headers,
        )
        .await;
    assert_eq!(second.status, 200);
    let audits: Vec<BTreeMap<String, String>> = app
        .audit_items()
        .await
        .into_iter()
        .filter(|a| a["request_id"] == "same-request-id")
        .collect();
    assert_eq!(audits.len(), 2, "{audits:?}");
    assert!(
        audits
            .iter()
            .any(|a| a.get("document_number").map(String::as_str) == Some(crate::helpers::first_sby_po().as_str())),
        "the item that links the document survives"
    );
}

#[tokio::test]
async fn two_tenants_with_the_same_key_and_request_id_both_commit() {
    let app = spawn_app().await;
    app.copy_tenant("demo", "other").await;
    let other = TokenSpec {
        tenant: "other".into(),
        ..spec("buyer-x", "SBY-01", "SBY", "purchasing:draft purchasing:read")
    };
    let headers = |token: String| {
        vec![
            ("authorization", format!("Bearer {token}")),
            ("content-type", "application/json".to_owned()),
            ("idempotency-key", "shared-key".to_owned()),
            ("x-request-id", "shared-request".to_owned()),
        ]
    };
    let demo = app
        .post_raw(
            "purchasing_create_po_draft",
            &headers(app.token("buyer-sby")),
            po_input("t").to_string(),
        )
        .await;
    assert_eq!(demo.status, 201, "{:?}", demo.body);
    let other = app
        .post_raw(
            "purchasing_create_po_draft",
            &headers(token_for(&other, &app.server.url(), 600).unwrap()),
            po_input("t").to_string(),
        )
        .await;
    assert_eq!(other.status, 201, "{:?}", other.body);
}

#[tokio::test]
async fn document_numbers_of_every_branch_code_and_length_read_back() {
    let app = spawn_app_drafting_freely().await;
    // A branch code with a digit, accepted at sign-in.
    let sby1 = spec("buyer-sby1", "SBY-01", "SBY1", "purchasing:read purchasing:draft");
    let token = token_for(&sby1, &app.server.url(), 600).unwrap();
    let auth = |token: &str| {
        vec![
            ("authorization", format!("Bearer {token}")),
            ("content-type", "application/json".to_owned()),
        ]
    };
    let mut headers = auth(&token);
    headers.push(("idempotency-key", "sby1".into()));
    let draft = app
        .post_raw("purchasing_create_po_draft", &headers, po_input("sby1").to_string())
        .await;
    assert_eq!(draft.status, 201, "{:?}", draft.body);
    let number = draft.body["data"]["po_number"].as_str().unwrap().to_owned();
    // Numbers count per branch (SBY-01 starts after the demo's three drafts),
    // printed with the token's branch code.
    assert_eq!(number, "PO-SBY1-000004");
    let back = app
        .post_raw(
            "purchasing_get_po",
            &auth(&token),
            json!({"po_number": number}).to_string(),
        )
        .await;
    assert_eq!(back.status, 200, "{:?}", back.body);

    // Past sequence 999999 the number grows a digit and still reads back.
    app.inspect
        .client()
        .put_item()
        .table_name(app.inspect.table())
        .item("pk", AttributeValue::S("T#demo#B#SBY-01#SEQ".into()))
        .item("sk", AttributeValue::S("PO".into()))
        .item("kind", AttributeValue::S("sequence".into()))
        .item("last", AttributeValue::N("999999".into()))
        .send()
        .await
        .unwrap();
    let big = app.create_po_draft("buyer-sby", "big", &po_input("big")).await;
    assert_eq!(big.status, 201, "{:?}", big.body);
    assert_eq!(big.body["data"]["po_number"], "PO-SBY-1000000");
    let back = app
        .call(
            "buyer-sby",
            "purchasing_get_po",
            &json!({"po_number": "PO-SBY-1000000"}),
            &[],
        )
        .await;
    assert_eq!(back.status, 200, "{:?}", back.body);
}

#[tokio::test]
async fn a_stored_price_too_large_to_multiply_is_a_clear_error_and_the_server_lives_on() {
    let app = spawn_app().await;
    app.inspect
        .client()
        .update_item()
        .table_name(app.inspect.table())
        .key("pk", AttributeValue::S("T#demo#VENDOR#V-00231".into()))
        .key("sk", AttributeValue::S("PRICES#BRG-0042".into()))
        .update_expression("SET prices.#uom = :p")
        .condition_expression("attribute_exists(prices.#uom)")
        .expression_attribute_names("#uom", "BOX")
        .expression_attribute_values(":p", AttributeValue::N("79228162514264337593543950335".into()))
        .send()
        .await
        .unwrap();
    // A stored amount no arithmetic can hold is our data's fault: a 500 with
    // the generic text (the cause is in the log), not a dead instance.
    let reply = app.create_po_draft("buyer-sby", "huge", &po_input("huge")).await;
    assert_eq!(reply.status, 500, "{:?}", reply.body);
    assert_eq!(reply.error_code(), "INTERNAL_ERROR");
    assert!(
        reply.message().contains("Nothing was created or changed"),
        "{:?}",
        reply.body
    );
    assert_eq!(
        app.count_kind("purchase_order").await,
        crate::helpers::seeded_purchase_orders()
    );
    let after = app
        .call(
            "buyer-sby",
            "inventory_get_stock",
            &json!({"item_code": "BRG-0042"}),
            &[],
        )
        .await;
    assert_eq!(after.status, 200);
}

#[tokio::test]
async fn a_resource_url_with_a_trailing_slash_accepts_a_token_for_exactly_that_url() {
    let app = spawn_app().await;
    let resource = format!("{}/", crate::function_process::FUNCTION_RESOURCE);
    let mut env = crate::function_process::function_env(&app);
    for (name, value) in env.iter_mut() {
        if name == "DRAFTLINE_RESOURCE" {
            *value = resource.clone();
        }
    }
    let function = crate::vercel::VercelFunction::start_with_env(env!("CARGO_BIN_EXE_inventory_get_stock"), &env).await;
    let stock = json!({"item_code": "BRG-0042"}).to_string();
    for aud in [resource.clone(), crate::function_process::FUNCTION_RESOURCE.to_owned()] {
        let token = crate::function_process::function_token_for(&draftline_cli::demo_spec("buyer-sby").unwrap(), &aud);
        let (status, _, body) = function
            .post(
                "/api/inventory_get_stock",
                &[("authorization", format!("Bearer {token}"))],
                stock.clone(),
            )
            .await;
        assert_eq!(status, 200, "aud {aud}: {body}");
    }
    let other = crate::function_process::function_token_for(
        &draftline_cli::demo_spec("buyer-sby").unwrap(),
        "https://elsewhere.test/",
    );
    let (status, _, _) = function
        .post(
            "/api/inventory_get_stock",
            &[("authorization", format!("Bearer {other}"))],
            stock,
        )
        .await;
    assert_eq!(status, 401);
}

/// A token for any tenant, branch and scopes, for `app`'s server.
pub fn token_of(tenant: &str, sub: &str, branch: &str, branch_code: &str, scope: &str, app: &TestApp) -> String {
    let spec = TokenSpec {
        tenant: tenant.into(),
        ..spec(sub, branch, branch_code, scope)
    };
    token_for(&spec, &app.server.url(), 600).unwrap()
}

/// An audit-shaped item of run `run` (its own partition, so nothing else reads it).
fn appended(
    run: &str,
    n: usize,
    note: &str,
) -> std::collections::HashMap<String, aws_sdk_dynamodb::types::AttributeValue> {
    use aws_sdk_dynamodb::types::AttributeValue::S;
    std::collections::HashMap::from([
        ("pk".to_owned(), S(format!("T#demo#RUN#{run}"))),
        ("sk".to_owned(), S(format!("AUDIT#2026-12-01T00:00:00.000Z#{n:04}"))),
        ("kind".to_owned(), S("append-test".to_owned())),
        ("note".to_owned(), S(note.to_owned())),
    ])
}

#[tokio::test]
async fn appended_items_written_at_once_share_one_transaction_and_never_overwrite_an_item() {
    // This test's runtime has one thread: every append below is queued
    // before the writer runs, so they form one group.
    let app = spawn_app().await;
    let db = &app.inspect;
    let counts = || db.round_trips().snapshot();
    let failed = "Nothing was recorded.";

    let before = counts();
    let first = (0..5).map(|n| db.append(appended("append-1", n, "first"), failed));
    assert!(futures::future::join_all(first).await.iter().all(Result::is_ok));
    assert_eq!(diff(&before, &counts()), [("TransactWriteItems".into(), 1)].into());

    // Items 3 and 4 exist: their conditions cancel the group's transaction,
    // then each item goes on its own, and the existing ones stay as they were.
    let before = counts();
    let second = (3..8).map(|n| db.append(appended("append-1", n, "second"), failed));
    assert!(futures::future::join_all(second).await.iter().all(Result::is_ok));
    assert_eq!(
        diff(&before, &counts()),
        [("PutItem".into(), 5), ("TransactWriteItems".into(), 1)].into()
    );
    let stored = db
        .client()
        .query()
        .table_name(db.table())
        .key_condition_expression("pk = :pk")
        .expression_attribute_values(
            ":pk",
            aws_sdk_dynamodb::types::AttributeValue::S("T#demo#RUN#append-1".into()),
        )
        .send()
        .await
        .unwrap();
    let notes: Vec<String> = stored
        .items()
        .iter()
        .map(|i| i["note"].as_s().unwrap().clone())
        .collect();
    assert_eq!(
        notes,
        [
            "first", "first", "first", "first", "first", "second", "second", "second"
        ]
    );

    // One item alone is one conditional PutItem.
    let before = counts();
    db.append(appended("append-2", 0, "alone"), failed).await.unwrap();
    assert_eq!(diff(&before, &counts()), [("PutItem".into(), 1)].into());
}
