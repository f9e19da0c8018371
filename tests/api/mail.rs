//! E-mail to people (issue 46, step 4): a fresh agent draft is one message
//! to the people who approve its module in its branch, and a person's
//! decision one message to the person the agent drafted for, each with the
//! review link. The SMTP server is a real one, aiosmtpd from PyPI
//! (installed by `scripts/smtp.sh` into the cache), keeping what it is sent
//! in a Maildir the test reads.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use draftline_server::events::mail::Mailer;
use serde_json::json;

use crate::helpers::{TestApp, po_input, spawn_app_with};
use crate::review::{Reviewer, agent_po};
use crate::webhooks::{set_settings, sweeping};

/// aiosmtpd's interpreter, installed once per machine.
fn smtp_python() -> &'static PathBuf {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let out = Command::new("bash")
            .arg(root.join("scripts/smtp.sh"))
            .stderr(Stdio::inherit())
            .output()
            .expect("scripts/smtp.sh runs");
        assert!(out.status.success(), "scripts/smtp.sh failed");
        PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
    })
}

/// A real SMTP server on 127.0.0.1 keeping every message in a Maildir.
struct SmtpSink {
    port: u16,
    dir: tempfile::TempDir,
    child: Child,
}

impl SmtpSink {
    async fn start() -> Self {
        let python = tokio::task::spawn_blocking(smtp_python).await.unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let dir = tempfile::tempdir().unwrap();
        let mut child = Command::new(python)
            .args(["-m", "aiosmtpd", "-n", "-l", &format!("127.0.0.1:{port}")])
            .args(["-c", "aiosmtpd.handlers.Mailbox"])
            .arg(dir.path().join("maildir"))
            .stdout(Stdio::null())
            .spawn()
            .expect("aiosmtpd starts");
        for _ in 0..200 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
                return Self { port, dir, child };
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("aiosmtpd did not listen on {port}");
    }

    /// Every message received, its quoted-printable soft breaks and
    /// escapes undone.
    fn messages(&self) -> Vec<String> {
        let maildir = self.dir.path().join("maildir");
        let mut found: Vec<String> = ["new", "cur"]
            .iter()
            .filter_map(|sub| std::fs::read_dir(maildir.join(sub)).ok())
            .flatten()
            .filter_map(|entry| std::fs::read_to_string(entry.ok()?.path()).ok())
            .map(|raw| unquote(&raw))
            .collect();
        found.sort();
        found
    }

    async fn wait_for(&self, n: usize) -> Vec<String> {
        for _ in 0..150 {
            let messages = self.messages();
            if messages.len() >= n {
                return messages;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the SMTP server received {:?}, not {n}", self.messages());
    }
}

impl Drop for SmtpSink {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `raw` with quoted-printable soft line breaks removed and `=XX` decoded.
fn unquote(raw: &str) -> String {
    let joined = raw.replace("=\r\n", "").replace("=\n", "");
    let mut out = Vec::with_capacity(joined.len());
    let bytes = joined.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok());
        match (bytes[i], hex) {
            (b'=', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test]
async fn a_draft_mails_its_branchs_approver_and_a_decision_the_person_it_was_drafted_for_once_each() {
    let sink = SmtpSink::start().await;
    let mailer = Mailer::smtp(
        &format!("smtp://127.0.0.1:{}", sink.port),
        "draftline <draftline@demo.test>",
    )
    .unwrap();
    let app: TestApp = spawn_app_with(sweeping(Some(mailer))).await;
    let settings = json!({
        "version": null,
        "people": {
            "approver-sby": "ana@demo.test",
            "buyer-sby": "budi@demo.test",
            "buyer-jkt": "joko@demo.test"
        },
        "approvers": {"SBY-01": {"purchasing": ["approver-sby"]}, "JKT-01": {"purchasing": ["buyer-jkt"]}}
    });
    set_settings(&app, settings).await;

    let draft = agent_po(&app, "buyer-sby", "run-mail", "mail-1", po_input("mail-1")).await;
    let number = draft["po_number"].as_str().unwrap().to_owned();
    let link = draft["review_url"].as_str().unwrap().to_owned();
    let created = sink.wait_for(1).await;
    let message = &created[0];
    assert!(message.contains("To: ana@demo.test"), "{message}");
    assert!(
        message.contains(&format!("Subject: {number} waits for your review (drafted by agent)")),
        "{message}"
    );
    for says in [link.as_str(), "Drafted by agent", "run-mail", "text/plain", "text/html"] {
        assert!(message.contains(says), "{says}: {message}");
    }

    let person = Reviewer::sign_in(&app.server.url(), "approver-sby").await;
    person.decide(&number, "reject", "Order BOX, not PCS").await;
    let both = sink.wait_for(2).await;
    let decided = both
        .iter()
        .find(|m| m.contains("To: budi@demo.test"))
        .unwrap_or_else(|| panic!("{both:?}"));
    assert!(
        decided.contains(&format!("Subject: {number} was rejected by approver-sby")),
        "{decided}"
    );
    assert!(
        decided.contains("Order BOX, not PCS") && decided.contains(&link),
        "{decided}"
    );

    // Swept again and again: still one message each, and the page lists them.
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(sink.messages().len(), 2, "{:?}", sink.messages());
    let page = person.get("/review/notifications").await;
    for recipient in ["mail:approver-sby", "mail:buyer-sby"] {
        assert!(page.body.contains(recipient), "{recipient}: {}", page.body);
    }
    assert_eq!(page.body.matches("delivery-delivered").count(), 2, "{}", page.body);
}

#[tokio::test]
async fn without_smtp_the_local_server_keeps_the_messages_on_a_page() {
    let app = spawn_app_with(sweeping(None)).await;
    let settings = json!({
        "version": null,
        "people": {"approver-sby": "ana@demo.test"},
        "approvers": {"SBY-01": {"purchasing": ["approver-sby"]}}
    });
    set_settings(&app, settings).await;
    let draft = agent_po(&app, "buyer-sby", "run-mailbox", "mailbox-1", po_input("mailbox-1")).await;
    let number = draft["po_number"].as_str().unwrap();
    let person = Reviewer::sign_in(&app.server.url(), "approver-sby").await;
    for _ in 0..100 {
        let page = person.get("/review/mail").await;
        if page.body.contains(number) {
            assert!(page.body.contains("To ana@demo.test"), "{}", page.body);
            assert!(
                page.body.contains(&format!("{number} waits for your review")),
                "{}",
                page.body
            );
            assert!(
                page.body.contains(draft["review_url"].as_str().unwrap()),
                "{}",
                page.body
            );
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the mail page never showed {number}");
}
