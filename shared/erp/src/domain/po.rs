//! The purchase order document. Agents only ever create it in status `draft`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::decision::Decision;
use crate::money::Money;
use crate::units::Uom;

/// The only status an agent can give a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DocumentStatus {
    /// Created by an agent or a person; no stock, ledger or vendor effect until a person approves it.
    Draft,
    /// Approved by a person; not yet sent.
    Approved,
    /// Rejected by a person (the decision says why).
    Rejected,
}

impl DocumentStatus {
    /// The status as stored and shown.
    pub fn code(self) -> &'static str {
        match self {
            Self::Draft => "draft",
            Self::Approved => "approved",
            Self::Rejected => "rejected",
        }
    }
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
    /// Rejected by a person in review (the decision says why); never sent.
    Rejected,
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
            Self::Rejected => "rejected",
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
    /// A person's decision (approved, or rejected with the reason, and who
    /// decided), once there is one; null while the draft waits for review.
    #[serde(default)]
    pub decision: Option<Decision>,
    /// The page where a person reviews this order
    /// (`<deployment>/review/documents/<number>`): tell the user it waits
    /// there. Set in every answer; not stored.
    #[serde(default)]
    pub review_url: Option<String>,
}

/// What only a purchase-order draft has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoFields {
    /// Date the goods are needed.
    pub needed_by: chrono::NaiveDate,
}

/// A purchase order the tool has priced and checked, not yet in the ERP.
pub type PoDraft = super::draft::DraftDocument<VendorRef, PoLine, PoFields>;

impl PoDraft {
    /// The purchase order this draft becomes once the ERP gave it `draft_id`,
    /// `po_number` and its creation time (RFC 3339, UTC).
    pub fn numbered(&self, draft_id: String, po_number: String, created_at: String) -> PurchaseOrder {
        PurchaseOrder {
            next_step: format!(
                "Draft {po_number} awaits review: a person must approve it in the ERP before it is sent to {}. \
                 It has not been sent and has not changed stock.",
                self.counterparty.name
            ),
            draft_id,
            po_number,
            status: PoStatus::Draft,
            branch_id: self.branch_id.clone(),
            vendor: self.counterparty.clone(),
            needed_by: self.own.needed_by,
            currency: self.currency.clone(),
            lines: self.lines.clone(),
            subtotal: self.subtotal.clone(),
            total: self.total.clone(),
            rounding: crate::money::ROUNDING_RULE.to_owned(),
            note: self.note.clone(),
            client_ref: self.client_ref.clone(),
            drafted_by_agent_run: self.drafted_by_agent_run.clone(),
            drafted_on_behalf_of: self.drafted_on_behalf_of.clone(),
            created_at,
            decision: None,
            review_url: None,
        }
    }
}
