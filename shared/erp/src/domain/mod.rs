//! The ERP domain: what items, vendors, stock, documents, customers and the
//! ledger are, whatever ERP holds them. Backends map them to and from their
//! own storage (`draftline-erp-builtin`: DynamoDB items; `draftline-erp-tryton`:
//! Tryton records); nothing of either appears here.
//!
//! Purchasing: [`item`], [`vendor`] (profiles, price lists, branch listings),
//! [`stock`], [`po`]. Sales: [`customer`], [`price_list`], [`sales_order`],
//! [`quote`]. Finance: [`invoice`] (receivables and payables), [`tax`].

pub mod customer;
pub mod decision;
pub mod document;
pub mod draft;
pub mod invoice;
pub mod item;
pub mod open_draft;
pub mod po;
pub mod price_list;
pub mod quote;
pub mod review;
pub mod sales_order;
pub mod stock;
pub mod tax;
pub mod vendor;

pub use customer::{CreditPosition, CreditStanding, Customer};
pub use decision::{Decision, Verdict};
pub use document::{Document, NewDraft};
pub use draft::DraftDocument;
pub use draftline_contract::tool::review_url;
pub use invoice::{CustomerInvoice, OpenItem, VendorBill};
pub use item::{Item, UnitConversion};
pub use open_draft::{OpenDraft, OpenDrafts, OpenLine, Seen};
pub use po::{DocumentStatus, PoDraft, PoFields, PoLine, PoStatus, PurchaseOrder, VendorRef};
pub use price_list::ListPrice;
pub use quote::{CustomerRef, Quote, QuoteDraft, QuoteFields, QuoteLine};
pub use review::{AgentDraft, DecidedDraft, DocumentKind, DraftFilter, NewDecision, Reviewable};
pub use sales_order::{SalesOrder, SalesOrderStatus};
pub use stock::{ReorderPolicy, StockLevel};
pub use tax::{TaxCode, TaxType};
pub use vendor::{BranchVendor, PriceEntry, Vendor};
