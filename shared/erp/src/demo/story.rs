//! The demo story as `demo/demo.json` writes it: one row type per section,
//! parsed once. The Tryton seed (`shared/erp-tryton/tryton/seed.py`) reads
//! the same file; the row and field names are the file's, so both sides
//! read it alike.
//!
//! Strings are borrowed from the file (it is part of the binary), so the
//! public constants of [`super`] can hand out `&'static str`: a string in
//! the file therefore holds no JSON escape. A unit test parses the file.

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

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Story<'a> {
    #[allow(dead_code, reason = "a unit test checks it is demo::TENANT")]
    pub tenant: &'a str,
    pub currency: &'a str,
    /// The tenant's company (Tryton's company party; the built-in backend
    /// keeps none).
    #[allow(dead_code, reason = "read by the Tryton seed only")]
    #[serde(borrow)]
    pub company: Company<'a>,
    #[serde(borrow)]
    pub branches: Vec<Branch<'a>>,
    #[serde(borrow)]
    pub users: Vec<User<'a>>,
    #[serde(borrow)]
    pub items: Vec<Item<'a>>,
    #[serde(borrow)]
    pub vendors: Vec<Vendor<'a>>,
    #[serde(borrow)]
    pub prices: Vec<Price<'a>>,
    #[serde(borrow)]
    pub stock: Vec<Stock<'a>>,
    #[serde(borrow)]
    pub policies: Vec<Policy<'a>>,
    #[serde(borrow)]
    pub tax_types: Vec<TaxType<'a>>,
    #[serde(borrow)]
    pub list_prices: Vec<ListPrice<'a>>,
    #[serde(borrow)]
    pub customers: Vec<Customer<'a>>,
    #[serde(borrow)]
    pub sales_orders: Vec<SalesOrder<'a>>,
    #[serde(borrow)]
    pub invoices: Vec<Invoice<'a>>,
    #[serde(borrow)]
    pub bills: Vec<Bill<'a>>,
    #[serde(borrow)]
    pub jakarta_purchase_orders: Documents<'a, PeoplesPo<'a>>,
    #[serde(borrow)]
    pub agent_purchase_orders: Documents<'a, AgentPo<'a>>,
    #[serde(borrow)]
    pub agent_quotes: AgentQuotes<'a>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code, reason = "read by the Tryton seed only")]
pub(super) struct Company<'a> {
    pub name: &'a str,
    pub code: &'a str,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Branch<'a> {
    pub id: &'a str,
    pub code: &'a str,
    pub name: &'a str,
    /// The first is the branch's main storage location in Tryton.
    #[serde(borrow)]
    pub warehouses: Vec<&'a str>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct User<'a> {
    pub sub: &'a str,
    /// The person's name (the Tryton user's, with the login after it).
    #[allow(dead_code, reason = "read by the Tryton seed only")]
    pub name: &'a str,
    pub branch_id: &'a str,
    pub branch_code: &'a str,
    pub scope: &'a str,
    #[serde(borrow)]
    pub roles: Vec<&'a str>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Item<'a> {
    pub code: &'a str,
    pub name: &'a str,
    pub base_uom: Uom,
    /// The units other than the base unit.
    pub units: Vec<Unit>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Unit {
    pub uom: Uom,
    pub factor: i64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Vendor<'a> {
    pub code: &'a str,
    pub name: &'a str,
    #[serde(borrow)]
    pub branches: Vec<&'a str>,
    pub payment_terms_days: i64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Price<'a> {
    pub vendor: &'a str,
    pub item: &'a str,
    pub uom: Uom,
    pub unit_price: i64,
}

/// Stock in base units.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Stock<'a> {
    pub branch: &'a str,
    pub warehouse: &'a str,
    pub item: &'a str,
    pub on_hand: i64,
    pub reserved: i64,
}

/// A reorder policy in base units.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Policy<'a> {
    pub branch: &'a str,
    pub item: &'a str,
    pub reorder_point: i64,
    pub reorder_qty: i64,
    pub preferred_vendor: &'a str,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TaxType<'a> {
    pub code: TaxCode,
    pub name: &'a str,
    pub rate_percent: i64,
    pub applies_to: &'a str,
    pub active: bool,
    /// The last day of an inactive rate (Tryton's end date of the tax).
    #[allow(dead_code, reason = "read by the Tryton seed only")]
    pub ended_on: Option<NaiveDate>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ListPrice<'a> {
    pub list: &'a str,
    pub item: &'a str,
    pub uom: Uom,
    pub unit_price: i64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Customer<'a> {
    pub branch: &'a str,
    pub code: &'a str,
    pub name: &'a str,
    pub city: &'a str,
    pub price_list: &'a str,
    pub credit_limit: i64,
    pub payment_terms_days: i64,
    pub tax_exempt: bool,
    pub credit_hold: Option<&'a str>,
}

/// A sales order; `line` and `shipped` are how it came about (the Tryton
/// seed makes it from them; the built-in backend keeps the totals only).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SalesOrder<'a> {
    pub branch: &'a str,
    pub number: &'a str,
    pub customer: &'a str,
    pub order_date: NaiveDate,
    pub status: SalesOrderStatus,
    pub total: i64,
    pub open_amount: i64,
    #[allow(dead_code, reason = "read by the Tryton seed only")]
    #[serde(borrow)]
    pub line: Line<'a>,
    #[allow(dead_code, reason = "read by the Tryton seed only")]
    #[serde(borrow)]
    pub shipped: Option<Shipped<'a>>,
}

/// The part of a sales order shipped, when, and the invoice it made.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code, reason = "read by the Tryton seed only")]
pub(super) struct Shipped<'a> {
    pub qty: i64,
    pub on: NaiveDate,
    pub invoice: Option<&'a str>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Invoice<'a> {
    pub branch: &'a str,
    pub number: &'a str,
    pub customer: &'a str,
    pub invoice_date: NaiveDate,
    pub due_date: NaiveDate,
    pub amount: i64,
    pub paid: i64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Bill<'a> {
    pub branch: &'a str,
    pub number: &'a str,
    pub vendor: &'a str,
    pub bill_date: NaiveDate,
    pub due_date: NaiveDate,
    pub amount: i64,
    pub paid: i64,
}

/// A document line as drafted: item, quantity and unit; its price comes
/// from the vendor's or the customer's price list.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Line<'a> {
    pub item: &'a str,
    pub qty: i64,
    pub uom: Uom,
}

/// The documents of one branch, drafted for one person.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Documents<'a, T> {
    pub branch: &'a str,
    pub drafted_on_behalf_of: &'a str,
    pub documents: Vec<T>,
}

/// A purchase order a person made in the ERP.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PeoplesPo<'a> {
    pub draft_id: &'a str,
    pub number: &'a str,
    pub status: PoStatus,
    pub vendor: &'a str,
    #[serde(borrow)]
    pub lines: Vec<Line<'a>>,
    pub created_at: &'a str,
    pub needed_by: NaiveDate,
    pub client_ref: &'a str,
    pub note: Option<&'a str>,
}

/// A purchase order an agent drafted, and what a person decided.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AgentPo<'a> {
    pub draft_id: &'a str,
    pub number: &'a str,
    pub vendor: &'a str,
    #[serde(borrow)]
    pub lines: Vec<Line<'a>>,
    pub created_at: &'a str,
    pub needed_by: NaiveDate,
    pub note: &'a str,
    pub client_ref: &'a str,
    #[serde(borrow)]
    pub decision: Option<Decision<'a>>,
    #[serde(borrow)]
    pub provenance: Provenance<'a>,
    /// The document's `draftline_key` in an external ERP (the Tryton
    /// seed's); the server's test `the_demo_files_draft_keys_are_the_keys_the_server_forms` checks it.
    #[allow(dead_code, reason = "read by the Tryton seed only")]
    pub draftline_key: &'a str,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AgentQuotes<'a> {
    pub branch: &'a str,
    pub drafted_on_behalf_of: &'a str,
    /// The tax of every line.
    pub tax_code: TaxCode,
    #[serde(borrow)]
    pub documents: Vec<AgentQuote<'a>>,
}

/// A quote an agent drafted, and what a person decided.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AgentQuote<'a> {
    pub quote_id: &'a str,
    pub number: &'a str,
    pub customer: &'a str,
    #[serde(borrow)]
    pub lines: Vec<Line<'a>>,
    pub created_at: &'a str,
    pub valid_until: NaiveDate,
    pub note: &'a str,
    pub credit_check: &'a str,
    pub client_ref: &'a str,
    #[serde(borrow)]
    pub decision: Option<Decision<'a>>,
    #[serde(borrow)]
    pub provenance: Provenance<'a>,
    /// See [`AgentPo::draftline_key`].
    #[allow(dead_code, reason = "read by the Tryton seed only")]
    pub draftline_key: &'a str,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Decision<'a> {
    pub verdict: Verdict,
    pub reason: Option<&'a str>,
    pub decided_by: &'a str,
    pub decided_at: &'a str,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Provenance<'a> {
    pub run_id: &'a str,
    pub tool_call_id: &'a str,
    pub model: &'a str,
    pub prompt_version: &'a str,
    #[serde(borrow)]
    pub looked_up: LookedUp<'a>,
}

/// The read an agent made before drafting; its arguments as the call
/// sent them (compact JSON).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct LookedUp<'a> {
    pub tool: &'a str,
    #[serde(deserialize_with = "compact_json")]
    pub arguments: String,
    pub tool_call_id: &'a str,
}

fn compact_json<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    serde_json::Value::deserialize(deserializer).map(|value| value.to_string())
}
