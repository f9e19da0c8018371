//! The demo tenant (DESIGN.md, "Demo data"): a distributor with three
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

// Fixed demo data computed from constants at seed time: no caller input
// reaches this arithmetic.
#![allow(clippy::arithmetic_side_effects)]

use rust_decimal::Decimal;

use crate::domain::po::{PoStatus, VendorRef};
use crate::domain::{
    BranchVendor, Customer, CustomerInvoice, Decision, Item, ListPrice, PoLine, PriceEntry, PurchaseOrder, Quote,
    QuoteLine, ReorderPolicy, SalesOrder, SalesOrderStatus, StockLevel, TaxCode, TaxType, UnitConversion, Vendor,
    VendorBill, Verdict,
};
use crate::money::{Money, ROUNDING_RULE};
use crate::units::Uom;

/// The demo tenant id.
pub const TENANT: &str = "demo";

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
pub const BRANCHES: [DemoBranch; 3] = [
    DemoBranch {
        id: "SBY-01",
        code: "SBY",
        name: "Surabaya",
        warehouses: &["SBY-WH1", "SBY-WH2"],
    },
    DemoBranch {
        id: "JKT-01",
        code: "JKT",
        name: "Jakarta",
        warehouses: &["JKT-WH1"],
    },
    DemoBranch {
        id: "BDG-01",
        code: "BDG",
        name: "Bandung",
        warehouses: &["BDG-WH1"],
    },
];

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
pub const USERS: [DemoUser; 6] = [
    DemoUser {
        sub: "buyer-sby",
        branch_id: "SBY-01",
        branch_code: "SBY",
        scope: "purchasing:read purchasing:draft inventory:read",
        roles: &["buyer"],
    },
    DemoUser {
        sub: "clerk-sby",
        branch_id: "SBY-01",
        branch_code: "SBY",
        scope: "inventory:read",
        roles: &["warehouse_clerk"],
    },
    DemoUser {
        sub: "buyer-jkt",
        branch_id: "JKT-01",
        branch_code: "JKT",
        scope: "purchasing:read purchasing:draft inventory:read",
        roles: &["buyer"],
    },
    DemoUser {
        sub: "sales-bdg",
        branch_id: "BDG-01",
        branch_code: "BDG",
        scope: "sales:read sales:draft finance:read inventory:read",
        roles: &["sales"],
    },
    DemoUser {
        sub: "approver-sby",
        branch_id: "SBY-01",
        branch_code: "SBY",
        scope: "purchasing:read purchasing:approve inventory:read",
        roles: &["purchasing_manager"],
    },
    DemoUser {
        sub: "approver-bdg",
        branch_id: "BDG-01",
        branch_code: "BDG",
        scope: "sales:read sales:approve finance:read",
        roles: &["sales_manager"],
    },
];

/// The demo user called `sub`.
pub fn user(sub: &str) -> Option<&'static DemoUser> {
    USERS.iter().find(|u| u.sub == sub)
}

fn units(base: Uom, others: &[(Uom, i64)]) -> Vec<UnitConversion> {
    std::iter::once(UnitConversion { uom: base, factor: 1 })
        .chain(others.iter().map(|&(uom, factor)| UnitConversion { uom, factor }))
        .collect()
}

/// The item master.
pub fn items() -> Vec<Item> {
    let item = |code: &str, name: &str, base: Uom, others: &[(Uom, i64)]| Item {
        code: code.into(),
        name: name.into(),
        base_uom: base,
        units: units(base, others),
    };
    vec![
        item(
            "BRG-0042",
            "Deep groove ball bearing 6204-2RS",
            Uom::Pcs,
            &[(Uom::Box, 24)],
        ),
        item(
            "BRG-0043",
            "Deep groove ball bearing 6205-2RS",
            Uom::Pcs,
            &[(Uom::Box, 24)],
        ),
        item("BLT-0107", "Hex bolt M10x40, zinc plated", Uom::Pcs, &[(Uom::Box, 100)]),
        item("VBT-0220", "V-belt A-42", Uom::Pcs, &[]),
        item("OIL-0310", "Hydraulic oil ISO VG 46", Uom::L, &[(Uom::Ctn, 20)]),
        item("CBL-0220", "NYY power cable 3x2.5 mm2", Uom::M, &[(Uom::Roll, 50)]),
        item("GLV-0015", "Nitrile work gloves", Uom::Pcs, &[(Uom::Box, 12)]),
        item("WLD-0501", "Welding electrode E6013 2.6 mm", Uom::Kg, &[(Uom::Box, 5)]),
    ]
}

/// The vendors.
pub fn vendors() -> Vec<Vendor> {
    let all: Vec<String> = BRANCHES.iter().map(|b| b.id.to_owned()).collect();
    let vendor = |code: &str, name: &str, branches: &[&str], terms: i64| Vendor {
        code: code.into(),
        name: name.into(),
        currency: "IDR".into(),
        branches: branches.iter().map(|b| (*b).to_owned()).collect(),
        payment_terms_days: terms,
    };
    let mut v00231 = vendor("V-00231", "PT Sinar Bearindo", &[], 30);
    v00231.branches = all.clone();
    let mut v00508 = vendor("V-00508", "PT Pelumas Nusantara", &[], 45);
    v00508.branches = all;
    vec![
        v00231,
        vendor("V-00415", "CV Baut Jaya", &["SBY-01", "JKT-01"], 30),
        v00508,
        vendor("V-00612", "PT Kabel Prima", &["JKT-01", "BDG-01"], 60),
    ]
}

/// The price lists.
pub fn prices() -> Vec<PriceEntry> {
    let p = |vendor: &str, item: &str, uom: Uom, price: i64| PriceEntry {
        vendor: vendor.into(),
        item: item.into(),
        uom,
        unit_price: Decimal::from(price),
    };
    vec![
        p("V-00231", "BRG-0042", Uom::Pcs, 12_500),
        p("V-00231", "BRG-0042", Uom::Box, 288_000),
        p("V-00231", "BRG-0043", Uom::Pcs, 14_250),
        p("V-00231", "VBT-0220", Uom::Pcs, 38_000),
        p("V-00415", "BLT-0107", Uom::Pcs, 1_200),
        p("V-00415", "BLT-0107", Uom::Box, 110_000),
        p("V-00415", "WLD-0501", Uom::Kg, 42_000),
        p("V-00508", "OIL-0310", Uom::L, 36_500),
        p("V-00508", "OIL-0310", Uom::Ctn, 700_000),
        p("V-00612", "CBL-0220", Uom::M, 18_500),
        p("V-00612", "CBL-0220", Uom::Roll, 880_000),
        p("V-00612", "GLV-0015", Uom::Pcs, 9_500),
        p("V-00612", "GLV-0015", Uom::Box, 105_000),
    ]
}

/// Stock on hand and reserved per warehouse: (branch, level).
pub fn stock() -> Vec<(&'static str, StockLevel)> {
    STOCK
        .iter()
        .map(|&(branch, warehouse, item, on_hand, reserved)| {
            (
                branch,
                StockLevel {
                    item: item.into(),
                    warehouse: warehouse.into(),
                    on_hand,
                    reserved,
                },
            )
        })
        .collect()
}

/// Reorder policies: (branch, policy).
pub fn policies() -> Vec<(&'static str, ReorderPolicy)> {
    POLICIES
        .iter()
        .map(|&(branch, item, reorder_point, reorder_qty, vendor)| {
            (
                branch,
                ReorderPolicy {
                    item: item.into(),
                    reorder_point,
                    reorder_qty,
                    preferred_vendor: vendor.into(),
                },
            )
        })
        .collect()
}

/// (branch, warehouse, item, on hand, reserved)
const STOCK: &[(&str, &str, &str, i64, i64)] = &[
    ("SBY-01", "SBY-WH1", "BRG-0042", 30, 12),
    ("SBY-01", "SBY-WH2", "BRG-0042", 10, 0),
    ("SBY-01", "SBY-WH1", "BRG-0043", 400, 20),
    ("SBY-01", "SBY-WH1", "BLT-0107", 150, 50),
    ("SBY-01", "SBY-WH2", "OIL-0310", 600, 0),
    ("SBY-01", "SBY-WH1", "VBT-0220", 4, 1),
    ("JKT-01", "JKT-WH1", "BRG-0042", 520, 40),
    ("JKT-01", "JKT-WH1", "BLT-0107", 900, 100),
    ("JKT-01", "JKT-WH1", "CBL-0220", 60, 10),
    ("JKT-01", "JKT-WH1", "OIL-0310", 40, 0),
    ("BDG-01", "BDG-WH1", "BRG-0042", 48, 0),
    ("BDG-01", "BDG-WH1", "GLV-0015", 20, 8),
    ("BDG-01", "BDG-WH1", "CBL-0220", 700, 0),
    ("BDG-01", "BDG-WH1", "WLD-0501", 12, 0),
];

/// (branch, item, reorder point, reorder qty, preferred vendor) in base units.
const POLICIES: &[(&str, &str, i64, i64, &str)] = &[
    ("SBY-01", "BRG-0042", 48, 240, "V-00231"),
    ("SBY-01", "BRG-0043", 96, 240, "V-00231"),
    ("SBY-01", "BLT-0107", 200, 1000, "V-00415"),
    ("SBY-01", "OIL-0310", 200, 400, "V-00508"),
    ("SBY-01", "VBT-0220", 10, 20, "V-00231"),
    ("JKT-01", "BRG-0042", 96, 480, "V-00231"),
    ("JKT-01", "BLT-0107", 300, 2000, "V-00415"),
    ("JKT-01", "CBL-0220", 100, 500, "V-00612"),
    ("JKT-01", "OIL-0310", 100, 400, "V-00508"),
    ("BDG-01", "BRG-0042", 48, 240, "V-00231"),
    ("BDG-01", "GLV-0015", 24, 120, "V-00612"),
    ("BDG-01", "CBL-0220", 150, 500, "V-00612"),
    // V-00415 does not supply Bandung: the reorder list says so.
    ("BDG-01", "WLD-0501", 25, 50, "V-00415"),
];

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
        for branch in BRANCHES {
            if vendor.supplies(branch.id) {
                out.push((branch.id, BranchVendor::of(&vendor, items.clone())));
            }
        }
    }
    out
}

/// The tax types.
pub fn tax_types() -> Vec<TaxType> {
    let tax = |code: TaxCode, name: &str, rate: i64, applies_to: &str, active: bool| TaxType {
        code,
        name: name.into(),
        rate_percent: Decimal::from(rate),
        applies_to: applies_to.into(),
        active,
    };
    vec![
        tax(
            TaxCode::Vat11,
            "VAT 11%",
            11,
            "the standard rate: most goods sold to customers in Indonesia",
            true,
        ),
        tax(
            TaxCode::Vat10,
            "VAT 10% (former rate)",
            10,
            "the rate before April 2022; kept for old documents, not for new ones",
            false,
        ),
        tax(
            TaxCode::Vat0,
            "VAT 0% (zero-rated)",
            0,
            "exports and deliveries into bonded zones",
            true,
        ),
        tax(
            TaxCode::Exempt,
            "Exempt",
            0,
            "customers exempt from VAT (schools, hospitals); required for their quotes",
            true,
        ),
    ]
}

/// The sales price lists (per unit, before tax).
pub fn list_prices() -> Vec<ListPrice> {
    let p = |list: &str, item: &str, uom: Uom, price: i64| ListPrice {
        list: list.into(),
        item: item.into(),
        uom,
        unit_price: Decimal::from(price),
    };
    vec![
        p("PL-RETAIL", "BRG-0042", Uom::Pcs, 16_500),
        p("PL-RETAIL", "BRG-0042", Uom::Box, 372_000),
        p("PL-RETAIL", "BRG-0043", Uom::Pcs, 18_500),
        p("PL-RETAIL", "BLT-0107", Uom::Pcs, 1_800),
        p("PL-RETAIL", "BLT-0107", Uom::Box, 165_000),
        p("PL-RETAIL", "VBT-0220", Uom::Pcs, 52_000),
        p("PL-RETAIL", "OIL-0310", Uom::L, 48_000),
        p("PL-RETAIL", "OIL-0310", Uom::Ctn, 930_000),
        p("PL-RETAIL", "CBL-0220", Uom::M, 24_000),
        p("PL-RETAIL", "CBL-0220", Uom::Roll, 1_150_000),
        p("PL-RETAIL", "GLV-0015", Uom::Pcs, 13_000),
        p("PL-RETAIL", "GLV-0015", Uom::Box, 145_000),
        p("PL-RETAIL", "WLD-0501", Uom::Kg, 58_000),
        // Wholesale: fewer items, some only by the box.
        p("PL-WHOLESALE", "BRG-0042", Uom::Pcs, 15_000),
        p("PL-WHOLESALE", "BRG-0042", Uom::Box, 340_000),
        p("PL-WHOLESALE", "BRG-0043", Uom::Pcs, 17_000),
        p("PL-WHOLESALE", "BLT-0107", Uom::Box, 150_000),
        p("PL-WHOLESALE", "OIL-0310", Uom::L, 45_500),
        p("PL-WHOLESALE", "OIL-0310", Uom::Ctn, 880_000),
        p("PL-WHOLESALE", "CBL-0220", Uom::M, 22_000),
        p("PL-WHOLESALE", "CBL-0220", Uom::Roll, 1_050_000),
        p("PL-WHOLESALE", "GLV-0015", Uom::Box, 132_000),
    ]
}

/// The customers: (branch, customer).
pub fn customers() -> Vec<(&'static str, Customer)> {
    let c = |code: &str, name: &str, city: &str, list: &str, limit: i64, terms: i64| Customer {
        code: code.into(),
        name: name.into(),
        city: city.into(),
        price_list: list.into(),
        currency: "IDR".into(),
        credit_limit: Decimal::from(limit),
        payment_terms_days: terms,
        tax_exempt: false,
        credit_hold: None,
    };
    let mut on_hold = c(
        "C-BDG-003",
        "UD Sumber Rejeki Lembang",
        "Lembang",
        "PL-RETAIL",
        10_000_000,
        14,
    );
    on_hold.credit_hold = Some("an invoice is more than 90 days overdue".into());
    let mut exempt = c(
        "C-BDG-004",
        "Yayasan Pendidikan Ganesha",
        "Bandung",
        "PL-RETAIL",
        20_000_000,
        30,
    );
    exempt.tax_exempt = true;
    vec![
        (
            "BDG-01",
            c(
                "C-BDG-001",
                "PT Tekstil Priangan",
                "Bandung",
                "PL-WHOLESALE",
                150_000_000,
                30,
            ),
        ),
        (
            "BDG-01",
            c(
                "C-BDG-002",
                "CV Mitra Teknik Cimahi",
                "Cimahi",
                "PL-RETAIL",
                25_000_000,
                14,
            ),
        ),
        ("BDG-01", on_hold),
        ("BDG-01", exempt),
        (
            "SBY-01",
            c(
                "C-SBY-001",
                "PT Galangan Kapal Tanjung Perak",
                "Surabaya",
                "PL-WHOLESALE",
                200_000_000,
                30,
            ),
        ),
        (
            "SBY-01",
            c(
                "C-SBY-002",
                "CV Sinar Mesin Sidoarjo",
                "Sidoarjo",
                "PL-RETAIL",
                30_000_000,
                14,
            ),
        ),
        (
            "JKT-01",
            c(
                "C-JKT-001",
                "PT Konstruksi Cakung",
                "Jakarta",
                "PL-WHOLESALE",
                250_000_000,
                30,
            ),
        ),
        (
            "JKT-01",
            c(
                "C-JKT-002",
                "PT Logistik Tanjung Priok",
                "Jakarta",
                "PL-RETAIL",
                50_000_000,
                14,
            ),
        ),
    ]
}

fn day(text: &str) -> chrono::NaiveDate {
    text.parse().unwrap_or_default()
}

/// (branch, number, customer, order date, status, total, not yet invoiced)
const SALES_ORDERS: &[(&str, &str, &str, &str, SalesOrderStatus, i64, i64)] = &[
    (
        "BDG-01",
        "SO-BDG-000039",
        "C-BDG-001",
        "2026-10-30",
        SalesOrderStatus::Invoiced,
        12_210_000,
        0,
    ),
    (
        "BDG-01",
        "SO-BDG-000045",
        "C-BDG-001",
        "2026-11-20",
        SalesOrderStatus::Open,
        31_080_000,
        31_080_000,
    ),
    (
        "BDG-01",
        "SO-BDG-000047",
        "C-BDG-001",
        "2026-11-26",
        SalesOrderStatus::PartiallyDelivered,
        9_990_000,
        4_995_000,
    ),
    (
        "BDG-01",
        "SO-BDG-000046",
        "C-BDG-002",
        "2026-11-24",
        SalesOrderStatus::Open,
        12_500_000,
        12_500_000,
    ),
    (
        "BDG-01",
        "SO-BDG-000041",
        "C-BDG-002",
        "2026-11-05",
        SalesOrderStatus::Cancelled,
        3_330_000,
        0,
    ),
    (
        "SBY-01",
        "SO-SBY-000120",
        "C-SBY-001",
        "2026-11-25",
        SalesOrderStatus::Open,
        27_200_000,
        27_200_000,
    ),
    (
        "JKT-01",
        "SO-JKT-000233",
        "C-JKT-001",
        "2026-11-27",
        SalesOrderStatus::Open,
        44_000_000,
        44_000_000,
    ),
];

/// The sales orders: (branch, order).
pub fn sales_orders() -> Vec<(&'static str, SalesOrder)> {
    SALES_ORDERS
        .iter()
        .map(|&(branch, number, customer, date, status, total, open)| {
            (
                branch,
                SalesOrder {
                    number: number.into(),
                    customer: customer.into(),
                    order_date: day(date),
                    status,
                    total: Decimal::from(total),
                    open_amount: Decimal::from(open),
                    currency: "IDR".into(),
                },
            )
        })
        .collect()
}

/// (branch, number, customer, invoice date, due date, amount, paid)
const INVOICES: &[(&str, &str, &str, &str, &str, i64, i64)] = &[
    (
        "BDG-01",
        "INV-BDG-000101",
        "C-BDG-001",
        "2026-08-10",
        "2026-09-09",
        18_500_000,
        18_500_000,
    ),
    (
        "BDG-01",
        "INV-BDG-000118",
        "C-BDG-001",
        "2026-09-15",
        "2026-10-15",
        24_420_000,
        0,
    ),
    (
        "BDG-01",
        "INV-BDG-000131",
        "C-BDG-001",
        "2026-11-02",
        "2026-12-02",
        12_210_000,
        0,
    ),
    (
        "BDG-01",
        "INV-BDG-000097",
        "C-BDG-002",
        "2026-08-01",
        "2026-08-15",
        6_660_000,
        2_000_000,
    ),
    (
        "BDG-01",
        "INV-BDG-000125",
        "C-BDG-002",
        "2026-10-20",
        "2026-11-03",
        8_880_000,
        0,
    ),
    (
        "BDG-01",
        "INV-BDG-000088",
        "C-BDG-003",
        "2026-07-10",
        "2026-07-24",
        4_440_000,
        0,
    ),
    (
        "SBY-01",
        "INV-SBY-000301",
        "C-SBY-001",
        "2026-10-05",
        "2026-11-04",
        42_000_000,
        0,
    ),
    (
        "SBY-01",
        "INV-SBY-000322",
        "C-SBY-001",
        "2026-11-15",
        "2026-12-15",
        16_320_000,
        0,
    ),
    (
        "SBY-01",
        "INV-SBY-000280",
        "C-SBY-002",
        "2026-08-20",
        "2026-09-03",
        5_280_000,
        0,
    ),
    (
        "JKT-01",
        "INV-JKT-000510",
        "C-JKT-001",
        "2026-09-01",
        "2026-10-01",
        66_000_000,
        30_000_000,
    ),
    (
        "JKT-01",
        "INV-JKT-000528",
        "C-JKT-002",
        "2026-11-10",
        "2026-11-24",
        3_720_000,
        0,
    ),
];

/// The customer invoices: (branch, invoice).
pub fn invoices() -> Vec<(&'static str, CustomerInvoice)> {
    let names: Vec<(&str, Customer)> = customers();
    INVOICES
        .iter()
        .map(|&(branch, number, customer, date, due, amount, paid)| {
            let customer_name = names
                .iter()
                .find(|(_, c)| c.code == customer)
                .map(|(_, c)| c.name.clone())
                .unwrap_or_default();
            (
                branch,
                CustomerInvoice {
                    number: number.into(),
                    customer: customer.into(),
                    customer_name,
                    invoice_date: day(date),
                    due_date: day(due),
                    amount: Decimal::from(amount),
                    paid: Decimal::from(paid),
                    currency: "IDR".into(),
                },
            )
        })
        .collect()
}

/// (branch, number, vendor, bill date, due date, amount, paid)
const BILLS: &[(&str, &str, &str, &str, &str, i64, i64)] = &[
    (
        "BDG-01",
        "VB-BDG-000210",
        "V-00612",
        "2026-10-01",
        "2026-11-30",
        26_400_000,
        0,
    ),
    (
        "BDG-01",
        "VB-BDG-000198",
        "V-00231",
        "2026-09-05",
        "2026-10-05",
        8_640_000,
        0,
    ),
    (
        "BDG-01",
        "VB-BDG-000215",
        "V-00508",
        "2026-11-10",
        "2026-12-25",
        7_000_000,
        0,
    ),
    (
        "SBY-01",
        "VB-SBY-000450",
        "V-00231",
        "2026-10-20",
        "2026-11-19",
        14_400_000,
        0,
    ),
    (
        "SBY-01",
        "VB-SBY-000462",
        "V-00415",
        "2026-11-05",
        "2026-12-05",
        11_000_000,
        0,
    ),
    (
        "SBY-01",
        "VB-SBY-000431",
        "V-00508",
        "2026-08-15",
        "2026-09-29",
        21_000_000,
        0,
    ),
    (
        "JKT-01",
        "VB-JKT-000700",
        "V-00612",
        "2026-07-20",
        "2026-09-18",
        37_000_000,
        0,
    ),
    (
        "JKT-01",
        "VB-JKT-000712",
        "V-00415",
        "2026-11-01",
        "2026-12-01",
        22_000_000,
        0,
    ),
    (
        "JKT-01",
        "VB-JKT-000690",
        "V-00231",
        "2026-09-01",
        "2026-10-01",
        9_600_000,
        9_600_000,
    ),
];

/// The vendor bills: (branch, bill).
pub fn bills() -> Vec<(&'static str, VendorBill)> {
    let names = vendors();
    BILLS
        .iter()
        .map(|&(branch, number, vendor, date, due, amount, paid)| {
            let vendor_name = names
                .iter()
                .find(|v| v.code == vendor)
                .map(|v| v.name.clone())
                .unwrap_or_default();
            (
                branch,
                VendorBill {
                    number: number.into(),
                    vendor: vendor.into(),
                    vendor_name,
                    bill_date: day(date),
                    due_date: day(due),
                    amount: Decimal::from(amount),
                    paid: Decimal::from(paid),
                    currency: "IDR".into(),
                },
            )
        })
        .collect()
}

/// A purchase order a person drafted in Jakarta before any agent came along
/// (so the demo has a document of another branch to fail to read).
pub fn jakarta_po() -> PurchaseOrder {
    let line_total = Decimal::from(20 * 18_500);
    PurchaseOrder {
        draft_id: "po_01jdemojkt0000000000000001".into(),
        po_number: "PO-JKT-000001".into(),
        status: PoStatus::Draft,
        branch_id: "JKT-01".into(),
        vendor: VendorRef {
            code: "V-00612".into(),
            name: "PT Kabel Prima".into(),
        },
        needed_by: chrono::NaiveDate::from_ymd_opt(2026, 12, 20).unwrap_or_default(),
        currency: "IDR".into(),
        lines: vec![PoLine {
            line_no: 1,
            item_code: "CBL-0220".into(),
            item_name: "NYY power cable 3x2.5 mm2".into(),
            qty: 20,
            uom: Uom::M,
            base_qty: 20,
            base_uom: Uom::M,
            unit_price: Money::new(Decimal::from(18_500), "IDR"),
            price_source: "price list V-00612, CBL-0220 per M".into(),
            line_total: Money::new(line_total, "IDR"),
        }],
        subtotal: Money::new(line_total, "IDR"),
        total: Money::new(line_total, "IDR"),
        rounding: ROUNDING_RULE.into(),
        note: Some("Drafted by hand".into()),
        client_ref: "manual-1".into(),
        drafted_by_agent_run: None,
        drafted_on_behalf_of: "buyer-jkt".into(),
        created_at: "2026-11-20T09:00:00.000Z".into(),
        next_step: "Draft PO-JKT-000001 awaits review.".into(),
        decision: None,
        review_url: None,
    }
}

/// How many purchase orders Jakarta had before the demo starts: enough that
/// `purchasing_search_pos` needs more than one page at its default size.
pub const JAKARTA_PO_COUNT: i64 = 24;

/// Jakarta's purchase-order history: [`jakarta_po`] (a draft) and orders that
/// people drafted, approved, sent, received or cancelled over the autumn,
/// priced from the demo price lists.
pub fn jakarta_purchase_orders() -> Vec<PurchaseOrder> {
    const STATUSES: [PoStatus; 5] = [
        PoStatus::Received,
        PoStatus::Received,
        PoStatus::Sent,
        PoStatus::Approved,
        PoStatus::Cancelled,
    ];
    let items = items();
    let vendors = vendors();
    let lines: Vec<PriceEntry> = prices()
        .into_iter()
        .filter(|p| p.vendor != "V-00415" || p.uom == Uom::Box)
        .collect();
    let start = chrono::NaiveDate::from_ymd_opt(2026, 9, 1).unwrap_or_default();
    let mut orders = vec![jakarta_po()];
    for n in 2..=JAKARTA_PO_COUNT {
        let price = &lines[(n as usize) % lines.len()];
        let (Some(item), Some(vendor)) = (
            items.iter().find(|i| i.code == price.item),
            vendors.iter().find(|v| v.code == price.vendor),
        ) else {
            continue;
        };
        let factor = item.unit(price.uom).map_or(1, |u| u.factor);
        let qty = 2 + n % 7;
        let created = start + chrono::Duration::days(3 * n);
        let total = price.unit_price * Decimal::from(qty);
        let number = format!("PO-JKT-{n:06}");
        orders.push(PurchaseOrder {
            draft_id: format!("po_01jdemojkt{n:016}"),
            po_number: number.clone(),
            status: STATUSES[(n as usize) % STATUSES.len()],
            branch_id: "JKT-01".into(),
            vendor: VendorRef {
                code: vendor.code.clone(),
                name: vendor.name.clone(),
            },
            needed_by: created + chrono::Duration::days(14),
            currency: "IDR".into(),
            lines: vec![PoLine {
                line_no: 1,
                item_code: item.code.clone(),
                item_name: item.name.clone(),
                qty,
                uom: price.uom,
                base_qty: qty * factor,
                base_uom: item.base_uom,
                unit_price: Money::new(price.unit_price, "IDR"),
                price_source: format!("price list {}, {} per {}", vendor.code, item.code, price.uom),
                line_total: Money::new(total, "IDR"),
            }],
            subtotal: Money::new(total, "IDR"),
            total: Money::new(total, "IDR"),
            rounding: ROUNDING_RULE.into(),
            note: None,
            client_ref: format!("manual-{n}"),
            drafted_by_agent_run: None,
            drafted_on_behalf_of: "buyer-jkt".into(),
            created_at: format!("{created}T08:30:00.000Z"),
            next_step: format!("{number} was handled by a person in the ERP."),
            decision: None,
            review_url: None,
        });
    }
    orders
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

/// How many purchase orders Surabaya's agent drafted before the demo starts.
pub const SURABAYA_AGENT_PO_COUNT: i64 = 3;
/// How many quotes Bandung's agent drafted before the demo starts.
pub const BANDUNG_AGENT_QUOTE_COUNT: i64 = 3;

fn decision(verdict: Verdict, reason: Option<&str>, by: &str, at: &str) -> Decision {
    Decision {
        verdict,
        reason: reason.map(str::to_owned),
        decided_by: by.to_owned(),
        decided_at: at.to_owned(),
    }
}

/// A line of a seeded purchase order, priced from the vendor's list.
fn po_line(line_no: u32, vendor: &str, item_code: &str, qty: i64, uom: Uom) -> PoLine {
    let items = items();
    let item = items.iter().find(|i| i.code == item_code);
    let unit_price = prices()
        .into_iter()
        .find(|p| p.vendor == vendor && p.item == item_code && p.uom == uom)
        .map_or(Decimal::ZERO, |p| p.unit_price);
    let factor = item.and_then(|i| i.unit(uom)).map_or(1, |u| u.factor);
    PoLine {
        line_no,
        item_code: item_code.into(),
        item_name: item.map(|i| i.name.clone()).unwrap_or_default(),
        qty,
        uom,
        base_qty: qty * factor,
        base_uom: item.map_or(uom, |i| i.base_uom),
        unit_price: Money::new(unit_price, "IDR"),
        price_source: format!("price list {vendor}, {item_code} per {uom}"),
        line_total: Money::new(unit_price * Decimal::from(qty), "IDR"),
    }
}

/// Surabaya's agent drafts of the days before: PO-SBY-000001 waits for
/// review, PO-SBY-000002 was approved, PO-SBY-000003 rejected with a reason.
pub fn agent_purchase_orders() -> Vec<(PurchaseOrder, AgentProvenance)> {
    let vendors = vendors();
    let po = |n: i64, vendor_code: &str, lines: Vec<PoLine>, created_at: &str, note: &str, needed_by: &str| {
        let vendor = vendors.iter().find(|v| v.code == vendor_code);
        let vendor_name = vendor.map(|v| v.name.clone()).unwrap_or_default();
        let total: Decimal = lines
            .iter()
            .map(|l| l.line_total.amount.parse::<Decimal>().unwrap_or_default())
            .sum();
        let draft = crate::domain::PoDraft {
            branch_id: "SBY-01".into(),
            vendor: VendorRef {
                code: vendor_code.into(),
                name: vendor_name,
            },
            needed_by: day(needed_by),
            currency: "IDR".into(),
            lines,
            subtotal: Money::new(total, "IDR"),
            total: Money::new(total, "IDR"),
            note: Some(note.into()),
            client_ref: format!("reorder-{}", &created_at[..10]),
            drafted_by_agent_run: Some(format!("run-sby-reorder-{}", &created_at[..10])),
            drafted_on_behalf_of: "buyer-sby".into(),
            drafted_by_tool_call: None,
        };
        draft.numbered(
            format!("po_01jdemosby{n:016}"),
            format!("PO-SBY-{n:06}"),
            created_at.to_owned(),
        )
    };
    let provenance = |run_id, tool_call_id, lookup_call_id| AgentProvenance {
        run_id,
        tool_call_id,
        model: "gpt-5.1",
        prompt_version: "reorder-agent@3",
        looked_up: (
            "inventory_list_below_reorder",
            r#"{"limit":20,"cursor":null}"#,
            lookup_call_id,
        ),
    };
    vec![
        (
            po(
                1,
                "V-00231",
                vec![
                    po_line(1, "V-00231", "BRG-0042", 10, Uom::Box),
                    po_line(2, "V-00231", "VBT-0220", 12, Uom::Pcs),
                ],
                "2026-11-26T02:14:09.000Z",
                "Weekly reorder: BRG-0042 and VBT-0220 are below their reorder points.",
                "2026-12-10",
            ),
            provenance("run-sby-reorder-2026-11-26", "call_sby_1126_02", "call_sby_1126_01"),
        ),
        (
            po(
                2,
                "V-00508",
                vec![po_line(1, "V-00508", "OIL-0310", 20, Uom::Ctn)],
                "2026-11-25T01:05:42.000Z",
                "Hydraulic oil for the December maintenance window.",
                "2026-12-05",
            )
            .decided(decision(
                Verdict::Approved,
                None,
                "approver-sby",
                "2026-11-25T09:30:00.000Z",
            )),
            provenance("run-sby-reorder-2026-11-25", "call_sby_1125_02", "call_sby_1125_01"),
        ),
        (
            po(
                3,
                "V-00415",
                vec![po_line(1, "V-00415", "BLT-0107", 10, Uom::Box)],
                "2026-11-24T01:02:17.000Z",
                "Bolts below reorder point.",
                "2026-12-03",
            )
            .decided(decision(
                Verdict::Rejected,
                Some("CV Baut Jaya raised the bolt price last week; ask them for a new quote before we order."),
                "approver-sby",
                "2026-11-24T10:12:00.000Z",
            )),
            provenance("run-sby-reorder-2026-11-24", "call_sby_1124_02", "call_sby_1124_01"),
        ),
    ]
}

/// A line of a seeded quote, priced from price list `list` and taxed at VAT 11 %.
fn quote_line(line_no: u32, list: &str, item_code: &str, qty: i64, uom: Uom) -> QuoteLine {
    let items = items();
    let item = items.iter().find(|i| i.code == item_code);
    let unit_price = list_prices()
        .into_iter()
        .find(|p| p.list == list && p.item == item_code && p.uom == uom)
        .map_or(Decimal::ZERO, |p| p.unit_price);
    let factor = item.and_then(|i| i.unit(uom)).map_or(1, |u| u.factor);
    let net = crate::money::round(unit_price * Decimal::from(qty));
    let tax = crate::money::round(net * Decimal::from(11) / Decimal::from(100));
    QuoteLine {
        line_no,
        item_code: item_code.into(),
        item_name: item.map(|i| i.name.clone()).unwrap_or_default(),
        qty,
        uom,
        base_qty: qty * factor,
        base_uom: item.map_or(uom, |i| i.base_uom),
        unit_price: Money::new(unit_price, "IDR"),
        price_source: format!("price list {list}, {item_code} per {uom}"),
        net_amount: Money::new(net, "IDR"),
        tax_code: TaxCode::Vat11,
        tax_rate_percent: "11".into(),
        tax_amount: Money::new(tax, "IDR"),
        line_total: Money::new(net + tax, "IDR"),
    }
}

/// Bandung's agent quote drafts of the days before: QT-BDG-000001 waits for
/// review, QT-BDG-000002 was approved, QT-BDG-000003 rejected with a reason.
pub fn agent_quotes() -> Vec<(Quote, AgentProvenance)> {
    let customers = customers();
    let quote = |n: i64, customer_code: &str, lines: Vec<QuoteLine>, created_at: &str, valid_until: &str| {
        let customer = customers.iter().map(|(_, c)| c).find(|c| c.code == customer_code);
        let amount = |f: fn(&QuoteLine) -> &Money| -> Decimal {
            lines
                .iter()
                .map(|l| f(l).amount.parse::<Decimal>().unwrap_or_default())
                .sum()
        };
        let (subtotal, tax_total) = (amount(|l| &l.net_amount), amount(|l| &l.tax_amount));
        let draft = crate::domain::QuoteDraft {
            branch_id: "BDG-01".into(),
            customer: crate::domain::quote::CustomerRef {
                code: customer_code.into(),
                name: customer.map(|c| c.name.clone()).unwrap_or_default(),
            },
            price_list: customer.map(|c| c.price_list.clone()).unwrap_or_default(),
            valid_until: day(valid_until),
            currency: "IDR".into(),
            lines,
            subtotal: Money::new(subtotal, "IDR"),
            tax_total: Money::new(tax_total, "IDR"),
            total: Money::new(subtotal + tax_total, "IDR"),
            credit_check: "Within the credit limit when it was drafted.".into(),
            note: Some("Customer asked for a price by e-mail.".into()),
            client_ref: format!("quote-{customer_code}-{}", &created_at[..10]),
            drafted_by_agent_run: Some(format!("run-bdg-quotes-{}", &created_at[..10])),
            drafted_on_behalf_of: "sales-bdg".into(),
            drafted_by_tool_call: None,
        };
        draft.numbered(
            format!("qt_01jdemobdg{n:016}"),
            format!("QT-BDG-{n:06}"),
            created_at.to_owned(),
        )
    };
    let provenance = |run_id, tool_call_id, lookup_call_id, customer| AgentProvenance {
        run_id,
        tool_call_id,
        model: "claude-sonnet-4.5",
        prompt_version: "quote-agent@2",
        looked_up: ("sales_get_customer_summary", customer, lookup_call_id),
    };
    vec![
        (
            quote(
                1,
                "C-BDG-001",
                vec![
                    quote_line(1, "PL-WHOLESALE", "BRG-0042", 5, Uom::Box),
                    quote_line(2, "PL-WHOLESALE", "GLV-0015", 10, Uom::Box),
                ],
                "2026-11-26T03:20:00.000Z",
                "2026-12-10",
            ),
            provenance(
                "run-bdg-quotes-2026-11-26",
                "call_bdg_1126_02",
                "call_bdg_1126_01",
                r#"{"customer_code":"C-BDG-001"}"#,
            ),
        ),
        (
            quote(
                2,
                "C-BDG-001",
                vec![quote_line(1, "PL-WHOLESALE", "CBL-0220", 4, Uom::Roll)],
                "2026-11-25T03:02:00.000Z",
                "2026-12-09",
            )
            .decided(decision(
                Verdict::Approved,
                Some("Price matches the framework agreement."),
                "approver-bdg",
                "2026-11-25T08:45:00.000Z",
            )),
            provenance(
                "run-bdg-quotes-2026-11-25",
                "call_bdg_1125_02",
                "call_bdg_1125_01",
                r#"{"customer_code":"C-BDG-001"}"#,
            ),
        ),
        (
            quote(
                3,
                "C-BDG-002",
                vec![quote_line(1, "PL-RETAIL", "OIL-0310", 3, Uom::Ctn)],
                "2026-11-24T02:40:00.000Z",
                "2026-12-08",
            )
            .decided(decision(
                Verdict::Rejected,
                Some(
                    "CV Mitra Teknik Cimahi has overdue invoices (one since August); no new quote until they are paid.",
                ),
                "approver-bdg",
                "2026-11-24T07:55:00.000Z",
            )),
            provenance(
                "run-bdg-quotes-2026-11-24",
                "call_bdg_1124_02",
                "call_bdg_1124_01",
                r#"{"customer_code":"C-BDG-002"}"#,
            ),
        ),
    ]
}
