//! The built-in data model in DynamoDB: every domain type's key and item
//! mapping, as one extension trait per type (`<Type>Record`), so queries
//! read as domain code (`PurchaseOrder::from_item(&item)`).

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
pub use invoice::{CustomerInvoiceRecord, VendorBillRecord};
pub use item::ItemRecord;
pub use sales_order::SalesOrderRecord;
pub use stock::{ReorderPolicyRecord, StockLevelRecord};
pub use tax::TaxTypeRecord;
pub use vendor::{BranchVendorRecord, PriceEntryRecord, VendorRecord};
