//! The demo story is one data file (`shared/erp/demo/demo.json`): the
//! built-in backend seeded from it on dynoxide (`seed_demo`) and a Tryton
//! database seeded from it (`seed.py`) read back, through the ERP port, the
//! same vendors, items, prices, stock and agent drafts, and they are the
//! file's (`draftline_erp::demo`). Where Tryton tells a document otherwise
//! by design (its own ids; a person's decision is its workflow, without a
//! reason; MAPPING.md) the built-in read is told that way before comparing.

use std::collections::BTreeMap;

use draftline_contract::identity::{BranchCode, BranchId, TenantId};
use draftline_dynamo::Db;
use draftline_erp::demo::{self, BRANCHES, DemoBranch};
use draftline_erp::domain::{
    AgentDraft, DocumentKind, DraftFilter, PoStatus, PriceEntry, PurchaseOrder, Quote, Vendor,
};
use draftline_erp::port::{Erp, Scope};
use draftline_erp_builtin::BuiltinErp;
use draftline_erp_tryton::{TrytonErp, TrytonKey};

/// One backend of each kind, both seeded from the demo file.
struct Seeded {
    builtin: BuiltinErp,
    tryton: TrytonErp,
    _engine: draftline_infra::EmbeddedDynamo,
}

async fn seeded() -> Seeded {
    let engine = draftline_infra::EmbeddedDynamo::start(None).await.unwrap();
    let db = Db::connect("draftline-demo-data", Some(&engine.endpoint())).await;
    draftline_infra::create_table(db.client(), db.table()).await.unwrap();
    draftline_erp_builtin::seed::seed_demo(&db).await.unwrap();
    let database = tokio::task::spawn_blocking(crate::tryton::fresh_database)
        .await
        .expect("a Tryton database");
    let mut settings = draftline_erp_tryton::TrytonSettings::new(
        database.url.clone(),
        database.database.clone(),
        TrytonKey::new(database.key.expose()),
    );
    settings.tenant = database.tenant.clone();
    Seeded {
        builtin: BuiltinErp::new(db),
        tryton: TrytonErp::new(&settings).unwrap(),
        _engine: engine,
    }
}

/// A branch of the demo tenant, as a scope.
struct Branch {
    tenant: TenantId,
    id: BranchId,
    code: BranchCode,
}

impl Branch {
    fn of(branch: &DemoBranch) -> Self {
        Self {
            tenant: TenantId::parse(demo::TENANT).unwrap(),
            id: BranchId::parse(branch.id).unwrap(),
            code: BranchCode::parse(branch.code).unwrap(),
        }
    }

    fn scope(&self) -> Scope<'_> {
        Scope {
            tenant: &self.tenant,
            branch: &self.id,
            branch_code: &self.code,
        }
    }
}

fn by_unit(mut prices: Vec<PriceEntry>) -> Vec<PriceEntry> {
    prices.sort_by(|a, b| (&a.vendor, &a.item, a.uom.code()).cmp(&(&b.vendor, &b.item, b.uom.code())));
    prices
}

/// The branches a vendor supplies are a set: the built-in backend keeps
/// them as a DynamoDB string set, which reads back in its own order.
fn branches_sorted(mut vendor: Vendor) -> Vendor {
    vendor.branches.sort();
    vendor
}

#[tokio::test]
async fn both_backends_seeded_from_the_demo_file_read_back_its_items_vendors_and_prices() {
    let both = seeded().await;
    let (builtin, tryton): (&dyn Erp, &dyn Erp) = (&both.builtin, &both.tryton);
    let codes: Vec<String> = demo::items().into_iter().map(|i| i.code).collect();
    let want_items: BTreeMap<String, _> = demo::items().into_iter().map(|i| (i.code.clone(), i)).collect();
    let wanted_prices: Vec<_> = demo::prices().into_iter().map(|p| (p.vendor, p.item, p.uom)).collect();
    for b in BRANCHES.iter() {
        let branch = Branch::of(b);
        let scope = branch.scope();

        let items = builtin.items(&scope, &codes).await.unwrap();
        assert_eq!(items.into_iter().collect::<BTreeMap<_, _>>(), want_items, "{}", b.id);
        let items = tryton.items(&scope, &codes).await.unwrap();
        assert_eq!(items.into_iter().collect::<BTreeMap<_, _>>(), want_items, "{}", b.id);

        let listed = builtin.branch_vendors(&scope).await.unwrap();
        assert_eq!(tryton.branch_vendors(&scope).await.unwrap(), listed, "{}", b.id);
        let want: Vec<_> = demo::branch_vendors()
            .into_iter()
            .filter(|(branch, _)| *branch == b.id)
            .map(|(_, v)| v)
            .collect();
        assert_eq!(listed, want, "{}", b.id);

        for vendor in demo::vendors() {
            let (found, prices) = builtin.vendor_with_prices(&scope, &vendor.code).await.unwrap().unwrap();
            let (in_tryton, tryton_prices) = tryton.vendor_with_prices(&scope, &vendor.code).await.unwrap().unwrap();
            let (found, in_tryton) = (branches_sorted(found), branches_sorted(in_tryton));
            assert_eq!((&in_tryton, by_unit(tryton_prices)), (&found, by_unit(prices.clone())));
            assert_eq!(found, branches_sorted(vendor.clone()));
            let want: Vec<PriceEntry> = demo::prices().into_iter().filter(|p| p.vendor == vendor.code).collect();
            assert_eq!(by_unit(prices), by_unit(want), "{}", vendor.code);
        }

        let prices = by_unit(builtin.vendor_prices(&scope, &wanted_prices).await.unwrap());
        assert_eq!(
            by_unit(tryton.vendor_prices(&scope, &wanted_prices).await.unwrap()),
            prices
        );
        assert_eq!(prices, by_unit(demo::prices()), "{}", b.id);
    }
}

#[tokio::test]
async fn both_backends_seeded_from_the_demo_file_read_back_its_stock() {
    let both = seeded().await;
    let (builtin, tryton): (&dyn Erp, &dyn Erp) = (&both.builtin, &both.tryton);
    for b in BRANCHES.iter() {
        let branch = Branch::of(b);
        let scope = branch.scope();
        for item in demo::items() {
            let (mut levels, policy) = builtin.item_stock(&scope, &item.code).await.unwrap();
            levels.sort_by(|x, y| x.warehouse.cmp(&y.warehouse));
            let (mut in_tryton, tryton_policy) = tryton.item_stock(&scope, &item.code).await.unwrap();
            in_tryton.sort_by(|x, y| x.warehouse.cmp(&y.warehouse));
            assert_eq!(
                (&in_tryton, &tryton_policy),
                (&levels, &policy),
                "{} {}",
                b.id,
                item.code
            );

            let mut want: Vec<_> = demo::stock()
                .into_iter()
                .filter(|(branch, l)| *branch == b.id && l.item == item.code)
                .map(|(_, l)| l)
                .collect();
            want.sort_by(|x, y| x.warehouse.cmp(&y.warehouse));
            assert_eq!(levels, want, "{} {}", b.id, item.code);
            let want = demo::policies()
                .into_iter()
                .find(|(branch, p)| *branch == b.id && p.item == item.code)
                .map(|(_, p)| p);
            assert_eq!(policy, want, "{} {}", b.id, item.code);
        }
        let due = builtin.due_items(&scope, None, 100).await.unwrap();
        assert_eq!(tryton.due_items(&scope, None, 100).await.unwrap(), due, "{}", b.id);
        assert!(!due.items.is_empty(), "{}: every branch has items due", b.id);
    }
}

/// A built-in agent PO as Tryton tells it: Tryton's id, and a decision is
/// Tryton's workflow (who last changed it and when, no reason; a rejection
/// is a cancellation; a person handled it in the ERP).
fn po_as_tryton(mut po: PurchaseOrder, in_tryton: &PurchaseOrder) -> PurchaseOrder {
    po.draft_id = in_tryton.draft_id.clone();
    if let Some(decision) = po.decision.as_mut() {
        decision.reason = None;
        if po.status == PoStatus::Rejected {
            po.status = PoStatus::Cancelled;
        }
        po.next_step = format!("{} was handled by a person in the ERP.", po.po_number);
    }
    po
}

/// A built-in agent quote as Tryton tells it (see [`po_as_tryton`]; a
/// cancelled quote reads as rejected).
fn quote_as_tryton(mut quote: Quote, in_tryton: &Quote) -> Quote {
    quote.quote_id = in_tryton.quote_id.clone();
    if let Some(decision) = quote.decision.as_mut() {
        decision.reason = None;
        quote.next_step = format!("Quote {} is handled by a person in the ERP.", quote.quote_number);
    }
    quote
}

/// A built-in queue entry as Tryton's queue lists it.
fn draft_as_tryton(mut draft: AgentDraft, in_tryton: &AgentDraft) -> AgentDraft {
    draft.id = in_tryton.id.clone();
    if let Some(decision) = draft.decision.as_mut() {
        decision.reason = None;
    }
    if draft.kind == DocumentKind::PurchaseOrder && draft.status == "rejected" {
        draft.status = "cancelled".to_owned();
    }
    draft
}

#[tokio::test]
async fn both_backends_seeded_from_the_demo_file_read_back_its_agent_drafts() {
    let both = seeded().await;
    let (builtin, tryton): (&dyn Erp, &dyn Erp) = (&both.builtin, &both.tryton);
    let all = DraftFilter::default();
    for b in BRANCHES.iter() {
        let branch = Branch::of(b);
        let scope = branch.scope();
        let queue = builtin.agent_drafts(&scope, &all, None, 20).await.unwrap();
        let in_tryton = tryton.agent_drafts(&scope, &all, None, 20).await.unwrap();
        assert_eq!(
            in_tryton.items.len(),
            queue.items.len(),
            "{}: {:?}",
            b.id,
            in_tryton.items
        );
        for (read, want) in in_tryton.items.iter().zip(queue.items) {
            assert_eq!(read, &draft_as_tryton(want, read), "{}", b.id);
        }
    }

    let sby = Branch::of(&BRANCHES[0]);
    assert_eq!(BRANCHES[0].id, "SBY-01");
    let mut queued = 0;
    for (want, provenance) in demo::agent_purchase_orders() {
        let read = builtin
            .purchase_order(&sby.scope(), &want.po_number)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(read.drafted_by_agent_run.as_deref(), Some(provenance.run_id));
        assert_eq!(read, want);
        let in_tryton = tryton
            .purchase_order(&sby.scope(), &want.po_number)
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("{} is not in Tryton", want.po_number));
        assert_eq!(in_tryton, po_as_tryton(read, &in_tryton));
        queued += 1;
    }
    let bdg = Branch::of(&BRANCHES[2]);
    assert_eq!(BRANCHES[2].id, "BDG-01");
    for (want, provenance) in demo::agent_quotes() {
        let read = builtin.quote(&bdg.scope(), &want.quote_number).await.unwrap().unwrap();
        assert_eq!(read.drafted_by_agent_run.as_deref(), Some(provenance.run_id));
        assert_eq!(read, want);
        let in_tryton = tryton
            .quote(&bdg.scope(), &want.quote_number)
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("{} is not in Tryton", want.quote_number));
        assert_eq!(in_tryton, quote_as_tryton(read, &in_tryton));
        queued += 1;
    }
    assert_eq!(
        queued,
        demo::SURABAYA_AGENT_PO_COUNT + demo::BANDUNG_AGENT_QUOTE_COUNT,
        "every agent draft of the file"
    );
}
