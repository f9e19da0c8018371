//! # draftline-erp
//!
//! The ERP domain of draftline and the tool catalogue over the ERP port.
//! Nothing here knows DynamoDB or any ERP's API: a backend crate implements
//! [`port::Erp`] (`draftline-erp-builtin`, `draftline-erp-tryton`), and
//! [`catalogue`] builds every tool over it.
//!
//! ## Layout
//! - [`port`]: the ERP port — [`port::Inventory`], [`port::Purchasing`],
//!   [`port::Sales`], [`port::Finance`] = [`port::Erp`] — its scope, pages,
//!   filters, and how a checked draft is placed (atomic with draftline's
//!   table, or external under a lease).
//! - [`domain`]: items and units, vendors and price lists, stock and reorder
//!   policies, purchase orders, customers, sales price lists, sales orders,
//!   quotes, invoices and bills, tax types.
//! - [`tools`]: one file per tool, thirteen in five modules (inventory,
//!   purchasing, sales, finance, and agent: the examiner of the tenant's
//!   limits; see [`tools`] for the list).
//! - [`numbers`] (document numbers: one grammar for drafts and reads),
//!   [`money`] (exact decimals, currency, rounding), [`units`] (the unit
//!   enum), [`pricing`] (a line's price from a price list) and [`reorder`]
//!   (when and how much to reorder).
//! - [`demo`]: the demo story (tenant, branches, users, items, vendors,
//!   prices, stock, customers, documents) every backend seeds, read from
//!   its one data file, `demo/demo.json` (the Tryton seed reads it too).
//! - `testing` (this crate's tests and the `testing` feature only): an
//!   in-memory ERP implementing the whole port over the demo story, and a
//!   test caller, so each tool's rules are unit-tested without a database.

// One bad stored number must be an error, never a panic: with
// `panic = "abort"` a panic would end every call of the instance.
#![cfg_attr(not(test), deny(clippy::arithmetic_side_effects))]

pub mod demo;
pub mod domain;
mod drafting;
pub mod money;
pub mod numbers;
pub mod port;
pub mod pricing;
pub mod reorder;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod tools;
pub mod units;

use std::sync::Arc;

use draftline_contract::tool::{ModuleMeta, Registry, Tier, ToolSpec};

/// The modules (namespaces) and what each cannot do.
pub const MODULES: [ModuleMeta; 5] = [
    ModuleMeta {
        name: "agent",
        description: "What the tenant's policy still lets this agent run and the person it acts for draft (drafts, \
value, calls per minute, counterparties). Read only: cannot raise, reset or change a limit; a person sets the policy.",
    },
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

/// A tool of the catalogue: built over the ERP port and added to a
/// registry in its tier. A deployed tool's function registers its one tool
/// ([`catalogue_of`]), so its binary links no other tool's code.
pub trait CatalogueTool: ToolSpec {
    /// Adds the tool, built over `erp`, to `registry`.
    fn register(registry: Registry, erp: Arc<dyn port::Erp>) -> Registry;
}

/// Implements [`CatalogueTool`] for each tool of its tier, and [`catalogue`]
/// as all of them.
macro_rules! catalogue {
    ($($tier:ident $tool:ty),* $(,)?) => {
        $(impl CatalogueTool for $tool {
            fn register(registry: Registry, erp: Arc<dyn port::Erp>) -> Registry {
                registry.$tier(<$tool>::new(erp))
            }
        })*

        /// Every tool of draftline over `erp`, sorted by name.
        pub fn catalogue(erp: Arc<dyn port::Erp>) -> Registry {
            let registry = modules();
            $(let registry = <$tool as CatalogueTool>::register(registry, erp.clone());)*
            registry
        }

        /// Every tool's definition, with the module descriptions, and no
        /// tool's code: what the listing function serves, so its binary
        /// links no ERP backend and no tool.
        pub fn definitions() -> Registry {
            let registry = modules();
            $(let registry = registry.listed::<$tool>(tier!($tier));)*
            registry
        }
    };
}

/// The [`Tier`] of a registry method's name (`read`, `draft`).
macro_rules! tier {
    (read) => {
        Tier::Read
    };
    (draft) => {
        Tier::Draft
    };
}

catalogue! {
    read tools::agent_get_limits::AgentGetLimits,
    read tools::inventory_get_stock::InventoryGetStock,
    read tools::inventory_list_below_reorder::InventoryListBelowReorder,
    read tools::purchasing_search_vendors::PurchasingSearchVendors,
    read tools::purchasing_search_pos::PurchasingSearchPos,
    read tools::purchasing_get_po::PurchasingGetPo,
    draft tools::purchasing_create_po_draft::PurchasingCreatePoDraft,
    read tools::sales_search_customers::SalesSearchCustomers,
    read tools::sales_get_customer_summary::SalesGetCustomerSummary,
    read tools::sales_get_quote::SalesGetQuote,
    draft tools::sales_create_quote_draft::SalesCreateQuoteDraft,
    read tools::finance_list_tax_types::FinanceListTaxTypes,
    read tools::finance_get_account_summary::FinanceGetAccountSummary,
}

/// Tool `T` alone over `erp`, with the module descriptions.
pub fn catalogue_of<T: CatalogueTool>(erp: Arc<dyn port::Erp>) -> Registry {
    T::register(modules(), erp)
}

fn modules() -> Registry {
    MODULES.into_iter().fold(Registry::new(), Registry::module)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::MemoryErp;
    use crate::tools::{inventory_get_stock::InventoryGetStock, purchasing_create_po_draft::PurchasingCreatePoDraft};
    use crate::tools::{purchasing_get_po::PurchasingGetPo, sales_get_quote::SalesGetQuote};

    #[test]
    fn a_registry_lists_served_and_listed_tools_together_in_name_order_and_serves_only_its_own() {
        let erp = MemoryErp::demo().unwrap().port();
        // Served: one before, one between and one after the listed ones by name.
        let registry = catalogue_of::<PurchasingGetPo>(erp)
            .listed::<SalesGetQuote>(Tier::Read)
            .listed::<InventoryGetStock>(Tier::Read)
            .listed::<PurchasingCreatePoDraft>(Tier::Draft);
        let names: Vec<&str> = registry.all().map(|d| d.name).collect();
        assert_eq!(
            names,
            [
                "inventory_get_stock",
                "purchasing_create_po_draft",
                "purchasing_get_po",
                "sales_get_quote"
            ]
        );
        assert!(registry.get("purchasing_get_po").is_some());
        for listed in ["inventory_get_stock", "purchasing_create_po_draft", "sales_get_quote"] {
            assert!(registry.get(listed).is_none(), "{listed} is not served here");
        }
        let tiers: Vec<Tier> = registry.all().map(|d| d.tier).collect();
        assert_eq!(tiers, [Tier::Read, Tier::Draft, Tier::Read, Tier::Read]);
    }
}
