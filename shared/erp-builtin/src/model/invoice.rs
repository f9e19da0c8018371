//! How the domain's invoice types are stored: keys and item mappings.

use draftline_contract::ErpError;
use draftline_contract::identity::{BranchId, TenantId};
use draftline_erp::domain::*;

use super::BranchRecord;
use super::attrs::{self, Item as Attrs, nv, sv};
use crate::keys;

impl BranchRecord for CustomerInvoice {
    fn to_item(&self, tenant: &TenantId, branch: &BranchId) -> Attrs {
        Attrs::from([
            ("pk".to_owned(), sv(keys::receivables(tenant, branch))),
            ("sk".to_owned(), sv(keys::invoice_sk(&self.customer, &self.number))),
            ("kind".to_owned(), sv("customer_invoice")),
            ("number".to_owned(), sv(&self.number)),
            ("customer".to_owned(), sv(&self.customer)),
            ("customer_name".to_owned(), sv(&self.customer_name)),
            ("invoice_date".to_owned(), sv(self.invoice_date.to_string())),
            ("due_date".to_owned(), sv(self.due_date.to_string())),
            ("amount".to_owned(), nv(self.amount)),
            ("paid".to_owned(), nv(self.paid)),
            ("currency".to_owned(), sv(&self.currency)),
        ])
    }

    /// Reads an invoice.
    fn from_item(item: &Attrs) -> Result<Self, ErpError> {
        let what = "customer invoice";
        Ok(Self {
            number: attrs::s(item, what, "number")?,
            customer: attrs::s(item, what, "customer")?,
            customer_name: attrs::s(item, what, "customer_name")?,
            invoice_date: attrs::date(item, what, "invoice_date")?,
            due_date: attrs::date(item, what, "due_date")?,
            amount: attrs::dec(item, what, "amount")?,
            paid: attrs::dec(item, what, "paid")?,
            currency: attrs::s(item, what, "currency")?,
        })
    }
}

impl BranchRecord for VendorBill {
    fn to_item(&self, tenant: &TenantId, branch: &BranchId) -> Attrs {
        Attrs::from([
            ("pk".to_owned(), sv(keys::payables(tenant, branch))),
            ("sk".to_owned(), sv(keys::bill_sk(&self.vendor, &self.number))),
            ("kind".to_owned(), sv("vendor_bill")),
            ("number".to_owned(), sv(&self.number)),
            ("vendor".to_owned(), sv(&self.vendor)),
            ("vendor_name".to_owned(), sv(&self.vendor_name)),
            ("bill_date".to_owned(), sv(self.bill_date.to_string())),
            ("due_date".to_owned(), sv(self.due_date.to_string())),
            ("amount".to_owned(), nv(self.amount)),
            ("paid".to_owned(), nv(self.paid)),
            ("currency".to_owned(), sv(&self.currency)),
        ])
    }

    fn from_item(item: &Attrs) -> Result<Self, ErpError> {
        let what = "vendor bill";
        Ok(Self {
            number: attrs::s(item, what, "number")?,
            vendor: attrs::s(item, what, "vendor")?,
            vendor_name: attrs::s(item, what, "vendor_name")?,
            bill_date: attrs::date(item, what, "bill_date")?,
            due_date: attrs::date(item, what, "due_date")?,
            amount: attrs::dec(item, what, "amount")?,
            paid: attrs::dec(item, what, "paid")?,
            currency: attrs::s(item, what, "currency")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;
    use rust_decimal::Decimal;

    #[test]
    fn an_invoice_knows_what_is_owed_and_how_late_it_is() {
        let date = |s: &str| s.parse::<NaiveDate>().unwrap();
        let invoice = CustomerInvoice {
            number: "INV-BDG-000097".into(),
            customer: "C-BDG-002".into(),
            customer_name: "CV Mitra Teknik Cimahi".into(),
            invoice_date: date("2026-08-01"),
            due_date: date("2026-08-15"),
            amount: Decimal::from(6_660_000),
            paid: Decimal::from(2_000_000),
            currency: "IDR".into(),
        };
        assert_eq!(invoice.outstanding(), Some(Decimal::from(4_660_000)));
        assert!(invoice.is_open());
        assert_eq!(invoice.days_overdue(date("2026-11-29")), 106);
        assert_eq!(invoice.days_overdue(date("2026-08-01")), 0);
        let tenant = TenantId::parse("demo").unwrap();
        let branch = BranchId::parse("BDG-01").unwrap();
        assert_eq!(
            CustomerInvoice::from_item(&invoice.to_item(&tenant, &branch)).unwrap(),
            invoice
        );
    }
}
