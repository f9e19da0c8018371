//! Every read of the port against the seeded demo story: the values of
//! `draftline_erp::demo`, as the built-in backend answers them.

use std::collections::{BTreeSet, HashMap};

use draftline_erp::demo::{self, BRANCHES};
use draftline_erp::domain::{
    BranchVendor, CustomerInvoice, PoStatus, PriceEntry, PurchaseOrder, Quote, StockLevel, VendorBill,
};
use draftline_erp::port::{Drafting, DueItem, Finance, Inventory, PoFilter, Purchasing, Sales};
use draftline_erp::reorder;
use draftline_erp::units::Uom;
use rust_decimal::Decimal;

use crate::helpers::{Who, branch, shared};

fn demo_levels(branch: &str, item: &str) -> Vec<StockLevel> {
    let mut levels: Vec<StockLevel> = demo::stock()
        .into_iter()
        .filter(|(b, l)| *b == branch && l.item == item)
        .map(|(_, l)| l)
        .collect();
    levels.sort_by(|a, b| a.warehouse.cmp(&b.warehouse));
    levels
}

fn demo_due(branch: &str) -> Vec<DueItem> {
    let mut due: Vec<DueItem> = demo::policies()
        .into_iter()
        .filter(|(b, _)| *b == branch)
        .map(|(_, policy)| DueItem {
            levels: demo_levels(branch, &policy.item),
            policy,
        })
        .filter(|d| reorder::is_due(&d.policy, d.available()))
        .collect();
    due.sort_by(|a, b| a.policy.item.cmp(&b.policy.item));
    due
}

#[tokio::test]
async fn stock_is_per_storage_location_of_the_callers_branch_as_in_the_demo() {
    let erp = shared().erp();
    let sby = branch("SBY-01");
    let (levels, policy) = erp.item_stock(&sby.scope(), "BRG-0042").await.unwrap();
    let shown: Vec<(&str, i64, i64, i64)> = levels
        .iter()
        .map(|l| (l.warehouse.as_str(), l.on_hand, l.reserved, l.available()))
        .collect();
    assert_eq!(shown, [("SBY-WH1", 30, 12, 18), ("SBY-WH2", 10, 0, 10)]);
    let policy = policy.unwrap();
    assert_eq!(
        (
            policy.reorder_point,
            policy.reorder_qty,
            policy.preferred_vendor.as_str()
        ),
        (48, 240, "V-00231")
    );
    for b in BRANCHES.iter() {
        let who = branch(b.id);
        for item in demo::items() {
            let (levels, policy) = erp.item_stock(&who.scope(), &item.code).await.unwrap();
            assert_eq!(levels, demo_levels(b.id, &item.code), "{} {}", b.id, item.code);
            let want = demo::policies()
                .into_iter()
                .find(|(br, p)| *br == b.id && p.item == item.code)
                .map(|(_, p)| p);
            assert_eq!(policy, want, "{} {}", b.id, item.code);
        }
    }
    assert_eq!(
        erp.item_stock(&sby.scope(), "NOPE-0000").await.unwrap(),
        (Vec::new(), None)
    );
}

#[tokio::test]
async fn items_are_the_demo_item_master_with_their_units() {
    let erp = shared().erp();
    let who = branch("SBY-01");
    let mut codes: Vec<String> = demo::items().into_iter().map(|i| i.code).collect();
    codes.push("NOPE-0000".into());
    let items = erp.items(&who.scope(), &codes).await.unwrap();
    let want: HashMap<String, _> = demo::items().into_iter().map(|i| (i.code.clone(), i)).collect();
    assert_eq!(items, want);
    let bearing = erp.item(&who.scope(), "BRG-0042").await.unwrap().unwrap();
    assert_eq!(bearing.describe_units(), "PCS, BOX (1 BOX = 24 PCS)");
    assert_eq!(erp.item(&who.scope(), "NOPE-0000").await.unwrap(), None);
}

#[tokio::test]
async fn items_below_their_reorder_point_are_the_demos_per_branch_by_code_and_page() {
    let erp = shared().erp();
    for b in BRANCHES.iter() {
        let who = branch(b.id);
        let page = erp.due_items(&who.scope(), None, 50).await.unwrap();
        assert_eq!(page.items, demo_due(b.id), "{}", b.id);
        assert_eq!(page.next_after, None);
    }
    let codes = |items: &[DueItem]| items.iter().map(|d| d.policy.item.clone()).collect::<Vec<_>>();
    let sby = branch("SBY-01");
    assert_eq!(
        codes(&erp.due_items(&sby.scope(), None, 50).await.unwrap().items),
        ["BLT-0107", "BRG-0042", "VBT-0220"]
    );
    // One at a time, continuing after the last one: the same items.
    let mut after: Option<String> = None;
    let mut seen = Vec::new();
    loop {
        let page = erp.due_items(&sby.scope(), after.as_deref(), 1).await.unwrap();
        assert!(page.items.len() <= 1);
        seen.extend(codes(&page.items));
        match page.next_after {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    assert_eq!(seen, ["BLT-0107", "BRG-0042", "VBT-0220"]);
    let bdg = branch("BDG-01");
    let page = erp.due_items(&bdg.scope(), None, 2).await.unwrap();
    assert_eq!(codes(&page.items), ["BRG-0042", "GLV-0015"]);
    assert_eq!(page.next_after.as_deref(), Some("GLV-0015"));
    let rest = erp.due_items(&bdg.scope(), Some("GLV-0015"), 2).await.unwrap();
    assert_eq!(codes(&rest.items), ["WLD-0501"]);
    assert_eq!(rest.items[0].policy.preferred_vendor, "V-00415");
    assert_eq!(rest.next_after, None);
}

fn demo_prices(vendor: &str) -> Vec<PriceEntry> {
    let mut prices: Vec<PriceEntry> = demo::prices().into_iter().filter(|p| p.vendor == vendor).collect();
    prices.sort_by(|a, b| (&a.item, a.uom.code()).cmp(&(&b.item, b.uom.code())));
    prices
}

#[tokio::test]
async fn vendors_are_the_demos_with_their_branches_and_price_lists() {
    let erp = shared().erp();
    let who = branch("SBY-01");
    for vendor in demo::vendors() {
        let (found, prices) = erp
            .vendor_with_prices(&who.scope(), &vendor.code)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(found, vendor);
        assert_eq!(prices, demo_prices(&vendor.code), "{}", vendor.code);
    }
    let (v231, prices) = erp.vendor_with_prices(&who.scope(), "V-00231").await.unwrap().unwrap();
    assert!(v231.supplies("BDG-01"));
    let boxed = prices
        .iter()
        .find(|p| p.item == "BRG-0042" && p.uom == Uom::Box)
        .unwrap();
    assert_eq!(boxed.unit_price, Decimal::from(288_000));
    // A vendor that does not supply the caller's branch is still read: the tools check.
    let (v415, _) = erp
        .vendor_with_prices(&branch("BDG-01").scope(), "V-00415")
        .await
        .unwrap()
        .unwrap();
    assert!(!v415.supplies("BDG-01"));
    // A customer is not a vendor.
    assert_eq!(erp.vendor_with_prices(&who.scope(), "C-BDG-001").await.unwrap(), None);
    assert_eq!(erp.vendor_with_prices(&who.scope(), "V-99999").await.unwrap(), None);
}

#[tokio::test]
async fn a_branch_lists_only_the_vendors_that_supply_it() {
    let erp = shared().erp();
    for b in BRANCHES.iter() {
        let want: Vec<BranchVendor> = demo::branch_vendors()
            .into_iter()
            .filter(|(br, _)| *br == b.id)
            .map(|(_, v)| v)
            .collect();
        let found = erp.branch_vendors(&branch(b.id).scope()).await.unwrap();
        assert_eq!(found, want, "{}", b.id);
    }
    let codes: Vec<String> = erp
        .branch_vendors(&branch("BDG-01").scope())
        .await
        .unwrap()
        .into_iter()
        .map(|v| v.code)
        .collect();
    assert_eq!(codes, ["V-00231", "V-00508", "V-00612"]);
}

#[tokio::test]
async fn lookups_by_code_return_only_what_exists() {
    let erp = shared().erp();
    let bdg = branch("BDG-01");
    let (items, vendors) = erp
        .items_and_branch_vendors(
            &bdg.scope(),
            &["BRG-0042".into(), "WLD-0501".into(), "NOPE-0000".into()],
            &["V-00231".into(), "V-00415".into(), "V-99999".into()],
        )
        .await
        .unwrap();
    assert_eq!(
        items.keys().collect::<BTreeSet<_>>(),
        BTreeSet::from([&"BRG-0042".to_owned(), &"WLD-0501".to_owned()])
    );
    // V-00415 does not supply Bandung.
    assert_eq!(vendors.keys().collect::<Vec<_>>(), [&"V-00231".to_owned()]);
    assert_eq!(vendors["V-00231"].items, ["BRG-0042", "BRG-0043", "VBT-0220"]);

    let wanted = vec![
        ("V-00231".to_owned(), "BRG-0042".to_owned(), Uom::Box),
        ("V-00231".to_owned(), "BRG-0042".to_owned(), Uom::Kg),
        ("V-00415".to_owned(), "WLD-0501".to_owned(), Uom::Kg),
        ("V-00415".to_owned(), "WLD-0501".to_owned(), Uom::Box),
    ];
    let mut prices = erp.vendor_prices(&bdg.scope(), &wanted).await.unwrap();
    prices.sort_by(|a, b| a.vendor.cmp(&b.vendor));
    let shown: Vec<(&str, &str, Uom, Decimal)> = prices
        .iter()
        .map(|p| (p.vendor.as_str(), p.item.as_str(), p.uom, p.unit_price))
        .collect();
    assert_eq!(
        shown,
        [
            ("V-00231", "BRG-0042", Uom::Box, Decimal::from(288_000)),
            ("V-00415", "WLD-0501", Uom::Kg, Decimal::from(42_000))
        ]
    );

    let wanted: Vec<(String, Uom)> = [
        ("BRG-0042", Uom::Pcs),
        ("BRG-0042", Uom::Box),
        ("BLT-0107", Uom::Pcs),
        ("BLT-0107", Uom::Box),
        ("GLV-0015", Uom::Box),
        ("VBT-0220", Uom::Pcs),
    ]
    .into_iter()
    .map(|(i, u)| (i.to_owned(), u))
    .collect();
    let found: BTreeSet<(String, Uom, Decimal)> = erp
        .list_prices(&bdg.scope(), "PL-WHOLESALE", &wanted)
        .await
        .unwrap()
        .into_iter()
        .map(|p| {
            assert_eq!(p.list, "PL-WHOLESALE");
            (p.item, p.uom, p.unit_price)
        })
        .collect();
    let want: BTreeSet<(String, Uom, Decimal)> = demo::list_prices()
        .into_iter()
        .filter(|p| p.list == "PL-WHOLESALE" && wanted.contains(&(p.item.clone(), p.uom)))
        .map(|p| (p.item, p.uom, p.unit_price))
        .collect();
    assert_eq!(found, want);
    assert_eq!(found.len(), 4);
}

/// Demo.rs's order as Tryton tells it: the id is Tryton's, and `created_at`
/// is the day of `purchase_date` (Tryton keeps no time of day for it).
fn as_tryton(mut po: PurchaseOrder, read: &PurchaseOrder) -> PurchaseOrder {
    assert!(read.draft_id.starts_with("po_tryton_"), "{}", read.draft_id);
    po.draft_id = read.draft_id.clone();
    po.created_at = format!("{}T00:00:00.000Z", &po.created_at[..10]);
    po
}

#[tokio::test]
async fn jakartas_purchase_orders_read_back_as_in_the_demo() {
    let erp = shared().erp();
    let jkt = branch("JKT-01");
    let po = erp
        .purchase_order(&jkt.scope(), "PO-JKT-000001")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(po, as_tryton(demo::jakarta_purchase_orders().remove(0), &po));
    assert_eq!(po.created_at, "2026-11-20T00:00:00.000Z");
    for want in demo::jakarta_purchase_orders() {
        let read = erp
            .purchase_order(&jkt.scope(), &want.po_number)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(read, as_tryton(want, &read));
    }
    // Another branch's order reads exactly like a missing one.
    assert_eq!(
        erp.purchase_order(&branch("SBY-01").scope(), "PO-JKT-000001")
            .await
            .unwrap(),
        None
    );
    assert_eq!(erp.purchase_order(&jkt.scope(), "PO-JKT-999999").await.unwrap(), None);
}

#[tokio::test]
async fn purchase_orders_are_searched_highest_number_first_page_by_page() {
    let erp = shared().erp();
    let jkt = branch("JKT-01");
    let all = PoFilter::default();
    let first = erp
        .search_purchase_orders(&jkt.scope(), &all, None, 20, 5)
        .await
        .unwrap();
    let numbers = |pos: &[PurchaseOrder]| pos.iter().map(|p| p.po_number.clone()).collect::<Vec<_>>();
    let want: Vec<String> = (5..=24).rev().map(|n| format!("PO-JKT-{n:06}")).collect();
    assert_eq!(numbers(&first.items), want);
    assert_eq!(first.next_after.as_deref(), Some("PO-JKT-000005"));
    let second = erp
        .search_purchase_orders(&jkt.scope(), &all, first.next_after.as_deref(), 20, 5)
        .await
        .unwrap();
    assert_eq!(
        numbers(&second.items),
        ["PO-JKT-000004", "PO-JKT-000003", "PO-JKT-000002", "PO-JKT-000001"]
    );
    assert_eq!(second.next_after, None);

    let demo_pos = demo::jakarta_purchase_orders();
    let expect = |keep: &dyn Fn(&PurchaseOrder) -> bool| {
        let mut found: Vec<String> = demo_pos
            .iter()
            .filter(|p| keep(p))
            .map(|p| p.po_number.clone())
            .collect();
        found.sort();
        found.reverse();
        found
    };
    for status in [
        PoStatus::Draft,
        PoStatus::Approved,
        PoStatus::Sent,
        PoStatus::Received,
        PoStatus::Cancelled,
    ] {
        let filter = PoFilter {
            status: Some(status),
            ..PoFilter::default()
        };
        let page = erp
            .search_purchase_orders(&jkt.scope(), &filter, None, 50, 5)
            .await
            .unwrap();
        assert_eq!(numbers(&page.items), expect(&|p| p.status == status), "{status:?}");
        assert!(page.items.iter().all(|p| p.status == status));
    }
    let filter = PoFilter {
        vendor_code: Some("V-00612".into()),
        created_from: "2026-10-01".parse().ok(),
        created_to: "2026-10-31".parse().ok(),
        ..PoFilter::default()
    };
    let page = erp
        .search_purchase_orders(&jkt.scope(), &filter, None, 50, 5)
        .await
        .unwrap();
    let want = expect(&|p| {
        p.vendor.code == "V-00612" && p.created_at.as_str() >= "2026-10-01" && &p.created_at[..10] <= "2026-10-31"
    });
    assert!(!want.is_empty());
    assert_eq!(numbers(&page.items), want);
    // Surabaya has only its agent's drafts; Jakarta's are not its.
    let sby = erp
        .search_purchase_orders(&branch("SBY-01").scope(), &all, None, 20, 5)
        .await
        .unwrap();
    let mut want: Vec<String> = demo::agent_purchase_orders()
        .into_iter()
        .map(|(po, _)| po.po_number)
        .collect();
    want.sort();
    want.reverse();
    assert_eq!(numbers(&sby.items), want);
    assert!(sby.next_after.is_none());
}

/// A seeded agent PO as Tryton tells it: its Tryton id, and a person's
/// decision is Tryton's workflow, so the decision is who last changed it
/// and when, without a reason (Tryton keeps none), the order says a person
/// handled it, and a rejection is a cancellation.
fn agent_po_as_tryton(mut po: PurchaseOrder, read: &PurchaseOrder) -> PurchaseOrder {
    assert!(read.draft_id.starts_with("po_tryton_"), "{}", read.draft_id);
    po.draft_id = read.draft_id.clone();
    if let Some(decision) = po.decision.as_mut() {
        decision.reason = None;
        if po.status == PoStatus::Rejected {
            po.status = PoStatus::Cancelled;
        }
        po.next_step = format!("{} was handled by a person in the ERP.", po.po_number);
    }
    po
}

/// A seeded agent quote as Tryton tells it (see [`agent_po_as_tryton`]; a
/// cancelled quote reads as rejected).
fn agent_quote_as_tryton(mut quote: Quote, read: &Quote) -> Quote {
    assert!(read.quote_id.starts_with("qt_tryton_"), "{}", read.quote_id);
    quote.quote_id = read.quote_id.clone();
    if let Some(decision) = quote.decision.as_mut() {
        decision.reason = None;
        quote.next_step = format!("Quote {} is handled by a person in the ERP.", quote.quote_number);
    }
    quote
}

#[tokio::test]
async fn the_agents_drafts_of_the_days_before_read_back_as_in_the_demo() {
    let erp = shared().erp();
    let sby = branch("SBY-01");
    let statuses: Vec<PoStatus> = demo::agent_purchase_orders()
        .into_iter()
        .map(|(want, _)| want.status)
        .collect();
    assert_eq!(statuses, [PoStatus::Draft, PoStatus::Approved, PoStatus::Rejected]);
    for (want, _) in demo::agent_purchase_orders() {
        let read = erp
            .purchase_order(&sby.scope(), &want.po_number)
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("{} is not in Tryton", want.po_number));
        assert_eq!(read, agent_po_as_tryton(want, &read));
    }
    // The one waiting for review is an agent draft like any other.
    let waiting = erp
        .purchase_order(&sby.scope(), "PO-SBY-000001")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(waiting.created_at, "2026-11-26T02:14:09.000Z");
    assert!(waiting.next_step.contains("awaits"), "{}", waiting.next_step);
    let bdg = branch("BDG-01");
    for (want, _) in demo::agent_quotes() {
        let read = erp
            .quote(&bdg.scope(), &want.quote_number)
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("{} is not in Tryton", want.quote_number));
        assert_eq!(read, agent_quote_as_tryton(want, &read));
    }
    // Agents' drafts are not another branch's.
    assert_eq!(
        erp.purchase_order(&branch("JKT-01").scope(), "PO-SBY-000001")
            .await
            .unwrap(),
        None
    );
    assert_eq!(erp.quote(&sby.scope(), "QT-BDG-000001").await.unwrap(), None);
}

#[tokio::test]
async fn customers_orders_and_credit_positions_of_bandung_are_the_demos() {
    let erp = shared().erp();
    let bdg = branch("BDG-01");
    let mut want: Vec<_> = demo::customers()
        .into_iter()
        .filter(|(b, _)| *b == "BDG-01")
        .map(|(_, c)| c)
        .collect();
    want.sort_by(|a, b| a.code.cmp(&b.code));
    assert_eq!(erp.customers(&bdg.scope()).await.unwrap(), want);
    for customer in &want {
        assert_eq!(
            erp.customer(&bdg.scope(), &customer.code).await.unwrap().as_ref(),
            Some(customer)
        );
        let orders = erp.customer_orders(&bdg.scope(), &customer.code).await.unwrap();
        let mut want_orders: Vec<_> = demo::sales_orders()
            .into_iter()
            .filter(|(b, o)| *b == "BDG-01" && o.customer == customer.code)
            .map(|(_, o)| o)
            .collect();
        want_orders.sort_by(|a, b| a.number.cmp(&b.number));
        assert_eq!(orders, want_orders, "{}", customer.code);
        let invoices = erp.customer_invoices(&bdg.scope(), &customer.code).await.unwrap();
        let want_invoices: Vec<CustomerInvoice> = demo::invoices()
            .into_iter()
            .filter(|(b, i)| *b == "BDG-01" && i.customer == customer.code)
            .map(|(_, i)| i)
            .collect();
        assert_eq!(
            sorted_invoices(invoices.clone()),
            sorted_invoices(want_invoices.clone())
        );
        assert_eq!(
            customer.credit_position(&orders, &invoices).unwrap(),
            customer.credit_position(&want_orders, &want_invoices).unwrap()
        );
    }
    let tekstil = &want[0];
    let position = tekstil
        .credit_position(
            &erp.customer_orders(&bdg.scope(), "C-BDG-001").await.unwrap(),
            &erp.customer_invoices(&bdg.scope(), "C-BDG-001").await.unwrap(),
        )
        .unwrap();
    // Open orders 31 080 000 + 4 995 000; unpaid 24 420 000 + 12 210 000.
    assert_eq!(position.open_orders, Decimal::from(36_075_000));
    assert_eq!(position.outstanding_invoices, Decimal::from(36_630_000));
    // Another branch's customer reads exactly like a missing one.
    let sby = branch("SBY-01");
    assert_eq!(erp.customer(&sby.scope(), "C-BDG-001").await.unwrap(), None);
    assert!(erp.customer_orders(&sby.scope(), "C-BDG-001").await.unwrap().is_empty());
    assert!(
        erp.customer_invoices(&sby.scope(), "C-BDG-001")
            .await
            .unwrap()
            .is_empty()
    );
}

fn sorted_invoices(mut invoices: Vec<CustomerInvoice>) -> Vec<CustomerInvoice> {
    invoices.sort_by(|a, b| (&a.customer, &a.number).cmp(&(&b.customer, &b.number)));
    invoices
}

fn sorted_bills(mut bills: Vec<VendorBill>) -> Vec<VendorBill> {
    bills.sort_by(|a, b| (&a.vendor, &a.number).cmp(&(&b.vendor, &b.number)));
    bills
}

#[tokio::test]
async fn receivables_and_payables_of_each_branch_are_the_demos_ageing_inputs() {
    let erp = shared().erp();
    for b in BRANCHES.iter() {
        let who = branch(b.id);
        let receivables = erp.receivables(&who.scope()).await.unwrap();
        let want: Vec<CustomerInvoice> = demo::invoices()
            .into_iter()
            .filter(|(br, _)| *br == b.id)
            .map(|(_, i)| i)
            .collect();
        // Already in the built-in order: by customer, then number.
        assert_eq!(receivables, sorted_invoices(want), "{}", b.id);
        let payables = erp.payables(&who.scope()).await.unwrap();
        let want: Vec<VendorBill> = demo::bills()
            .into_iter()
            .filter(|(br, _)| *br == b.id)
            .map(|(_, i)| i)
            .collect();
        assert_eq!(payables, sorted_bills(want), "{}", b.id);
    }
    let bdg = erp.receivables(&branch("BDG-01").scope()).await.unwrap();
    let partly = bdg.iter().find(|i| i.number == "INV-BDG-000097").unwrap();
    assert_eq!(
        (partly.amount, partly.paid),
        (Decimal::from(6_660_000), Decimal::from(2_000_000))
    );
    assert_eq!(partly.due_date.to_string(), "2026-08-15");
}

#[tokio::test]
async fn tax_types_are_the_demos_with_the_former_rate_inactive() {
    let erp = shared().erp();
    let mut want = demo::tax_types();
    want.sort_by(|a, b| a.code.code().cmp(b.code.code()));
    assert_eq!(erp.tax_types(&branch("BDG-01").scope()).await.unwrap(), want);
}

#[tokio::test]
async fn another_tenant_sees_nothing_and_costs_no_request() {
    let erp = shared().erp();
    let other = Who::new("other", "SBY-01", "SBY", "intruder", "inventory:read");
    let scope = other.scope();
    assert_eq!(erp.item(&scope, "BRG-0042").await.unwrap(), None);
    assert_eq!(erp.item_stock(&scope, "BRG-0042").await.unwrap(), (Vec::new(), None));
    assert!(erp.due_items(&scope, None, 10).await.unwrap().items.is_empty());
    assert_eq!(erp.vendor_with_prices(&scope, "V-00231").await.unwrap(), None);
    assert!(erp.branch_vendors(&scope).await.unwrap().is_empty());
    assert_eq!(erp.purchase_order(&scope, "PO-JKT-000001").await.unwrap(), None);
    assert!(erp.customers(&scope).await.unwrap().is_empty());
    assert!(erp.receivables(&scope).await.unwrap().is_empty());
    assert!(erp.tax_types(&scope).await.unwrap().is_empty());
    assert_eq!(erp.requests(), 0);
    let draft = draftline_erp::domain::PoDraft {
        branch_id: "SBY-01".into(),
        counterparty: draftline_erp::domain::VendorRef {
            code: "V-00231".into(),
            name: "PT Sinar Bearindo".into(),
        },
        currency: "IDR".into(),
        lines: Vec::new(),
        subtotal: draftline_erp::money::Money::new(Decimal::ZERO, "IDR"),
        total: draftline_erp::money::Money::new(Decimal::ZERO, "IDR"),
        note: None,
        client_ref: "r".into(),
        drafted_by_agent_run: None,
        drafted_on_behalf_of: "intruder".into(),
        drafted_by_tool_call: None,
        own: draftline_erp::domain::PoFields {
            needed_by: "2026-12-15".parse().unwrap(),
        },
    };
    let refused = erp
        .place_draft(
            &scope,
            draft.into(),
            Some("k"),
            draftline_erp::domain::Seen::Unread,
            chrono::Utc::now(),
        )
        .await
        .err()
        .unwrap();
    assert!(
        matches!(refused, draftline_contract::ErpError::Internal(_)),
        "{refused:?}"
    );
    assert!(format!("{refused:?}").contains("not served"), "{refused:?}");
    assert_eq!(erp.requests(), 0);
}
