//! The purchase order document. Agents only ever create it in status `draft`.

use aws_sdk_dynamodb::types::AttributeValue;
use draftline_contract::ToolError;
use draftline_contract::identity::{BranchId, TenantId};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::attrs::{self, Item as Attrs, sv};
use crate::keys;
use crate::money::Money;
use crate::units::Uom;

/// The only status an agent can give a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DocumentStatus {
    /// Created by an agent or a person; no stock, ledger or vendor effect until a person approves it.
    Draft,
}

/// Where a purchase order is in its life. Agents only ever create `draft`;
/// people move it on in the ERP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PoStatus {
    /// Drafted (by an agent or a person); no stock, ledger or vendor effect yet.
    Draft,
    /// Approved by a person, not yet sent to the vendor.
    Approved,
    /// Sent to the vendor.
    Sent,
    /// Goods received.
    Received,
    /// Cancelled by a person.
    Cancelled,
}

impl PoStatus {
    /// The status as stored and shown.
    pub fn code(self) -> &'static str {
        match self {
            Self::Draft => "draft",
            Self::Approved => "approved",
            Self::Sent => "sent",
            Self::Received => "received",
            Self::Cancelled => "cancelled",
        }
    }
}

/// A vendor as printed on a document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VendorRef {
    /// Vendor code.
    pub code: String,
    /// Vendor name.
    pub name: String,
}

/// One line of a purchase order, priced by the server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PoLine {
    /// 1-based line number.
    pub line_no: u32,
    /// Item code.
    pub item_code: String,
    /// Item description.
    pub item_name: String,
    /// Quantity in `uom`.
    pub qty: i64,
    /// The unit ordered.
    pub uom: Uom,
    /// The same quantity in the item's base unit.
    pub base_qty: i64,
    /// The item's base unit.
    pub base_uom: Uom,
    /// Price per `uom`, from the vendor's price list.
    pub unit_price: Money,
    /// Where the price came from (`price list V-00231, BRG-0042 per BOX`).
    pub price_source: String,
    /// qty x unit price, rounded.
    pub line_total: Money,
}

/// A purchase order (always a draft when an agent made it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PurchaseOrder {
    /// Document id (use in data, not in text).
    pub draft_id: String,
    /// The PO number people use (`PO-SBY-000124`).
    pub po_number: String,
    /// `draft` for every order an agent created; people move it on.
    pub status: PoStatus,
    /// The branch the PO belongs to.
    pub branch_id: String,
    /// The vendor.
    pub vendor: VendorRef,
    /// Date the goods are needed (YYYY-MM-DD).
    pub needed_by: chrono::NaiveDate,
    /// Currency of every amount.
    pub currency: String,
    /// The lines, priced by the server.
    pub lines: Vec<PoLine>,
    /// Sum of line totals.
    pub subtotal: Money,
    /// Total of the document (no tax on a purchase draft; tax is applied when a person posts it).
    pub total: Money,
    /// How amounts are rounded.
    pub rounding: String,
    /// Free-text note from the caller.
    pub note: Option<String>,
    /// The caller's own reference.
    pub client_ref: String,
    /// The agent run that drafted it (`X-Agent-Run-Id`), if any.
    pub drafted_by_agent_run: Option<String>,
    /// The person the agent acted for (token subject).
    pub drafted_on_behalf_of: String,
    /// When it was drafted (RFC 3339, UTC).
    pub created_at: String,
    /// What happens next, for the model to tell the user.
    pub next_step: String,
}

impl PurchaseOrder {
    /// The key of PO `number` in `branch`.
    pub fn key(tenant: &TenantId, branch: &BranchId, number: &str) -> Attrs {
        Attrs::from([
            ("pk".to_owned(), sv(keys::purchase_orders(tenant, branch))),
            ("sk".to_owned(), sv(keys::po_sk(number))),
        ])
    }

    /// The item: queryable attributes plus the document as JSON.
    pub fn to_item(&self, tenant: &TenantId, branch: &BranchId) -> Result<Attrs, ToolError> {
        let mut item = Self::key(tenant, branch, &self.po_number);
        item.insert("kind".into(), sv("purchase_order"));
        item.insert("draft_id".into(), sv(&self.draft_id));
        item.insert("po_number".into(), sv(&self.po_number));
        item.insert("status".into(), sv(self.status.code()));
        item.insert("vendor_code".into(), sv(&self.vendor.code));
        item.insert("needed_by".into(), sv(self.needed_by.to_string()));
        item.insert("created_at".into(), sv(&self.created_at));
        item.insert("total".into(), AttributeValue::N(self.total.amount.clone()));
        item.insert("drafted_on_behalf_of".into(), sv(&self.drafted_on_behalf_of));
        if let Some(run) = &self.drafted_by_agent_run {
            item.insert("drafted_by_agent_run".into(), sv(run));
        }
        item.insert(
            "document".into(),
            sv(serde_json::to_string(self).map_err(ToolError::internal)?),
        );
        Ok(item)
    }

    /// Reads a PO.
    pub fn from_item(item: &Attrs) -> Result<Self, ToolError> {
        let text = attrs::s(item, "purchase order", "document")?;
        serde_json::from_str(&text).map_err(ToolError::internal)
    }
}
