//! Open items of the ledger: customer invoices (receivables) and vendor
//! bills (payables), with what is still owed and how late it is.

use chrono::NaiveDate;
use draftline_contract::ToolError;
use draftline_contract::identity::{BranchId, TenantId};
use rust_decimal::Decimal;

use super::attrs::{self, Item as Attrs, nv, sv};
use crate::keys;

/// A document someone owes money on, as ageing sees it.
pub trait OpenItem {
    /// The document number.
    fn number(&self) -> &str;
    /// Who owes or is owed (customer or vendor code).
    fn counterparty_code(&self) -> &str;
    /// Their name.
    fn counterparty_name(&self) -> &str;
    /// When payment is due.
    fn due_date(&self) -> NaiveDate;
    /// The document amount.
    fn amount(&self) -> Decimal;
    /// What has been paid.
    fn paid(&self) -> Decimal;
    /// The currency of the amounts.
    fn currency(&self) -> &str;

    /// What is still owed (`None` only for amounts no stored item can hold).
    fn outstanding(&self) -> Option<Decimal> {
        self.amount().checked_sub(self.paid())
    }

    /// Whether anything is still owed.
    fn is_open(&self) -> bool {
        self.paid() < self.amount()
    }

    /// Days past the due date on `today` (0 when not yet due).
    fn days_overdue(&self, today: NaiveDate) -> i64 {
        today.signed_duration_since(self.due_date()).num_days().max(0)
    }
}

/// An invoice to a customer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomerInvoice {
    /// `INV-BDG-000118`.
    pub number: String,
    /// Customer code.
    pub customer: String,
    /// Customer name, as invoiced.
    pub customer_name: String,
    /// Invoice date.
    pub invoice_date: NaiveDate,
    /// Due date.
    pub due_date: NaiveDate,
    /// Amount including tax.
    pub amount: Decimal,
    /// Paid so far.
    pub paid: Decimal,
    /// Currency.
    pub currency: String,
}

/// A bill from a vendor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VendorBill {
    /// `VB-BDG-000198`.
    pub number: String,
    /// Vendor code.
    pub vendor: String,
    /// Vendor name, as billed.
    pub vendor_name: String,
    /// Bill date.
    pub bill_date: NaiveDate,
    /// Due date.
    pub due_date: NaiveDate,
    /// Amount including tax.
    pub amount: Decimal,
    /// Paid so far.
    pub paid: Decimal,
    /// Currency.
    pub currency: String,
}

impl OpenItem for CustomerInvoice {
    fn number(&self) -> &str {
        &self.number
    }
    fn counterparty_code(&self) -> &str {
        &self.customer
    }
    fn counterparty_name(&self) -> &str {
        &self.customer_name
    }
    fn due_date(&self) -> NaiveDate {
        self.due_date
    }
    fn amount(&self) -> Decimal {
        self.amount
    }
    fn paid(&self) -> Decimal {
        self.paid
    }
    fn currency(&self) -> &str {
        &self.currency
    }
}

impl OpenItem for VendorBill {
    fn number(&self) -> &str {
        &self.number
    }
    fn counterparty_code(&self) -> &str {
        &self.vendor
    }
    fn counterparty_name(&self) -> &str {
        &self.vendor_name
    }
    fn due_date(&self) -> NaiveDate {
        self.due_date
    }
    fn amount(&self) -> Decimal {
        self.amount
    }
    fn paid(&self) -> Decimal {
        self.paid
    }
    fn currency(&self) -> &str {
        &self.currency
    }
}

impl CustomerInvoice {
    /// The item.
    pub fn to_item(&self, tenant: &TenantId, branch: &BranchId) -> Attrs {
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
    pub fn from_item(item: &Attrs) -> Result<Self, ToolError> {
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

impl VendorBill {
    /// The item.
    pub fn to_item(&self, tenant: &TenantId, branch: &BranchId) -> Attrs {
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

    /// Reads a bill.
    pub fn from_item(item: &Attrs) -> Result<Self, ToolError> {
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
