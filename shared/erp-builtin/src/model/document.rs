//! How a document of any kind is stored: under its kind's partition, with
//! the attributes queries filter on, and the document itself as JSON.

use draftline_contract::ErpError;
use draftline_contract::identity::{BranchId, TenantId};
use draftline_contract::store::Value;
use draftline_erp::domain::{AgentDraft, Document, DocumentKind, PurchaseOrder, Quote, Reviewable};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::attrs::{self, Item as Attrs, sv};
use crate::keys;

/// How a document of one kind is stored. A kind says only how its id,
/// number and counterparty attributes are named and what else of it a
/// query filters on.
pub trait DocumentRecord: Reviewable + Serialize + DeserializeOwned {
    /// The names of its id, number and counterparty code attributes.
    const NAMES: [&'static str; 3];

    /// The attributes only its kind has.
    fn own(&self) -> Option<(&'static str, Value)> {
        None
    }

    /// The key of its document `number` in `branch`.
    fn key(tenant: &TenantId, branch: &BranchId, number: &str) -> Attrs {
        key(Self::KIND, tenant, branch, number)
    }

    /// The item: the attributes queries filter on, which its queue entry
    /// (`entry`, [`Reviewable::queue_entry`]) holds too, plus the document
    /// as JSON.
    fn to_item(&self, entry: &AgentDraft, tenant: &TenantId, branch: &BranchId) -> Result<Attrs, ErpError> {
        let document = serde_json::to_string(self).map_err(ErpError::internal)?;
        let [id, number, counterparty] = Self::NAMES;
        let mut item = Self::key(tenant, branch, &entry.number);
        let attributes = [
            ("kind", sv(Self::KIND.code())),
            (id, sv(&entry.id)),
            (number, sv(&entry.number)),
            ("status", sv(&entry.status)),
            (counterparty, sv(&entry.counterparty_code)),
            ("created_at", sv(&entry.created_at)),
            ("total", Value::N(entry.total.amount.clone())),
            ("drafted_on_behalf_of", sv(&entry.drafted_on_behalf_of)),
            ("document", sv(document)),
        ];
        let run = (entry.drafted_by_agent_run.as_ref()).map(|run| ("drafted_by_agent_run", sv(run)));
        let attributes = attributes.into_iter().chain(self.own()).chain(run);
        item.extend(attributes.map(|(name, value)| (name.to_owned(), value)));
        Ok(item)
    }

    /// Reads a document of its kind.
    fn from_item(item: &Attrs) -> Result<Self, ErpError> {
        let text = attrs::s(item, Self::KIND.noun(), "document")?;
        serde_json::from_str(&text).map_err(ErpError::internal)
    }
}

impl DocumentRecord for PurchaseOrder {
    const NAMES: [&'static str; 3] = ["draft_id", "po_number", "vendor_code"];

    fn own(&self) -> Option<(&'static str, Value)> {
        Some(("needed_by", sv(self.needed_by.to_string())))
    }
}

impl DocumentRecord for Quote {
    const NAMES: [&'static str; 3] = ["quote_id", "quote_number", "customer_code"];
}

/// The key of document `number` of `kind` in `branch`.
pub fn key(kind: DocumentKind, tenant: &TenantId, branch: &BranchId, number: &str) -> Attrs {
    attrs::key(keys::documents(kind, tenant, branch), keys::document_sk(kind, number))
}

/// The item of a document of any kind whose queue entry is `entry`.
pub fn to_item(
    document: &Document,
    entry: &AgentDraft,
    tenant: &TenantId,
    branch: &BranchId,
) -> Result<Attrs, ErpError> {
    match document {
        Document::PurchaseOrder(po) => po.to_item(entry, tenant, branch),
        Document::Quote(quote) => quote.to_item(entry, tenant, branch),
    }
}

/// Reads a document of `kind`.
pub fn from_item(kind: DocumentKind, item: &Attrs) -> Result<Document, ErpError> {
    Ok(match kind {
        DocumentKind::PurchaseOrder => PurchaseOrder::from_item(item)?.into(),
        DocumentKind::Quote => Quote::from_item(item)?.into(),
    })
}
