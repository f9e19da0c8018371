//! How the domain's price list types are stored: keys and item mappings.

use draftline_contract::ErpError;
use draftline_contract::identity::TenantId;
use draftline_erp::domain::*;
use draftline_erp::units::Uom;

use super::attrs::{self, Item as Attrs, nv, sv};
use crate::keys;

/// How a [`ListPrice`] is stored.
pub trait ListPriceRecord: Sized {
    /// The key of the price of `item` per `uom` on `list`.
    fn key(tenant: &TenantId, list: &str, item: &str, uom: Uom) -> Attrs;
    /// The item.
    fn to_item(&self, tenant: &TenantId) -> Attrs;
    /// Reads a list price.
    fn from_item(item: &Attrs) -> Result<Self, ErpError>;
}

impl ListPriceRecord for ListPrice {
    /// The key of the price of `item` per `uom` on `list`.
    fn key(tenant: &TenantId, list: &str, item: &str, uom: Uom) -> Attrs {
        Attrs::from([
            ("pk".to_owned(), sv(keys::price_list(tenant, list))),
            ("sk".to_owned(), sv(keys::price_sk(item, uom.code()))),
        ])
    }

    /// The item.
    fn to_item(&self, tenant: &TenantId) -> Attrs {
        let mut item = Self::key(tenant, &self.list, &self.item, self.uom);
        item.extend([
            ("kind".to_owned(), sv("list_price")),
            ("list".to_owned(), sv(&self.list)),
            ("item".to_owned(), sv(&self.item)),
            ("uom".to_owned(), sv(self.uom.code())),
            ("unit_price".to_owned(), nv(self.unit_price)),
        ]);
        item
    }

    /// Reads a list price.
    fn from_item(item: &Attrs) -> Result<Self, ErpError> {
        let what = "list price";
        Ok(Self {
            list: attrs::s(item, what, "list")?,
            item: attrs::s(item, what, "item")?,
            uom: Uom::from_code(&attrs::s(item, what, "uom")?).ok_or_else(|| attrs::corrupt(what, "uom"))?,
            unit_price: attrs::dec(item, what, "unit_price")?,
        })
    }
}
