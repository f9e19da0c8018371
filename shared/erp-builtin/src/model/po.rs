//! How the domain's po types are stored: keys and item mappings.

use draftline_contract::ErpError;
use draftline_contract::identity::{BranchId, TenantId};
use draftline_contract::store::Value;
use draftline_erp::domain::*;

use super::attrs::{self, Item as Attrs, sv};
use crate::keys;

/// How a [`PurchaseOrder`] is stored.
pub trait PurchaseOrderRecord: Sized {
    /// The key of PO `number` in `branch`.
    fn key(tenant: &TenantId, branch: &BranchId, number: &str) -> Attrs;
    /// The item: queryable attributes plus the document as JSON.
    fn to_item(&self, tenant: &TenantId, branch: &BranchId) -> Result<Attrs, ErpError>;
    /// Reads a PO.
    fn from_item(item: &Attrs) -> Result<Self, ErpError>;
}

impl PurchaseOrderRecord for PurchaseOrder {
    fn key(tenant: &TenantId, branch: &BranchId, number: &str) -> Attrs {
        attrs::key(keys::purchase_orders(tenant, branch), keys::po_sk(number))
    }

    fn to_item(&self, tenant: &TenantId, branch: &BranchId) -> Result<Attrs, ErpError> {
        let mut item = Self::key(tenant, branch, &self.po_number);
        item.insert("kind".into(), sv("purchase_order"));
        item.insert("draft_id".into(), sv(&self.draft_id));
        item.insert("po_number".into(), sv(&self.po_number));
        item.insert("status".into(), sv(self.status.code()));
        item.insert("vendor_code".into(), sv(&self.vendor.code));
        item.insert("needed_by".into(), sv(self.needed_by.to_string()));
        item.insert("created_at".into(), sv(&self.created_at));
        item.insert("total".into(), Value::N(self.total.amount.clone()));
        item.insert("drafted_on_behalf_of".into(), sv(&self.drafted_on_behalf_of));
        if let Some(run) = &self.drafted_by_agent_run {
            item.insert("drafted_by_agent_run".into(), sv(run));
        }
        item.insert(
            "document".into(),
            sv(serde_json::to_string(self).map_err(ErpError::internal)?),
        );
        Ok(item)
    }

    fn from_item(item: &Attrs) -> Result<Self, ErpError> {
        let text = attrs::s(item, "purchase order", "document")?;
        serde_json::from_str(&text).map_err(ErpError::internal)
    }
}
