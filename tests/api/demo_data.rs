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
use draftline_erp::domain::{DocumentKind, DraftFilter, PriceEntry, Vendor};
use draftline_erp::port::{Erp, Scope};
use draftline_erp_builtin::BuiltinErp;
use draftline_erp_tryton::{TrytonErp, TrytonKey};
use serde_json::{Value, json};

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

/// A built-in read of a seeded agent draft (a purchase order, a quote or a
/// queue entry) as Tryton tells it, by design (MAPPING.md): Tryton's own
/// id, and a person's decision is Tryton's workflow (who last changed it
/// and when, no reason); a rejected purchase order is a cancelled one, and
/// a decided document says a person handles it in the ERP.
fn as_tryton_tells_it(builtin: &Value, tryton: &Value) -> Value {
    let mut told = builtin.clone();
    for id in ["draft_id", "quote_id", "id"] {
        if told.get(id).is_some() {
            told[id] = tryton[id].clone();
        }
    }
    if told["decision"].is_null() {
        return told;
    }
    told["decision"]["reason"] = Value::Null;
    let purchase = told.get("po_number").is_some() || told["kind"] == "purchase_order";
    if purchase && told["status"] == "rejected" {
        told["status"] = json!("cancelled");
    }
    if let Some(number) = told.get("po_number").cloned() {
        told["next_step"] = json!(format!(
            "{} was handled by a person in the ERP.",
            number.as_str().unwrap()
        ));
    }
    if let Some(number) = told.get("quote_number").cloned() {
        told["next_step"] = json!(format!(
            "Quote {} is handled by a person in the ERP.",
            number.as_str().unwrap()
        ));
    }
    told
}

#[tokio::test]
async fn both_backends_seeded_from_the_demo_file_read_back_its_agent_drafts() {
    let both = seeded().await;
    let (builtin, tryton): (&dyn Erp, &dyn Erp) = (&both.builtin, &both.tryton);
    let mut want: Vec<Value> = demo::agent_purchase_orders()
        .iter()
        .map(|(po, _)| serde_json::to_value(po).unwrap())
        .chain(
            demo::agent_quotes()
                .iter()
                .map(|(q, _)| serde_json::to_value(q).unwrap()),
        )
        .collect();
    let mut read = Vec::new();
    for b in BRANCHES.iter() {
        let branch = Branch::of(b);
        let scope = branch.scope();
        let queue = builtin
            .agent_drafts(&scope, &DraftFilter::default(), None, 20)
            .await
            .unwrap();
        let in_tryton = tryton
            .agent_drafts(&scope, &DraftFilter::default(), None, 20)
            .await
            .unwrap();
        assert_eq!(
            in_tryton.items.len(),
            queue.items.len(),
            "{}: {:?}",
            b.id,
            in_tryton.items
        );
        for (entry, tryton_entry) in queue.items.iter().zip(&in_tryton.items) {
            let (entry_read, tryton_read) = (
                serde_json::to_value(entry).unwrap(),
                serde_json::to_value(tryton_entry).unwrap(),
            );
            assert_eq!(tryton_read, as_tryton_tells_it(&entry_read, &tryton_read));
            // The document behind each entry, read from both: the built-in
            // one, as Tryton tells it, and Tryton's.
            let (document, in_tryton) = match entry.kind {
                DocumentKind::PurchaseOrder => {
                    let document = builtin.purchase_order(&scope, &entry.number).await.unwrap();
                    let in_tryton = tryton.purchase_order(&scope, &entry.number).await.unwrap();
                    (
                        serde_json::to_value(document).unwrap(),
                        serde_json::to_value(in_tryton).unwrap(),
                    )
                }
                DocumentKind::Quote => {
                    let document = builtin.quote(&scope, &entry.number).await.unwrap();
                    let in_tryton = tryton.quote(&scope, &entry.number).await.unwrap();
                    (
                        serde_json::to_value(document).unwrap(),
                        serde_json::to_value(in_tryton).unwrap(),
                    )
                }
            };
            assert!(document.is_object() && in_tryton.is_object(), "{}", entry.number);
            assert_eq!(in_tryton, as_tryton_tells_it(&document, &in_tryton), "{}", entry.number);
            read.push(document);
        }
    }
    // Every agent draft of the file, and nothing else, as the file says.
    let number = |v: &Value| v.get("po_number").or(v.get("quote_number")).cloned();
    want.sort_by_key(|v| number(v).map(|n| n.to_string()));
    read.sort_by_key(|v| number(v).map(|n| n.to_string()));
    assert_eq!(read, want);
}
