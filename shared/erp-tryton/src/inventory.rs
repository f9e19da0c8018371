//! Items, stock and reorder policies (MAPPING.md, "Items and units",
//! "Stock"): `product.product` by code, quantities per storage location of
//! the branch's warehouse (on hand, and available with `stock_assign`;
//! reserved = on hand − available), `stock.order_point` of the warehouse.

use std::collections::{BTreeSet, HashMap};

use draftline_contract::ErpError;
use draftline_erp::domain::{Item, ReorderPolicy, StockLevel, UnitConversion};
use draftline_erp::port::{DueItem, Page};
use draftline_erp::reorder;
use futures::future::try_join_all;
use serde_json::{Value, json};

use crate::Inner;
use crate::master::{ProductRef, Storage, Warehouse};
use crate::rest::Search;
use crate::units::UnitSymbol;
use crate::value::Record;

/// The fields of an item.
pub(crate) const ITEM_FIELDS: &[&str] = &["code", "name", "default_uom", "purchase_uom", "sale_uom"];

/// The fields that name an item's preferred vendor, under `prefix`.
macro_rules! supplier_fields {
    ($prefix:literal) => {
        [
            concat!($prefix, "product_suppliers.party.code"),
            concat!($prefix, "product_suppliers.sequence"),
            concat!($prefix, "template.product_suppliers.party.code"),
            concat!($prefix, "template.product_suppliers.sequence"),
            concat!($prefix, "template.product_suppliers.product"),
        ]
    };
}

/// How many order points one request reads.
const POINTS_PAGE: usize = 200;
/// How many pages of order points one listing reads before it hands out a position.
const MAX_POINT_PAGES: usize = 25;

impl Inner {
    /// Items by code (one request; none for no codes).
    pub(crate) async fn items(&self, codes: &[String]) -> Result<HashMap<String, Item>, ErpError> {
        let codes: BTreeSet<&String> = codes.iter().collect();
        if codes.is_empty() {
            return Ok(HashMap::new());
        }
        let search = Search::new("product.product", json!([["code", "in", codes]]), ITEM_FIELDS);
        let (units, found) = tokio::try_join!(self.master.units(&self.rest), self.rest.read(&search, "items"))?;
        let mut items = HashMap::new();
        let mut refs = Vec::new();
        for record in &found {
            let (item, product) = item(record, units)?;
            refs.push((item.code.clone(), product));
            items.insert(item.code.clone(), item);
        }
        self.master.remember_products(refs);
        Ok(items)
    }

    /// An item's stock per storage location of `branch` and its reorder
    /// policy: three requests (the item's policy and vendor, on hand,
    /// available), made together once the item's id is known.
    pub(crate) async fn item_stock(
        &self,
        branch: &str,
        code: &str,
    ) -> Result<(Vec<StockLevel>, Option<ReorderPolicy>), ErpError> {
        let Some(warehouse) = self.master.warehouse(&self.rest, branch).await? else {
            return Ok((Vec::new(), None));
        };
        let mut fields = vec![
            "code",
            "order_points.location",
            "order_points.type",
            "order_points.min_quantity",
            "order_points.target_quantity",
        ];
        fields.extend(supplier_fields!(""));
        let search = Search::new("product.product", json!([["code", "=", code]]), &fields);
        let product = async {
            let found = self.rest.read(&search, "an item's policy").await?;
            Ok::<_, ErpError>(found.into_iter().next())
        };
        let (product, levels) = match self.master.product_id(code) {
            Some(id) => tokio::try_join!(product, self.levels(warehouse, code, id))?,
            None => {
                let Some(product) = product.await? else {
                    return Ok((Vec::new(), None));
                };
                let id = product.id()?;
                self.master.remember_product_id(code, id);
                (Some(product), self.levels(warehouse, code, id).await?)
            }
        };
        let policy = match &product {
            Some(product) => {
                let mut policy = None;
                for point in product.many("order_points", "stock.order_point")? {
                    if point.ref_id("location")? == Some(warehouse.id)
                        && point.opt_text("type")?.as_deref() == Some("purchase")
                    {
                        policy = Some(reorder_policy(code, &point, product)?);
                        break;
                    }
                }
                policy
            }
            None => None,
        };
        Ok((levels, policy))
    }

    /// One item's stock in every storage location of `warehouse` (two requests).
    async fn levels(&self, warehouse: &Warehouse, code: &str, product: i64) -> Result<Vec<StockLevel>, ErpError> {
        if warehouse.storages.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<i64> = warehouse.storages.iter().map(|s| s.id).collect();
        let search =
            Search::new("stock.location", json!([["id", "in", ids]]), &["quantity"]).context("product", json!(product));
        let (on_hand, available) =
            tokio::try_join!(self.quantities(search.clone(), false), self.quantities(search, true))?;
        warehouse
            .storages
            .iter()
            .filter_map(|storage| {
                level(
                    code,
                    storage,
                    on_hand.get(&storage.id).copied(),
                    available.get(&storage.id).copied(),
                )
                .transpose()
            })
            .collect()
    }

    /// Up to `want` items of `branch` at or below their reorder point, by
    /// item code, after `after`. Per page of order points: one request for
    /// the points, then two per storage location (on hand and available of
    /// those items), together.
    pub(crate) async fn due_items(
        &self,
        branch: &str,
        after: Option<&str>,
        want: usize,
    ) -> Result<Page<DueItem>, ErpError> {
        let Some(warehouse) = self.master.warehouse(&self.rest, branch).await? else {
            return Ok(Page::default());
        };
        let mut fields = vec!["product.code", "min_quantity", "target_quantity"];
        fields.extend(supplier_fields!("product."));
        let mut due: Vec<DueItem> = Vec::new();
        let mut position = after.map(str::to_owned);
        let mut finished = false;
        for _ in 0..MAX_POINT_PAGES {
            let mut domain = vec![
                json!(["location", "=", warehouse.id]),
                json!(["type", "=", "purchase"]),
                json!(["company", "=", 1]),
            ];
            if let Some(after) = &position {
                domain.push(json!(["product.code", ">", after]));
            }
            let search = Search::new("stock.order_point", Value::Array(domain), &fields)
                .order("product.code", true)
                .limit(POINTS_PAGE);
            let mut points = Vec::new();
            for point in self.rest.read(&search, "reorder policies").await? {
                let product = point
                    .one("product", "product.product")?
                    .ok_or_else(|| ErpError::internal("a stock.order_point has no product"))?;
                let code = product.text("code")?;
                points.push((code, product.id()?, point, product));
            }
            // Tryton orders by its collation; the port's order is by code, bytewise.
            points.sort_by(|a, b| a.0.cmp(&b.0));
            let full = points.len() >= POINTS_PAGE;
            let Some(last) = points.last().map(|p| p.0.clone()) else {
                finished = true;
                break;
            };
            let ids: Vec<i64> = points.iter().map(|p| p.1).collect();
            let stock = self.stock_of(&warehouse.storages, &ids).await?;
            for (code, id, point, product) in &points {
                let policy = reorder_policy(code, point, product)?;
                let levels = warehouse
                    .storages
                    .iter()
                    .zip(&stock)
                    .filter_map(|(storage, (on_hand, available))| {
                        level(code, storage, on_hand.get(id).copied(), available.get(id).copied()).transpose()
                    })
                    .collect::<Result<Vec<_>, ErpError>>()?;
                let item = DueItem { policy, levels };
                if reorder::is_due(&item.policy, item.available()) {
                    due.push(item);
                }
            }
            position = Some(last);
            if due.len() > want || !full {
                finished = !full;
                break;
            }
        }
        let more = due.len() > want;
        due.truncate(want);
        let next_after = if more {
            due.last().map(|d| d.policy.item.clone())
        } else if finished {
            None
        } else {
            // Out of budget: continue after the last item evaluated.
            position
        };
        Ok(Page { items: due, next_after })
    }

    /// On hand and available of `products` in each of `storages`, in their
    /// order (two requests per storage location, together).
    async fn stock_of(
        &self,
        storages: &[Storage],
        products: &[i64],
    ) -> Result<Vec<(HashMap<i64, i64>, HashMap<i64, i64>)>, ErpError> {
        try_join_all(storages.iter().map(|storage| {
            let search = Search::new("product.product", json!([["id", "in", products]]), &["quantity"])
                .context("locations", json!([storage.id]));
            async move { tokio::try_join!(self.quantities(search.clone(), false), self.quantities(search, true)) }
        }))
        .await
    }

    /// The quantity of each record `search` finds: on hand, or available
    /// (`assigned`: what shipments already hold is taken off). One request.
    async fn quantities(&self, search: Search, assigned: bool) -> Result<HashMap<i64, i64>, ErpError> {
        let search = if assigned {
            search.context("stock_assign", json!(true))
        } else {
            search
        };
        let found = self.rest.read(&search, "stock").await?;
        found
            .iter()
            .map(|record| Ok((record.id()?, record.whole("quantity")?)))
            .collect()
    }
}

/// The stock level of one storage location, or `None` when it holds none
/// of the item (the built-in backend keeps no record for it either).
fn level(
    code: &str,
    storage: &Storage,
    on_hand: Option<i64>,
    available: Option<i64>,
) -> Result<Option<StockLevel>, ErpError> {
    let on_hand = on_hand.unwrap_or(0);
    let reserved = on_hand
        .checked_sub(available.unwrap_or(0))
        .ok_or_else(|| ErpError::internal(format!("reserved stock of {code} in {} overflows", storage.code)))?;
    if on_hand == 0 && reserved == 0 {
        return Ok(None);
    }
    Ok(Some(StockLevel {
        item: code.to_owned(),
        warehouse: storage.code.clone(),
        on_hand,
        reserved,
    }))
}

/// A purchase order point as a reorder policy; `product` carries the
/// product's suppliers (the first one is the preferred vendor, MAPPING.md).
fn reorder_policy(code: &str, point: &Record, product: &Record) -> Result<ReorderPolicy, ErpError> {
    let reorder_point = point.whole("min_quantity")?;
    let target = point.whole("target_quantity")?;
    let reorder_qty = target
        .checked_sub(reorder_point)
        .ok_or_else(|| ErpError::internal(format!("the order point of {code} overflows")))?;
    Ok(ReorderPolicy {
        item: code.to_owned(),
        reorder_point,
        reorder_qty,
        preferred_vendor: preferred_vendor(product)?.unwrap_or_default(),
    })
}

/// The vendor of the product's first supplier row (lowest sequence, empty
/// first, then id), else of its template's rows for every variant.
fn preferred_vendor(product: &Record) -> Result<Option<String>, ErpError> {
    let first = |rows: Vec<Record>| -> Result<Option<String>, ErpError> {
        let mut ranked = Vec::with_capacity(rows.len());
        for row in rows {
            let sequence = row.get("sequence").and_then(Value::as_i64);
            ranked.push(((sequence.is_some(), sequence, row.id()?), row));
        }
        ranked.sort_by_key(|(rank, _)| *rank);
        match ranked.into_iter().next() {
            Some((_, row)) => row.nested_text("party", "code"),
            None => Ok(None),
        }
    };
    if let Some(vendor) = first(product.many("product_suppliers", "purchase.product_supplier")?)? {
        return Ok(Some(vendor));
    }
    let template_rows = match product.one("template", "product.template")? {
        Some(template) => template
            .many("product_suppliers", "purchase.product_supplier")?
            .into_iter()
            .filter(|row| row.get("product").is_none())
            .collect(),
        None => Vec::new(),
    };
    first(template_rows)
}

/// An item and what a draft needs of it. Its units: the base unit first,
/// then the purchase and sale units (those draftline knows).
pub(crate) fn item(record: &Record, units: &HashMap<i64, UnitSymbol>) -> Result<(Item, ProductRef), ErpError> {
    let code = record.text("code")?;
    let base_id = record
        .ref_id("default_uom")?
        .ok_or_else(|| ErpError::internal(format!("item {code} has no default unit in Tryton")))?;
    let base = units.get(&base_id).filter(|u| u.factor == 1).ok_or_else(|| {
        ErpError::internal(format!(
            "the default unit of item {code} in Tryton (product.uom {base_id}) is not a draftline base unit (u, kg, l, m)"
        ))
    })?;
    let mut conversions = vec![UnitConversion {
        uom: base.uom,
        factor: 1,
    }];
    let mut ids = vec![(base.uom, base_id)];
    for field in ["purchase_uom", "sale_uom"] {
        let Some(id) = record.ref_id(field)? else { continue };
        match units.get(&id) {
            Some(unit) if !ids.iter().any(|(uom, _)| *uom == unit.uom) => {
                conversions.push(UnitConversion {
                    uom: unit.uom,
                    factor: unit.factor,
                });
                ids.push((unit.uom, id));
            }
            Some(_) => {}
            None => tracing::warn!(item = %code, uom = id, "a unit of the item is not a draftline unit; left out"),
        }
    }
    let product = ProductRef {
        id: record.id()?,
        units: ids,
    };
    Ok((
        Item {
            name: record.text("name")?,
            code,
            base_uom: base.uom,
            units: conversions,
        },
        product,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use draftline_erp::units::Uom;

    #[test]
    fn the_first_supplier_row_is_the_preferred_vendor() {
        let product = Record::new(
            "product.product",
            json!({"id": 1, "product_suppliers": [
                {"id": 9, "sequence": 2, "party": {"id": 5, "code": "V-2"}},
                {"id": 8, "sequence": null, "party": {"id": 4, "code": "V-1"}},
                {"id": 3, "sequence": 1, "party": {"id": 6, "code": "V-3"}}]}),
        )
        .unwrap();
        assert_eq!(preferred_vendor(&product).unwrap().as_deref(), Some("V-1"));
        let template_only = Record::new(
            "product.product",
            json!({"id": 1, "product_suppliers": [], "template": {"id": 2, "product_suppliers": [
                {"id": 4, "sequence": null, "product": 7, "party": {"id": 5, "code": "V-OTHER-VARIANT"}},
                {"id": 5, "sequence": null, "product": null, "party": {"id": 6, "code": "V-ALL"}}]}}),
        )
        .unwrap();
        assert_eq!(preferred_vendor(&template_only).unwrap().as_deref(), Some("V-ALL"));
    }

    #[test]
    fn an_item_has_its_base_unit_first_and_its_package_units() {
        let units = HashMap::from([
            (
                1,
                UnitSymbol {
                    uom: Uom::Pcs,
                    factor: 1,
                },
            ),
            (
                36,
                UnitSymbol {
                    uom: Uom::Box,
                    factor: 24,
                },
            ),
        ]);
        let record = Record::new(
            "product.product",
            json!({"id": 1, "code": "BRG-0042", "name": "Bearing", "default_uom": 1,
                   "purchase_uom": 36, "sale_uom": 36}),
        )
        .unwrap();
        let (item, product) = item(&record, &units).unwrap();
        assert_eq!(item.describe_units(), "PCS, BOX (1 BOX = 24 PCS)");
        assert_eq!(product.units, vec![(Uom::Pcs, 1), (Uom::Box, 36)]);
        let grams = Record::new(
            "product.product",
            json!({"id": 2, "code": "X", "name": "X", "default_uom": 3}),
        )
        .unwrap();
        assert!(super::item(&grams, &units).is_err());
    }

    #[test]
    fn stock_levels_say_reserved_as_on_hand_minus_available() {
        let storage = Storage {
            id: 11,
            code: "SBY-WH1".into(),
        };
        let found = level("BRG-0042", &storage, Some(30), Some(18)).unwrap().unwrap();
        assert_eq!((found.on_hand, found.reserved, found.available()), (30, 12, 18));
        assert_eq!(level("X", &storage, None, None).unwrap(), None);
    }
}
