//! A tenant's limits for its agents (issue 18). On the built-in backend the
//! run and day counters ride in the draft's own transaction; on Tryton they
//! are reserved with the key's claim, before the ERP write. Either way a
//! race cannot pass a limit, a refused call counts nothing, a replay never
//! counts twice, and a policy costs no DynamoDB request of its own. The
//! counterparty rule holds on both backends.

use std::collections::BTreeMap;

use aws_sdk_dynamodb::types::AttributeValue;
use draftline_contract::clock::Clock;
use futures::future::join_all;
use serde_json::{Value, json};

use draftline_cli::LocalOptions;

use crate::helpers::{
    Reply, TestApp, diff, on_both_backends, run_counter, spawn_app_drafting_freely, spawn_app_drafting_freely_on,
};
use crate::tryton_proxy::{Fault, FaultyTryton, Target, behind_a_proxy};

/// A policy of the demo tenant with `limits` (and no branch narrowing).
fn policy(mode: &str, limits: Value) -> Value {
    json!({"version": null, "mode": mode, "time_zone": "+07:00", "limits": limits, "branches": null})
}

/// `boxes` BOX of BRG-0042 from V-00231: a total of `boxes` x 288000.00 IDR.
fn order(client_ref: &str, boxes: i64) -> Value {
    json!({
        "vendor_code": "V-00231",
        "needed_by": "2026-12-15",
        "client_ref": client_ref,
        "note": null,
        "lines": [{"item_code": "BRG-0042", "qty": boxes, "uom": "BOX"}]
    })
}

/// A draft of `boxes` BOX in agent run `run` under its own key.
async fn draft(app: &TestApp, run: Option<&str>, key: &str, boxes: i64) -> Reply {
    let mut headers = vec![("idempotency-key", key.to_owned())];
    if let Some(run) = run {
        headers.push(("x-agent-run-id", run.to_owned()));
    }
    app.call("buyer-sby", "purchasing_create_po_draft", &order(key, boxes), &headers)
        .await
}

/// Hundredths of a decimal amount string ("288000.00").
fn hundredths(amount: &Value) -> i64 {
    amount.as_str().unwrap().replace('.', "").parse().unwrap()
}

fn statuses(replies: &[Reply]) -> BTreeMap<u16, usize> {
    let mut counts = BTreeMap::new();
    for reply in replies {
        *counts.entry(reply.status).or_default() += 1;
    }
    counts
}

on_both_backends! {
    #[tokio::test]
    async fn sixty_four_concurrent_drafts_in_one_run_with_a_limit_of_ten_create_exactly_ten(backend) {
        let app = spawn_app_drafting_freely_on(backend).await;
        let version = app
            .set_policy(&policy(
                "enforce",
                json!({"per_run": {"max_drafts": 10, "max_value": null}}),
            ))
            .await;
        let replies = join_all((0..64).map(|i| {
            let app = &app;
            async move { draft(app, Some("run-race"), &format!("race-{i}"), 1).await }
        }))
        .await;
        assert_eq!(
            statuses(&replies),
            [(201, 10), (403, 54)].into(),
            "no 5xx, no other answer"
        );
        for refused in replies.iter().filter(|r| r.status == 403) {
            assert_eq!(refused.error_code(), "LIMIT_REACHED", "{:?}", refused.body);
            assert_eq!(refused.body["error"]["retryable"], false);
            assert!(refused.header("retry-after").is_none());
            let limit = &refused.body["error"]["limit"];
            assert_eq!(limit["name"], "per_run.max_drafts");
            assert_eq!(limit["unit"], "drafts");
            assert_eq!(limit["appliesTo"], "agent run run-race");
            assert_eq!(
                (limit["max"].as_str(), limit["used"].as_str()),
                (Some("10"), Some("10"))
            );
            assert_eq!(limit["thisCall"], "1");
            assert_eq!(limit["policyVersion"], version);
            assert!(limit["resetsAt"].is_null(), "a run's limit lasts as long as the run");
            let message = refused.message();
            assert!(message.contains("No draft was created"), "{message}");
            assert!(message.contains("ask them to draft the rest"), "{message}");
        }
        assert_eq!(app.new_documents("purchase_order").await, 10);
        assert_eq!(app.number(&run_counter("buyer-sby", "run-race"), "USE", "drafts").await, 10);
        // Every refusal is audited with the limit and the policy's version.
        let audits = app.audit_items().await;
        let refusals: Vec<_> = audits.iter().filter(|a| a.get("limit").is_some()).collect();
        assert_eq!(refusals.len(), 54);
        for audit in refusals {
            assert_eq!(audit["code"], "LIMIT_REACHED");
            assert_eq!(audit["limit_mode"], "enforce");
            assert_eq!(audit["policy_version"], version.to_string());
        }
    }
}

on_both_backends! {
    #[tokio::test]
    async fn a_value_limit_is_never_exceeded_by_concurrent_drafts_of_different_totals(backend) {
        let app = spawn_app_drafting_freely_on(backend).await;
        // 20 BOX worth; the drafts ask for 1 to 6 BOX each, 69 BOX in all.
        let max = 20 * 28_800_000;
        app.set_policy(&policy(
            "enforce",
            json!({"per_run": {"max_drafts": null, "max_value": [{"currency": "IDR", "amount": "5760000.00"}]}}),
        ))
        .await;
        let replies = join_all((0..21).map(|i| {
            let app = &app;
            async move { draft(app, Some("run-value"), &format!("value-{i}"), 1 + i % 6).await }
        }))
        .await;
        let counts = statuses(&replies);
        assert_eq!(counts.keys().copied().collect::<Vec<_>>(), [201, 403], "{counts:?}");
        let created: i64 = replies
            .iter()
            .filter(|r| r.status == 201)
            .map(|r| hundredths(&r.body["data"]["total"]["amount"]))
            .sum();
        assert!(created <= max, "created {created} of at most {max}");
        assert_eq!(app.number(&run_counter("buyer-sby", "run-value"), "USE", "v_IDR").await, created);
        for refused in replies.iter().filter(|r| r.status == 403) {
            let limit = &refused.body["error"]["limit"];
            assert_eq!(limit["name"], "per_run.max_value");
            assert_eq!(limit["unit"], "IDR");
            let (used, this) = (hundredths(&limit["used"]), hundredths(&limit["thisCall"]));
            assert!(used + this > max, "{limit}");
            assert!(refused.message().contains("Split the order"), "{}", refused.message());
            assert!(refused.message().contains("ask a person to draft this one"));
        }
    }
}

on_both_backends! {
    #[tokio::test]
    async fn replays_of_created_drafts_still_answer_after_the_limit_and_count_nothing(backend) {
        let app = spawn_app_drafting_freely_on(backend).await;
        app.set_policy(&policy(
            "enforce",
            json!({"per_run": {"max_drafts": 3, "max_value": null}}),
        ))
        .await;
        let mut created = Vec::new();
        for i in 0..3 {
            let reply = draft(&app, Some("run-replay"), &format!("replay-{i}"), 1).await;
            assert_eq!(reply.status, 201, "{:?}", reply.body);
            created.push(reply.body["data"].clone());
        }
        let over = draft(&app, Some("run-replay"), "replay-3", 1).await;
        assert_eq!((over.status, over.error_code()), (403, "LIMIT_REACHED"));
        for (i, first) in created.iter().enumerate() {
            let again = draft(&app, Some("run-replay"), &format!("replay-{i}"), 1).await;
            assert_eq!(again.status, 200, "{:?}", again.body);
            assert_eq!(again.body["replayed"], true);
            assert_eq!(&again.body["data"], first);
        }
        // The refused call left nothing to replay: it is refused again, and counted nothing.
        let again = draft(&app, Some("run-replay"), "replay-3", 1).await;
        assert_eq!(again.status, 403);
        assert_eq!(again.body["error"]["limit"]["used"], "3");
        assert_eq!(app.number(&run_counter("buyer-sby", "run-replay"), "USE", "drafts").await, 3);
        assert_eq!(app.new_documents("purchase_order").await, 3);
    }
}

#[tokio::test]
async fn on_tryton_the_claim_reserves_the_limits_gives_them_back_when_nothing_was_written_and_keeps_them_while_it_may_have_been()
 {
    let lease = std::time::Duration::from_secs(30);
    let (app, proxy) = behind_a_proxy(LocalOptions {
        no_near_duplicate_check: true,
        lease: Some(lease),
        ..LocalOptions::default()
    })
    .await;
    app.set_policy(&policy(
        "enforce",
        json!({"per_run": {"max_drafts": 2, "max_value": [{"currency": "IDR", "amount": "100000000.00"}]}}),
    ))
    .await;
    let counter = run_counter("buyer-sby", "run-reserve");
    let used = |attribute: &'static str| app.number(&counter, "USE", attribute);
    let box_value = 28_800_000;

    // Tryton answers the create 503: it definitely did not write. The
    // claim's reservation is given back with the key, in one transaction.
    proxy.then(Target::CreatePurchase, Fault::Refuse(503));
    let refused = draft(&app, Some("run-reserve"), "reserve-1", 2).await;
    assert_eq!(
        (refused.status, refused.error_code()),
        (503, "DEPENDENCY_UNAVAILABLE"),
        "{:?}",
        refused.body
    );
    assert!(
        refused.message().contains("Nothing was created"),
        "{}",
        refused.message()
    );
    assert_eq!(
        (used("drafts").await, used("v_IDR").await),
        (0, 0),
        "nothing stays counted"
    );
    assert_eq!(app.new_documents("purchase_order").await, 0);
    // The same call again passes at once, counted once.
    let retried = draft(&app, Some("run-reserve"), "reserve-1", 2).await;
    assert_eq!(retried.status, 201, "{:?}", retried.body);
    assert_eq!((used("drafts").await, used("v_IDR").await), (1, 2 * box_value));

    // A gateway answers 502: the write may have happened. The reservation
    // stays with the claim, and the limit holds it against other drafts.
    proxy.then(Target::CreatePurchase, Fault::Refuse(502));
    let uncertain = draft(&app, Some("run-reserve"), "reserve-2", 1).await;
    assert_eq!(uncertain.status, 503, "{:?}", uncertain.body);
    assert!(
        uncertain.message().contains("may or may not have been created"),
        "{}",
        uncertain.message()
    );
    assert_eq!((used("drafts").await, used("v_IDR").await), (2, 3 * box_value));
    let over = draft(&app, Some("run-reserve"), "reserve-3", 1).await;
    assert_eq!(
        (over.status, over.error_code()),
        (403, "LIMIT_REACHED"),
        "{:?}",
        over.body
    );
    assert_eq!(over.body["error"]["limit"]["used"], "2");
    // While the claim's lease lives, its retry is in flight; after it, the
    // retry takes the claim over, finds no document in Tryton, creates it,
    // and counts nothing again.
    let in_flight = draft(&app, Some("run-reserve"), "reserve-2", 1).await;
    assert_eq!(in_flight.status, 409, "{:?}", in_flight.body);
    app.clock.advance(chrono::Duration::seconds(31));
    let taken_over = draft(&app, Some("run-reserve"), "reserve-2", 1).await;
    assert_eq!(taken_over.status, 201, "{:?}", taken_over.body);
    assert_eq!((used("drafts").await, used("v_IDR").await), (2, 3 * box_value));
    assert_eq!(app.new_documents("purchase_order").await, 2);
    // Each completed draft's audit item names the policy it was held to.
    let drafted: Vec<_> = app
        .audit_items()
        .await
        .into_iter()
        .filter(|a| a.get("http_status").map(String::as_str) == Some("201"))
        .collect();
    assert_eq!(drafted.len(), 2);
    assert!(drafted.iter().all(|a| a.get("policy_version").is_some()), "{drafted:?}");
}

#[tokio::test]
async fn observe_mode_creates_everything_and_audits_each_would_be_refusal() {
    let app = spawn_app_drafting_freely().await;
    let version = app
        .set_policy(&policy(
            "observe",
            json!({"per_run": {"max_drafts": 2, "max_value": null}}),
        ))
        .await;
    for i in 0..4 {
        let reply = draft(&app, Some("run-observe"), &format!("observe-{i}"), 1).await;
        assert_eq!(reply.status, 201, "{:?}", reply.body);
    }
    assert_eq!(app.new_documents("purchase_order").await, 4);
    assert_eq!(
        app.number(&run_counter("buyer-sby", "run-observe"), "USE", "drafts")
            .await,
        4
    );
    let audits = app.audit_items().await;
    assert_eq!(audits.len(), 4);
    for (i, audit) in audits.iter().enumerate() {
        assert_eq!(audit["outcome"], "ok");
        assert_eq!(audit["policy_version"], version.to_string());
        if i < 2 {
            assert!(audit.get("limit").is_none(), "{audit:?}");
        } else {
            assert_eq!(audit["limit"], "per_run.max_drafts");
            assert_eq!(audit["limit_mode"], "observe");
            assert_eq!(audit["would_have_been_refused"], "Bool(true)");
            assert_eq!(audit["limit_used"], i.to_string());
            assert_eq!(audit["limit_max"], "2");
        }
    }
}

#[tokio::test]
async fn the_day_limit_resets_at_midnight_in_the_tenants_time_zone() {
    let app = spawn_app_drafting_freely().await;
    // Two drafts of 288000.00 IDR fit a day; the test's clock shows 09:00
    // UTC, 16:00 in the tenant's +07:00, whose day ends at 17:00 UTC.
    app.set_policy(&policy(
        "enforce",
        json!({"per_person_per_day": {"max_value": [{"currency": "IDR", "amount": "600000.00"}]}}),
    ))
    .await;
    for key in ["day-1", "day-2"] {
        assert_eq!(draft(&app, None, key, 1).await.status, 201);
    }
    let refused = draft(&app, None, "day-3", 1).await;
    assert_eq!((refused.status, refused.error_code()), (403, "LIMIT_REACHED"));
    let limit = &refused.body["error"]["limit"];
    assert_eq!(limit["name"], "per_person_per_day.max_value");
    assert_eq!(limit["appliesTo"], "buyer-sby on 2026-11-29");
    assert_eq!(limit["resetsAt"], "2026-11-29T17:00:00Z");
    assert_eq!(
        (limit["used"].as_str(), limit["thisCall"].as_str()),
        (Some("576000.00"), Some("288000.00"))
    );
    assert!(
        refused
            .message()
            .contains("wait until the limit resets at 2026-11-29T17:00:00Z")
    );

    // A minute before midnight there: still the same day.
    app.clock.advance(chrono::Duration::minutes(7 * 60 + 59));
    assert_eq!(draft(&app, None, "day-4", 1).await.status, 403);
    // Past midnight there (17:01 UTC): a new day, a new budget.
    app.clock.advance(chrono::Duration::minutes(2));
    let next_day = draft(&app, None, "day-5", 1).await;
    assert_eq!(next_day.status, 201, "{:?}", next_day.body);
    let person = "T#demo#LIMIT#DAY#buyer-sby";
    assert_eq!(app.number(person, "2026-11-29", "v_IDR").await, 57_600_000);
    assert_eq!(app.number(person, "2026-11-30", "v_IDR").await, 28_800_000);
    // A day counts what a day limit bounds: its value, not its drafts.
    let day = app.item(person, "2026-11-30").await.expect("the day's counter");
    let mut attributes: Vec<&str> = day.keys().map(String::as_str).collect();
    attributes.sort_unstable();
    assert_eq!(attributes, ["expires_at", "kind", "pk", "sk", "v_IDR"]);
}

#[tokio::test]
async fn policy_set_refuses_an_invalid_file_with_paths_and_a_valid_change_applies_within_the_cache_bound() {
    let app = spawn_app_drafting_freely().await;
    let tenant = draftline_contract::identity::TenantId::parse("demo").unwrap();
    let stored = || app.item("T#demo#POLICY", "CURRENT");
    let seeded = stored().await.expect("the demo seeds a policy");
    assert_eq!(seeded["version"], AttributeValue::N("1".into()));

    let invalid = json!({
        "version": null, "mode": "strict", "time_zone": "+07:00",
        "limits": {"per_run": {"max_drafts": -3, "max_drafs": 1}},
        "branch": []
    });
    let refused = draftline_cli::policy::set(
        &app.inspect,
        &tenant,
        invalid.to_string().as_bytes(),
        "api-tests",
        app.clock.now(),
    )
    .await
    .unwrap_err();
    let draftline_cli::policy::Refused::Invalid(issues) = &refused else {
        panic!("refused as invalid: {refused}")
    };
    let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "mode",
            "limits.per_run.max_drafts",
            "limits.per_run.max_drafs",
            "branch"
        ]
    );
    let text = refused.to_string();
    assert!(text.contains("nothing was changed"), "{text}");
    assert!(text.contains("limits.per_run.max_drafs: unknown field"), "{text}");
    assert_eq!(stored().await, Some(seeded.clone()), "nothing was changed");
    assert_eq!(app.count_kind("policy_version").await, 1);

    // A warm instance: the first draft read version 1.
    assert_eq!(draft(&app, Some("run-set"), "set-1", 1).await.status, 201);
    let version = app
        .set_policy(&policy(
            "enforce",
            json!({"per_run": {"max_drafts": 1, "max_value": null}}),
        ))
        .await;
    assert_eq!(version, 2);
    let shown = draftline_cli::policy::show(&app.inspect, &tenant)
        .await
        .unwrap()
        .unwrap();
    let shown: Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(shown["version"], 2);
    assert_eq!(shown["limits"]["per_run"]["max_drafts"], 1);
    // A file edited from version 1 is refused now: someone set version 2 since.
    let mut stale = shown.clone();
    stale["version"] = json!(1);
    let moved = draftline_cli::policy::set(
        &app.inspect,
        &tenant,
        stale.to_string().as_bytes(),
        "t",
        app.clock.now(),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(moved, draftline_cli::policy::Refused::Moved { based_on: 1, stored: 2 }),
        "{moved}"
    );

    // Within the cache bound (30 s) the instance may still hold version 1 ...
    assert_eq!(draft(&app, Some("run-set"), "set-2", 1).await.status, 201);
    // ... and past it, version 2 applies.
    app.clock.advance(chrono::Duration::seconds(31));
    let refused = draft(&app, Some("run-set"), "set-3", 1).await;
    assert_eq!((refused.status, refused.error_code()), (403, "LIMIT_REACHED"));
    assert_eq!(refused.body["error"]["limit"]["policyVersion"], 2);
    assert_eq!(refused.body["error"]["limit"]["used"], "2");
}

#[tokio::test]
async fn a_fresh_draft_with_a_policy_in_force_makes_no_dynamodb_request_more_than_without_one() {
    let with = spawn_app_drafting_freely().await;
    let without = spawn_app_drafting_freely().await;
    without
        .inspect
        .client()
        .delete_item()
        .table_name(without.inspect.table())
        .key("pk", AttributeValue::S("T#demo#POLICY".into()))
        .key("sk", AttributeValue::S("CURRENT".into()))
        .send()
        .await
        .unwrap();
    let mut costs = Vec::new();
    for app in [&with, &without] {
        // Cold: the instance has not read the tenant's policy; warm: it has.
        let mut cost = Vec::new();
        for key in ["cost-1", "cost-2"] {
            let before = app.round_trips();
            assert_eq!(draft(app, Some("run-cost"), key, 1).await.status, 201);
            cost.push(diff(&before, &app.round_trips()));
        }
        costs.push(cost);
    }
    let requests = |cost: &BTreeMap<String, u64>| cost.values().sum::<u64>();
    for (with, without) in costs[0].iter().zip(&costs[1]) {
        assert_eq!(
            requests(with),
            requests(without),
            "the same requests with the policy as without"
        );
    }
    // Cold or warm, with the policy or without: the key lookup (one
    // BatchGetItem: the key record, the policy while the instance's copy
    // is stale, the run's counter while the policy limits a run's drafts
    // and this instance does not know the run to have room, and what the
    // draft reads), the number, and ONE transaction that
    // carries the run's and the day's counters too.
    let three: BTreeMap<String, u64> = [
        ("BatchGetItem".into(), 1),
        ("TransactWriteItems".into(), 1),
        ("UpdateItem".into(), 1),
    ]
    .into();
    for cost in costs.iter().flatten() {
        assert_eq!(cost, &three);
    }
    // The policy was in force: both drafts were counted.
    assert_eq!(
        with.number(&run_counter("buyer-sby", "run-cost"), "USE", "drafts")
            .await,
        2
    );
    assert_eq!(
        without
            .number(&run_counter("buyer-sby", "run-cost"), "USE", "drafts")
            .await,
        0
    );
}

on_both_backends! {
    #[tokio::test]
    async fn a_vendor_outside_the_allow_list_is_refused_with_ask_a_person_and_a_branch_narrows_it(backend) {
        let app = spawn_app_drafting_freely_on(backend).await;
        let version = app
            .set_policy(&json!({
                "version": null, "mode": "enforce", "time_zone": "+07:00",
                "limits": {"counterparties": {"rule": "allow_list", "vendors": ["V-00231", "V-00415"], "customers": null}},
                "branches": [{"branch_id": "SBY-01", "limits": {
                    "counterparties": {"rule": "allow_list", "vendors": ["V-00415"], "customers": null}}}]
            }))
            .await;
        let before = app.documents("purchase_order").await;
        let refused = draft(&app, Some("run-parties"), "parties-1", 1).await;
        assert_eq!((refused.status, refused.error_code()), (403, "LIMIT_REACHED"), "{:?}", refused.body);
        assert_eq!(refused.body["error"]["retryable"], false);
        let limit = &refused.body["error"]["limit"];
        assert_eq!(limit["name"], "counterparties.vendors");
        assert_eq!(limit["appliesTo"], "vendor V-00231");
        assert!(limit["max"].is_null() && limit["used"].is_null(), "{limit}");
        assert_eq!(limit["policyVersion"], version);
        let message = refused.message();
        assert!(message.contains("ask a person to draft this one"), "{message}");
        assert!(message.contains("No draft was created"), "{message}");
        assert_eq!(app.documents("purchase_order").await, before, "nothing reached the ERP");
        // Jakarta is held to the tenant's list only, which has V-00231.
        let jakarta = app
            .call(
                "buyer-jkt",
                "purchasing_create_po_draft",
                &order("parties-jkt", 1),
                &[("idempotency-key", "parties-jkt".to_owned())],
            )
            .await;
        assert_eq!(jakarta.status, 201, "{:?}", jakarta.body);
        let audit = app.audit_items().await.into_iter().find(|a| a.get("limit").is_some()).unwrap();
        assert_eq!(audit["limit"], "counterparties.vendors");
        assert_eq!(audit["limit_this_call"], "V-00231");
    }
}

#[tokio::test]
async fn a_vendor_outside_the_allow_list_in_observe_mode_is_drafted_and_audited() {
    let app = spawn_app_drafting_freely().await;
    app.set_policy(&policy(
        "observe",
        json!({"counterparties": {"rule": "allow_list", "vendors": ["V-00415"], "customers": null}}),
    ))
    .await;
    let reply = draft(&app, Some("run-parties"), "parties-observe", 1).await;
    assert_eq!(reply.status, 201, "{:?}", reply.body);
    let audit = app.audit_items().await.pop().unwrap();
    assert_eq!(audit["outcome"], "ok");
    assert_eq!(audit["limit"], "counterparties.vendors");
    assert_eq!(audit["limit_mode"], "observe");
    assert_eq!(audit["would_have_been_refused"], "Bool(true)");
}

on_both_backends! {
    #[tokio::test]
    async fn observe_mode_names_every_limit_a_draft_would_have_passed_in_its_one_audit_item(backend) {
        // The vendor is off the list, and the draft's 288000.00 IDR is over
        // the run's value and the day's: three limits, in two counters and
        // a rule. Before the gate, a rule observed left the counters
        // unconditioned, and only the first limit was audited.
        let app = spawn_app_drafting_freely_on(backend).await;
        let version = app
            .set_policy(&policy(
                "observe",
                json!({
                    "counterparties": {"rule": "allow_list", "vendors": ["V-00415"], "customers": null},
                    "per_run": {"max_drafts": 5, "max_value": [{"currency": "IDR", "amount": "100000.00"}]},
                    "per_person_per_day": {"max_value": [{"currency": "IDR", "amount": "200000.00"}]}
                }),
            ))
            .await;
        let before = app.round_trips();
        let reply = draft(&app, Some("run-observe-all"), "observe-all", 1).await;
        assert_eq!(reply.status, 201, "{:?}", reply.body);
        // Each counter that reached a limit cost one more transaction (the
        // rule counts nothing): the draft's own (on Tryton the claim, and
        // the completion after the ERP's create), and two more.
        let transactions = diff(&before, &app.round_trips()).get("TransactWriteItems").copied();
        let own = match backend {
            crate::helpers::Backend::Builtin => 1,
            crate::helpers::Backend::Tryton => 2,
        };
        assert_eq!(transactions, Some(own + 2));
        let audits = app.audit_items().await;
        assert_eq!(audits.len(), 1, "one call, one audit item: {audits:?}");
        let audit = &audits[0];
        assert_eq!(audit["outcome"], "ok");
        assert_eq!(audit["limit_mode"], "observe");
        assert_eq!(audit["policy_version"], version.to_string());
        // The first limit in the flat fields, as before; every one in `limits`.
        assert_eq!(audit["limit"], "counterparties.vendors");
        let item = app.item(&audit["pk"], &audit["sk"]).await.unwrap();
        let limits: Vec<(String, String)> = item["limits"]
            .as_l()
            .unwrap()
            .iter()
            .map(|limit| {
                let limit = limit.as_m().unwrap();
                let s = |name: &str| limit.get(name).map(|v| v.as_s().unwrap().clone()).unwrap_or_default();
                (s("name"), s("used"))
            })
            .collect();
        assert_eq!(
            limits,
            [
                ("counterparties.vendors".to_owned(), String::new()),
                ("per_run.max_value".to_owned(), "0.00".to_owned()),
                ("per_person_per_day.max_value".to_owned(), "0.00".to_owned()),
            ],
            "{item:?}"
        );
        // Observe mode counted the draft, once, in each counter.
        let run = run_counter("buyer-sby", "run-observe-all");
        assert_eq!(app.number(&run, "USE", "drafts").await, 1);
        assert_eq!(app.number(&run, "USE", "v_IDR").await, 28_800_000);
        assert_eq!(app.new_documents("purchase_order").await, 1);
        // The run page lists each of them as what would have been refused.
        let approver = crate::review::Reviewer::sign_in(&app.server.url(), "approver-sby").await;
        let page = approver.get("/review/runs/run-observe-all").await;
        assert_eq!(page.status, 200, "{}", page.body);
        let reached = page.body.split("id=\"limits\"").nth(1).unwrap_or_else(|| panic!("{}", page.body));
        for name in ["counterparties.vendors", "per_run.max_value", "per_person_per_day.max_value"] {
            assert!(reached.contains(&format!("<code>{name}</code> for")), "{name} not on the run page: {reached}");
        }
        assert_eq!(reached.matches("would have been refused</strong>").count(), 3, "{reached}");
    }
}

on_both_backends! {
    #[tokio::test]
    async fn a_per_tool_rate_answers_429_with_retry_after_and_the_next_minute_passes(backend) {
        let app = spawn_app_drafting_freely_on(backend).await;
        app.set_policy(&policy(
            "enforce",
            json!({"per_tool_per_person": {"calls_per_minute": 2}}),
        ))
        .await;
        for key in ["rate-1", "rate-2"] {
            assert_eq!(draft(&app, None, key, 1).await.status, 201);
        }
        // The test's clock shows 09:00:30: the minute ends in 30 s.
        app.clock.advance(chrono::Duration::seconds(30));
        let limited = draft(&app, None, "rate-3", 1).await;
        assert_eq!(
            (limited.status, limited.error_code()),
            (429, "LIMIT_REACHED"),
            "{:?}",
            limited.body
        );
        assert_eq!(limited.header("retry-after"), Some("30"));
        assert_eq!(limited.body["error"]["retryable"], true);
        assert_eq!(limited.body["error"]["retryAfterSeconds"], 30);
        let limit = &limited.body["error"]["limit"];
        assert_eq!(limit["name"], "per_tool_per_person.calls_per_minute");
        assert_eq!(limit["appliesTo"], "buyer-sby calling purchasing_create_po_draft");
        assert_eq!(limit["resetsAt"], "2026-11-29T09:01:00Z");
        assert!(limited.message().contains("Wait 30 second(s)"), "{}", limited.message());
        // A replay is not a call of the tool's work: it still answers.
        assert_eq!(draft(&app, None, "rate-1", 1).await.status, 200);
        // The next minute, the same call passes.
        app.clock.advance(chrono::Duration::seconds(30));
        let next = draft(&app, None, "rate-3", 1).await;
        assert_eq!(next.status, 201, "{:?}", next.body);
        assert_eq!(
            app.number(
                "T#demo#LIMIT#RATE#buyer-sby#purchasing_create_po_draft",
                "MINUTE#29932380",
                "calls"
            )
            .await,
            2
        );
    }
}

#[tokio::test]
async fn a_per_tool_rate_holds_read_tools_too_a_refused_read_asks_nothing_of_the_erp_and_observe_mode_lets_it_through()
{
    let app = spawn_app_drafting_freely().await;
    app.set_policy(&policy(
        "enforce",
        json!({"per_tool_per_person": {"calls_per_minute": 2}}),
    ))
    .await;
    let app = &app;
    let stock = |item: &'static str| async move {
        app.call("buyer-sby", "inventory_get_stock", &json!({"item_code": item}), &[])
            .await
    };
    // An invalid call is not a call of the tool's work: it counts nothing.
    let invalid = stock("").await;
    assert_eq!(invalid.status, 400, "{:?}", invalid.body);
    for _ in 0..2 {
        let read = stock("BRG-0042").await;
        assert_eq!(read.status, 200, "{:?}", read.body);
    }
    // Within the policy cache's bound (30 s), so the refusal reads nothing.
    app.clock.advance(chrono::Duration::seconds(20));
    let before = app.round_trips();
    let limited = stock("BRG-0042").await;
    let cost = diff(&before, &app.round_trips());
    assert_eq!(
        (limited.status, limited.error_code()),
        (429, "LIMIT_REACHED"),
        "{:?}",
        limited.body
    );
    assert_eq!(limited.header("retry-after"), Some("40"));
    assert_eq!(limited.body["error"]["retryable"], true);
    let limit = &limited.body["error"]["limit"];
    assert_eq!(limit["name"], "per_tool_per_person.calls_per_minute");
    assert_eq!(limit["appliesTo"], "buyer-sby calling inventory_get_stock");
    assert_eq!((limit["max"].as_str(), limit["used"].as_str()), (Some("2"), Some("2")));
    let message = limited.message();
    assert!(message.contains("Nothing was read or written"), "{message}");
    assert!(message.contains("Wait 40 second(s)"), "{message}");
    // The refusal asked the ERP nothing: the counter's one `UpdateItem` and
    // the audit write (the cached policy cost no request).
    assert_eq!(cost.get("UpdateItem"), Some(&1), "{cost:?}");
    for read in ["GetItem", "Query", "BatchGetItem"] {
        assert_eq!(cost.get(read), None, "{cost:?}");
    }
    // The rate is per tool: another read tool of the same person passes.
    let other = app
        .call(
            "buyer-sby",
            "inventory_list_below_reorder",
            &json!({"limit": null, "cursor": null}),
            &[],
        )
        .await;
    assert_eq!(other.status, 200, "{:?}", other.body);
    let refusal = app
        .audit_items()
        .await
        .into_iter()
        .find(|a| a.get("limit").is_some())
        .expect("the refusal's audit item");
    assert_eq!(refusal["tool"], "inventory_get_stock");
    assert_eq!(refusal["code"], "LIMIT_REACHED");
    assert_eq!(refusal["limit_mode"], "enforce");
    // The next minute, the read passes; the minute counted its two calls.
    app.clock.advance(chrono::Duration::seconds(40));
    assert_eq!(stock("BRG-0042").await.status, 200);
    let rate_pk = "T#demo#LIMIT#RATE#buyer-sby#inventory_get_stock";
    assert_eq!(app.number(rate_pk, "MINUTE#29932380", "calls").await, 2);
    assert_eq!(app.number(rate_pk, "MINUTE#29932381", "calls").await, 1);

    // Observe mode: a read over the rate is answered, counted and audited
    // as what would have been refused (once the cache bound has passed).
    app.set_policy(&policy(
        "observe",
        json!({"per_tool_per_person": {"calls_per_minute": 1}}),
    ))
    .await;
    app.clock.advance(chrono::Duration::seconds(60));
    for _ in 0..2 {
        assert_eq!(stock("BRG-0042").await.status, 200);
    }
    assert_eq!(app.number(rate_pk, "MINUTE#29932382", "calls").await, 2);
    let observed: Vec<_> = app
        .audit_items()
        .await
        .into_iter()
        .filter(|a| a.get("would_have_been_refused").is_some())
        .collect();
    assert_eq!(observed.len(), 1, "{observed:?}");
    assert_eq!(observed[0]["limit_mode"], "observe");
    assert_eq!(observed[0]["outcome"], "ok");
}

#[tokio::test]
async fn the_policys_near_duplicate_window_wins_over_the_deployments() {
    // The deployment asks about near-duplicates of the last 24 hours ...
    let app = crate::helpers::spawn_app().await;
    assert_eq!(draft(&app, None, "window-1", 1).await.status, 201);
    assert_eq!(draft(&app, None, "window-2", 1).await.error_code(), "INPUT_REQUIRED");
    // ... the tenant's policy says never (0), and applies once the instance reads it.
    app.set_policy(&policy("enforce", json!({"near_duplicate_hours": 0})))
        .await;
    app.clock.advance(chrono::Duration::seconds(31));
    let again = draft(&app, None, "window-2", 1).await;
    assert_eq!(again.status, 201, "{:?}", again.body);
}

// ---------------------------------------------------------------------------
// A run is its owner's

on_both_backends! {
    #[tokio::test]
    async fn another_persons_run_id_neither_spends_nor_reveals_their_budget(backend) {
        let app = spawn_app_drafting_freely_on(backend).await;
        app.set_policy(&policy(
            "enforce",
            json!({"per_run": {"max_drafts": 2, "max_value": [{"currency": "IDR", "amount": "1000000.00"}]}}),
        ))
        .await;
        // One run id, sent by two people of two branches.
        let run = "shared-run-1";
        let draft_as = |user: &'static str, key: &'static str, boxes: i64| {
            let app = &app;
            async move {
                let headers = [("idempotency-key", key.to_owned()), ("x-agent-run-id", run.to_owned())];
                app.call(user, "purchasing_create_po_draft", &order(key, boxes), &headers).await
            }
        };
        // buyer-jkt drafts 2 BOX (576000.00 IDR) under it.
        let jkt = draft_as("buyer-jkt", "shared-jkt-1", 2).await;
        assert_eq!(jkt.status, 201, "{:?}", jkt.body);
        // buyer-sby's 3 BOX (864000.00) passes as if buyer-jkt had not
        // drafted: together they would be 1440000.00, past the run's limit.
        let sby = draft_as("buyer-sby", "shared-sby-1", 3).await;
        assert_eq!(sby.status, 201, "{:?}", sby.body);
        // buyer-sby's next draft is refused on buyer-sby's own use only.
        let over = draft_as("buyer-sby", "shared-sby-2", 1).await;
        assert_eq!((over.status, over.error_code()), (403, "LIMIT_REACHED"), "{:?}", over.body);
        let limit = &over.body["error"]["limit"];
        assert_eq!(
            (&limit["name"], &limit["used"], &limit["thisCall"]),
            (&json!("per_run.max_value"), &json!("864000.00"), &json!("288000.00"))
        );
        assert!(
            over.message().contains("864000.00 IDR was drafted in this run, 136000.00 IDR is left"),
            "{}",
            over.message()
        );
        assert!(
            !over.message().contains("576000") && !over.message().contains("1440000"),
            "names nothing of buyer-jkt's: {}",
            over.message()
        );
        // The examiner answers each person their own run, nothing of the other's.
        let (jkt_left, _) = limits_left_of(&app, "buyer-jkt", Some(run)).await;
        let data = &jkt_left.body["data"]["run"];
        assert_eq!(data["drafts"], json!({"max": 2, "used": 1, "left": 1}), "{data}");
        assert_eq!(data["value"][0]["used"], "576000.00", "{data}");
        let (sby_left, _) = limits_left_of(&app, "buyer-sby", Some(run)).await;
        let data = &sby_left.body["data"]["run"];
        assert_eq!(data["drafts"], json!({"max": 2, "used": 1, "left": 1}), "{data}");
        assert_eq!(data["value"][0]["used"], "864000.00", "{data}");
        // Two counters, one per owner.
        assert_eq!(app.number(&run_counter("buyer-jkt", run), "USE", "v_IDR").await, 57_600_000);
        assert_eq!(app.number(&run_counter("buyer-sby", run), "USE", "v_IDR").await, 86_400_000);
        assert_eq!(app.number(&run_counter("buyer-jkt", run), "USE", "drafts").await, 1);
        assert_eq!(app.number(&run_counter("buyer-sby", run), "USE", "drafts").await, 1);
    }
}

#[tokio::test]
async fn the_run_page_shows_each_owners_own_use_of_a_shared_run_id() {
    let app = spawn_app_drafting_freely().await;
    app.set_policy(&policy(
        "enforce",
        json!({"per_run": {"max_drafts": 3, "max_value": null}}),
    ))
    .await;
    let run = "shared-run-page";
    // A second buyer of Surabaya, and buyer-sby: one run id, two runs.
    let mut spec = draftline_cli::demo_spec("buyer-sby").unwrap();
    spec.sub = "buyer2-sby".into();
    let second = draftline_cli::token_for(&spec, &app.server.url(), 600).unwrap();
    for (token, key) in [
        (app.token("buyer-sby"), "page-own-1"),
        (app.token("buyer-sby"), "page-own-2"),
        (second, "page-other-1"),
    ] {
        let headers = [
            ("authorization", format!("Bearer {token}")),
            ("content-type", "application/json".to_owned()),
            ("idempotency-key", key.to_owned()),
            ("x-agent-run-id", run.to_owned()),
        ];
        let reply = app
            .post_raw("purchasing_create_po_draft", &headers, order(key, 1).to_string())
            .await;
        assert_eq!(reply.status, 201, "{:?}", reply.body);
    }
    let approver = crate::review::Reviewer::sign_in(&app.server.url(), "approver-sby").await;
    let page = approver.get(&format!("/review/runs/{run}")).await;
    assert_eq!(page.status, 200, "{}", page.body);
    let section = |anchor: &str| {
        let body = page
            .body
            .split(&format!("<section id=\"{anchor}\""))
            .nth(1)
            .unwrap_or_else(|| panic!("a section #{anchor}: {}", page.body));
        body.split("</section>").next().unwrap().to_owned()
    };
    let (first, other) = (section("use"), section("use-1"));
    assert!(first.contains("for buyer-sby</h2>"), "{first}");
    assert!(
        first.contains("<code>per_run.max_drafts</code>: <strong>2</strong> of 3 drafts used, 1 left"),
        "{first}"
    );
    assert!(other.contains("for buyer2-sby</h2>"), "{other}");
    assert!(
        other.contains("<code>per_run.max_drafts</code>: <strong>1</strong> of 3 drafts used, 2 left"),
        "{other}"
    );
}

// ---------------------------------------------------------------------------
// The examiner tool, agent_get_limits

/// buyer-sby's identity with the examiner's scope added (`agent:read`).
pub(crate) fn examiner_token(app: &TestApp) -> String {
    examiner_token_of(app, "buyer-sby")
}

/// Demo user `user`'s identity with the examiner's scope added (`agent:read`).
pub(crate) fn examiner_token_of(app: &TestApp, user: &str) -> String {
    let mut spec = draftline_cli::demo_spec(user).unwrap();
    if !spec.scope.split(' ').any(|s| s == "agent:read") {
        spec.scope.push_str(" agent:read");
    }
    draftline_cli::token_for(&spec, &app.server.url(), 600).unwrap()
}

/// `agent_get_limits` as buyer-sby in agent run `run`, with the DynamoDB
/// requests it made, by operation.
async fn limits_left(app: &TestApp, run: Option<&str>) -> (Reply, BTreeMap<String, u64>) {
    limits_left_of(app, "buyer-sby", run).await
}

/// `agent_get_limits` as `user` in agent run `run`, with the DynamoDB
/// requests it made, by operation.
async fn limits_left_of(app: &TestApp, user: &str, run: Option<&str>) -> (Reply, BTreeMap<String, u64>) {
    let mut headers = vec![
        ("authorization", format!("Bearer {}", examiner_token_of(app, user))),
        ("content-type", "application/json".to_owned()),
    ];
    if let Some(run) = run {
        headers.push(("x-agent-run-id", run.to_owned()));
    }
    let before = app.round_trips();
    let reply = app.post_raw("agent_get_limits", &headers, "{}").await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    (reply, diff(&before, &app.round_trips()))
}

/// What the examiner costs, cold or warm: ONE `BatchGetItem` (the run's,
/// the day's and each draft tool's counter, and the policy when the
/// instance's copy is stale), and the `PutItem` of its audit item.
fn assert_one_batch_get(requests: &BTreeMap<String, u64>) {
    let expected: BTreeMap<String, u64> = [("BatchGetItem".to_owned(), 1), ("PutItem".to_owned(), 1)].into();
    assert_eq!(requests, &expected);
}

#[tokio::test]
async fn agent_get_limits_agrees_with_what_the_next_draft_is_allowed() {
    let app = spawn_app_drafting_freely().await;
    let version = app
        .set_policy(&policy(
            "enforce",
            json!({
                "per_run": {"max_drafts": 3, "max_value": [{"currency": "IDR", "amount": "1000000.00"}]},
                "per_person_per_day": {"max_value": [{"currency": "IDR", "amount": "5000000.00"}]},
                "per_tool_per_person": {"calls_per_minute": 100},
                "counterparties": {"rule": "allow_list", "vendors": ["V-00231"], "customers": null}
            }),
        ))
        .await;
    // Cold: the instance has not read the policy; it comes in the same request.
    let (before, cold) = limits_left(&app, Some("run-plan")).await;
    assert_one_batch_get(&cold);
    let data = &before.body["data"];
    assert_eq!(data["policy_in_force"], true);
    assert_eq!(data["policy_version"], version);
    assert_eq!(data["mode"], "enforce");
    assert_eq!(data["time_zone"], "+07:00");
    assert_eq!(data["run"]["agent_run"], "run-plan");
    assert_eq!(data["run"]["drafts"], json!({"max": 3, "used": 0, "left": 3}));

    for key in ["plan-1", "plan-2"] {
        assert_eq!(draft(&app, Some("run-plan"), key, 1).await.status, 201);
    }
    // Warm: the policy is the instance's copy; the counters are one request.
    let (after_two, warm) = limits_left(&app, Some("run-plan")).await;
    assert_one_batch_get(&warm);
    let data = &after_two.body["data"];
    assert_eq!(data["run"]["drafts"], json!({"max": 3, "used": 2, "left": 1}));
    assert_eq!(
        data["run"]["value"],
        json!([{"currency": "IDR", "max": "1000000.00", "used": "576000.00", "left": "424000.00"}])
    );
    // The test's clock shows 09:00 UTC, 16:00 in +07:00: the day ends at 17:00 UTC.
    assert_eq!(
        data["today"],
        json!({
            "day": "2026-11-29",
            "resets_at": "2026-11-30T00:00:00+07:00",
            "resets_at_utc": "2026-11-29T17:00:00Z",
            "value": [{"currency": "IDR", "max": "5000000.00", "used": "576000.00", "left": "4424000.00"}]
        })
    );
    assert_eq!(
        data["rates"],
        json!([{
            "tool": "purchasing_create_po_draft",
            "calls": {"max": 100, "used": 2, "left": 98},
            "resets_at": "2026-11-29T09:01:00Z"
        }]),
        "only the draft tools the caller may call"
    );
    assert_eq!(
        data["counterparties"],
        json!({"vendor_rule": "allow_list", "vendors": ["V-00231"], "customer_rule": "allow_list", "customers": []})
    );
    let summary = data["summary"].as_str().unwrap();
    assert!(summary.contains("may create 1 more draft(s)"), "{summary}");
    assert!(summary.contains("424000.00 IDR more"), "{summary}");
    assert!(summary.contains("only for these vendors: V-00231"), "{summary}");

    // What is left is what passes: 2 BOX (576000.00) does not fit 424000.00, 1 BOX does.
    let over = draft(&app, Some("run-plan"), "plan-3-big", 2).await;
    assert_eq!((over.status, over.error_code()), (403, "LIMIT_REACHED"));
    assert_eq!(over.body["error"]["limit"]["name"], "per_run.max_value");
    assert!(over.message().contains("424000.00 IDR is left"), "{}", over.message());
    assert_eq!(draft(&app, Some("run-plan"), "plan-3", 1).await.status, 201);

    let (after_three, _) = limits_left(&app, Some("run-plan")).await;
    let data = &after_three.body["data"];
    assert_eq!(data["run"]["drafts"], json!({"max": 3, "used": 3, "left": 0}));
    assert_eq!(data["run"]["value"][0]["left"], "136000.00");
    assert_eq!(data["rates"][0]["calls"]["used"], 3, "a refused draft counts no call");
    let refused = draft(&app, Some("run-plan"), "plan-4", 1).await;
    assert_eq!((refused.status, refused.error_code()), (403, "LIMIT_REACHED"));
    assert_eq!(refused.body["error"]["limit"]["name"], "per_run.max_drafts");

    // Another run of the same person starts afresh; the day does not.
    let (other, _) = limits_left(&app, Some("run-other")).await;
    assert_eq!(other.body["data"]["run"]["drafts"]["left"], 3);
    assert_eq!(other.body["data"]["today"]["value"][0]["used"], "864000.00");
    // Once the instance's copy is past the cache bound (30 s), the policy
    // comes in the same request as the counters, and so do the three days
    // the tenant's day may be: the answer is the same.
    app.clock.advance(chrono::Duration::seconds(31));
    let (stale, requests) = limits_left(&app, Some("run-plan")).await;
    assert_one_batch_get(&requests);
    assert_eq!(stale.body["data"]["run"]["drafts"]["left"], 0);
    assert_eq!(stale.body["data"]["today"]["value"][0]["left"], "4136000.00");
    // Without a run id no run limit applies, and the answer says so.
    let (no_run, _) = limits_left(&app, None).await;
    assert_eq!(no_run.body["data"]["run"], Value::Null);
    assert!(
        no_run.body["data"]["summary"]
            .as_str()
            .unwrap()
            .contains("name no agent run"),
        "{:?}",
        no_run.body
    );
}

#[tokio::test]
async fn agent_get_limits_says_when_no_policy_is_in_force() {
    let app = spawn_app_drafting_freely().await;
    app.inspect
        .client()
        .delete_item()
        .table_name(app.inspect.table())
        .key("pk", AttributeValue::S("T#demo#POLICY".into()))
        .key("sk", AttributeValue::S("CURRENT".into()))
        .send()
        .await
        .unwrap();
    let (reply, requests) = limits_left(&app, Some("run-free")).await;
    assert_one_batch_get(&requests);
    let data = &reply.body["data"];
    assert_eq!(data["policy_in_force"], false);
    assert_eq!(
        (&data["policy_version"], &data["run"], &data["counterparties"]),
        (&Value::Null, &Value::Null, &Value::Null)
    );
    assert!(
        data["summary"].as_str().unwrap().starts_with("No policy is in force"),
        "{data}"
    );
    // Known to have none, a warm instance asks DynamoDB nothing but the audit write.
    let (_, warm) = limits_left(&app, Some("run-free")).await;
    assert_eq!(warm.get("BatchGetItem"), None, "{warm:?}");
}

#[tokio::test]
async fn agent_get_limits_needs_the_agent_read_scope() {
    let app = spawn_app_drafting_freely().await;
    let reply = app.call("buyer-jkt", "agent_get_limits", &json!({}), &[]).await;
    assert_eq!((reply.status, reply.error_code()), (403, "FORBIDDEN"));
    assert!(reply.message().contains("'agent:read'"), "{}", reply.message());
}

#[tokio::test]
async fn the_run_page_shows_the_runs_use_of_each_limit_lists_each_limit_it_reached_and_the_queue_marks_its_drafts() {
    for (mode, second, verdict) in [
        ("enforce", 403, "refused</strong>: nothing was created"),
        ("observe", 201, "would have been refused</strong> (observe mode"),
    ] {
        let app = spawn_app_drafting_freely().await;
        let version = app
            .set_policy(&policy(mode, json!({"per_run": {"max_drafts": 1, "max_value": null}})))
            .await;
        let run = format!("run-page-{mode}");
        assert_eq!(draft(&app, Some(&run), &format!("{mode}-1"), 1).await.status, 201);
        assert_eq!(draft(&app, Some(&run), &format!("{mode}-2"), 1).await.status, second);

        let approver = crate::review::Reviewer::sign_in(&app.server.url(), "approver-sby").await;
        let page = approver.get(&format!("/review/runs/{run}")).await;
        assert_eq!(page.status, 200, "{}", page.body);
        let section = page
            .body
            .split("<section id=\"limits\"")
            .nth(1)
            .unwrap_or_else(|| panic!("{mode}: a limits section: {}", page.body));
        let section = section.split("</section>").next().unwrap();
        assert_eq!(
            section.matches("<li>").count(),
            1,
            "{mode}: only the call that reached it: {section}"
        );
        assert!(section.contains("<code>per_run.max_drafts</code>"), "{section}");
        assert!(
            section.contains(&format!("agent run {run}: 1 of 1 drafts used, this call 1")),
            "{section}"
        );
        assert!(section.contains(verdict), "{mode}: {section}");
        // The run's use of each limit, from its counter: observe mode
        // counted the draft it let through.
        let used = page
            .body
            .split("<section id=\"use\"")
            .nth(1)
            .unwrap_or_else(|| panic!("{}", page.body));
        let used = used.split("</section>").next().unwrap();
        assert!(used.contains(&format!("version {version}, in {mode} mode")), "{used}");
        let counted = if mode == "enforce" { 1 } else { 2 };
        assert!(
            used.contains(&format!(
                "<code>per_run.max_drafts</code>: <strong>{counted}</strong> of 1 drafts used, 0 left"
            )),
            "{mode}: {used}"
        );

        // A run that reached no limit has no such section.
        assert_eq!(
            draft(&app, Some("run-page-quiet"), &format!("{mode}-3"), 1)
                .await
                .status,
            201
        );
        let quiet = approver.get("/review/runs/run-page-quiet").await;
        assert_eq!(quiet.status, 200);
        assert!(!quiet.body.contains("id=\"limits\""), "{}", quiet.body);
        assert!(
            quiet
                .body
                .contains("<code>per_run.max_drafts</code>: <strong>1</strong> of 1 drafts used, 0 left"),
            "{}",
            quiet.body
        );
        // The queue marks the drafts of the run that reached a limit, linked
        // to that section, and not those of the quiet run.
        let queue = approver.get("/review?status=draft").await;
        assert_eq!(queue.status, 200, "{}", queue.body);
        assert!(
            queue.body.contains(&format!(
                "<a href=\"/review/runs/{run}#limits\">{run}</a><br><span class=\"badge status-limit\">Run reached a \
                 limit</span>"
            )),
            "{mode}: {}",
            queue.body
        );
        assert!(
            queue
                .body
                .contains("<a href=\"/review/runs/run-page-quiet\">run-page-quiet</a>")
        );
        assert!(!queue.body.contains("/review/runs/run-page-quiet#limits"));
    }
}

#[tokio::test]
async fn a_total_of_ten_to_the_fourteen_is_a_validation_error_naming_the_line_and_the_largest_total() {
    // The demo prices cannot reach it: this test's own data prices BRG-0043
    // at 1000000000.00 IDR a piece, and 100000 of them come to 10^14 IDR,
    // past what a tenant's limits can count (it answered 500 before).
    let app = spawn_app_drafting_freely().await;
    app.set_policy(&policy(
        "enforce",
        json!({"per_run": {"max_drafts": 5, "max_value": null}}),
    ))
    .await;
    app.inspect
        .client()
        .update_item()
        .table_name(app.inspect.table())
        .key("pk", AttributeValue::S("T#demo#VENDOR#V-00231".into()))
        .key("sk", AttributeValue::S("PRICES#BRG-0043".into()))
        .update_expression("SET prices.#uom = :price")
        .condition_expression("attribute_exists(prices.#uom)")
        .expression_attribute_names("#uom", "PCS")
        .expression_attribute_values(":price", AttributeValue::N("1000000000.00".into()))
        .send()
        .await
        .unwrap();
    let input = json!({
        "vendor_code": "V-00231",
        "needed_by": "2026-12-15",
        "client_ref": "huge",
        "note": null,
        "lines": [
            {"item_code": "BRG-0042", "qty": 1, "uom": "BOX"},
            {"item_code": "BRG-0043", "qty": 100000, "uom": "PCS"}
        ]
    });
    let headers = [
        ("idempotency-key", "huge".to_owned()),
        ("x-agent-run-id", "run-huge".to_owned()),
    ];
    let reply = app
        .call("buyer-sby", "purchasing_create_po_draft", &input, &headers)
        .await;
    assert_eq!(
        (reply.status, reply.error_code()),
        (400, "VALIDATION_ERROR"),
        "{:?}",
        reply.body
    );
    let details = reply.body["error"]["details"].as_array().unwrap();
    assert_eq!(details.len(), 1, "{details:?}");
    assert_eq!(details[0]["path"], "lines[1]");
    let message = details[0]["message"].as_str().unwrap();
    assert!(message.contains("99999999999999.99 IDR"), "{message}");
    assert_eq!(app.new_documents("purchase_order").await, 0);
    assert_eq!(
        app.number(&run_counter("buyer-sby", "run-huge"), "USE", "drafts").await,
        0
    );
}

on_both_backends! {
    #[tokio::test]
    async fn a_stored_policy_that_does_not_parse_refuses_drafts_and_blocks_no_read(backend) {
        let app = spawn_app_drafting_freely_on(backend).await;
        let version = app
            .set_policy(&policy("enforce", json!({"per_run": {"max_drafts": 5, "max_value": null}})))
            .await;
        let before = draft(&app, Some("run-broken"), "broken-before", 1).await;
        assert_eq!(before.status, 201, "{:?}", before.body);
        break_policy(&app).await;
        app.clock.advance(chrono::Duration::seconds(31));

        let documents = app.new_documents("purchase_order").await;
        let refused = draft(&app, Some("run-broken"), "broken-1", 1).await;
        assert_eq!((refused.status, refused.error_code()), (503, "DEPENDENCY_UNAVAILABLE"), "{:?}", refused.body);
        assert_eq!(refused.body["error"]["retryable"], true);
        let message = refused.message();
        assert!(
            message.contains(&format!("policy for its agents (version {version}) is stored but cannot be read"))
                && message.contains("per_week")
                && message.contains("No draft was created"),
            "{message}"
        );
        assert_eq!(app.new_documents("purchase_order").await, documents, "nothing reached the ERP");
        // A replay is answered by its key record, as always.
        let replay = draft(&app, Some("run-broken"), "broken-before", 1).await;
        assert_eq!(replay.status, 200, "{:?}", replay.body);
        // Reads are not blocked.
        let stock = app
            .call("buyer-sby", "inventory_get_stock", &json!({"item_code": "BRG-0042"}), &[])
            .await;
        assert_eq!(stock.status, 200, "{:?}", stock.body);
        // Setting a valid policy again lets drafts through (within the bound).
        app.set_policy(&policy("enforce", json!({"per_run": {"max_drafts": 5, "max_value": null}})))
            .await;
        app.clock.advance(chrono::Duration::seconds(31));
        let after = draft(&app, Some("run-broken"), "broken-1", 1).await;
        assert_eq!(after.status, 201, "{:?}", after.body);
    }
}

on_both_backends! {
    #[tokio::test]
    async fn a_draft_in_a_run_at_its_count_is_refused_before_the_erp_is_asked(backend) {
        // On Tryton the calls go through a proxy that counts every request.
        let (app, proxy) = match backend {
            crate::helpers::Backend::Builtin => (spawn_app_drafting_freely().await, None),
            crate::helpers::Backend::Tryton => {
                let options = LocalOptions {
                    no_near_duplicate_check: true,
                    ..LocalOptions::default()
                };
                let (app, proxy) = behind_a_proxy(options).await;
                (app, Some(proxy))
            }
        };
        app.set_policy(&policy("enforce", json!({"per_run": {"max_drafts": 1, "max_value": null}})))
            .await;
        let first = draft(&app, Some("run-full"), "full-1", 1).await;
        assert_eq!(first.status, 201, "{:?}", first.body);
        let tryton_before = proxy.as_ref().map(FaultyTryton::requests);
        let before = app.round_trips();
        let refused = draft(&app, Some("run-full"), "full-2", 1).await;
        assert_eq!((refused.status, refused.error_code()), (403, "LIMIT_REACHED"), "{:?}", refused.body);
        let limit = &refused.body["error"]["limit"];
        assert_eq!((&limit["name"], &limit["used"]), (&json!("per_run.max_drafts"), &json!("1")));
        assert!(refused.message().contains("Agent run 'run-full' has reached its limit of 1 draft"), "{}", refused.message());
        // The key lookup brought the run's counter: one BatchGetItem, then
        // only the refusal's audit item. Nothing asked the ERP.
        assert_eq!(
            diff(&before, &app.round_trips()),
            [("BatchGetItem".into(), 1), ("PutItem".into(), 1)].into(),
        );
        if let (Some(proxy), Some(before)) = (&proxy, tryton_before) {
            assert_eq!(proxy.requests(), before, "a Tryton request for a draft that cannot pass");
        }
        assert_eq!(app.new_documents("purchase_order").await, 1);
        // Another run of the same person drafts on.
        let other = draft(&app, Some("run-other"), "full-3", 1).await;
        assert_eq!(other.status, 201, "{:?}", other.body);
    }
}

on_both_backends! {
    #[tokio::test]
    async fn the_demos_seeded_runs_count_their_drafts(backend) {
        let app = crate::helpers::spawn_app_on(backend).await;
        // What the demo file's agent drafts add up to, run by run.
        let mut runs: BTreeMap<(String, String), (i64, i64)> = BTreeMap::new();
        let purchase_orders = draftline_erp::demo::agent_purchase_orders()
            .into_iter()
            .map(|(po, _)| (po.drafted_on_behalf_of, po.drafted_by_agent_run, po.total));
        let quotes = draftline_erp::demo::agent_quotes()
            .into_iter()
            .map(|(quote, _)| (quote.drafted_on_behalf_of, quote.drafted_by_agent_run, quote.total));
        for (user, run, total) in purchase_orders.chain(quotes) {
            let run = run.expect("every demo agent draft names its run");
            let (drafts, value) = runs.entry((user, run)).or_default();
            *drafts += 1;
            *value += hundredths(&json!(total.amount));
        }
        assert!(runs.len() >= 2, "{runs:?}");
        for ((user, run), (drafts, value)) in &runs {
            let counter = run_counter(user, run);
            assert_eq!(app.number(&counter, "USE", "drafts").await, *drafts, "{counter}");
            assert_eq!(app.number(&counter, "USE", "v_IDR").await, *value, "{counter}");
        }
        // The run page's first look at limits is the right number (the
        // built-in demo seeds the runs' audit trail, which a run page is
        // made of; the Tryton demo seeds none).
        let run = "run-sby-reorder-2026-11-26";
        let drafted = runs[&("buyer-sby".to_owned(), run.to_owned())].0;
        if backend == crate::helpers::Backend::Builtin {
            let approver = crate::review::Reviewer::sign_in(&app.server.url(), "approver-sby").await;
            let page = approver.get(&format!("/review/runs/{run}")).await;
            assert_eq!(page.status, 200, "{}", page.body);
            assert!(
                page.body.contains(&format!(
                    "<code>per_run.max_drafts</code>: <strong>{drafted}</strong> of 50 drafts used"
                )),
                "{}",
                page.body
            );
        }
        // And so is the examiner's: buyer-sby holds agent:read in the demo.
        let headers = [("x-agent-run-id", run.to_owned())];
        let left = app.call("buyer-sby", "agent_get_limits", &json!({}), &headers).await;
        assert_eq!(left.status, 200, "{:?}", left.body);
        assert_eq!(left.body["data"]["run"]["drafts"]["used"], drafted, "{:?}", left.body);
        // The run goes on, and a second seed leaves its counter as it is.
        let more = draft(&app, Some(run), "seeded-run-more", 1).await;
        assert_eq!(more.status, 201, "{:?}", more.body);
        draftline_cli::policy::seed_demo(&app.inspect, app.clock.now()).await.unwrap();
        let counter = run_counter("buyer-sby", run);
        assert_eq!(app.number(&counter, "USE", "drafts").await, drafted + 1);
    }
}

#[tokio::test]
async fn a_counter_held_by_another_transaction_retries_the_commit_alone() {
    // The app's DynamoDB client talks to a fault layer in front of the
    // engine, which answers one draft's transaction as DynamoDB does when
    // another transaction holds an item: TransactionConflict on the run's
    // counter only. Before, that re-prepared the draft (the ERP read, a
    // new number) up to three times and then answered a retryable 409.
    let engine = draftline_infra::EmbeddedDynamo::start(None).await.unwrap();
    let proxy = crate::dynamo_proxy::FaultyDynamo::start(&engine.endpoint()).await;
    let app = crate::helpers::spawn_app_with(LocalOptions {
        dynamodb_endpoint: Some(proxy.endpoint()),
        no_near_duplicate_check: true,
        ..LocalOptions::default()
    })
    .await;
    app.set_policy(&policy(
        "enforce",
        json!({"per_run": {"max_drafts": 5, "max_value": null}}),
    ))
    .await;
    let warm = draft(&app, Some("run-contended"), "contended-1", 1).await;
    assert_eq!(warm.status, 201, "{:?}", warm.body);

    proxy.conflict_on_next_transaction_with("#LIMIT#RUN#");
    let before = app.round_trips();
    let reply = draft(&app, Some("run-contended"), "contended-2", 1).await;
    assert_eq!(reply.status, 201, "{:?}", reply.body);
    assert_eq!(
        proxy.conflicts_answered(),
        1,
        "the fault layer answered the first commit"
    );
    // One prepare (the key lookup's BatchGetItem, which read the draft's
    // data too, and one number's UpdateItem) and two commits.
    assert_eq!(
        diff(&before, &app.round_trips()),
        [
            ("BatchGetItem".into(), 1),
            ("TransactWriteItems".into(), 2),
            ("UpdateItem".into(), 1)
        ]
        .into()
    );
    // One document, its number the next, counted once.
    let number = |reply: &Reply| reply.body["data"]["po_number"].as_str().unwrap().to_owned();
    let (first, second) = (number(&warm), number(&reply));
    let next = |n: &str| n.rsplit('-').next().unwrap().parse::<u64>().unwrap();
    assert_eq!(next(&second), next(&first) + 1, "{first} then {second}");
    assert_eq!(app.new_documents("purchase_order").await, 2);
    assert_eq!(
        app.number(&run_counter("buyer-sby", "run-contended"), "USE", "drafts")
            .await,
        2
    );
}

#[tokio::test]
async fn every_lookup_of_a_limited_run_reads_its_counter_so_a_run_another_instance_filled_is_refused_before_pricing() {
    // Two instances on one engine; the first's DynamoDB client talks to a
    // layer that notes the keys of each BatchGetItem. (An instance once
    // left the counter of a run it had counted out of the lookup: it saved
    // 1-1.5 % of a draft's instructions and no request, and was removed,
    // docs/benchmarks.md.)
    let engine = draftline_infra::EmbeddedDynamo::start(None).await.unwrap();
    let proxy = crate::dynamo_proxy::FaultyDynamo::start(&engine.endpoint()).await;
    let options = |endpoint: String| LocalOptions {
        dynamodb_endpoint: Some(endpoint),
        no_near_duplicate_check: true,
        ..LocalOptions::default()
    };
    let app = crate::helpers::spawn_app_with(options(proxy.endpoint())).await;
    let other = crate::helpers::spawn_app_with(options(engine.endpoint())).await;
    app.set_policy(&policy(
        "enforce",
        json!({"per_run": {"max_drafts": 3, "max_value": null}}),
    ))
    .await;
    let counter = run_counter("buyer-sby", "run-known");
    let read_the_counter = || proxy.batch_reads().last().unwrap().contains(&counter);
    let fresh: BTreeMap<String, u64> = [
        ("BatchGetItem".into(), 1),
        ("TransactWriteItems".into(), 1),
        ("UpdateItem".into(), 1),
    ]
    .into();
    let refused_before_pricing: BTreeMap<String, u64> = [("BatchGetItem".into(), 1), ("PutItem".into(), 1)].into();

    // Each draft of the run reads its counter with its key, in the same
    // three requests.
    for key in ["known-1", "known-2", "known-3"] {
        let before = app.round_trips();
        assert_eq!(draft(&app, Some("run-known"), key, 1).await.status, 201, "{key}");
        assert!(read_the_counter(), "{key}: {:?}", proxy.batch_reads().last());
        assert_eq!(diff(&before, &app.round_trips()), fresh, "{key}");
    }
    // At its count: refused before the draft is priced.
    let before = app.round_trips();
    let refused = draft(&app, Some("run-known"), "known-4", 1).await;
    assert_eq!(
        (refused.status, refused.error_code()),
        (403, "LIMIT_REACHED"),
        "{:?}",
        refused.body
    );
    assert!(read_the_counter());
    assert_eq!(diff(&before, &app.round_trips()), refused_before_pricing);

    // A run this instance drafted in, which another instance filled since:
    // its counter comes with the lookup, so the draft is refused before it
    // is priced or numbered, and nothing is created.
    assert_eq!(draft(&app, Some("run-shared"), "shared-1", 1).await.status, 201);
    for key in ["shared-2", "shared-3"] {
        assert_eq!(draft(&other, Some("run-shared"), key, 1).await.status, 201, "{key}");
    }
    let documents = app.new_documents("purchase_order").await;
    let shared = run_counter("buyer-sby", "run-shared");
    let before = app.round_trips();
    let refused = draft(&app, Some("run-shared"), "shared-4", 1).await;
    assert_eq!(
        (refused.status, refused.error_code()),
        (403, "LIMIT_REACHED"),
        "{:?}",
        refused.body
    );
    assert_eq!(diff(&before, &app.round_trips()), refused_before_pricing);
    assert_eq!(refused.body["error"]["limit"]["used"], json!("3"), "{:?}", refused.body);
    assert!(proxy.batch_reads().last().unwrap().contains(&shared));
    assert_eq!(app.new_documents("purchase_order").await, documents);
    assert_eq!(app.number(&shared, "USE", "drafts").await, 3);
}

/// Writes a field no draftline knows into the demo tenant's stored policy,
/// straight into the table (by hand, or as a newer version would).
async fn break_policy(app: &TestApp) {
    let item = app.item("T#demo#POLICY", "CURRENT").await.unwrap();
    let mut document: Value = serde_json::from_str(item["document"].as_s().unwrap()).unwrap();
    document["limits"]["per_week"] = json!({"max_drafts": 3});
    app.inspect
        .client()
        .update_item()
        .table_name(app.inspect.table())
        .key("pk", AttributeValue::S("T#demo#POLICY".into()))
        .key("sk", AttributeValue::S("CURRENT".into()))
        .update_expression("SET #document = :document")
        .expression_attribute_names("#document", "document")
        .expression_attribute_values(":document", AttributeValue::S(document.to_string()))
        .send()
        .await
        .unwrap();
}

#[tokio::test]
async fn a_stored_policy_without_a_version_refuses_drafts_until_policy_set_replaces_it() {
    let app = spawn_app_drafting_freely().await;
    app.inspect
        .client()
        .update_item()
        .table_name(app.inspect.table())
        .key("pk", AttributeValue::S("T#demo#POLICY".into()))
        .key("sk", AttributeValue::S("CURRENT".into()))
        .update_expression("REMOVE version")
        .send()
        .await
        .unwrap();
    app.clock.advance(chrono::Duration::seconds(31));
    let refused = draft(&app, Some("run-unversioned"), "unversioned-1", 1).await;
    assert_eq!(
        (refused.status, refused.error_code()),
        (503, "DEPENDENCY_UNAVAILABLE"),
        "{:?}",
        refused.body
    );
    assert!(
        refused.message().contains("the item has no version"),
        "{}",
        refused.message()
    );
    // `policy set` replaces it (it cannot tell the version it is based on).
    app.set_policy(&policy(
        "enforce",
        json!({"per_run": {"max_drafts": 5, "max_value": null}}),
    ))
    .await;
    app.clock.advance(chrono::Duration::seconds(31));
    let after = draft(&app, Some("run-unversioned"), "unversioned-1", 1).await;
    assert_eq!(after.status, 201, "{:?}", after.body);
}

#[tokio::test]
async fn a_takeover_is_not_refused_by_a_policy_that_cannot_be_read() {
    // The claim was held to the policy and counted, and its create may have
    // written: the takeover after the lease finds the document, even once
    // the stored policy cannot be read. A new draft is refused.
    let (app, proxy) = behind_a_proxy(LocalOptions {
        no_near_duplicate_check: true,
        lease: Some(std::time::Duration::from_secs(30)),
        ..LocalOptions::default()
    })
    .await;
    app.set_policy(&policy(
        "enforce",
        json!({"per_run": {"max_drafts": 5, "max_value": null}}),
    ))
    .await;
    proxy.then(Target::CreatePurchase, Fault::AnswerAfter(502));
    let lost = draft(&app, Some("run-broken-takeover"), "broken-takeover-1", 1).await;
    assert_eq!(lost.status, 503, "{:?}", lost.body);
    assert_eq!(app.new_documents("purchase_order").await, 1, "Tryton committed it");
    break_policy(&app).await;
    app.clock.advance(chrono::Duration::seconds(31));
    let taken_over = draft(&app, Some("run-broken-takeover"), "broken-takeover-1", 1).await;
    assert!(matches!(taken_over.status, 200 | 201), "{:?}", taken_over.body);
    assert_eq!(app.new_documents("purchase_order").await, 1, "one key, one document");
    assert_eq!(
        app.number(&run_counter("buyer-sby", "run-broken-takeover"), "USE", "drafts")
            .await,
        1
    );
    let fresh = draft(&app, Some("run-broken-takeover"), "broken-takeover-2", 1).await;
    assert_eq!(
        (fresh.status, fresh.error_code()),
        (503, "DEPENDENCY_UNAVAILABLE"),
        "{:?}",
        fresh.body
    );
}

#[tokio::test]
async fn policy_set_after_the_current_item_was_removed_by_hand_numbers_after_the_history() {
    let app = spawn_app_drafting_freely().await;
    let before = app
        .set_policy(&policy(
            "enforce",
            json!({"per_run": {"max_drafts": 5, "max_value": null}}),
        ))
        .await;
    app.inspect
        .client()
        .delete_item()
        .table_name(app.inspect.table())
        .key("pk", AttributeValue::S("T#demo#POLICY".into()))
        .key("sk", AttributeValue::S("CURRENT".into()))
        .send()
        .await
        .unwrap();
    // No policy in force, its versions kept: the next is the one after them
    // (before the fix: version 1 again, refused by its own history for ever).
    let set = app
        .set_policy(&policy(
            "enforce",
            json!({"per_run": {"max_drafts": 1, "max_value": null}}),
        ))
        .await;
    assert_eq!(set, before + 1);
    for version in [before, before + 1] {
        let kept = app.item("T#demo#POLICY", &format!("V#{version:010}")).await;
        assert!(kept.is_some(), "version {version} is in the history");
    }
    let current = app.item("T#demo#POLICY", "CURRENT").await.expect("a policy in force");
    assert_eq!(current["version"], AttributeValue::N((before + 1).to_string()));
    // And it holds the next drafts: one per run.
    app.clock.advance(chrono::Duration::seconds(31));
    let first = draft(&app, Some("run-after-removal"), "after-removal-1", 1).await;
    assert_eq!(first.status, 201, "{:?}", first.body);
    let second = draft(&app, Some("run-after-removal"), "after-removal-2", 1).await;
    assert_eq!(
        (second.status, second.error_code()),
        (403, "LIMIT_REACHED"),
        "{:?}",
        second.body
    );
    assert_eq!(second.body["error"]["limit"]["policyVersion"], before + 1);
}
