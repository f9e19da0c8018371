//! How the domain's vendor types are stored: keys and item mappings.

use draftline_contract::ErpError;
use draftline_contract::identity::{BranchId, TenantId};
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
        Attrs::from([
            ("pk".to_owned(), sv(keys::vendor(tenant, code))),
            ("sk".to_owned(), sv(keys::VENDOR_PROFILE_SK)),
        ])
    }

    /// The item.
    fn to_item(&self, tenant: &TenantId) -> Attrs {
        Attrs::from([
            ("pk".to_owned(), sv(keys::vendor(tenant, &self.code))),
            ("sk".to_owned(), sv(keys::VENDOR_PROFILE_SK)),
            ("kind".to_owned(), sv("vendor")),
            ("code".to_owned(), sv(&self.code)),
            ("name".to_owned(), sv(&self.name)),
            ("currency".to_owned(), sv(&self.currency)),
            (
                "branches".to_owned(),
                aws_sdk_dynamodb::types::AttributeValue::Ss(self.branches.clone()),
            ),
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
            branches: item
                .get("branches")
                .and_then(|v| v.as_ss().ok())
                .cloned()
                .unwrap_or_default(),
            payment_terms_days: attrs::int(item, what, "payment_terms_days")?,
        })
    }
}

/// How a [`PriceEntry`] is stored.
pub trait PriceEntryRecord: Sized {
    /// The key of `vendor`'s price for `item` per `uom`.
    fn key(tenant: &TenantId, vendor: &str, item: &str, uom: Uom) -> Attrs;
    /// The item.
    fn to_item(&self, tenant: &TenantId) -> Attrs;
    /// Reads a price entry.
    fn from_item(item: &Attrs) -> Result<Self, ErpError>;
}

impl PriceEntryRecord for PriceEntry {
    /// The key of `vendor`'s price for `item` per `uom`.
    fn key(tenant: &TenantId, vendor: &str, item: &str, uom: Uom) -> Attrs {
        Attrs::from([
            ("pk".to_owned(), sv(keys::vendor(tenant, vendor))),
            ("sk".to_owned(), sv(keys::price_sk(item, uom.code()))),
        ])
    }

    /// The item.
    fn to_item(&self, tenant: &TenantId) -> Attrs {
        Attrs::from([
            ("pk".to_owned(), sv(keys::vendor(tenant, &self.vendor))),
            ("sk".to_owned(), sv(keys::price_sk(&self.item, self.uom.code()))),
            ("kind".to_owned(), sv("price")),
            ("vendor".to_owned(), sv(&self.vendor)),
            ("item".to_owned(), sv(&self.item)),
            ("uom".to_owned(), sv(self.uom.code())),
            ("unit_price".to_owned(), nv(self.unit_price)),
        ])
    }

    /// Reads a price entry.
    fn from_item(item: &Attrs) -> Result<Self, ErpError> {
        let what = "price entry";
        Ok(Self {
            vendor: attrs::s(item, what, "vendor")?,
            item: attrs::s(item, what, "item")?,
            uom: Uom::from_code(&attrs::s(item, what, "uom")?).ok_or_else(|| attrs::corrupt(what, "uom"))?,
            unit_price: attrs::dec(item, what, "unit_price")?,
        })
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
    /// The key of vendor `code` in `branch`'s listing.
    fn key(tenant: &TenantId, branch: &BranchId, code: &str) -> Attrs {
        Attrs::from([
            ("pk".to_owned(), sv(keys::branch_vendors(tenant, branch))),
            ("sk".to_owned(), sv(keys::branch_vendor_sk(code))),
        ])
    }

    /// The item.
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
            item.insert(
                "items".to_owned(),
                aws_sdk_dynamodb::types::AttributeValue::Ss(self.items.clone()),
            );
        }
        item
    }

    /// Reads a listing.
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
