//! `GET /review/documents/<number>`: one draft as a reviewer reads it:
//! every line with its unit, quantity in the base unit, price and where the
//! price came from, the totals, who it was drafted for and by which run,
//! the decision once there is one, and its status history (the audit items
//! of the document, the decision's own included).
//!
//! Where approvals happen in draftline (the built-in backend) and the
//! draft still waits, the page offers approve and reject (a reason is
//! required), each form with the session's CSRF token and its own decision
//! id; where they happen in the ERP it links there instead.

use std::fmt::Write;

use bytes::Bytes;
use draftline_contract::ToolError;
use draftline_erp::domain::{AgentDraft, Document, DocumentKind, OpenDraft, PurchaseOrder, Quote, Verdict};
use draftline_erp::numbers;
use draftline_erp::port::{Approvals, Scope};
use draftline_server::events::{Drafted, EventTotal};
use http::{Request, Response, StatusCode};

use crate::html::{self, attr, text};
use crate::trail::{self, CallRecord};
use crate::web::{Fields, encode};
use crate::{Context, approve_scope, duplicates, may_see};

/// How many history entries a document page shows.
pub const HISTORY_LIMIT: i32 = 100;

/// The one text for a document that is missing, of another branch, or of
/// a kind the person may not see.
pub fn not_found(number: &str) -> ToolError {
    ToolError::NotFound(format!(
        "There is no document {} in your branch.",
        number.chars().take(40).collect::<String>()
    ))
}

/// The kind of `number`, if it is a document number at all.
pub fn kind_of(number: &str) -> Option<DocumentKind> {
    let kind = DocumentKind::of_number(number)?;
    let prefix = match kind {
        DocumentKind::PurchaseOrder => "PO",
        DocumentKind::Quote => "QT",
    };
    numbers::is_document_number(prefix, number).then_some(kind)
}

/// How `entry` (a document's queue entry) was drafted, as a decision's
/// event repeats it: its run and its total.
pub fn drafted(entry: &AgentDraft) -> Drafted {
    Drafted {
        run_id: entry.drafted_by_agent_run.clone(),
        drafted_for: Some(entry.drafted_on_behalf_of.clone()),
        total: Some(EventTotal {
            amount: entry.total.amount.clone(),
            currency: entry.total.currency.clone(),
        }),
    }
}

/// Reads document `number` of the person's branch, if they may see its kind.
pub async fn read(cx: &Context<'_>, number: &str) -> Result<Document, ToolError> {
    let kind = kind_of(number).ok_or_else(|| not_found(number))?;
    if !may_see(cx.person(), kind) {
        return Err(not_found(number));
    }
    let scope = Scope::of(cx.person());
    let found = match kind {
        DocumentKind::PurchaseOrder => (cx.pages.erp.purchase_order(&scope, number).await?).map(Document::from),
        DocumentKind::Quote => cx.pages.erp.quote(&scope, number).await?.map(Document::from),
    };
    found.ok_or_else(|| not_found(number))
}

/// `GET /review/documents/<number>`.
pub async fn page(cx: &Context<'_>, request: &Request<Bytes>, number: &str) -> Response<Bytes> {
    let query = Fields::of_query(request.uri());
    let document = match read(cx, number).await {
        Ok(document) => document,
        Err(err) => return cx.error_page(&err),
    };
    let entry = document.queue_entry();
    let history = trail::document_calls(cx.app.table(), cx.person(), &entry.id, HISTORY_LIMIT)
        .await
        .unwrap_or_else(|err| {
            tracing::warn!(error = %err, number, "history not read");
            Vec::new()
        });
    // Its open twins: same counterparty, same items (a page that cannot
    // read them still shows the document).
    let open = duplicates::open_drafts(cx, entry.kind, &entry.counterparty_code, &entry.created_at)
        .await
        .unwrap_or_else(|err| {
            tracing::warn!(error = %err, number, "open drafts not read");
            Vec::new()
        });
    let lines = document.open_draft().lines;
    let items = lines.iter().map(|line| line.item_code.as_str()).collect();
    let twins = duplicates::twins(number, &items, &open);
    let main = render(cx, number, (&document, &entry), &history, &twins, query.get("decided"));
    cx.page(StatusCode::OK, number, &main)
}

fn render(
    cx: &Context<'_>,
    number: &str,
    (document, entry): (&Document, &AgentDraft),
    history: &[CallRecord],
    twins: &[&OpenDraft],
    decided: Option<&str>,
) -> String {
    let mut main = String::new();
    let by_agent =
        entry.drafted_by_agent_run.is_some() || history.iter().any(|c| c.tool.ends_with("_draft") && c.outcome == "ok");
    let _ = write!(
        main,
        "<h1>{} {} {}</h1>",
        text(number),
        if by_agent { html::AGENT_BADGE } else { "" },
        html::status_badge(document.status())
    );
    match decided {
        Some("approved") => main.push_str(&html::notice("ok", &format!("You approved {number}."))),
        Some("rejected") => main.push_str(&html::notice("ok", &format!("You rejected {number}."))),
        Some("already") => main.push_str(&html::notice(
            "info",
            &format!("{number} was already decided by that same form; nothing changed."),
        )),
        _ => {}
    }
    near_duplicates(&mut main, entry, history, twins);
    match document {
        Document::PurchaseOrder(po) => po_body(&mut main, po),
        Document::Quote(quote) => quote_body(&mut main, quote),
    }
    decision_section(cx, &mut main, number, entry);
    history_section(&mut main, history);
    main
}

/// What a reviewer must know before deciding on a draft that may be a
/// second copy: that the agent was asked and a person confirmed "create
/// another" (from the audit of the call that created it), and the open
/// drafts of the same counterparty and items, with how far apart.
fn near_duplicates(main: &mut String, document: &AgentDraft, history: &[CallRecord], twins: &[&OpenDraft]) {
    let confirmed = history
        .iter()
        .find(|c| c.tool.ends_with("_draft") && c.outcome == "ok" && c.document.is_some())
        .and_then(|c| c.confirmed.as_ref())
        .filter(|(decision, _)| decision == "create_another");
    if let Some((_, existing)) = confirmed {
        main.push_str(&html::notice(
            "warn",
            &format!(
                "Near-duplicate: the agent was asked and confirmed: create another. When this draft was made, \
                 {existing} already drafted the same {} and items; the person the agent acted for chose to make a \
                 second one anyway.",
                counterparty_word(document.kind)
            ),
        ));
    }
    if twins.is_empty() {
        return;
    }
    let _ = write!(
        main,
        "<section id=\"near-duplicates\" class=\"card\" aria-label=\"Possible duplicates\"><h2>Possible \
         duplicates</h2><p class=\"small muted\">Open drafts of your branch for the same {} and items:</p><ul>",
        counterparty_word(document.kind)
    );
    for twin in twins {
        let _ = write!(
            main,
            "<li><a href=\"/review/documents/{}\">{}</a>: same {} and items ({}), {}{}</li>",
            attr(&encode(&twin.number)),
            text(&twin.number),
            counterparty_word(document.kind),
            text(&twin.describe_lines()),
            text(&duplicates::apart(&twin.created_at, &document.created_at)),
            twin.agent_run
                .as_deref()
                .map(|run| format!(", run {}", run_link(Some(run))))
                .unwrap_or_default(),
        );
    }
    main.push_str("</ul></section>");
}

fn counterparty_word(kind: DocumentKind) -> &'static str {
    match kind {
        DocumentKind::PurchaseOrder => "vendor",
        DocumentKind::Quote => "customer",
    }
}

fn run_link(run: Option<&str>) -> String {
    match run {
        Some(run) => format!("<a href=\"/review/runs/{}\">{}</a>", attr(&encode(run)), text(run)),
        None => "<span class=\"muted\">none (not drafted in an agent run)</span>".to_owned(),
    }
}

fn note(note: Option<&str>) -> String {
    match note {
        Some(note) => text(note).to_string(),
        None => "<span class=\"muted\">none</span>".to_owned(),
    }
}

fn po_body(main: &mut String, po: &PurchaseOrder) {
    let _ = write!(
        main,
        "<div class=\"card\"><dl class=\"facts\">\
         <dt>Purchase order to</dt><dd>{vendor} <span class=\"muted\">{code}</span></dd>\
         <dt>Branch</dt><dd>{branch}</dd>\
         <dt>Needed by</dt><dd><time datetime=\"{needed}\">{needed}</time></dd>\
         <dt>Drafted</dt><dd>{created}</dd>\
         <dt>On behalf of</dt><dd>{behalf}</dd>\
         <dt>Agent run</dt><dd>{run}</dd>\
         <dt>Caller's reference</dt><dd><code>{client_ref}</code></dd>\
         <dt>Note for the reviewer</dt><dd>{note}</dd>\
         </dl></div>",
        vendor = text(&po.vendor.name),
        code = text(&po.vendor.code),
        branch = text(&po.branch_id),
        needed = po.needed_by,
        created = html::time(&po.created_at),
        behalf = text(&po.drafted_on_behalf_of),
        run = run_link(po.drafted_by_agent_run.as_deref()),
        client_ref = text(&po.client_ref),
        note = note(po.note.as_deref()),
    );
    main.push_str(
        "<h2>Lines</h2><table class=\"cards\"><thead><tr><th scope=\"col\">#</th><th scope=\"col\">Item</th>\
         <th scope=\"col\" class=\"num\">Quantity</th><th scope=\"col\" class=\"num\">In base unit</th>\
         <th scope=\"col\" class=\"num\">Unit price</th><th scope=\"col\">Price from</th>\
         <th scope=\"col\" class=\"num\">Line total</th></tr></thead><tbody>",
    );
    for line in &po.lines {
        let _ = write!(
            main,
            "<tr><td data-label=\"#\">{no}</td><td data-label=\"Item\"><code>{code}</code><br>{name}</td>\
             <td data-label=\"Quantity\" class=\"num\">{qty} {uom}</td>\
             <td data-label=\"In base unit\" class=\"num\">{base_qty} {base_uom}</td>\
             <td data-label=\"Unit price\" class=\"num\">{price}</td>\
             <td data-label=\"Price from\">{source}</td>\
             <td data-label=\"Line total\" class=\"num\">{total}</td></tr>",
            no = line.line_no,
            code = text(&line.item_code),
            name = text(&line.item_name),
            qty = line.qty,
            uom = line.uom,
            base_qty = line.base_qty,
            base_uom = line.base_uom,
            price = html::money(&line.unit_price.amount, &line.unit_price.currency),
            source = text(&line.price_source),
            total = html::money(&line.line_total.amount, &line.line_total.currency),
        );
    }
    let _ = write!(
        main,
        "</tbody></table><div class=\"card\"><dl class=\"facts\"><dt>Subtotal</dt><dd class=\"num\">{}</dd>\
         <dt>Total</dt><dd class=\"num\"><strong>{}</strong></dd></dl><p class=\"small muted\">{}. No tax on a \
         purchase draft; tax is applied when a person posts it.</p></div>",
        html::money(&po.subtotal.amount, &po.subtotal.currency),
        html::money(&po.total.amount, &po.total.currency),
        text(&po.rounding)
    );
}

fn quote_body(main: &mut String, quote: &Quote) {
    let _ = write!(
        main,
        "<div class=\"card\"><dl class=\"facts\">\
         <dt>Quote for</dt><dd>{customer} <span class=\"muted\">{code}</span></dd>\
         <dt>Branch</dt><dd>{branch}</dd>\
         <dt>Price list</dt><dd><code>{list}</code></dd>\
         <dt>Valid until</dt><dd><time datetime=\"{valid}\">{valid}</time></dd>\
         <dt>Credit</dt><dd>{credit}</dd>\
         <dt>Drafted</dt><dd>{created}</dd>\
         <dt>On behalf of</dt><dd>{behalf}</dd>\
         <dt>Agent run</dt><dd>{run}</dd>\
         <dt>Caller's reference</dt><dd><code>{client_ref}</code></dd>\
         <dt>Note for the reviewer</dt><dd>{note}</dd>\
         </dl></div>",
        customer = text(&quote.customer.name),
        code = text(&quote.customer.code),
        branch = text(&quote.branch_id),
        list = text(&quote.price_list),
        valid = quote.valid_until,
        credit = text(&quote.credit_check),
        created = html::time(&quote.created_at),
        behalf = text(&quote.drafted_on_behalf_of),
        run = run_link(quote.drafted_by_agent_run.as_deref()),
        client_ref = text(&quote.client_ref),
        note = note(quote.note.as_deref()),
    );
    main.push_str(
        "<h2>Lines</h2><table class=\"cards\"><thead><tr><th scope=\"col\">#</th><th scope=\"col\">Item</th>\
         <th scope=\"col\" class=\"num\">Quantity</th><th scope=\"col\" class=\"num\">Unit price</th>\
         <th scope=\"col\">Price from</th><th scope=\"col\" class=\"num\">Net</th><th scope=\"col\">Tax</th>\
         <th scope=\"col\" class=\"num\">Line total</th></tr></thead><tbody>",
    );
    for line in &quote.lines {
        let _ = write!(
            main,
            "<tr><td data-label=\"#\">{no}</td><td data-label=\"Item\"><code>{code}</code><br>{name}</td>\
             <td data-label=\"Quantity\" class=\"num\">{qty} {uom}<br><span class=\"small muted\">{base_qty} \
             {base_uom}</span></td>\
             <td data-label=\"Unit price\" class=\"num\">{price}</td>\
             <td data-label=\"Price from\">{source}</td>\
             <td data-label=\"Net\" class=\"num\">{net}</td>\
             <td data-label=\"Tax\">{tax_code} {rate}%<br><span class=\"num\">{tax}</span></td>\
             <td data-label=\"Line total\" class=\"num\">{total}</td></tr>",
            no = line.line_no,
            code = text(&line.item_code),
            name = text(&line.item_name),
            qty = line.qty,
            uom = line.uom,
            base_qty = line.base_qty,
            base_uom = line.base_uom,
            price = html::money(&line.unit_price.amount, &line.unit_price.currency),
            source = text(&line.price_source),
            net = html::money(&line.net_amount.amount, &line.net_amount.currency),
            tax_code = text(line.tax_code.code()),
            rate = text(&line.tax_rate_percent),
            tax = html::money(&line.tax_amount.amount, &line.tax_amount.currency),
            total = html::money(&line.line_total.amount, &line.line_total.currency),
        );
    }
    let _ = write!(
        main,
        "</tbody></table><div class=\"card\"><dl class=\"facts\"><dt>Subtotal</dt><dd class=\"num\">{}</dd>\
         <dt>Tax</dt><dd class=\"num\">{}</dd><dt>Total</dt><dd class=\"num\"><strong>{}</strong></dd></dl>\
         <p class=\"small muted\">{}.</p></div>",
        html::money(&quote.subtotal.amount, &quote.subtotal.currency),
        html::money(&quote.tax_total.amount, &quote.tax_total.currency),
        html::money(&quote.total.amount, &quote.total.currency),
        text(&quote.rounding)
    );
}

/// The desktop client's `tryton://host:port/<database>/model/<model>/<id>`
/// of a link into Tryton's web client (`http(s)://host[:port]/#<database>/model/…`),
/// for people who use that client instead.
fn tryton_desktop_link(erp: &str, web: &str) -> Option<String> {
    if erp != "Tryton" {
        return None;
    }
    let (scheme, rest) = web.split_once("://")?;
    let default_port = match scheme {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    let (authority, path) = rest.split_once("/#")?;
    if authority.is_empty() || authority.contains(['/', '@']) || !path.contains("/model/") {
        return None;
    }
    let authority = match authority.rsplit_once(':') {
        Some((_, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => authority.to_owned(),
        _ => format!("{authority}:{default_port}"),
    };
    Some(format!("tryton://{authority}/{path}"))
}

fn decision_section(cx: &Context<'_>, main: &mut String, number: &str, document: &AgentDraft) {
    main.push_str("<h2>Decision</h2>");
    if let Some(decision) = &document.decision {
        let (kind, verdict) = match decision.verdict {
            Verdict::Approved => ("ok", "Approved"),
            Verdict::Rejected => ("error", "Rejected"),
        };
        let _ = write!(
            main,
            "<div class=\"notice notice-{kind}\"><strong>{verdict}</strong> by {by} at {at}.{reason}</div>",
            by = text(&decision.decided_by),
            at = html::time(&decision.decided_at),
            reason = decision
                .reason
                .as_deref()
                .map(|r| format!(" Reason: {}", text(r)))
                .unwrap_or_default(),
        );
        // Decided in the ERP: the document is still looked at there.
        if !matches!(cx.pages.erp.approvals(), Approvals::InErp { .. }) {
            return;
        }
    }
    let kind = document.kind;
    // Where the ERP decides, the page links there whatever the status (a
    // confirmed purchase is looked at in the ERP too).
    if let Approvals::InErp { erp } = cx.pages.erp.approvals() {
        let link = cx.pages.erp.erp_link(kind, &document.id);
        let state = if document.status == "draft" {
            format!(
                "{} is approved or rejected in {}, in its own workflow, not here.",
                text(number),
                text(erp)
            )
        } else {
            format!("{} is {} in {}.", text(number), text(&document.status), text(erp))
        };
        let _ = write!(
            main,
            "<p class=\"notice notice-info\">{state} {}</p>",
            match link {
                Some(link) => format!(
                    "<a href=\"{}\">Open {} in {}</a>.{}",
                    attr(&link),
                    text(number),
                    text(erp),
                    tryton_desktop_link(erp, &link)
                        .map(|desktop| format!(
                            " <span class=\"small muted\">In Tryton's desktop client: <a href=\"{}\">{}</a>.</span>",
                            attr(&desktop),
                            text(&desktop)
                        ))
                        .unwrap_or_default()
                ),
                None => format!("Open it in {}.", text(erp)),
            },
        );
        return;
    }
    if document.status != "draft" {
        main.push_str(&html::notice(
            "info",
            &format!(
                "{number} is {}: only drafts are approved or rejected here.",
                document.status
            ),
        ));
        return;
    }
    let person = cx.person();
    let scope = approve_scope(kind);
    if !person.scopes().grants(scope) {
        main.push_str(&html::notice(
            "warn",
            &format!("You can read {number} but not decide on it: that needs the scope {scope}, which your sign-in does not grant."),
        ));
        return;
    }
    let own = document.drafted_on_behalf_of == person.user().as_str() && !cx.pages.allow_self_approval;
    let csrf = cx.csrf();
    let mut forms = String::from("<section class=\"actions\" aria-label=\"Decide\">");
    if own {
        main.push_str(&html::notice(
            "warn",
            &format!(
                "You cannot approve {number}: it was drafted on your behalf, and a draft needs a second person's \
                 approval (four eyes). Ask another approver of your branch. You may still reject it."
            ),
        ));
    } else {
        let _ = write!(
            forms,
            "<form method=\"post\" action=\"/review/documents/{n}/approve\">\
             <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
             <input type=\"hidden\" name=\"decision_id\" value=\"{id}\">\
             <label for=\"approve-note\">Note (optional)</label>\
             <textarea id=\"approve-note\" name=\"reason\" maxlength=\"500\"></textarea>\
             <p><button type=\"submit\" class=\"primary\" id=\"approve\">Approve {number}</button></p>\
             <p class=\"small muted\">{after}</p></form>",
            n = attr(&encode(number)),
            csrf = attr(&csrf),
            id = ulid::Ulid::new(),
            number = text(number),
            after = match kind {
                DocumentKind::PurchaseOrder =>
                    "It becomes approved. Nothing is sent to the vendor: a person sends it from the ERP.",
                DocumentKind::Quote => "It becomes approved. Nothing is sent to the customer: a person sends it.",
            },
        );
    }
    let _ = write!(
        forms,
        "<form method=\"post\" action=\"/review/documents/{n}/reject\">\
         <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
         <input type=\"hidden\" name=\"decision_id\" value=\"{id}\">\
         <label for=\"reject-reason\">Reason (required; the agent reads it)</label>\
         <textarea id=\"reject-reason\" name=\"reason\" required minlength=\"3\" maxlength=\"500\"></textarea>\
         <p><button type=\"submit\" class=\"danger\" id=\"reject\">Reject {number}</button></p>\
         <p class=\"small muted\">It will never be sent.</p></form>",
        n = attr(&encode(number)),
        csrf = attr(&csrf),
        id = ulid::Ulid::new(),
        number = text(number),
    );
    forms.push_str("</section>");
    main.push_str(&forms);
}

fn history_section(main: &mut String, history: &[CallRecord]) {
    main.push_str("<h2>History</h2>");
    if history.is_empty() {
        main.push_str(&html::notice("info", "No recorded calls touched this document."));
        return;
    }
    main.push_str(
        "<table class=\"cards\"><thead><tr><th scope=\"col\">Time</th><th scope=\"col\">What</th>\
         <th scope=\"col\">Who</th><th scope=\"col\">Outcome</th><th scope=\"col\">Run</th></tr></thead><tbody>",
    );
    for call in history {
        let what = match call.tool.as_str() {
            "review.approve" => "Approved (review page)".to_owned(),
            "review.reject" => "Rejected (review page)".to_owned(),
            tool if tool.ends_with("_draft") => format!("Drafted with {tool}"),
            tool => format!("Read with {tool}"),
        };
        let _ = write!(
            main,
            "<tr><td data-label=\"Time\">{}</td><td data-label=\"What\">{}</td><td data-label=\"Who\">{} \
             <span class=\"small muted\">({})</span></td><td data-label=\"Outcome\">{}</td>\
             <td data-label=\"Run\">{}</td></tr>",
            html::time(&call.at),
            text(&what),
            text(&call.on_behalf_of),
            text(&call.transport),
            html::outcome_badge(&call.outcome),
            match &call.agent_run_id {
                Some(run) => run_link(Some(run)),
                None => "<span class=\"muted\">—</span>".to_owned(),
            }
        );
    }
    main.push_str("</tbody></table>");
}

#[cfg(test)]
mod tests {
    use super::tryton_desktop_link;

    #[test]
    fn a_tryton_web_client_link_has_its_desktop_client_twin() {
        assert_eq!(
            tryton_desktop_link("Tryton", "http://127.0.0.1:8123/#demo/model/purchase.purchase/25").as_deref(),
            Some("tryton://127.0.0.1:8123/demo/model/purchase.purchase/25")
        );
        assert_eq!(
            tryton_desktop_link("Tryton", "https://erp.example.com/#demo/model/sale.sale/7").as_deref(),
            Some("tryton://erp.example.com:443/demo/model/sale.sale/7")
        );
        for other in [
            "tryton://127.0.0.1:8123/demo/model/purchase.purchase/25",
            "http://127.0.0.1:8123/demo/model/purchase.purchase/25",
            "http://user@host/#demo/model/x/1",
            "javascript:alert(1)",
        ] {
            assert_eq!(tryton_desktop_link("Tryton", other), None, "{other}");
        }
        assert_eq!(tryton_desktop_link("Odoo", "http://h:1/#d/model/m/1"), None);
    }
}
