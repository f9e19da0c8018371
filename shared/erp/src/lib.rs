//! # draftline-erp
//!
//! The ERP side of draftline: the data model in DynamoDB, the tool
//! catalogue, and the demo tenant.
//!
//! ## Layout
//! - [`catalogue`]: every tool and module of a deployment, as a [`Registry`].
//! - [`tools`]: one file per tool (`inventory_get_stock`,
//!   `purchasing_create_po_draft`, `purchasing_get_po`, …).
//! - [`model`]: items, vendors and price lists, stock and reorder policies,
//!   purchase orders, with their DynamoDB item mappings; [`keys`]: every key.
//! - [`store`]: the reads, scoped by tenant and branch.
//! - [`money`] (exact decimals, currency, rounding) and [`units`] (the unit enum).
//! - [`demo`] (the demo tenant and users) and [`seed`] (writing it once).

pub mod demo;
pub mod keys;
pub mod model;
pub mod money;
pub mod seed;
pub mod store;
pub mod tools;
pub mod units;

use draftline_contract::tool::{ModuleMeta, Registry};

/// The modules (namespaces) and what each cannot do.
pub const MODULES: [ModuleMeta; 4] = [
    ModuleMeta {
        name: "inventory",
        description: "Stock levels and reorder needs of your branch. Read only: cannot move, adjust, reserve or count stock.",
    },
    ModuleMeta {
        name: "purchasing",
        description: "Vendors, purchase orders and purchase-order drafts of your branch. Cannot approve, send or cancel orders.",
    },
    ModuleMeta {
        name: "sales",
        description: "Customers and quote drafts of your branch. Cannot approve, send or cancel quotes or orders.",
    },
    ModuleMeta {
        name: "finance",
        description: "Tax types and account summaries. Read only: cannot post, pay or change anything in the ledger.",
    },
];

/// Every tool of draftline, sorted by name.
pub fn catalogue() -> Registry {
    MODULES
        .into_iter()
        .fold(Registry::new(), Registry::module)
        .read(tools::inventory_get_stock::InventoryGetStock)
        .read(tools::purchasing_get_po::PurchasingGetPo)
        .draft(tools::purchasing_create_po_draft::PurchasingCreatePoDraft)
}
