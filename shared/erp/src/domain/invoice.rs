//! Open items of the ledger: customer invoices (receivables) and vendor
//! bills (payables), with what is still owed and how late it is.

use chrono::NaiveDate;
use rust_decimal::Decimal;

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

/// An [`OpenItem`] of a document whose counterparty's code and name are
/// the fields `$code` and `$name`.
macro_rules! open_item {
    ($document:ty, $code:ident, $name:ident) => {
        impl OpenItem for $document {
            fn number(&self) -> &str {
                &self.number
            }
            fn counterparty_code(&self) -> &str {
                &self.$code
            }
            fn counterparty_name(&self) -> &str {
                &self.$name
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
    };
}

open_item!(CustomerInvoice, customer, customer_name);
open_item!(VendorBill, vendor, vendor_name);
