//! Observability of a deployed function binary: one structured JSON line per
//! call on stdout, with what an operator needs and nothing a caller sent in
//! confidence (no token, no argument values); its request id is the
//! `X-Request-Id` of the response and the `request_id` of the audit item,
//! and its outcome is the audit item's, for every outcome kind.

use serde_json::{Value, json};

use crate::function_process::function_token;
use crate::helpers::spawn_app;
use crate::vercel::VercelFunction;

/// Argument text that must never reach a log.
const NOTE: &str = "deliver to the back gate, ask for Pak Wibowo 0812-7788";
const CLIENT_REF: &str = "client-ref-e41c7a";

fn draft_input(note: &str, uom: &str) -> String {
    let needed_by = chrono::Utc::now().date_naive() + chrono::Days::new(10);
    json!({
        "vendor_code": "V-00231",
        "needed_by": needed_by.to_string(),
        "client_ref": CLIENT_REF,
        "note": note,
        "lines": [{"item_code": "BRG-0042", "qty": 3, "uom": uom}]
    })
    .to_string()
}

/// The call lines of a function's stdout (the pipeline's one line per call).
fn call_lines(stdout_lines: &[Value]) -> Vec<&Value> {
    stdout_lines
        .iter()
        .filter(|l| l["message"].as_str().is_some_and(|m| m.starts_with("tool call")))
        .collect()
}

#[tokio::test]
async fn every_call_writes_one_json_log_line_without_tokens_or_arguments() {
    let app = spawn_app().await;
    let function = VercelFunction::start(env!("CARGO_BIN_EXE_purchasing_create_po_draft"), &app).await;
    let buyer = function_token("buyer-sby");
    let clerk = function_token("clerk-sby");
    let path = "/api/purchasing_create_po_draft";
    let auth = |token: &str| ("authorization", format!("Bearer {token}"));
    let key = ("idempotency-key", "obs-key-1".to_owned());

    // (what, expected status, expected outcome, expected code)
    let mut calls: Vec<(&str, u16, &str, Option<&str>, String)> = Vec::new();
    let call = async |what, headers: Vec<(&'static str, String)>, body: String| {
        let (status, response_headers, reply) = function.post(path, &headers, body).await;
        let request_id = response_headers["x-request-id"].to_str().unwrap().to_owned();
        assert_eq!(reply["requestId"], request_id.as_str(), "{what}");
        (what, status, request_id, reply)
    };

    let (what, status, id, reply) = call(
        "draft",
        vec![auth(&buyer), key.clone(), ("x-request-id", "obs-draft-1".into())],
        draft_input(NOTE, "BOX"),
    )
    .await;
    assert_eq!((status, id.as_str()), (201, "obs-draft-1"), "{reply:?}");
    calls.push((what, status, "ok", None, id));

    let (what, status, id, reply) = call("replay", vec![auth(&buyer), key.clone()], draft_input(NOTE, "BOX")).await;
    assert_eq!(status, 200, "{reply:?}");
    calls.push((what, status, "replayed", None, id));

    let (what, status, id, reply) = call("invalid", vec![auth(&buyer), key.clone()], draft_input(NOTE, "CRATE")).await;
    assert_eq!(status, 400, "{reply:?}");
    calls.push((what, status, "tool_error", Some("VALIDATION_ERROR"), id));

    let (what, status, id, reply) = call("no token", vec![key.clone()], draft_input(NOTE, "BOX")).await;
    assert_eq!(status, 401, "{reply:?}");
    calls.push((what, status, "denied", Some("UNAUTHENTICATED"), id));

    let (what, status, id, reply) = call("no scope", vec![auth(&clerk), key.clone()], draft_input(NOTE, "BOX")).await;
    assert_eq!(status, 403, "{reply:?}");
    calls.push((what, status, "denied", Some("FORBIDDEN"), id));

    // The same draft under another key: a person is asked. The log names
    // that outcome exactly as the audit item does.
    let other_key = ("idempotency-key", "obs-key-2".to_owned());
    let (what, status, id, reply) = call("asked", vec![auth(&buyer), other_key], draft_input(NOTE, "BOX")).await;
    assert_eq!(status, 409, "{reply:?}");
    calls.push((what, status, "input_required", Some("INPUT_REQUIRED"), id));

    // The child's stdout is read by another thread: wait (bounded) until the
    // last call's line has arrived before judging the whole output.
    let last_id = calls.last().map(|c| c.4.clone()).unwrap_or_default();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !function.process.stdout().contains(&last_id) && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let stdout = function.process.stdout();
    // Every stdout line is JSON, except the Vercel runtime's own start-up line.
    for line in stdout.lines().filter(|l| !l.starts_with("Dev server listening")) {
        assert!(serde_json::from_str::<Value>(line).is_ok(), "not a JSON line: {line}");
    }
    let lines = function.process.json_lines();
    let logged = call_lines(&lines);
    assert_eq!(logged.len(), calls.len(), "one line per call:\n{stdout}");

    let audits = app.audit_items().await;
    for (what, status, outcome, code, request_id) in &calls {
        let mine: Vec<_> = logged
            .iter()
            .filter(|l| l["request_id"] == request_id.as_str())
            .collect();
        assert_eq!(mine.len(), 1, "{what}: exactly one line for {request_id}:\n{stdout}");
        let line = mine[0];
        assert_eq!(line["tool"], "purchasing_create_po_draft", "{what}");
        assert_eq!(line["outcome"], *outcome, "{what}: {line}");
        assert_eq!(line["status"], *status, "{what}: {line}");
        assert_eq!(line["replayed"], *outcome == "replayed", "{what}: {line}");
        match code {
            Some(code) => assert_eq!(line["code"], *code, "{what}: {line}"),
            None => assert!(line.get("code").is_none(), "{what}: {line}"),
        }
        assert!(
            line["duration_ms"].as_f64().is_some_and(|ms| ms >= 0.0),
            "{what}: {line}"
        );
        let round_trips = line["dynamodb_round_trips"].as_u64().unwrap_or(u64::MAX);
        assert!((1..=8).contains(&round_trips), "{what}: {line}");
        assert!(
            line["level"].is_string() && line["timestamp"].is_string(),
            "{what}: {line}"
        );

        // The same id on the audit item of this call (a call refused before
        // anyone was identified is only counted in the anonymous trace).
        if *what == "no token" {
            assert!(audits.iter().all(|a| a["request_id"] != *request_id), "{what}");
            continue;
        }
        let audit = audits
            .iter()
            .find(|a| a["request_id"] == *request_id)
            .unwrap_or_else(|| panic!("{what}: no audit item with request_id {request_id}"));
        assert_eq!(audit["outcome"], *outcome, "{what}");

        // The call record: who, which contract, the key hashed only, where
        // the time went, and whether a retry can help.
        assert_eq!(line["tenant"], "demo", "{what}: {line}");
        assert_eq!(line["user"], audit["on_behalf_of"].as_str(), "{what}: {line}");
        let contract = line["contract"].as_str().unwrap_or_default();
        assert!(
            contract.len() == 12 && contract.bytes().all(|b| b.is_ascii_hexdigit()),
            "{what}: {line}"
        );
        assert_eq!(line["retryable"], false, "{what}: {line}");
        for stage in ["auth_ms", "validation_ms", "idempotency_ms", "erp_ms", "audit_ms"] {
            assert!(
                line[stage].as_f64().is_some_and(|ms| ms >= 0.0),
                "{what}: {stage}: {line}"
            );
        }
        // The SDK's attempts of the call's own requests (the audit item's
        // write shared with other calls counts in the round trips only).
        let attempts = line["sdk_attempts"].as_u64().unwrap_or(u64::MAX);
        assert!(attempts <= round_trips, "{what}: {line}");
        if matches!(*what, "draft" | "replay") {
            assert!(attempts >= 1, "{what}: {line}");
        }
        match audit.get("idempotency_key") {
            Some(key) => assert_eq!(
                line["key_hash"].as_str(),
                Some(&hex::encode(<sha2::Sha256 as sha2::Digest>::digest(key.as_bytes()))[..12]),
                "{what}: {line}"
            ),
            None => assert!(line.get("key_hash").is_none(), "{what}: {line}"),
        }
        // The audit item keeps the stages too (microseconds, until it was made).
        let stages = &audit["stages_us"];
        for stage in ["auth", "validation", "idempotency", "erp", "audit"] {
            assert!(stages.contains(&format!("\"{stage}\"")), "{what}: {stages}");
        }
        assert!(audit["elapsed_us"].parse::<u64>().is_ok(), "{what}: {audit:?}");
    }
    // The draft went to the ERP and the key record; its replay only to the key.
    let draft = logged.iter().find(|l| l["request_id"] == calls[0].4.as_str()).unwrap();
    assert!(
        draft["erp_ms"].as_f64().unwrap() > 0.0 && draft["idempotency_ms"].as_f64().unwrap() > 0.0,
        "{draft}"
    );
    let replay = logged.iter().find(|l| l["request_id"] == calls[1].4.as_str()).unwrap();
    assert_eq!(replay["erp_ms"].as_f64(), Some(0.0), "{replay}");
    let by_id = |id: &str| logged.iter().find(|l| l["request_id"] == id).unwrap();
    // A replay costs one round trip for the key plus the audit item.
    assert!(by_id(&calls[1].4)["dynamodb_round_trips"].as_u64().unwrap() <= 2);

    for (secret, what) in [
        (buyer.as_str(), "the buyer's token"),
        (clerk.as_str(), "the clerk's token"),
        (NOTE, "the note"),
        (CLIENT_REF, "the client_ref"),
        ("V-00231", "the vendor code"),
        ("CRATE", "the rejected value"),
        (crate::function_process::FUNCTION_SECRET, "the JWT secret"),
        ("obs-key-1", "the raw idempotency key"),
        ("obs-key-2", "the other raw idempotency key"),
    ] {
        function.process.assert_never_printed(secret, what);
    }
}

/// A valid W3C `traceparent` the run-page test sends.
const TRACEPARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

#[tokio::test]
async fn the_audit_item_keeps_where_a_calls_time_went_and_the_run_page_shows_it() {
    let app = crate::helpers::spawn_app().await;
    let run = "run-timing-1";
    let reply = app
        .call(
            "buyer-sby",
            "purchasing_create_po_draft",
            &crate::helpers::po_input("timing-1"),
            &[
                ("idempotency-key", "timing-key-1".to_owned()),
                ("x-agent-run-id", run.to_owned()),
                ("traceparent", TRACEPARENT.to_owned()),
            ],
        )
        .await;
    assert_eq!(reply.status, 201, "{:?}", reply.body);
    let audits = app.audit_items().await;
    let audit = audits
        .iter()
        .find(|a| a.get("agent_run_id").map(String::as_str) == Some(run))
        .expect("the draft's audit item");
    assert_eq!(audit["trace_id"], "0af7651916cd43dd8448eb211c80319c");
    let stage_us = |stage: &str| -> u64 {
        let stages = &audit["stages_us"];
        let at = stages
            .find(&format!("\"{stage}\": N(\""))
            .unwrap_or_else(|| panic!("{stage}: {stages}"));
        let digits: String = stages[at + stage.len() + 7..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().unwrap()
    };
    // A fresh draft reads the ERP and looks its key up before its transaction.
    assert!(
        stage_us("erp") > 0 && stage_us("idempotency") > 0 && stage_us("validation") > 0,
        "{audit:?}"
    );
    let elapsed: u64 = audit["elapsed_us"].parse().unwrap();
    let staged: u64 = ["auth", "validation", "idempotency", "erp", "audit"]
        .iter()
        .map(|s| stage_us(s))
        .sum();
    // The call's time starts before its caller is identified, as its
    // auth stage does.
    assert!(
        staged <= elapsed,
        "the stages ({staged} us) fit in the call ({elapsed} us)"
    );

    let approver = crate::review::Reviewer::sign_in(&app.server.url(), "approver-sby").await;
    let page = approver.get(&format!("/review/runs/{run}")).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("Where the time went"), "{}", page.body);
    assert_eq!(page.body.matches("<meter").count(), 5, "a bar per stage: {}", page.body);
    for stage in ["auth", "validation", "idempotency", "erp", "audit"] {
        assert!(
            page.body.contains(&format!("title=\"{stage}: ")),
            "{stage}: {}",
            page.body
        );
    }
    assert!(page.body.contains("0af7651916cd43dd8448eb211c80319c"), "{}", page.body);
    // Calls recorded before the audit kept timings say so.
    let seeded = approver.get("/review/runs/run-sby-reorder-2026-11-26").await;
    assert!(seeded.body.contains("not recorded"), "{}", seeded.body);
}
