//! How an open draft is stored: one item per draft under its branch, kind
//! and counterparty, written in the draft's own transaction and expiring a
//! day later (DynamoDB TTL; read past `expires_at` it is ignored).

use draftline_contract::ErpError;
use draftline_contract::identity::{BranchId, TenantId};
use draftline_erp::domain::OpenDraft;

use super::attrs::{self, Item as Attrs, nv, sv};
use crate::keys;

/// How long an open draft is remembered for the near-duplicate check.
pub const OPEN_DRAFT_SECONDS: i64 = 86_400;

/// How an [`OpenDraft`] is stored.
pub trait OpenDraftRecord: Sized {
    /// The item of this draft of `kind` (`PO`, `QT`), remembered until `expires_at` (epoch seconds).
    fn to_item(&self, tenant: &TenantId, branch: &BranchId, kind: &str, expires_at: i64) -> Result<Attrs, ErpError>;
    /// Reads an open draft.
    fn from_item(item: &Attrs) -> Result<Self, ErpError>;
}

impl OpenDraftRecord for OpenDraft {
    fn to_item(&self, tenant: &TenantId, branch: &BranchId, kind: &str, expires_at: i64) -> Result<Attrs, ErpError> {
        Ok(Attrs::from([
            (
                "pk".to_owned(),
                sv(keys::open_drafts(tenant, branch, kind, &self.counterparty)),
            ),
            ("sk".to_owned(), sv(keys::open_draft_sk(&self.created_at, &self.number))),
            ("kind".to_owned(), sv("open_draft")),
            ("expires_at".to_owned(), nv(expires_at)),
            (
                "draft".to_owned(),
                sv(serde_json::to_string(self).map_err(ErpError::internal)?),
            ),
        ]))
    }

    fn from_item(item: &Attrs) -> Result<Self, ErpError> {
        let text = attrs::s(item, "open draft", "draft")?;
        serde_json::from_str(&text).map_err(ErpError::internal)
    }
}
