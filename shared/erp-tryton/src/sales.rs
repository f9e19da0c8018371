//! Customers, their orders and the sales price lists (MAPPING.md,
//! "Customers and sales price lists", "Sales orders"): a customer is a
//! `party.party` in category `customer:<branch>`; its orders are `sale.sale`
//! of the branch's warehouse past quotation; a price list's prices are its
//! `product.price_list.line` rows whose formula is a plain decimal.

use std::collections::{BTreeSet, HashSet};

use draftline_contract::ErpError;
use draftline_erp::domain::quote::CustomerRef;
use draftline_erp::domain::{
    Customer, DocumentStatus, ListPrice, Quote, QuoteFields, QuoteLine, SalesOrder, SalesOrderStatus, TaxCode, TaxType,
};
use draftline_erp::money::{self, LineAmounts, Money};
use draftline_erp::units::Uom;
use rust_decimal::Decimal;
use serde_json::{Value, json};

use crate::Inner;
use crate::documents::{DocumentLine, QUOTE_ID_PREFIX, draft_of, party_and_currency, tryton_decision};
use crate::master::PartyRef;
use crate::purchasing::payment_days;
use crate::rest::Search;
use crate::value::{self, Record};

/// The fields of a customer.
const CUSTOMER_FIELDS: &[&str] = &[
    "code",
    "name",
    "addresses.city",
    "customer_payment_term.name",
    "customer_payment_term.lines.relativedeltas.days",
    "customer_payment_term.lines.relativedeltas.months",
    "sale_price_list.name",
    "credit_limit_amount",
    "customer_tax_rule.name",
    "draftline_credit_hold",
];

/// The fields of a sales order.
const ORDER_FIELDS: &[&str] = &[
    "number",
    "state",
    "shipment_state",
    "sale_date",
    "create_date",
    "total_amount",
    "party.code",
    "currency.code",
    "invoices.state",
    "invoices.total_amount",
];

/// The fields of a quote.
const QUOTE_FIELDS: &[&str] = draft_fields![
    "number",
    "state",
    "party.code",
    "party.name",
    "warehouse.code",
    "currency.code",
    "price_list.name",
    "quotation_date",
    "quotation_expire",
    "create_date",
    "description",
    "comment",
    "lines.taxes.name",
    "lines.taxes.rate",
];

impl Inner {
    /// Quote `number` of `branch`: a sale in state draft or quotation, or
    /// one cancelled before it was confirmed (rejected; one request).
    pub(crate) async fn quote(&self, branch: &str, number: &str) -> Result<Option<Quote>, ErpError> {
        let search = Search::new(
            "sale.sale",
            json!([
                ["number", "=", number],
                ["warehouse.code", "=", branch],
                ["company", "=", 1],
                [
                    "OR",
                    [["state", "in", ["draft", "quotation"]]],
                    [["state", "=", "cancelled"], ["sale_date", "=", null]]
                ]
            ]),
            QUOTE_FIELDS,
        )
        .limit(1);
        let found = self.rest.read(&search, "a quote").await?;
        found.first().map(quote).transpose()
    }

    /// The customers of `branch` by code, or just customer `code` (one request).
    pub(crate) async fn customers(&self, branch: &str, code: Option<&str>) -> Result<Vec<Customer>, ErpError> {
        let mut domain = vec![json!(["categories.name", "=", format!("customer:{branch}")])];
        if let Some(code) = code {
            domain.push(json!(["code", "=", code]));
        }
        let search = Search::new("party.party", Value::Array(domain), CUSTOMER_FIELDS).order("code", true);
        let (company, found) = tokio::try_join!(self.master.company(&self.rest), self.rest.read(&search, "customers"))?;
        let mut customers = Vec::with_capacity(found.len());
        for record in &found {
            let (customer, party) = customer(record, &company.currency)?;
            self.master.remember_customer(&customer.code, party);
            customers.push(customer);
        }
        customers.sort_by(|a, b| a.code.cmp(&b.code));
        Ok(customers)
    }

    /// The sales orders of customer `code` in `branch`, by number (one request).
    pub(crate) async fn customer_orders(&self, branch: &str, code: &str) -> Result<Vec<SalesOrder>, ErpError> {
        let search = Search::new(
            "sale.sale",
            json!([
                ["party.code", "=", code],
                ["warehouse.code", "=", branch],
                ["company", "=", 1],
                ["number", "!=", null],
                ["state", "not in", ["draft", "quotation"]],
                // A quote cancelled before it was confirmed (a rejected
                // agent draft) never became an order: it has no sale date.
                ["OR", [["state", "!=", "cancelled"]], [["sale_date", "!=", null]]]
            ]),
            ORDER_FIELDS,
        )
        .order("number", true);
        let found = self.rest.read(&search, "sales orders").await?;
        let mut orders = found.iter().map(sales_order).collect::<Result<Vec<_>, _>>()?;
        orders.sort_by(|a, b| a.number.cmp(&b.number));
        Ok(orders)
    }

    /// Prices of price list `list` for `(item, unit)` pairs (one request).
    pub(crate) async fn list_prices(&self, list: &str, wanted: &[(String, Uom)]) -> Result<Vec<ListPrice>, ErpError> {
        if wanted.is_empty() {
            return Ok(Vec::new());
        }
        let items: BTreeSet<&String> = wanted.iter().map(|w| &w.0).collect();
        let search = Search::new(
            "product.price_list.line",
            json!([["price_list.name", "=", list], ["product.code", "in", items]]),
            &[
                "product.code",
                "product.default_uom",
                "draftline_unit",
                "formula",
                "quantity",
            ],
        );
        let (units, rows) = tokio::try_join!(self.master.units(&self.rest), self.rest.read(&search, "a price list"))?;
        let wanted: HashSet<(&str, Uom)> = wanted.iter().map(|(i, u)| (i.as_str(), *u)).collect();
        let mut prices: Vec<ListPrice> = Vec::new();
        // Lines come in the list's order; as in Tryton, the first that matches wins.
        for row in &rows {
            if row.get("quantity").and_then(Value::as_f64).unwrap_or(0.0) > 0.0 {
                continue;
            }
            let Some(product) = row.one("product", "product.product")? else {
                continue;
            };
            let item = product.text("code")?;
            let unit = match row.ref_id("draftline_unit")? {
                Some(id) => Some(id),
                None => product.ref_id("default_uom")?,
            };
            let Some(unit) = unit.and_then(|id| units.get(&id)) else {
                continue;
            };
            // A formula that is not a plain decimal is a person's pricing, not draftline's.
            let Some(unit_price) = row.opt_text("formula")?.as_deref().and_then(value::decimal_text) else {
                continue;
            };
            let taken = prices.iter().any(|p| p.item == item && p.uom == unit.uom);
            if wanted.contains(&(item.as_str(), unit.uom)) && !taken {
                prices.push(ListPrice {
                    list: list.to_owned(),
                    item,
                    uom: unit.uom,
                    unit_price,
                });
            }
        }
        Ok(prices)
    }
}

/// A customer and what its quotes need; `currency` is the company's.
fn customer(record: &Record, currency: &str) -> Result<(Customer, PartyRef), ErpError> {
    let code = record.text("code")?;
    let city = record
        .many("addresses", "party.address")?
        .iter()
        .map(|a| a.opt_text("city"))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .flatten()
        .next()
        .unwrap_or_default();
    let term = record.one("customer_payment_term", "account.invoice.payment_term")?;
    let list = record.one("sale_price_list", "product.price_list")?;
    let credit_hold = record
        .opt_text("draftline_credit_hold")?
        .filter(|reason| !reason.trim().is_empty());
    Ok((
        Customer {
            name: record.text("name")?,
            city,
            price_list: list
                .as_ref()
                .map(|l| l.opt_text("name"))
                .transpose()?
                .flatten()
                .unwrap_or_default(),
            currency: currency.to_owned(),
            // No limit in Tryton reads as none at all.
            credit_limit: record.opt_decimal("credit_limit_amount")?.unwrap_or(Decimal::ZERO),
            payment_terms_days: payment_days(term.as_ref())?,
            tax_exempt: record.nested_text("customer_tax_rule", "name")?.as_deref() == Some("EXEMPT"),
            credit_hold,
            code,
        },
        PartyRef {
            id: record.id()?,
            payment_term: term.as_ref().map(Record::id).transpose()?,
            price_list: list.as_ref().map(Record::id).transpose()?,
        },
    ))
}

/// A quote as the port tells it. A draft an agent made reads back exactly as
/// [`QuoteDraft::numbered`] answered it (amounts by draftline's rounding
/// rule, the credit check from the sale's description); any other says a
/// person handles it.
fn quote(record: &Record) -> Result<Quote, ErpError> {
    let id = record.id()?;
    let number = record.text("number")?;
    let ((code, name), currency) = party_and_currency(record, &format!("sale {number}"), "customer")?;
    let created = record.datetime("create_date")?;
    let valid_until = match record.opt_date("quotation_expire")? {
        Some(day) => day,
        None => record
            .opt_date("quotation_date")?
            .unwrap_or_else(|| created.date_naive()),
    };
    let (mut lines, mut amounts) = (Vec::new(), Vec::new());
    let list = record.nested_text("price_list", "name")?.unwrap_or_default();
    for (i, line) in DocumentLine::all_of(record, "sale.line", "sale", &number)?
        .into_iter()
        .enumerate()
    {
        let what = &line.what;
        let mut tax = None;
        for t in line.record.many("taxes", "account.tax")? {
            if let Some(code) = t.opt_text("name")?.as_deref().and_then(TaxCode::from_code) {
                let rate = t.decimal("rate")?;
                tax = Some((code, rate.checked_mul(Decimal::from(100)).map(|r| r.normalize())));
                break;
            }
        }
        let Some((tax_code, Some(rate_percent))) = tax else {
            return Err(ErpError::internal(format!("{what} has no draftline tax code")));
        };
        let tax = TaxType {
            code: tax_code,
            name: String::new(),
            rate_percent,
            applies_to: String::new(),
            active: true,
        };
        let (line, amount) = line.priced(i, &list, &currency, |net| tax.tax_on(net))?;
        let money = |amount| Money::new(amount, &currency);
        lines.push(QuoteLine::taxed(line, money(amount.net), &tax, money(amount.tax)));
        amounts.push(amount);
    }
    let overflow = || money::overflow(&format!("the total of sale {number}"));
    let sums = LineAmounts::sum(&amounts).ok_or_else(overflow)?;
    let own = QuoteFields {
        price_list: list,
        valid_until,
        tax_total: Money::new(sums.tax, &currency),
        credit_check: record.opt_text("description")?.unwrap_or_default(),
    };
    let draft = draft_of(record, (CustomerRef { code, name }, currency), lines, &sums, own)?;
    let state = record.text("state")?;
    let agent_draft = state == "draft" && record.opt_text("draftline_key")?.is_some();
    let mut quote = draft.numbered(format!("{QUOTE_ID_PREFIX}{id}"), number, value::rfc3339(created));
    match state.as_str() {
        // A person pressed Quote in Tryton: approved, for the customer.
        "quotation" => quote.status = DocumentStatus::Approved,
        // A person cancelled the quote in Tryton: rejected (as the review queue says).
        "cancelled" => quote.status = DocumentStatus::Rejected,
        _ => {}
    }
    quote.decision = tryton_decision(record)?;
    if !agent_draft {
        quote.next_step = format!("Quote {} is handled by a person in the ERP.", quote.quote_number);
    }
    Ok(quote)
}

/// A sales order: its status and what is not yet invoiced (MAPPING.md's table).
fn sales_order(record: &Record) -> Result<SalesOrder, ErpError> {
    let number = record.text("number")?;
    let total = record.decimal("total_amount")?;
    let mut invoiced = Vec::new();
    for invoice in record.many("invoices", "account.invoice")? {
        if invoice.opt_text("state")?.as_deref() != Some("cancelled") {
            invoiced.push(invoice.opt_decimal("total_amount")?.unwrap_or(Decimal::ZERO));
        }
    }
    let overflow = || money::overflow(&format!("the open amount of {number}"));
    let invoiced = money::sum(invoiced).ok_or_else(overflow)?;
    let state = record.text("state")?;
    let (status, open_amount) = if state == "cancelled" {
        (SalesOrderStatus::Cancelled, Decimal::ZERO)
    } else {
        let open = total.checked_sub(invoiced).ok_or_else(overflow)?.max(Decimal::ZERO);
        let status = if open.is_zero() {
            SalesOrderStatus::Invoiced
        } else if record.opt_text("shipment_state")?.as_deref() == Some("partially shipped") {
            SalesOrderStatus::PartiallyDelivered
        } else {
            SalesOrderStatus::Open
        };
        (status, open)
    };
    let order_date = match record.opt_date("sale_date")? {
        Some(day) => day,
        None => record.datetime("create_date")?.date_naive(),
    };
    Ok(SalesOrder {
        customer: record.nested_text("party", "code")?.unwrap_or_default(),
        order_date,
        status,
        total,
        open_amount,
        currency: record
            .nested_text("currency", "code")?
            .ok_or_else(|| ErpError::internal(format!("sale {number} has no currency")))?,
        number,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(state: &str, shipment: &str, invoices: Value) -> SalesOrder {
        sales_order(
            &Record::new(
                "sale.sale",
                json!({"id": 1, "number": "SO-BDG-000047", "state": state, "shipment_state": shipment,
                       "sale_date": {"__class__": "date", "year": 2026, "month": 11, "day": 26},
                       "total_amount": {"__class__": "Decimal", "decimal": "9990000.00"},
                       "party": {"id": 6, "code": "C-BDG-001"}, "currency": {"id": 1, "code": "IDR"},
                       "invoices": invoices}),
            )
            .unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn an_orders_status_and_open_amount_follow_its_invoices() {
        let half =
            json!([{"id": 2, "state": "draft", "total_amount": {"__class__": "Decimal", "decimal": "4995000.00"}}]);
        let partly = order("processing", "partially shipped", half);
        assert_eq!(partly.status, SalesOrderStatus::PartiallyDelivered);
        assert_eq!(partly.open_amount, Decimal::from(4_995_000));
        let open = order("processing", "waiting", json!([]));
        assert_eq!(
            (open.status, open.open_amount),
            (SalesOrderStatus::Open, Decimal::from(9_990_000))
        );
        let all = json!([{"id": 2, "state": "posted", "total_amount": {"__class__": "Decimal", "decimal": "9990000.00"}},
                         {"id": 3, "state": "cancelled", "total_amount": {"__class__": "Decimal", "decimal": "9990000.00"}}]);
        assert_eq!(order("processing", "sent", all).status, SalesOrderStatus::Invoiced);
        assert_eq!(
            order("cancelled", "none", json!([])).status,
            SalesOrderStatus::Cancelled
        );
    }
}
