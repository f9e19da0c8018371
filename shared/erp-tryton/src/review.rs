//! The people's side over Tryton: approvals are Tryton's own workflow
//! (MAPPING.md: a person presses Quote/Confirm there), so draftline only
//! lists the agent drafts of a branch and links to each in Tryton's web
//! client; it records no decision itself.
//!
//! Statuses in the queue: a purchase by [`PoStatus`] code (draft, approved,
//! sent, received, cancelled), a quote `draft`, `approved` (quotation or
//! later) or `rejected` (cancelled).

use chrono::{DateTime, Utc};
use draftline_contract::ErpError;
use draftline_erp::domain::{AgentDraft, DecidedDraft, DocumentKind, DraftFilter, PoStatus};
use draftline_erp::money::Money;
use draftline_erp::port::Page;
use serde_json::{Value, json};

use crate::Inner;
use crate::documents::{id_prefix, model, tryton_decision};
use crate::rest::Search;
use crate::value::{self, Record};

const QUEUE_FIELDS: &[&str] = &[
    "number",
    "state",
    "draftline_key",
    "draftline_decided_by",
    "write_date",
    "shipment_state",
    "party.code",
    "party.name",
    "currency.code",
    "total_amount",
    "drafted_on_behalf_of",
    "drafted_by_agent_run",
    "create_date",
];

/// The PO statuses a queue filter may name, and the Tryton domain of each.
fn po_status_domain(status: &str) -> Option<Value> {
    let status = [
        PoStatus::Draft,
        PoStatus::Approved,
        PoStatus::Sent,
        PoStatus::Received,
        PoStatus::Cancelled,
    ]
    .into_iter()
    .find(|s| s.code() == status)?;
    Some(crate::purchasing::status_domain(status))
}

fn quote_status_domain(status: &str) -> Option<Value> {
    match status {
        "draft" => Some(json!([["state", "=", "draft"]])),
        "approved" => Some(json!([[
            "state",
            "in",
            ["quotation", "confirmed", "processing", "done"]
        ]])),
        "rejected" => Some(json!([["state", "=", "cancelled"]])),
        _ => None,
    }
}

fn quote_status(state: &str) -> &'static str {
    match state {
        "draft" => "draft",
        "cancelled" => "rejected",
        _ => "approved",
    }
}

/// A queue position: the creation time (microseconds) and the number.
fn position(at: DateTime<Utc>, number: &str) -> String {
    format!("{}|{number}", at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true))
}

fn parse_position(after: &str) -> Result<(DateTime<Utc>, &str), ErpError> {
    let (at, number) = after
        .split_once('|')
        .ok_or_else(|| ErpError::internal("a review queue position that this backend did not hand out"))?;
    let at = DateTime::parse_from_rfc3339(at)
        .map_err(|e| ErpError::internal(format!("a review queue position with a bad time: {e}")))?;
    Ok((at.with_timezone(&Utc), number))
}

impl Inner {
    /// The branch's agent drafts (purchases and sales with a draftline key),
    /// newest first, after `after`: one request per kind, together.
    pub(crate) async fn agent_drafts(
        &self,
        branch: &str,
        filter: &DraftFilter,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Page<AgentDraft>, ErpError> {
        let after = after.map(parse_position).transpose()?;
        let kinds: Vec<DocumentKind> = match filter.kind {
            Some(kind) => vec![kind],
            None => vec![DocumentKind::PurchaseOrder, DocumentKind::Quote],
        };
        let searches = kinds.iter().filter_map(|kind| {
            let status = match kind {
                DocumentKind::PurchaseOrder => filter.status.as_deref().map(po_status_domain),
                DocumentKind::Quote => filter.status.as_deref().map(quote_status_domain),
            };
            let model = model(*kind);
            let mut domain = vec![
                json!(["warehouse.code", "=", branch]),
                json!(["company", "=", 1]),
                json!(["draftline_key", "!=", null]),
                json!(["number", "!=", null]),
            ];
            match status {
                // A status this kind never has: nothing to ask Tryton.
                Some(None) => return None,
                Some(Some(status)) => domain.push(status),
                None => {}
            }
            if let Some((at, number)) = &after {
                domain.push(json!([
                    "OR",
                    [["create_date", "<", value::datetime(*at)]],
                    [["create_date", "=", value::datetime(*at)], ["number", "<", number]]
                ]));
            }
            let search = Search::new(model, Value::Array(domain), QUEUE_FIELDS)
                .order_by(&[("create_date", false), ("number", false)])
                .limit(limit.saturating_add(1));
            Some(async move {
                let found = self.rest.read(&search, "the review queue").await?;
                found
                    .iter()
                    .map(|r| agent_draft(*kind, r))
                    .collect::<Result<Vec<_>, ErpError>>()
            })
        });
        let mut found: Vec<(DateTime<Utc>, AgentDraft)> = futures::future::try_join_all(searches)
            .await?
            .into_iter()
            .flatten()
            .collect();
        found.sort_by(|a, b| (b.0, &b.1.number).cmp(&(a.0, &a.1.number)));
        Ok(Page::first(found, limit, |(at, d)| position(*at, &d.number)).map(|(_, d)| d))
    }

    /// The agent drafts of every branch that a person decided in Tryton
    /// (past draft: approved; cancelled: rejected; `draftline_decided_by`
    /// says who, and has no searcher, so it is read, not searched) and
    /// Tryton changed at or
    /// after `since`, oldest change first, at most `limit` of each kind
    /// (one search per kind). At or after: a change in the same instant as
    /// the last one seen is read again, and the caller deduplicates.
    pub(crate) async fn decided_since(
        &self,
        since: Option<DateTime<Utc>>,
        limit: usize,
    ) -> Result<Vec<DecidedDraft>, ErpError> {
        let mut fields = QUEUE_FIELDS.to_vec();
        fields.push("warehouse.code");
        let searches = [DocumentKind::PurchaseOrder, DocumentKind::Quote].map(|kind| {
            let mut domain = vec![
                json!(["company", "=", 1]),
                json!(["draftline_key", "!=", null]),
                json!(["number", "!=", null]),
                json!(["state", "!=", "draft"]),
            ];
            if let Some(since) = since {
                domain.push(json!(["write_date", ">=", value::datetime(since)]));
            }
            let search = Search::new(model(kind), Value::Array(domain), &fields)
                .order_by(&[("write_date", true), ("number", true)])
                .limit(limit);
            async move {
                let found = self.rest.read(&search, "the decisions made in Tryton").await?;
                found
                    .iter()
                    .map(|record| {
                        let (_, draft) = agent_draft(kind, record)?;
                        Ok(DecidedDraft {
                            branch: record.nested_text("warehouse", "code")?.unwrap_or_default(),
                            changed_at: record.datetime("write_date")?,
                            draft,
                        })
                    })
                    .collect::<Result<Vec<_>, ErpError>>()
            }
        });
        let mut found: Vec<DecidedDraft> = futures::future::try_join_all(searches)
            .await?
            .into_iter()
            .flatten()
            .collect();
        found.sort_by(|a, b| (a.changed_at, &a.draft.number).cmp(&(b.changed_at, &b.draft.number)));
        // Each kind's search stops at `limit`: past the `limit` oldest of
        // both, one kind's changes may be missing, and a poller that moved
        // its watermark past them would never see them.
        found.truncate(limit);
        found.retain(|decided| decided.draft.decision.is_some());
        Ok(found)
    }
}

fn agent_draft(kind: DocumentKind, record: &Record) -> Result<(DateTime<Utc>, AgentDraft), ErpError> {
    let number = record.text("number")?;
    let state = record.text("state")?;
    let status = match kind {
        DocumentKind::PurchaseOrder => {
            let shipment = record.opt_text("shipment_state")?;
            crate::purchasing::po_status(&state, shipment.as_deref())
                .map_or("unknown", PoStatus::code)
                .to_owned()
        }
        DocumentKind::Quote => quote_status(&state).to_owned(),
    };
    let party = record
        .one("party", "party.party")?
        .ok_or_else(|| ErpError::internal(format!("{number} has no party")))?;
    let currency = record.nested_text("currency", "code")?.unwrap_or_default();
    let created = record.datetime("create_date")?;
    let prefix = id_prefix(kind);
    Ok((
        created,
        AgentDraft {
            kind,
            id: format!("{prefix}{}", record.id()?),
            status,
            counterparty_code: party.text("code")?,
            counterparty_name: party.text("name")?,
            total: Money::new(record.decimal("total_amount")?, &currency),
            drafted_on_behalf_of: record.opt_text("drafted_on_behalf_of")?.unwrap_or_default(),
            drafted_by_agent_run: record.opt_text("drafted_by_agent_run")?,
            created_at: value::rfc3339(created),
            // Decisions are Tryton's workflow: the status, and who as far as Tryton tells.
            decision: tryton_decision(record)?,
            number,
        },
    ))
}

/// The document `id` (`po_tryton_25`) of `database` in Tryton's web client
/// (sao), which the trytond at `url` serves under its `[web] root`:
/// `http://127.0.0.1:8123/#demo/model/purchase.purchase/25`, the form sao
/// opens after its sign-in (sao's `open_url`: `#<database>/model/<model>/<id>`).
pub(crate) fn erp_link(url: &http::Uri, database: &str, kind: DocumentKind, id: &str) -> Option<String> {
    let (prefix, model) = (id_prefix(kind), model(kind));
    let number: u64 = id.strip_prefix(prefix)?.parse().ok()?;
    let scheme = match url.scheme_str()? {
        scheme @ ("http" | "https") => scheme,
        _ => return None,
    };
    let authority = url.authority()?;
    Some(format!("{scheme}://{authority}/#{database}/model/{model}/{number}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_links_to_the_tryton_web_client() {
        let url: http::Uri = "http://127.0.0.1:8123/demo/rest/model/".parse().unwrap();
        assert_eq!(
            erp_link(&url, "demo", DocumentKind::PurchaseOrder, "po_tryton_25").as_deref(),
            Some("http://127.0.0.1:8123/#demo/model/purchase.purchase/25")
        );
        let url: http::Uri = "https://erp.example.com/demo/rest/model/".parse().unwrap();
        assert_eq!(
            erp_link(&url, "demo", DocumentKind::Quote, "qt_tryton_7").as_deref(),
            Some("https://erp.example.com/#demo/model/sale.sale/7")
        );
        assert_eq!(erp_link(&url, "demo", DocumentKind::Quote, "po_tryton_25"), None);
        assert_eq!(erp_link(&url, "demo", DocumentKind::Quote, "qt_tryton_x"), None);
    }

    #[test]
    fn queue_positions_round_trip() {
        let at = DateTime::parse_from_rfc3339("2026-12-01T08:15:47.023872Z")
            .unwrap()
            .with_timezone(&Utc);
        let text = position(at, "PO-SBY-000001");
        assert_eq!(parse_position(&text).unwrap(), (at, "PO-SBY-000001"));
        assert!(parse_position("nonsense").is_err());
    }
}
