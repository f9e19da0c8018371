//! The built-in data model in DynamoDB: every domain type's key and item
//! mapping, as an extension trait (`<Type>Record`, one for every kind of
//! document, [`BranchRecord`] for a branch's records stored whole), so
//! queries read as domain code (`PurchaseOrder::from_item(&item)`).

pub mod agent_draft;
pub mod attrs;
pub mod customer;
pub mod document;
pub mod invoice;
pub mod item;
pub mod near_duplicate;
pub mod price_list;
pub mod sales_order;
pub mod stock;
pub mod tax;
pub mod vendor;

pub use agent_draft::AgentDraftRecord;
pub use customer::{CreditStandingRecord, CustomerRecord};
pub use document::DocumentRecord;
pub use item::ItemRecord;
pub use tax::TaxTypeRecord;
pub use vendor::{BranchVendorRecord, PriceEntryRecord, VendorRecord};

use draftline_contract::ErpError;
use draftline_contract::identity::{BranchId, TenantId};

/// How a branch's record of one kind is stored whole in one item under
/// the branch (its stock, its policies, its sales orders and invoices).
pub trait BranchRecord: Sized {
    /// The item.
    fn to_item(&self, tenant: &TenantId, branch: &BranchId) -> attrs::Item;
    /// Reads one.
    fn from_item(item: &attrs::Item) -> Result<Self, ErpError>;
}
