//! The review pages over real HTTP: sign-in, the queue, runs, documents,
//! decisions; what agents (bearer tokens) cannot do there, CSRF, four eyes,
//! branch isolation, long runs, double clicks, and the deployed function.
//! The browser drives the same pages in `browser.rs`.

use std::collections::BTreeMap;
use std::sync::Arc;

use draftline_cli::{TokenSpec, demo_spec, token_for};
use draftline_contract::clock::ManualClock;
use draftline_contract::settings::Source;
use draftline_dynamo::Db;
use draftline_erp_backends::{Backend as ErpBackend, ErpSettings};
use draftline_review::ReviewPages;
use draftline_review::session::{Session, SessionKeys, SignedInWith};
use draftline_review::settings::ReviewSettings;
use draftline_server::App;
use draftline_server::config::Config;
use draftline_server::runtime::local;
use reqwest::header::{COOKIE, LOCATION, SET_COOKIE};
use serde_json::{Value, json};
use tokio::net::TcpListener;

use crate::function_process::{FunctionProcess, function_env};
use crate::helpers::{
    Backend, TestApp, first_bdg_quote, first_sby_po, on_both_backends, po_input, spawn_app, spawn_app_on, test_now,
};

/// The most a review page may weigh.
pub const PAGE_SIZE_LIMIT: usize = 256 * 1024;

/// A page as a browser would get it (no redirect followed).
#[derive(Debug)]
pub struct Page {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: String,
}

impl Page {
    pub fn location(&self) -> &str {
        self.headers
            .get(LOCATION)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    }

    /// The value of the first hidden input `name` after `marker` in the page.
    pub fn field_after(&self, marker: &str, name: &str) -> String {
        let start = self
            .body
            .find(marker)
            .unwrap_or_else(|| panic!("{marker} is not on the page:\n{}", self.body));
        let rest = &self.body[start..];
        let needle = format!("name=\"{name}\" value=\"");
        let at = rest
            .find(&needle)
            .unwrap_or_else(|| panic!("no field {name} after {marker}"));
        let value = &rest[at + needle.len()..];
        value[..value.find('"').unwrap()].to_owned()
    }

    /// How many calls a run page lists.
    pub fn rows(&self) -> usize {
        self.body.matches("<tr><td data-label=\"Time\">").count()
    }

    /// The `Next page` link, if any (HTML-unescaped).
    pub fn next_link(&self) -> Option<String> {
        let at = self.body.find("rel=\"next\"")?;
        let head = &self.body[..at];
        let href = head.rfind("href=\"")?;
        let link = &head[href + 6..];
        Some(link[..link.find('"')?].replace("&amp;", "&"))
    }
}

/// A person's browser without a browser: a cookie jar of one session.
pub struct Reviewer {
    pub base: String,
    pub http: reqwest::Client,
    pub cookie: String,
}

/// A client that follows no redirect, so each answer is seen as it is.
pub fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// The `name=value` of the cookie named `<prefix>…=` a response sets
/// (local cookie names end in the server's port: `draftline_session_3000`).
pub fn set_cookie_named(headers: &reqwest::header::HeaderMap, prefix: &str) -> Option<String> {
    headers
        .get_all(SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.starts_with(prefix) && !c.contains("Max-Age=0"))
        .map(|c| c.split(';').next().unwrap().to_owned())
}

/// The `name=value` of the session cookie a response sets.
fn session_cookie(headers: &reqwest::header::HeaderMap) -> Option<String> {
    set_cookie_named(headers, "draftline_session")
}

/// The sign-in page as a browser first gets it: its pre-session cookie
/// (`name=value`) and the demo form's CSRF token.
pub async fn sign_in_form(http: &reqwest::Client, base: &str) -> (String, String) {
    let page = read(http.get(format!("{base}/review/signin")).send().await.unwrap()).await;
    assert_eq!(page.status, 200, "{}", page.body);
    let pre = set_cookie_named(&page.headers, "draftline_pre_session").expect("a pre-session cookie");
    let token = page.field_after("action=\"/review/signin/demo\"", "csrf");
    (pre, token)
}

impl Reviewer {
    /// Signs demo person `user` in through the demo sign-in page, as a
    /// browser does: the page first (its pre-session cookie and the form's
    /// token), then the form.
    pub async fn sign_in(base: &str, user: &str) -> Self {
        let http = no_redirects();
        let (pre, token) = sign_in_form(&http, base).await;
        let response = http
            .post(format!("{base}/review/signin/demo"))
            .header(COOKIE, &pre)
            .form(&[("user", user), ("next", "/review"), ("csrf", &token)])
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 303, "demo sign-in of {user}");
        let cookie = session_cookie(response.headers()).expect("a session cookie");
        Self {
            base: base.to_owned(),
            http,
            cookie,
        }
    }

    /// A reviewer holding a session cookie made for `person` with `keys`
    /// (a person the demo sign-in does not list: another tenant, another role).
    pub fn with_session(base: &str, keys: &SessionKeys, session: &Session) -> Self {
        Self {
            base: base.to_owned(),
            http: no_redirects(),
            cookie: format!("{}={}", keys.session_cookie(), keys.seal_session(session)),
        }
    }

    pub async fn get(&self, path: &str) -> Page {
        let response = self
            .http
            .get(format!("{}{path}", self.base))
            .header(COOKIE, &self.cookie)
            .send()
            .await
            .unwrap();
        read(response).await
    }

    pub async fn post(&self, path: &str, form: &[(&str, &str)]) -> Page {
        let response = self
            .http
            .post(format!("{}{path}", self.base))
            .header(COOKIE, &self.cookie)
            .form(form)
            .send()
            .await
            .unwrap();
        read(response).await
    }

    /// Signs out through the queue's sign-out form (its session is revoked).
    pub async fn sign_out(&self) -> Page {
        let queue = self.get("/review").await;
        assert_eq!(queue.status, 200, "{}", queue.body);
        let csrf = queue.field_after("action=\"/review/signout\"", "csrf");
        self.post("/review/signout", &[("csrf", &csrf)]).await
    }

    /// Opens document `number` and posts its `verb` form (`approve`, `reject`) with `reason`.
    pub async fn decide(&self, number: &str, verb: &str, reason: &str) -> Page {
        let page = self.get(&format!("/review/documents/{number}")).await;
        assert_eq!(page.status, 200, "{}", page.body);
        let form = format!("/review/documents/{number}/{verb}");
        let csrf = page.field_after(&form, "csrf");
        let decision_id = page.field_after(&form, "decision_id");
        self.post(
            &form,
            &[("csrf", &csrf), ("decision_id", &decision_id), ("reason", reason)],
        )
        .await
    }
}

pub async fn read(response: reqwest::Response) -> Page {
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response.text().await.unwrap();
    Page { status, headers, body }
}

/// A PO draft by `user` in agent run `run`, through the tool function.
pub async fn agent_po(app: &TestApp, user: &str, run: &str, client_ref: &str, input: Value) -> Value {
    let reply = app
        .call(
            user,
            "purchasing_create_po_draft",
            &input,
            &[
                ("x-agent-run-id", run.to_owned()),
                ("x-tool-call-id", format!("{client_ref}-call")),
                ("x-agent-model", "gpt-test-1".to_owned()),
                ("x-prompt-version", "reorder@test".to_owned()),
            ],
        )
        .await;
    assert_eq!(reply.status, 201, "{client_ref}: {:?}", reply.body);
    reply.body["data"].clone()
}

/// A PO input of `vendor` and `item` in `uom`, with `client_ref`.
pub fn po_of(client_ref: &str, vendor: &str, item: &str, qty: i64, uom: &str) -> Value {
    json!({
        "vendor_code": vendor,
        "needed_by": "2026-12-15",
        "client_ref": client_ref,
        "note": null,
        "lines": [{"item_code": item, "qty": qty, "uom": uom}]
    })
}

/// The state of document `number` as the ERP's agents read it back.
async fn po_as_read(app: &TestApp, number: &str) -> Value {
    let reply = app
        .call("buyer-sby", "purchasing_get_po", &json!({"po_number": number}), &[])
        .await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    reply.body["data"].clone()
}

/// Audit items of the calls made since the server started, by (tool, outcome).
async fn audit_counts(app: &TestApp) -> BTreeMap<(String, String), usize> {
    let mut counts = BTreeMap::new();
    for item in app.audit_items().await {
        *counts
            .entry((item["tool"].clone(), item["outcome"].clone()))
            .or_default() += 1;
    }
    counts
}

#[tokio::test]
async fn every_review_page_without_a_session_redirects_to_sign_in_and_a_form_changes_nothing() {
    let app = spawn_app().await;
    let http = no_redirects();
    for path in [
        "/review",
        "/review?kind=quote&status=draft",
        "/review/runs/run-sby-reorder-2026-11-26",
        "/review/documents/PO-SBY-000001",
        "/review/nothing/here",
    ] {
        let page = read(http.get(app.url(path)).send().await.unwrap()).await;
        assert_eq!(page.status, 303, "{path}");
        assert!(
            page.location().starts_with("/review/signin?next=%2Freview"),
            "{path}: {}",
            page.location()
        );
    }
    // A forged or expired cookie is no session either.
    let page = read(
        http.get(app.url("/review"))
            .header(
                COOKIE,
                format!("draftline_session_{}=v1.e30.AAAA", app.server.addr.port()),
            )
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(page.status, 303);
    for verb in ["approve", "reject"] {
        let page = read(
            http.post(app.url(&format!("/review/documents/PO-SBY-000001/{verb}")))
                .form(&[("decision_id", "01JX"), ("reason", "no session")])
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(page.status, 401, "{verb}: {}", page.body);
        assert!(page.body.contains("nothing was done"), "{}", page.body);
    }
    assert_eq!(po_as_read(&app, "PO-SBY-000001").await["status"], "draft");
    // The sign-in page itself is public, and every page is locked down.
    let signin = read(http.get(app.url("/review/signin")).send().await.unwrap()).await;
    assert_eq!(signin.status, 200);
    assert!(signin.body.contains("approver-sby"));
    let csp = signin.headers["content-security-policy"].to_str().unwrap();
    for directive in [
        "default-src 'none'",
        "style-src 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(csp.contains(directive), "{csp}");
    }
    assert!(!signin.body.contains("<script"), "no scripts at all");
    let css = http.get(app.url("/review/assets/review.css")).send().await.unwrap();
    assert_eq!(css.status(), 200);
    assert!(css.headers()["content-type"].to_str().unwrap().starts_with("text/css"));
}

#[tokio::test]
async fn a_bearer_token_even_one_with_an_approve_scope_cannot_approve_or_reject_and_changes_nothing() {
    let app = spawn_app().await;
    let draft = agent_po(&app, "buyer-sby", "run-bearer", "bearer-1", po_input("bearer-1")).await;
    let number = draft["po_number"].as_str().unwrap().to_owned();
    let token = app.token("approver-sby");
    assert!(demo_spec("approver-sby").unwrap().scope.contains("purchasing:approve"));
    let everything = token_for(
        &TokenSpec {
            scope: "purchasing:read purchasing:draft purchasing:approve sales:approve".into(),
            ..demo_spec("approver-sby").unwrap()
        },
        &app.server.url(),
        600,
    )
    .unwrap();
    // Even with a valid session cookie next to it, a bearer token is refused.
    let person = Reviewer::sign_in(&app.server.url(), "approver-sby").await;
    let page = person.get(&format!("/review/documents/{number}")).await;
    let csrf = page.field_after("/approve", "csrf");
    let decision_id = page.field_after("/approve", "decision_id");
    let before = app.scan_all().await.len();
    for (verb, bearer, cookie) in [
        ("approve", &token, None),
        ("reject", &token, None),
        ("approve", &everything, None),
        ("approve", &token, Some(person.cookie.clone())),
    ] {
        let mut request = no_redirects()
            .post(app.url(&format!("/review/documents/{number}/{verb}")))
            .bearer_auth(bearer)
            .form(&[
                ("csrf", csrf.as_str()),
                ("decision_id", decision_id.as_str()),
                ("reason", "agent"),
            ]);
        if let Some(cookie) = cookie {
            request = request.header(COOKIE, cookie);
        }
        let page = read(request.send().await.unwrap()).await;
        assert_eq!(page.status, 403, "{verb}: {}", page.body);
        assert!(page.body.contains("bearer token is refused here"), "{}", page.body);
    }
    let read_back = po_as_read(&app, &number).await;
    assert_eq!(read_back["status"], "draft");
    assert_eq!(read_back["decision"], Value::Null);
    // Nothing but the denials' audit items was written.
    let after = app.scan_all().await.len();
    assert_eq!(after - before, 4 + 1, "four denials and the agent's read back");
    let counts = audit_counts(&app).await;
    assert_eq!(counts.get(&("review.approve".into(), "denied".into())), Some(&3));
    assert_eq!(counts.get(&("review.reject".into(), "denied".into())), Some(&1));
    assert_eq!(counts.get(&("review.approve".into(), "ok".into())), None);
}

#[tokio::test]
async fn no_tool_list_or_mcp_tools_list_ever_shows_an_approval() {
    let app = spawn_app().await;
    let all_scopes = "purchasing:read purchasing:draft purchasing:approve inventory:read sales:read sales:draft \
                      sales:approve finance:read";
    let everyone = token_for(
        &TokenSpec {
            scope: all_scopes.into(),
            ..demo_spec("approver-sby").unwrap()
        },
        &app.server.url(),
        600,
    )
    .unwrap();
    let mut tokens: Vec<String> = draftline_erp::demo::USERS.iter().map(|u| app.token(u.sub)).collect();
    tokens.push(everyone);
    let refuses_approval = |listing: &Value, what: &str| {
        let text = listing.to_string();
        for word in ["\"review.", "_approve", "_reject", "approve_", "reject_", ":approve"] {
            assert!(!text.contains(word), "{what} shows {word}");
        }
    };
    for token in &tokens {
        for format in ["ai-sdk", "mcp", "openai", "openapi"] {
            let listing: Value = app
                .http
                .get(app.url(&format!("/api/tools?format={format}")))
                .bearer_auth(token)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            refuses_approval(&listing, format);
        }
        for version in ["2025-11-25", "2026-07-28"] {
            let listing: Value = app
                .http
                .post(app.url("/api/mcp"))
                .bearer_auth(token)
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", version)
                .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": version}}}))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            assert!(
                listing["result"]["tools"].as_array().is_some_and(|t| !t.is_empty()) || listing.get("error").is_some(),
                "{listing}"
            );
            refuses_approval(&listing, "tools/list");
        }
    }
    // Every registered tool is read or draft, and none takes an approve scope.
    for definition in app.server.app.registry().all() {
        assert!(!definition.scope.ends_with(":approve"), "{}", definition.name);
        assert!(!definition.name.contains("approve") && !definition.name.contains("reject"));
    }
    let metadata: Value = app
        .http
        .get(app.url("/.well-known/oauth-protected-resource"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    refuses_approval(&metadata, "protected resource metadata");
}

#[tokio::test]
async fn a_form_post_without_the_csrf_token_or_with_another_sessions_token_is_refused() {
    let app = spawn_app().await;
    let draft = agent_po(&app, "buyer-sby", "run-csrf", "csrf-1", po_input("csrf-1")).await;
    let number = draft["po_number"].as_str().unwrap().to_owned();
    let mine = Reviewer::sign_in(&app.server.url(), "approver-sby").await;
    let theirs = Reviewer::sign_in(&app.server.url(), "approver-sby").await;
    let page = theirs.get(&format!("/review/documents/{number}")).await;
    let their_csrf = page.field_after("/approve", "csrf");
    let decision_id = page.field_after("/approve", "decision_id");
    let form = format!("/review/documents/{number}/approve");
    for (case, fields) in [
        ("no token", vec![("decision_id", decision_id.as_str())]),
        (
            "another session's token",
            vec![("csrf", their_csrf.as_str()), ("decision_id", decision_id.as_str())],
        ),
        (
            "a made-up token",
            vec![
                ("csrf", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
                ("decision_id", decision_id.as_str()),
            ],
        ),
    ] {
        let page = mine.post(&form, &fields).await;
        assert_eq!(page.status, 403, "{case}: {}", page.body);
        assert!(page.body.contains("does not belong to your session"), "{case}");
    }
    // Rejecting the same way is refused too, and signing out needs it as well.
    let page = mine
        .post(
            &format!("/review/documents/{number}/reject"),
            &[
                ("csrf", &their_csrf),
                ("decision_id", &decision_id),
                ("reason", "forged"),
            ],
        )
        .await;
    assert_eq!(page.status, 403);
    assert_eq!(mine.post("/review/signout", &[("csrf", &their_csrf)]).await.status, 403);
    assert_eq!(po_as_read(&app, &number).await["status"], "draft");
    let counts = audit_counts(&app).await;
    assert_eq!(counts.get(&("review.approve".into(), "denied".into())), Some(&3));
    assert_eq!(counts.get(&("review.approve".into(), "ok".into())), None);
    // The token of its own session works.
    let page = theirs
        .post(&form, &[("csrf", &their_csrf), ("decision_id", &decision_id)])
        .await;
    assert_eq!(page.status, 303, "{}", page.body);
    assert_eq!(po_as_read(&app, &number).await["status"], "approved");
}

#[tokio::test]
async fn the_same_decision_posted_twice_even_concurrently_is_one_decision_and_one_state_change() {
    let app = spawn_app().await;
    let draft = agent_po(&app, "buyer-sby", "run-double", "double-1", po_input("double-1")).await;
    let number = draft["po_number"].as_str().unwrap().to_owned();
    let person = Reviewer::sign_in(&app.server.url(), "approver-sby").await;
    let page = person.get(&format!("/review/documents/{number}")).await;
    let csrf = page.field_after("/approve", "csrf");
    let decision_id = page.field_after("/approve", "decision_id");
    let form = format!("/review/documents/{number}/approve");
    let fields = [
        ("csrf", csrf.as_str()),
        ("decision_id", decision_id.as_str()),
        ("reason", "ok"),
    ];
    let clicks: Vec<Page> = futures::future::join_all((0..4).map(|_| person.post(&form, &fields))).await;
    let mut locations: Vec<&str> = clicks.iter().map(Page::location).collect();
    locations.sort_unstable();
    assert!(clicks.iter().all(|p| p.status == 303), "{clicks:?}");
    assert_eq!(
        locations,
        [
            format!("/review/documents/{number}?decided=already").as_str(),
            &format!("/review/documents/{number}?decided=already"),
            &format!("/review/documents/{number}?decided=already"),
            &format!("/review/documents/{number}?decided=approved"),
        ],
        "one click decided, the others found it done"
    );
    // And once more, after the fact.
    assert!(
        person
            .post(&form, &fields)
            .await
            .location()
            .ends_with("decided=already")
    );
    let counts = audit_counts(&app).await;
    assert_eq!(counts.get(&("review.approve".into(), "ok".into())), Some(&1));
    assert_eq!(counts.get(&("review.approve".into(), "replayed".into())), Some(&4));
    let read_back = po_as_read(&app, &number).await;
    assert_eq!(read_back["status"], "approved");
    assert_eq!(read_back["decision"]["decided_by"], "approver-sby");
    assert_eq!(read_back["decision"]["reason"], "ok");
    // A second decision (another form) is refused: the first one stands.
    let decided = person.get(&format!("/review/documents/{number}")).await;
    assert!(!decided.body.contains("/reject\""), "a decided draft offers no forms");
    assert!(
        decided.body.contains("Approved</strong> by approver-sby"),
        "{}",
        decided.body
    );
    let stale = person
        .post(
            &format!("/review/documents/{number}/reject"),
            &[
                ("csrf", &csrf),
                ("decision_id", "01JSECONDFORM"),
                ("reason", "changed my mind"),
            ],
        )
        .await;
    assert_eq!(stale.status, 400, "{}", stale.body);
    assert!(
        stale.body.contains("was already approved by approver-sby"),
        "{}",
        stale.body
    );
    assert_eq!(po_as_read(&app, &number).await["status"], "approved");
}

#[tokio::test]
async fn the_demo_queue_has_agent_drafts_in_every_status_and_the_agent_reads_the_decisions_back() {
    let app = spawn_app().await;
    let person = Reviewer::sign_in(&app.server.url(), "approver-sby").await;
    let queue = person.get("/review").await;
    assert_eq!(queue.status, 200, "{}", queue.body);
    for (number, status) in [
        ("PO-SBY-000001", "Waiting for review"),
        ("PO-SBY-000002", "Approved"),
        ("PO-SBY-000003", "Rejected"),
    ] {
        let at = queue
            .body
            .find(&format!("<strong>{number}</strong>"))
            .unwrap_or_else(|| panic!("{number}"));
        let row = &queue.body[at..at + queue.body[at..].find("</tr>").unwrap()];
        assert!(row.contains("Drafted by agent"), "{row}");
        assert!(row.contains(status), "{number}: {row}");
        assert!(
            row.contains("gpt-5.1") && row.contains("reorder-agent@3"),
            "model and prompt: {row}"
        );
        assert!(row.contains("buyer-sby"), "{row}");
        assert!(row.contains("/review/runs/run-sby-reorder-2026-11-2"), "{row}");
    }
    // Newest first, and the filters narrow it.
    let first = |n: &str| queue.body.find(&format!("<strong>{n}</strong>")).unwrap();
    assert!(first("PO-SBY-000001") < first("PO-SBY-000002") && first("PO-SBY-000002") < first("PO-SBY-000003"));
    let rejected = person.get("/review?status=rejected").await;
    assert!(rejected.body.contains("PO-SBY-000003") && !rejected.body.contains("PO-SBY-000001"));
    assert_eq!(person.get("/review?status=lost").await.status, 400);
    assert_eq!(person.get("/review?kind=invoice").await.status, 400);
    assert_eq!(
        person.get("/review?kind=quote").await.status,
        403,
        "approver-sby sees no quotes"
    );
    // The run of the rejected draft: the lookup, the draft, and in the
    // document's history the person's decision.
    let run = person.get("/review/runs/run-sby-reorder-2026-11-24").await;
    assert_eq!(run.status, 200, "{}", run.body);
    assert_eq!(run.rows(), 2);
    assert!(run.body.contains("inventory_list_below_reorder") && run.body.contains("purchasing_create_po_draft"));
    let document = person.get("/review/documents/PO-SBY-000003").await;
    assert!(document.body.contains("Rejected (review page)"), "{}", document.body);
    assert!(
        document.body.contains("CV Baut Jaya raised the bolt price"),
        "{}",
        document.body
    );
    assert!(document.body.contains("price list V-00415, BLT-0107 per BOX"));
    assert!(
        document.body.contains("1,100,000.00&nbsp;IDR"),
        "amounts with separators and currency"
    );
    // The agent learns why: the reason, through the read tool.
    let read_back = po_as_read(&app, "PO-SBY-000003").await;
    assert_eq!(read_back["status"], "rejected");
    assert_eq!(read_back["decision"]["verdict"], "rejected");
    assert!(read_back["decision"]["reason"].as_str().unwrap().contains("new quote"));
    assert!(
        read_back["next_step"]
            .as_str()
            .unwrap()
            .contains("rejected by approver-sby")
    );
    assert_eq!(
        read_back["review_url"],
        format!("{}/review/documents/PO-SBY-000003", app.server.url())
    );
    // Bandung's approver sees Bandung's quotes, in every status.
    let bdg = Reviewer::sign_in(&app.server.url(), "approver-bdg").await;
    let quotes = bdg.get("/review").await;
    for number in ["QT-BDG-000001", "QT-BDG-000002", "QT-BDG-000003"] {
        assert!(quotes.body.contains(number), "{number}");
    }
    assert!(quotes.body.contains("claude-sonnet-4.5"));
    assert!(!quotes.body.contains("PO-SBY"));
}

on_both_backends! {
    #[tokio::test]
    async fn a_draft_tool_answers_with_the_review_url_of_its_document(backend) {
        let app = spawn_app_on(backend).await;
        // Numbered after the demo's agent drafts, on either backend.
        let number = first_sby_po();
        let draft = agent_po(&app, "buyer-sby", "run-url", "url-1", po_input("url-1")).await;
        let url = format!("{}/review/documents/{number}", app.server.url());
        assert_eq!(draft["po_number"], number.as_str());
        assert_eq!(draft["review_url"], url);
        // A replay answers the same, and the page is where a person finds it.
        let replay = app
            .call(
                "buyer-sby",
                "purchasing_create_po_draft",
                &po_input("url-1"),
                &[("x-agent-run-id", "run-url".to_owned())],
            )
            .await;
        assert_eq!(replay.body["replayed"], true);
        assert_eq!(replay.body["data"]["review_url"], url);
        let person = Reviewer::sign_in(&app.server.url(), "approver-sby").await;
        let page = person.get(url.strip_prefix(&app.server.url()).unwrap()).await;
        assert_eq!(page.status, 200);
        match backend {
            Backend::Builtin => assert!(page.body.contains(&format!("Approve {number}"))),
            Backend::Tryton => assert!(
                page.body.contains(&format!("{number} is approved or rejected in Tryton")),
                "{}",
                page.body
            ),
        }
        // Quotes too.
        let quote = app
            .call(
                "sales-bdg",
                "sales_create_quote_draft",
                &json!({"customer_code": "C-BDG-001", "valid_until": "2026-12-31", "client_ref": "q-url", "note": null,
                        "lines": [{"item_code": "BRG-0042", "qty": 2, "uom": "BOX", "tax_code": "VAT11"}]}),
                &[("x-agent-run-id", "run-url-q".to_owned())],
            )
            .await;
        assert_eq!(quote.status, 201, "{:?}", quote.body);
        assert_eq!(quote.body["data"]["quote_number"], first_bdg_quote().as_str());
        assert_eq!(
            quote.body["data"]["review_url"],
            format!("{}/review/documents/{}", app.server.url(), first_bdg_quote())
        );
    }
}

#[tokio::test]
async fn quotes_are_approved_and_rejected_by_a_sales_approver_and_the_agent_reads_it_back() {
    let app = spawn_app().await;
    let quote = |client_ref: &str, item: &str| {
        json!({"customer_code": "C-BDG-001", "valid_until": "2026-12-31", "client_ref": client_ref, "note": null,
               "lines": [{"item_code": item, "qty": 1, "uom": "BOX", "tax_code": "VAT11"}]})
    };
    let mut numbers = Vec::new();
    for (client_ref, item) in [("q-1", "BRG-0042"), ("q-2", "GLV-0015")] {
        let reply = app
            .call(
                "sales-bdg",
                "sales_create_quote_draft",
                &quote(client_ref, item),
                &[("x-agent-run-id", "run-q".into())],
            )
            .await;
        assert_eq!(reply.status, 201, "{:?}", reply.body);
        numbers.push(reply.body["data"]["quote_number"].as_str().unwrap().to_owned());
    }
    let person = Reviewer::sign_in(&app.server.url(), "approver-bdg").await;
    // A purchasing approver cannot decide on quotes, even of their own branch.
    let buyer = Reviewer::sign_in(&app.server.url(), "sales-bdg").await;
    let page = buyer.get(&format!("/review/documents/{}", numbers[0])).await;
    assert!(page.body.contains("needs the scope sales:approve"), "{}", page.body);
    assert!(!page.body.contains("/approve\""));
    assert_eq!(person.decide(&numbers[0], "approve", "").await.status, 303);
    let no_reason = person.decide(&numbers[1], "reject", " ").await;
    assert_eq!(no_reason.status, 400, "a rejection needs a reason");
    assert!(no_reason.body.contains("needs a reason"), "{}", no_reason.body);
    let rejected = person
        .decide(&numbers[1], "reject", "Customer asked for 2 boxes, not 1.")
        .await;
    assert_eq!(rejected.status, 303, "{}", rejected.body);
    let read = |number: String| {
        let app = &app;
        async move {
            app.call("sales-bdg", "sales_get_quote", &json!({"quote_number": number}), &[])
                .await
                .body["data"]
                .clone()
        }
    };
    let approved = read(numbers[0].clone()).await;
    assert_eq!(approved["status"], "approved");
    assert_eq!(approved["decision"]["decided_by"], "approver-bdg");
    let rejected = read(numbers[1].clone()).await;
    assert_eq!(rejected["status"], "rejected");
    assert_eq!(rejected["decision"]["reason"], "Customer asked for 2 boxes, not 1.");
    // The queue says so, and the decision is in the document's history.
    let queue = person.get("/review?status=rejected").await;
    assert!(queue.body.contains(&numbers[1]) && !queue.body.contains(&numbers[0]));
    let page = person.get(&format!("/review/documents/{}", numbers[1])).await;
    assert!(page.body.contains("Rejected (review page)"));
    assert!(page.body.contains("Customer asked for 2 boxes"));
}

#[tokio::test]
async fn the_person_an_agent_drafted_for_cannot_approve_it_unless_the_setting_allows_it() {
    let app = spawn_app().await;
    // An agent acting for the approver themselves.
    let approver_as_drafter = TokenSpec {
        scope: "purchasing:read purchasing:draft".into(),
        ..demo_spec("approver-sby").unwrap()
    };
    let token = token_for(&approver_as_drafter, &app.server.url(), 600).unwrap();
    let own = app
        .post_raw(
            "purchasing_create_po_draft",
            &[
                ("authorization", format!("Bearer {token}")),
                ("x-agent-run-id", "run-own".into()),
            ],
            po_input("own-1").to_string(),
        )
        .await;
    assert_eq!(own.status, 201, "{:?}", own.body);
    let number = own.body["data"]["po_number"].as_str().unwrap().to_owned();
    let person = Reviewer::sign_in(&app.server.url(), "approver-sby").await;
    let page = person.get(&format!("/review/documents/{number}")).await;
    assert!(page.body.contains("drafted on your behalf"), "{}", page.body);
    assert!(!page.body.contains("/approve\""), "no approve form");
    // Posting it anyway is refused, and nothing changes.
    let csrf = page.field_after("/reject", "csrf");
    let refused = person
        .post(
            &format!("/review/documents/{number}/approve"),
            &[("csrf", csrf.as_str()), ("decision_id", "01JOWNDRAFT")],
        )
        .await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(refused.body.contains("four eyes"), "{}", refused.body);
    assert_eq!(po_as_read(&app, &number).await["status"], "draft");

    // A small team turns it off.
    let relaxed = CustomServer::start(|review| review.allow_self_approval = true).await;
    let token = token_for(&approver_as_drafter, &relaxed.base, 600).unwrap();
    let own = relaxed.draft(&token, po_input("own-2")).await;
    let number = own["po_number"].as_str().unwrap().to_owned();
    let person = Reviewer::sign_in(&relaxed.base, "approver-sby").await;
    let decided = person.decide(&number, "approve", "small team").await;
    assert_eq!(decided.status, 303, "{}", decided.body);
    assert!(decided.location().ends_with("decided=approved"));
}

/// `draftline serve`'s pieces, with review settings a test changes (a
/// setting people cannot pass to the test server from outside).
pub struct CustomServer {
    pub base: String,
    /// The app it serves.
    #[allow(dead_code)]
    pub app: Arc<App>,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
    _engine: draftline_infra::EmbeddedDynamo,
}

impl Drop for CustomServer {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl CustomServer {
    pub async fn start(tweak: impl FnOnce(&mut ReviewSettings)) -> Self {
        let engine = draftline_infra::EmbeddedDynamo::start(None).await.unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let config = Config::local(base.clone(), engine.endpoint());
        let mut review = ReviewSettings::local();
        tweak(&mut review);
        let db = Db::connect(&config.table, config.dynamodb_endpoint.as_deref()).await;
        draftline_infra::create_table(db.client(), db.table()).await.unwrap();
        draftline_erp_builtin::seed::seed_demo(&db).await.unwrap();
        let backend = ErpBackend::connect(&ErpSettings::Builtin, &db).unwrap();
        let pages = ReviewPages::new(&config, &review, backend.erp()).unwrap();
        let clock = Arc::new(ManualClock::new(test_now()));
        let app = Arc::new(App::with_parts(backend.catalogue(), config, db, clock).with_pages(Arc::new(pages)));
        let server = tokio::spawn(local::serve(listener, app.clone()));
        Self {
            base,
            app,
            server,
            _engine: engine,
        }
    }

    /// A PO draft with `token`; its data.
    pub async fn draft(&self, token: &str, input: Value) -> Value {
        let reply = reqwest::Client::new()
            .post(format!("{}/api/purchasing_create_po_draft", self.base))
            .bearer_auth(token)
            .header("x-agent-run-id", "run-custom")
            .json(&input)
            .send()
            .await
            .unwrap();
        assert_eq!(reply.status(), 201);
        reply.json::<Value>().await.unwrap()["data"].clone()
    }
}

#[tokio::test]
async fn a_reviewer_sees_no_document_run_or_count_of_another_branch_or_tenant() {
    let app = spawn_app().await;
    // Another tenant with the same demo data, copied before anything happens.
    app.copy_tenant("demo", "other").await;
    // One run id used by agents of three branches.
    let sby = agent_po(&app, "buyer-sby", "run-shared", "iso-sby", po_input("iso-sby")).await;
    let jkt = agent_po(
        &app,
        "buyer-jkt",
        "run-shared",
        "iso-jkt",
        po_of("iso-jkt", "V-00612", "CBL-0220", 3, "ROLL"),
    )
    .await;
    let quote = app
        .call(
            "sales-bdg",
            "sales_create_quote_draft",
            &json!({"customer_code": "C-BDG-001", "valid_until": "2026-12-31", "client_ref": "iso-bdg", "note": null,
                    "lines": [{"item_code": "BRG-0042", "qty": 2, "uom": "BOX", "tax_code": "VAT11"}]}),
            &[("x-agent-run-id", "run-shared".to_owned())],
        )
        .await;
    assert_eq!(quote.status, 201, "{:?}", quote.body);
    let bdg = quote.body["data"].clone();
    // And a run only Jakarta's agent used.
    agent_po(
        &app,
        "buyer-jkt",
        "run-only-jkt",
        "iso-jkt-2",
        po_of("iso-jkt-2", "V-00231", "BRG-0042", 2, "BOX"),
    )
    .await;
    let numbers = [
        ("SBY-01", sby["po_number"].as_str().unwrap().to_owned()),
        ("JKT-01", jkt["po_number"].as_str().unwrap().to_owned()),
        ("BDG-01", bdg["quote_number"].as_str().unwrap().to_owned()),
    ];
    let missing_text = |page: &Page, number: &str| {
        let at = page.body.find("<p class=\"notice notice-error\"").unwrap();
        let end = at + page.body[at..].find("</p>").unwrap();
        page.body[at..end].replace(number, "N")
    };
    let keys = SessionKeys::of(app.server.app.config(), &app.server.review).unwrap();
    let person = |sub: &str, scope: &str| {
        let spec = demo_spec(sub).unwrap();
        draftline_contract::identity::Caller::from_verified(
            draftline_contract::identity::TenantId::parse("demo").unwrap(),
            draftline_contract::identity::BranchId::parse(&spec.branch).unwrap(),
            draftline_contract::identity::BranchCode::parse(&spec.branch_code).unwrap(),
            draftline_contract::identity::UserId::parse(&format!("reviewer-{sub}")).unwrap(),
            Vec::new(),
            draftline_contract::identity::Scopes::from_claim(scope),
        )
    };
    let all = "purchasing:read purchasing:approve sales:read sales:approve";
    let reviewers = [
        (
            "SBY-01",
            Reviewer::with_session(
                &app.server.url(),
                &keys,
                &Session::start(person("buyer-sby", all), SignedInWith::Demo, test_now()),
            ),
        ),
        (
            "JKT-01",
            Reviewer::with_session(
                &app.server.url(),
                &keys,
                &Session::start(person("buyer-jkt", all), SignedInWith::Demo, test_now()),
            ),
        ),
        (
            "BDG-01",
            Reviewer::with_session(
                &app.server.url(),
                &keys,
                &Session::start(person("sales-bdg", all), SignedInWith::Demo, test_now()),
            ),
        ),
    ];
    for (branch, reviewer) in &reviewers {
        let queue = reviewer.get("/review").await;
        assert_eq!(queue.status, 200, "{branch}");
        let run = reviewer.get("/review/runs/run-shared").await;
        assert_eq!(run.status, 200, "{branch}: {}", run.body);
        assert_eq!(
            run.rows(),
            1,
            "{branch}: only its own call of the shared run is listed or counted"
        );
        let absent = reviewer.get("/review/documents/PO-SBY-999999").await;
        assert_eq!(absent.status, 404);
        for (owner, number) in &numbers {
            let document = reviewer.get(&format!("/review/documents/{number}")).await;
            if owner == branch {
                assert!(queue.body.contains(number.as_str()), "{branch} sees its {number}");
                assert!(
                    run.body.contains(number.as_str()),
                    "{branch}: its run row links {number}"
                );
                assert_eq!(document.status, 200, "{branch}: {number}");
            } else {
                assert!(
                    !queue.body.contains(number.as_str()),
                    "{branch} sees {number} in the queue"
                );
                assert!(!run.body.contains(number.as_str()), "{branch} sees {number} in the run");
                assert_eq!(document.status, 404, "{branch}: {number}");
                assert_eq!(missing_text(&document, number), missing_text(&absent, "PO-SBY-999999"));
                // Nor can it decide on it.
                let csrf = queue.field_after("/review/signout", "csrf");
                let decided = reviewer
                    .post(
                        &format!("/review/documents/{number}/reject"),
                        &[("csrf", &csrf), ("decision_id", "01JISO"), ("reason", "not mine")],
                    )
                    .await;
                assert_eq!(decided.status, 404, "{branch} decides on {number}: {}", decided.body);
            }
        }
        let only_jkt = reviewer.get("/review/runs/run-only-jkt").await;
        let nowhere = reviewer.get("/review/runs/run-that-never-was").await;
        if *branch == "JKT-01" {
            assert_eq!(only_jkt.status, 200);
        } else {
            assert_eq!(only_jkt.status, 404, "{branch}");
            assert_eq!(
                missing_text(&only_jkt, "run-only-jkt"),
                missing_text(&nowhere, "run-that-never-was"),
                "another branch's run reads like a missing one"
            );
        }
    }
    // The other tenant's reviewer sees none of demo's drafts or runs.
    let other = {
        let spec = demo_spec("approver-sby").unwrap();
        draftline_contract::identity::Caller::from_verified(
            draftline_contract::identity::TenantId::parse("other").unwrap(),
            draftline_contract::identity::BranchId::parse(&spec.branch).unwrap(),
            draftline_contract::identity::BranchCode::parse(&spec.branch_code).unwrap(),
            draftline_contract::identity::UserId::parse("approver-other").unwrap(),
            Vec::new(),
            draftline_contract::identity::Scopes::from_claim(all),
        )
    };
    let reviewer = Reviewer::with_session(
        &app.server.url(),
        &keys,
        &Session::start(other, SignedInWith::Demo, test_now()),
    );
    let queue = reviewer.get("/review").await;
    assert_eq!(queue.status, 200);
    assert!(queue.body.contains("PO-SBY-000001"), "its own copy of the demo drafts");
    assert!(
        !queue.body.contains(numbers[0].1.as_str()),
        "demo's new draft is not other's"
    );
    assert_eq!(
        reviewer.get("/review/runs/run-shared").await.status,
        404,
        "demo's audit is not other's"
    );
    assert_eq!(
        reviewer
            .get(&format!("/review/documents/{}", numbers[0].1))
            .await
            .status,
        404
    );
}

#[tokio::test]
async fn a_run_of_200_calls_renders_in_bounded_pages_and_markup_in_its_arguments_is_text() {
    let app = spawn_app().await;
    let run = "run-two-hundred";
    let headers = |i: usize| {
        vec![
            ("x-agent-run-id", run.to_owned()),
            ("x-tool-call-id", format!("call-{i:03}")),
            ("x-agent-model", "<b>model</b>".to_owned()),
        ]
    };
    // One draft whose note is markup, then 199 reads with their own markup.
    let mut draft = po_input("markup-1");
    draft["note"] = json!("<script>alert('vendor note')</script>");
    let created = app
        .call("buyer-sby", "purchasing_create_po_draft", &draft, &headers(0))
        .await;
    assert_eq!(created.status, 201, "{:?}", created.body);
    for i in 1..200 {
        // One after the other, each a millisecond later: the run's order is defined.
        app.clock.advance(chrono::Duration::milliseconds(1));
        let input = json!({"item_code": format!("<img src=x onerror=alert({i})>")});
        app.call("buyer-sby", "inventory_get_stock", &input, &headers(i)).await;
    }
    let person = Reviewer::sign_in(&app.server.url(), "approver-sby").await;
    let mut path = format!("/review/runs/{run}");
    let mut pages = Vec::new();
    loop {
        let page = person.get(&path).await;
        assert_eq!(page.status, 200, "{path}: {}", page.body);
        assert!(page.body.len() < PAGE_SIZE_LIMIT, "{path}: {} bytes", page.body.len());
        assert!(page.rows() <= 50, "{path}: {} rows", page.rows());
        for forbidden in ["<script>alert", "<img src=x", "<b>model</b>"] {
            assert!(
                !page.body.contains(forbidden),
                "{path}: {forbidden} reached the page as markup"
            );
        }
        let next = page.next_link();
        pages.push(page);
        match next {
            Some(next) => path = next,
            None => break,
        }
        assert!(pages.len() < 10, "too many pages");
    }
    assert_eq!(pages.iter().map(Page::rows).sum::<usize>(), 200, "every call once");
    assert!(pages.len() >= 4, "200 calls need at least four pages of 50");
    let all: String = pages.iter().map(|p| p.body.as_str()).collect();
    assert!(
        all.contains("&lt;script&gt;alert('vendor note')&lt;/script&gt;"),
        "the note is shown as text"
    );
    assert!(all.contains("&lt;img src=x onerror=alert(7)&gt;"));
    assert!(all.contains("&lt;b&gt;model&lt;/b&gt;"));
    // In order: call-000 first, call-199 last, each exactly once.
    let positions: Vec<usize> = (0..200)
        .map(|i| {
            let id = format!("<code>call-{i:03}</code>");
            assert_eq!(all.matches(&id).count(), 1, "{id}");
            all.find(&id).unwrap()
        })
        .collect();
    assert!(
        positions.windows(2).all(|w| w[0] < w[1]),
        "calls are in the order they were made"
    );
    // The document page shows the note as text too.
    let document = person
        .get(&format!(
            "/review/documents/{}",
            created.body["data"]["po_number"].as_str().unwrap()
        ))
        .await;
    assert!(
        document
            .body
            .contains("&lt;script&gt;alert('vendor note')&lt;/script&gt;")
    );
    assert!(!document.body.contains("<script>"));
}

#[tokio::test]
async fn a_deployed_review_function_never_offers_the_demo_sign_in() {
    let app = spawn_app().await;
    let binary = env!("CARGO_BIN_EXE_review");
    // Without a way to sign people in, it does not start.
    let mut refused = FunctionProcess::start(binary, &function_env(&app));
    let status = refused.wait_exit(crate::function_process::CHILD_TIMEOUT).await;
    assert_eq!(status.code(), Some(1), "{}", refused.output());
    assert!(
        refused.stderr().contains("DRAFTLINE_OIDC_ISSUER"),
        "{}",
        refused.output()
    );
    // With OpenID Connect configured it starts, and offers only that.
    let mut env = function_env(&app);
    env.extend([
        ("DRAFTLINE_OIDC_ISSUER".to_owned(), "http://127.0.0.1:9".to_owned()),
        ("DRAFTLINE_OIDC_CLIENT_ID".to_owned(), "draftline-review".to_owned()),
        ("DRAFTLINE_SESSION_SECRET".to_owned(), "s".repeat(40)),
        // No variable turns the demo sign-in on.
        ("DRAFTLINE_DEMO_SIGN_IN".to_owned(), "true".to_owned()),
    ]);
    let function = crate::vercel::VercelFunction::start_with_env(binary, &env).await;
    let http = no_redirects();
    let signin = read(http.get(function.url("/review/signin")).send().await.unwrap()).await;
    assert_eq!(signin.status, 200);
    assert!(
        !signin.body.contains("Demo people") && !signin.body.contains("approver-sby"),
        "{}",
        signin.body
    );
    assert!(signin.body.contains("/review/signin/oidc"));
    let demo = read(
        http.post(function.url("/review/signin/demo"))
            .form(&[("user", "approver-sby"), ("next", "/review")])
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(demo.status, 404, "{}", demo.body);
    assert!(demo.headers.get(SET_COOKIE).is_none(), "nobody was signed in");
    let queue = read(http.get(function.url("/review")).send().await.unwrap()).await;
    assert_eq!(queue.status, 303);
    // The identity provider is down: a clear, retryable page, not a crash.
    let oidc = read(http.get(function.url("/review/signin/oidc")).send().await.unwrap()).await;
    assert_eq!(oidc.status, 503, "{}", oidc.body);
    assert!(oidc.body.contains("Sign-in failed"));
    // A deployed session cookie is Secure (the resource is https).
    let deployed = Source::map(env.clone());
    let keys = SessionKeys::of(
        &Config::from_source(&deployed).unwrap(),
        &ReviewSettings::from_source(&deployed).unwrap(),
    )
    .unwrap();
    assert!(keys.secure());
    assert_eq!(keys.session_cookie(), "__Host-draftline_session");
}

#[tokio::test]
async fn on_tryton_an_agent_draft_is_reviewed_here_and_approved_only_in_tryton() {
    let app = spawn_app_on(Backend::Tryton).await;
    let tryton = app.tryton.clone().expect("Tryton's REST API");
    let run = "run-tryton-review";
    let draft = agent_po(&app, "buyer-sby", run, "tryton-review-1", po_input("tryton-review-1")).await;
    let number = draft["po_number"].as_str().unwrap().to_owned();
    let denied = app
        .call(
            "clerk-sby",
            "purchasing_create_po_draft",
            &po_of("tryton-denied", "V-00231", "BRG-0043", 5, "PCS"),
            &[
                ("x-agent-run-id", run.to_owned()),
                ("x-tool-call-id", "tryton-denied-call".to_owned()),
            ],
        )
        .await;
    assert_eq!(denied.status, 403, "{:?}", denied.body);
    let person = Reviewer::sign_in(&app.server.url(), "approver-sby").await;

    // The queue: the draft, badged, with its run.
    let queue = person.get("/review").await;
    assert_eq!(queue.status, 200, "{}", queue.body);
    let at = queue
        .body
        .find(&format!("<strong>{number}</strong>"))
        .unwrap_or_else(|| panic!("{number} is not in the queue:\n{}", queue.body));
    let row = &queue.body[at..at + queue.body[at..].find("</tr>").unwrap()];
    assert!(row.contains("Drafted by agent"), "{row}");
    assert!(row.contains("Waiting for review"), "{row}");
    assert!(row.contains("buyer-sby"), "{row}");
    assert!(row.contains(&format!("/review/runs/{run}")), "{row}");
    assert!(row.contains("gpt-test-1") && row.contains("reorder@test"), "{row}");
    let drafts_only = person.get("/review?status=draft&kind=purchase_order").await;
    assert_eq!(drafts_only.status, 200, "{}", drafts_only.body);
    assert!(drafts_only.body.contains(&number));

    // The run: the draft call and the denied one, in order.
    let run_page = person.get(&format!("/review/runs/{run}")).await;
    assert_eq!(run_page.status, 200, "{}", run_page.body);
    assert_eq!(run_page.rows(), 2, "{}", run_page.body);
    for expected in [
        "tryton-review-1-call",
        "tryton-denied-call",
        "purchasing_create_po_draft",
        &number,
    ] {
        assert!(run_page.body.contains(expected), "{expected}: {}", run_page.body);
    }
    assert!(run_page.body.find("tryton-review-1-call") < run_page.body.find("tryton-denied-call"));

    // The document: its lines, a link into Tryton, no approve or reject form.
    let document = person.get(&format!("/review/documents/{number}")).await;
    assert_eq!(document.status, 200, "{}", document.body);
    for expected in ["BRG-0042", "BRG-0043", "BOX", "PCS", "Drafted by agent", "Tryton"] {
        assert!(document.body.contains(expected), "{expected}: {}", document.body);
    }
    let id = draft["draft_id"].as_str().unwrap_or_default();
    let tryton_id = id.rsplit('_').next().unwrap_or_default();
    let link = format!(
        "tryton://127.0.0.1:{}/{}/model/purchase.purchase/{tryton_id}",
        reqwest::Url::parse(&tryton.settings.url).unwrap().port().unwrap(),
        tryton.settings.database
    );
    assert!(document.body.contains(&link), "{link}: {}", document.body);
    assert!(!document.body.contains("/approve\""), "{}", document.body);
    assert!(!document.body.contains("/reject\""), "{}", document.body);

    // Approving here anyway (a valid session and CSRF token) is refused, says
    // where it happens, and changes nothing.
    let csrf = document.field_after("action=\"/review/signout\"", "csrf");
    for verb in ["approve", "reject"] {
        let page = person
            .post(
                &format!("/review/documents/{number}/{verb}"),
                &[("csrf", &csrf), ("decision_id", "01TRYTON"), ("reason", "looks right")],
            )
            .await;
        assert_eq!(page.status, 400, "{verb}: {}", page.body);
        assert!(
            page.body.contains("approved or rejected in Tryton") && page.body.contains("Nothing was changed"),
            "{verb}: {}",
            page.body
        );
    }
    let in_tryton = tryton
        .search("purchase.purchase", json!([["number", "=", number]]), &["state"])
        .await;
    assert_eq!(in_tryton.len(), 1, "{in_tryton:?}");
    assert_eq!(in_tryton[0]["state"], "draft", "{in_tryton:?}");
    assert_eq!(po_as_read(&app, &number).await["status"], "draft");
    let counts = audit_counts(&app).await;
    assert_eq!(counts.get(&("review.approve".into(), "ok".into())), None, "{counts:?}");
    assert_eq!(counts.get(&("review.reject".into(), "ok".into())), None, "{counts:?}");
}

/// Queue row of `number` on `page`.
fn queue_row<'p>(page: &'p Page, number: &str) -> &'p str {
    let at = page
        .body
        .find(&format!("<strong>{number}</strong>"))
        .unwrap_or_else(|| panic!("{number} is not in the queue:\n{}", page.body));
    &page.body[at..at + page.body[at..].find("</tr>").unwrap()]
}

#[tokio::test]
async fn on_tryton_the_demo_queue_has_the_agents_drafts_in_every_status_as_tryton_tells_them() {
    use draftline_erp::demo;
    let app = spawn_app_on(Backend::Tryton).await;
    let orders = demo::agent_purchase_orders();
    let quotes = demo::agent_quotes();
    let codes = |statuses: Vec<&str>| statuses.into_iter().map(str::to_owned).collect::<Vec<_>>();
    assert_eq!(
        orders
            .iter()
            .map(|(po, _)| po.status.code().to_owned())
            .collect::<Vec<_>>(),
        codes(vec!["draft", "approved", "rejected"])
    );
    // Tryton's workflow decided them: approved is Quote pressed; a rejected
    // order is a cancelled purchase (Tryton has no rejected purchases), a
    // rejected quote a cancelled sale, which reads as rejected.
    let person = Reviewer::sign_in(&app.server.url(), "approver-sby").await;
    let queue = person.get("/review").await;
    assert_eq!(queue.status, 200, "{}", queue.body);
    for ((po, _), status) in orders.iter().zip(["Waiting for review", "Approved", "Cancelled"]) {
        let row = queue_row(&queue, &po.po_number);
        assert!(row.contains("Drafted by agent"), "{row}");
        assert!(row.contains(status), "{}: {row}", po.po_number);
        assert!(row.contains(&po.vendor.code) && row.contains("buyer-sby"), "{row}");
        let run = po.drafted_by_agent_run.as_deref().unwrap();
        assert!(row.contains(&format!("/review/runs/{run}")), "{row}");
        // This server's audit trail never saw these calls: no model or prompt.
        assert!(row.contains("not recorded"), "{row}");
    }
    // Newest first (by the demo's creation instants), and the filters narrow it.
    let first = |n: &str| queue.body.find(&format!("<strong>{n}</strong>")).unwrap();
    assert!(first("PO-SBY-000001") < first("PO-SBY-000002") && first("PO-SBY-000002") < first("PO-SBY-000003"));
    let cancelled = person.get("/review?status=cancelled").await;
    assert!(cancelled.body.contains("PO-SBY-000003") && !cancelled.body.contains("PO-SBY-000001"));
    let rejected = person.get("/review?status=rejected").await;
    assert_eq!(rejected.status, 200, "{}", rejected.body);
    assert!(!rejected.body.contains("PO-SBY-00000"), "{}", rejected.body);

    // The document: its lines, and where it was decided.
    let document = person.get("/review/documents/PO-SBY-000003").await;
    assert_eq!(document.status, 200, "{}", document.body);
    assert!(
        document.body.contains("PO-SBY-000003 is cancelled in Tryton"),
        "{}",
        document.body
    );
    assert!(document.body.contains("model/purchase.purchase/"), "{}", document.body);
    assert!(document.body.contains("price list V-00415, BLT-0107 per BOX"));
    assert!(document.body.contains("1,100,000.00&nbsp;IDR"));

    // The agent reads each back in its Tryton status.
    for ((po, _), status) in orders.iter().zip(["draft", "approved", "cancelled"]) {
        let read = po_as_read(&app, &po.po_number).await;
        assert_eq!(read["status"], status, "{read}");
        assert_eq!(read["created_at"], po.created_at.as_str(), "{read}");
        assert_eq!(read["total"], json!(po.total), "{read}");
    }

    // Bandung's approver: Bandung's quotes, in every status.
    let bdg = Reviewer::sign_in(&app.server.url(), "approver-bdg").await;
    let queue = bdg.get("/review").await;
    assert_eq!(queue.status, 200, "{}", queue.body);
    for ((quote, _), status) in quotes.iter().zip(["Waiting for review", "Approved", "Rejected"]) {
        let row = queue_row(&queue, &quote.quote_number);
        assert!(row.contains(status), "{}: {row}", quote.quote_number);
        assert!(row.contains(&quote.customer.code) && row.contains("sales-bdg"), "{row}");
    }
    assert!(!queue.body.contains("PO-SBY"));
    let rejected = bdg.get("/review/documents/QT-BDG-000003").await;
    assert_eq!(rejected.status, 200, "{}", rejected.body);
    assert!(
        rejected.body.contains("QT-BDG-000003 is rejected in Tryton"),
        "{}",
        rejected.body
    );
    for ((quote, _), status) in quotes.iter().zip(["draft", "approved", "rejected"]) {
        let reply = app
            .call(
                "sales-bdg",
                "sales_get_quote",
                &json!({"quote_number": quote.quote_number}),
                &[],
            )
            .await;
        assert_eq!(reply.status, 200, "{:?}", reply.body);
        assert_eq!(reply.body["data"]["status"], status, "{:?}", reply.body);
        assert_eq!(reply.body["data"]["total"], json!(quote.total), "{:?}", reply.body);
    }

    // The next agent draft is numbered after them, as on the built-in backend.
    let draft = agent_po(
        &app,
        "buyer-sby",
        "run-after-demo",
        "after-demo",
        po_input("after-demo"),
    )
    .await;
    assert_eq!(draft["po_number"], first_sby_po().as_str());
    let queue = person.get("/review").await;
    assert!(first_of(&queue, &first_sby_po()) < first_of(&queue, "PO-SBY-000001"));
}

fn first_of(page: &Page, number: &str) -> usize {
    page.body.find(&format!("<strong>{number}</strong>")).unwrap()
}

#[tokio::test]
async fn a_person_allowed_orders_and_quotes_filters_the_queue_by_kind() {
    let app = spawn_app().await;
    let keys = SessionKeys::of(app.server.app.config(), &app.server.review).unwrap();
    let spec = demo_spec("approver-bdg").unwrap();
    let both = draftline_contract::identity::Caller::from_verified(
        draftline_contract::identity::TenantId::parse("demo").unwrap(),
        draftline_contract::identity::BranchId::parse(&spec.branch).unwrap(),
        draftline_contract::identity::BranchCode::parse(&spec.branch_code).unwrap(),
        draftline_contract::identity::UserId::parse("approver-bdg-both").unwrap(),
        Vec::new(),
        draftline_contract::identity::Scopes::from_claim("purchasing:read purchasing:approve sales:read sales:approve"),
    );
    let person = Reviewer::with_session(
        &app.server.url(),
        &keys,
        &Session::start(both, SignedInWith::Demo, test_now()),
    );
    let queue = person.get("/review").await;
    assert_eq!(queue.status, 200, "{}", queue.body);
    for option in [
        "<select name=\"kind\">",
        "<option value=\"\">Orders and quotes</option>",
        "<option value=\"purchase_order\">Purchase orders</option>",
        "<option value=\"quote\">Quotes</option>",
    ] {
        assert!(queue.body.contains(option), "{option}: {}", queue.body);
    }
    assert!(queue.body.contains("QT-BDG-000001"));
    let quotes = person.get("/review?kind=quote").await;
    assert_eq!(quotes.status, 200, "{}", quotes.body);
    assert!(quotes.body.contains("<option value=\"quote\" selected>Quotes</option>"));
    assert!(quotes.body.contains("QT-BDG-000001"));
    let orders = person.get("/review?kind=purchase_order").await;
    assert_eq!(orders.status, 200, "{}", orders.body);
    assert!(!orders.body.contains("QT-BDG-"), "{}", orders.body);
    // A person allowed one kind gets no kind filter: there is nothing to choose.
    let sby = Reviewer::sign_in(&app.server.url(), "approver-sby").await;
    assert!(!sby.get("/review").await.body.contains("<select name=\"kind\">"));
    // Keyboard users see where they are.
    let css = app
        .http
        .get(app.url("/review/assets/review.css"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for rule in [
        "a:focus-visible",
        "button:focus-visible",
        "select:focus-visible",
        "@media (max-width",
    ] {
        assert!(css.contains(rule), "{rule}");
    }
}
