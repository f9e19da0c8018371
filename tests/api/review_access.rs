//! Who may read what on the review pages, and how long: run pages by
//! scope (a person reads the calls of the modules they may read; the run's
//! header card comes from authorized calls only), sessions bounded by what
//! opened them and revoked by sign-out, the local demo sign-in safe against
//! another local port, and the marks a reviewer needs to see a
//! near-duplicate draft.

use draftline_contract::identity::{BranchCode, BranchId, Caller, Scopes, TenantId, UserId};
use draftline_review::session::{Session, SessionKeys, SignedInWith};
use reqwest::header::{COOKIE, ORIGIN, SET_COOKIE};
use serde_json::json;

use crate::hardening::token_of;
use crate::helpers::{TestApp, on_both_backends, po_input, spawn_app, spawn_app_on, test_now};
use crate::review::{Page, Reviewer, agent_po, no_redirects, read, set_cookie_named, sign_in_form};

const RUN: &str = "run-mixed-scopes";

/// A call of `tool` in run [`RUN`] with a bearer `token`, model and prompt.
async fn call_in_run(app: &TestApp, token: &str, tool: &str, input: &serde_json::Value, model: &str, key: &str) -> u16 {
    app.post_raw(
        tool,
        &[
            ("authorization", format!("Bearer {token}")),
            ("x-agent-run-id", RUN.to_owned()),
            ("x-tool-call-id", format!("{key}-call")),
            ("x-agent-model", model.to_owned()),
            ("x-prompt-version", format!("{model}-prompt")),
            ("idempotency-key", key.to_owned()),
        ],
        input.to_string(),
    )
    .await
    .status
}

/// The run: a refused caller first (it would be the "first call" a header
/// read from), then the agent's inventory read and PO draft under two
/// models, then a clerk's refused draft. Returns the PO number.
async fn mixed_run(app: &TestApp) -> String {
    let nobody = token_of("demo", "intruder", "SBY-01", "SBY", "", app);
    let planted = call_in_run(
        app,
        &nobody,
        "purchasing_create_po_draft",
        &po_input("planted"),
        "planted-model",
        "planted",
    )
    .await;
    assert_eq!(planted, 403);
    app.clock.advance(chrono::Duration::seconds(1));
    let buyer = app.token("buyer-sby");
    let read = call_in_run(
        app,
        &buyer,
        "inventory_get_stock",
        &json!({"item_code": "BRG-0042"}),
        "gpt-test-1",
        "read",
    )
    .await;
    assert_eq!(read, 200);
    app.clock.advance(chrono::Duration::seconds(1));
    let draft = app
        .post_raw(
            "purchasing_create_po_draft",
            &[
                ("authorization", format!("Bearer {buyer}")),
                ("x-agent-run-id", RUN.to_owned()),
                ("x-agent-model", "gpt-test-2".to_owned()),
                ("x-prompt-version", "gpt-test-2-prompt".to_owned()),
                ("idempotency-key", "mixed-po".to_owned()),
            ],
            po_input("mixed-po").to_string(),
        )
        .await;
    assert_eq!(draft.status, 201, "{:?}", draft.body);
    app.clock.advance(chrono::Duration::seconds(1));
    let clerk = app.token("clerk-sby");
    let refused = call_in_run(
        app,
        &clerk,
        "purchasing_create_po_draft",
        &po_input("clerk"),
        "clerk-model",
        "clerk",
    )
    .await;
    assert_eq!(refused, 403);
    draft.body["data"]["po_number"].as_str().unwrap().to_owned()
}

/// The text of the run's header card.
fn card(page: &Page) -> &str {
    let at = page
        .body
        .find("id=\"run-facts\"")
        .unwrap_or_else(|| panic!("no header card: {}", page.body));
    let end = at + page.body[at..].find("</div>").unwrap();
    &page.body[at..end]
}

/// The notice text of a page (the error a missing document or run reads as).
fn notice(page: &Page, run: &str) -> String {
    let at = page.body.find("<p class=\"notice notice-error\"").unwrap();
    let end = at + page.body[at..].find("</p>").unwrap();
    page.body[at..end].replace(run, "R")
}

#[tokio::test]
async fn a_run_page_shows_each_person_only_the_modules_they_read_and_its_header_only_from_authorized_calls() {
    let app = spawn_app().await;
    let number = mixed_run(&app).await;
    let base = app.server.url();

    // A purchasing approver reads the whole run: the refused calls too,
    // under their callers' own names.
    let approver = Reviewer::sign_in(&base, "approver-sby").await;
    let page = approver.get(&format!("/review/runs/{RUN}")).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(page.rows(), 4, "{}", page.body);
    for shown in ["intruder", "clerk-sby", &number, "V-00231"] {
        assert!(page.body.contains(shown), "{shown}: {}", page.body);
    }
    // The header card: only authorized calls, every model when they disagree.
    let facts = card(&page);
    assert!(facts.contains("buyer-sby"), "{facts}");
    assert!(facts.contains("gpt-test-1") && facts.contains("gpt-test-2"), "{facts}");
    assert!(facts.contains("disagree"), "{facts}");
    for planted in ["planted-model", "intruder", "clerk-model", "clerk-sby"] {
        assert!(!facts.contains(planted), "{planted} is in the header card: {facts}");
    }

    // The clerk (inventory:read only) reads the inventory call and nothing
    // of the purchasing calls: not their rows, not their arguments.
    let clerk = Reviewer::sign_in(&base, "clerk-sby").await;
    let page = clerk.get(&format!("/review/runs/{RUN}")).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(page.rows(), 1, "{}", page.body);
    assert!(page.body.contains("inventory_get_stock"));
    for hidden in [
        "purchasing_create_po_draft",
        "V-00231",
        "mixed-po",
        &number,
        "BRG-0043",
        "planted",
    ] {
        assert!(!page.body.contains(hidden), "the clerk sees {hidden}: {}", page.body);
    }
    // The seeded purchasing run: the clerk sees none of the PO draft's arguments.
    let demo = clerk.get("/review/runs/run-sby-reorder-2026-11-26").await;
    for hidden in ["purchasing_create_po_draft", "V-00231", "PO-SBY-000001"] {
        assert!(!demo.body.contains(hidden), "the clerk sees {hidden}: {}", demo.body);
    }

    // Another branch's person gets the 404 of a missing run, word for word.
    let jakarta = Reviewer::sign_in(&base, "buyer-jkt").await;
    let foreign = jakarta.get(&format!("/review/runs/{RUN}")).await;
    let missing = jakarta.get("/review/runs/run-that-never-was").await;
    assert_eq!(foreign.status, 404, "{}", foreign.body);
    assert_eq!(missing.status, 404);
    assert_eq!(notice(&foreign, RUN), notice(&missing, "run-that-never-was"));
    assert!(!foreign.body.contains(&number));

    // So does a person of the branch whose scopes read none of the run.
    let keys = SessionKeys::of(app.server.app.config(), &app.server.review).unwrap();
    let sales_only = Caller::from_verified(
        TenantId::parse("demo").unwrap(),
        BranchId::parse("SBY-01").unwrap(),
        BranchCode::parse("SBY").unwrap(),
        UserId::parse("sales-sby").unwrap(),
        Vec::new(),
        Scopes::from_claim("sales:read"),
    );
    let seller = Reviewer::with_session(
        &base,
        &keys,
        &Session::start(sales_only, SignedInWith::Demo, test_now()),
    );
    let none = seller.get(&format!("/review/runs/{RUN}")).await;
    assert_eq!(none.status, 404, "{}", none.body);
    assert_eq!(notice(&none, RUN), notice(&missing, "run-that-never-was"));
}

#[tokio::test]
async fn a_run_whose_every_call_was_refused_has_no_header_card_to_plant() {
    let app = spawn_app().await;
    let nobody = token_of("demo", "intruder", "SBY-01", "SBY", "", &app);
    for key in ["p1", "p2"] {
        let status = call_in_run(
            &app,
            &nobody,
            "purchasing_create_po_draft",
            &po_input(key),
            "planted-model",
            key,
        )
        .await;
        assert_eq!(status, 403);
    }
    let approver = Reviewer::sign_in(&app.server.url(), "approver-sby").await;
    let page = approver.get(&format!("/review/runs/{RUN}")).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(page.rows(), 2, "the refused calls are listed");
    assert!(!page.body.contains("id=\"run-facts\""), "{}", page.body);
    assert!(
        page.body
            .contains("No call of this run shown here passed authentication")
    );
    assert!(page.body.contains("intruder"));
}

/// A session cookie (`name=value`) for `user` of the demo, sealed with the app's keys.
fn session_for(app: &TestApp, user: &str, session: impl FnOnce(Caller) -> Session) -> (SessionKeys, Reviewer) {
    let keys = SessionKeys::of(app.server.app.config(), &app.server.review).unwrap();
    let person = draftline_review::demo::demo_person(user).unwrap();
    let reviewer = Reviewer::with_session(&app.server.url(), &keys, &session(person));
    (keys, reviewer)
}

#[tokio::test]
async fn a_session_past_its_tokens_expiry_or_signed_out_and_replayed_is_sent_to_sign_in() {
    let app = spawn_app().await;
    // A session opened with an access token that expires in 10 minutes.
    let now = app.server.app.clock().now();
    let (_, reviewer) = session_for(&app, "approver-sby", |person| {
        Session::start_bounded(person, SignedInWith::Oidc, now, 8 * 3600, Some(now.timestamp() + 600))
    });
    assert_eq!(reviewer.get("/review").await.status, 200);
    app.clock.advance(chrono::Duration::seconds(601));
    let later = reviewer.get("/review").await;
    assert_eq!(later.status, 303, "{}", later.body);
    assert!(later.location().starts_with("/review/signin"), "{}", later.location());

    // Sign out, then replay the very same cookie: the session is revoked on the server.
    let person = Reviewer::sign_in(&app.server.url(), "approver-sby").await;
    let queue = person.get("/review").await;
    assert_eq!(queue.status, 200);
    let csrf = queue.field_after("action=\"/review/signout\"", "csrf");
    let signed_out = person.post("/review/signout", &[("csrf", &csrf)]).await;
    assert_eq!(signed_out.status, 303, "{}", signed_out.body);
    let cleared = set_cookie_named(&signed_out.headers, "draftline_session");
    assert!(cleared.is_none(), "the cookie is cleared: {:?}", signed_out.headers);
    for path in [
        "/review",
        "/review/documents/PO-SBY-000001",
        "/review/runs/run-sby-reorder-2026-11-26",
    ] {
        let replayed = person.get(path).await;
        assert_eq!(replayed.status, 303, "{path}: {}", replayed.body);
        assert!(replayed.location().starts_with("/review/signin"), "{path}");
    }
    // Its forms do nothing either.
    let decided = person
        .post(
            "/review/documents/PO-SBY-000001/approve",
            &[("csrf", &csrf), ("decision_id", "01REPLAYED")],
        )
        .await;
    assert_eq!(decided.status, 401, "{}", decided.body);
}

#[tokio::test]
async fn a_demo_sign_in_posted_from_another_local_port_or_without_the_pages_token_is_refused() {
    let app = spawn_app().await;
    let base = app.server.url();
    let http = no_redirects();
    let (pre, token) = sign_in_form(&http, &base).await;
    let port = app.server.addr.port();
    assert!(pre.starts_with(&format!("draftline_pre_session_{port}=")), "{pre}");
    let post = |origin: Option<String>, cookie: Option<&str>, token: Option<&str>| {
        let mut request = http.post(format!("{base}/review/signin/demo"));
        if let Some(origin) = origin {
            request = request.header(ORIGIN, origin);
        }
        if let Some(cookie) = cookie {
            request = request.header(COOKIE, cookie);
        }
        let mut form = vec![("user", "approver-sby"), ("next", "/review")];
        if let Some(token) = token {
            form.push(("csrf", token));
        }
        request.form(&form).send()
    };
    let other_port = if port == 65535 { port - 1 } else { port + 1 };
    let cases = [
        // A page on another local port, even with this browser's cookie and a valid token.
        (
            Some(format!("http://127.0.0.1:{other_port}")),
            Some(pre.as_str()),
            Some(token.as_str()),
        ),
        (
            Some(format!("http://localhost:{other_port}")),
            Some(pre.as_str()),
            Some(token.as_str()),
        ),
        // The form of another browser (no pre-session cookie here), or none at all.
        (Some(base.clone()), None, Some(token.as_str())),
        (Some(base.clone()), Some(pre.as_str()), None),
        (None, Some(pre.as_str()), Some("forged-token")),
    ];
    for (i, (origin, cookie, token)) in cases.into_iter().enumerate() {
        let page = read(post(origin, cookie, token).await.unwrap()).await;
        assert_eq!(page.status, 403, "case {i}: {}", page.body);
        assert!(page.body.contains("Nobody was signed in"), "case {i}: {}", page.body);
        let cookies: Vec<_> = page.headers.get_all(SET_COOKIE).iter().collect();
        assert!(
            !cookies
                .iter()
                .any(|c| c.to_str().unwrap().starts_with("draftline_session")),
            "case {i}: a session cookie was set: {cookies:?}"
        );
    }
    // This very origin, with the page's token and cookie: signed in, for at
    // most the configured maximum, under a cookie name that carries the port.
    let page = read(post(Some(base.clone()), Some(&pre), Some(&token)).await.unwrap()).await;
    assert_eq!(page.status, 303, "{}", page.body);
    let session = page
        .headers
        .get_all(SET_COOKIE)
        .iter()
        .map(|c| c.to_str().unwrap().to_owned())
        .find(|c| c.starts_with(&format!("draftline_session_{port}=")))
        .expect("a session cookie named with the port");
    let max_age: i64 = session
        .split("Max-Age=")
        .nth(1)
        .and_then(|rest| rest.split(';').next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(0 < max_age && max_age <= 8 * 3600, "{session}");
}

on_both_backends! {
    #[tokio::test]
    async fn a_confirmed_near_duplicate_is_marked_on_both_document_pages_and_in_the_queue(backend) {
        let app = spawn_app_on(backend).await;
        let base = app.server.url();
        let first = agent_po(&app, "buyer-sby", "run-dup-1", "dup-1", po_input("dup")).await;
        let a = first["po_number"].as_str().unwrap().to_owned();
        app.clock.advance(chrono::Duration::minutes(3));
        let asked = dup_again(&app, None).await;
        assert_eq!(asked.status, 409, "{:?}", asked.body);
        let state = asked.body["error"]["inputRequired"]["requestState"].as_str().unwrap().to_owned();
        let created = dup_again(&app, Some(format!("create-another {state}"))).await;
        assert_eq!(created.status, 201, "{:?}", created.body);
        let b = created.body["data"]["po_number"].as_str().unwrap().to_owned();

        let approver = Reviewer::sign_in(&base, "approver-sby").await;
        let page_b = approver.get(&format!("/review/documents/{b}")).await;
        assert_eq!(page_b.status, 200, "{}", page_b.body);
        let marks = section(&page_b, "near-duplicates");
        assert!(marks.contains(&format!("href=\"/review/documents/{a}\"")), "{marks}");
        assert!(marks.contains("same vendor and items"), "{marks}");
        assert!(marks.contains(" apart"), "{marks}");
        assert!(
            page_b.body.contains("the agent was asked and confirmed: create another"),
            "{}",
            page_b.body
        );
        let page_a = approver.get(&format!("/review/documents/{a}")).await;
        let marks = section(&page_a, "near-duplicates");
        assert!(marks.contains(&format!("href=\"/review/documents/{b}\"")), "{marks}");
        assert!(!page_a.body.contains("the agent was asked and confirmed"), "A was not confirmed");

        let queue = approver.get("/review?status=draft").await;
        assert_eq!(queue.status, 200, "{}", queue.body);
        for (number, other) in [(&a, &b), (&b, &a)] {
            let row = queue_row(&queue, number);
            assert!(row.contains("Possible duplicate"), "{number}: {row}");
            assert!(row.contains(other.as_str()), "{number} names {other}: {row}");
        }
        let row_b = queue_row(&queue, &b);
        assert!(row_b.contains("confirmed"), "{row_b}");
        // A draft of other items carries no mark.
        let other = agent_po(&app, "buyer-sby", "run-dup-3", "dup-3", other_items("dup-3")).await;
        let queue = approver.get("/review?status=draft").await;
        let row = queue_row(&queue, other["po_number"].as_str().unwrap());
        assert!(!row.contains("Possible duplicate"), "{row}");
        assert!(queue_row(&queue, &a).contains("Possible duplicate"));
    }
}

/// The restarted run's draft of the same reorder, with a person's answer if given.
async fn dup_again(app: &TestApp, confirm: Option<String>) -> crate::helpers::Reply {
    let mut headers = vec![("x-agent-run-id", "run-dup-2".to_owned())];
    if let Some(confirm) = confirm {
        headers.push(("draftline-confirm", confirm));
    }
    app.call("buyer-sby", "purchasing_create_po_draft", &po_input("dup"), &headers)
        .await
}

/// A PO input of other items than [`po_input`]'s.
fn other_items(client_ref: &str) -> serde_json::Value {
    let mut input = po_input(client_ref);
    input["lines"] = json!([{"item_code": "BRG-0042", "qty": 3, "uom": "BOX"}]);
    input
}

/// The `<section id="…">` of a page.
fn section<'a>(page: &'a Page, id: &str) -> &'a str {
    let marker = format!("<section id=\"{id}\"");
    let at = page
        .body
        .find(&marker)
        .unwrap_or_else(|| panic!("no {id} section: {}", page.body));
    let end = at + page.body[at..].find("</section>").unwrap();
    &page.body[at..end]
}

/// The queue's row of draft `number`.
pub fn queue_row<'a>(page: &'a Page, number: &str) -> &'a str {
    let link = format!("<a href=\"/review/documents/{number}\">");
    let at = page
        .body
        .find(&link)
        .unwrap_or_else(|| panic!("{number} is not in the queue: {}", page.body));
    let start = page.body[..at].rfind("<tr>").unwrap();
    let end = at + page.body[at..].find("</tr>").unwrap();
    &page.body[start..end]
}
