//! The demo tenant (DESIGN.md, "Demo data"): a distributor with three
//! branches, items with units, vendors with price lists, stock with items
//! below their reorder point in every branch, and four demo users.

use draftline_contract::identity::{BranchId, TenantId};
use rust_decimal::Decimal;

use crate::keys;
use crate::model::attrs::{Item as Attrs, sv};
use crate::model::po::{DocumentStatus, VendorRef};
use crate::model::{Item, PoLine, PriceEntry, PurchaseOrder, ReorderPolicy, StockLevel, UnitConversion, Vendor};
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

/// The four demo users of DESIGN.md.
pub const USERS: [DemoUser; 4] = [
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
];

/// A purchase order a person drafted in Jakarta before any agent came along
/// (so the demo has a document of another branch to fail to read).
pub fn jakarta_po() -> PurchaseOrder {
    let line_total = Decimal::from(20 * 18_500);
    PurchaseOrder {
        draft_id: "po_01jdemojkt0000000000000001".into(),
        po_number: "PO-JKT-000001".into(),
        status: DocumentStatus::Draft,
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
    }
}

/// Every item of the demo data set, ready to write.
pub fn all_items() -> Result<Vec<Attrs>, draftline_contract::ToolError> {
    let tenant = TenantId::parse(TENANT).map_err(draftline_contract::ToolError::internal)?;
    let branch = |id: &str| BranchId::parse(id).map_err(draftline_contract::ToolError::internal);
    let mut out = Vec::new();
    for b in BRANCHES {
        out.push(Attrs::from([
            ("pk".to_owned(), sv(keys::branches(&tenant))),
            ("sk".to_owned(), sv(b.id)),
            ("kind".to_owned(), sv("branch")),
            ("code".to_owned(), sv(b.code)),
            ("name".to_owned(), sv(b.name)),
        ]));
    }
    out.extend(items().iter().map(|i| i.to_item(&tenant)));
    out.extend(vendors().iter().map(|v| v.to_item(&tenant)));
    out.extend(prices().iter().map(|p| p.to_item(&tenant)));
    for &(b, warehouse, item, on_hand, reserved) in STOCK {
        let level = StockLevel {
            item: item.into(),
            warehouse: warehouse.into(),
            on_hand,
            reserved,
        };
        out.push(level.to_item(&tenant, &branch(b)?));
    }
    for &(b, item, reorder_point, reorder_qty, vendor) in POLICIES {
        let policy = ReorderPolicy {
            item: item.into(),
            reorder_point,
            reorder_qty,
            preferred_vendor: vendor.into(),
        };
        out.push(policy.to_item(&tenant, &branch(b)?));
    }
    let jkt = branch("JKT-01")?;
    out.push(jakarta_po().to_item(&tenant, &jkt)?);
    out.push(Attrs::from([
        ("pk".to_owned(), sv(keys::sequences(&tenant, &jkt))),
        ("sk".to_owned(), sv("PO")),
        ("kind".to_owned(), sv("sequence")),
        ("last".to_owned(), crate::model::attrs::nv(1)),
    ]));
    Ok(out)
}
