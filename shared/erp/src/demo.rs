//! The demo tenant (DESIGN.md, "Demo data"), read from one data file,
//! [`demo/demo.json`](../demo/demo.json), which the Tryton seed
//! (`shared/erp-tryton/tryton/seed.py`) reads too: a distributor with three
//! branches, items with units, vendors with price lists (and the branches
//! they supply), stock with items below their reorder point in every branch,
//! customers with price lists, credit limits, open orders and overdue
//! invoices, vendor bills, tax types, six demo users, and agent drafts
//! waiting for review, approved and rejected.
//!
//! Dates are set around 2026-11-29 (the tests' clock), so invoices fall in
//! every ageing bucket on that day. What each branch exercises:
//! - SBY-01: three items due for reorder (one per unit rule), vendors
//!   V-00231, V-00415, V-00508 (not V-00612), and three agent PO drafts of
//!   the days before ([`agent_purchase_orders`]): one waiting for review,
//!   one approved, one rejected with its reason.
//! - JKT-01: two items due, PO-JKT-000001 (the document other branches must
//!   not see), customers and bills.
//! - BDG-01: three items due, one whose preferred vendor (V-00415) does not
//!   supply Bandung; customers over their credit limit, on credit hold and
//!   tax exempt; invoices overdue in every bucket; three agent quote drafts
//!   ([`agent_quotes`]) in every review status.
//!
//! The agent drafts are dated days before the tests' clock, outside the
//! 24 h near-duplicate window, and the branches' number sequences start
//! after them.

//!
//! The file holds the story's data; this module builds the domain values
//! from it (prices of document lines looked up in the price lists, names,
//! totals, taxes). `story` is the file's format.

// Fixed demo data computed from the file at first use: no caller input
// reaches this arithmetic.
#![allow(clippy::arithmetic_side_effects)]

mod story;

use std::sync::LazyLock;

use rust_decimal::Decimal;

use crate::domain::po::VendorRef;
use crate::domain::quote::CustomerRef;
use crate::domain::{
    BranchVendor, Customer, CustomerInvoice, Decision, Item, ListPrice, PoDraft, PoFields, PoLine, PoStatus,
    PriceEntry, PurchaseOrder, Quote, QuoteDraft, QuoteFields, QuoteLine, ReorderPolicy, Reviewable, SalesOrder,
    StockLevel, TaxType, UnitConversion, Vendor, VendorBill,
};
use crate::money::Money;
use crate::units::Uom;
use story::STORY;

/// The demo data file, as built into the binary (the Tryton backend writes
/// it next to `seed.py`).
pub const DATA: &str = story::DATA;

/// The demo tenant id (the file's `tenant`; a unit test checks they agree).
pub const TENANT: &str = "demo";

/// The demo tenant's limits for its agents (the file's `agent_policy`):
/// generous enough for a day of demo drafting, with Surabaya's runs held to
/// half the tenant's value. The seed stores it as version 1.
pub fn agent_policy() -> Result<draftline_contract::policy::Policy, Vec<draftline_contract::FieldIssue>> {
    draftline_contract::policy::Policy::parse(STORY.agent_policy.to_string().as_bytes())
}

/// A demo branch.
#[derive(Debug, Clone, Copy)]
pub struct DemoBranch {
    /// Branch id.
    pub id: &'static str,
    /// Code printed on documents.
    pub code: &'static str,
    /// City.
    pub name: &'static str,
    /// Warehouses.
    pub warehouses: &'static [&'static str],
}

/// The three branches.
pub static BRANCHES: LazyLock<Vec<DemoBranch>> = LazyLock::new(|| {
    STORY
        .branches
        .iter()
        .map(|b| DemoBranch {
            id: b.id,
            code: b.code,
            name: b.name,
            warehouses: &b.warehouses,
        })
        .collect()
});

/// A demo user: who they are, where, and what they may do.
#[derive(Debug, Clone, Copy)]
pub struct DemoUser {
    /// Token subject.
    pub sub: &'static str,
    /// Branch id.
    pub branch_id: &'static str,
    /// Branch code.
    pub branch_code: &'static str,
    /// Space-separated scopes.
    pub scope: &'static str,
    /// Roles.
    pub roles: &'static [&'static str],
}

/// The demo users of DESIGN.md: four whose agents call the tools, and two
/// approvers, people who decide on agent drafts on the review pages (their
/// approve scopes are accepted by no tool).
pub static USERS: LazyLock<Vec<DemoUser>> = LazyLock::new(|| {
    STORY
        .users
        .iter()
        .map(|u| DemoUser {
            roles: &u.roles,
            sub: u.sub,
            branch_id: u.branch_id,
            branch_code: u.branch_code,
            scope: u.scope,
        })
        .collect()
});

/// The demo user called `sub`.
pub fn user(sub: &str) -> Option<&'static DemoUser> {
    USERS.iter().find(|u| u.sub == sub)
}

fn currency() -> String {
    STORY.currency.to_owned()
}

fn idr(amount: Decimal) -> Money {
    Money::new(amount, STORY.currency)
}

/// The item master.
pub fn items() -> Vec<Item> {
    STORY
        .items
        .iter()
        .map(|item| Item {
            code: item.code.into(),
            name: item.name.into(),
            base_uom: item.base_uom,
            units: std::iter::once(UnitConversion {
                uom: item.base_uom,
                factor: 1,
            })
            .chain(item.units.iter().map(|u| UnitConversion {
                uom: u.uom,
                factor: u.factor,
            }))
            .collect(),
        })
        .collect()
}

/// The vendors.
pub fn vendors() -> Vec<Vendor> {
    STORY
        .vendors
        .iter()
        .map(|v| Vendor {
            code: v.code.into(),
            name: v.name.into(),
            currency: currency(),
            branches: v.branches.iter().map(|b| (*b).to_owned()).collect(),
            payment_terms_days: v.payment_terms_days,
        })
        .collect()
}

/// The price lists.
pub fn prices() -> Vec<PriceEntry> {
    STORY
        .prices
        .iter()
        .map(|p| PriceEntry {
            vendor: p.vendor.into(),
            item: p.item.into(),
            uom: p.uom,
            unit_price: Decimal::from(p.unit_price),
        })
        .collect()
}

/// Stock on hand and reserved per warehouse: (branch, level).
pub fn stock() -> Vec<(&'static str, StockLevel)> {
    STORY
        .stock
        .iter()
        .map(|s| {
            (
                s.branch,
                StockLevel {
                    item: s.item.into(),
                    warehouse: s.warehouse.into(),
                    on_hand: s.on_hand,
                    reserved: s.reserved,
                },
            )
        })
        .collect()
}

/// Reorder policies in base units: (branch, policy). One names a vendor
/// that does not supply its branch (BDG-01's WLD-0501, V-00415): the
/// reorder list says so.
pub fn policies() -> Vec<(&'static str, ReorderPolicy)> {
    STORY
        .policies
        .iter()
        .map(|p| {
            (
                p.branch,
                ReorderPolicy {
                    item: p.item.into(),
                    reorder_point: p.reorder_point,
                    reorder_qty: p.reorder_qty,
                    preferred_vendor: p.preferred_vendor.into(),
                },
            )
        })
        .collect()
}

/// Each vendor's listing in every branch it supplies: (branch, listing).
pub fn branch_vendors() -> Vec<(&'static str, BranchVendor)> {
    let prices = prices();
    let mut out = Vec::new();
    for vendor in vendors() {
        let items: Vec<String> = prices
            .iter()
            .filter(|p| p.vendor == vendor.code)
            .map(|p| p.item.clone())
            .collect();
        for branch in BRANCHES.iter() {
            if vendor.supplies(branch.id) {
                out.push((branch.id, BranchVendor::of(&vendor, items.clone())));
            }
        }
    }
    out
}

/// The tax types.
pub fn tax_types() -> Vec<TaxType> {
    STORY
        .tax_types
        .iter()
        .map(|t| TaxType {
            code: t.code,
            name: t.name.into(),
            rate_percent: Decimal::from(t.rate_percent),
            applies_to: t.applies_to.into(),
            active: t.active,
        })
        .collect()
}

/// The sales price lists (per unit, before tax). The wholesale list has
/// fewer items, some only by the box.
pub fn list_prices() -> Vec<ListPrice> {
    STORY
        .list_prices
        .iter()
        .map(|p| ListPrice {
            list: p.list.into(),
            item: p.item.into(),
            uom: p.uom,
            unit_price: Decimal::from(p.unit_price),
        })
        .collect()
}

/// The customers: (branch, customer).
pub fn customers() -> Vec<(&'static str, Customer)> {
    STORY
        .customers
        .iter()
        .map(|c| {
            (
                c.branch,
                Customer {
                    code: c.code.into(),
                    name: c.name.into(),
                    city: c.city.into(),
                    price_list: c.price_list.into(),
                    currency: currency(),
                    credit_limit: Decimal::from(c.credit_limit),
                    payment_terms_days: c.payment_terms_days,
                    tax_exempt: c.tax_exempt,
                    credit_hold: c.credit_hold.map(str::to_owned),
                },
            )
        })
        .collect()
}

/// The sales orders: (branch, order).
pub fn sales_orders() -> Vec<(&'static str, SalesOrder)> {
    STORY
        .sales_orders
        .iter()
        .map(|o| {
            (
                o.branch,
                SalesOrder {
                    number: o.number.into(),
                    customer: o.customer.into(),
                    order_date: o.order_date,
                    status: o.status,
                    total: Decimal::from(o.total),
                    open_amount: Decimal::from(o.open_amount),
                    currency: currency(),
                },
            )
        })
        .collect()
}

/// The name of customer or vendor `code`.
fn party_name(code: &str) -> String {
    let customers = STORY.customers.iter().map(|c| (c.code, c.name));
    let vendors = STORY.vendors.iter().map(|v| (v.code, v.name));
    customers
        .chain(vendors)
        .find(|(party, _)| *party == code)
        .map(|(_, name)| name.to_owned())
        .unwrap_or_default()
}

/// The customer invoices: (branch, invoice).
pub fn invoices() -> Vec<(&'static str, CustomerInvoice)> {
    STORY
        .invoices
        .iter()
        .map(|i| {
            (
                i.branch,
                CustomerInvoice {
                    number: i.number.into(),
                    customer: i.party.into(),
                    customer_name: party_name(i.party),
                    invoice_date: i.date,
                    due_date: i.due_date,
                    amount: Decimal::from(i.amount),
                    paid: Decimal::from(i.paid),
                    currency: currency(),
                },
            )
        })
        .collect()
}

/// The vendor bills: (branch, bill).
pub fn bills() -> Vec<(&'static str, VendorBill)> {
    STORY
        .bills
        .iter()
        .map(|b| {
            (
                b.branch,
                VendorBill {
                    currency: currency(),
                    paid: Decimal::from(b.paid),
                    amount: Decimal::from(b.amount),
                    due_date: b.due_date,
                    bill_date: b.date,
                    vendor_name: party_name(b.party),
                    vendor: b.party.into(),
                    number: b.number.into(),
                },
            )
        })
        .collect()
}

/// An item's name and a line's quantity in the item's base unit (and that
/// unit): what every document line says of its item.
fn in_base_units(line: &story::Line<'_>) -> (String, i64, Uom) {
    let item = STORY.items.iter().find(|i| i.code == line.item);
    let factor = item
        .and_then(|i| i.units.iter().find(|u| u.uom == line.uom))
        .map_or(1, |u| u.factor);
    (
        item.map(|i| i.name.to_owned()).unwrap_or_default(),
        line.qty * factor,
        item.map_or(line.uom, |i| i.base_uom),
    )
}

/// The price of `line` in price list `list` (a vendor's or a sales list)
/// of `prices`: (list, item, unit, price) rows.
fn price_of<'a>(
    mut prices: impl Iterator<Item = (&'a str, &'a str, Uom, i64)>,
    list: &str,
    line: &story::Line<'_>,
) -> Decimal {
    prices
        .find(|&(of, item, uom, _)| of == list && item == line.item && uom == line.uom)
        .map_or(Decimal::ZERO, |(.., price)| Decimal::from(price))
}

/// The lines of a seeded purchase order, priced from the vendor's list,
/// and their total.
fn po_lines(vendor: &str, lines: &[story::Line<'_>]) -> (Vec<PoLine>, Decimal) {
    let lines: Vec<PoLine> = (1u32..)
        .zip(lines)
        .map(|(line_no, line)| {
            let (item_name, base_qty, base_uom) = in_base_units(line);
            let prices = STORY.prices.iter().map(|p| (p.vendor, p.item, p.uom, p.unit_price));
            let unit_price = price_of(prices, vendor, line);
            PoLine {
                line_no,
                item_code: line.item.into(),
                item_name,
                qty: line.qty,
                uom: line.uom,
                base_qty,
                base_uom,
                unit_price: idr(unit_price),
                price_source: format!("price list {vendor}, {} per {}", line.item, line.uom),
                line_total: idr(unit_price * Decimal::from(line.qty)),
            }
        })
        .collect();
    let total = lines.iter().map(|l| amount(&l.line_total)).sum();
    (lines, total)
}

fn amount(money: &Money) -> Decimal {
    money.amount.parse::<Decimal>().unwrap_or_default()
}

/// A purchase order of the file's `documents` (its branch, for its person)
/// as drafted: priced from the vendor's list.
fn po_draft<T>(
    documents: &story::Documents<'_, T>,
    vendor: &str,
    needed_by: chrono::NaiveDate,
    lines: &[story::Line<'_>],
    note: Option<&str>,
    client_ref: &str,
    agent_run: Option<&str>,
) -> PoDraft {
    let (lines, total) = po_lines(vendor, lines);
    PoDraft {
        branch_id: documents.branch.into(),
        counterparty: VendorRef {
            code: vendor.into(),
            name: party_name(vendor),
        },
        currency: currency(),
        lines,
        subtotal: idr(total),
        total: idr(total),
        note: note.map(str::to_owned),
        client_ref: client_ref.into(),
        drafted_by_agent_run: agent_run.map(str::to_owned),
        drafted_on_behalf_of: documents.drafted_on_behalf_of.into(),
        drafted_by_tool_call: None,
        own: PoFields { needed_by },
    }
}

/// A purchase order of a person's, as the file has it: in its status, and
/// a person handled it.
fn peoples_po(orders: &story::Documents<'_, story::PeoplesPo<'_>>, po: &story::PeoplesPo<'_>) -> PurchaseOrder {
    let draft = po_draft(orders, po.vendor, po.needed_by, &po.lines, po.note, po.client_ref, None);
    let mut order = draft.numbered(po.draft_id.into(), po.number.into(), po.created_at.into());
    order.status = po.status;
    order.next_step = if po.status == PoStatus::Draft {
        format!("Draft {} awaits review.", po.number)
    } else {
        format!("{} was handled by a person in the ERP.", po.number)
    };
    order
}

/// How many purchase orders Jakarta had before the demo starts: enough that
/// `purchasing_search_pos` needs more than one page at its default size
/// (the file's count; a unit test checks they agree).
pub const JAKARTA_PO_COUNT: i64 = 24;

/// Jakarta's purchase-order history: PO-JKT-000001, a draft a person made
/// before any agent came along (so the demo has a document of another
/// branch to fail to read), and orders that
/// people drafted, approved, sent, received or cancelled over the autumn,
/// priced from the demo price lists.
pub fn jakarta_purchase_orders() -> Vec<PurchaseOrder> {
    let orders = &STORY.jakarta_purchase_orders;
    orders.documents.iter().map(|po| peoples_po(orders, po)).collect()
}

/// How an agent came to draft a seeded document: what its audit trail says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentProvenance {
    /// The agent run (`X-Agent-Run-Id`).
    pub run_id: &'static str,
    /// The draft call's tool-call id (`X-Tool-Call-Id`).
    pub tool_call_id: &'static str,
    /// The model (`X-Agent-Model`).
    pub model: &'static str,
    /// The prompt version (`X-Prompt-Version`).
    pub prompt_version: &'static str,
    /// The read the agent made a minute before drafting: tool, arguments
    /// (JSON) and tool-call id.
    pub looked_up: (&'static str, &'static str, &'static str),
}

impl From<&'static story::Provenance<'static>> for AgentProvenance {
    fn from(p: &'static story::Provenance<'static>) -> Self {
        Self {
            run_id: p.run_id,
            tool_call_id: p.tool_call_id,
            model: p.model,
            prompt_version: p.prompt_version,
            looked_up: (p.looked_up.tool, &p.looked_up.arguments, p.looked_up.tool_call_id),
        }
    }
}

/// How many purchase orders Surabaya's agent drafted before the demo starts
/// (the file's count; a unit test checks they agree).
pub const SURABAYA_AGENT_PO_COUNT: i64 = 3;
/// How many quotes Bandung's agent drafted before the demo starts (the
/// file's count; a unit test checks they agree).
pub const BANDUNG_AGENT_QUOTE_COUNT: i64 = 3;

/// An agent's draft as the file tells it: the document once numbered
/// (`numbered`), after the person's decision the file gives it, if any,
/// with its provenance.
fn agent_document<T: Reviewable>(
    numbered: T,
    decision: Option<&story::Decision<'_>>,
    provenance: &'static story::Provenance<'static>,
) -> (T, AgentProvenance) {
    let document = match decision {
        Some(d) => numbered.decided(Decision {
            verdict: d.verdict,
            reason: d.reason.map(str::to_owned),
            decided_by: d.decided_by.to_owned(),
            decided_at: d.decided_at.to_owned(),
        }),
        None => numbered,
    };
    (document, AgentProvenance::from(provenance))
}

/// Surabaya's agent drafts of the days before: PO-SBY-000001 waits for
/// review, PO-SBY-000002 was approved, PO-SBY-000003 rejected with a reason.
pub fn agent_purchase_orders() -> Vec<(PurchaseOrder, AgentProvenance)> {
    let drafts = &STORY.agent_purchase_orders;
    drafts
        .documents
        .iter()
        .map(|po| {
            let run = Some(po.provenance.run_id);
            let draft = po_draft(
                drafts,
                po.vendor,
                po.needed_by,
                &po.lines,
                Some(po.note),
                po.provenance.client_ref,
                run,
            );
            let numbered = draft.numbered(po.draft_id.into(), po.number.into(), po.created_at.into());
            agent_document(numbered, po.decision.as_ref(), &po.provenance)
        })
        .collect()
}

/// The lines of a seeded quote, priced from price list `list` and taxed at
/// the rate of the agent quotes' tax code.
fn quote_lines(list: &str, lines: &[story::Line<'_>]) -> Vec<QuoteLine> {
    let tax_code = STORY.agent_quotes.tax_code;
    let rate = STORY
        .tax_types
        .iter()
        .find(|t| t.code == tax_code)
        .map_or(Decimal::ZERO, |t| Decimal::from(t.rate_percent));
    (1u32..)
        .zip(lines)
        .map(|(line_no, line)| {
            let prices = STORY.list_prices.iter().map(|p| (p.list, p.item, p.uom, p.unit_price));
            let unit_price = price_of(prices, list, line);
            let net = crate::money::round(unit_price * Decimal::from(line.qty));
            let tax = crate::money::round(net * rate / Decimal::from(100));
            let (item_name, base_qty, base_uom) = in_base_units(line);
            QuoteLine {
                line_no,
                tax_rate_percent: rate.to_string(),
                item_name,
                item_code: line.item.into(),
                base_qty,
                qty: line.qty,
                base_uom,
                uom: line.uom,
                tax_code,
                tax_amount: idr(tax),
                net_amount: idr(net),
                line_total: idr(net + tax),
                price_source: format!("price list {list}, {} per {}", line.item, line.uom),
                unit_price: idr(unit_price),
            }
        })
        .collect()
}

/// Bandung's agent quote drafts of the days before: QT-BDG-000001 waits for
/// review, QT-BDG-000002 was approved, QT-BDG-000003 rejected with a reason.
pub fn agent_quotes() -> Vec<(Quote, AgentProvenance)> {
    let drafts = &STORY.agent_quotes;
    drafts
        .documents
        .iter()
        .map(|quote| {
            let customer = STORY.customers.iter().find(|c| c.code == quote.customer);
            let list = customer.map_or("", |c| c.price_list);
            let lines = quote_lines(list, &quote.lines);
            let subtotal: Decimal = lines.iter().map(|l| amount(&l.net_amount)).sum();
            let tax_total: Decimal = lines.iter().map(|l| amount(&l.tax_amount)).sum();
            // The draft's provenance first, then what it quotes.
            let draft = QuoteDraft {
                drafted_by_tool_call: None,
                drafted_on_behalf_of: drafts.drafted_on_behalf_of.into(),
                drafted_by_agent_run: Some(quote.provenance.run_id.into()),
                client_ref: quote.provenance.client_ref.into(),
                note: Some(quote.note.into()),
                branch_id: drafts.branch.into(),
                counterparty: CustomerRef {
                    code: quote.customer.into(),
                    name: party_name(quote.customer),
                },
                currency: currency(),
                lines,
                subtotal: idr(subtotal),
                total: idr(subtotal + tax_total),
                own: QuoteFields {
                    price_list: list.into(),
                    valid_until: quote.valid_until,
                    tax_total: idr(tax_total),
                    credit_check: quote.credit_check.into(),
                },
            };
            let numbered = draft.numbered(quote.quote_id.into(), quote.number.into(), quote.created_at.into());
            agent_document(numbered, quote.decision.as_ref(), &quote.provenance)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_file_is_the_demo_story() {
        let story: story::Story<'_> = serde_json::from_str(DATA).unwrap();
        assert_eq!(story.tenant, TENANT);
        let count = |n: usize| i64::try_from(n).unwrap();
        assert_eq!(count(story.jakarta_purchase_orders.documents.len()), JAKARTA_PO_COUNT);
        assert_eq!(
            count(story.agent_purchase_orders.documents.len()),
            SURABAYA_AGENT_PO_COUNT
        );
        assert_eq!(count(story.agent_quotes.documents.len()), BANDUNG_AGENT_QUOTE_COUNT);
        let first = jakarta_purchase_orders().remove(0);
        assert_eq!(first.po_number, "PO-JKT-000001");
        assert_eq!(first.status, PoStatus::Draft);
        // An inactive rate says when it ended (Tryton's end date of the tax).
        for tax in &story.tax_types {
            assert_eq!(tax.active, tax.ended_on.is_none(), "{:?}", tax.code);
        }
        // The agents' policy is one `draftline policy set` accepts.
        let policy = agent_policy().unwrap();
        for branch in policy.branches.iter().flatten() {
            assert!(BRANCHES.iter().any(|b| b.id == branch.branch_id), "{branch:?}");
        }
    }

    #[test]
    fn every_code_the_story_names_is_in_the_story() {
        let branches: Vec<&str> = BRANCHES.iter().map(|b| b.id).collect();
        let items: Vec<String> = items().into_iter().map(|i| i.code).collect();
        let vendors: Vec<String> = vendors().into_iter().map(|v| v.code).collect();
        for (branch, level) in stock() {
            assert!(branches.contains(&branch) && items.contains(&level.item), "{level:?}");
        }
        for (branch, policy) in policies() {
            assert!(branches.contains(&branch) && items.contains(&policy.item), "{policy:?}");
            assert!(vendors.contains(&policy.preferred_vendor), "{policy:?}");
        }
        // Every document line is priced from a list.
        for (po, _) in agent_purchase_orders() {
            assert!(
                po.lines.iter().all(|l| amount(&l.unit_price) > Decimal::ZERO),
                "{}",
                po.po_number
            );
        }
        for po in jakarta_purchase_orders() {
            assert!(
                po.lines.iter().all(|l| amount(&l.unit_price) > Decimal::ZERO),
                "{}",
                po.po_number
            );
        }
        for (quote, _) in agent_quotes() {
            assert!(
                quote.lines.iter().all(|l| amount(&l.unit_price) > Decimal::ZERO),
                "{}",
                quote.quote_number
            );
            assert!(
                quote.lines.iter().all(|l| l.tax_rate_percent == "11"),
                "{}",
                quote.quote_number
            );
        }
        for user in USERS.iter() {
            assert!(
                BRANCHES
                    .iter()
                    .any(|b| b.id == user.branch_id && b.code == user.branch_code),
                "{}",
                user.sub
            );
        }
    }
}
