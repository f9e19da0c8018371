//! The ERP's reads, each one DynamoDB round trip (or a bounded loop of
//! them for batch leftovers; an item the branch does not stock adds the
//! item master's `GetItem` to its stock read). Every read is scoped by the
//! caller's tenant, and branch-owned reads by the caller's branch.

use futures::FutureExt;
use std::collections::{BTreeSet, HashMap};

use aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue};
use draftline_contract::ErpError;
use draftline_contract::identity::{BranchId, TenantId};
use draftline_contract::store::{Condition, Value, Write, WriteSet};
use draftline_dynamo::{Db, Item as SdkItem, erp_store_error};
use draftline_erp::domain::{
    AgentDraft, BranchVendor, DocumentKind, DraftFilter, Item, ListPrice, OpenDraft, PriceEntry, PurchaseOrder,
    ReorderPolicy, StockLevel, Vendor,
};
use draftline_erp::port::{DueItem, ItemStock, Page, PoFilter, Window};
use draftline_erp::reorder;
use draftline_erp::units::Uom;

use crate::keys;
use crate::model::attrs::{self, Item as Attrs, sv};
use crate::model::item::ITEM_COPY_KIND;
use crate::model::price_list;
use crate::model::*;

/// The most `Query` pages of a counterparty's near-duplicate markers read
/// for the review pages (a page is up to 1 MB; a marker is a few KB).
const MARKER_PAGES: usize = 8;

/// How many items one `Query` page of a filtered listing evaluates.
const QUERY_PAGE: i32 = 200;

/// An item as DynamoDB returned it, as the model reads it: the one place
/// the built-in backend's reads meet the SDK's types.
fn neutral(item: &SdkItem) -> Result<Attrs, ErpError> {
    draftline_dynamo::writes::attributes(item)
        .ok_or_else(|| ErpError::internal("a stored item holds a value draftline never writes"))
}

/// Every item of a page, as the model reads them.
fn neutral_all(items: &[SdkItem]) -> Result<Vec<Attrs>, ErpError> {
    items.iter().map(neutral).collect()
}

/// A string, as a request's expression or key sends it.
fn s_attr(value: impl Into<String>) -> AttributeValue {
    AttributeValue::S(value.into())
}

/// A key (or item) of the model, as a request sends it.
fn sdk(item: &Attrs) -> SdkItem {
    draftline_dynamo::writes::item(item)
}

/// A new numbered document as the writes of a draft's one transaction: the
/// document item, put only if its key is new. Its number was reserved by
/// [`ErpStore::reserve_number`] outside the transaction, so drafts of one
/// branch never contend for a shared item; a number taken after all (a
/// sequence set back by hand) cancels the transaction and the pipeline
/// prepares the draft again with a new number.
/// With it goes its review-queue entry, new, and `marked`: the draft added
/// to its near-duplicate marker (none while the near-duplicate check is
/// off).
pub fn document_writes(items: Vec<Attrs>, marked: Option<Write>) -> Result<WriteSet, ErpError> {
    let mut writes: Vec<Write> = items.into_iter().map(Write::PutNew).collect();
    writes.extend(marked);
    Ok(WriteSet(writes))
}

/// The writes that record a decision on a draft: the decided document
/// (only while it is still an undecided draft), its review-queue entry, and
/// `unmarked`: the draft removed from its near-duplicate marker (the one
/// record of the branch's open drafts: a decided draft is no longer a
/// near-duplicate candidate).
pub fn decision_writes(
    mut document: Attrs,
    decision_id: &str,
    entry: Attrs,
    unmarked: Write,
) -> Result<WriteSet, ErpError> {
    document.insert("decision_id".to_owned(), sv(decision_id));
    let undecided = Condition::All(vec![
        Condition::Equals("status".to_owned(), Value::s("draft")),
        Condition::Absent("decision_id".to_owned()),
    ]);
    Ok(WriteSet(vec![
        Write::PutIf(document, Some(undecided)),
        Write::PutIf(entry, None),
        unmarked,
    ]))
}

/// Reads of one tenant's ERP data.
#[derive(Debug, Clone, Copy)]
pub struct ErpStore<'a> {
    db: &'a Db,
    tenant: &'a TenantId,
}

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
    pub async fn batch_get(&self, keys: Vec<Attrs>) -> Result<Vec<Attrs>, ErpError> {
        let found = self
            .db
            .batch_get(keys.iter().map(sdk).collect())
            .await
            .map_err(draftline_dynamo::BatchGetFailure::into_erp_error)?;
        neutral_all(&found)
    }

    /// The open drafts of `kind` (`PO`, `QT`) for `counterparty` in `branch`
    /// drafted within `window`, as its near-duplicate markers list them:
    /// a `Query` of their partition (a marker per item set, each expiring
    /// a day after its newest draft, at most [`near_duplicate::KEPT`]
    /// drafts each), one page in practice, at most [`MARKER_PAGES`].
    pub async fn open_drafts(
        &self,
        branch: &BranchId,
        kind: &str,
        counterparty: &str,
        window: &Window,
    ) -> Result<Vec<OpenDraft>, ErpError> {
        let mut open = Vec::new();
        let mut after = None;
        for _ in 0..MARKER_PAGES {
            let out = self
                .db
                .client()
                .query()
                .table_name(self.db.table())
                .key_condition_expression("pk = :pk")
                .expression_attribute_values(
                    ":pk",
                    s_attr(keys::near_duplicates(self.tenant, branch, kind, counterparty)),
                )
                .set_exclusive_start_key(after)
                .consistent_read(true)
                .send()
                .boxed()
                .await
                .map_err(erp_store_error)?;
            open.extend(near_duplicate::listed(&neutral_all(out.items())?, window));
            after = out.last_evaluated_key;
            if after.is_none() {
                break;
            }
        }
        Ok(open)
    }

    /// Up to `limit` entries of `branch`'s review queue matching `filter`,
    /// newest first, after position `after`; reads at most a few pages.
    pub async fn agent_drafts(
        &self,
        branch: &BranchId,
        filter: &DraftFilter,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Page<AgentDraft>, ErpError> {
        let mut found = Vec::new();
        let mut start: Option<SdkItem> = after.map(|sk| {
            SdkItem::from([
                ("pk".to_owned(), s_attr(keys::review_queue(self.tenant, branch))),
                ("sk".to_owned(), s_attr(sk)),
            ])
        });
        for _ in 0..5 {
            let mut query = self
                .db
                .client()
                .query()
                .table_name(self.db.table())
                .key_condition_expression("pk = :pk")
                .expression_attribute_values(":pk", s_attr(keys::review_queue(self.tenant, branch)))
                .scan_index_forward(false)
                .limit(QUERY_PAGE)
                .set_exclusive_start_key(start.take());
            let mut conditions = Vec::new();
            if let Some(kind) = filter.kind {
                conditions.push("document_kind = :kind");
                query = query.expression_attribute_values(":kind", s_attr(kind.code()));
            }
            if let Some(status) = &filter.status {
                conditions.push("#status = :status");
                query = query
                    .expression_attribute_names("#status", "status")
                    .expression_attribute_values(":status", s_attr(status));
            }
            if !conditions.is_empty() {
                query = query.filter_expression(conditions.join(" AND "));
            }
            let out = query.send().boxed().await.map_err(erp_store_error)?;
            for item in out.items() {
                let item = neutral(item)?;
                let sk = attrs::s(&item, "agent draft", "sk")?;
                found.push((sk, AgentDraft::from_item(&item)?));
                if found.len() > limit {
                    break;
                }
            }
            match out.last_evaluated_key() {
                Some(key) if !key.is_empty() && found.len() <= limit => start = Some(key.clone()),
                _ => break,
            }
        }
        Ok(Page::first(found, limit, |(sk, _)| sk.clone()).map(|(_, draft)| draft))
    }

    /// A document item of `branch` by key, read strongly (one `GetItem`).
    pub async fn raw(&self, key: Attrs) -> Result<Option<Attrs>, ErpError> {
        self.get(key, true).await
    }

    /// Items by code (one `BatchGetItem`; missing codes are simply absent from the map).
    pub async fn items(&self, codes: &[String]) -> Result<HashMap<String, Item>, ErpError> {
        let request: Vec<Attrs> = codes.iter().map(|c| Item::key(self.tenant, c)).collect();
        let mut items = HashMap::new();
        for found in self.batch_get(request).await? {
            let item = Item::from_item(&found)?;
            items.insert(item.code.clone(), item);
        }
        Ok(items)
    }

    /// Reserves the next number of `branch`'s `sequence` (`PO`, `QT`): one
    /// atomic `UpdateItem` (`ADD last 1`) outside the draft's transaction,
    /// once the draft has passed every check. Numbers are unique and
    /// increase per branch, and concurrent drafts never contend for them. A
    /// draft whose transaction then fails (a lost race on its key, DynamoDB
    /// unavailable) leaves its number unused: numbers can have gaps.
    pub async fn reserve_number(&self, branch: &BranchId, sequence: &str) -> Result<i64, ErpError> {
        let out = self
            .db
            .client()
            .update_item()
            .table_name(self.db.table())
            .key("pk", s_attr(keys::sequences(self.tenant, branch)))
            .key("sk", s_attr(sequence))
            .update_expression("ADD #last :one SET kind = :kind")
            .expression_attribute_names("#last", "last")
            .expression_attribute_values(":one", AttributeValue::N("1".to_owned()))
            .expression_attribute_values(":kind", s_attr("sequence"))
            .return_values(ReturnValue::UpdatedNew)
            .send()
            .boxed()
            .await
            .map_err(|e| match erp_store_error(e) {
                ErpError::StoreUnavailable(cause) => ErpError::NumberUnavailable(cause),
                bug => bug,
            })?;
        let attributes = out.attributes().map(neutral).transpose()?.unwrap_or_default();
        attrs::int(&attributes, "sequence", "last")
    }

    /// A vendor's profile and price list (one `Query`).
    pub async fn vendor_with_prices(&self, code: &str) -> Result<Option<(Vendor, Vec<PriceEntry>)>, ErpError> {
        let pk = keys::vendor(self.tenant, code);
        let items = self.query_partition(&pk, None).await?;
        let mut vendor = None;
        let mut prices = Vec::new();
        for item in &items {
            match attrs::s_opt(item, "kind").as_deref() {
                Some("vendor") => vendor = Some(Vendor::from_item(item)?),
                Some("prices") => prices.extend(PriceEntry::from_item(item)?),
                _ => {}
            }
        }
        Ok(vendor.map(|v| (v, prices)))
    }

    /// Item `code` with its stock in every warehouse of `branch` and its
    /// reorder policy: one `Query` of the item's records in the branch's
    /// stock partition, which hold a copy of the item where the branch
    /// stocks it. Where it does not (no copy), one `GetItem` of the item
    /// master follows, so the answer is the same either way.
    pub async fn item_with_stock(&self, branch: &BranchId, code: &str) -> Result<Option<ItemStock>, ErpError> {
        let (copy, levels, policy) = self.stock_records(branch, code).await?;
        let item = match copy {
            Some(item) => Some(item),
            None => self.item(code).await?,
        };
        Ok(item.map(|item| ItemStock { item, levels, policy }))
    }

    /// Every record of `item` in `branch`'s stock partition: the item
    /// master's copy, the stock per warehouse, the reorder policy (one `Query`).
    pub(crate) async fn stock_records(
        &self,
        branch: &BranchId,
        item: &str,
    ) -> Result<(Option<Item>, Vec<StockLevel>, Option<ReorderPolicy>), ErpError> {
        let pk = keys::stock(self.tenant, branch);
        let items = self.query_partition(&pk, Some(&keys::stock_of_item(item))).await?;
        let mut copy = None;
        let mut levels = Vec::new();
        let mut policy = None;
        for found in &items {
            match attrs::s_opt(found, "kind").as_deref() {
                Some(ITEM_COPY_KIND) => copy = Some(Item::from_item(found)?),
                Some("stock") => levels.push(StockLevel::from_item(found)?),
                Some("reorder_policy") => policy = Some(ReorderPolicy::from_item(found)?),
                _ => {}
            }
        }
        Ok((copy, levels, policy))
    }

    /// One item of the item master.
    pub async fn item(&self, code: &str) -> Result<Option<Item>, ErpError> {
        self.get_one(Item::key(self.tenant, code), Item::from_item).await
    }

    /// Up to `want` items of `branch` at or below their reorder point, in item
    /// code order, starting after item `after`; `next_after` is set when more
    /// such items follow. Reads the branch's stock partition from `after` on,
    /// page by page, and stops as soon as one more due item than wanted is seen.
    pub async fn due_items(
        &self,
        branch: &BranchId,
        after: Option<&str>,
        want: usize,
    ) -> Result<Page<DueItem>, ErpError> {
        let pk = keys::stock(self.tenant, branch);
        let mut due: Vec<DueItem> = Vec::new();
        // Records of one item arrive together (the item master's copy, the
        // policy, then the warehouses); an item is judged once all its
        // records are in.
        let mut current: Option<(String, Option<ReorderPolicy>, Vec<StockLevel>)> = None;
        let finish = |group: Option<(String, Option<ReorderPolicy>, Vec<StockLevel>)>, due: &mut Vec<DueItem>| {
            if let Some((_, Some(policy), levels)) = group {
                let item = DueItem { policy, levels };
                if reorder::is_due(&item.policy, item.available()) {
                    due.push(item);
                }
            }
        };
        let query = self.query(&pk).limit(QUERY_PAGE);
        let query = match after {
            Some(item) => query
                .key_condition_expression("pk = :pk AND sk > :after")
                .expression_attribute_values(":after", s_attr(keys::stock_after_item(item))),
            None => query.key_condition_expression("pk = :pk"),
        };
        let stopped = self
            .pages(query, |page| {
                for found in &page {
                    let item = attrs::s(found, "stock record", "item")?;
                    if current.as_ref().is_none_or(|(code, _, _)| *code != item) {
                        finish(current.take(), &mut due);
                        current = Some((item, None, Vec::new()));
                    }
                    if let Some((_, policy, levels)) = current.as_mut() {
                        match attrs::s_opt(found, "kind").as_deref() {
                            Some("stock") => levels.push(StockLevel::from_item(found)?),
                            Some("reorder_policy") => *policy = Some(ReorderPolicy::from_item(found)?),
                            // The item master's copy: an item is judged by its
                            // policy and stock alone.
                            _ => {}
                        }
                    }
                }
                Ok(due.len() <= want)
            })
            .await?;
        if stopped.is_none() {
            finish(current.take(), &mut due);
        }
        Ok(Page::first(due, want, |d| d.policy.item.clone()))
    }

    /// Items of the item master and vendors of `branch`'s listing, by code,
    /// in one batch (codes not found are absent from the maps).
    pub async fn items_and_branch_vendors(
        &self,
        branch: &BranchId,
        items: &[String],
        vendors: &[String],
    ) -> Result<(HashMap<String, Item>, HashMap<String, BranchVendor>), ErpError> {
        let items: BTreeSet<&String> = items.iter().collect();
        let vendors: BTreeSet<&String> = vendors.iter().collect();
        let request = items
            .iter()
            .map(|code| Item::key(self.tenant, code))
            .chain(vendors.iter().map(|code| BranchVendor::key(self.tenant, branch, code)))
            .collect();
        let mut found_items = HashMap::new();
        let mut found_vendors = HashMap::new();
        for found in self.batch_get(request).await? {
            match attrs::s_opt(&found, "kind").as_deref() {
                Some("item") => {
                    let item = Item::from_item(&found)?;
                    found_items.insert(item.code.clone(), item);
                }
                Some("vendor_listing") => {
                    let vendor = BranchVendor::from_item(&found)?;
                    found_vendors.insert(vendor.code.clone(), vendor);
                }
                _ => {}
            }
        }
        Ok((found_items, found_vendors))
    }

    /// The vendors' prices for `(vendor, item, unit)` triples, in one batch
    /// (prices that do not exist are simply absent).
    pub async fn vendor_prices(&self, wanted: &[(String, String, Uom)]) -> Result<Vec<PriceEntry>, ErpError> {
        let units: BTreeSet<(&str, &str, Uom)> = wanted
            .iter()
            .map(|(vendor, item, uom)| (vendor.as_str(), item.as_str(), *uom))
            .collect();
        let items: BTreeSet<(&str, &str)> = units.iter().map(|(vendor, item, _)| (*vendor, *item)).collect();
        let request = items
            .iter()
            .map(|(vendor, item)| PriceEntry::key(self.tenant, vendor, item))
            .collect();
        let mut prices = Vec::new();
        for stored in self.batch_get(request).await? {
            for entry in PriceEntry::from_item(&stored)? {
                if units.contains(&(entry.vendor.as_str(), entry.item.as_str(), entry.uom)) {
                    prices.push(entry);
                }
            }
        }
        Ok(prices)
    }

    /// Up to `limit` purchase orders of `branch` matching `filter`, newest
    /// (highest number) first, starting after PO `after`. Evaluates at most
    /// `max_pages` pages; when it stops early, `next_after` continues the scan.
    pub async fn search_purchase_orders(
        &self,
        branch: &BranchId,
        filter: &PoFilter,
        after: Option<&str>,
        limit: usize,
        max_pages: usize,
    ) -> Result<Page<PurchaseOrder>, ErpError> {
        let pk = keys::documents(DocumentKind::PurchaseOrder, self.tenant, branch);
        let mut conditions = Vec::new();
        // `:pk` is the query's own ([`Self::query`]).
        let mut values: HashMap<String, AttributeValue> = HashMap::new();
        let mut names: HashMap<String, String> = HashMap::new();
        if let Some(status) = filter.status {
            conditions.push("#status = :status");
            names.insert("#status".into(), "status".into());
            values.insert(":status".into(), s_attr(status.code()));
        }
        if let Some(vendor) = &filter.vendor_code {
            conditions.push("vendor_code = :vendor");
            values.insert(":vendor".into(), s_attr(vendor));
        }
        if let Some(from) = filter.created_from {
            conditions.push("created_at >= :from");
            values.insert(":from".into(), s_attr(from.to_string()));
        }
        if let Some(to) = filter.created_to {
            // created_at is RFC 3339: everything of day `to` sorts below the next day.
            conditions.push("created_at < :before");
            let next = to.succ_opt().unwrap_or(to);
            values.insert(":before".into(), s_attr(next.to_string()));
        }
        let mut query = self
            .query(&pk)
            .key_condition_expression("pk = :pk")
            .scan_index_forward(false)
            .limit(QUERY_PAGE)
            .set_exclusive_start_key(after.map(|number| sdk(&PurchaseOrder::key(self.tenant, branch, number))));
        for (name, value) in values {
            query = query.expression_attribute_values(name, value);
        }
        if !conditions.is_empty() {
            query = query.filter_expression(conditions.join(" AND "));
        }
        if !names.is_empty() {
            query = query.set_expression_attribute_names(Some(names));
        }
        let mut found: Vec<PurchaseOrder> = Vec::new();
        let mut pages: usize = 0;
        let stopped = self
            .pages(query, |page| {
                for item in &page {
                    found.push(PurchaseOrder::from_item(item)?);
                }
                pages = pages.saturating_add(1);
                Ok(found.len() <= limit && pages < max_pages)
            })
            .await?;
        if found.len() > limit {
            return Ok(Page::first(found, limit, |po| po.po_number.clone()));
        }
        // Out of budget: continue after the last order evaluated.
        let sk = stopped
            .as_ref()
            .and_then(|key| key.get("sk"))
            .and_then(|sk| sk.as_s().ok());
        Ok(Page {
            items: found,
            next_after: sk.and_then(|sk| keys::document_number(DocumentKind::PurchaseOrder, sk)),
        })
    }

    /// Prices of price list `list` for `(item, unit)` pairs: the wanted
    /// items' sales prices in one batch (prices that do not exist are simply
    /// absent).
    pub async fn list_prices(&self, list: &str, wanted: &[(String, Uom)]) -> Result<Vec<ListPrice>, ErpError> {
        let items: BTreeSet<&str> = wanted.iter().map(|(item, _)| item.as_str()).collect();
        let request = items.iter().map(|item| price_list::key(self.tenant, item)).collect();
        let mut prices = Vec::new();
        for stored in self.batch_get(request).await? {
            prices.extend(
                price_list::on_list(&stored, list)?
                    .into_iter()
                    .filter(|p| wanted.iter().any(|(item, uom)| *item == p.item && *uom == p.uom)),
            );
        }
        Ok(prices)
    }

    /// One item by key (one `GetItem`), read with `read`.
    pub(crate) async fn get_one<T>(
        &self,
        key: Attrs,
        read: fn(&Attrs) -> Result<T, ErpError>,
    ) -> Result<Option<T>, ErpError> {
        self.get(key, false).await?.as_ref().map(read).transpose()
    }

    /// The item at `key` (one `GetItem`, strongly consistent when `strong`).
    async fn get(&self, key: Attrs, strong: bool) -> Result<Option<Attrs>, ErpError> {
        let out = self
            .db
            .client()
            .get_item()
            .table_name(self.db.table())
            .set_key(Some(sdk(&key)))
            .set_consistent_read(strong.then_some(true))
            .send()
            .boxed()
            .await
            .map_err(erp_store_error)?;
        out.item().map(neutral).transpose()
    }

    /// Every item of a partition (optionally under a sort-key prefix), read with `read`.
    pub(crate) async fn query_as<T>(
        &self,
        pk: &str,
        sk_prefix: Option<&str>,
        read: fn(&Attrs) -> Result<T, ErpError>,
    ) -> Result<Vec<T>, ErpError> {
        self.query_partition(pk, sk_prefix).await?.iter().map(read).collect()
    }

    /// Every item of a partition (optionally under a sort-key prefix), following pages.
    async fn query_partition(&self, pk: &str, sk_prefix: Option<&str>) -> Result<Vec<Attrs>, ErpError> {
        let query = match sk_prefix {
            Some(prefix) => self
                .query(pk)
                .key_condition_expression("pk = :pk AND begins_with(sk, :prefix)")
                .expression_attribute_values(":prefix", s_attr(prefix)),
            None => self.query(pk).key_condition_expression("pk = :pk"),
        };
        let mut items = Vec::new();
        self.pages(query, |page| {
            items.extend(page);
            Ok(true)
        })
        .await?;
        Ok(items)
    }

    /// A `Query` of partition `pk` (`:pk`).
    fn query(&self, pk: &str) -> QueryFluentBuilder {
        let query = self.db.client().query().table_name(self.db.table());
        query.expression_attribute_values(":pk", s_attr(pk))
    }

    /// Reads `query` page by page, each page's items to `page` while it
    /// answers true and pages follow: the key to continue from if it
    /// stopped before the last page.
    async fn pages(
        &self,
        query: QueryFluentBuilder,
        mut page: impl FnMut(Vec<Attrs>) -> Result<bool, ErpError>,
    ) -> Result<Option<SdkItem>, ErpError> {
        let mut start = query.get_exclusive_start_key().clone();
        loop {
            let out = query.clone().set_exclusive_start_key(start.take());
            let out = out.send().boxed().await.map_err(erp_store_error)?;
            let more = page(neutral_all(out.items())?)?;
            match out.last_evaluated_key() {
                Some(key) if !key.is_empty() && more => start = Some(key.clone()),
                Some(key) if !key.is_empty() => return Ok(Some(key.clone())),
                _ => return Ok(None),
            }
        }
    }
}
