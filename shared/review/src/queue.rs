//! `GET /review`: the queue of agent drafts of the person's branch, newest
//! first, with what a reviewer decides on: who the agent acted for, which
//! model and prompt version, the total, how old, and a link to its run.
//!
//! Filters: `kind` (`purchase_order`, `quote`) and `status`; pages are
//! continued with a sealed cursor bound to the person's branch and the
//! filters. A person sees the kinds their scopes allow (a read or approve
//! scope of purchasing for orders, of sales for quotes).
//!
//! A draft with an open twin (same counterparty, same items) is marked
//! "Possible duplicate", naming it, and one a person confirmed anyway says
//! so ([`crate::duplicates`]).
//!
//! Model and prompt version are not on the documents: they come from the
//! first audit item of each document (the call that drafted it), read
//! together for the page. That works the same on every backend, because
//! the audit is always in draftline's table.

use std::fmt::Write;

use bytes::Bytes;
use draftline_contract::ToolError;
use draftline_contract::cursor::CursorScope;
use draftline_erp::domain::{AgentDraft, DocumentKind, DraftFilter, OpenDraft};
use draftline_erp::port::Scope;
use http::{Request, Response, StatusCode};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::html::{self, attr, text};
use crate::web::{Fields, encode};
use crate::{Context, duplicates, may_see, trail};

/// Drafts per page.
pub const PAGE_SIZE: usize = 20;

/// The statuses a queue may be filtered by.
pub const STATUSES: [&str; 6] = ["draft", "approved", "rejected", "sent", "received", "cancelled"];

#[derive(Serialize, Deserialize)]
struct Position {
    after: String,
}

fn parse_kind(value: Option<&str>) -> Result<Option<DocumentKind>, ToolError> {
    match value {
        None => Ok(None),
        Some("purchase_order") => Ok(Some(DocumentKind::PurchaseOrder)),
        Some("quote") => Ok(Some(DocumentKind::Quote)),
        Some(other) => Err(ToolError::invalid(
            "kind",
            format!(
                "'{}' is not a kind of draft. Allowed: purchase_order, quote (or none for both).",
                other.chars().take(40).collect::<String>()
            ),
        )),
    }
}

fn parse_status(value: Option<&str>) -> Result<Option<String>, ToolError> {
    match value {
        None => Ok(None),
        Some(status) if STATUSES.contains(&status) => Ok(Some(status.to_owned())),
        Some(other) => Err(ToolError::invalid(
            "status",
            format!(
                "'{}' is not a status. Allowed: {} (or none for all).",
                other.chars().take(40).collect::<String>(),
                STATUSES.join(", ")
            ),
        )),
    }
}

/// `GET /review`.
pub async fn page(cx: &Context<'_>, request: &Request<Bytes>) -> Response<Bytes> {
    match render(cx, request).await {
        Ok(main) => cx.page(StatusCode::OK, "Agent drafts", &main),
        Err(err) => cx.error_page(&err),
    }
}

async fn render(cx: &Context<'_>, request: &Request<Bytes>) -> Result<String, ToolError> {
    let query = Fields::of_query(request.uri());
    let asked_kind = parse_kind(query.get("kind"))?;
    let status = parse_status(query.get("status"))?;
    let person = cx.person();
    let visible: Vec<DocumentKind> = [DocumentKind::PurchaseOrder, DocumentKind::Quote]
        .into_iter()
        .filter(|kind| may_see(person, *kind))
        .collect();
    let mut main = String::from("<h1>Agent drafts</h1>");
    let _ = write!(
        main,
        "<p class=\"muted\">Drafts agents made for branch <strong>{}</strong>, newest first. Read every line \
         before you decide: the agent chose the items, quantities and vendor; the prices come from the price \
         lists.</p>",
        text(person.branch().as_str())
    );
    if visible.is_empty() {
        main.push_str(&html::notice(
            "warn",
            "Your sign-in grants no scope to see drafts (purchase orders need purchasing:read or \
             purchasing:approve; quotes need sales:read or sales:approve).",
        ));
        return Ok(main);
    }
    let kind = match (asked_kind, visible.as_slice()) {
        (Some(kind), _) if !visible.contains(&kind) => {
            return Err(ToolError::Forbidden {
                scope: crate::approve_scope(kind).to_owned(),
                message: format!(
                    "Your sign-in cannot see {}: that needs {}.",
                    kind_plural(kind),
                    match kind {
                        DocumentKind::PurchaseOrder => "purchasing:read or purchasing:approve",
                        DocumentKind::Quote => "sales:read or sales:approve",
                    }
                ),
            });
        }
        (Some(kind), _) => Some(kind),
        (None, [only]) => Some(*only),
        (None, _) => None,
    };
    filters(&mut main, &visible, kind, status.as_deref());

    let cursors = CursorScope::new(
        cx.app.cursors(),
        person,
        "review.queue",
        &json!({"kind": kind.map(DocumentKind::code), "status": status}),
    )?;
    let after: Option<Position> = cursors.open(query.get("cursor"))?;
    let filter = DraftFilter {
        kind,
        status: status.clone(),
    };
    let page = cx
        .pages
        .erp
        .agent_drafts(
            &Scope::of(person),
            &filter,
            after.as_ref().map(|p| p.after.as_str()),
            PAGE_SIZE,
        )
        .await?;
    // Model and prompt version: the call that drafted each document; and
    // the open drafts of each counterparty on the page, for near-duplicates.
    let groups: Vec<(DocumentKind, &str, &str)> = {
        let mut groups: Vec<(DocumentKind, &str, &str)> = Vec::new();
        for draft in page.items.iter().filter(|d| d.status == "draft") {
            match groups
                .iter_mut()
                .find(|(kind, code, _)| *kind == draft.kind && *code == draft.counterparty_code)
            {
                // The oldest draft of the group decides how far back to look.
                Some(group) => group.2 = group.2.min(draft.created_at.as_str()),
                None => groups.push((draft.kind, &draft.counterparty_code, &draft.created_at)),
            }
        }
        groups
    };
    // The runs of the page, each once, for the runs that reached a limit.
    let mut runs: Vec<&str> = page
        .items
        .iter()
        .filter_map(|draft| draft.drafted_by_agent_run.as_deref())
        .collect();
    runs.sort_unstable();
    runs.dedup();
    let (creations, open, reached) = futures::future::join3(
        futures::future::join_all(
            page.items
                .iter()
                .map(|draft| trail::creating_call(cx.app.table(), person, &draft.id)),
        ),
        futures::future::join_all(
            groups
                .iter()
                .map(|(kind, code, since)| duplicates::open_drafts(cx, *kind, code, since)),
        ),
        futures::future::join_all(
            runs.iter()
                .map(|run| trail::reached_a_limit(cx.app.table(), person, run)),
        ),
    )
    .await;
    let limited: Vec<&str> = runs
        .iter()
        .zip(reached)
        .filter_map(|(run, reached)| match reached {
            Ok(true) => Some(*run),
            Ok(false) => None,
            Err(err) => {
                // Without it the row carries no mark, and the page still renders.
                tracing::warn!(error = %err, "a run's limits not read");
                None
            }
        })
        .collect();
    let open: Vec<OpenDraft> = open
        .into_iter()
        .flat_map(|drafts| {
            drafts.unwrap_or_else(|err| {
                // Without them the rows carry no mark, and the page still renders.
                tracing::warn!(error = %err, "open drafts not read");
                Vec::new()
            })
        })
        .collect();
    if page.items.is_empty() {
        main.push_str(&html::notice(
            "info",
            if after.is_some() {
                "No more drafts."
            } else {
                "No agent drafts match these filters."
            },
        ));
    } else {
        main.push_str(
            "<table class=\"cards\"><caption>Each row is one draft an agent made; open it to read its lines \
             and decide.</caption><thead><tr><th scope=\"col\">Draft</th><th scope=\"col\">Status</th>\
             <th scope=\"col\">Counterparty</th><th scope=\"col\">On behalf of</th><th scope=\"col\">Model · \
             prompt</th><th scope=\"col\" class=\"num\">Total</th><th scope=\"col\">Drafted</th>\
             <th scope=\"col\">Run</th></tr></thead><tbody>",
        );
        let now = cx.app.clock().now();
        for (draft, created) in page.items.iter().zip(creations) {
            // A trail that cannot be read leaves the columns empty, not the page.
            let created = created.unwrap_or_else(|err| {
                tracing::warn!(error = %err, number = %draft.number, "creating call not read");
                None
            });
            let twins: Vec<&OpenDraft> = match duplicates::items_of(&draft.number, &open) {
                Some(items) if draft.status == "draft" => duplicates::twins(&draft.number, &items, &open)
                    .into_iter()
                    .filter(|twin| twin.counterparty == draft.counterparty_code)
                    .collect(),
                _ => Vec::new(),
            };
            let run_limited = draft
                .drafted_by_agent_run
                .as_deref()
                .is_some_and(|run| limited.contains(&run));
            row(&mut main, draft, created.as_ref(), &twins, run_limited, now);
        }
        main.push_str("</tbody></table>");
    }
    let base = format!(
        "/review?kind={}&status={}",
        encode(kind.map(DocumentKind::code).unwrap_or_default()),
        encode(status.as_deref().unwrap_or_default())
    );
    main.push_str("<nav class=\"pager\" aria-label=\"Pages\">");
    if after.is_some() {
        let _ = write!(main, "<a href=\"{}\">First page</a>", attr(&base));
    }
    if let Some(next) = page.next_after {
        let cursor = cursors.seal(&Position { after: next })?;
        let _ = write!(
            main,
            "<a href=\"{}&amp;cursor={}\" rel=\"next\">Next page →</a>",
            attr(&base),
            attr(&encode(&cursor))
        );
    }
    main.push_str("</nav>");
    Ok(main)
}

fn kind_plural(kind: DocumentKind) -> &'static str {
    match kind {
        DocumentKind::PurchaseOrder => "purchase orders",
        DocumentKind::Quote => "quotes",
    }
}

fn filters(main: &mut String, visible: &[DocumentKind], kind: Option<DocumentKind>, status: Option<&str>) {
    main.push_str("<form class=\"filters\" method=\"get\" action=\"/review\">");
    if visible.len() > 1 {
        main.push_str("<label>Kind<select name=\"kind\"><option value=\"\">Orders and quotes</option>");
        for option in visible {
            let _ = write!(
                main,
                "<option value=\"{}\"{}>{}</option>",
                option.code(),
                if kind == Some(*option) { " selected" } else { "" },
                match option {
                    DocumentKind::PurchaseOrder => "Purchase orders",
                    DocumentKind::Quote => "Quotes",
                }
            );
        }
        main.push_str("</select></label>");
    } else if let Some(kind) = kind {
        let _ = write!(main, "<input type=\"hidden\" name=\"kind\" value=\"{}\">", kind.code());
    }
    main.push_str("<label>Status<select name=\"status\"><option value=\"\">Any status</option>");
    for option in STATUSES {
        let _ = write!(
            main,
            "<option value=\"{option}\"{}>{}</option>",
            if status == Some(option) { " selected" } else { "" },
            match option {
                "draft" => "Waiting for review",
                "approved" => "Approved",
                "rejected" => "Rejected",
                "sent" => "Sent",
                "received" => "Received",
                _ => "Cancelled",
            }
        );
    }
    main.push_str("</select></label><button type=\"submit\" class=\"plain\">Filter</button></form>");
}

fn row(
    main: &mut String,
    draft: &AgentDraft,
    created: Option<&trail::CallRecord>,
    twins: &[&OpenDraft],
    run_limited: bool,
    now: chrono::DateTime<chrono::Utc>,
) {
    let mut marks = String::new();
    if !twins.is_empty() {
        let numbers: Vec<String> = twins.iter().map(|t| text(&t.number).to_string()).collect();
        let _ = write!(
            marks,
            "<br><span class=\"badge status-duplicate\">Possible duplicate</span> <span class=\"small\">same items as \
             {}</span>",
            numbers.join(", ")
        );
    }
    if created
        .and_then(|c| c.confirmed.as_ref())
        .is_some_and(|(decision, _)| decision == "create_another")
    {
        marks.push_str(
            "<br><span class=\"small muted\">The agent was asked and a person confirmed: create another.</span>",
        );
    }
    let kind = match draft.kind {
        DocumentKind::PurchaseOrder => "Purchase order",
        DocumentKind::Quote => "Quote",
    };
    let model = created
        .map(|c| {
            format!(
                "{}<br><span class=\"small muted\">{}</span>",
                text(c.model.as_deref().unwrap_or("model not sent")),
                text(c.prompt_version.as_deref().unwrap_or("prompt not sent"))
            )
        })
        .unwrap_or_else(|| "<span class=\"muted\">not recorded</span>".to_owned());
    let run = match &draft.drafted_by_agent_run {
        Some(run) if run_limited => format!(
            "<a href=\"/review/runs/{}#limits\">{}</a><br><span class=\"badge status-limit\">Run reached a \
             limit</span>",
            attr(&encode(run)),
            text(run)
        ),
        Some(run) => format!("<a href=\"/review/runs/{}\">{}</a>", attr(&encode(run)), text(run)),
        None => "<span class=\"muted\">no run id</span>".to_owned(),
    };
    let _ = write!(
        main,
        "<tr><td data-label=\"Draft\"><a href=\"/review/documents/{number_attr}\"><strong>{number}</strong></a><br>\
         <span class=\"small muted\">{kind}</span> {badge}{marks}</td>\
         <td data-label=\"Status\">{status}</td>\
         <td data-label=\"Counterparty\">{name}<br><span class=\"small muted\">{code}</span></td>\
         <td data-label=\"On behalf of\">{behalf}</td>\
         <td data-label=\"Model · prompt\">{model}</td>\
         <td data-label=\"Total\" class=\"num\">{total}</td>\
         <td data-label=\"Drafted\">{age}<br><span class=\"small muted\">{at}</span></td>\
         <td data-label=\"Run\">{run}</td></tr>",
        number_attr = attr(&encode(&draft.number)),
        number = text(&draft.number),
        badge = html::AGENT_BADGE,
        status = html::status_badge(&draft.status),
        name = text(&draft.counterparty_name),
        code = text(&draft.counterparty_code),
        behalf = text(&draft.drafted_on_behalf_of),
        total = html::money(&draft.total.amount, &draft.total.currency),
        age = text(&html::age(&draft.created_at, now)),
        at = html::time(&draft.created_at),
    );
}
