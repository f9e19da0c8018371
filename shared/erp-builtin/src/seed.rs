//! Writing the demo data set, once.

use std::collections::{BTreeMap, BTreeSet};

use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::types::{AttributeValue, PutRequest, WriteRequest};
use draftline_contract::ErpError;
use draftline_contract::identity::{BranchId, TenantId};
use draftline_contract::store::Value;
use draftline_dynamo::{Db, HttpResponse, erp_store_error, writes};
use draftline_erp::demo::{
    self, BANDUNG_AGENT_QUOTE_COUNT, BRANCHES, JAKARTA_PO_COUNT, SURABAYA_AGENT_PO_COUNT, TENANT,
};
use draftline_erp::domain::{CreditStanding, PriceEntry, Reviewable};

use crate::keys;
use crate::model::attrs::{Item as Attrs, nv, sv};
use crate::model::price_list;
use crate::model::*;

/// The marker item that says the demo data is in the table.
const MARKER_PK: &str = "T#demo#SEED";
/// Bumped when the demo data set grows, so a persisted table gets the new items.
const MARKER_SK: &str = "v7";

/// What [`seed_demo`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seeded {
    /// Wrote this many items.
    Wrote(usize),
    /// The table already held the demo data; nothing was written.
    AlreadySeeded,
}

/// Writes the demo data unless the table already has it.
pub async fn seed_demo(db: &Db) -> Result<Seeded, ErpError> {
    let marker = db
        .client()
        .get_item()
        .table_name(db.table())
        .key("pk", AttributeValue::S(MARKER_PK.into()))
        .key("sk", AttributeValue::S(MARKER_SK.into()))
        .consistent_read(true)
        .send()
        .await
        .map_err(erp_store_error)?;
    if marker.item().is_some() {
        return Ok(Seeded::AlreadySeeded);
    }
    // A number sequence only ever moves forward: re-seeding a table that
    // already has drafts must not hand out their numbers again, and must move
    // past the demo documents it writes.
    let (sequences, items): (Vec<_>, Vec<_>) = all_items()?
        .into_iter()
        .partition(|item| item.get("kind").and_then(Value::as_s) == Some("sequence"));
    let count = items.len().saturating_add(sequences.len());
    for sequence in sequences {
        let put = db
            .client()
            .put_item()
            .table_name(db.table())
            .condition_expression("attribute_not_exists(pk) OR #last < :last")
            .expression_attribute_names("#last", "last")
            .set_expression_attribute_values(
                sequence
                    .get("last")
                    .map(|last| std::collections::HashMap::from([(":last".to_owned(), writes::attribute(last))])),
            )
            .set_item(Some(writes::item(&sequence)))
            .send()
            .await;
        match put {
            Ok(_) => {}
            Err(err)
                if err
                    .as_service_error()
                    .is_some_and(|e| e.is_conditional_check_failed_exception()) => {}
            Err(err) => return Err(partly_written(err)),
        }
    }
    for chunk in items.chunks(25) {
        let mut pending: Vec<WriteRequest> = chunk
            .iter()
            .map(|item| {
                PutRequest::builder()
                    .set_item(Some(writes::item(item)))
                    .build()
                    .map(|put| WriteRequest::builder().put_request(put).build())
                    .map_err(ErpError::internal)
            })
            .collect::<Result<_, _>>()?;
        for _ in 0..10 {
            if pending.is_empty() {
                break;
            }
            let out = db
                .client()
                .batch_write_item()
                .request_items(db.table(), std::mem::take(&mut pending))
                .send()
                .await
                .map_err(partly_written)?;
            pending = out
                .unprocessed_items()
                .and_then(|u| u.get(db.table()))
                .cloned()
                .unwrap_or_default();
        }
        if !pending.is_empty() {
            return Err(ErpError::StoreUnavailable(
                "BatchWriteItem kept items unprocessed: the demo data was only partly written".into(),
            ));
        }
    }
    let count = count.saturating_add(seed_agent_drafts(db).await?);
    db.client()
        .put_item()
        .table_name(db.table())
        .item("pk", AttributeValue::S(MARKER_PK.into()))
        .item("sk", AttributeValue::S(MARKER_SK.into()))
        .item("kind", AttributeValue::S("seed_marker".into()))
        .send()
        .await
        .map_err(erp_store_error)?;
    Ok(Seeded::Wrote(count))
}

/// Writes the demo's agent drafts and their review-queue entries, each
/// document only if its number is still free (a table kept with `--data`
/// may already hold drafts of those numbers: they are never overwritten,
/// and their queue entries are then not written either). Returns how many
/// items it wrote.
async fn seed_agent_drafts(db: &Db) -> Result<usize, ErpError> {
    let tenant = TenantId::parse(TENANT).map_err(ErpError::internal)?;
    let sby = BranchId::parse("SBY-01").map_err(ErpError::internal)?;
    let bdg = BranchId::parse("BDG-01").map_err(ErpError::internal)?;
    let mut drafts = Vec::new();
    for (po, _) in demo::agent_purchase_orders() {
        let entry = po.queue_entry();
        drafts.push((po.to_item(&entry, &tenant, &sby)?, entry.to_item(&tenant, &sby)?));
    }
    for (quote, _) in demo::agent_quotes() {
        let entry = quote.queue_entry();
        drafts.push((quote.to_item(&entry, &tenant, &bdg)?, entry.to_item(&tenant, &bdg)?));
    }
    let mut wrote = 0usize;
    for (document, entry) in drafts {
        if !db.put_new(writes::item(&document)).await.map_err(partly_written)? {
            continue;
        }
        db.client()
            .put_item()
            .table_name(db.table())
            .set_item(Some(writes::item(&entry)))
            .send()
            .await
            .map_err(partly_written)?;
        wrote = wrote.saturating_add(2);
    }
    Ok(wrote)
}

/// Every item of the demo data set, ready to write.
fn all_items() -> Result<Vec<Attrs>, ErpError> {
    let tenant = TenantId::parse(TENANT).map_err(ErpError::internal)?;
    let branch = |id: &str| BranchId::parse(id).map_err(ErpError::internal);
    let mut out = Vec::new();
    for b in BRANCHES.iter() {
        out.push(Attrs::from([
            ("pk".to_owned(), sv(keys::branches(&tenant))),
            ("sk".to_owned(), sv(b.id)),
            ("kind".to_owned(), sv("branch")),
            ("code".to_owned(), sv(b.code)),
            ("name".to_owned(), sv(b.name)),
        ]));
    }
    // Each item with its copy in the stock partition of every branch that
    // keeps stock or a reorder policy of it.
    let mut stocked_in: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
    for (b, level) in demo::stock() {
        stocked_in.entry(level.item).or_default().insert(b);
    }
    for (b, policy) in demo::policies() {
        stocked_in.entry(policy.item).or_default().insert(b);
    }
    for item in demo::items() {
        let branches = stocked_in
            .get(&item.code)
            .into_iter()
            .flatten()
            .map(|b| branch(b))
            .collect::<Result<Vec<_>, _>>()?;
        out.extend(item.to_items(&tenant, &branches));
    }
    out.extend(demo::vendors().iter().map(|v| v.to_item(&tenant)));
    out.extend(PriceEntry::to_items(&tenant, &demo::prices()));
    for (b, level) in demo::stock() {
        out.push(level.to_item(&tenant, &branch(b)?));
    }
    for (b, policy) in demo::policies() {
        out.push(policy.to_item(&tenant, &branch(b)?));
    }
    for (b, listing) in demo::branch_vendors() {
        out.push(listing.to_item(&tenant, &branch(b)?));
    }
    out.extend(demo::tax_types().iter().map(|t| t.to_item(&tenant)));
    out.extend(price_list::to_items(&tenant, &demo::list_prices()));
    let (orders, invoices) = (demo::sales_orders(), demo::invoices());
    for (b, customer) in demo::customers() {
        out.push(customer.to_item(&tenant, &branch(b)?));
        // Its standing, from the orders and invoices written with it.
        let of = |code: &str, at: &str| code == customer.code && at == b;
        let its_orders: Vec<_> = orders
            .iter()
            .filter(|(at, o)| of(&o.customer, at))
            .map(|(_, o)| o.clone())
            .collect();
        let its_invoices: Vec<_> = invoices
            .iter()
            .filter(|(at, i)| of(&i.customer, at))
            .map(|(_, i)| i.clone())
            .collect();
        let standing = CreditStanding::of(&customer.code, &its_orders, &its_invoices)
            .map_err(|e| ErpError::internal(e.to_string()))?;
        out.push(standing.to_item(&tenant, &branch(b)?, &customer.code));
    }
    for (b, order) in &orders {
        out.push(order.to_item(&tenant, &branch(b)?));
    }
    for (b, invoice) in &invoices {
        out.push(invoice.to_item(&tenant, &branch(b)?));
    }
    for (b, bill) in demo::bills() {
        out.push(bill.to_item(&tenant, &branch(b)?));
    }
    let jkt = branch("JKT-01")?;
    for po in demo::jakarta_purchase_orders() {
        out.push(po.to_item(&po.queue_entry(), &tenant, &jkt)?);
    }
    // Each branch's numbers start after the documents the demo seeds.
    for (branch_id, sequence, last) in [
        ("JKT-01", "PO", JAKARTA_PO_COUNT),
        ("SBY-01", "PO", SURABAYA_AGENT_PO_COUNT),
        ("BDG-01", "QT", BANDUNG_AGENT_QUOTE_COUNT),
    ] {
        out.push(Attrs::from([
            ("pk".to_owned(), sv(keys::sequences(&tenant, &branch(branch_id)?))),
            ("sk".to_owned(), sv(sequence)),
            ("kind".to_owned(), sv("sequence")),
            ("last".to_owned(), nv(last)),
        ]));
    }
    Ok(out)
}

/// A write of the seed that failed: the demo data may be only partly there
/// (seeding again completes it: every write is a put of a fixed item).
fn partly_written<E>(err: SdkError<E, HttpResponse>) -> ErpError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    match erp_store_error(err) {
        ErpError::StoreUnavailable(cause) => {
            ErpError::StoreUnavailable(format!("the demo data was only partly written: {cause}").into())
        }
        bug => bug,
    }
}
