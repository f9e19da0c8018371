//! E-mail to people: `draft.created` to the people who approve the
//! document's module in its branch, `draft.decided` to the person the agent
//! drafted for, each address from the tenant's notification settings
//! (`people`, `approvers`). A message is short, in plain text and HTML: the
//! document, its total, the run, "Drafted by agent", and the review link
//! (which opens the document after sign-in).
//!
//! Sent over SMTP with `lettre` (`DRAFTLINE_SMTP_URL`: `smtps://` for
//! implicit TLS, `smtp://…?tls=required` for STARTTLS, plain `smtp://` on
//! loopback only; `DRAFTLINE_MAIL_FROM`). Without SMTP, `draftline serve`
//! keeps the messages in a [`LocalMailbox`] its review pages show, like a
//! mail catcher.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use lettre::message::{Mailbox, MultiPart};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use serde_json::Value as Json;

use crate::events::EventType;

/// The SMTP server's URL.
pub const SMTP_URL: &str = "DRAFTLINE_SMTP_URL";
/// The sender's address.
pub const MAIL_FROM: &str = "DRAFTLINE_MAIL_FROM";

/// How many messages a local mailbox keeps (the newest).
const KEPT: usize = 200;

/// One message to one person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mail {
    /// The address.
    pub to: String,
    /// The subject line.
    pub subject: String,
    /// The plain-text body.
    pub text: String,
    /// The HTML body.
    pub html: String,
}

/// A message kept by a [`LocalMailbox`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptMail {
    /// When it was sent.
    pub at: DateTime<Utc>,
    /// The message.
    pub mail: Mail,
}

/// The messages `draftline serve` keeps when no SMTP server is set: the
/// newest 200, shown on its review pages.
#[derive(Debug, Clone, Default)]
pub struct LocalMailbox(Arc<Mutex<VecDeque<KeptMail>>>);

impl LocalMailbox {
    /// The messages kept, newest first.
    pub fn messages(&self) -> Vec<KeptMail> {
        self.0
            .lock()
            .map(|kept| kept.iter().rev().cloned().collect())
            .unwrap_or_default()
    }

    fn keep(&self, mail: Mail, at: DateTime<Utc>) {
        if let Ok(mut kept) = self.0.lock() {
            if kept.len() == KEPT {
                kept.pop_front();
            }
            kept.push_back(KeptMail { at, mail });
        }
    }
}

/// Where messages go.
#[derive(Clone)]
pub enum Mailer {
    /// An SMTP server.
    Smtp(Arc<Smtp>),
    /// A local mailbox (`draftline serve` without SMTP).
    Local(LocalMailbox),
}

/// An SMTP server and the sender of its messages.
pub struct Smtp {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl std::fmt::Debug for Mailer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Smtp(smtp) => write!(f, "Mailer::Smtp(from {})", smtp.from),
            Self::Local(_) => f.write_str("Mailer::Local"),
        }
    }
}

impl Mailer {
    /// The SMTP server at `url`, sending as `from`, or why it cannot be
    /// used (the message never repeats a password).
    pub fn smtp(url: &str, from: &str) -> Result<Self, String> {
        let from: Mailbox = from.parse().map_err(|_| {
            format!("{MAIL_FROM}: not an address (write it as name@example.com or \"Name <name@example.com>\")")
        })?;
        let parsed: http::Uri = url.parse().map_err(|_| {
            format!("{SMTP_URL}: not a URL (smtps://user:password@host:465 or smtp://host:587?tls=required)")
        })?;
        let host = parsed.host().unwrap_or_default();
        let loopback = host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
        let encrypted = parsed.scheme_str() == Some("smtps") || url.contains("tls=required");
        if !encrypted && !loopback {
            return Err(format!(
                "{SMTP_URL}: mail to {host} would travel unencrypted; use smtps:// (implicit TLS) or add \
                 ?tls=required (STARTTLS)"
            ));
        }
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
            .map_err(|e| format!("{SMTP_URL}: {}", e.to_string().replace(url, "(the URL)")))?
            .timeout(Some(Duration::from_secs(10)))
            .build();
        Ok(Self::Smtp(Arc::new(Smtp { transport, from })))
    }

    /// The mailer the environment sets up: SMTP when `DRAFTLINE_SMTP_URL`
    /// is set (with `DRAFTLINE_MAIL_FROM`), else `None`.
    pub fn from_env() -> Result<Option<Self>, String> {
        let url = match std::env::var(SMTP_URL) {
            Ok(url) if !url.trim().is_empty() => url,
            // Unset, or empty (a deployment template's default): no e-mail.
            _ => return Ok(None),
        };
        let from = std::env::var(MAIL_FROM).map_err(|_| format!("{SMTP_URL} is set, so {MAIL_FROM} is needed too"))?;
        Self::smtp(url.trim(), from.trim()).map(Some)
    }

    /// Sends `mail`, or says why it was not accepted.
    pub async fn send(&self, mail: &Mail, now: DateTime<Utc>) -> Result<(), String> {
        match self {
            Self::Local(mailbox) => {
                mailbox.keep(mail.clone(), now);
                Ok(())
            }
            Self::Smtp(smtp) => {
                let Smtp { transport, from } = smtp.as_ref();
                let to: Mailbox = mail.to.parse().map_err(|_| format!("{} is not an address", mail.to))?;
                let message = Message::builder()
                    .from(from.clone())
                    .to(to)
                    .subject(&mail.subject)
                    .multipart(MultiPart::alternative_plain_html(mail.text.clone(), mail.html.clone()))
                    .map_err(|e| format!("the message could not be built: {e}"))?;
                transport
                    .send(message)
                    .await
                    .map(|_| ())
                    .map_err(|e| format!("the SMTP server did not take it: {e}"))
            }
        }
    }
}

/// The message of the event `payload` (its JSON) to `to`, or `None` when
/// the payload is not an event.
pub fn compose(kind: EventType, payload: &str, to: &str) -> Option<Mail> {
    let event: Json = serde_json::from_str(payload).ok()?;
    let data = &event["data"];
    let text_of = |v: &Json| v.as_str().map(str::to_owned);
    let number = text_of(&data["document"]["number"])?;
    let what = match data["document"]["kind"].as_str() {
        Some("quote") => "quote",
        _ => "purchase order",
    };
    let link = text_of(&data["review_url"])?;
    let total = match (data["total"]["amount"].as_str(), data["total"]["currency"].as_str()) {
        (Some(amount), Some(currency)) => format!("{currency} {amount}"),
        _ => "none".to_owned(),
    };
    let run = text_of(&data["run_id"]).unwrap_or_else(|| "none".to_owned());
    let branch = text_of(&data["branch"]).unwrap_or_default();
    let (subject, lead) = match kind {
        EventType::DraftCreated => (
            format!("{number} waits for your review (drafted by agent)"),
            format!("An agent drafted {what} {number} in branch {branch}. It waits for a person's decision."),
        ),
        EventType::DraftDecided => {
            let decision = &data["decision"];
            let verdict = decision["verdict"].as_str().unwrap_or("decided");
            let by = decision["decided_by"].as_str().unwrap_or("a person");
            let reason = decision["reason"]
                .as_str()
                .map(|r| format!(" Their reason: {r}"))
                .unwrap_or_default();
            (
                format!("{number} was {verdict} by {by}"),
                format!("The {what} {number} an agent drafted for you was {verdict} by {by}.{reason}"),
            )
        }
    };
    let text = format!(
        "{lead}\n\nDocument: {number}\nTotal: {total}\nAgent run: {run}\nDrafted by agent\n\nReview it: {link}\n(sign in \
         first; the link then opens the document)\n"
    );
    let escape = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
    };
    let html = format!(
        "<p>{}</p><table><tr><th align=\"left\">Document</th><td>{}</td></tr><tr><th align=\"left\">Total</th>\
         <td>{}</td></tr><tr><th align=\"left\">Agent run</th><td>{}</td></tr></table><p><strong>Drafted by \
         agent</strong></p><p><a href=\"{}\">Review {}</a> (sign in first; the link then opens the document)</p>",
        escape(&lead),
        escape(&number),
        escape(&total),
        escape(&run),
        escape(&link),
        escape(&number)
    );
    Some(Mail {
        to: to.to_owned(),
        subject,
        text,
        html,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAYLOAD: &str = r#"{"type":"draft.decided","timestamp":"2026-11-29T09:00:00.000Z","data":{"tenant":"demo",
        "branch":"SBY-01","document":{"id":"po_1","number":"PO-SBY-000004","kind":"purchase_order"},"run_id":"run-42",
        "tool_call_id":null,"total":{"amount":"2880000.00","currency":"IDR"},"decision":{"verdict":"rejected",
        "decided_by":"approver-sby","reason":"Order <BOX>, not PCS"},
        "review_url":"https://x.test/review/documents/PO-SBY-000004"}}"#;

    #[test]
    fn a_message_names_the_document_its_total_its_run_and_the_link_and_escapes_what_it_quotes() {
        let mail = compose(EventType::DraftDecided, PAYLOAD, "budi@example.com").unwrap();
        assert_eq!(mail.subject, "PO-SBY-000004 was rejected by approver-sby");
        for part in [&mail.text, &mail.html] {
            for says in [
                "PO-SBY-000004",
                "IDR 2880000.00",
                "run-42",
                "Drafted by agent",
                "https://x.test/review/documents/PO-SBY-000004",
            ] {
                assert!(part.contains(says), "{says}: {part}");
            }
        }
        assert!(mail.html.contains("Order &lt;BOX&gt;, not PCS") && !mail.html.contains("<BOX>"));
        let created = compose(EventType::DraftCreated, PAYLOAD, "ana@example.com").unwrap();
        assert_eq!(
            created.subject,
            "PO-SBY-000004 waits for your review (drafted by agent)"
        );
        assert!(compose(EventType::DraftCreated, "{}", "ana@example.com").is_none());
    }

    #[test]
    fn smtp_settings_refuse_plain_text_off_loopback_and_never_echo_a_password() {
        let plain = Mailer::smtp("smtp://user:hunter2@mail.example.com:25", "draftline@example.com").unwrap_err();
        assert!(plain.contains("unencrypted") && !plain.contains("hunter2"), "{plain}");
        assert!(Mailer::smtp("smtp://127.0.0.1:2525", "draftline@example.com").is_ok());
        assert!(Mailer::smtp("smtps://u:p@mail.example.com:465", "draftline@example.com").is_ok());
        assert!(Mailer::smtp("smtp://u:p@mail.example.com:587?tls=required", "draftline@example.com").is_ok());
        let from = Mailer::smtp("smtp://127.0.0.1:2525", "not an address").unwrap_err();
        assert!(from.contains(MAIL_FROM), "{from}");
    }
}
