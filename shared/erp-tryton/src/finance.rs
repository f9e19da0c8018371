//! Taxes and the ledger's open items (MAPPING.md, "Taxes", "Customer
//! invoices and vendor bills"): `account.tax` by name, active until its end
//! date; receivables and payables are the posted (or paid) `account.invoice`
//! of the branch's warehouse, type out or in.

use chrono::NaiveDate;
use draftline_contract::ErpError;
use draftline_erp::domain::{CustomerInvoice, TaxCode, TaxType, VendorBill};
use draftline_erp::money;
use rust_decimal::Decimal;
use serde_json::{Value, json};

use crate::Inner;
use crate::documents::party_and_currency;
use crate::rest::Search;
use crate::value::Record;

/// When each tax applies: not in Tryton, kept by the connector (the texts of demo.rs).
fn applies_to(code: TaxCode) -> &'static str {
    match code {
        TaxCode::Vat11 => "the standard rate: most goods sold to customers in Indonesia",
        TaxCode::Vat10 => "the rate before April 2022; kept for old documents, not for new ones",
        TaxCode::Vat0 => "exports and deliveries into bonded zones",
        TaxCode::Exempt => "customers exempt from VAT (schools, hospitals); required for their quotes",
    }
}

/// The fields of an invoice or bill.
const INVOICE_FIELDS: &[&str] = &[
    "number",
    "party.code",
    "party.name",
    "invoice_date",
    "total_amount",
    "amount_to_pay",
    "lines_to_pay.maturity_date",
    "currency.code",
];

/// An invoice as ageing reads it, before it is told as a receivable or a payable.
struct OpenDocument {
    number: String,
    party: String,
    party_name: String,
    date: NaiveDate,
    due: NaiveDate,
    amount: Decimal,
    paid: Decimal,
    currency: String,
}

impl Inner {
    /// The taxes whose name is a draftline tax code, by code; active as of
    /// `today` (one request). Remembers their ids for quote drafts.
    pub(crate) async fn tax_types(&self, today: NaiveDate) -> Result<Vec<TaxType>, ErpError> {
        let search = Search::new(
            "account.tax",
            json!([["parent", "=", null]]),
            &["name", "description", "type", "rate", "start_date", "end_date"],
        );
        let found = self.rest.read(&search, "the taxes").await?;
        let mut taxes: Vec<TaxType> = Vec::new();
        let mut ids = Vec::new();
        for record in &found {
            let Some(code) = record.opt_text("name")?.as_deref().and_then(TaxCode::from_code) else {
                continue;
            };
            if taxes.iter().any(|t| t.code == code) {
                continue;
            }
            let (Some("percentage"), Some(rate)) = (record.opt_text("type")?.as_deref(), record.opt_decimal("rate")?)
            else {
                tracing::warn!(tax = %code, "a draftline tax in Tryton is not a percentage; left out");
                continue;
            };
            let rate_percent = rate
                .checked_mul(Decimal::from(100))
                .ok_or_else(|| money::overflow(&format!("the rate of {code}")))?
                .normalize();
            let started = record.opt_date("start_date")?.is_none_or(|start| start <= today);
            let not_ended = record.opt_date("end_date")?.is_none_or(|end| end >= today);
            ids.push((code, record.id()?));
            taxes.push(TaxType {
                code,
                name: record
                    .opt_text("description")?
                    .unwrap_or_else(|| code.code().to_owned()),
                rate_percent,
                applies_to: applies_to(code).to_owned(),
                active: started && not_ended,
            });
        }
        self.master.remember_taxes(ids);
        taxes.sort_by(|a, b| a.code.code().cmp(b.code.code()));
        Ok(taxes)
    }

    /// The customer invoices of `branch` (of customer `code` only, when
    /// given), by customer and number (one request).
    pub(crate) async fn receivables(&self, branch: &str, code: Option<&str>) -> Result<Vec<CustomerInvoice>, ErpError> {
        Ok(self
            .open_documents("out", branch, code)
            .await?
            .into_iter()
            .map(|d| CustomerInvoice {
                number: d.number,
                customer: d.party,
                customer_name: d.party_name,
                invoice_date: d.date,
                due_date: d.due,
                amount: d.amount,
                paid: d.paid,
                currency: d.currency,
            })
            .collect())
    }

    /// The vendor bills of `branch`, by vendor and number (one request).
    pub(crate) async fn payables(&self, branch: &str) -> Result<Vec<VendorBill>, ErpError> {
        Ok(self
            .open_documents("in", branch, None)
            .await?
            .into_iter()
            .map(|d| VendorBill {
                number: d.number,
                vendor: d.party,
                vendor_name: d.party_name,
                bill_date: d.date,
                due_date: d.due,
                amount: d.amount,
                paid: d.paid,
                currency: d.currency,
            })
            .collect())
    }

    async fn open_documents(
        &self,
        kind: &str,
        branch: &str,
        party: Option<&str>,
    ) -> Result<Vec<OpenDocument>, ErpError> {
        let mut domain = vec![
            json!(["type", "=", kind]),
            json!(["state", "in", ["posted", "paid"]]),
            json!(["warehouse.code", "=", branch]),
            json!(["company", "=", 1]),
        ];
        if let Some(party) = party {
            domain.push(json!(["party.code", "=", party]));
        }
        let search = Search::new("account.invoice", Value::Array(domain), INVOICE_FIELDS).order("number", true);
        let found = self.rest.read(&search, "invoices").await?;
        let mut documents = found.iter().map(open_document).collect::<Result<Vec<_>, _>>()?;
        documents.sort_by(|a, b| (&a.party, &a.number).cmp(&(&b.party, &b.number)));
        Ok(documents)
    }
}

/// An invoice: amount = total, paid = total − still to pay, due = the
/// earliest maturity of its lines to pay (its date when it has none).
fn open_document(record: &Record) -> Result<OpenDocument, ErpError> {
    let number = record.text("number")?;
    let ((party, party_name), currency) = party_and_currency(record, &format!("invoice {number}"), "party")?;
    let date = record.date("invoice_date")?;
    let mut due: Option<NaiveDate> = None;
    for line in record.many("lines_to_pay", "account.move.line")? {
        if let Some(maturity) = line.opt_date("maturity_date")? {
            due = Some(due.map_or(maturity, |d| d.min(maturity)));
        }
    }
    let amount = record.decimal("total_amount")?;
    let to_pay = record.opt_decimal("amount_to_pay")?.unwrap_or(Decimal::ZERO);
    Ok(OpenDocument {
        party,
        party_name,
        date,
        due: due.unwrap_or(date),
        amount,
        paid: amount
            .checked_sub(to_pay)
            .ok_or_else(|| money::overflow(&format!("what was paid on {number}")))?,
        currency,
        number,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_invoice_is_due_at_its_earliest_maturity_and_paid_is_what_is_no_longer_owed() {
        let record = Record::new(
            "account.invoice",
            json!({"id": 5, "number": "INV-BDG-000097",
                   "invoice_date": {"__class__": "date", "year": 2026, "month": 8, "day": 1},
                   "amount_to_pay": {"__class__": "Decimal", "decimal": "4660000.00"},
                   "total_amount": {"__class__": "Decimal", "decimal": "6660000.00"},
                   "party": {"id": 7, "code": "C-BDG-002", "name": "CV Mitra Teknik Cimahi"},
                   "lines_to_pay": [{"id": 14, "maturity_date": {"__class__": "date", "year": 2026, "month": 8, "day": 15}}],
                   "currency": {"id": 1, "code": "IDR"}}),
        )
        .unwrap();
        let document = open_document(&record).unwrap();
        assert_eq!(document.due.to_string(), "2026-08-15");
        assert_eq!(document.paid, Decimal::from(2_000_000));
    }
}
