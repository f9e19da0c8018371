//! Tryton's own screen in a real browser: `draftline serve --erp tryton`
//! (started in-process, as `LocalErp::LocalTryton`) with the trytond it
//! starts serving Tryton's web client (sao, from npm) under `[web] root`,
//! headless Chromium driven over WebDriver by `fantoccini`, no mocks.
//!
//! An agent drafts a purchase order through `purchasing_create_po_draft`;
//! then, in sao:
//! 1. signed in as `buyer-sby`, the person the agent acted for, the draft is
//!    in the purchase list under its "Drafted by agent" tab;
//! 2. its form shows the badge, who it was drafted for and the run as a
//!    link, and the link opens draftline's run page of that run;
//! 3. pressing Quote as `buyer-sby` is refused by Tryton (four eyes), and
//!    so is the same button over Tryton's JSON-RPC with that user's own
//!    password; signed in as `approver-sby`, Quote moves it to quotation;
//! 4. draftline's queue then shows it approved, and its document page who
//!    decided in Tryton and the link into the web client.
//!
//! Screenshots of each step are written under
//! `$CARGO_TARGET_TMPDIR/tryton-screenshots/`.
//!
//! Ignored by a plain `cargo test` (it needs Chromium and npm);
//! `scripts/test` runs it after `scripts/browser.sh`:
//! `cargo test --test api tryton_web -- --ignored`.

use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use draftline_cli::{LocalErp, LocalOptions};
use fantoccini::{Client, Locator};
use serde_json::{Value, json};

use crate::chromium::{Driver, page_text, wait_for_text};
use crate::helpers::{TestApp, first_sby_po, spawn_app_on_erp};

/// Where this test's screenshots go, under `$CARGO_TARGET_TMPDIR`.
const SCREENSHOTS: &str = "tryton-screenshots";

async fn screenshot(client: &Client, name: &str) {
    crate::chromium::screenshot(client, SCREENSHOTS, name).await;
}
use crate::review::{agent_po, po_of};

/// Waits for a displayed element matching `xpath`.
async fn wait_for(client: &Client, xpath: &str) -> fantoccini::elements::Element {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(found) = client.find_all(Locator::XPath(xpath)).await {
            for element in found {
                if element.is_displayed().await.unwrap_or(false) {
                    return element;
                }
            }
        }
        assert!(
            Instant::now() < deadline,
            "{xpath} never showed; the page says:\n{}",
            page_text(client).await
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The text of the displayed element matching `xpath` once it contains
/// `needle` (sao redraws lists and forms: an element found may be gone
/// when read, so it is looked up again).
async fn text_of(client: &Client, xpath: &str, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(found) = client.find_all(Locator::XPath(xpath)).await {
            for element in found {
                if element.is_displayed().await.unwrap_or(false)
                    && let Ok(text) = element.text().await
                    && text.contains(needle)
                {
                    return text;
                }
            }
        }
        assert!(
            Instant::now() < deadline,
            "{xpath} with {needle:?} never showed; the page says:\n{}",
            page_text(client).await
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The values of the page's displayed input fields (sao shows a record's
/// values in inputs, which are not the page's text).
async fn shown_values(client: &Client) -> Vec<String> {
    let values = client
        .execute(
            "return Array.from(document.querySelectorAll('input, select'))\
             .filter(e => e.offsetParent !== null).map(e => e.value);",
            Vec::new(),
        )
        .await
        .unwrap_or(Value::Null);
    values
        .as_array()
        .map(|v| v.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

/// Waits until a displayed input shows `value`; every shown value then.
async fn wait_for_value(client: &Client, value: &str) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let values = shown_values(client).await;
        if values.iter().any(|v| v == value) {
            return values;
        }
        assert!(
            Instant::now() < deadline,
            "no field shows {value:?}: {values:?}; the page says:\n{}",
            page_text(client).await
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The demo person `login`'s Tryton password (printed in the serve banner).
fn password(app: &TestApp, login: &str) -> String {
    let tryton = app.server.local_tryton().expect("a local trytond");
    let database = tryton.databases().first().expect("the demo database");
    database
        .person(login)
        .unwrap_or_else(|| panic!("no Tryton user {login}"))
        .password
        .expose()
        .to_owned()
}

/// Signs in to sao at `url` (a `#demo/...` link) as `login`: the user name,
/// then the password it asks for.
async fn sign_in_to_tryton(client: &Client, app: &TestApp, url: &str, login: &str) {
    client.goto(url).await.unwrap();
    let enter = fantoccini::key::Key::Enter.to_string();
    wait_for(client, "//input[@id='login']")
        .await
        .send_keys(&format!("{login}{enter}"))
        .await
        .unwrap();
    wait_for(client, "//input[@type='password']")
        .await
        .send_keys(&format!("{}{enter}", password(app, login)))
        .await
        .unwrap();
    // The menu and the user's name once signed in.
    wait_for_text(client, &format!("({login})")).await;
    wait_for(client, "//div[@id='menu']//*[normalize-space(text())='Purchases']").await;
}

/// Signs in to draftline's review pages (the demo sign-in) as `user`.
async fn sign_in_to_draftline(client: &Client, app: &TestApp, user: &str) {
    client.goto(&app.url("/review")).await.unwrap();
    client
        .find(Locator::XPath(&format!(
            "//input[@name='user' and @value='{user}']/following-sibling::button"
        )))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_for_text(client, "Agent drafts").await;
}

/// The purchase's `state` in Tryton, read through its own REST API.
async fn state_in_tryton(app: &TestApp, number: &str) -> String {
    let tryton = app.tryton.as_ref().expect("Tryton's REST API");
    let found = tryton
        .search("purchase.purchase", json!([["number", "=", number]]), &["state"])
        .await;
    assert_eq!(found.len(), 1, "{found:?}");
    found[0]["state"].as_str().unwrap_or_default().to_owned()
}

/// Tryton's JSON-RPC (`POST /<database>/rpc/`) as `login` with its own
/// password: signs in, then calls `method` with `params` (the user's
/// context appended). The answer's `result` or `error`.
async fn rpc_as(app: &TestApp, login: &str, method: &str, params: Vec<Value>) -> Value {
    let tryton = app.tryton.as_ref().expect("Tryton's REST API");
    let url = format!("{}/{}/rpc/", tryton.settings.url, tryton.settings.database);
    let http = reqwest::Client::new();
    let signed_in: Value = http
        .post(&url)
        .json(
            &json!({"id": 1, "method": "common.db.login", "params": [login, {"password": password(app, login)}, "en"]}),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let (user_id, session) = (&signed_in["result"][0], &signed_in["result"][1]);
    assert!(user_id.is_i64() && session.is_string(), "{signed_in}");
    let auth = format!(
        "Session {}",
        STANDARD.encode(format!("{login}:{user_id}:{}", session.as_str().unwrap_or_default()))
    );
    let call = |method: &str, params: Vec<Value>| {
        http.post(&url)
            .header("authorization", auth.clone())
            .json(&json!({"id": 2, "method": method, "params": params}))
            .send()
    };
    let context: Value = call("model.res.user.get_preferences", vec![json!(true), json!({})])
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let mut params = params;
    params.push(context["result"].clone());
    call(method, params).await.unwrap().json().await.unwrap()
}

#[tokio::test]
#[ignore = "needs Chromium, chromedriver (scripts/browser.sh) and npm; scripts/test runs it"]
async fn in_trytons_web_client_an_agent_draft_is_badged_linked_to_its_run_held_to_four_eyes_and_quoted_by_another_person()
 {
    let started = Instant::now();
    let app = spawn_app_on_erp(LocalErp::LocalTryton, LocalOptions::default()).await;
    let tryton = app.server.local_tryton().expect("serve --erp tryton starts a trytond");
    let web = tryton
        .web_client_url()
        .expect("setup.sh installed Tryton's web client (needs npm)");
    assert_eq!(tryton.web_client(), Some("8.0.11"));
    let database = tryton.databases().first().expect("the demo database").name.clone();
    let people: Vec<&str> = tryton
        .databases()
        .first()
        .map(|d| d.people.iter().map(|p| p.login.as_str()).collect())
        .unwrap_or_default();
    for user in [
        "buyer-sby",
        "clerk-sby",
        "buyer-jkt",
        "sales-bdg",
        "approver-sby",
        "approver-bdg",
    ] {
        assert!(people.contains(&user), "{user} has a Tryton sign-in: {people:?}");
    }
    println!("draftline and trytond with sao up in {:.1?}", started.elapsed());

    // The agent's draft, through the tool.
    let run = "run-tryton-web-1";
    let draft = agent_po(
        &app,
        "buyer-sby",
        run,
        "tryton-web-1",
        po_of("tryton-web-1", "V-00231", "BRG-0042", 10, "BOX"),
    )
    .await;
    let number = first_sby_po();
    assert_eq!(draft["po_number"], number.as_str());
    let id: u64 = draft["draft_id"]
        .as_str()
        .and_then(|d| d.strip_prefix("po_tryton_"))
        .and_then(|d| d.parse().ok())
        .expect("a Tryton id");
    let form_url = format!("{web}#{database}/model/purchase.purchase/{id}");
    let run_url = app.url(&format!("/review/runs/{run}"));

    let driver = Driver::start().await;
    let buyer = driver.browser().await;
    let walk = async {
        // draftline first, as approver-sby would be (the run link needs a session).
        sign_in_to_draftline(&buyer, &app, "approver-sby").await;

        // 1. The purchase list, "Drafted by agent" tab: the draft is there.
        sign_in_to_tryton(&buyer, &app, &format!("{web}#{database}"), "buyer-sby").await;
        wait_for(
            &buyer,
            "//div[@id='menu']//tr[.//*[normalize-space(text())='Purchases']]//*[contains(@class,'expander')]",
        )
        .await
        .click()
        .await
        .unwrap();
        wait_for(
            &buyer,
            "(//div[@id='menu']//tr[.//*[normalize-space(text())='Purchases']])[2]",
        )
        .await
        .click()
        .await
        .unwrap();
        wait_for(&buyer, "//a[contains(normalize-space(.), 'Drafted by agent')]")
            .await
            .click()
            .await
            .unwrap();
        // Every agent draft, whatever its state (the seeded one a person quoted
        // too), and no document a person made.
        text_of(
            &buyer,
            "//tr[.//*[normalize-space(text())='PO-SBY-000002']]",
            "Quotation",
        )
        .await;
        let row = text_of(&buyer, &format!("//tr[.//*[normalize-space(text())='{number}']]"), run).await;
        assert!(row.contains("Draft") && row.contains("PT Sinar Bearindo"), "{row}");
        let list = page_text(&buyer).await;
        assert!(
            !list.contains("PO-JKT-000001"),
            "a document a person made is not under Drafted by agent: {list}"
        );
        screenshot(&buyer, "1-purchase-list-drafted-by-agent.png").await;

        // 2. Its form: the badge, for whom, the run as a link.
        // (the link draftline's document page gives: sao opens it in a tab)
        buyer.goto(&form_url).await.unwrap();
        let form = wait_for_text(&buyer, "may not quote or confirm it (four eyes)").await;
        assert!(
            form.contains("Drafted by agent") && form.contains("On behalf of"),
            "{form}"
        );
        let values = wait_for_value(&buyer, &number).await;
        // (a selection's value is its key as JSON: the state `"draft"`)
        for shown in ["buyer-sby", run_url.as_str(), "\"draft\""] {
            assert!(values.iter().any(|v| v == shown), "{shown} on the form: {values:?}");
        }
        let link = wait_for(&buyer, "//div[contains(@class,'form-url')]//a").await;
        assert_eq!(link.attr("href").await.unwrap().as_deref(), Some(run_url.as_str()));
        screenshot(&buyer, "2-purchase-form-badge-and-run-link.png").await;

        // 3a. Quote as the person the agent acted for: Tryton refuses it.
        wait_for(&buyer, "//button[normalize-space(.)='Quote']")
            .await
            .click()
            .await
            .unwrap();
        let refused = wait_for_text(&buyer, "another person must quote or confirm it").await;
        assert!(
            refused.contains(&format!(
                "{number} was drafted by an AI agent on behalf of buyer-sby: another person must quote or confirm it"
            )),
            "{refused}"
        );
        screenshot(&buyer, "3a-quote-refused-four-eyes.png").await;
        wait_for(
            &buyer,
            "//div[contains(@class,'modal')]//button[normalize-space(.)='OK']",
        )
        .await
        .click()
        .await
        .unwrap();
        assert_eq!(state_in_tryton(&app, &number).await, "draft");

        // 2b. The run link opens draftline's run page of that run.
        let before = buyer.windows().await.unwrap();
        wait_for(&buyer, "//div[contains(@class,'form-url')]//a")
            .await
            .click()
            .await
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(15);
        let opened = loop {
            let now = buyer.windows().await.unwrap();
            if let Some(new) = now.iter().find(|w| !before.contains(w)) {
                break new.clone();
            }
            assert!(Instant::now() < deadline, "the run link opened no window");
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        buyer.switch_to_window(opened).await.unwrap();
        let run_page = wait_for_text(&buyer, &format!("Run {run}")).await;
        assert_eq!(buyer.current_url().await.unwrap().as_str(), run_url);
        assert!(
            run_page.contains("purchasing_create_po_draft") && run_page.contains(&number),
            "{run_page}"
        );
        screenshot(&buyer, "2b-run-page-from-the-tryton-link.png").await;
        buyer.close_window().await.unwrap();
        buyer.switch_to_window(before[0].clone()).await.unwrap();

        // 3b. Signed in as approver-sby (a browser of their own), Quote moves it on.
        let approver = driver.browser().await;
        sign_in_to_tryton(&approver, &app, &form_url, "approver-sby").await;
        wait_for_value(&approver, &number).await;
        wait_for(&approver, "//button[normalize-space(.)='Quote']")
            .await
            .click()
            .await
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while state_in_tryton(&app, &number).await != "quotation" {
            assert!(
                Instant::now() < deadline,
                "not quoted; the page says:\n{}",
                page_text(&approver).await
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let values = wait_for_value(&approver, "\"quotation\"").await;
        assert!(
            values.iter().any(|v| v == "approver-sby"),
            "who decided, on the form: {values:?}"
        );
        screenshot(&approver, "3b-quoted-by-approver-sby.png").await;

        // 4. draftline's queue: approved; the document: who decided in Tryton.
        sign_in_to_draftline(&approver, &app, "approver-sby").await;
        let row = approver
            .find(Locator::XPath(&format!("//tr[.//*[contains(text(), '{number}')]]")))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(row.contains("Approved") && row.contains("Drafted by agent"), "{row}");
        screenshot(&approver, "4a-draftline-queue-approved.png").await;
        approver
            .goto(&app.url(&format!("/review/documents/{number}")))
            .await
            .unwrap();
        let document = wait_for_text(&approver, "Approved by approver-sby").await;
        assert!(
            document.contains(&format!("{number} is approved in Tryton")),
            "{document}"
        );
        let web_link = approver
            .find(Locator::LinkText(&format!("Open {number} in Tryton")))
            .await
            .unwrap()
            .attr("href")
            .await
            .unwrap();
        assert_eq!(web_link.as_deref(), Some(form_url.as_str()));
        screenshot(&approver, "4b-draftline-document-decided-in-tryton.png").await;
        approver.close().await.unwrap();
    };
    tokio::time::timeout(Duration::from_secs(240), walk)
        .await
        .expect("the browser walk finished in time");
    buyer.close().await.unwrap();

    // The agent reads who decided, as Tryton tells it.
    let read = app
        .call("buyer-sby", "purchasing_get_po", &json!({"po_number": number}), &[])
        .await;
    assert_eq!(read.body["data"]["status"], "approved", "{:?}", read.body);
    assert_eq!(
        read.body["data"]["decision"]["decided_by"], "approver-sby",
        "{:?}",
        read.body
    );
    println!(
        "screenshots in {} ({:.1?} in all)",
        crate::chromium::screenshots(SCREENSHOTS).display(),
        started.elapsed()
    );
}

#[tokio::test]
#[ignore = "needs npm for Tryton's web client (runs with the browser test in scripts/test)"]
async fn over_trytons_json_rpc_the_person_an_agent_drafted_for_cannot_quote_it_and_another_person_can() {
    let app = spawn_app_on_erp(LocalErp::LocalTryton, LocalOptions::default()).await;
    let draft = agent_po(
        &app,
        "buyer-sby",
        "run-tryton-rpc-1",
        "tryton-rpc-1",
        po_of("tryton-rpc-1", "V-00231", "BRG-0043", 5, "PCS"),
    )
    .await;
    let number = draft["po_number"].as_str().unwrap_or_default().to_owned();
    let id: i64 = draft["draft_id"]
        .as_str()
        .and_then(|d| d.strip_prefix("po_tryton_"))
        .and_then(|d| d.parse().ok())
        .expect("a Tryton id");

    // buyer-sby, signed in with its own password: Tryton's user error.
    let refused = rpc_as(&app, "buyer-sby", "model.purchase.purchase.quote", vec![json!([id])]).await;
    assert_eq!(refused["error"][0], "UserError", "{refused}");
    assert_eq!(
        refused["error"][1][0],
        format!(
            "{number} was drafted by an AI agent on behalf of buyer-sby: another person must quote or confirm it \
             (four eyes)."
        ),
        "{refused}"
    );
    assert_eq!(state_in_tryton(&app, &number).await, "draft");
    // approver-sby may.
    let quoted = rpc_as(&app, "approver-sby", "model.purchase.purchase.quote", vec![json!([id])]).await;
    assert!(quoted.get("error").is_none_or(Value::is_null), "{quoted}");
    assert_eq!(state_in_tryton(&app, &number).await, "quotation");
    // And draftline's queue says so.
    let queue = app
        .call("buyer-sby", "purchasing_get_po", &json!({"po_number": number}), &[])
        .await;
    assert_eq!(queue.body["data"]["status"], "approved", "{:?}", queue.body);
    // The run page records who decided in Tryton, as Tryton tells it.
    let reviewer = crate::review::Reviewer::sign_in(&app.server.url(), "approver-sby").await;
    let run = reviewer.get("/review/runs/run-tryton-rpc-1").await;
    assert_eq!(run.status, 200, "{}", run.body);
    let at = run
        .body
        .find("id=\"decided-in-erp\"")
        .unwrap_or_else(|| panic!("{}", run.body));
    let section = &run.body[at..at + run.body[at..].find("</section>").unwrap()];
    assert!(section.contains("Decided in Tryton"), "{section}");
    assert!(section.contains(&number) && section.contains("approved"), "{section}");
    assert!(section.contains("by <strong>approver-sby</strong>"), "{section}");
}
