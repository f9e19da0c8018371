//! Master data, read once per backend instance and kept: the company's
//! currency, the branches' warehouses and their storage locations, the
//! units. And the ids a draft needs (products with their units, vendors and
//! customers with their payment terms and price list, taxes), remembered
//! from every read that returns them, so the draft a tool places right after
//! its reads costs no request before its one create.

use std::collections::HashMap;
use std::sync::Mutex;

use draftline_contract::ErpError;
use draftline_erp::domain::TaxCode;
use draftline_erp::units::Uom;
use serde_json::json;
use tokio::sync::OnceCell;

use crate::rest::{Rest, Search};
use crate::units::{self, UnitSymbol};
use crate::value::Record;

/// The company: the currency of every amount.
#[derive(Debug, Clone)]
pub struct Company {
    /// `currency.currency` id.
    pub currency_id: i64,
    /// ISO code (`IDR`).
    pub currency: String,
}

/// A storage location of a branch: one of the demo's warehouses (`SBY-WH1`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Storage {
    /// `stock.location` id.
    pub id: i64,
    /// Its code.
    pub code: String,
}

/// A branch: a Tryton warehouse whose code is the branch id.
#[derive(Debug, Clone)]
pub struct Warehouse {
    /// `stock.location` id (type warehouse).
    pub id: i64,
    /// The storage locations stock is kept in, by code: the warehouse's
    /// children of type storage other than its input, output and picking.
    pub storages: Vec<Storage>,
}

/// A product as a draft needs it.
#[derive(Debug, Clone)]
pub struct ProductRef {
    /// `product.product` id.
    pub id: i64,
    /// Its units: the draftline unit and the `product.uom` id.
    pub units: Vec<(Uom, i64)>,
}

/// A party as a draft needs it.
#[derive(Debug, Clone, Copy)]
pub struct PartyRef {
    /// `party.party` id.
    pub id: i64,
    /// The payment term of its documents (supplier or customer term).
    pub payment_term: Option<i64>,
    /// The customer's sales price list.
    pub price_list: Option<i64>,
}

/// Everything kept.
#[derive(Debug, Default)]
pub struct Master {
    company: OnceCell<Company>,
    warehouses: OnceCell<HashMap<String, Warehouse>>,
    units: OnceCell<HashMap<i64, UnitSymbol>>,
    products: Mutex<HashMap<String, ProductRef>>,
    product_ids: Mutex<HashMap<String, i64>>,
    vendors: Mutex<HashMap<String, PartyRef>>,
    customers: Mutex<HashMap<String, PartyRef>>,
    taxes: Mutex<HashMap<TaxCode, i64>>,
}

fn remember<K: std::hash::Hash + Eq, V>(map: &Mutex<HashMap<K, V>>, entries: impl IntoIterator<Item = (K, V)>) {
    // A poisoned lock only means a panic elsewhere mid-insert; the map is still usable.
    let mut map = map.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    map.extend(entries);
}

fn recall<K: std::hash::Hash + Eq, V: Clone>(map: &Mutex<HashMap<K, V>>, key: &K) -> Option<V> {
    map.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get(key)
        .cloned()
}

impl Master {
    /// The company (one request the first time).
    pub async fn company(&self, rest: &Rest) -> Result<&Company, ErpError> {
        self.company
            .get_or_try_init(|| async {
                let search = Search::new("company.company", json!([["id", "=", 1]]), &["currency.code"]);
                let found = rest.read(&search, "the company").await?;
                let company = found
                    .first()
                    .ok_or_else(|| ErpError::internal("Tryton has no company 1"))?;
                let currency = company
                    .one("currency", "currency.currency")?
                    .ok_or_else(|| ErpError::internal("Tryton's company 1 has no currency"))?;
                Ok(Company {
                    currency_id: currency.id()?,
                    currency: currency.text("code")?,
                })
            })
            .await
    }

    /// The warehouse of `branch`, if Tryton has one with that code (one
    /// request the first time, for every warehouse).
    pub async fn warehouse(&self, rest: &Rest, branch: &str) -> Result<Option<&Warehouse>, ErpError> {
        let warehouses = self
            .warehouses
            .get_or_try_init(|| async {
                let search = Search::new(
                    "stock.location",
                    json!([["type", "=", "warehouse"]]),
                    &[
                        "code",
                        "input_location",
                        "output_location",
                        "picking_location",
                        "childs.code",
                        "childs.type",
                    ],
                );
                let found = rest.read(&search, "the warehouses").await?;
                found.iter().filter_map(|w| warehouse(w).transpose()).collect()
            })
            .await?;
        Ok(warehouses.get(branch))
    }

    /// Every draftline unit of Tryton by `product.uom` id (one request the first time).
    pub async fn units(&self, rest: &Rest) -> Result<&HashMap<i64, UnitSymbol>, ErpError> {
        self.units
            .get_or_try_init(|| async {
                let search = Search::new("product.uom", json!([]), &["symbol"]);
                let found = rest.read(&search, "the units").await?;
                let mut units = HashMap::new();
                for uom in &found {
                    if let Some(unit) = uom.opt_text("symbol")?.as_deref().and_then(units::from_symbol) {
                        units.insert(uom.id()?, unit);
                    }
                }
                Ok(units)
            })
            .await
    }

    /// Remembers products read with their units.
    pub fn remember_products(&self, products: impl IntoIterator<Item = (String, ProductRef)>) {
        let products: Vec<(String, ProductRef)> = products.into_iter().collect();
        remember(&self.product_ids, products.iter().map(|(code, p)| (code.clone(), p.id)));
        remember(&self.products, products);
    }

    /// Remembers product ids read without units.
    pub fn remember_product_id(&self, code: &str, id: i64) {
        remember(&self.product_ids, [(code.to_owned(), id)]);
    }

    /// A product read earlier, with its units.
    pub fn product(&self, code: &str) -> Option<ProductRef> {
        recall(&self.products, &code.to_owned())
    }

    /// The id of a product read earlier.
    pub fn product_id(&self, code: &str) -> Option<i64> {
        recall(&self.product_ids, &code.to_owned())
    }

    /// Remembers a vendor (its supplier payment term).
    pub fn remember_vendor(&self, code: &str, party: PartyRef) {
        remember(&self.vendors, [(code.to_owned(), party)]);
    }

    /// A vendor read earlier.
    pub fn vendor(&self, code: &str) -> Option<PartyRef> {
        recall(&self.vendors, &code.to_owned())
    }

    /// Remembers a customer (its customer payment term and price list).
    pub fn remember_customer(&self, code: &str, party: PartyRef) {
        remember(&self.customers, [(code.to_owned(), party)]);
    }

    /// A customer read earlier.
    pub fn customer(&self, code: &str) -> Option<PartyRef> {
        recall(&self.customers, &code.to_owned())
    }

    /// Remembers the taxes' ids.
    pub fn remember_taxes(&self, taxes: impl IntoIterator<Item = (TaxCode, i64)>) {
        remember(&self.taxes, taxes);
    }

    /// The id of a tax read earlier.
    pub fn tax(&self, code: TaxCode) -> Option<i64> {
        recall(&self.taxes, &code)
    }
}

/// A warehouse record as a branch, if it has a code.
fn warehouse(record: &Record) -> Result<Option<(String, Warehouse)>, ErpError> {
    let Some(code) = record.opt_text("code")? else {
        return Ok(None);
    };
    let not_storage = [
        record.ref_id("input_location")?,
        record.ref_id("output_location")?,
        record.ref_id("picking_location")?,
    ];
    let mut storages = Vec::new();
    for child in record.many("childs", "stock.location")? {
        let id = child.id()?;
        if child.opt_text("type")?.as_deref() == Some("storage")
            && !not_storage.contains(&Some(id))
            && let Some(code) = child.opt_text("code")?
        {
            storages.push(Storage { id, code });
        }
    }
    storages.sort_by(|a, b| a.code.cmp(&b.code));
    Ok(Some((
        code,
        Warehouse {
            id: record.id()?,
            storages,
        },
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_branch_keeps_stock_in_its_storage_children_only() {
        let record = Record::new(
            "stock.location",
            json!({"id": 12, "code": "SBY-01", "input_location": 9, "output_location": 10,
                   "picking_location": null, "childs": [
                {"id": 9, "code": "SBY-01-IN", "type": "storage"},
                {"id": 13, "code": "SBY-WH2", "type": "storage"},
                {"id": 10, "code": "SBY-01-OUT", "type": "storage"},
                {"id": 11, "code": "SBY-WH1", "type": "storage"},
                {"id": 14, "code": "SBY-VIEW", "type": "view"}]}),
        )
        .unwrap();
        let (code, warehouse) = warehouse(&record).unwrap().unwrap();
        assert_eq!(code, "SBY-01");
        assert_eq!(warehouse.id, 12);
        let codes: Vec<&str> = warehouse.storages.iter().map(|s| s.code.as_str()).collect();
        assert_eq!(codes, ["SBY-WH1", "SBY-WH2"]);
    }
}
