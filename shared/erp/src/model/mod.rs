//! The ERP data model and its DynamoDB item mapping (`From`/`TryFrom`-style
//! functions next to each struct), so tools read as domain code.
//!
//! Purchasing: [`item`], [`vendor`] (profiles, price lists, branch listings),
//! [`stock`], [`po`]. Sales: [`customer`], [`price_list`], [`sales_order`],
//! [`quote`]. Finance: [`invoice`] (receivables and payables), [`tax`].

pub mod attrs;
pub mod customer;
pub mod invoice;
pub mod item;
pub mod po;
pub mod price_list;
pub mod quote;
pub mod sales_order;
pub mod stock;
pub mod tax;
pub mod vendor;

pub use customer::{CreditPosition, Customer};
pub use invoice::{CustomerInvoice, OpenItem, VendorBill};
pub use item::{Item, UnitConversion};
pub use po::{PoLine, PoStatus, PurchaseOrder};
pub use price_list::ListPrice;
pub use quote::{Quote, QuoteLine};
pub use sales_order::{SalesOrder, SalesOrderStatus};
pub use stock::{ReorderPolicy, StockLevel};
pub use tax::{TaxCode, TaxType};
pub use vendor::{BranchVendor, PriceEntry, Vendor};
