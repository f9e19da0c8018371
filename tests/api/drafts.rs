use std::collections::BTreeSet;

use aws_sdk_dynamodb::types::AttributeValue;
use serde_json::json;

use crate::helpers::{Backend, diff, on_both_backends, po_input, spawn_app_drafting_freely_on, spawn_app_on};

on_both_backends! {
    #[tokio::test]
    async fn a_draft_is_created_and_priced_by_the_server(backend) {
        let app = spawn_app_on(backend).await;
        let reply = app
            .call(
                "buyer-sby",
                "purchasing_create_po_draft",
                &po_input("reorder-1"),
                &[
                    ("idempotency-key", "k-1".into()),
                    ("x-agent-run-id", "run-42".into()),
                    ("x-tool-call-id", "call-7".into()),
                    ("x-agent-model", "gpt-test".into()),
                    ("x-prompt-version", "reorder-v3".into()),
                ],
            )
            .await;
        assert_eq!(reply.status, 201, "{:?}", reply.body);
        assert_eq!(reply.header("idempotent-replayed"), None);
        let po = &reply.body["data"];
        assert_eq!(po["status"], "draft");
        // The next number of the branch's own sequence.
        let number = po["po_number"].as_str().unwrap();
        assert!(number.starts_with("PO-SBY-") && number.len() == 13, "{number}");
        assert_eq!(po["branch_id"], "SBY-01");
        // 10 BOX at the BOX price; 30 PCS at the PCS price.
        assert_eq!(
            po["lines"][0]["unit_price"],
            json!({"amount": "288000.00", "currency": "IDR"})
        );
        assert_eq!(po["lines"][0]["base_qty"], 240);
        assert_eq!(po["lines"][0]["line_total"]["amount"], "2880000.00");
        assert_eq!(po["lines"][1]["unit_price"]["amount"], "14250.00");
        assert_eq!(po["lines"][1]["line_total"]["amount"], "427500.00");
        assert_eq!(po["total"], json!({"amount": "3307500.00", "currency": "IDR"}));
        assert_eq!(po["drafted_by_agent_run"], "run-42");
        assert_eq!(po["drafted_on_behalf_of"], "buyer-sby");

        // The stored document says the same, and the audit item carries the provenance.
        let back = app
            .call(
                "buyer-sby",
                "purchasing_get_po",
                &json!({"po_number": number}),
                &[],
            )
            .await;
        assert_eq!(&back.body["data"], po);
        let audit = app
            .audit_items()
            .await
            .into_iter()
            .find(|a| a["tool"] == "purchasing_create_po_draft")
            .unwrap();
        assert_eq!(audit["outcome"], "ok");
        assert_eq!(audit["http_status"], "201");
        assert_eq!(audit["agent_run_id"], "run-42");
        assert_eq!(audit["tool_call_id"], "call-7");
        assert_eq!(audit["model"], "gpt-test");
        assert_eq!(audit["prompt_version"], "reorder-v3");
        assert_eq!(audit["on_behalf_of"], "buyer-sby");
        assert_eq!(audit["document_number"], number);
        assert_eq!(
            audit["gsi1pk"],
            format!("T#demo#DOC#{}", po["draft_id"].as_str().unwrap())
        );
    }
}

on_both_backends! {
    #[tokio::test]
    async fn a_retry_with_the_same_key_is_a_replay_not_a_second_document(backend) {
        let app = spawn_app_on(backend).await;
        let first = app.create_po_draft("buyer-sby", "k-replay", &po_input("r")).await;
        assert_eq!(first.status, 201);
        let again = app.create_po_draft("buyer-sby", "k-replay", &po_input("r")).await;
        assert_eq!(again.status, 200, "{:?}", again.body);
        assert_eq!(again.body["replayed"], true);
        assert_eq!(again.header("idempotent-replayed"), Some("true"));
        assert_eq!(again.body["data"], first.body["data"]);
        assert_ne!(again.body["requestId"], first.body["requestId"]);
        // A quoted key (RFC 8941 string) is the same key.
        let quoted = app.create_po_draft("buyer-sby", "\"k-replay\"", &po_input("r")).await;
        let number = first.body["data"]["po_number"].as_str().unwrap();
        assert_eq!(quoted.body["data"]["po_number"], number);

        assert_eq!(
            app.new_documents("purchase_order").await,
            1,
            "one new draft besides the seeded ones"
        );
        assert_eq!(app.count_kind("idempotency_key").await, 1);
        let audits = app.audit_items().await;
        let outcomes: Vec<&str> = audits.iter().map(|a| a["outcome"].as_str()).collect();
        assert_eq!(outcomes, ["ok", "replayed", "replayed"]);
        // Every call is findable by the document it created or replayed.
        for audit in &audits {
            assert_eq!(audit["document_number"], number);
            assert_eq!(audit["document_kind"], "purchase_order");
            assert_eq!(audit["gsi1pk"], audits[0]["gsi1pk"]);
        }
    }
}

on_both_backends! {
    #[tokio::test]
    async fn a_replay_is_decided_in_one_round_trip_and_a_fresh_draft_costs_its_reads_plus_one_transaction(backend) {
        let app = spawn_app_on(backend).await;
        let before = app.round_trips();
        assert_eq!(
            app.create_po_draft("buyer-sby", "k-cost", &po_input("r")).await.status,
            201
        );
        let fresh = diff(&before, &app.round_trips());
        match backend {
            // Three requests: the key lookup (one BatchGetItem that reads
            // the tenant's policy, which the instance has not read yet, the
            // vendor, the items, their prices and the near-duplicate marker
            // with the key record), then the number (one atomic UpdateItem,
            // so drafts of one branch never contend), then ONE transaction
            // holding key record + PO + open-draft record + marker +
            // review-queue entry + audit item + the policy's counters.
            Backend::Builtin => assert_eq!(
                fresh,
                [
                    ("BatchGetItem".into(), 1),
                    ("TransactWriteItems".into(), 1),
                    ("UpdateItem".into(), 1)
                ]
                .into()
            ),
            // Key lookup (with the tenant's policy, one BatchGetItem), the
            // claim of the key with a lease and the reservation of the
            // policy's day limit (one transaction; a conditional PutItem
            // when no limit applies), then the completion under the fencing
            // condition (ONE transaction: the stored response and the audit
            // item). The reads and the draft itself go to Tryton.
            Backend::Tryton => assert_eq!(
                fresh,
                [("BatchGetItem".into(), 1), ("TransactWriteItems".into(), 2)].into()
            ),
        }

        let before = app.round_trips();
        assert_eq!(
            app.create_po_draft("buyer-sby", "k-cost", &po_input("r")).await.status,
            200
        );
        let replay = diff(&before, &app.round_trips());
        // One round trip resolves the replay: on the instance that created
        // the key, the record alone (on the built-in backend, an instance
        // that did not reads it in the batch that would have read the
        // draft's data: see the test below); the audit item of the replay
        // is its own write.
        assert_eq!(replay, [("GetItem".into(), 1), ("PutItem".into(), 1)].into());
    }
}

/// The same draft under the same key, on `app`.
async fn draft(app: &crate::helpers::TestApp) -> crate::helpers::Reply {
    app.create_po_draft("buyer-sby", "k-hint", &po_input("hint")).await
}

/// Requests by operation, as `diff` of two round-trip counts gives them.
fn requests(ops: &[(&str, u64)]) -> std::collections::BTreeMap<String, u64> {
    ops.iter().map(|(op, n)| ((*op).to_owned(), *n)).collect()
}

/// A replay's one lookup on the built-in backend: on an instance that did
/// not answer the key, the batch that also reads what a fresh draft needs
/// (it cannot know it is a replay); on one that did, the record alone. A
/// record gone after all makes a fresh draft that reads its data itself.
#[tokio::test]
async fn a_replay_reads_the_record_alone_on_an_instance_that_answered_its_key() {
    let engine = draftline_infra::EmbeddedDynamo::start(None).await.unwrap();
    // Drafting the same items freely: the draft made after the record is
    // gone is created, not asked about.
    let on_the_engine = || draftline_cli::LocalOptions {
        dynamodb_endpoint: Some(engine.endpoint()),
        no_near_duplicate_check: true,
        ..draftline_cli::LocalOptions::default()
    };
    let first = crate::helpers::spawn_app_with(on_the_engine()).await;
    let second = crate::helpers::spawn_app_with(on_the_engine()).await;
    assert_eq!(draft(&first).await.status, 201);
    let record_alone = requests(&[("GetItem", 1), ("PutItem", 1)]);
    let fresh = requests(&[("BatchGetItem", 1), ("TransactWriteItems", 1), ("UpdateItem", 1)]);

    let before = first.round_trips();
    assert_eq!(draft(&first).await.status, 200);
    assert_eq!(
        diff(&before, &first.round_trips()),
        record_alone,
        "the instance that created it"
    );

    // Another instance, with the tenant's policy already read (a draft of
    // its own): its lookup is a batch only because it carries the draft's
    // data with the record. Still one request.
    let before = second.round_trips();
    let warm = second.create_po_draft("buyer-sby", "k-warm", &po_input("warm")).await;
    assert_eq!(warm.status, 201, "{:?}", warm.body);
    assert_eq!(diff(&before, &second.round_trips()), fresh, "a fresh draft");
    let before = second.round_trips();
    let replayed = draft(&second).await;
    assert_eq!(
        (replayed.status, replayed.header("idempotent-replayed")),
        (200, Some("true"))
    );
    assert_eq!(
        diff(&before, &second.round_trips()),
        requests(&[("BatchGetItem", 1), ("PutItem", 1)]),
        "an instance that had not answered the key"
    );
    let before = second.round_trips();
    assert_eq!(draft(&second).await.status, 200);
    assert_eq!(
        diff(&before, &second.round_trips()),
        record_alone,
        "once it replayed it"
    );

    // Another user's same key is another record: a fresh draft, whose
    // lookup reads its data.
    let before = first.round_trips();
    let other = first.create_po_draft("buyer-jkt", "k-hint", &po_input("hint")).await;
    assert_eq!(other.status, 201, "{:?}", other.body);
    assert_eq!(diff(&before, &first.round_trips()), fresh, "another user's key");

    // The record removed by hand: the hint is wrong, the table is right. A
    // new draft is created, reading its data itself (one request more).
    for item in first.scan_all().await {
        if item.get("kind").and_then(|v| v.as_s().ok()).map(String::as_str) == Some("idempotency_key") {
            first
                .inspect
                .client()
                .delete_item()
                .table_name(first.inspect.table())
                .key("pk", item["pk"].clone())
                .key("sk", item["sk"].clone())
                .send()
                .await
                .unwrap();
        }
    }
    let documents = first.documents("purchase_order").await;
    let before = first.round_trips();
    let created = draft(&first).await;
    assert_eq!(created.status, 201, "{:?}", created.body);
    assert_eq!(created.body["data"]["lines"].as_array().map(Vec::len), Some(2));
    assert_eq!(first.documents("purchase_order").await, documents + 1);
    assert_eq!(
        diff(&before, &first.round_trips()),
        requests(&[
            ("BatchGetItem", 1),
            ("GetItem", 1),
            ("TransactWriteItems", 1),
            ("UpdateItem", 1)
        ]),
        "the record, then the draft's own reads, the number, the transaction"
    );
}

on_both_backends! {
    #[tokio::test]
    async fn the_same_key_with_other_arguments_is_a_conflict_and_writes_nothing(backend) {
        let app = spawn_app_on(backend).await;
        assert_eq!(
            app.create_po_draft("buyer-sby", "k-x", &po_input("r")).await.status,
            201
        );
        let before = app.kinds().await;
        let mut other = po_input("r");
        other["lines"][0]["qty"] = json!(11);
        let reply = app.create_po_draft("buyer-sby", "k-x", &other).await;
        assert_eq!(reply.status, 422, "{:?}", reply.body);
        assert_eq!(reply.error_code(), "CONFLICT");
        assert_eq!(reply.body["error"]["retryable"], false);
        assert!(reply.message().contains("No draft was created"));
        let mut after = app.kinds().await;
        assert_eq!(after.remove("audit"), before.get("audit").map(|n| n + 1));
        let mut before = before;
        before.remove("audit");
        assert_eq!(after, before, "only the audit item of the refused call was added");
        let audit = app.audit_items().await.pop().unwrap();
        assert_eq!(audit["outcome"], "tool_error");
        assert_eq!(audit["code"], "CONFLICT");
        // The audit keeps what the model was told.
        assert_eq!(audit["error_message"], reply.message());
    }
}

on_both_backends! {
    #[tokio::test]
    async fn another_user_reusing_a_key_gets_a_draft_of_their_own_never_the_first_users(backend) {
        let app = spawn_app_on(backend).await;
        assert_eq!(
            app.create_po_draft("buyer-sby", "shared-key", &po_input("r"))
                .await
                .status,
            201
        );
        let reply = app.create_po_draft("buyer-jkt", "shared-key", &po_input("r")).await;
        // Same tenant, same key, same arguments, different user and branch: keys
        // are scoped by caller, so this is JKT's own first draft with that key.
        assert_eq!(reply.status, 201, "{:?}", reply.body);
        assert!(!reply.body.to_string().contains("PO-SBY"));
        assert!(reply.body["data"]["po_number"].as_str().unwrap().starts_with("PO-JKT-"));
    }
}

on_both_backends! {
    #[tokio::test]
    async fn fifty_concurrent_identical_calls_create_exactly_one_document(backend) {
        let app = spawn_app_on(backend).await;
        let app = &app;
        let input = po_input("race");
        let input = &input;
        let calls = (0..50).map(|_| async move { app.create_po_draft("buyer-sby", "k-race", input).await });
        let replies = futures::future::join_all(calls).await;
        let mut created = 0;
        let mut numbers = BTreeSet::new();
        for reply in &replies {
            match reply.status {
                201 => {
                    created += 1;
                    numbers.insert(reply.body["data"]["po_number"].as_str().unwrap().to_owned());
                }
                200 => {
                    assert_eq!(reply.body["replayed"], true);
                    numbers.insert(reply.body["data"]["po_number"].as_str().unwrap().to_owned());
                }
                409 => {
                    assert_eq!(reply.body["error"]["retryable"], true);
                    assert!(reply.header("retry-after").is_some());
                }
                // Tryton's own server runs one request at a time: on a busy
                // machine a read before the claim may time out (a retryable
                // 503 that created nothing), and so may the winner's create
                // (a retryable 503 that says it may have created the draft).
                503 if backend == Backend::Tryton => {
                    assert_eq!(reply.body["error"]["retryable"], true, "{:?}", reply.body);
                    let message = reply.message();
                    assert!(
                        message.contains("Nothing was read or changed")
                            || message.contains("may or may not have been created"),
                        "{:?}",
                        reply.body
                    );
                }
                other => panic!("unexpected status {other}: {:?}", reply.body),
            }
        }
        assert_eq!(app.audit_items().await.len(), 50, "every call is audited");
        if backend == Backend::Tryton {
            // However the race went, the same call again answers with the
            // one document (once the lease of a create that timed out ends).
            let settle_by = std::time::Instant::now() + std::time::Duration::from_secs(90);
            let mut settled = app.create_po_draft("buyer-sby", "k-race", input).await;
            while matches!(settled.status, 409 | 503) && std::time::Instant::now() < settle_by {
                assert_eq!(settled.body["error"]["retryable"], true, "{:?}", settled.body);
                tokio::time::sleep(std::time::Duration::from_secs(2)).await;
                settled = app.create_po_draft("buyer-sby", "k-race", input).await;
            }
            assert!(matches!(settled.status, 200 | 201), "{:?}", settled.body);
            created += usize::from(settled.status == 201);
            numbers.insert(settled.body["data"]["po_number"].as_str().unwrap().to_owned());
        }
        assert_eq!(created, 1, "exactly one call creates the draft");
        // Every call answers with the one draft (callers that lost the race on
        // the key may have reserved a number first: numbers can have gaps).
        assert_eq!(numbers.len(), 1, "{numbers:?}");
        assert!(numbers.iter().all(|n| n.starts_with("PO-SBY-")), "{numbers:?}");
        assert_eq!(
            app.new_documents("purchase_order").await,
            1,
            "one new draft besides the seeded ones"
        );
        assert_eq!(app.count_kind("idempotency_key").await, 1);
    }
}

on_both_backends! {
    #[tokio::test]
    async fn concurrent_drafts_with_different_keys_get_distinct_numbers(backend) {
        // Eight drafts of the same items: without the near-duplicate
        // question, whose answer would depend on which create came first.
        let app = spawn_app_drafting_freely_on(backend).await;
        let app = &app;
        let call = |i: usize| async move {
            app.create_po_draft("buyer-sby", &format!("k-{i}"), &po_input(&format!("r-{i}")))
                .await
        };
        let mut replies = futures::future::join_all((0..8).map(call)).await;
        if backend == Backend::Tryton {
            // Tryton's own server takes one write at a time: under load a
            // create may not answer within the deadline, a retryable 503
            // that may or may not have created the draft. The retry with
            // the same key settles it (the draft once, whichever it was).
            // (A retry while the first call's lease lives is in flight: 409.)
            let settle_by = std::time::Instant::now() + std::time::Duration::from_secs(90);
            for (i, reply) in replies.iter_mut().enumerate() {
                while matches!(reply.status, 409 | 503) && std::time::Instant::now() < settle_by {
                    assert_eq!(reply.body["error"]["retryable"], true, "{:?}", reply.body);
                    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
                    *reply = call(i).await;
                }
            }
        }
        let numbers: BTreeSet<String> = replies
            .iter()
            .filter(|r| matches!(r.status, 200 | 201))
            .map(|r| r.body["data"]["po_number"].as_str().unwrap().to_owned())
            .collect();
        let answered = replies.iter().filter(|r| matches!(r.status, 200 | 201)).count();
        assert_eq!(numbers.len(), answered, "no number is used twice");
        assert!(
            replies.iter().all(|r| matches!(r.status, 200 | 201)
                || (r.status == 409 && r.body["error"]["retryable"] == true)),
            "{:?}",
            replies.iter().map(|r| (r.status, &r.body["error"])).collect::<Vec<_>>()
        );
        assert_eq!(
            app.new_documents("purchase_order").await,
            answered
        );
    }
}

on_both_backends! {
    #[tokio::test]
    async fn an_agent_executor_key_is_the_run_id_and_client_ref(backend) {
        let app = spawn_app_on(backend).await;
        let headers = [
            ("x-agent-run-id", "run-9".to_owned()),
            ("x-tool-call-id", "call-1".to_owned()),
        ];
        let first = app
            .call("buyer-sby", "purchasing_create_po_draft", &po_input("line-1"), &headers)
            .await;
        assert_eq!(first.status, 201, "{:?}", first.body);
        let retry_headers = [
            ("x-agent-run-id", "run-9".to_owned()),
            ("x-tool-call-id", "call-2".to_owned()),
        ];
        let retry = app
            .call(
                "buyer-sby",
                "purchasing_create_po_draft",
                &po_input("line-1"),
                &retry_headers,
            )
            .await;
        assert_eq!(retry.status, 200);
        assert_eq!(retry.body["data"]["po_number"], first.body["data"]["po_number"]);
        let audits = app.audit_items().await;
        let call_ids: Vec<&str> = audits.iter().map(|a| a["tool_call_id"].as_str()).collect();
        assert_eq!(call_ids, ["call-1", "call-2"]);
        assert!(audits.iter().all(|a| a["idempotency_key"] == "run-9:line-1"));
    }
}

on_both_backends! {
    #[tokio::test]
    async fn a_draft_without_any_key_is_refused_with_how_to_send_one(backend) {
        let app = spawn_app_on(backend).await;
        let reply = app
            .call("buyer-sby", "purchasing_create_po_draft", &po_input("r"), &[])
            .await;
        assert_eq!(reply.status, 400);
        assert_eq!(reply.error_code(), "VALIDATION_ERROR");
        assert!(reply.message().contains("Idempotency-Key"));
        assert!(reply.message().contains("X-Agent-Run-Id"));
        assert_eq!(app.new_documents("purchase_order").await, 0);
    }
}

on_both_backends! {
    #[tokio::test]
    async fn an_expired_key_record_is_a_fresh_draft(backend) {
        let app = spawn_app_drafting_freely_on(backend).await;
        let first = app.create_po_draft("buyer-sby", "k-old", &po_input("r")).await;
        assert_eq!(first.status, 201);
        // DynamoDB TTL deletes lazily: a record past expires_at must not answer.
        app.clock.advance(chrono::Duration::hours(25));
        let mut later = po_input("r");
        later["needed_by"] = json!("2026-12-20");
        let reply = app.create_po_draft("buyer-sby", "k-old", &later).await;
        assert_eq!(reply.status, 201, "{:?}", reply.body);
        assert_ne!(reply.body["data"]["po_number"], first.body["data"]["po_number"]);
        assert_eq!(app.new_documents("purchase_order").await, 2, "a second document");
    }
}

/// What each kind of draft call costs on the built-in backend, cold (the
/// instance's copy of the tenant's policy is stale, so the key lookup reads
/// it too) and warm, with a policy in force that limits the run's drafts
/// (so the run's counter rides in the key lookup) and the near-duplicate
/// question on.
#[tokio::test]
async fn each_draft_call_costs_its_requests_cold_and_warm_under_a_policy() {
    let app = crate::helpers::spawn_app().await;
    app.set_policy(&json!({
        "version": null, "mode": "enforce", "time_zone": "+07:00", "branches": null,
        "limits": {"per_run": {"max_drafts": 50, "max_value": null}}
    }))
    .await;
    let stale = || app.clock.advance(chrono::Duration::seconds(31));
    let cost = |reply: crate::helpers::Reply, status: u16, before| {
        assert_eq!(reply.status, status, "{:?}", reply.body);
        diff(&before, &app.round_trips())
    };
    let run = |run: &str| vec![("x-agent-run-id", run.to_owned())];
    let po = |client_ref: &str| po_input(client_ref);
    let quote = |client_ref: &str, (item, uom): (&str, &str)| {
        json!({"customer_code": "C-BDG-001", "valid_until": "2026-12-20", "client_ref": client_ref, "note": null,
               "lines": [{"item_code": item, "qty": 2, "uom": uom, "tax_code": "VAT11"}]})
    };
    let three: std::collections::BTreeMap<String, u64> = [
        ("BatchGetItem".into(), 1),
        ("TransactWriteItems".into(), 1),
        ("UpdateItem".into(), 1),
    ]
    .into();

    // A fresh PO draft: the key lookup reads the vendor, the items, their
    // prices and the near-duplicate marker too; the number; the transaction.
    for (warm, client_ref) in [(false, "po-cold"), (true, "po-warm")] {
        if !warm {
            stale();
        }
        let mut input = po(client_ref);
        input["lines"][1]["item_code"] = json!(if warm { "BRG-0043" } else { "VBT-0220" });
        let before = app.round_trips();
        let reply = app
            .call("buyer-sby", "purchasing_create_po_draft", &input, &run(client_ref))
            .await;
        assert_eq!(cost(reply, 201, before), three, "{client_ref}");
    }

    // The near-duplicate question: the key lookup finds the open draft in the
    // marker; the question is audited (its one write).
    for warm in [false, true] {
        if !warm {
            stale();
        }
        let mut input = po("po-again");
        input["lines"][1]["item_code"] = json!("BRG-0043");
        let before = app.round_trips();
        let reply = app
            .call(
                "buyer-sby",
                "purchasing_create_po_draft",
                &input,
                &run(&format!("again-{warm}")),
            )
            .await;
        assert_eq!(reply.error_code(), "INPUT_REQUIRED");
        assert_eq!(
            cost(reply, 409, before),
            [("BatchGetItem".into(), 1), ("PutItem".into(), 1)].into(),
            "warm: {warm}"
        );
    }

    // A fresh quote: the key lookup reads the customer and its credit
    // standing, the items and their sales prices, the tax types and the
    // marker; the number; the transaction.
    for (warm, client_ref, item) in [
        (false, "q-cold", ("BRG-0042", "BOX")),
        (true, "q-warm", ("BRG-0043", "PCS")),
    ] {
        if !warm {
            stale();
        }
        let before = app.round_trips();
        let reply = app
            .call(
                "sales-bdg",
                "sales_create_quote_draft",
                &quote(client_ref, item),
                &run(client_ref),
            )
            .await;
        assert_eq!(cost(reply, 201, before), three, "{client_ref}");
    }
}

/// A table kept from before the built-in backend stored credit standings
/// has none: a quote then reads the customer's orders and invoices, and
/// says the same about its credit.
#[tokio::test]
async fn a_quote_without_a_stored_credit_standing_reads_the_orders_and_invoices_and_says_the_same() {
    let app = crate::helpers::spawn_app().await;
    let quote = |client_ref: &str, item: &str, uom: &str| {
        json!({"customer_code": "C-BDG-001", "valid_until": "2026-12-20", "client_ref": client_ref, "note": null,
               "lines": [{"item_code": item, "qty": 2, "uom": uom, "tax_code": "VAT11"}]})
    };
    let credit = |reply: &crate::helpers::Reply| {
        assert_eq!(reply.status, 201, "{:?}", reply.body);
        let check = reply.body["data"]["credit_check"].as_str().unwrap().to_owned();
        // The customer's position, before what this quote adds.
        check.split(". ").next().unwrap().to_owned()
    };
    let keyed = app
        .call(
            "sales-bdg",
            "sales_create_quote_draft",
            &quote("q-1", "BRG-0042", "BOX"),
            &[("idempotency-key", "q-1".into())],
        )
        .await;
    assert!(
        credit(&keyed).starts_with("Credit limit 150000000.00 IDR"),
        "{}",
        credit(&keyed)
    );

    app.inspect
        .client()
        .delete_item()
        .table_name(app.inspect.table())
        .key("pk", AttributeValue::S("T#demo#B#BDG-01#STANDING".into()))
        .key("sk", AttributeValue::S("CUST#C-BDG-001".into()))
        .send()
        .await
        .unwrap();
    let before = app.round_trips();
    let queried = app
        .call(
            "sales-bdg",
            "sales_create_quote_draft",
            &quote("q-2", "BRG-0043", "PCS"),
            &[("idempotency-key", "q-2".into())],
        )
        .await;
    assert_eq!(credit(&queried), credit(&keyed));
    assert_eq!(
        diff(&before, &app.round_trips()).get("Query"),
        Some(&2),
        "its orders and its invoices"
    );
}
