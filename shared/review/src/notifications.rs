//! `GET /review/notifications`: a tenant's webhooks for its administrators
//! (scope `notify:admin`): the endpoints (never their secrets), the recent
//! deliveries with their state and attempts, and each dead one with a
//! "Send again" form.
//!
//! `POST /review/notifications/send-again`: the signed-in session, the
//! form's CSRF token and the scope, then the dead delivery is due again at
//! once with a new retry window ([`delivery::send_again`]); the sweeper
//! sends it with the same `webhook-id`. Every attempt is audited like a
//! tool call: tool `review.send_again`, transport `browser`, the event and
//! endpoint as its arguments, and its outcome.

use std::fmt::Write as _;

use bytes::Bytes;
use draftline_contract::ToolError;
use draftline_contract::request::AgentContext;
use draftline_server::audit::{AuditRecord, CallFacts, Outcome, OutcomeKind, StoredArguments};
use draftline_server::events::delivery::{self, Delivery};
use draftline_server::events::mail::LocalMailbox;
use draftline_server::events::settings::NotifyStore;
use http::{Request, Response, StatusCode};

use crate::Context;
use crate::html::{self, attr, text};
use crate::web::{self, Fields};

/// The scope that shows the page and sends a dead delivery again.
pub const ADMIN_SCOPE: &str = "notify:admin";

/// How many deliveries the page shows.
const SHOWN: i32 = 50;

/// The page.
pub async fn page(cx: &Context<'_>, request: &Request<Bytes>) -> Response<Bytes> {
    match render(cx, request).await {
        Ok(main) => cx.page(StatusCode::OK, "Notifications", &main),
        Err(err) => cx.error_page(&err),
    }
}

/// The "Send again" form's answer: back to the page, which says what happened.
pub async fn send_again(cx: &Context<'_>, body: &[u8]) -> Response<Bytes> {
    let form = Fields::parse(body);
    let sent = async {
        allowed(cx)?;
        if !cx.pages.keys.csrf_matches(cx.session, form.get("csrf")) {
            return Err(ToolError::Forbidden {
                scope: "csrf".to_owned(),
                message: "This form does not belong to your session (it is old, or came from another page or \
                          person). Reload the notifications page and try again. Nothing was sent."
                    .to_owned(),
            });
        }
        let (Some(event), Some(endpoint)) = (form.get("event_id"), form.get("endpoint")) else {
            return Err(ToolError::NotFound(
                "The form names no delivery. Reload the notifications page. Nothing was sent.".to_owned(),
            ));
        };
        let now = cx.app.clock().now();
        let tenant = cx.person().tenant();
        delivery::send_again(cx.app.table(), tenant, (event, endpoint), now)
            .await
            .map(|again| (again, event.to_owned()))
    }
    .await;
    audit(cx, &form, &sent).await;
    match sent {
        Ok((true, event)) => web::see_other(&format!("/review/notifications?sent={}", web::encode(&event))),
        Ok((false, _)) => web::see_other("/review/notifications?sent=none"),
        Err(err) => cx.error_page(&err),
    }
}

/// The audit item of one "Send again": who, which delivery, and how it went.
async fn audit(cx: &Context<'_>, form: &Fields, sent: &Result<(bool, String), ToolError>) {
    let arguments = serde_json::json!({"event_id": form.get("event_id"), "endpoint": form.get("endpoint")});
    let facts = CallFacts {
        request_id: cx.request_id.to_owned(),
        at: cx.app.clock().now(),
        tool: "review.send_again".to_owned(),
        transport: "browser",
        agent: AgentContext::default(),
        arguments: Some(StoredArguments {
            text: arguments.to_string().chars().take(512).collect(),
            truncated: false,
        }),
        trace_id: None,
    };
    let outcome = match sent {
        Ok(_) => Outcome {
            kind: OutcomeKind::Ok,
            http_status: 303,
            code: None,
            message: None,
            document: None,
            key: None,
            authorized: true,
        },
        Err(err) => crate::decide::refusal(err),
    };
    let record = AuditRecord::new(&facts, cx.person(), &outcome);
    if let Err(err) = record.write(cx.app.table()).await {
        tracing::error!(request_id = cx.request_id, error = %err, "audit item not written");
    }
}

/// `GET /review/mail` on `draftline serve` without SMTP: the messages it
/// kept, newest first, as a mail catcher shows them.
pub fn mailbox(cx: &Context<'_>, mailbox: Option<&LocalMailbox>) -> Response<Bytes> {
    let messages = mailbox.map(LocalMailbox::messages).unwrap_or_default();
    let mut main = String::from(
        "<h1>Mail</h1><p class=\"muted\">No SMTP server is set (<code>DRAFTLINE_SMTP_URL</code>), so this local \
         server keeps the messages it would have sent here, newest first.</p>",
    );
    if messages.is_empty() {
        main.push_str("<p class=\"muted\">None yet.</p>");
    }
    for kept in messages {
        let _ = write!(
            main,
            "<article class=\"mail\"><h2>{}</h2><p class=\"muted\">To {} · {}</p><pre>{}</pre></article>",
            text(&kept.mail.subject),
            text(&kept.mail.to),
            html::time(&kept.at.to_rfc3339()),
            text(&kept.mail.text)
        );
    }
    cx.page(StatusCode::OK, "Mail", &main)
}

fn allowed(cx: &Context<'_>) -> Result<(), ToolError> {
    if cx.person().scopes().grants(ADMIN_SCOPE) {
        return Ok(());
    }
    Err(ToolError::Forbidden {
        scope: ADMIN_SCOPE.to_owned(),
        message: format!(
            "The notifications page needs the scope {ADMIN_SCOPE}, which your sign-in does not grant. Nothing was \
             shown or changed."
        ),
    })
}

async fn render(cx: &Context<'_>, request: &Request<Bytes>) -> Result<String, ToolError> {
    allowed(cx)?;
    let tenant = cx.person().tenant();
    let table = cx.app.table();
    let settings = NotifyStore::new(table, tenant).in_force().await?;
    let deliveries = delivery::recent(table, tenant, SHOWN).await?;
    let mut main = String::from("<h1>Notifications</h1>");
    match Fields::of_query(request.uri()).get("sent") {
        Some("none") => main.push_str(&html::notice(
            "warn",
            "That delivery is not dead (it was sent again already, or delivered): nothing more was done.",
        )),
        Some(event) => main.push_str(&html::notice(
            "ok",
            &format!("{event} is due again: the next sweep sends it, with the same webhook-id."),
        )),
        None => {}
    }
    main.push_str("<h2>Endpoints</h2>");
    match settings {
        None => main.push_str(
            "<p class=\"muted\">No endpoints: no webhooks are sent. An operator sets them with <code>draftline \
             notify set FILE</code>.</p>",
        ),
        Some((version, settings)) => {
            let _ = write!(
                main,
                "<p class=\"muted\">Settings version {version}. Secrets are never shown.</p><table><thead><tr>\
                 <th>Endpoint</th><th>URL</th><th>Events</th><th>Secrets</th></tr></thead><tbody>"
            );
            for endpoint in &settings.endpoints {
                let events: Vec<&str> = endpoint.events.iter().map(|e| e.as_str()).collect();
                let _ = write!(
                    main,
                    "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
                    text(&endpoint.id),
                    text(&endpoint.url),
                    text(&events.join(", ")),
                    if endpoint.secrets.len() > 1 {
                        "2 (rotating)"
                    } else {
                        "1"
                    }
                );
            }
            main.push_str("</tbody></table>");
        }
    }
    main.push_str("<h2>Recent deliveries</h2>");
    if deliveries.is_empty() {
        main.push_str("<p class=\"muted\">None yet.</p>");
        return Ok(main);
    }
    main.push_str(
        "<table><thead><tr><th>Event</th><th>Type</th><th>Endpoint</th><th>State</th><th>Attempts</th>\
         <th>Last answer</th><th></th></tr></thead><tbody>",
    );
    let csrf = cx.csrf();
    for delivery in &deliveries {
        main.push_str(&row(delivery, &csrf));
    }
    main.push_str("</tbody></table>");
    Ok(main)
}

fn row(delivery: &Delivery, csrf: &str) -> String {
    let answer = match (delivery.last_status, &delivery.last_error) {
        (_, Some(error)) => error.clone(),
        (Some(status), None) => format!("answered {status}"),
        (None, None) => String::new(),
    };
    let action = if delivery.state == "dead" {
        format!(
            "<form method=\"post\" action=\"/review/notifications/send-again\">\
             <input type=\"hidden\" name=\"csrf\" value=\"{}\">\
             <input type=\"hidden\" name=\"event_id\" value=\"{}\">\
             <input type=\"hidden\" name=\"endpoint\" value=\"{}\">\
             <button type=\"submit\">Send again</button></form>",
            attr(csrf),
            attr(&delivery.event_id),
            attr(&delivery.endpoint)
        )
    } else {
        String::new()
    };
    format!(
        "<tr class=\"delivery delivery-{state}\"><td><code>{}</code></td><td>{}</td><td>{}</td>\
         <td><span class=\"badge\">{state}</span></td><td class=\"attempts\">{}</td><td>{}</td><td>{action}</td></tr>",
        text(&delivery.event_id),
        text(&delivery.event_type),
        text(&delivery.endpoint),
        delivery.attempts,
        text(&answer),
        state = text(&delivery.state),
    )
}
