//! The demo story as `demo/demo.json` writes it: one row type per section,
//! parsed once. The Tryton seed (`shared/erp-tryton/tryton/seed.py`) reads
//! the same file; the row and field names are the file's, so both sides
//! read it alike. A row refuses a field it does not know (a typo in the
//! file fails the unit test that parses it, not a demo read).
//!
//! Strings are borrowed from the file (it is part of the binary), so the
//! public constants of [`super`] can hand out `&'static str`: a string in
//! the file therefore holds no JSON escape.

use std::sync::LazyLock;

use chrono::NaiveDate;
use serde::Deserialize;

use crate::domain::{PoStatus, SalesOrderStatus, TaxCode, Verdict};
use crate::units::Uom;

/// The file, as built into the binary.
pub(super) const DATA: &str = include_str!("../../demo/demo.json");

/// The story, parsed on first use.
pub(super) static STORY: LazyLock<Story<'static>> = LazyLock::new(|| {
    #[allow(
        clippy::expect_used,
        reason = "the file is a constant of the build; a unit test parses it"
    )]
    serde_json::from_str(DATA).expect("demo/demo.json is the demo story")
});

/// Declares the rows of the file: deserialized, unknown fields refused,
/// every field visible to the demo module.
macro_rules! rows {
    ($($(#[$meta:meta])* $name:ident<$lt:lifetime $(, $param:ident)?> {
        $($(#[$field_meta:meta])* $field:ident: $ty:ty,)*
    })*) => {
        $(
            $(#[$meta])*
            #[derive(Debug, Deserialize)]
            #[serde(deny_unknown_fields)]
            pub(super) struct $name<$lt $(, $param)?> {
                $($(#[$field_meta])* pub $field: $ty,)*
            }
        )*
    };
}

rows! {
    Story<'a> {
        #[allow(dead_code, reason = "a unit test checks it is demo::TENANT")]
        tenant: &'a str,
        branches: Vec<Branch<'a>>,
        users: Vec<User<'a>>,
        items: Vec<Item<'a>>,
        vendors: Vec<Vendor<'a>>,
        /// The tenant's company (Tryton's company party; the built-in
        /// backend keeps none).
        #[allow(dead_code, reason = "read by the Tryton seed only")]
        company: Company<'a>,
        /// The tenant's limits for its agents, as `draftline policy set`
        /// takes them (parsed by the contract's policy parser).
        agent_policy: serde_json::Value,
        prices: Vec<Price<'a>>,
        stock: Vec<Stock<'a>>,
        policies: Vec<Policy<'a>>,
        /// The currency of every amount.
        currency: &'a str,
        tax_types: Vec<TaxType<'a>>,
        list_prices: Vec<ListPrice<'a>>,
        customers: Vec<Customer<'a>>,
        jakarta_purchase_orders: Documents<'a, PeoplesPo<'a>>,
        sales_orders: Vec<SalesOrder<'a>>,
        invoices: Vec<OpenItem<'a>>,
        bills: Vec<OpenItem<'a>>,
        agent_purchase_orders: Documents<'a, AgentPo<'a>>,
        agent_quotes: AgentQuotes<'a>,
    }

    #[allow(dead_code, reason = "read by the Tryton seed only")]
    Company<'a> {
        name: &'a str,
        code: &'a str,
    }

    Branch<'a> {
        id: &'a str,
        /// The first is the branch's main storage location in Tryton.
        warehouses: Vec<&'a str>,
        code: &'a str,
        name: &'a str,
    }

    User<'a> {
        sub: &'a str,
        roles: Vec<&'a str>,
        /// The person's name (the Tryton user's, with the login after it).
        #[allow(dead_code, reason = "read by the Tryton seed only")]
        name: &'a str,
        branch_id: &'a str,
        branch_code: &'a str,
        scope: &'a str,
    }

    Item<'a> {
        code: &'a str,
        base_uom: Uom,
        name: &'a str,
        /// The units other than the base unit.
        units: Vec<Unit>,
    }

    Vendor<'a> {
        code: &'a str,
        payment_terms_days: i64,
        name: &'a str,
        branches: Vec<&'a str>,
    }

    /// A vendor's price of an item per unit.
    Price<'a> {
        vendor: &'a str,
        uom: Uom,
        item: &'a str,
        unit_price: i64,
    }

    /// Stock in base units.
    Stock<'a> {
        branch: &'a str,
        on_hand: i64,
        warehouse: &'a str,
        reserved: i64,
        item: &'a str,
    }

    /// A reorder policy in base units.
    Policy<'a> {
        branch: &'a str,
        item: &'a str,
        reorder_point: i64,
        reorder_qty: i64,
        preferred_vendor: &'a str,
    }

    TaxType<'a> {
        code: TaxCode,
        name: &'a str,
        rate_percent: i64,
        active: bool,
        applies_to: &'a str,
        /// The last day of an inactive rate (Tryton's end date of the tax).
        #[allow(dead_code, reason = "read by the Tryton seed only")]
        ended_on: Option<NaiveDate>,
    }

    /// A sales price list's price of an item per unit (before tax).
    ListPrice<'a> {
        uom: Uom,
        list: &'a str,
        unit_price: i64,
        item: &'a str,
    }

    Customer<'a> {
        branch: &'a str,
        code: &'a str,
        credit_limit: i64,
        name: &'a str,
        tax_exempt: bool,
        city: &'a str,
        payment_terms_days: i64,
        price_list: &'a str,
        credit_hold: Option<&'a str>,
    }

    /// A sales order; `line` and `shipped` are how it came about (the
    /// Tryton seed makes it from them; the built-in backend keeps the
    /// totals only).
    SalesOrder<'a> {
        number: &'a str,
        status: SalesOrderStatus,
        branch: &'a str,
        order_date: NaiveDate,
        customer: &'a str,
        total: i64,
        open_amount: i64,
        #[allow(dead_code, reason = "read by the Tryton seed only")]
        line: Line<'a>,
        #[allow(dead_code, reason = "read by the Tryton seed only")]
        shipped: Option<Shipped<'a>>,
    }

    /// The part of a sales order shipped, when, and the invoice it made.
    #[allow(dead_code, reason = "read by the Tryton seed only")]
    Shipped<'a> {
        qty: i64,
        on: NaiveDate,
        invoice: Option<&'a str>,
    }

    /// An open item of the ledger: a customer invoice (its customer, its
    /// invoice date) or a vendor bill (its vendor, its bill date).
    OpenItem<'a> {
        number: &'a str,
        #[serde(alias = "customer", alias = "vendor")]
        party: &'a str,
        #[serde(alias = "invoice_date", alias = "bill_date")]
        date: NaiveDate,
        branch: &'a str,
        due_date: NaiveDate,
        amount: i64,
        paid: i64,
    }

    /// A document line as drafted: item, quantity and unit; its price
    /// comes from the vendor's or the customer's price list.
    Line<'a> {
        item: &'a str,
        qty: i64,
        uom: Uom,
    }

    /// The documents of one branch, drafted for one person.
    Documents<'a, T> {
        branch: &'a str,
        drafted_on_behalf_of: &'a str,
        documents: Vec<T>,
    }

    /// A purchase order a person made in the ERP.
    PeoplesPo<'a> {
        draft_id: &'a str,
        status: PoStatus,
        number: &'a str,
        lines: Vec<Line<'a>>,
        vendor: &'a str,
        needed_by: NaiveDate,
        created_at: &'a str,
        note: Option<&'a str>,
        client_ref: &'a str,
    }

    /// A purchase order an agent drafted, and what a person decided.
    AgentPo<'a> {
        draft_id: &'a str,
        number: &'a str,
        vendor: &'a str,
        needed_by: NaiveDate,
        lines: Vec<Line<'a>>,
        created_at: &'a str,
        note: &'a str,
        provenance: Provenance<'a>,
        decision: Option<Decision<'a>>,
    }

    AgentQuotes<'a> {
        branch: &'a str,
        /// The tax of every line.
        tax_code: TaxCode,
        drafted_on_behalf_of: &'a str,
        documents: Vec<AgentQuote<'a>>,
    }

    /// A quote an agent drafted, and what a person decided.
    AgentQuote<'a> {
        quote_id: &'a str,
        valid_until: NaiveDate,
        number: &'a str,
        lines: Vec<Line<'a>>,
        customer: &'a str,
        credit_check: &'a str,
        created_at: &'a str,
        decision: Option<Decision<'a>>,
        note: &'a str,
        provenance: Provenance<'a>,
    }

    Decision<'a> {
        verdict: Verdict,
        reason: Option<&'a str>,
        decided_by: &'a str,
        decided_at: &'a str,
    }

    /// How the agent drafted it: its idempotency key's parts (run and
    /// client_ref), its headers, the read it made first, and the
    /// document's `draftline_key` in an external ERP (the Tryton seed's;
    /// the server's test `the_demo_files_draft_keys_are_the_keys_the_server_forms`
    /// checks it against the key the server forms).
    Provenance<'a> {
        client_ref: &'a str,
        run_id: &'a str,
        tool_call_id: &'a str,
        model: &'a str,
        prompt_version: &'a str,
        looked_up: LookedUp<'a>,
        #[allow(dead_code, reason = "read by the Tryton seed only")]
        draftline_key: &'a str,
    }

    /// The read an agent made before drafting; its arguments as the call
    /// sent them (compact JSON).
    LookedUp<'a> {
        tool: &'a str,
        #[serde(deserialize_with = "compact_json")]
        arguments: String,
        tool_call_id: &'a str,
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Unit {
    pub uom: Uom,
    pub factor: i64,
}

fn compact_json<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    serde_json::Value::deserialize(deserializer).map(|value| value.to_string())
}
