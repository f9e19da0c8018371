//! The review pages in a real browser: headless Chromium (the distribution's
//! `chromium` and `chromium-driver`, installed by `scripts/browser.sh`)
//! driven over WebDriver by `fantoccini`, against `draftline serve` started
//! in-process. One browser session walks what a reviewer does: sign in,
//! read the queue, open a run with a denied call in it, approve one draft,
//! reject another with a reason, be refused on a draft made on their own
//! behalf; the agent then reads the reason back through its tool.
//! Screenshots of the queue (laptop and phone width), a run and a document
//! are written under `$CARGO_TARGET_TMPDIR/review-screenshots/`.
//!
//! Ignored by a plain `cargo test` (it needs Chromium); `scripts/test` runs
//! it after installing the browser: `cargo test --test api browser -- --ignored`.

use std::time::Duration;

use draftline_cli::{TokenSpec, demo_spec, token_for};
use fantoccini::{Client, Locator};
use serde_json::{Value, json};

use crate::chromium::{Driver, wait_for_text};
use crate::helpers::{TestApp, spawn_app};

/// Where this test's screenshots go, under `$CARGO_TARGET_TMPDIR`.
const SCREENSHOTS: &str = "review-screenshots";

async fn screenshot(client: &Client, name: &str) {
    crate::chromium::screenshot(client, SCREENSHOTS, name).await;
}
use crate::review::{agent_po, no_redirects, po_of, read};

/// The table row of the page that contains `needle`.
async fn row_with(client: &Client, needle: &str) -> fantoccini::elements::Element {
    client
        .find(Locator::XPath(&format!("//tr[.//*[contains(text(), '{needle}')]]")))
        .await
        .unwrap_or_else(|e| panic!("no row with {needle}: {e}"))
}

async fn get_po(app: &TestApp, number: &str) -> Value {
    app.call("buyer-sby", "purchasing_get_po", &json!({"po_number": number}), &[])
        .await
        .body["data"]
        .clone()
}

#[tokio::test]
#[ignore = "needs Chromium and chromedriver (scripts/browser.sh); scripts/test runs it"]
async fn a_reviewer_signs_in_reads_a_run_approves_rejects_and_is_held_to_four_eyes_in_a_real_browser() {
    let app = spawn_app().await;
    let run = "run-browser-1";
    // What the agent did: two drafts and, in the same run, a call it was not allowed.
    let to_approve = agent_po(
        &app,
        "buyer-sby",
        run,
        "browser-a",
        po_of("browser-a", "V-00231", "BRG-0042", 10, "BOX"),
    )
    .await;
    let denied = app
        .call(
            "clerk-sby",
            "purchasing_create_po_draft",
            &po_of("browser-denied", "V-00231", "BRG-0043", 5, "PCS"),
            &[
                ("x-agent-run-id", run.to_owned()),
                ("x-tool-call-id", "browser-denied-call".to_owned()),
            ],
        )
        .await;
    assert_eq!(denied.status, 403);
    let to_reject = agent_po(
        &app,
        "buyer-sby",
        run,
        "browser-b",
        po_of("browser-b", "V-00508", "OIL-0310", 2, "CTN"),
    )
    .await;
    let own_token = token_for(
        &TokenSpec {
            scope: "purchasing:read purchasing:draft".into(),
            ..demo_spec("approver-sby").unwrap()
        },
        &app.server.url(),
        600,
    )
    .unwrap();
    let own = app
        .post_raw(
            "purchasing_create_po_draft",
            &[
                ("authorization", format!("Bearer {own_token}")),
                ("x-agent-run-id", "run-browser-own".into()),
            ],
            po_of("browser-own", "V-00415", "BLT-0107", 3, "BOX").to_string(),
        )
        .await;
    assert_eq!(own.status, 201, "{:?}", own.body);
    let [a, b, c] = [&to_approve, &to_reject, &own.body["data"]].map(|d| d["po_number"].as_str().unwrap().to_owned());

    let driver = Driver::start().await;
    let client = driver.browser().await;
    let walk = async {
        // Sign in: every page sends a stranger to the sign-in page first.
        client.goto(&app.url("/review")).await.unwrap();
        assert_eq!(client.current_url().await.unwrap().path(), "/review/signin");
        client
            .find(Locator::XPath(
                "//input[@name='user' and @value='approver-sby']/following-sibling::button",
            ))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        wait_for_text(&client, "Agent drafts").await;

        // The queue: the new draft, badged, with who it was for and its run.
        let row = row_with(&client, &a).await;
        let text = row.text().await.unwrap();
        for expected in [
            "Drafted by agent",
            "Waiting for review",
            "buyer-sby",
            "gpt-test-1",
            "reorder@test",
            run,
        ] {
            assert!(text.contains(expected), "{expected} is not in the row: {text}");
        }
        assert!(
            text.contains("2,880,000.00 IDR"),
            "total with separators and currency: {text}"
        );
        screenshot(&client, "queue.png").await;
        // Keyboard first: the first Tab lands on "Skip to content".
        client
            .find(Locator::Css("body"))
            .await
            .unwrap()
            .send_keys(&fantoccini::key::Key::Tab.to_string())
            .await
            .unwrap();
        assert_eq!(
            client.active_element().await.unwrap().text().await.unwrap(),
            "Skip to content"
        );
        // A phone width: no sideways scrolling.
        client.set_window_size(390, 900).await.unwrap();
        let fits = client
            .execute(
                "return document.documentElement.scrollWidth <= window.innerWidth + 1;",
                Vec::new(),
            )
            .await
            .unwrap();
        assert_eq!(fits, json!(true), "the queue fits a phone's width");
        screenshot(&client, "queue-phone.png").await;
        client.set_window_size(1280, 1000).await.unwrap();

        // Its run: the draft calls and the denied call, with what the model was told.
        row_with(&client, &a)
            .await
            .find(Locator::LinkText(run))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        let page = wait_for_text(&client, &format!("Run {run}")).await;
        assert!(page.contains("Denied") && page.contains("FORBIDDEN"), "{page}");
        assert!(
            page.contains("needs the scope 'purchasing:draft'"),
            "the model-readable text: {page}"
        );
        // The header card comes from the authorized calls only: not the clerk's refused one.
        let card = client
            .find(Locator::Id("run-facts"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(card.contains("buyer-sby") && card.contains("gpt-test-1"), "{card}");
        assert!(
            !card.contains("clerk-sby"),
            "a refused call set the header card: {card}"
        );
        assert!(
            page.contains("browser-denied-call") && page.contains("clerk-sby"),
            "{page}"
        );
        let draft_row = row_with(&client, &a).await.text().await.unwrap();
        assert!(
            draft_row.contains("OK") && draft_row.contains("purchasing_create_po_draft"),
            "{draft_row}"
        );
        assert!(page.contains(&b));
        screenshot(&client, "run.png").await;

        // Approve one.
        client.find(Locator::LinkText(&a)).await.unwrap().click().await.unwrap();
        let page = wait_for_text(&client, "Lines").await;
        assert!(page.contains("price list V-00231, BRG-0042 per BOX"), "{page}");
        screenshot(&client, "document.png").await;
        client
            .find(Locator::Id("approve"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        wait_for_text(&client, &format!("You approved {a}")).await;

        // Reject another, with a reason.
        client.goto(&app.url(&format!("/review/documents/{b}"))).await.unwrap();
        let reason = "Two cartons are too few: order the 20 of the maintenance plan.";
        client
            .find(Locator::Id("reject-reason"))
            .await
            .unwrap()
            .send_keys(reason)
            .await
            .unwrap();
        client.find(Locator::Id("reject")).await.unwrap().click().await.unwrap();
        wait_for_text(&client, &format!("You rejected {b}")).await;

        // A draft made on one's own behalf: no approve button, and the page says why.
        client.goto(&app.url(&format!("/review/documents/{c}"))).await.unwrap();
        let page = wait_for_text(&client, "drafted on your behalf").await;
        assert!(page.contains("four eyes"), "{page}");
        assert!(client.find(Locator::Id("approve")).await.is_err(), "no approve button");
        // The server refuses it too, with this very browser session.
        let cookie_name = format!("draftline_session_{}", app.server.addr.port());
        let cookie = client.get_named_cookie(&cookie_name).await.unwrap();
        let csrf = client
            .find(Locator::Css("form[action$='/reject'] input[name=csrf]"))
            .await
            .unwrap()
            .attr("value")
            .await
            .unwrap()
            .unwrap();
        let refused = read(
            no_redirects()
                .post(app.url(&format!("/review/documents/{c}/approve")))
                .header("cookie", format!("{cookie_name}={}", cookie.value()))
                .form(&[("csrf", csrf.as_str()), ("decision_id", "01JBROWSEROWN")])
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(refused.status, 403, "{}", refused.body);
        assert!(refused.body.contains("four eyes"));

        // The queue tells the outcome of each.
        client.goto(&app.url("/review")).await.unwrap();
        assert!(row_with(&client, &a).await.text().await.unwrap().contains("Approved"));
        assert!(row_with(&client, &b).await.text().await.unwrap().contains("Rejected"));

        // Sign out, and sign in as the clerk (inventory:read only): the run of
        // purchase orders is a missing run to them, its arguments nowhere.
        client
            .find(Locator::Css("form[action='/review/signout'] button"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        wait_for_text(&client, "Sign in to review agent drafts").await;
        client
            .find(Locator::XPath(
                "//input[@name='user' and @value='clerk-sby']/following-sibling::button",
            ))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        wait_for_text(&client, "Agent drafts").await;
        client.goto(&app.url(&format!("/review/runs/{run}"))).await.unwrap();
        let page = wait_for_text(&client, "No calls of run").await;
        for hidden in [a.as_str(), b.as_str(), "V-00231", "purchasing_create_po_draft"] {
            assert!(!page.contains(hidden), "the clerk sees {hidden}: {page}");
        }
        reason
    };
    let reason = tokio::time::timeout(Duration::from_secs(180), walk)
        .await
        .expect("the browser walk finished in time");
    client.close().await.unwrap();

    // The agent learns the outcome through its own tool.
    let approved = get_po(&app, &a).await;
    assert_eq!(approved["status"], "approved");
    assert_eq!(approved["decision"]["decided_by"], "approver-sby");
    let rejected = get_po(&app, &b).await;
    assert_eq!(rejected["status"], "rejected");
    assert_eq!(rejected["decision"]["reason"], reason);
    assert!(rejected["next_step"].as_str().unwrap().contains(reason));
    assert_eq!(get_po(&app, &c).await["status"], "draft");
    println!("screenshots in {}", crate::chromium::screenshots(SCREENSHOTS).display());
}
