//! Vendors, their price lists and purchase orders (MAPPING.md, "Vendors and
//! their price lists", "Purchase orders"): a vendor is a `party.party` whose
//! categories `supplies:<branch>` name the branches it supplies; its price
//! list is its `purchase.product_supplier` rows with their prices per
//! `draftline_unit`; purchase orders are `purchase.purchase` of the
//! branch's warehouse.

use std::collections::{BTreeSet, HashMap, HashSet};

use draftline_contract::ErpError;
use draftline_erp::domain::po::VendorRef;
use draftline_erp::domain::{BranchVendor, Item, PoFields, PoStatus, PriceEntry, PurchaseOrder, Vendor};
use draftline_erp::money::{self, LineAmounts};
use draftline_erp::port::{Page, PoFilter};
use draftline_erp::units::Uom;
use rust_decimal::Decimal;
use serde_json::{Value, json};

use crate::Inner;
use crate::documents::{DocumentLine, PO_ID_PREFIX, draft_of, party_and_currency, tryton_decision};
use crate::master::PartyRef;
use crate::rest::Search;
use crate::units::UnitSymbol;
use crate::value::{self, Record};

/// The fields of a vendor.
const VENDOR_FIELDS: &[&str] = &[
    "code",
    "name",
    "categories.name",
    "supplier_payment_term.name",
    "supplier_payment_term.lines.relativedeltas.days",
    "supplier_payment_term.lines.relativedeltas.months",
];

/// The fields of a vendor's price-list row.
const SUPPLIER_FIELDS: &[&str] = &[
    "party.code",
    "product.code",
    "product.purchase_uom",
    "prices.quantity",
    "prices.unit_price",
    "prices.draftline_unit",
];

/// The fields of a purchase order.
pub(crate) const PO_FIELDS: &[&str] = draft_fields![
    "number",
    "state",
    "shipment_state",
    "party.code",
    "party.name",
    "warehouse.code",
    "currency.code",
    "purchase_date",
    "delivery_date",
    "create_date",
    "comment",
    "tax_amount",
];

/// The category that says a vendor supplies `branch`.
fn supplies(branch: &str) -> String {
    format!("supplies:{branch}")
}

impl Inner {
    /// A vendor and its price list (two requests, together).
    pub(crate) async fn vendor_with_prices(&self, code: &str) -> Result<Option<(Vendor, Vec<PriceEntry>)>, ErpError> {
        let parties = Search::new("party.party", json!([["code", "=", code]]), VENDOR_FIELDS);
        let rows = Search::new(
            "purchase.product_supplier",
            json!([["party.code", "=", code]]),
            SUPPLIER_FIELDS,
        );
        let (company, units, parties, rows) = tokio::try_join!(
            self.master.company(&self.rest),
            self.master.units(&self.rest),
            self.rest.read(&parties, "a vendor"),
            self.rest.read(&rows, "a price list"),
        )?;
        let Some(party) = parties.first() else {
            return Ok(None);
        };
        let (vendor, party) = vendor(party, &company.currency)?;
        if vendor.branches.is_empty() {
            // A party that supplies no branch is not a vendor.
            return Ok(None);
        }
        self.master.remember_vendor(&vendor.code, party);
        let mut prices = price_entries(&rows, units)?;
        prices.sort_by(|a, b| (&a.item, a.uom.code()).cmp(&(&b.item, b.uom.code())));
        Ok(Some((vendor, prices)))
    }

    /// What a PO draft reads: the vendor (one request) and, in one more
    /// made together, the items with their price-list rows, of which the
    /// vendor's are its prices of those items (the port asks no more).
    pub(crate) async fn vendor_and_items(
        &self,
        code: &str,
        items: &[String],
    ) -> Result<(Option<(Vendor, Vec<PriceEntry>)>, HashMap<String, Item>), ErpError> {
        let parties = Search::new("party.party", json!([["code", "=", code]]), VENDOR_FIELDS);
        let codes: BTreeSet<&String> = items.iter().collect();
        let mut fields = crate::inventory::ITEM_FIELDS.to_vec();
        fields.extend([
            "product_suppliers.party.code",
            "product_suppliers.prices.quantity",
            "product_suppliers.prices.unit_price",
            "product_suppliers.prices.draftline_unit",
        ]);
        let products = Search::new("product.product", json!([["code", "in", codes]]), &fields);
        let products = async {
            if codes.is_empty() {
                return Ok(Vec::new());
            }
            self.rest.read(&products, "items").await
        };
        let (company, units, parties, products) = tokio::try_join!(
            self.master.company(&self.rest),
            self.master.units(&self.rest),
            self.rest.read(&parties, "a vendor"),
            products,
        )?;
        let mut found = HashMap::new();
        let mut refs = Vec::new();
        let mut prices = Vec::new();
        for record in &products {
            let (item, product) = crate::inventory::item(record, units)?;
            for row in record.many("product_suppliers", "purchase.product_supplier")? {
                if row.nested_text("party", "code")?.as_deref() == Some(code) {
                    row_prices(
                        &row,
                        code,
                        &item.code,
                        record.ref_id("purchase_uom")?,
                        units,
                        &mut prices,
                    )?;
                }
            }
            refs.push((item.code.clone(), product));
            found.insert(item.code.clone(), item);
        }
        self.master.remember_products(refs);
        let Some(party) = parties.first() else {
            return Ok((None, found));
        };
        let (vendor, party) = vendor(party, &company.currency)?;
        if vendor.branches.is_empty() {
            // A party that supplies no branch is not a vendor.
            return Ok((None, found));
        }
        self.master.remember_vendor(&vendor.code, party);
        prices.sort_by(|a, b| (&a.item, a.uom.code()).cmp(&(&b.item, b.uom.code())));
        Ok((Some((vendor, prices)), found))
    }

    /// Prices for `(vendor, item, unit)` triples (one request).
    pub(crate) async fn vendor_prices(&self, wanted: &[(String, String, Uom)]) -> Result<Vec<PriceEntry>, ErpError> {
        if wanted.is_empty() {
            return Ok(Vec::new());
        }
        let vendors: BTreeSet<&String> = wanted.iter().map(|w| &w.0).collect();
        let items: BTreeSet<&String> = wanted.iter().map(|w| &w.1).collect();
        let rows = Search::new(
            "purchase.product_supplier",
            json!([["party.code", "in", vendors], ["product.code", "in", items]]),
            SUPPLIER_FIELDS,
        );
        let (units, rows) = tokio::try_join!(self.master.units(&self.rest), self.rest.read(&rows, "vendor prices"))?;
        let wanted: HashSet<(&str, &str, Uom)> = wanted.iter().map(|(v, i, u)| (v.as_str(), i.as_str(), *u)).collect();
        Ok(price_entries(&rows, units)?
            .into_iter()
            .filter(|p| wanted.contains(&(p.vendor.as_str(), p.item.as_str(), p.uom)))
            .collect())
    }

    /// Every vendor that supplies `branch`, by code (two requests, together).
    pub(crate) async fn branch_vendors(&self, branch: &str) -> Result<Vec<BranchVendor>, ErpError> {
        let mut found: Vec<BranchVendor> = self.listings(branch, None).await?.into_values().collect();
        found.sort_by(|a, b| a.code.cmp(&b.code));
        Ok(found)
    }

    /// Items and branch vendors by code (three requests, together).
    pub(crate) async fn items_and_branch_vendors(
        &self,
        branch: &str,
        items: &[String],
        vendors: &[String],
    ) -> Result<
        (
            HashMap<String, draftline_erp::domain::Item>,
            HashMap<String, BranchVendor>,
        ),
        ErpError,
    > {
        tokio::try_join!(self.items(items), async {
            if vendors.is_empty() {
                Ok(HashMap::new())
            } else {
                self.listings(branch, Some(vendors)).await
            }
        })
    }

    /// The listings of the vendors that supply `branch` (only `codes`, when given).
    async fn listings(
        &self,
        branch: &str,
        codes: Option<&[String]>,
    ) -> Result<HashMap<String, BranchVendor>, ErpError> {
        let category = supplies(branch);
        let mut party_domain = vec![json!(["categories.name", "=", category])];
        let mut row_domain = vec![json!(["party.categories.name", "=", category])];
        if let Some(codes) = codes {
            let codes: BTreeSet<&String> = codes.iter().collect();
            party_domain.push(json!(["code", "in", codes]));
            row_domain.push(json!(["party.code", "in", codes]));
        }
        let parties = Search::new("party.party", Value::Array(party_domain), VENDOR_FIELDS).order("code", true);
        let rows = Search::new(
            "purchase.product_supplier",
            Value::Array(row_domain),
            &["party.code", "product.code"],
        );
        let (company, parties, rows) = tokio::try_join!(
            self.master.company(&self.rest),
            self.rest.read(&parties, "branch vendors"),
            self.rest.read(&rows, "branch price lists"),
        )?;
        let mut supplied: HashMap<String, Vec<String>> = HashMap::new();
        for row in &rows {
            if let (Some(vendor), Some(item)) = (row.nested_text("party", "code")?, row.nested_text("product", "code")?)
            {
                supplied.entry(vendor).or_default().push(item);
            }
        }
        let mut listings = HashMap::new();
        for party in &parties {
            let (vendor, party) = vendor(party, &company.currency)?;
            self.master.remember_vendor(&vendor.code, party);
            let items = supplied.remove(&vendor.code).unwrap_or_default();
            listings.insert(vendor.code.clone(), BranchVendor::of(&vendor, items));
        }
        Ok(listings)
    }

    /// PO `number` of `branch` (one request).
    pub(crate) async fn purchase_order(&self, branch: &str, number: &str) -> Result<Option<PurchaseOrder>, ErpError> {
        let search = Search::new(
            "purchase.purchase",
            json!([
                ["number", "=", number],
                ["warehouse.code", "=", branch],
                ["company", "=", 1]
            ]),
            PO_FIELDS,
        )
        .limit(1);
        let found = self.rest.read(&search, "a purchase order").await?;
        found.first().map(purchase_order).transpose()
    }

    /// Up to `limit` POs of `branch` matching `filter`, highest number first,
    /// below `after` (one request: Tryton filters).
    pub(crate) async fn search_purchase_orders(
        &self,
        branch: &str,
        filter: &PoFilter,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Page<PurchaseOrder>, ErpError> {
        let mut domain = vec![
            json!(["warehouse.code", "=", branch]),
            json!(["company", "=", 1]),
            json!(["number", "!=", null]),
        ];
        if let Some(after) = after {
            domain.push(json!(["number", "<", after]));
        }
        if let Some(status) = filter.status {
            domain.push(status_domain(status));
        }
        if let Some(vendor) = &filter.vendor_code {
            domain.push(json!(["party.code", "=", vendor]));
        }
        // created_at (see purchase_order): a person's order's purchase_date
        // when set, else the instant it was created.
        let by_day = json!([["draftline_key", "=", null], ["purchase_date", "!=", null]]);
        let by_instant = json!([["OR", [["draftline_key", "!=", null]], [["purchase_date", "=", null]]]]);
        let created = |day_clause: Value, instant_clause: Option<Value>| {
            let mut by_day = by_day.clone();
            if let Value::Array(clauses) = &mut by_day {
                clauses.push(day_clause);
            }
            let mut by_instant = by_instant.clone();
            if let (Value::Array(clauses), Some(clause)) = (&mut by_instant, instant_clause) {
                clauses.push(clause);
            }
            json!(["OR", by_day, by_instant])
        };
        if let Some(from) = filter.created_from {
            domain.push(created(
                json!(["purchase_date", ">=", value::date(from)]),
                Some(json!(["create_date", ">=", value::midnight(from)])),
            ));
        }
        if let Some(to) = filter.created_to {
            domain.push(created(
                json!(["purchase_date", "<=", value::date(to)]),
                to.succ_opt()
                    .map(|next| json!(["create_date", "<", value::midnight(next)])),
            ));
        }
        let search = Search::new("purchase.purchase", Value::Array(domain), PO_FIELDS)
            .order("number", false)
            .limit(limit.saturating_add(1));
        let found = self.rest.read(&search, "purchase orders").await?;
        let orders = found.iter().map(purchase_order).collect::<Result<Vec<_>, _>>()?;
        Ok(Page::first(orders, limit, |po| po.po_number.clone()))
    }
}

/// A vendor and what its drafts need; `currency` is the company's.
fn vendor(record: &Record, currency: &str) -> Result<(Vendor, PartyRef), ErpError> {
    // In the order the categories were made (their ids): the demo's branch order.
    let mut categories = Vec::new();
    for category in record.many("categories", "party.category")? {
        if let Some(branch) = category
            .opt_text("name")?
            .and_then(|n| n.strip_prefix("supplies:").map(str::to_owned))
        {
            categories.push((category.id()?, branch));
        }
    }
    categories.sort();
    let mut branches: Vec<String> = Vec::with_capacity(categories.len());
    for (_, branch) in categories {
        if !branches.contains(&branch) {
            branches.push(branch);
        }
    }
    let term = record.one("supplier_payment_term", "account.invoice.payment_term")?;
    Ok((
        Vendor {
            code: record.text("code")?,
            name: record.text("name")?,
            currency: currency.to_owned(),
            branches,
            payment_terms_days: payment_days(term.as_ref())?,
        },
        PartyRef {
            id: record.id()?,
            payment_term: term.as_ref().map(Record::id).transpose()?,
            price_list: None,
        },
    ))
}

/// The days of a payment term: its one line's one delta (`NET30`: 30
/// days), else the number in a `NET<days>` name, else 0 (due at once).
pub(crate) fn payment_days(term: Option<&Record>) -> Result<i64, ErpError> {
    let Some(term) = term else { return Ok(0) };
    let lines = term.many("lines", "account.invoice.payment_term.line")?;
    if let [line] = lines.as_slice()
        && let [delta] = line
            .many("relativedeltas", "account.invoice.payment_term.line.delta")?
            .as_slice()
    {
        let months = delta.get("months").and_then(Value::as_i64).unwrap_or(0);
        if let (Some(days), 0) = (delta.get("days").and_then(Value::as_i64), months) {
            return Ok(days);
        }
    }
    let from_name = term
        .opt_text("name")?
        .and_then(|name| name.strip_prefix("NET").and_then(|d| d.parse::<i64>().ok()));
    Ok(from_name.unwrap_or(0))
}

/// The price entries of supplier rows: one per priced unit, base prices
/// only (quantity 0). A row without `draftline_unit` is Tryton's own: per
/// the product's purchase unit.
fn price_entries(rows: &[Record], units: &HashMap<i64, UnitSymbol>) -> Result<Vec<PriceEntry>, ErpError> {
    let mut entries: Vec<PriceEntry> = Vec::new();
    for row in rows {
        let (Some(vendor), Some(product)) = (
            row.nested_text("party", "code")?,
            row.one("product", "product.product")?,
        ) else {
            continue;
        };
        let item = product.text("code")?;
        row_prices(
            row,
            &vendor,
            &item,
            product.ref_id("purchase_uom")?,
            units,
            &mut entries,
        )?;
    }
    Ok(entries)
}

/// The price entries of one supplier row of `vendor` for `item` (whose
/// purchase unit is `purchase_uom`), added to `entries` unless a unit is
/// already priced there.
fn row_prices(
    row: &Record,
    vendor: &str,
    item: &str,
    purchase_uom: Option<i64>,
    units: &HashMap<i64, UnitSymbol>,
    entries: &mut Vec<PriceEntry>,
) -> Result<(), ErpError> {
    for price in row.many("prices", "purchase.product_supplier.price")? {
        if price.get("quantity").and_then(Value::as_f64).unwrap_or(0.0) > 0.0 {
            continue;
        }
        let unit = match price.ref_id("draftline_unit")? {
            Some(id) => Some(id),
            None => purchase_uom,
        };
        let Some(unit) = unit.and_then(|id| units.get(&id)) else {
            continue;
        };
        let Some(unit_price) = price.opt_decimal("unit_price")? else {
            continue;
        };
        let taken = entries
            .iter()
            .any(|e| e.vendor == vendor && e.item == item && e.uom == unit.uom);
        if !taken {
            entries.push(PriceEntry {
                vendor: vendor.to_owned(),
                item: item.to_owned(),
                uom: unit.uom,
                unit_price,
            });
        }
    }
    Ok(())
}

/// The domain of a PO status (MAPPING.md's table; [`po_status`] is its inverse).
pub(crate) fn status_domain(status: PoStatus) -> Value {
    match status {
        PoStatus::Draft => json!([["state", "=", "draft"]]),
        PoStatus::Approved => json!([["state", "=", "quotation"]]),
        PoStatus::Sent => json!([
            ["state", "in", ["confirmed", "processing"]],
            ["shipment_state", "!=", "received"]
        ]),
        PoStatus::Received => json!([
            "OR",
            [["state", "=", "done"]],
            [
                ["state", "in", ["confirmed", "processing"]],
                ["shipment_state", "=", "received"]
            ]
        ]),
        PoStatus::Cancelled => json!([["state", "=", "cancelled"]]),
        // Tryton has no rejected purchases: a person cancels one instead.
        PoStatus::Rejected => json!([["id", "<", 0]]),
    }
}

/// The status of a purchase in `state` with `shipment_state`.
pub(crate) fn po_status(state: &str, shipment_state: Option<&str>) -> Option<PoStatus> {
    match state {
        "draft" => Some(PoStatus::Draft),
        "quotation" => Some(PoStatus::Approved),
        "cancelled" => Some(PoStatus::Cancelled),
        "done" => Some(PoStatus::Received),
        "confirmed" | "processing" if shipment_state == Some("received") => Some(PoStatus::Received),
        "confirmed" | "processing" => Some(PoStatus::Sent),
        _ => None,
    }
}

/// A purchase order as the port tells it. A draft an agent made reads back
/// exactly as [`PoDraft::numbered`] answered it; every other order says a
/// person handles it.
pub(crate) fn purchase_order(record: &Record) -> Result<PurchaseOrder, ErpError> {
    let id = record.id()?;
    let number = record.text("number")?;
    let state = record.text("state")?;
    let status = po_status(&state, record.opt_text("shipment_state")?.as_deref())
        .ok_or_else(|| ErpError::internal(format!("purchase {number} is in an unknown state '{state}'")))?;
    let ((code, name), currency) = party_and_currency(record, &format!("purchase {number}"), "vendor")?;
    let vendor = VendorRef { code, name };
    let created = record.datetime("create_date")?;
    let purchase_date = record.opt_date("purchase_date")?;
    let by_draftline = record.opt_text("draftline_key")?.is_some();
    // A draft made through draftline keeps the instant it was created, even
    // once a person quotes it (which sets purchase_date); people's orders
    // carry their day in purchase_date (MAPPING.md).
    let created_at = match purchase_date {
        Some(day) if !by_draftline => format!("{day}T00:00:00.000Z"),
        _ => value::rfc3339(created),
    };
    let needed_by = record
        .opt_date("delivery_date")?
        .or(purchase_date)
        .unwrap_or_else(|| created.date_naive());

    let (mut lines, mut amounts) = (Vec::new(), Vec::new());
    for (i, line) in DocumentLine::all_of(record, "purchase.line", "purchase", &number)?
        .into_iter()
        .enumerate()
    {
        let (line, amount) = line.priced(i, &vendor.code, &currency, |_| Some(Decimal::ZERO))?;
        lines.push(line);
        amounts.push(amount);
    }
    // The tax a person posts with the order is the order's, not its lines'.
    let overflow = || money::overflow(&format!("the total of purchase {number}"));
    let net = LineAmounts::sum(&amounts).ok_or_else(overflow)?.net;
    let tax = record.opt_decimal("tax_amount")?.unwrap_or(Decimal::ZERO);
    let total = net.checked_add(tax).ok_or_else(overflow)?;
    let sums = LineAmounts { net, tax, total };
    let draft = draft_of(record, (vendor, currency), lines, &sums, PoFields { needed_by })?;
    let agent_draft = status == PoStatus::Draft && by_draftline;
    let mut po = draft.numbered(format!("{PO_ID_PREFIX}{id}"), number, created_at);
    po.decision = tryton_decision(record)?;
    if !agent_draft {
        po.status = status;
        po.next_step = if status == PoStatus::Draft {
            format!("Draft {} awaits review.", po.po_number)
        } else {
            format!("{} was handled by a person in the ERP.", po.po_number)
        };
    }
    Ok(po)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_and_their_domains_agree_with_the_mapping_table() {
        assert_eq!(po_status("draft", Some("none")), Some(PoStatus::Draft));
        assert_eq!(po_status("quotation", None), Some(PoStatus::Approved));
        assert_eq!(po_status("processing", Some("waiting")), Some(PoStatus::Sent));
        assert_eq!(po_status("confirmed", Some("none")), Some(PoStatus::Sent));
        assert_eq!(po_status("processing", Some("received")), Some(PoStatus::Received));
        assert_eq!(po_status("done", Some("received")), Some(PoStatus::Received));
        assert_eq!(po_status("cancelled", Some("none")), Some(PoStatus::Cancelled));
        assert_eq!(po_status("exploded", None), None);
        assert_eq!(status_domain(PoStatus::Approved), json!([["state", "=", "quotation"]]));
    }

    #[test]
    fn payment_days_come_from_the_terms_delta_or_its_name() {
        let net30 = Record::new(
            "account.invoice.payment_term",
            json!({"id": 11, "name": "NET30", "lines": [{"id": 1, "relativedeltas": [{"id": 1, "days": 30, "months": 0}]}]}),
        )
        .unwrap();
        assert_eq!(payment_days(Some(&net30)).unwrap(), 30);
        let named = Record::new(
            "account.invoice.payment_term",
            json!({"id": 12, "name": "NET45", "lines": []}),
        )
        .unwrap();
        assert_eq!(payment_days(Some(&named)).unwrap(), 45);
        assert_eq!(payment_days(None).unwrap(), 0);
    }
}
