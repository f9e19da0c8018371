//! How the review queue is stored: one item per agent draft under its
//! branch, sorted by creation time, written in the draft's own transaction
//! and updated in the transaction that records a decision.

use draftline_contract::ErpError;
use draftline_contract::identity::{BranchId, TenantId};
use draftline_erp::domain::AgentDraft;

use super::attrs::{self, Item as Attrs, sv};
use crate::keys;

/// How an [`AgentDraft`] is stored.
pub trait AgentDraftRecord: Sized {
    /// The key of the queue entry of draft `number` created at `created_at`.
    fn key(tenant: &TenantId, branch: &BranchId, created_at: &str, number: &str) -> Attrs;
    /// The item.
    fn to_item(&self, tenant: &TenantId, branch: &BranchId) -> Result<Attrs, ErpError>;
    /// Reads a queue entry.
    fn from_item(item: &Attrs) -> Result<Self, ErpError>;
}

impl AgentDraftRecord for AgentDraft {
    fn key(tenant: &TenantId, branch: &BranchId, created_at: &str, number: &str) -> Attrs {
        attrs::key(
            keys::review_queue(tenant, branch),
            keys::review_queue_sk(created_at, number),
        )
    }

    fn to_item(&self, tenant: &TenantId, branch: &BranchId) -> Result<Attrs, ErpError> {
        let mut item = Self::key(tenant, branch, &self.created_at, &self.number);
        item.extend([
            ("kind".to_owned(), sv("agent_draft")),
            ("document_kind".to_owned(), sv(self.kind.code())),
            ("status".to_owned(), sv(&self.status)),
            (
                "draft".to_owned(),
                sv(serde_json::to_string(self).map_err(ErpError::internal)?),
            ),
        ]);
        Ok(item)
    }

    fn from_item(item: &Attrs) -> Result<Self, ErpError> {
        let text = attrs::s(item, "agent draft", "draft")?;
        serde_json::from_str(&text).map_err(ErpError::internal)
    }
}
