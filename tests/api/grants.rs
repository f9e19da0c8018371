//! Permissions from evidence: the DynamoDB actions each deployed function's
//! calls made, recorded as IAM authorises them (`draftline_dynamo::grants`:
//! a `TransactWriteItems` counts per item kind), with the partition key of
//! every item each write action wrote, against the grants of the
//! function's role in `infra/aws/template.json`, **exactly**: a role grants
//! every action its functions' calls sent and no other, and binds each write
//! action (`dynamodb:LeadingKeys`) to patterns that every written key
//! matches and that each match a written key.
//!
//! The calls cover every function of the template: every tool with its
//! example input, under a policy with a rate, a run and a day budget and a
//! counterparty rule, then in observe mode; a near duplicate asked and
//! answered (its confirmation consumed); the examiner; MCP on both
//! revisions; the listing; review decisions and a sign-out; on Tryton a
//! create that definitely failed (its key and reservation given back) and a
//! takeover; and for every function a call with no token and one from a
//! foreign origin (refused calls are counted in the anonymous trace).
//! The roles of a `Fn::ForEach` loop share one definition, which is compared
//! with what all its functions did; `mcp` serves every tool through the same
//! pipeline, so its evidence is its own calls and every tool's.
//! The embedded engine checks no permissions, so without this a missing
//! grant would first show on AWS, as a 500, and a needless one never.

use std::collections::{BTreeMap, BTreeSet};

use aws_sdk_dynamodb::types::AttributeValue::S;

use draftline_cli::LocalOptions;
use draftline_infra::template::{self, Tier};
use serde_json::{Value, json};

use crate::catalogue::example_of;
use crate::helpers::{TestApp, po_input, spawn_app};
use crate::tryton_proxy::{Fault, Target};

/// Each IAM action, with the partition keys of the items it wrote.
type Actions = BTreeMap<String, BTreeSet<String>>;

/// Per function: what its calls needed.
type Recorded = BTreeMap<String, Actions>;

/// The write actions, which a role binds to key prefixes.
const WRITES: [&str; 4] = [
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:ConditionCheckItem",
];

/// What `app`'s calls recorded, added to `into`.
fn gather(app: &TestApp, into: &mut Recorded) {
    for (function, seen) in app.server.app.db().map(|db| db.grants().snapshot()).unwrap_or_default() {
        let actions = into.entry(function.to_owned()).or_default();
        for (action, keys) in seen.actions {
            actions.entry(action.to_owned()).or_default().extend(keys);
        }
    }
}

/// `from` added to `into`.
fn merge(into: &mut Actions, from: &Actions) {
    for (action, keys) in from {
        into.entry(action.clone()).or_default().extend(keys.iter().cloned());
    }
}

/// For every function of the template, a call with no token and one from a
/// foreign origin, each in an anonymous-trace window of its own (the trace
/// is written at most once a minute per instance).
async fn refused_calls(recorded: &mut Recorded, functions: &[String]) {
    let app = spawn_app().await;
    let foreign = ("origin", "https://elsewhere.example".to_owned());
    let token = ("authorization", format!("Bearer {}", app.token("buyer-sby")));
    for function in functions {
        if function == "notify" {
            // Its stream and its schedule invoke it, never a caller.
            continue;
        }
        for from_elsewhere in [false, true] {
            app.clock.advance(chrono::Duration::seconds(61));
            let mut headers = vec![("content-type", "application/json".to_owned())];
            if from_elsewhere {
                headers.extend([foreign.clone(), token.clone()]);
            }
            let (method, path, body) = match function.as_str() {
                "review" if from_elsewhere => ("POST", "/review/signin/demo".to_owned(), String::new()),
                "review" => ("GET", "/review".to_owned(), String::new()),
                "tools" => ("GET", "/api/tools".to_owned(), String::new()),
                "oauth_protected_resource" => {
                    ("GET", "/.well-known/oauth-protected-resource".to_owned(), String::new())
                }
                "mcp" => (
                    "POST",
                    "/api/mcp".to_owned(),
                    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": "inventory_get_stock", "arguments": {"item_code": "BRG-0042"}}})
                    .to_string(),
                ),
                tool => ("POST", format!("/api/{tool}"), json!({}).to_string()),
            };
            let mut request = app
                .http
                .request(method.parse().unwrap(), app.url(&path))
                .header("accept", "application/json, text/event-stream")
                .body(body);
            for (name, value) in &headers {
                request = request.header(*name, value);
            }
            let status = request.send().await.unwrap().status().as_u16();
            assert!(status < 500, "{function} (foreign origin: {from_elsewhere}): {status}");
        }
    }
    gather(&app, recorded);
}

/// The demo user whose agent calls `tool`, with the examiner's scope too.
fn caller_of(tool: &str) -> &'static str {
    if tool.starts_with("sales_") || tool.starts_with("finance_") {
        "sales-bdg"
    } else {
        "buyer-sby"
    }
}

async fn call(app: &TestApp, user: &str, tool: &str, input: &Value, extra: &[(&str, String)]) -> crate::helpers::Reply {
    let mut headers = vec![
        (
            "authorization",
            format!("Bearer {}", crate::limits::examiner_token_of(app, user)),
        ),
        ("content-type", "application/json".to_owned()),
    ];
    headers.extend(extra.iter().cloned());
    app.post_raw(tool, &headers, input.to_string()).await
}

/// Every tool once with its example input, as the agent of its module.
async fn every_tool(app: &TestApp, round: &str) {
    let names: Vec<&'static str> = app.server.app.registry().all().map(|d| d.name).collect();
    for name in names {
        let definition = app.server.app.registry().get(name).unwrap().definition();
        let reply = call(
            app,
            caller_of(name),
            name,
            &example_of(definition),
            &[
                ("idempotency-key", format!("grants-{round}-{name}")),
                ("x-agent-run-id", format!("run-grants-{round}")),
            ],
        )
        .await;
        assert!(reply.status < 500, "{name}: {} {:?}", reply.status, reply.body);
    }
}

/// An MCP request of `user` (with the examiner's scope) on `revision`.
async fn mcp(app: &TestApp, user: &str, revision: &str, method: &str, mut params: Value) -> Value {
    let mut request = app
        .http
        .post(app.url("/api/mcp"))
        .header(
            "authorization",
            format!("Bearer {}", crate::limits::examiner_token_of(app, user)),
        )
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", revision)
        .header("x-agent-run-id", "run-grants-mcp");
    if revision == "2026-07-28" {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": revision,
            "io.modelcontextprotocol/clientInfo": {"name": "api-tests", "version": "1.0.0"},
            "io.modelcontextprotocol/clientCapabilities": {}
        });
        request = request.header("mcp-method", method);
        if let Some(name) = params.get("name").and_then(Value::as_str) {
            request = request.header("mcp-name", name.to_owned());
        }
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let response = request.body(body.to_string()).send().await.unwrap();
    assert_eq!(response.status(), 200, "{method}");
    response.json().await.unwrap()
}

/// The calls on the built-in backend.
async fn on_the_builtin_backend(recorded: &mut Recorded) {
    let app = spawn_app().await;
    app.set_policy(&json!({
        "version": null, "mode": "enforce", "time_zone": "+07:00",
        "limits": {
            "per_run": {"max_drafts": 50, "max_value": [{"currency": "IDR", "amount": "2000000000.00"}]},
            "per_person_per_day": {"max_value": [{"currency": "IDR", "amount": "5000000000.00"}]},
            "per_tool_per_person": {"calls_per_minute": 100},
            "counterparties": {"rule": "allow_list", "vendors": ["V-00231"], "customers": ["C-BDG-001"]}
        },
        "branches": null
    }))
    .await;
    // A near-duplicate marker that does not parse (no version): the first
    // draft of its items writes it anew, in its own transaction.
    app.put_item(std::collections::HashMap::from([
        ("pk".to_owned(), S("T#demo#B#SBY-01#NEAR#PO#V-00231".to_owned())),
        ("sk".to_owned(), S("ITEMS#BRG-0042".to_owned())),
        ("kind".to_owned(), S("near_duplicate".to_owned())),
    ]))
    .await;
    // Two drafts for the review pages to decide on (before the tools'
    // examples, whose item sets they would repeat).
    let drafted = crate::review::agent_po(
        &app,
        "buyer-sby",
        "run-grants-review",
        "grants-review-1",
        po_of_one("grants-review-1", "BRG-0042"),
    )
    .await;
    let rejected = crate::review::agent_po(
        &app,
        "buyer-sby",
        "run-grants-review",
        "grants-review-2",
        po_of_one("grants-review-2", "VBT-0220"),
    )
    .await;
    // Every tool, reads under the policy's rate among them.
    every_tool(&app, "enforce").await;
    // A draft of more items than the key lookup prices reads the vendor's
    // whole price list (a Query); one of them is no item, so it is refused.
    let mut many = po_input("grants-many-items");
    many["lines"] = [
        "BRG-0042", "BRG-0043", "BLT-0107", "VBT-0220", "OIL-0310", "CBL-0220", "GLV-0015", "WLD-0501", "XYZ-0001",
    ]
    .iter()
    .map(|code| json!({"item_code": code, "qty": 1, "uom": "PCS"}))
    .collect();
    let refused = call(
        &app,
        "buyer-sby",
        "purchasing_create_po_draft",
        &many,
        &[("idempotency-key", "grants-many-items".into())],
    )
    .await;
    assert!((400..500).contains(&refused.status), "{:?}", refused.body);

    // A near duplicate: asked, then answered "create another" (the
    // confirmation is consumed in the draft's transaction).
    let first = call(
        &app,
        "buyer-sby",
        "purchasing_create_po_draft",
        &po_input("grants-near"),
        &[("idempotency-key", "grants-near-1".into())],
    )
    .await;
    assert_eq!(first.status, 201, "{:?}", first.body);
    let asked = call(
        &app,
        "buyer-sby",
        "purchasing_create_po_draft",
        &po_input("grants-near"),
        &[("idempotency-key", "grants-near-2".into())],
    )
    .await;
    assert_eq!(asked.error_code(), "INPUT_REQUIRED", "{:?}", asked.body);
    let state = asked.body["error"]["inputRequired"]["requestState"]
        .as_str()
        .unwrap()
        .to_owned();
    let confirmed = call(
        &app,
        "buyer-sby",
        "purchasing_create_po_draft",
        &po_input("grants-near"),
        &[
            ("idempotency-key", "grants-near-2".into()),
            ("draftline-confirm", format!("create-another {state}")),
        ],
    )
    .await;
    assert_eq!(confirmed.status, 201, "{:?}", confirmed.body);
    // A replay on the instance that created the key, in no agent run: the
    // key store knows the key answered, so its lookup is the record alone
    // (a GetItem; in a run whose drafts the policy limits, the run's
    // counter comes along in a batch).
    let replayed = call(
        &app,
        "buyer-sby",
        "purchasing_create_po_draft",
        &po_input("grants-near"),
        &[("idempotency-key", "grants-near-1".into())],
    )
    .await;
    assert_eq!(replayed.status, 200, "{:?}", replayed.body);

    // MCP on both revisions: the listing, the examiner, a read and a draft.
    for revision in ["2025-11-25", "2026-07-28"] {
        mcp(&app, "buyer-sby", revision, "tools/list", json!({})).await;
        for (name, arguments) in [
            ("agent_get_limits", json!({})),
            ("inventory_get_stock", json!({"item_code": "BRG-0042"})),
            (
                "purchasing_create_po_draft",
                po_of_one(&format!("grants-mcp-{revision}"), "BRG-0043"),
            ),
        ] {
            let answer = mcp(
                &app,
                "buyer-sby",
                revision,
                "tools/call",
                json!({"name": name, "arguments": arguments}),
            )
            .await;
            assert!(answer.get("result").is_some(), "{revision} {name}: {answer}");
        }
    }
    // The listing.
    let listed = app
        .http
        .get(app.url("/api/tools?format=ai-sdk"))
        .header("authorization", format!("Bearer {}", app.token("buyer-sby")))
        .send()
        .await
        .unwrap();
    assert_eq!(listed.status(), 200);

    // Review decisions: approve one purchase order, reject the other.
    let approver = crate::review::Reviewer::sign_in(&app.server.url(), "approver-sby").await;
    assert_eq!(approver.get("/review").await.status, 200);
    assert_eq!(approver.get("/review/runs/run-grants-review").await.status, 200);
    let number = |po: &Value| po["po_number"].as_str().unwrap().to_owned();
    let approved = approver.decide(&number(&drafted), "approve", "").await;
    assert!(approved.status < 400, "{}", approved.body);
    let refused = approver.decide(&number(&rejected), "reject", "not needed").await;
    assert!(refused.status < 400, "{}", refused.body);
    // The notifications page, and "send again" (of a delivery that is not
    // dead: the update is sent, its condition refuses it).
    assert_eq!(approver.get("/review/notifications").await.status, 200);
    let csrf = approver
        .get("/review")
        .await
        .field_after("action=\"/review/signout\"", "csrf");
    let again = approver
        .post(
            "/review/notifications/send-again",
            &[("csrf", csrf.as_str()), ("event_id", "evt_none"), ("endpoint", "none")],
        )
        .await;
    assert!(again.location().ends_with("sent=none"), "{again:?}");
    let signed_out = approver.sign_out().await;
    assert!(signed_out.status < 400, "{}", signed_out.body);
    // And a quote: Bandung's seeded open agent quote, rejected.
    let bdg = crate::review::Reviewer::sign_in(&app.server.url(), "approver-bdg").await;
    let quote = bdg.decide("QT-BDG-000001", "reject", "price too old").await;
    assert!(quote.status < 400, "{}", quote.body);

    // The notify function: the drafts' and decisions' events fanned out to
    // an endpoint and the people to mail, and delivered (one failure, so
    // one delivery is marked due again).
    notify_round(&app, None).await;

    // Observe mode: a draft past every limit passes, and is audited.
    app.set_policy(&json!({
        "version": null, "mode": "observe", "time_zone": "+07:00",
        "limits": {
            "per_run": {"max_drafts": 0, "max_value": [{"currency": "IDR", "amount": "1.00"}]},
            "per_person_per_day": {"max_value": [{"currency": "IDR", "amount": "1.00"}]},
            "per_tool_per_person": {"calls_per_minute": 1},
            "counterparties": {"rule": "allow_list", "vendors": ["V-00415"], "customers": ["C-BDG-002"]}
        },
        "branches": null
    }))
    .await;
    app.clock.advance(chrono::Duration::seconds(31));
    every_tool(&app, "observe").await;
    gather(&app, recorded);

    // The deployment-wide per-person budget (DRAFTLINE_RATE_LIMIT_PER_MINUTE).
    let budgeted = crate::helpers::spawn_app_with(LocalOptions {
        rate_limit_per_minute: Some(100),
        ..LocalOptions::default()
    })
    .await;
    every_tool(&budgeted, "budget").await;
    gather(&budgeted, recorded);
}

/// One round of the notify function on `app`'s table, as deployed (its
/// requests recorded for `notify`): the demo tenant's settings send every
/// event to an endpoint that fails once, and mail its people; on Tryton,
/// `polled` polls its decisions first.
async fn notify_round(app: &TestApp, polled: Option<(std::sync::Arc<dyn draftline_erp::port::Erp>, &str)>) {
    use draftline_server::runtime::notify::{Notifier, PollDecisions};
    use std::sync::Arc;
    let endpoint = crate::webhooks::Endpoint::start(vec![(500, None)]).await;
    crate::webhooks::set_settings(
        app,
        json!({
            "version": null,
            "endpoints": [{"id": "grants", "url": endpoint.url, "events": ["draft.created", "draft.decided"],
                           "secrets": [crate::webhooks::SECRET]}],
            "people": {"approver-sby": "ana@demo.test", "buyer-sby": "budi@demo.test"},
            "approvers": {"SBY-01": {"purchasing": ["approver-sby"]}}
        }),
    )
    .await;
    let server = &app.server.app;
    let table: Arc<dyn draftline_server::storage::Table> = Arc::new(draftline_server::storage::DynamoTable::new(
        server.db().unwrap().clone(),
    ));
    let clock: Arc<dyn draftline_contract::clock::Clock> = Arc::new(app.clock.clone());
    let sweeper = draftline_server::events::sweep::Sweeper::new(
        Arc::clone(&table),
        Arc::clone(&clock),
        draftline_server::events::endpoint::Reach { loopback: true },
    )
    .with_mailer(draftline_server::events::mail::Mailer::Local(Default::default()));
    let poller = polled.map(|(erp, tenant)| {
        Arc::new(draftline_review::poll::Poller::new(
            table,
            erp,
            draftline_contract::identity::TenantId::parse(tenant).unwrap(),
            server.review_pages().to_owned(),
            clock,
        )) as Arc<dyn PollDecisions>
    });
    let notifier = Notifier::new(sweeper, poller);
    let round = server.serving("notify", notifier.scheduled()).await.unwrap();
    assert!(round.fanned_out > 0, "{round:?}");
}

/// One line of `item` from V-00231 (its own item set: no near duplicate).
fn po_of_one(client_ref: &str, item: &str) -> Value {
    let mut input = po_input(client_ref);
    input["lines"] = json!([{"item_code": item, "qty": 2, "uom": "PCS"}]);
    input
}

/// The calls on Tryton: reads and a draft through the ERP, a create that
/// definitely failed (its key and reservation are given back), a create
/// whose answer was lost and the takeover that finds it.
async fn on_tryton(recorded: &mut Recorded) {
    let lease = std::time::Duration::from_secs(4);
    let (app, proxy) = crate::tryton_proxy::behind_a_proxy(LocalOptions {
        lease: Some(lease),
        ..LocalOptions::default()
    })
    .await;
    app.set_policy(&json!({
        "version": null, "mode": "enforce", "time_zone": "+07:00",
        "limits": {
            "per_run": {"max_drafts": 50, "max_value": [{"currency": "IDR", "amount": "2000000000.00"}]},
            "per_tool_per_person": {"calls_per_minute": 100}
        },
        "branches": null
    }))
    .await;
    every_tool(&app, "tryton").await;
    let draft = |key: &'static str| {
        let app = &app;
        async move {
            call(
                app,
                "buyer-sby",
                "purchasing_create_po_draft",
                &po_of_one(key, "BRG-0043"),
                &[
                    ("idempotency-key", key.to_owned()),
                    ("x-agent-run-id", "run-grants-tryton".into()),
                ],
            )
            .await
        }
    };
    // Refused by Tryton: nothing was written; the key is given back.
    proxy.then(Target::CreatePurchase, Fault::Refuse(503));
    let refused = draft("grants-released").await;
    assert_eq!(refused.status, 503, "{:?}", refused.body);
    // Committed, its answer lost; after the lease the takeover finds it.
    proxy.then(Target::CreatePurchase, Fault::AnswerAfter(502));
    let lost = draft("grants-taken-over").await;
    assert_eq!(lost.status, 503, "{:?}", lost.body);
    app.clock.advance(chrono::Duration::seconds(5));
    let found = draft("grants-taken-over").await;
    assert!(found.status < 300, "{:?}", found.body);
    // A near duplicate of it, confirmed, whose create Tryton refuses: the
    // key and the person's answer are both given back.
    let asked = draft("grants-confirm-refused").await;
    assert_eq!(asked.error_code(), "INPUT_REQUIRED", "{:?}", asked.body);
    let state = asked.body["error"]["inputRequired"]["requestState"]
        .as_str()
        .unwrap()
        .to_owned();
    proxy.then(Target::CreatePurchase, Fault::Refuse(503));
    let refused = call(
        &app,
        "buyer-sby",
        "purchasing_create_po_draft",
        &po_of_one("grants-confirm-refused", "BRG-0043"),
        &[
            ("idempotency-key", "grants-confirm-refused".to_owned()),
            ("x-agent-run-id", "run-grants-tryton".into()),
            ("draftline-confirm", format!("create-another {state}")),
        ],
    )
    .await;
    assert_eq!(refused.status, 503, "{:?}", refused.body);
    // The notify function on Tryton: its decisions polled, then a sweep.
    notify_round(&app, Some((app.server.backend.erp(), "demo"))).await;
    gather(&app, recorded);
}

#[tokio::test]
async fn every_functions_role_grants_exactly_what_its_calls_did_on_the_keys_they_wrote() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let deployed = template::read(&root.join("infra/aws/template.json"))
        .and_then(|t| template::functions(&t))
        .unwrap();
    let names: Vec<String> = deployed.keys().cloned().collect();
    let mut recorded = Recorded::new();
    refused_calls(&mut recorded, &names).await;
    on_the_builtin_backend(&mut recorded).await;
    on_tryton(&mut recorded).await;

    let mut wrong = Vec::new();
    for function in recorded.keys() {
        if !deployed.contains_key(function) {
            wrong.push(format!("{function}: called, but not a function of the template"));
        }
    }
    // The functions sharing one role definition, and what their calls did.
    let mut roles: BTreeMap<String, (Vec<&str>, Actions)> = BTreeMap::new();
    for (name, function) in &deployed {
        let definition = format!(
            "{:?} {}",
            Tier::of(name),
            serde_json::to_string(&function.dynamodb_statements()).unwrap()
        );
        let (holders, evidence) = roles.entry(definition).or_default();
        holders.push(name);
        merge(evidence, recorded.get(name).unwrap_or(&Actions::new()));
        if name == "mcp" {
            // It serves every tool, through the same pipeline.
            for (tool, actions) in &recorded {
                if matches!(Tier::of(tool), Tier::Read | Tier::Draft) {
                    merge(evidence, actions);
                }
            }
        }
        if !recorded.contains_key(name) {
            wrong.push(format!(
                "{name}: no call of the suite reached it; its grants are not evidenced"
            ));
        }
        let granted = function.dynamodb_actions().unwrap();
        let allowed = Tier::of(name).actions();
        for action in granted.difference(&allowed) {
            wrong.push(format!("{name}: granted {action}, beyond its tier's list {allowed:?}"));
        }
    }
    for (holders, evidence) in roles.values() {
        let function = &deployed[holders[0]];
        let role = format!("the role of {} ({})", holders.join(", "), function.logical_id);
        let granted = function.dynamodb_actions().unwrap();
        let sent: BTreeSet<String> = evidence.keys().cloned().collect();
        for action in sent.difference(&granted) {
            wrong.push(format!("{role}: its calls sent {action}, which it does not grant"));
        }
        for action in granted.difference(&sent) {
            wrong.push(format!("{role}: grants {action}, which none of its calls sent"));
        }
        for action in WRITES.iter().filter(|a| granted.contains(**a)) {
            let written = evidence.get(*action).cloned().unwrap_or_default();
            let Some(patterns) = function.leading_keys(action).unwrap() else {
                wrong.push(format!(
                    "{role}: grants {action} on every key; its calls wrote {written:?}"
                ));
                continue;
            };
            for pk in &written {
                if !patterns.iter().any(|p| template::string_like(p, pk)) {
                    wrong.push(format!(
                        "{role}: its calls did {action} on pk {pk}, which {patterns:?} do not allow"
                    ));
                }
            }
            for pattern in &patterns {
                if !written.iter().any(|pk| template::string_like(pattern, pk)) {
                    wrong.push(format!(
                        "{role}: allows {action} on {pattern}, which none of its calls wrote ({written:?})"
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
