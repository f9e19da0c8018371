//! How the domain's customer types are stored: keys and item mappings.

use draftline_contract::ErpError;
use draftline_contract::identity::{BranchId, TenantId};
use draftline_erp::domain::*;

use super::attrs::{self, Item as Attrs, bv, nv, sv};
use crate::keys;

/// How a [`Customer`] is stored.
pub trait CustomerRecord: Sized {
    /// The key of customer `code` in `branch`.
    fn key(tenant: &TenantId, branch: &BranchId, code: &str) -> Attrs;
    /// The item.
    fn to_item(&self, tenant: &TenantId, branch: &BranchId) -> Attrs;
    /// Reads a customer.
    fn from_item(item: &Attrs) -> Result<Self, ErpError>;
}

impl CustomerRecord for Customer {
    /// The key of customer `code` in `branch`.
    fn key(tenant: &TenantId, branch: &BranchId, code: &str) -> Attrs {
        attrs::key(keys::customers(tenant, branch), keys::customer_sk(code))
    }

    /// The item.
    fn to_item(&self, tenant: &TenantId, branch: &BranchId) -> Attrs {
        let mut item = Self::key(tenant, branch, &self.code);
        item.extend([
            ("kind".to_owned(), sv("customer")),
            ("code".to_owned(), sv(&self.code)),
            ("name".to_owned(), sv(&self.name)),
            ("city".to_owned(), sv(&self.city)),
            ("price_list".to_owned(), sv(&self.price_list)),
            ("currency".to_owned(), sv(&self.currency)),
            ("credit_limit".to_owned(), nv(self.credit_limit)),
            ("payment_terms_days".to_owned(), nv(self.payment_terms_days)),
            ("tax_exempt".to_owned(), bv(self.tax_exempt)),
        ]);
        if let Some(reason) = &self.credit_hold {
            item.insert("credit_hold".to_owned(), sv(reason));
        }
        item
    }

    /// Reads a customer.
    fn from_item(item: &Attrs) -> Result<Self, ErpError> {
        let what = "customer";
        Ok(Self {
            code: attrs::s(item, what, "code")?,
            name: attrs::s(item, what, "name")?,
            city: attrs::s(item, what, "city")?,
            price_list: attrs::s(item, what, "price_list")?,
            currency: attrs::s(item, what, "currency")?,
            credit_limit: attrs::dec(item, what, "credit_limit")?,
            payment_terms_days: attrs::int(item, what, "payment_terms_days")?,
            tax_exempt: attrs::flag(item, "tax_exempt"),
            credit_hold: attrs::s_opt(item, "credit_hold"),
        })
    }
}

/// How a customer's [`CreditStanding`] is stored: one item per customer in
/// its branch's standings, written with its orders and invoices (the demo
/// seed is their one writer), so a quote reads it by key.
pub trait CreditStandingRecord: Sized {
    /// The key of customer `code`'s standing in `branch`.
    fn key(tenant: &TenantId, branch: &BranchId, code: &str) -> Attrs;
    /// The item of customer `code`'s standing.
    fn to_item(&self, tenant: &TenantId, branch: &BranchId, code: &str) -> Attrs;
    /// Reads a standing.
    fn from_item(item: &Attrs) -> Result<Self, ErpError>;
}

impl CreditStandingRecord for CreditStanding {
    fn key(tenant: &TenantId, branch: &BranchId, code: &str) -> Attrs {
        attrs::key(keys::standings(tenant, branch), keys::customer_sk(code))
    }

    fn to_item(&self, tenant: &TenantId, branch: &BranchId, code: &str) -> Attrs {
        let mut item = Self::key(tenant, branch, code);
        item.extend([
            ("kind".to_owned(), sv("credit_standing")),
            ("open_orders".to_owned(), nv(self.open_orders)),
            ("outstanding_invoices".to_owned(), nv(self.outstanding_invoices)),
        ]);
        item
    }

    fn from_item(item: &Attrs) -> Result<Self, ErpError> {
        let what = "credit standing";
        Ok(Self {
            open_orders: attrs::dec(item, what, "open_orders")?,
            outstanding_invoices: attrs::dec(item, what, "outstanding_invoices")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use rust_decimal::Decimal;

    #[test]
    fn a_customer_round_trips_and_matches_by_code_or_name() {
        let customer = Customer {
            code: "C-BDG-001".into(),
            name: "PT Tekstil Priangan".into(),
            city: "Bandung".into(),
            price_list: "PL-WHOLESALE".into(),
            currency: "IDR".into(),
            credit_limit: Decimal::from(150_000_000),
            payment_terms_days: 30,
            tax_exempt: false,
            credit_hold: Some("overdue".into()),
        };
        let tenant = TenantId::parse("demo").unwrap();
        let branch = BranchId::parse("BDG-01").unwrap();
        assert_eq!(
            Customer::from_item(&customer.to_item(&tenant, &branch)).unwrap(),
            customer
        );
        assert!(customer.matches("c-bdg-001"));
        assert!(customer.matches("priangan"));
        assert!(!customer.matches("C-BDG"));
    }
}
