//! The demo's people and the audit trail of its seeded agent drafts.
//!
//! The built-in backend seeds agent drafts of the days before the demo
//! starts (`draftline_erp::demo::agent_purchase_orders`, `agent_quotes`):
//! one waiting for review, one approved, one rejected per branch. So that
//! their queue rows show a model and prompt version, their run links open
//! and their history reads like a real one, [`seed_trail`] writes what the
//! audit would have recorded: the agent's lookup, its draft call, and the
//! person's decision, built by the same [`AuditRecord`] code as every call.
//!
//! It is written at every start of `draftline serve` and stays one trail:
//! each item has a fixed id, and the append-only write of an item that
//! exists is a no-op. It is written only for a document that is the demo's
//! own (same id), never next to a document a person drafted under that number.

use chrono::{DateTime, Duration, Utc};
use draftline_contract::ToolError;
use draftline_contract::identity::{Caller, Named};
use draftline_contract::request::AgentContext;
use draftline_contract::tool::DocumentRef;
use draftline_erp::demo::{self, AgentProvenance};
use draftline_erp::domain::{Decision, PurchaseOrder, Quote, Reviewable, Verdict};
use draftline_erp::port::{Erp, Scope};
use draftline_server::audit::{AuditRecord, CallFacts, Outcome, OutcomeKind, StoredArguments};
use draftline_server::storage::Table;
use serde_json::json;
use sha2::{Digest, Sha256};

/// Demo person `sub`, as a verified caller of the demo tenant.
pub fn demo_person(sub: &str) -> Option<Caller> {
    let user = demo::user(sub)?;
    let named = Named {
        tenant: demo::TENANT,
        branch: user.branch_id,
        branch_code: user.branch_code,
        user: user.sub,
        scope: user.scope,
    };
    let roles = user.roles.iter().map(|r| (*r).to_owned()).collect();
    Caller::named(named, roles).ok()
}

/// One item of the trail, before it is built.
struct Entry<'a> {
    label: String,
    at: DateTime<Utc>,
    tool: &'a str,
    transport: &'static str,
    agent: AgentContext,
    arguments: String,
    caller: &'a Caller,
    status: u16,
    document: Option<&'a DocumentRef>,
}

impl Entry<'_> {
    /// The record, with an id fixed by its time and label.
    fn record(&self) -> AuditRecord {
        let random = Sha256::digest(self.label.as_bytes());
        let mut bytes = [0u8; 16];
        bytes.copy_from_slice(&random[..16]);
        let millis = u64::try_from(self.at.timestamp_millis()).unwrap_or_default();
        let id = ulid::Ulid::from_parts(millis, u128::from_be_bytes(bytes)).to_string();
        let facts = CallFacts {
            request_id: format!("demo-{}", &id[..16]),
            at: self.at,
            tool: self.tool.to_owned(),
            transport: self.transport,
            agent: self.agent.clone(),
            arguments: Some(StoredArguments {
                text: self.arguments.clone(),
                truncated: false,
            }),
            trace_id: None,
        };
        let outcome = Outcome {
            kind: OutcomeKind::Ok,
            http_status: self.status,
            code: None,
            message: None,
            document: self.document,
            key: None,
            authorized: true,
        };
        AuditRecord::with_id(id, &facts, self.caller, &outcome)
    }
}

fn at(rfc3339: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(rfc3339)
        .ok()
        .map(|at| at.with_timezone(&Utc))
}

/// The trail of one seeded draft: lookup, draft call, decision.
fn trail<'a>(
    provenance: &AgentProvenance,
    draft_tool: &'a str,
    draft_arguments: String,
    created_at: &str,
    document: &'a DocumentRef,
    drafter: &'a Caller,
    decision: Option<(&Decision, &'a Caller)>,
) -> Vec<Entry<'a>> {
    let Some(created) = at(created_at) else {
        return Vec::new();
    };
    let agent = |call: &str| AgentContext {
        run_id: Some(provenance.run_id.to_owned()),
        tool_call_id: Some(call.to_owned()),
        model: Some(provenance.model.to_owned()),
        prompt_version: Some(provenance.prompt_version.to_owned()),
        ..AgentContext::default()
    };
    let (lookup_tool, lookup_arguments, lookup_call) = provenance.looked_up;
    let mut entries = vec![
        Entry {
            label: format!("{}|lookup", provenance.tool_call_id),
            at: created - Duration::seconds(60),
            tool: lookup_tool,
            transport: "http",
            agent: agent(lookup_call),
            arguments: lookup_arguments.to_owned(),
            caller: drafter,
            status: 200,
            document: None,
        },
        Entry {
            label: format!("{}|draft", provenance.tool_call_id),
            at: created,
            tool: draft_tool,
            transport: "http",
            agent: agent(provenance.tool_call_id),
            arguments: draft_arguments,
            caller: drafter,
            status: 201,
            document: Some(document),
        },
    ];
    if let Some((decision, person)) = decision
        && let Some(decided) = at(&decision.decided_at)
    {
        let decision_id = format!("demo{}", &document.id[document.id.len().saturating_sub(6)..]);
        entries.push(Entry {
            label: format!("{}|decision", provenance.tool_call_id),
            at: decided,
            tool: match decision.verdict {
                Verdict::Approved => "review.approve",
                Verdict::Rejected => "review.reject",
            },
            transport: "browser",
            agent: AgentContext::default(),
            arguments: json!({"number": document.number, "decision_id": decision_id, "reason": decision.reason})
                .to_string(),
            caller: person,
            status: 303,
            document: Some(document),
        });
    }
    entries
}

fn po_arguments(po: &PurchaseOrder) -> String {
    json!({
        "vendor_code": po.vendor.code,
        "needed_by": po.needed_by,
        "client_ref": po.client_ref,
        "note": po.note,
        "lines": po.lines.iter().map(|l| json!({"item_code": l.item_code, "qty": l.qty, "uom": l.uom})).collect::<Vec<_>>(),
    })
    .to_string()
}

fn quote_arguments(quote: &Quote) -> String {
    json!({
        "customer_code": quote.customer.code,
        "valid_until": quote.valid_until,
        "client_ref": quote.client_ref,
        "note": quote.note,
        "lines": quote.lines.iter().map(|l| json!({"item_code": l.item_code, "qty": l.qty, "uom": l.uom, "tax_code": l.tax_code})).collect::<Vec<_>>(),
    })
    .to_string()
}

/// Writes the audit trail of every seeded agent draft `erp` holds as the
/// demo's own; returns how many drafts got one. Idempotent.
pub async fn seed_trail(table: &dyn Table, erp: &dyn Erp) -> Result<usize, ToolError> {
    let missing = || ToolError::internal("a demo person does not parse");
    let buyer = demo_person("buyer-sby").ok_or_else(missing)?;
    let seller = demo_person("sales-bdg").ok_or_else(missing)?;
    let approver_sby = demo_person("approver-sby").ok_or_else(missing)?;
    let approver_bdg = demo_person("approver-bdg").ok_or_else(missing)?;
    let mut seeded = 0;
    for (po, provenance) in demo::agent_purchase_orders() {
        let stored = erp.purchase_order(&Scope::of(&buyer), &po.po_number).await?;
        if stored.as_ref().map(|s| &s.draft_id) != Some(&po.draft_id) {
            continue;
        }
        let document = po.document_ref();
        let decision = po.decision.as_ref().map(|d| (d, &approver_sby));
        for entry in trail(
            &provenance,
            "purchasing_create_po_draft",
            po_arguments(&po),
            &po.created_at,
            &document,
            &buyer,
            decision,
        ) {
            entry.record().write(table).await?;
        }
        seeded += 1;
    }
    for (quote, provenance) in demo::agent_quotes() {
        let stored = erp.quote(&Scope::of(&seller), &quote.quote_number).await?;
        if stored.as_ref().map(|s| &s.quote_id) != Some(&quote.quote_id) {
            continue;
        }
        let document = quote.document_ref();
        let decision = quote.decision.as_ref().map(|d| (d, &approver_bdg));
        for entry in trail(
            &provenance,
            "sales_create_quote_draft",
            quote_arguments(&quote),
            &quote.created_at,
            &document,
            &seller,
            decision,
        ) {
            entry.record().write(table).await?;
        }
        seeded += 1;
    }
    Ok(seeded)
}
