//! # draftline-erp
//!
//! The ERP side of draftline: the data model in DynamoDB, the tool
//! catalogue, and the demo tenant.
//!
//! ## Layout
//! - [`catalogue`]: every tool and module of a deployment, as a [`Registry`].
//! - [`tools`]: one file per tool, eleven in four modules (inventory,
//!   purchasing, sales, finance; see [`tools`] for the list).
//! - [`model`]: items, vendors and price lists, stock and reorder policies,
//!   purchase orders, customers, sales price lists, sales orders, quotes,
//!   invoices and bills, tax types, with their DynamoDB item mappings;
//!   [`keys`]: every key.
//! - [`store`]: the reads, scoped by tenant and branch (listings stop at a
//!   page and hand back a position for the sealed cursor).
//! - [`numbers`] (document numbers: one grammar for drafts and reads),
//!   [`money`] (exact decimals, currency, rounding), [`units`] (the unit
//!   enum), [`pricing`] (a line's price from a price list) and [`reorder`]
//!   (when and how much to reorder).
//! - [`demo`] (the demo tenant and users) and [`seed`] (writing it once).

// One bad stored number must be an error, never a panic: with
// `panic = "abort"` a panic would end every call of the instance.
#![cfg_attr(not(test), deny(clippy::arithmetic_side_effects))]

pub mod demo;
pub mod keys;
pub mod model;
pub mod money;
pub mod numbers;
pub mod pricing;
pub mod reorder;
pub mod seed;
pub mod store;
pub mod tools;
pub mod units;

use draftline_contract::tool::{ModuleMeta, Registry};

/// The modules (namespaces) and what each cannot do.
pub const MODULES: [ModuleMeta; 4] = [
    ModuleMeta {
        name: "inventory",
        description: "Stock of your branch per warehouse, and the items at or below their reorder point with what to \
order. Read only: cannot move, adjust, reserve or count stock, and cannot order (purchasing drafts orders).",
    },
    ModuleMeta {
        name: "purchasing",
        description: "Vendors that supply your branch, purchase orders of your branch, and purchase-order drafts. \
Cannot approve, send, receive or cancel orders, and cannot change vendors or prices: a person does that in the ERP.",
    },
    ModuleMeta {
        name: "sales",
        description: "Customers of your branch with their credit, open orders and overdue invoices, and quote \
drafts. Cannot send, approve or cancel quotes or orders, change prices, or lift a credit hold.",
    },
    ModuleMeta {
        name: "finance",
        description: "Tax types, and the receivables and payables ageing of your branch. Read only: cannot post, pay, \
write off or change anything in the ledger.",
    },
];

/// Every tool of draftline, sorted by name.
pub fn catalogue() -> Registry {
    MODULES
        .into_iter()
        .fold(Registry::new(), Registry::module)
        .read(tools::inventory_get_stock::InventoryGetStock)
        .read(tools::inventory_list_below_reorder::InventoryListBelowReorder)
        .read(tools::purchasing_search_vendors::PurchasingSearchVendors)
        .read(tools::purchasing_search_pos::PurchasingSearchPos)
        .read(tools::purchasing_get_po::PurchasingGetPo)
        .draft(tools::purchasing_create_po_draft::PurchasingCreatePoDraft)
        .read(tools::sales_search_customers::SalesSearchCustomers)
        .read(tools::sales_get_customer_summary::SalesGetCustomerSummary)
        .draft(tools::sales_create_quote_draft::SalesCreateQuoteDraft)
        .read(tools::finance_list_tax_types::FinanceListTaxTypes)
        .read(tools::finance_get_account_summary::FinanceGetAccountSummary)
}
