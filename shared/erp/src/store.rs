//! The ERP's reads, each one DynamoDB round trip (or a bounded loop of
//! them for batch leftovers). Every read is scoped by the caller's tenant,
//! and branch-owned reads by the caller's branch.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::{AttributeValue, KeysAndAttributes};
use draftline_contract::ToolError;
use draftline_contract::dynamo::{Db, store_error};
use draftline_contract::identity::{BranchId, TenantId};

use crate::keys;
use crate::model::attrs::{self, Item as Attrs, sv};
use crate::model::{Item, PriceEntry, PurchaseOrder, ReorderPolicy, StockLevel, Vendor};

/// The sequence item of a document kind in a branch, and its last number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sequence {
    /// The last number used, `None` if none yet.
    pub last: Option<i64>,
}

/// Reads of one tenant's ERP data.
#[derive(Debug, Clone, Copy)]
pub struct ErpStore<'a> {
    db: &'a Db,
    tenant: &'a TenantId,
}

const NOTHING_CHANGED: &str = "Nothing was created or changed.";

impl<'a> ErpStore<'a> {
    /// Reads for `tenant`.
    pub fn new(db: &'a Db, tenant: &'a TenantId) -> Self {
        Self { db, tenant }
    }

    /// The table.
    pub fn db(&self) -> &'a Db {
        self.db
    }

    /// Gets `keys` in as few `BatchGetItem` calls as possible (strongly consistent).
    pub async fn batch_get(&self, keys: Vec<Attrs>) -> Result<Vec<Attrs>, ToolError> {
        let mut found = Vec::with_capacity(keys.len());
        for chunk in keys.chunks(100) {
            let mut pending = Some(
                KeysAndAttributes::builder()
                    .set_keys(Some(chunk.to_vec()))
                    .consistent_read(true)
                    .build()
                    .map_err(ToolError::internal)?,
            );
            let mut rounds = 0;
            while let Some(request) = pending.take() {
                rounds += 1;
                if rounds > 5 {
                    return Err(ToolError::dependency(
                        "BatchGetItem left keys unprocessed 5 times",
                        NOTHING_CHANGED,
                    ));
                }
                let out = self
                    .db
                    .client()
                    .batch_get_item()
                    .request_items(self.db.table(), request)
                    .send()
                    .await
                    .map_err(|e| store_error(e, NOTHING_CHANGED))?;
                if let Some(items) = out.responses().and_then(|r| r.get(self.db.table())) {
                    found.extend(items.iter().cloned());
                }
                pending = out
                    .unprocessed_keys()
                    .and_then(|u| u.get(self.db.table()))
                    .filter(|k| !k.keys().is_empty())
                    .cloned();
            }
        }
        Ok(found)
    }

    /// Items by code (missing codes are simply absent from the map) and, in
    /// the same round trip, the branch's sequence for `sequence`.
    pub async fn items_and_sequence(
        &self,
        codes: &[String],
        branch: &BranchId,
        sequence: &str,
    ) -> Result<(HashMap<String, Item>, Sequence), ToolError> {
        let seq_key: Attrs = HashMap::from([
            ("pk".to_owned(), sv(keys::sequences(self.tenant, branch))),
            ("sk".to_owned(), sv(sequence)),
        ]);
        let mut request: Vec<Attrs> = codes.iter().map(|c| Item::key(self.tenant, c)).collect();
        request.push(seq_key.clone());
        let mut items = HashMap::new();
        let mut seq = Sequence { last: None };
        for found in self.batch_get(request).await? {
            if found.get("pk") == seq_key.get("pk") && found.get("sk") == seq_key.get("sk") {
                seq.last = Some(attrs::int(&found, "sequence", "last")?);
            } else {
                let item = Item::from_item(&found)?;
                items.insert(item.code.clone(), item);
            }
        }
        Ok((items, seq))
    }

    /// A vendor's profile and price list (one `Query`).
    pub async fn vendor_with_prices(&self, code: &str) -> Result<Option<(Vendor, Vec<PriceEntry>)>, ToolError> {
        let pk = keys::vendor(self.tenant, code);
        let items = self.query_partition(&pk, None).await?;
        let mut vendor = None;
        let mut prices = Vec::new();
        for item in &items {
            match attrs::s_opt(item, "kind").as_deref() {
                Some("vendor") => vendor = Some(Vendor::from_item(item)?),
                Some("price") => prices.push(PriceEntry::from_item(item)?),
                _ => {}
            }
        }
        Ok(vendor.map(|v| (v, prices)))
    }

    /// An item's stock in every warehouse of `branch` and its reorder policy (one `Query`).
    pub async fn item_stock(
        &self,
        branch: &BranchId,
        item: &str,
    ) -> Result<(Vec<StockLevel>, Option<ReorderPolicy>), ToolError> {
        let pk = keys::stock(self.tenant, branch);
        let items = self.query_partition(&pk, Some(&format!("ITEM#{item}#"))).await?;
        let mut levels = Vec::new();
        let mut policy = None;
        for found in &items {
            match attrs::s_opt(found, "kind").as_deref() {
                Some("stock") => levels.push(StockLevel::from_item(found)?),
                Some("reorder_policy") => policy = Some(ReorderPolicy::from_item(found)?),
                _ => {}
            }
        }
        Ok((levels, policy))
    }

    /// One item of the item master.
    pub async fn item(&self, code: &str) -> Result<Option<Item>, ToolError> {
        let out = self
            .db
            .client()
            .get_item()
            .table_name(self.db.table())
            .set_key(Some(Item::key(self.tenant, code)))
            .send()
            .await
            .map_err(|e| store_error(e, NOTHING_CHANGED))?;
        out.item().map(Item::from_item).transpose()
    }

    /// PO `number` of `branch` (one `GetItem`; another branch's PO is simply not there).
    pub async fn purchase_order(&self, branch: &BranchId, number: &str) -> Result<Option<PurchaseOrder>, ToolError> {
        let out = self
            .db
            .client()
            .get_item()
            .table_name(self.db.table())
            .set_key(Some(PurchaseOrder::key(self.tenant, branch, number)))
            .send()
            .await
            .map_err(|e| store_error(e, NOTHING_CHANGED))?;
        out.item().map(PurchaseOrder::from_item).transpose()
    }

    /// Every item of a partition (optionally under a sort-key prefix), following pages.
    async fn query_partition(&self, pk: &str, sk_prefix: Option<&str>) -> Result<Vec<Attrs>, ToolError> {
        let mut items = Vec::new();
        let mut start: Option<Attrs> = None;
        loop {
            let mut query = self
                .db
                .client()
                .query()
                .table_name(self.db.table())
                .expression_attribute_values(":pk", AttributeValue::S(pk.to_owned()))
                .set_exclusive_start_key(start.take());
            query = match sk_prefix {
                Some(prefix) => query
                    .key_condition_expression("pk = :pk AND begins_with(sk, :prefix)")
                    .expression_attribute_values(":prefix", AttributeValue::S(prefix.to_owned())),
                None => query.key_condition_expression("pk = :pk"),
            };
            let out = query.send().await.map_err(|e| store_error(e, NOTHING_CHANGED))?;
            items.extend(out.items().iter().cloned());
            match out.last_evaluated_key() {
                Some(key) if !key.is_empty() => start = Some(key.clone()),
                _ => return Ok(items),
            }
        }
    }
}
