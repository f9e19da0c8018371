//! Ask rather than guess: a draft that closely matches an open agent draft
//! of the same branch (same vendor, same items, in the last day, another
//! key) creates nothing and asks a person — over HTTP (`409
//! INPUT_REQUIRED`), MCP 2025-11-25 (`isError`) and MCP 2026-07-28 (an
//! input-required result with an elicitation) — and the answer, bound to
//! the caller, the tool, the exact input and an expiry, decides.

use serde_json::{Value, json};

use crate::helpers::{Backend, Reply, TestApp, on_both_backends, po_input, spawn_app, spawn_app_on};

/// The first draft of an agent run: 201.
async fn first_draft(app: &TestApp) -> Value {
    let reply = app
        .call(
            "buyer-sby",
            "purchasing_create_po_draft",
            &po_input("reorder-brg"),
            &[("x-agent-run-id", "r-17".into())],
        )
        .await;
    assert_eq!(reply.status, 201, "{:?}", reply.body);
    reply.body["data"].clone()
}

/// The restarted run asks for the same reorder under a new run id.
async fn again(app: &TestApp, confirm: Option<String>) -> Reply {
    let mut headers = vec![("x-agent-run-id", "r-18".to_owned())];
    if let Some(confirm) = confirm {
        headers.push(("draftline-confirm", confirm));
    }
    app.call(
        "buyer-sby",
        "purchasing_create_po_draft",
        &po_input("reorder-brg"),
        &headers,
    )
    .await
}

on_both_backends! {
    #[tokio::test]
    async fn the_same_reorder_from_a_restarted_run_asks_a_person_and_creates_nothing(backend) {
        let app = spawn_app_on(backend).await;
        let first = first_draft(&app).await;
        let number = first["po_number"].as_str().unwrap();
        let before = app.documents("purchase_order").await;
        app.clock.advance(chrono::Duration::minutes(20));

        let asked = again(&app, None).await;
        assert_eq!(asked.status, 409, "{:?}", asked.body);
        assert_eq!(asked.error_code(), "INPUT_REQUIRED");
        assert_eq!(asked.body["error"]["retryable"], false);
        assert!(asked.header("retry-after").is_none());
        let message = asked.message();
        // The age is the ERP's: the test's clock on the built-in backend,
        // Tryton's own clock on Tryton.
        let age = match backend {
            Backend::Builtin => "20 minutes ago",
            Backend::Tryton => "just now",
        };
        assert!(message.starts_with(&format!("{number} from run r-17, {age}, already drafts 10 BOX of BRG-0042 and 30 PCS of BRG-0043 from V-00231.")), "{message}");
        assert!(message.contains("Nothing was created"), "{message}");
        assert!(message.contains("Draftline-Confirm: create-another"), "{message}");
        let question = &asked.body["error"]["inputRequired"];
        assert_eq!(question["existing"]["number"], number);
        assert_eq!(question["existing"]["agent_run"], "r-17");
        assert_eq!(question["choices"], json!(["create_another", "use_existing"]));
        let state = question["requestState"].as_str().unwrap().to_owned();
        assert_eq!(question["confirm"]["create_another"], format!("create-another {state}"));
        assert_eq!(app.documents("purchase_order").await, before, "nothing was created");
        let audit = app.audit_items().await.pop().unwrap();
        assert_eq!(audit["outcome"], "input_required");
        assert_eq!(audit["code"], "INPUT_REQUIRED");

        // The person says: use the existing one. Nothing is created; the answer is that draft.
        let existing = again(&app, Some(format!("use-existing {state}"))).await;
        assert_eq!(existing.status, 200, "{:?}", existing.body);
        assert_eq!(existing.body["data"]["po_number"], number);
        assert_eq!(app.documents("purchase_order").await, before);

        // The person says: create another. One more draft, and its retry is a replay.
        let created = again(&app, Some(format!("create-another {state}"))).await;
        assert_eq!(created.status, 201, "{:?}", created.body);
        assert_ne!(created.body["data"]["po_number"], number);
        assert_eq!(app.documents("purchase_order").await, before + 1);
        let retry = again(&app, Some(format!("create-another {state}"))).await;
        assert_eq!(retry.status, 200);
        assert_eq!(retry.body["replayed"], true);
        assert_eq!(app.documents("purchase_order").await, before + 1);
    }
}

on_both_backends! {
    #[tokio::test]
    async fn a_forged_expired_foreign_or_other_input_request_state_is_refused_and_creates_nothing(backend) {
        let app = spawn_app_on(backend).await;
        first_draft(&app).await;
        let asked = again(&app, None).await;
        let state = asked.body["error"]["inputRequired"]["requestState"]
            .as_str()
            .unwrap()
            .to_owned();
        let before = app.documents("purchase_order").await;

        let mut forged = state.clone().into_bytes();
        let last = forged.len() - 1;
        forged[last] = if forged[last] == b'A' { b'B' } else { b'A' };
        let forged = String::from_utf8(forged).unwrap();
        let refused = again(&app, Some(format!("create-another {forged}"))).await;
        assert_eq!(refused.status, 400, "{:?}", refused.body);
        assert!(
            refused.message().contains("not a request state this server handed out"),
            "{}",
            refused.message()
        );

        // The same state on other arguments (another quantity) is refused.
        let mut other = po_input("reorder-brg");
        other["lines"][0]["qty"] = json!(11);
        let other_input = app
            .call(
                "buyer-sby",
                "purchasing_create_po_draft",
                &other,
                &[
                    ("x-agent-run-id", "r-18".into()),
                    ("draftline-confirm", format!("create-another {state}")),
                ],
            )
            .await;
        assert_eq!(other_input.status, 400, "{:?}", other_input.body);
        assert!(
            other_input.message().contains("another call"),
            "{}",
            other_input.message()
        );

        // Another person of the branch cannot use it.
        let other_caller = crate::hardening::token_of(
            "demo",
            "buyer-sby-2",
            "SBY-01",
            "SBY",
            "purchasing:draft purchasing:read",
            &app,
        );
        let foreign = app
            .post_raw(
                "purchasing_create_po_draft",
                &[
                    ("authorization", format!("Bearer {other_caller}")),
                    ("x-agent-run-id", "r-18".into()),
                    ("draftline-confirm", format!("create-another {state}")),
                ],
                po_input("reorder-brg").to_string(),
            )
            .await;
        assert_eq!(foreign.status, 400, "{:?}", foreign.body);

        // Sixteen minutes later the question has expired.
        app.clock.advance(chrono::Duration::minutes(16));
        let expired = again(&app, Some(format!("create-another {state}"))).await;
        assert_eq!(expired.status, 400, "{:?}", expired.body);
        assert!(expired.message().contains("expired"), "{}", expired.message());

        let garbled = again(&app, Some("maybe".into())).await;
        assert_eq!(garbled.status, 400);
        assert_eq!(app.documents("purchase_order").await, before, "nothing was created");
    }
}

on_both_backends! {
    #[tokio::test]
    async fn other_items_or_another_vendor_are_not_a_near_duplicate(backend) {
        let app = spawn_app_on(backend).await;
        first_draft(&app).await;
        let mut other_items = po_input("other-items");
        other_items["lines"] = json!([{"item_code": "BRG-0042", "qty": 10, "uom": "BOX"}]);
        let reply = app
            .call(
                "buyer-sby",
                "purchasing_create_po_draft",
                &other_items,
                &[("x-agent-run-id", "r-19".into())],
            )
            .await;
        assert_eq!(reply.status, 201, "{:?}", reply.body);
        // A day later the first draft no longer counts (on the built-in
        // backend, whose drafts are dated by the test's clock; Tryton dates
        // them by its own, which the test cannot move).
        if backend == Backend::Builtin {
            app.clock.advance(chrono::Duration::hours(25));
            let reply = again(&app, None).await;
            assert_eq!(reply.status, 201, "{:?}", reply.body);
        }
    }
}

/// A `tools/call` of the PO draft tool on MCP `version`, with `extra` params.
async fn mcp_call(app: &TestApp, version: &str, client_ref: &str, extra: Value) -> Value {
    mcp_call_with(app, version, client_ref, extra, &[]).await
}

/// [`mcp_call`] with extra HTTP headers on the MCP request.
async fn mcp_call_with(
    app: &TestApp,
    version: &str,
    client_ref: &str,
    extra: Value,
    headers: &[(&str, &str)],
) -> Value {
    let mut params = json!({"name": "purchasing_create_po_draft", "arguments": po_input(client_ref)});
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    let mut request = app
        .http
        .post(app.url("/api/mcp"))
        .bearer_auth(app.token("buyer-sby"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", version);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    if version == "2026-07-28" {
        let mut meta = json!({
            "io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientInfo": {"name": "input-required-tests", "version": "1.0.0"},
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}
        });
        if let Some(extra_meta) = params.get("_meta").and_then(Value::as_object) {
            for (k, v) in extra_meta {
                meta[k] = v.clone();
            }
        }
        params["_meta"] = meta;
        request = request
            .header("mcp-method", "tools/call")
            .header("mcp-name", "purchasing_create_po_draft");
    }
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params});
    let response = request.body(body.to_string()).send().await.unwrap();
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

#[tokio::test]
async fn mcp_2026_07_28_asks_with_an_elicitation_and_the_answer_decides() {
    let app = spawn_app().await;
    let first = mcp_call(&app, "2026-07-28", "mcp-reorder", json!({})).await;
    assert_eq!(first["result"]["isError"], false, "{first}");
    let before = app.documents("purchase_order").await;

    let asked = mcp_call(&app, "2026-07-28", "mcp-reorder-again", json!({})).await;
    let result = &asked["result"];
    assert_eq!(result["resultType"], "input_required", "{asked}");
    let elicitation = &result["inputRequests"]["draftline_near_duplicate"];
    assert_eq!(elicitation["method"], "elicitation/create");
    assert!(
        elicitation["params"]["message"]
            .as_str()
            .unwrap()
            .ends_with("Create another draft anyway?")
    );
    let state = result["requestState"].as_str().unwrap().to_owned();
    assert_eq!(app.documents("purchase_order").await, before);

    let declined = mcp_call(
        &app,
        "2026-07-28",
        "mcp-reorder-again",
        json!({"requestState": state, "inputResponses": {"draftline_near_duplicate": {"action": "decline"}}}),
    )
    .await;
    assert_eq!(declined["result"]["isError"], true, "{declined}");
    assert_eq!(declined["result"]["_meta"]["error"]["code"], "DECLINED", "{declined}");
    assert_eq!(declined["result"]["_meta"]["error"]["retryable"], false, "{declined}");
    assert_eq!(app.documents("purchase_order").await, before);

    let accepted = mcp_call(
        &app,
        "2026-07-28",
        "mcp-reorder-again",
        json!({"requestState": state, "inputResponses": {"draftline_near_duplicate": {"action": "accept", "content": {"decision": "create_another"}}}}),
    )
    .await;
    assert_eq!(accepted["result"]["isError"], false, "{accepted}");
    assert_eq!(app.documents("purchase_order").await, before + 1);

    // A state from another input is refused.
    let other = mcp_call(
        &app,
        "2026-07-28",
        "mcp-reorder-third",
        json!({"requestState": state, "inputResponses": {"draftline_near_duplicate": {"action": "accept", "content": {"decision": "create_another"}}}}),
    )
    .await;
    assert_eq!(other["result"]["isError"], true, "{other}");
    assert_eq!(app.documents("purchase_order").await, before + 1);
}

#[tokio::test]
async fn mcp_2025_11_25_gets_an_error_result_that_says_how_to_confirm() {
    let app = spawn_app().await;
    mcp_call(&app, "2025-11-25", "legacy-reorder", json!({})).await;
    let asked = mcp_call(&app, "2025-11-25", "legacy-reorder-again", json!({})).await;
    let result = &asked["result"];
    assert_eq!(result["isError"], true, "{asked}");
    assert!(result.get("resultType").is_none());
    let error = &result["_meta"]["error"];
    assert_eq!(error["code"], "INPUT_REQUIRED");
    assert!(error["message"].as_str().unwrap().contains("Nothing was created"));
    let state = error["inputRequired"]["requestState"].as_str().unwrap();
    let before = app.documents("purchase_order").await;
    let confirmed = mcp_call(
        &app,
        "2025-11-25",
        "legacy-reorder-again",
        json!({"_meta": {"io.draftline/confirm": format!("create-another {state}")}}),
    )
    .await;
    assert_eq!(confirmed["result"]["isError"], false, "{confirmed}");
    assert_eq!(app.documents("purchase_order").await, before + 1);
}

#[tokio::test]
async fn a_quote_for_the_same_customer_and_items_asks_too_and_sales_get_quote_reads_the_existing_one() {
    let app = spawn_app().await;
    let quote = |client_ref: &str| {
        json!({"customer_code": "C-BDG-001", "valid_until": "2026-12-20", "client_ref": client_ref, "note": null,
               "lines": [{"item_code": "BRG-0042", "qty": 2, "uom": "BOX", "tax_code": "VAT11"}]})
    };
    let first = app
        .call(
            "sales-bdg",
            "sales_create_quote_draft",
            &quote("q-1"),
            &[("idempotency-key", "q-1".into())],
        )
        .await;
    assert_eq!(first.status, 201, "{:?}", first.body);
    let number = first.body["data"]["quote_number"].as_str().unwrap().to_owned();
    let asked = app
        .call(
            "sales-bdg",
            "sales_create_quote_draft",
            &quote("q-2"),
            &[("idempotency-key", "q-2".into())],
        )
        .await;
    assert_eq!(asked.status, 409, "{:?}", asked.body);
    assert!(asked.message().contains("sales_get_quote"));
    let state = asked.body["error"]["inputRequired"]["requestState"]
        .as_str()
        .unwrap()
        .to_owned();
    let existing = app
        .call(
            "sales-bdg",
            "sales_create_quote_draft",
            &quote("q-2"),
            &[
                ("idempotency-key", "q-2".into()),
                ("draftline-confirm", format!("use-existing {state}")),
            ],
        )
        .await;
    assert_eq!(existing.status, 200, "{:?}", existing.body);
    assert_eq!(existing.body["data"]["quote_number"], number.as_str());
    let read = app
        .call("sales-bdg", "sales_get_quote", &json!({"quote_number": number}), &[])
        .await;
    assert_eq!(read.status, 200, "{:?}", read.body);
    assert_eq!(read.body["data"], first.body["data"]);
    // Another branch's quote reads like a missing one.
    let foreign = app
        .call(
            "sales-bdg",
            "sales_get_quote",
            &json!({"quote_number": "QT-SBY-000001"}),
            &[],
        )
        .await;
    assert_eq!(foreign.status, 404);
}

/// How a call and a person's answer travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Via {
    /// `POST /api/<tool>`, the answer in `Draftline-Confirm`.
    Http,
    /// MCP 2025-11-25, the answer in `_meta["io.draftline/confirm"]`.
    Mcp2025,
    /// MCP 2026-07-28, the answer as `inputResponses` with the `requestState`.
    Mcp2026,
}

/// What one PO draft call came to, whichever way it travelled.
#[derive(Debug)]
struct Drafted {
    /// The PO number created or replayed.
    number: Option<String>,
    replayed: bool,
    /// The error code, and the request state when a person is asked.
    code: Option<String>,
    message: String,
    state: Option<String>,
}

/// The PO draft of `po_input("reorder-brg")` in agent run `run` (so its
/// key is `run:reorder-brg`), via `via`, with a person's "create another"
/// answer under `state` if given.
async fn draft_via(app: &TestApp, via: Via, run: &str, state: Option<&str>) -> Drafted {
    if via == Via::Http {
        let mut headers = vec![("x-agent-run-id", run.to_owned())];
        if let Some(state) = state {
            headers.push(("draftline-confirm", format!("create-another {state}")));
        }
        let reply = app
            .call(
                "buyer-sby",
                "purchasing_create_po_draft",
                &po_input("reorder-brg"),
                &headers,
            )
            .await;
        let error = &reply.body["error"];
        return Drafted {
            number: reply.body["data"]["po_number"].as_str().map(str::to_owned),
            replayed: reply.body["replayed"] == true,
            code: error["code"].as_str().map(str::to_owned),
            message: error["message"].as_str().unwrap_or_default().to_owned(),
            state: error["inputRequired"]["requestState"].as_str().map(str::to_owned),
        };
    }
    let (version, extra) = match (via, state) {
        (Via::Mcp2025, Some(state)) => (
            "2025-11-25",
            json!({"_meta": {"io.draftline/confirm": format!("create-another {state}")}}),
        ),
        (Via::Mcp2026, Some(state)) => (
            "2026-07-28",
            json!({"requestState": state,
                   "inputResponses": {"draftline_near_duplicate": {"action": "accept", "content": {"decision": "create_another"}}}}),
        ),
        (Via::Mcp2025, None) => ("2025-11-25", json!({})),
        _ => ("2026-07-28", json!({})),
    };
    let answer = mcp_call_with(app, version, "reorder-brg", extra, &[("x-agent-run-id", run)]).await;
    let result = &answer["result"];
    let error = &result["_meta"]["error"];
    let asked = result["resultType"] == "input_required";
    Drafted {
        number: result["structuredContent"]["po_number"].as_str().map(str::to_owned),
        replayed: result["_meta"]["replayed"] == true,
        code: if asked {
            Some("INPUT_REQUIRED".to_owned())
        } else {
            error["code"].as_str().map(str::to_owned)
        },
        message: error["message"].as_str().unwrap_or_default().to_owned(),
        state: if asked {
            result["requestState"].as_str().map(str::to_owned)
        } else {
            error["inputRequired"]["requestState"].as_str().map(str::to_owned)
        },
    }
}

/// One "create another" creates one draft, under the key it was asked
/// under, on HTTP and both MCP revisions.
async fn a_confirmation_creates_one_draft_under_its_own_key(backend: Backend, via: Via) {
    let app = spawn_app_on(backend).await;
    let first = first_draft(&app).await;
    let asked = draft_via(&app, via, "r-18", None).await;
    assert_eq!(asked.code.as_deref(), Some("INPUT_REQUIRED"), "{via:?}: {asked:?}");
    let state = asked.state.expect("a request state");
    let before = app.documents("purchase_order").await;

    // Under another key (a new run id: a restarted run), the answer is refused.
    let elsewhere = draft_via(&app, via, "r-19", Some(&state)).await;
    assert_eq!(
        elsewhere.code.as_deref(),
        Some("VALIDATION_ERROR"),
        "{via:?}: {elsewhere:?}"
    );
    assert!(elsewhere.message.contains("another key"), "{}", elsewhere.message);
    assert!(
        elsewhere.message.contains("Nothing was created"),
        "{}",
        elsewhere.message
    );
    assert_eq!(
        app.documents("purchase_order").await,
        before,
        "{via:?}: nothing was created"
    );

    // Under its own key it creates one draft; the retry is a replay.
    let created = draft_via(&app, via, "r-18", Some(&state)).await;
    let number = created.number.clone().unwrap_or_else(|| panic!("{via:?}: {created:?}"));
    assert_ne!(number, first["po_number"].as_str().unwrap());
    assert!(!created.replayed);
    assert_eq!(app.documents("purchase_order").await, before + 1);
    let retry = draft_via(&app, via, "r-18", Some(&state)).await;
    assert_eq!(retry.number.as_deref(), Some(number.as_str()), "{via:?}: {retry:?}");
    assert!(retry.replayed, "{via:?}: {retry:?}");

    // A second use under a third key creates nothing.
    let again = draft_via(&app, via, "r-20", Some(&state)).await;
    assert_eq!(again.code.as_deref(), Some("VALIDATION_ERROR"), "{via:?}: {again:?}");
    assert_eq!(app.documents("purchase_order").await, before + 1);

    // Even with the key record gone (nothing then answers a replay), the
    // answer was consumed by the write that created the draft: used twice,
    // it creates nothing and says so.
    app.inspect
        .client()
        .delete_item()
        .table_name(app.inspect.table())
        .key(
            "pk",
            aws_sdk_dynamodb::types::AttributeValue::S("T#demo#IDEM#SBY-01#buyer-sby#R#r-18:reorder-brg".into()),
        )
        .key("sk", aws_sdk_dynamodb::types::AttributeValue::S("IDEM".into()))
        .send()
        .await
        .unwrap();
    let reused = draft_via(&app, via, "r-18", Some(&state)).await;
    assert_eq!(reused.code.as_deref(), Some("VALIDATION_ERROR"), "{via:?}: {reused:?}");
    assert!(reused.message.contains("already used"), "{}", reused.message);
    assert!(reused.message.contains("Nothing was created"), "{}", reused.message);
    assert_eq!(
        app.documents("purchase_order").await,
        before + 1,
        "{via:?}: nothing was created"
    );
    let audit = app.audit_items().await;
    let confirmed: Vec<_> = audit
        .iter()
        .filter(|item| item.get("confirmed").map(String::as_str) == Some("create_another"))
        .collect();
    assert!(
        confirmed.iter().any(|item| item.get("document_number") == Some(&number)
            && item.get("near_duplicate_of").map(String::as_str) == first["po_number"].as_str()),
        "the creating call's audit item records the answer: {confirmed:?}"
    );
}

on_both_backends! {
    #[tokio::test]
    async fn a_confirmation_over_http_is_single_use_and_bound_to_its_key(backend) {
        a_confirmation_creates_one_draft_under_its_own_key(backend, Via::Http).await;
    }
}

on_both_backends! {
    #[tokio::test]
    async fn a_confirmation_over_mcp_2025_11_25_is_single_use_and_bound_to_its_key(backend) {
        a_confirmation_creates_one_draft_under_its_own_key(backend, Via::Mcp2025).await;
    }
}

on_both_backends! {
    #[tokio::test]
    async fn a_confirmation_over_mcp_2026_07_28_is_single_use_and_bound_to_its_key(backend) {
        a_confirmation_creates_one_draft_under_its_own_key(backend, Via::Mcp2026).await;
    }
}

#[tokio::test]
async fn a_draft_a_person_already_decided_on_is_no_near_duplicate() {
    let app = spawn_app().await;
    let first = first_draft(&app).await;
    let number = first["po_number"].as_str().unwrap().to_owned();
    app.clock.advance(chrono::Duration::minutes(5));
    let approver = crate::review::Reviewer::sign_in(&app.server.url(), "approver-sby").await;
    let decided = approver.decide(&number, "reject", "ordered by phone already").await;
    assert_eq!(decided.status, 303, "{}", decided.body);
    app.clock.advance(chrono::Duration::minutes(5));
    // The same reorder again: the rejected draft is not an open one.
    let again = again(&app, None).await;
    assert_eq!(again.status, 201, "{:?}", again.body);
    assert_ne!(again.body["data"]["po_number"], number.as_str());
}
