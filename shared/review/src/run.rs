//! `GET /review/runs/<run id>`: every tool call of one agent run made in
//! the person's branch, in order, including denied, failed and replayed
//! ones: time, tool, outcome, the error text the model got, the document
//! produced, the tool-call id, model and prompt version, and the arguments
//! as the audit stored them (shown as text, never interpreted).
//!
//! A person sees the calls of the tools whose module their scopes read or
//! approve ([`RunView`]); a run with none of those reads like a missing
//! one. The header card (on behalf of, model, prompt version) is read only
//! from calls that passed authentication and the scope check, and shows
//! every value when they disagree.
//!
//! Pages hold at most [`PAGE_CALLS`] calls and about [`PAGE_BUDGET_BYTES`]
//! of rows, so a run of any length renders in bounded pages; the cursor is
//! sealed to the person's branch and the run. A run with no call in the
//! person's branch reads exactly like one that does not exist.

use std::fmt::Write;

use bytes::Bytes;
use draftline_contract::ToolError;
use draftline_contract::cursor::CursorScope;
use http::{Request, Response, StatusCode};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::html::{self, attr, text};
use crate::trail::{self, CallRecord, RunView};
use crate::web::{Fields, encode};
use crate::{Context, may_see};
use draftline_contract::error::ReachedLimit;
use draftline_erp::domain::{Decision, DocumentKind, Verdict};
use draftline_erp::port::{Approvals, Scope};

/// The most calls one page of a run shows.
pub const PAGE_CALLS: usize = 50;
/// The most bytes of rows one page renders before it stops short (the
/// page itself stays below twice this).
pub const PAGE_BUDGET_BYTES: usize = 160 * 1024;

#[derive(Serialize, Deserialize)]
struct Position {
    after: String,
}

/// Whether `run` is a run id as `X-Agent-Run-Id` allows (1-128 of
/// letters, digits, `.`, `_`, `-`, `:`).
fn valid_run_id(run: &str) -> bool {
    !run.is_empty()
        && run.len() <= 128
        && run
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b':'))
}

fn not_found(run: &str) -> ToolError {
    ToolError::NotFound(format!(
        "No calls of run {} were made in your branch.",
        run.chars().take(128).collect::<String>()
    ))
}

/// `GET /review/runs/<run id>`.
pub async fn page(cx: &Context<'_>, request: &Request<Bytes>, run: &str) -> Response<Bytes> {
    let run = percent_decoded(run);
    match render(cx, request, &run).await {
        Ok(main) => cx.page(StatusCode::OK, &format!("Run {run}"), &main),
        Err(err) => cx.error_page(&err),
    }
}

/// A path segment, percent-decoded (run ids may carry `:`).
fn percent_decoded(segment: &str) -> String {
    form_urlencoded::parse(format!("x={}", segment.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

async fn render(cx: &Context<'_>, request: &Request<Bytes>, run: &str) -> Result<String, ToolError> {
    if !valid_run_id(run) {
        return Err(not_found(run));
    }
    let person = cx.person();
    let query = Fields::of_query(request.uri());
    let cursors = CursorScope::new(cx.app.cursors(), person, "review.run", &json!({ "run": run }))?;
    let after: Option<Position> = cursors.open(query.get("cursor"))?;
    let view = RunView::of(person, cx.app.registry().modules().iter().map(|m| m.name));
    let page = trail::run_calls(
        cx.app.table(),
        person,
        &view,
        run,
        after.as_ref().map(|p| p.after.as_str()),
        PAGE_CALLS,
    )
    .await?;
    // A run none of whose calls the person may read reads like a missing one.
    if after.is_none() && page.more_after.is_none() && !page.calls.iter().any(|c| view.reads(c)) {
        return Err(not_found(run));
    }
    let mut main = String::new();
    let _ = write!(
        main,
        "<h1>Run <code>{}</code></h1><p class=\"muted\">Every call this agent run made in branch {} with the tools \
         your sign-in may read, in order — including refused, failed and replayed ones. Arguments are shown exactly \
         as they arrived.</p>",
        text(run),
        text(person.branch().as_str())
    );
    if after.is_none() {
        header_card(&mut main, &page.calls, page.more_after.is_some());
        run_use(cx, &mut main, run, &page.calls).await;
    }
    main.push_str(
        "<table class=\"cards\"><caption>Calls of this run</caption><thead><tr><th scope=\"col\">Time</th>\
         <th scope=\"col\">Tool</th><th scope=\"col\">Outcome</th><th scope=\"col\">What the model was told</th>\
         <th scope=\"col\">Document</th><th scope=\"col\">Tool call · model · prompt</th>\
         <th scope=\"col\">Arguments</th><th scope=\"col\">Where the time went</th></tr></thead><tbody>",
    );
    let rows_start = main.len();
    let mut more_after = page.more_after.clone();
    for (shown, call) in page.calls.iter().enumerate() {
        if main.len() - rows_start > PAGE_BUDGET_BYTES && shown > 0 {
            // Out of room: the next page starts after the last row shown.
            more_after = page.calls.get(shown - 1).map(|c| c.position.clone());
            break;
        }
        row(&mut main, call, view.reads(call));
    }
    main.push_str("</tbody></table>");
    limits_reached(&mut main, &page.calls, &view);
    decided_in_the_erp(cx, &mut main, &page.calls).await;
    let base = format!("/review/runs/{}", encode(run));
    main.push_str("<nav class=\"pager\" aria-label=\"Pages\">");
    if after.is_some() {
        let _ = write!(main, "<a href=\"{}\">First page</a>", attr(&base));
    }
    if let Some(next) = more_after {
        let cursor = cursors.seal(&Position { after: next })?;
        let _ = write!(
            main,
            "<a href=\"{}?cursor={}\" rel=\"next\">Next page →</a>",
            attr(&base),
            attr(&encode(&cursor))
        );
    }
    main.push_str("</nav>");
    Ok(main)
}

/// The run's header card: who the agent acted for, which model and prompt
/// version, read only from calls that passed authentication and the scope
/// check (a refused caller cannot set what a reviewer reads first); every
/// value when the calls disagree.
fn header_card(main: &mut String, calls: &[CallRecord], more: bool) {
    let trusted: Vec<&CallRecord> = calls.iter().filter(|c| c.was_authorized()).collect();
    if trusted.is_empty() {
        main.push_str(&html::notice(
            "warn",
            "No call of this run shown here passed authentication and the scope check: who it acted for, its \
             model and its prompt version are not known. The refused calls are listed below under the caller's \
             own name.",
        ));
        return;
    }
    let values = |field: fn(&CallRecord) -> Option<&str>| {
        let mut seen: Vec<&str> = Vec::new();
        for call in &trusted {
            let value = field(call).unwrap_or("not sent");
            if !seen.contains(&value) {
                seen.push(value);
            }
        }
        let shown = seen
            .iter()
            .map(|v| text(v).to_string())
            .collect::<Vec<_>>()
            .join("<br>");
        if seen.len() > 1 {
            format!("{shown}<br><span class=\"small muted\">The run's calls disagree: every value is shown.</span>")
        } else {
            shown
        }
    };
    let _ = write!(
        main,
        "<div class=\"card\" id=\"run-facts\"><dl class=\"facts\"><dt>On behalf of</dt><dd>{}</dd><dt>Model</dt>\
         <dd>{}</dd><dt>Prompt version</dt><dd>{}</dd></dl><p class=\"small muted\">From the {} call(s) {}that passed \
         authentication and the scope check; refused calls cannot set these.</p></div>",
        values(|c| Some(c.on_behalf_of.as_str())),
        values(|c| c.model.as_deref()),
        values(|c| c.prompt_version.as_deref()),
        trusted.len(),
        if more { "on this page " } else { "" },
    );
}

/// Where people decide in the ERP (Tryton), the decisions on the run's
/// documents as the ERP tells them (who changed the document last, and
/// when): they are not in draftline's audit trail, which never saw them.
async fn decided_in_the_erp(cx: &Context<'_>, main: &mut String, calls: &[CallRecord]) {
    let Approvals::InErp { erp } = cx.pages.erp().approvals() else {
        return;
    };
    let mut numbers: Vec<&str> = calls
        .iter()
        .filter(|c| c.outcome == "ok" || c.outcome == "replayed")
        .filter_map(|c| c.document.as_ref().map(|(number, _)| number.as_str()))
        .collect();
    numbers.sort_unstable();
    numbers.dedup();
    let scope = Scope::of(cx.person());
    let read = numbers.iter().map(|number| async move {
        let decision = match DocumentKind::of_number(number) {
            Some(kind) if may_see(cx.person(), kind) => match kind {
                DocumentKind::PurchaseOrder => cx
                    .pages
                    .erp()
                    .purchase_order(&scope, number)
                    .await
                    .map(|po| po.and_then(|po| po.decision.map(|d| (d, po.status.code().to_owned())))),
                DocumentKind::Quote => cx
                    .pages
                    .erp()
                    .quote(&scope, number)
                    .await
                    .map(|q| q.and_then(|q| q.decision.map(|d| (d, q.status.code().to_owned())))),
            },
            _ => Ok(None),
        };
        (*number, decision)
    });
    let decided: Vec<(&str, Decision, String)> = futures::future::join_all(read)
        .await
        .into_iter()
        .filter_map(|(number, decision)| match decision {
            Ok(found) => found.map(|(decision, status)| (number, decision, status)),
            Err(err) => {
                tracing::warn!(error = %err, number, "a decision in the ERP was not read");
                None
            }
        })
        .collect();
    if decided.is_empty() {
        return;
    }
    let _ = write!(
        main,
        "<section id=\"decided-in-erp\" class=\"card\"><h2>Decided in {erp}</h2><p class=\"small muted\">People \
         decide on these documents in {erp}'s own workflow; {erp} tells who changed each one last and when.</p><ul>",
        erp = text(erp)
    );
    for (number, decision, status) in decided {
        let verdict = match decision.verdict {
            Verdict::Approved => "approved",
            Verdict::Rejected => "rejected",
        };
        let _ = write!(
            main,
            "<li><a href=\"/review/documents/{}\">{}</a> {verdict} ({} in {}) by <strong>{}</strong> at {}</li>",
            attr(&encode(number)),
            text(number),
            text(&status),
            text(erp),
            text(&decision.decided_by),
            html::time(&decision.decided_at),
        );
    }
    main.push_str("</ul></section>");
}

fn row(main: &mut String, call: &CallRecord, readable: bool) {
    let told = match (&call.code, &call.error_message) {
        (Some(code), Some(message)) => format!("<strong>{}</strong> {}", text(code), text(message)),
        (Some(code), None) => format!("<strong>{}</strong>", text(code)),
        _ => "<span class=\"muted\">—</span>".to_owned(),
    };
    let document = match &call.document {
        Some((number, _)) => format!(
            "<a href=\"/review/documents/{}\">{}</a>",
            attr(&encode(number)),
            text(number)
        ),
        None => "<span class=\"muted\">—</span>".to_owned(),
    };
    let arguments = match &call.arguments {
        Some(_) if !readable => {
            "<span class=\"muted\">withheld: not a tool of a module your sign-in reads</span>".to_owned()
        }
        Some((stored, truncated)) => format!(
            "<details><summary>Show</summary><pre class=\"args\">{}</pre>{}</details>",
            text(&html::arguments(stored)),
            if *truncated {
                "<p class=\"small muted\">Cut: the audit keeps the first 4 KiB.</p>"
            } else {
                ""
            }
        ),
        None => "<span class=\"muted\">none</span>".to_owned(),
    };
    let _ = write!(
        main,
        "<tr><td data-label=\"Time\">{at}</td>\
         <td data-label=\"Tool\"><code>{tool}</code><br><span class=\"small muted\">{behalf} · {transport} · HTTP \
         {status}</span></td>\
         <td data-label=\"Outcome\">{outcome}</td>\
         <td data-label=\"What the model was told\">{told}</td>\
         <td data-label=\"Document\">{document}</td>\
         <td data-label=\"Tool call · model · prompt\"><code>{call_id}</code><br><span class=\"small\">{model}</span>\
         <br><span class=\"small muted\">{prompt}</span></td>\
         <td data-label=\"Arguments\">{arguments}</td>\
         <td data-label=\"Where the time went\">{timing}</td></tr>",
        at = html::time(&call.at),
        tool = text(&call.tool),
        behalf = text(&call.on_behalf_of),
        transport = text(&call.transport),
        status = text(&call.http_status),
        outcome = html::outcome_badge(&call.outcome),
        call_id = text(call.tool_call_id.as_deref().unwrap_or("—")),
        model = text(call.model.as_deref().unwrap_or("—")),
        prompt = text(call.prompt_version.as_deref().unwrap_or("—")),
        timing = timing(call),
    );
}

/// The run's use of each per-run limit of the tenant's policy (as it
/// applies to the person's branch), read from the run's counter: what the
/// drafts of this run counted, and what is left. A run id names a run only
/// within its owner's calls, so the counter read is that of each person the
/// run's authorized calls acted for (one, nearly always; each their own
/// when several sent the same id). Nothing without a policy.
async fn run_use(cx: &Context<'_>, main: &mut String, run: &str, calls: &[CallRecord]) {
    let person = cx.person();
    let mut owners: Vec<draftline_contract::identity::UserId> = Vec::new();
    for call in calls.iter().filter(|c| c.was_authorized()) {
        if let Ok(user) = draftline_contract::identity::UserId::parse(&call.on_behalf_of)
            && !owners.contains(&user)
        {
            owners.push(user);
        }
    }
    let several = owners.len() > 1;
    for (i, user) in owners.iter().enumerate() {
        let owner = draftline_contract::identity::Owner {
            tenant: person.tenant(),
            branch: person.branch(),
            user,
        };
        // The first owner's section is `#use`, as a one-owner run's is.
        let anchor = if i == 0 { "use".to_owned() } else { format!("use-{i}") };
        owner_use(cx, main, run, owner, (several, &anchor)).await;
    }
}

/// One owner's use of run `run`'s limits, as the section `anchor`
/// (`several`: the run has other owners, and the heading names whose this
/// is).
async fn owner_use(
    cx: &Context<'_>,
    main: &mut String,
    run: &str,
    owner: draftline_contract::identity::Owner<'_>,
    (several, anchor): (bool, &str),
) {
    use draftline_contract::policy::Mode;
    use draftline_contract::policy::amount::format_hundredths;
    use draftline_contract::policy::standing::Examiner;
    let heading = if several {
        format!("This run's use of its limits, for {}", text(owner.user.as_str()))
    } else {
        "This run's use of its limits".to_owned()
    };
    let standing = cx
        .app
        .examiner()
        .standing(owner, Some(run), &[], cx.app.clock().now())
        .await;
    let standing = match standing {
        Ok(Some(standing)) => standing,
        Ok(None) => return,
        Err(err) => {
            tracing::warn!(error = %err, "a run's use of its limits was not read");
            let _ = write!(
                main,
                "<section id=\"{anchor}\" class=\"card\"><h2>{heading}</h2><p class=\"muted\">Could not be read just \
                 now; reload the page to try again.</p></section>"
            );
            return;
        }
    };
    let applied = &standing.applied;
    let _ = write!(
        main,
        "<section id=\"{anchor}\" class=\"card\"><h2>{heading}</h2><p class=\"small muted\">The tenant's policy, \
         version {version}, in {mode} mode, as it applies to branch {branch}. Each draft {user} made in this run \
         counts when it is created; a refused call counts nothing.</p>",
        version = applied.version,
        mode = match applied.mode {
            Mode::Enforce => "enforce",
            Mode::Observe => "observe",
        },
        branch = text(owner.branch.as_str()),
        user = text(owner.user.as_str()),
    );
    let mut uses: Vec<(String, String, String, String)> = Vec::new();
    if let Some(drafts) = standing.run_drafts {
        uses.push((
            "<code>per_run.max_drafts</code>".to_owned(),
            drafts.used.to_string(),
            format!("{} drafts", drafts.max),
            drafts.left().to_string(),
        ));
    }
    for (currency, value) in &standing.run_value {
        uses.push((
            format!("<code>per_run.max_value</code> in {}", text(currency)),
            format_hundredths(value.used),
            format!("{} {}", format_hundredths(value.max), text(currency)),
            format_hundredths(value.left()),
        ));
    }
    if uses.is_empty() {
        main.push_str("<p>The policy sets no limit per agent run.</p></section>");
        return;
    }
    main.push_str("<ul>");
    for (name, used, max, left) in uses {
        let _ = write!(
            main,
            "<li>{name}: <strong>{used}</strong> of {max} used, {left} left</li>"
        );
    }
    main.push_str("</ul></section>");
}

/// The calls of this page that reached a limit of the tenant's policy:
/// refused by it, or let pass by observe mode (what would have been
/// refused), with the use the limit counted. Nothing when none did.
fn limits_reached(main: &mut String, calls: &[CallRecord], view: &RunView) {
    let reached: Vec<(&CallRecord, &ReachedLimit)> = calls
        .iter()
        .filter(|call| view.reads(call))
        .flat_map(|call| call.limits.iter().map(move |limit| (call, limit)))
        .collect();
    if reached.is_empty() {
        return;
    }
    main.push_str(
        "<section id=\"limits\" class=\"card\"><h2>Limits this run reached</h2><p class=\"small muted\">Limits \
         of the tenant's policy (<code>draftline policy show</code>). A refused call created nothing; in observe \
         mode the call was let through and is listed as what would have been refused.</p><ul>",
    );
    for (call, limit) in reached {
        let verdict = if call.limits_observed {
            "<strong>would have been refused</strong> (observe mode: it went through)"
        } else {
            "<strong>refused</strong>: nothing was created"
        };
        let _ = write!(
            main,
            "<li>{at} <code>{tool}</code>: <code>{name}</code> for {applies}: {used} of {max} {unit} used, this call \
             {this} · {verdict}</li>",
            at = html::time(&call.at),
            tool = text(&call.tool),
            name = text(&limit.name),
            applies = text(&limit.applies_to),
            used = text(limit.used.as_deref().unwrap_or("?")),
            max = text(limit.max.as_deref().unwrap_or("?")),
            unit = text(&limit.unit),
            this = text(&limit.this_call),
        );
    }
    main.push_str("</ul></section>");
}

/// A call's time as a bar per stage (a `<meter>` each: the page's policy
/// allows no inline style), the whole, and the trace it belongs to.
fn timing(call: &CallRecord) -> String {
    let Some(timing) = &call.timing else {
        return "<span class=\"muted\">not recorded</span>".to_owned();
    };
    let ms = |us: u64| format!("{:.1} ms", us as f64 / 1000.0);
    let mut cell = format!(
        "<span class=\"small\">{} in all</span><ul class=\"timing\">",
        ms(timing.elapsed)
    );
    for (stage, us) in &timing.stages {
        let _ = write!(
            cell,
            "<li><span class=\"stage\">{stage}</span><meter min=\"0\" max=\"{max}\" value=\"{us}\" \
             title=\"{stage}: {spent}\">{spent}</meter><span class=\"num small\">{spent}</span></li>",
            max = timing.elapsed.max(1),
            spent = ms(*us),
        );
    }
    cell.push_str("</ul>");
    if let Some(trace) = &call.trace_id {
        let _ = write!(
            cell,
            "<span class=\"small muted\">trace <code>{}</code></span>",
            text(trace)
        );
    }
    cell
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_follow_the_header_grammar() {
        assert!(valid_run_id("run-sby-reorder-2026-11-26"));
        assert!(valid_run_id("a:b.c_d"));
        assert!(!valid_run_id(""));
        assert!(!valid_run_id("x y"));
        assert!(!valid_run_id("<script>"));
        assert!(!valid_run_id(&"r".repeat(129)));
        assert_eq!(percent_decoded("a%3Ab"), "a:b");
        assert_eq!(percent_decoded("a+b"), "a+b");
    }
}
