//! How many Tryton requests each port method and each tool call costs: cold
//! (a new instance, master data not read yet) and warm (the same call again).

use std::sync::Arc;

use draftline_contract::{DraftTool, ReadTool};
use draftline_erp::domain::DocumentKind::{PurchaseOrder, Quote};
use draftline_erp::domain::TaxCode;
use draftline_erp::port::{Drafting, Erp, Finance, Inventory, PoFilter, Purchasing, Sales};
use draftline_erp::tools::finance_get_account_summary::{FinanceGetAccountSummary, GetAccountSummaryInput};
use draftline_erp::tools::finance_list_tax_types::{FinanceListTaxTypes, ListTaxTypesInput};
use draftline_erp::tools::inventory_get_stock::{GetStockInput, InventoryGetStock};
use draftline_erp::tools::inventory_list_below_reorder::{InventoryListBelowReorder, ListBelowReorderInput};
use draftline_erp::tools::purchasing_create_po_draft::PurchasingCreatePoDraft;
use draftline_erp::tools::purchasing_get_po::{GetPoInput, PurchasingGetPo};
use draftline_erp::tools::purchasing_search_pos::{PurchasingSearchPos, SearchPosInput};
use draftline_erp::tools::purchasing_search_vendors::{PurchasingSearchVendors, SearchVendorsInput};
use draftline_erp::tools::sales_create_quote_draft::{CreateQuoteDraftInput, QuoteLineInput, SalesCreateQuoteDraft};
use draftline_erp::tools::sales_get_customer_summary::{GetCustomerSummaryInput, SalesGetCustomerSummary};
use draftline_erp::tools::sales_search_customers::{SalesSearchCustomers, SearchCustomersInput};
use draftline_erp::units::Uom;
use draftline_erp_tryton::TrytonErp;

use crate::drafts::po_input;
use crate::helpers::{Context, branch, in_days, own, shared};

/// Requests `$call` costs on `$erp`.
macro_rules! cost {
    ($erp:expr, $call:expr) => {{
        let before = $erp.requests();
        $call.await.unwrap();
        $erp.requests() - before
    }};
}

/// (cold, warm) requests of `$call` (an expression over `erp`).
macro_rules! cold_warm {
    ($db:expr, |$erp:ident| $call:expr) => {{
        let $erp = $db.erp();
        let cold = cost!($erp, $call);
        let warm = cost!($erp, $call);
        (cold, warm)
    }};
}

/// A row: what, (cold, warm) measured, (cold, warm) expected.
type Row<'a> = (&'a str, (u64, u64), (u64, u64));

fn table(title: &str, rows: &[Row<'_>]) {
    eprintln!("{title}: cold/warm (expected cold/warm)");
    for (name, got, want) in rows {
        eprintln!("  {name:<32} {}/{}  ({}/{})", got.0, got.1, want.0, want.1);
    }
    let wrong: Vec<&str> = rows
        .iter()
        .filter(|(_, got, want)| got != want)
        .map(|(n, _, _)| *n)
        .collect();
    assert!(wrong.is_empty(), "request counts differ for {wrong:?}");
}

#[tokio::test]
async fn each_port_read_costs_a_known_number_of_requests() {
    let db = shared();
    let sby = branch("SBY-01");
    let bdg = branch("BDG-01");
    let jkt = branch("JKT-01");
    let (s, b, j) = (sby.scope(), bdg.scope(), jkt.scope());
    let codes = vec!["BRG-0042".to_owned(), "WLD-0501".to_owned()];
    let vendors = vec!["V-00231".to_owned(), "V-00415".to_owned()];
    let wanted = vec![("V-00231".to_owned(), "BRG-0042".to_owned(), Uom::Box)];
    let list = vec![("BRG-0042".to_owned(), Uom::Box)];
    let since = chrono::Utc::now() - chrono::Duration::hours(24);
    let all = PoFilter::default();
    let rows = [
        ("item", cold_warm!(db, |erp| erp.item(&s, "BRG-0042")), (2, 1)),
        ("items", cold_warm!(db, |erp| erp.items(&s, &codes)), (2, 1)),
        (
            "item_stock (SBY, 2 locations)",
            cold_warm!(db, |erp| erp.item_stock(&s, "BRG-0042")),
            (4, 3),
        ),
        (
            "due_items (SBY, 2 locations)",
            cold_warm!(db, |erp| erp.due_items(&s, None, 20)),
            (6, 5),
        ),
        (
            "due_items (BDG, 1 location)",
            cold_warm!(db, |erp| erp.due_items(&b, None, 20)),
            (4, 3),
        ),
        (
            "vendor_with_prices",
            cold_warm!(db, |erp| erp.vendor_with_prices(&s, "V-00231")),
            (4, 2),
        ),
        (
            "vendor_prices",
            cold_warm!(db, |erp| erp.vendor_prices(&s, &wanted)),
            (2, 1),
        ),
        ("branch_vendors", cold_warm!(db, |erp| erp.branch_vendors(&s)), (3, 2)),
        (
            "items_and_branch_vendors",
            cold_warm!(db, |erp| erp.items_and_branch_vendors(&b, &codes, &vendors)),
            (5, 3),
        ),
        (
            "purchase_order",
            cold_warm!(db, |erp| erp.purchase_order(&j, "PO-JKT-000001")),
            (1, 1),
        ),
        (
            "search_purchase_orders",
            cold_warm!(db, |erp| erp.search_purchase_orders(&j, &all, None, 20, 5)),
            (1, 1),
        ),
        (
            "open_drafts (purchase orders)",
            cold_warm!(db, |erp| erp.open_drafts(
                &j,
                PurchaseOrder,
                "V-00612",
                since,
                chrono::Utc::now()
            )),
            (1, 1),
        ),
        ("customers", cold_warm!(db, |erp| erp.customers(&b)), (2, 1)),
        ("customer", cold_warm!(db, |erp| erp.customer(&b, "C-BDG-001")), (2, 1)),
        (
            "customer_orders",
            cold_warm!(db, |erp| erp.customer_orders(&b, "C-BDG-001")),
            (1, 1),
        ),
        (
            "customer_invoices",
            cold_warm!(db, |erp| erp.customer_invoices(&b, "C-BDG-001")),
            (1, 1),
        ),
        (
            "list_prices",
            cold_warm!(db, |erp| erp.list_prices(&b, "PL-WHOLESALE", &list)),
            (2, 1),
        ),
        ("quote", cold_warm!(db, |erp| erp.quote(&b, "QT-BDG-000001")), (1, 1)),
        (
            "open_drafts (quotes)",
            cold_warm!(db, |erp| erp.open_drafts(
                &b,
                Quote,
                "C-BDG-001",
                since,
                chrono::Utc::now()
            )),
            (1, 1),
        ),
        ("tax_types", cold_warm!(db, |erp| erp.tax_types(&b)), (1, 1)),
        ("receivables", cold_warm!(db, |erp| erp.receivables(&b)), (1, 1)),
        ("payables", cold_warm!(db, |erp| erp.payables(&b)), (1, 1)),
    ];
    table("port reads", &rows);
}

async fn read<T: ReadTool>(
    tool: &T,
    ctx: &Context,
    input: T::Input,
) -> Result<T::Output, draftline_contract::ToolError> {
    tool.read(&ctx.call(), input).await
}

#[tokio::test]
async fn each_read_tool_call_costs_a_known_number_of_requests() {
    let db = shared();
    let sby = Context::new(branch("SBY-01"), "run-counts", None);
    let bdg = Context::new(branch("BDG-01"), "run-counts", None);
    let jkt = Context::new(branch("JKT-01"), "run-counts", None);
    macro_rules! tool {
        ($db:expr, $tool:ident, $ctx:expr, $input:expr) => {{
            let erp = Arc::new($db.erp());
            let tool = $tool::new(erp.clone() as Arc<dyn Erp>);
            let cold = cost!(erp, read(&tool, $ctx, $input));
            let warm = cost!(erp, read(&tool, $ctx, $input));
            (cold, warm)
        }};
    }
    let rows = [
        (
            "inventory_get_stock",
            tool!(
                db,
                InventoryGetStock,
                &sby,
                GetStockInput {
                    item_code: "BRG-0042".into()
                }
            ),
            (6, 4),
        ),
        (
            "inventory_list_below_reorder",
            tool!(
                db,
                InventoryListBelowReorder,
                &bdg,
                ListBelowReorderInput {
                    limit: None,
                    cursor: None
                }
            ),
            (10, 7),
        ),
        (
            "purchasing_search_vendors",
            tool!(
                db,
                PurchasingSearchVendors,
                &sby,
                SearchVendorsInput {
                    query: None,
                    item_code: Some("BRG-0042".into()),
                    limit: None,
                    cursor: None
                }
            ),
            (6, 4),
        ),
        (
            "purchasing_search_pos",
            tool!(
                db,
                PurchasingSearchPos,
                &jkt,
                SearchPosInput {
                    status: None,
                    vendor_code: None,
                    created_from: None,
                    created_to: None,
                    limit: None,
                    cursor: None
                }
            ),
            (1, 1),
        ),
        (
            "purchasing_get_po",
            tool!(
                db,
                PurchasingGetPo,
                &jkt,
                GetPoInput {
                    po_number: "PO-JKT-000001".into()
                }
            ),
            (1, 1),
        ),
        (
            "sales_search_customers",
            tool!(
                db,
                SalesSearchCustomers,
                &bdg,
                SearchCustomersInput {
                    query: None,
                    limit: None,
                    cursor: None
                }
            ),
            (2, 1),
        ),
        (
            "sales_get_customer_summary",
            tool!(
                db,
                SalesGetCustomerSummary,
                &bdg,
                GetCustomerSummaryInput {
                    customer_code: "C-BDG-001".into()
                }
            ),
            (4, 3),
        ),
        (
            "finance_list_tax_types",
            tool!(db, FinanceListTaxTypes, &bdg, ListTaxTypesInput {}),
            (1, 1),
        ),
        (
            "finance_get_account_summary",
            tool!(
                db,
                FinanceGetAccountSummary,
                &bdg,
                GetAccountSummaryInput { ledger: None }
            ),
            (2, 2),
        ),
    ];
    table("read tools", &rows);
}

/// Requests of one draft tool call (its reads, placing and the one create).
async fn draft_cost<T: DraftTool>(erp: &TrytonErp, tool: &T, ctx: &Context, input: T::Input) -> u64 {
    let before = erp.requests();
    let external = crate::drafts::External::of(tool.draft(&ctx.call(), input).await.unwrap());
    let placed = erp.requests() - before;
    external.create().await.unwrap();
    let total = erp.requests() - before;
    assert_eq!(total - placed, 1, "a create is one request");
    total
}

#[tokio::test]
async fn each_draft_tool_call_costs_its_reads_and_one_create() {
    let db = own();
    let erp = Arc::new(db.erp());
    let po = PurchasingCreatePoDraft::new(erp.clone() as Arc<dyn Erp>);
    let mut first = Context::new(branch("SBY-01"), "run-c1", Some("dl1-count-po-1"));
    let cold = draft_cost(&erp, &po, &first, po_input("count-1")).await;
    first.draft_key = Some("dl1-count-po-2".into());
    let warm = draft_cost(&erp, &po, &first, po_input("count-2")).await;
    // With the near-duplicate check: one more read (a different vendor, so nothing matches).
    let mut checked = Context::new(branch("SBY-01"), "run-c2", Some("dl1-count-po-3"));
    checked.window = Some(std::time::Duration::from_secs(86_400));
    let mut other_vendor = po_input("count-3");
    other_vendor.vendor_code = "V-00415".into();
    other_vendor.lines = vec![draftline_erp::tools::purchasing_create_po_draft::PoLineInput {
        item_code: "BLT-0107".into(),
        qty: 3,
        uom: Uom::Box,
    }];
    let with_check = draft_cost(&erp, &po, &checked, other_vendor).await;

    let quote = SalesCreateQuoteDraft::new(erp.clone() as Arc<dyn Erp>);
    let quote_input = |client_ref: &str| CreateQuoteDraftInput {
        customer_code: "C-BDG-002".into(),
        valid_until: in_days(20),
        client_ref: client_ref.into(),
        note: None,
        lines: vec![QuoteLineInput {
            item_code: "OIL-0310".into(),
            qty: 2,
            uom: Uom::Ctn,
            tax_code: Some(TaxCode::Vat11),
        }],
    };
    let mut ctx = Context::new(branch("BDG-01"), "run-c3", Some("dl1-count-qt-1"));
    let quote_cold = draft_cost(&erp, &quote, &ctx, quote_input("q-1")).await;
    ctx.draft_key = Some("dl1-count-qt-2".into());
    let quote_warm = draft_cost(&erp, &quote, &ctx, quote_input("q-2")).await;
    let rows = [
        ("purchasing_create_po_draft", (cold, warm), (6, 3)),
        ("  with the near-duplicate check", (with_check, with_check), (4, 4)),
        ("sales_create_quote_draft", (quote_cold, quote_warm), (7, 7)),
    ];
    table("draft tools (reads + place + create)", &rows);
}
