//! How the domain's price list types are stored: one item per item code
//! holding its price on every sales list in every unit (`prices`: a map of
//! `<list>#<unit>` to the price), so what a quote needs is read by the
//! item's key, before the customer (and so its list) is known.

use std::collections::BTreeMap;

use draftline_contract::ErpError;
use draftline_contract::identity::TenantId;
use draftline_contract::store::Value;
use draftline_erp::domain::*;
use draftline_erp::units::Uom;
use rust_decimal::Decimal;

use super::attrs::{self, Item as Attrs, nv, sv};
use crate::keys;

const WHAT: &str = "sales prices";

/// The key of `item`'s sales prices.
pub fn key(tenant: &TenantId, item: &str) -> Attrs {
    attrs::key(keys::sales_prices(tenant), keys::item_sk(item))
}

/// The items that store `prices`: one per item code.
pub fn to_items(tenant: &TenantId, prices: &[ListPrice]) -> Vec<Attrs> {
    let mut by_item: BTreeMap<&str, Vec<&ListPrice>> = BTreeMap::new();
    for price in prices {
        by_item.entry(&price.item).or_default().push(price);
    }
    by_item
        .into_iter()
        .map(|(code, prices)| {
            let mut item = key(tenant, code);
            let map = prices
                .into_iter()
                .map(|p| (format!("{}#{}", p.list, p.uom.code()), nv(p.unit_price)))
                .collect();
            item.extend([
                ("kind".to_owned(), sv("sales_prices")),
                ("item".to_owned(), sv(code)),
                ("prices".to_owned(), Value::M(map)),
            ]);
            item
        })
        .collect()
}

/// The prices of list `list` that `stored` (one item's sales prices) holds.
pub fn on_list(stored: &Attrs, list: &str) -> Result<Vec<ListPrice>, ErpError> {
    let item = attrs::s(stored, WHAT, "item")?;
    let Some(map) = stored.get("prices") else {
        return Err(attrs::corrupt(WHAT, "prices"));
    };
    let map = map.as_m().ok_or_else(|| attrs::corrupt(WHAT, "prices"))?;
    let mut prices = Vec::new();
    for (name, value) in map {
        let Some((on, uom)) = name.rsplit_once('#') else {
            return Err(attrs::corrupt(WHAT, name));
        };
        if on != list {
            continue;
        }
        let uom = Uom::from_code(uom).ok_or_else(|| attrs::corrupt(WHAT, name))?;
        let price = Attrs::from([("unit_price".to_owned(), value.clone())]);
        let unit_price: Decimal = attrs::dec(&price, WHAT, "unit_price")?;
        prices.push(ListPrice {
            list: list.to_owned(),
            item: item.clone(),
            uom,
            unit_price,
        });
    }
    Ok(prices)
}
