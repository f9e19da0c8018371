//! How the domain's vendor types are stored: keys and item mappings.

use std::collections::BTreeMap;

use draftline_contract::ErpError;
use draftline_contract::identity::{BranchId, TenantId};
use draftline_contract::store::Value;
use draftline_erp::domain::*;
use draftline_erp::units::Uom;

use super::attrs::{self, Item as Attrs, nv, sv};
use crate::keys;

/// How a [`Vendor`] is stored.
pub trait VendorRecord: Sized {
    /// The key of vendor `code`'s profile.
    fn key(tenant: &TenantId, code: &str) -> Attrs;
    /// The item.
    fn to_item(&self, tenant: &TenantId) -> Attrs;
    /// Reads a vendor profile.
    fn from_item(item: &Attrs) -> Result<Self, ErpError>;
}

impl VendorRecord for Vendor {
    fn key(tenant: &TenantId, code: &str) -> Attrs {
        attrs::key(keys::vendor(tenant, code), keys::VENDOR_PROFILE_SK)
    }

    fn to_item(&self, tenant: &TenantId) -> Attrs {
        Attrs::from([
            ("pk".to_owned(), sv(keys::vendor(tenant, &self.code))),
            ("sk".to_owned(), sv(keys::VENDOR_PROFILE_SK)),
            ("kind".to_owned(), sv("vendor")),
            ("code".to_owned(), sv(&self.code)),
            ("name".to_owned(), sv(&self.name)),
            ("currency".to_owned(), sv(&self.currency)),
            ("branches".to_owned(), Value::Ss(self.branches.clone())),
            ("payment_terms_days".to_owned(), nv(self.payment_terms_days)),
        ])
    }

    /// Reads a vendor profile.
    fn from_item(item: &Attrs) -> Result<Self, ErpError> {
        let what = "vendor";
        Ok(Self {
            code: attrs::s(item, what, "code")?,
            name: attrs::s(item, what, "name")?,
            currency: attrs::s(item, what, "currency")?,
            branches: attrs::string_set(item, "branches"),
            payment_terms_days: attrs::int(item, what, "payment_terms_days")?,
        })
    }
}

/// How a vendor's [`PriceEntry`]s are stored: one item per vendor and item
/// code holding the price in every unit (`prices`: a map of unit code to
/// the price), so a draft reads an item's prices by one key whichever unit
/// its line names.
pub trait PriceEntryRecord: Sized {
    /// The key of `vendor`'s prices for `item`.
    fn key(tenant: &TenantId, vendor: &str, item: &str) -> Attrs;
    /// The items that store `entries`: one per vendor and item code.
    fn to_items(tenant: &TenantId, entries: &[Self]) -> Vec<Attrs>;
    /// The entries one stored item holds, in unit order.
    fn from_item(item: &Attrs) -> Result<Vec<Self>, ErpError>;
}

const PRICES: &str = "vendor prices";

impl PriceEntryRecord for PriceEntry {
    fn key(tenant: &TenantId, vendor: &str, item: &str) -> Attrs {
        attrs::key(keys::vendor(tenant, vendor), keys::prices_sk(item))
    }

    fn to_items(tenant: &TenantId, entries: &[Self]) -> Vec<Attrs> {
        let mut by_item: BTreeMap<(&str, &str), Vec<&PriceEntry>> = BTreeMap::new();
        for entry in entries {
            by_item.entry((&entry.vendor, &entry.item)).or_default().push(entry);
        }
        by_item
            .into_iter()
            .map(|((vendor, code), entries)| {
                let mut item = Self::key(tenant, vendor, code);
                let prices = entries
                    .into_iter()
                    .map(|e| (e.uom.code().to_owned(), nv(e.unit_price)))
                    .collect();
                item.extend([
                    ("kind".to_owned(), sv("prices")),
                    ("vendor".to_owned(), sv(vendor)),
                    ("item".to_owned(), sv(code)),
                    ("prices".to_owned(), Value::M(prices)),
                ]);
                item
            })
            .collect()
    }

    fn from_item(item: &Attrs) -> Result<Vec<Self>, ErpError> {
        let vendor = attrs::s(item, PRICES, "vendor")?;
        let code = attrs::s(item, PRICES, "item")?;
        let prices = item
            .get("prices")
            .and_then(|m| m.as_m())
            .ok_or_else(|| attrs::corrupt(PRICES, "prices"))?;
        // A unit this build does not know is the data's fault, not a price
        // to leave out silently.
        if let Some(unknown) = prices.keys().find(|code| Uom::from_code(code).is_none()) {
            return Err(attrs::corrupt(PRICES, unknown));
        }
        let mut entries = Vec::with_capacity(prices.len());
        for uom in Uom::ALL {
            let Some(value) = prices.get(uom.code()) else {
                continue;
            };
            let price = Attrs::from([("unit_price".to_owned(), value.clone())]);
            entries.push(Self {
                vendor: vendor.clone(),
                item: code.clone(),
                uom,
                unit_price: attrs::dec(&price, PRICES, "unit_price")?,
            });
        }
        Ok(entries)
    }
}

/// How a [`BranchVendor`] is stored.
pub trait BranchVendorRecord: Sized {
    /// The key of vendor `code` in `branch`'s listing.
    fn key(tenant: &TenantId, branch: &BranchId, code: &str) -> Attrs;
    /// The item.
    fn to_item(&self, tenant: &TenantId, branch: &BranchId) -> Attrs;
    /// Reads a listing.
    fn from_item(item: &Attrs) -> Result<Self, ErpError>;
}

impl BranchVendorRecord for BranchVendor {
    fn key(tenant: &TenantId, branch: &BranchId, code: &str) -> Attrs {
        attrs::key(keys::branch_vendors(tenant, branch), keys::branch_vendor_sk(code))
    }

    fn to_item(&self, tenant: &TenantId, branch: &BranchId) -> Attrs {
        let mut item = Self::key(tenant, branch, &self.code);
        item.extend([
            ("kind".to_owned(), sv("vendor_listing")),
            ("code".to_owned(), sv(&self.code)),
            ("name".to_owned(), sv(&self.name)),
            ("currency".to_owned(), sv(&self.currency)),
            ("payment_terms_days".to_owned(), nv(self.payment_terms_days)),
        ]);
        // DynamoDB refuses an empty string set.
        if !self.items.is_empty() {
            item.insert("items".to_owned(), Value::Ss(self.items.clone()));
        }
        item
    }

    fn from_item(item: &Attrs) -> Result<Self, ErpError> {
        let what = "vendor listing";
        let mut items = attrs::string_set(item, "items");
        items.sort();
        Ok(Self {
            code: attrs::s(item, what, "code")?,
            name: attrs::s(item, what, "name")?,
            currency: attrs::s(item, what, "currency")?,
            payment_terms_days: attrs::int(item, what, "payment_terms_days")?,
            items,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use rust_decimal::Decimal;

    fn entry(vendor: &str, item: &str, uom: Uom, price: i64) -> PriceEntry {
        PriceEntry {
            vendor: vendor.into(),
            item: item.into(),
            uom,
            unit_price: Decimal::new(price, 2),
        }
    }

    #[test]
    fn a_vendors_prices_are_one_item_per_vendor_and_item_holding_every_unit() {
        let tenant = TenantId::parse("demo").unwrap();
        let entries = [
            entry("V-1", "A", Uom::Box, 120_000),
            entry("V-1", "B", Uom::Pcs, 250),
            entry("V-1", "A", Uom::Pcs, 5_500),
            entry("V-2", "A", Uom::Pcs, 5_400),
        ];
        let items = PriceEntry::to_items(&tenant, &entries);
        assert_eq!(items.len(), 3, "{items:?}");
        let a = items
            .iter()
            .find(|item| attrs::table_key(item) == attrs::table_key(&PriceEntry::key(&tenant, "V-1", "A")))
            .unwrap();
        assert_eq!(
            PriceEntry::from_item(a).unwrap(),
            [entry("V-1", "A", Uom::Pcs, 5_500), entry("V-1", "A", Uom::Box, 120_000)],
            "every unit, in unit order"
        );
        let read: Vec<PriceEntry> = items
            .iter()
            .flat_map(|item| PriceEntry::from_item(item).unwrap())
            .collect();
        assert_eq!(read.len(), entries.len());
        assert!(entries.iter().all(|e| read.contains(e)));
    }

    #[test]
    fn a_stored_price_in_a_unit_this_build_does_not_know_is_an_error_not_a_gap() {
        let tenant = TenantId::parse("demo").unwrap();
        let mut item = PriceEntry::to_items(&tenant, &[entry("V-1", "A", Uom::Pcs, 100)]).remove(0);
        if let Some(Value::M(prices)) = item.get_mut("prices") {
            prices.insert("DOZEN".into(), nv(Decimal::ONE));
        }
        let err = PriceEntry::from_item(&item).unwrap_err();
        assert!(format!("{err:?}").contains("DOZEN"), "{err:?}");
    }
}
