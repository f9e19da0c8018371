//! Drafts as documents in Tryton (MAPPING.md, "Drafts"): the whole body of
//! a `purchase.purchase` or `sale.sale` in state draft is prepared when the
//! draft is placed (from master data and the ids the tool's own reads left
//! behind), so [`ExternalDocument::create`] is one `POST`. The document
//! carries `draftline_key`, which the module keeps unique per company: a
//! create that loses a race is answered 400 and the winner is found by key.
//!
//! Ids: `po_tryton_<purchase id>`, `qt_tryton_<sale id>`. `created_at` is
//! Tryton's `create_date` (UTC, RFC 3339 with milliseconds).

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, Utc};
use draftline_contract::ErpError;
use draftline_contract::tool::{Created, DocumentRef};
use draftline_erp::domain::{DocumentKind, DraftDocument, NewDraft, OpenDraft, OpenLine, PoDraft, QuoteDraft, TaxCode};
use draftline_erp::port::ExternalDocument;
use draftline_erp::units::Uom;
use rust_decimal::Decimal;
use serde_json::{Value, json};

use crate::Inner;
use crate::documents::{id_prefix, model};
use crate::master::{PartyRef, ProductRef};
use crate::rest::Search;
use crate::value::{self, Record};

const NO_DRAFT: &str = "no draft was created";

impl Inner {
    /// The drafts of `kind` that agents made through draftline for
    /// `counterparty` in `branch` since `since` and that are still drafts in
    /// Tryton (one request).
    pub(crate) async fn open_drafts(
        &self,
        kind: DocumentKind,
        branch: &str,
        counterparty: &str,
        since: DateTime<Utc>,
    ) -> Result<Vec<OpenDraft>, ErpError> {
        let search = Search::new(
            model(kind),
            json!([
                ["warehouse.code", "=", branch],
                ["company", "=", 1],
                ["party.code", "=", counterparty],
                ["state", "=", "draft"],
                ["draftline_key", "!=", null],
                ["number", "!=", null],
                ["create_date", ">=", value::datetime(since)]
            ]),
            &[
                "number",
                "create_date",
                "draftline_key",
                "drafted_by_agent_run",
                "lines.type",
                "lines.product.code",
                "lines.quantity",
                "lines.unit.symbol",
            ],
        )
        .order("create_date", true)
        .limit(50);
        let found = self.rest.read(&search, "open drafts").await?;
        let mut drafts = Vec::with_capacity(found.len());
        for record in &found {
            let number = record.text("number")?;
            let mut lines = Vec::new();
            for line in record.many("lines", "document line")? {
                if line.opt_text("type")?.is_some_and(|t| t != "line") {
                    continue;
                }
                let Some(item_code) = line.nested_text("product", "code")? else {
                    continue;
                };
                let what = format!("line {item_code} of {number}");
                lines.push(OpenLine {
                    qty: line.whole("quantity")?,
                    uom: crate::units::line_unit(&what, line.nested_text("unit", "symbol")?)?.uom,
                    item_code,
                });
            }
            drafts.push(OpenDraft {
                counterparty: counterparty.to_owned(),
                lines,
                agent_run: record.opt_text("drafted_by_agent_run")?,
                created_at: value::rfc3339(record.datetime("create_date")?),
                key: record.opt_text("draftline_key")?,
                number,
            });
        }
        Ok(drafts)
    }
}

/// A draft ready to be created in Tryton.
pub(crate) struct TrytonDraft {
    inner: Arc<Inner>,
    kind: DocumentKind,
    key: String,
    body: Value,
}

impl TrytonDraft {
    fn created(&self, record: &Record) -> Result<Created, ErpError> {
        Ok(Created {
            document: DocumentRef {
                id: format!("{}{}", id_prefix(self.kind), record.id()?),
                number: record.text("number")?,
                kind: self.kind.code().to_owned(),
            },
            created_at: value::rfc3339(record.datetime("create_date")?),
        })
    }
}

#[async_trait]
impl ExternalDocument for TrytonDraft {
    async fn find(&self) -> Result<Option<Created>, ErpError> {
        let search = Search::new(
            model(self.kind),
            json!([["draftline_key", "=", self.key], ["company", "=", 1]]),
            &["number", "create_date"],
        )
        .limit(1);
        let found = self.inner.rest.read(&search, "a draft by its key").await?;
        found.first().map(|record| self.created(record)).transpose()
    }

    async fn create(&self) -> Result<Created, ErpError> {
        let what = format!("create {}", model(self.kind));
        // Once Tryton holds a document for the key, every failure to read it
        // back says the draft may exist: the next attempt finds it by its key.
        let exists = |cause: String| ErpError::WriteFailed {
            cause: cause.into(),
            may_have_written: true,
            retry_after_seconds: 2,
        };
        match self
            .inner
            .rest
            .create(model(self.kind), &self.body, &["number", "create_date"])
            .await
        {
            Ok(record) => self
                .created(&record)
                .map_err(|err| exists(format!("{what}: created, but its answer is unreadable: {err}"))),
            Err(failure) if failure.is_taken_key() => {
                // Another worker created it with this key: that is the draft.
                tracing::info!(
                    model = model(self.kind),
                    "the draft's key was taken; reading its document"
                );
                match self.find().await {
                    Ok(Some(created)) => Ok(created),
                    Ok(None) => Err(exists(format!(
                        "{what}: Tryton says the key is taken, yet no document has it"
                    ))),
                    Err(err) => Err(exists(format!(
                        "{what}: the key is taken, and its document unreadable: {err}"
                    ))),
                }
            }
            Err(failure) => Err(failure.for_create(&what)),
        }
    }
}

/// `draft` of `branch` dated `today`, ready to create under `key`.
pub(crate) async fn draft(
    inner: &Arc<Inner>,
    branch: &str,
    draft: &NewDraft,
    key: &str,
    today: NaiveDate,
) -> Result<TrytonDraft, ErpError> {
    let body = match draft {
        NewDraft::PurchaseOrder(po) => purchase(inner, branch, po, key).await?,
        NewDraft::Quote(quote) => self::quote(inner, branch, quote, key, today).await?,
    };
    Ok(TrytonDraft {
        inner: inner.clone(),
        kind: draft.kind(),
        key: key.to_owned(),
        body,
    })
}

/// A purchase-order draft's record.
async fn purchase(inner: &Inner, branch: &str, draft: &PoDraft, key: &str) -> Result<Value, ErpError> {
    let (warehouse, currency) = header(inner, branch).await?;
    let vendor = match inner.master.vendor(&draft.counterparty.code) {
        Some(vendor) => vendor,
        None => lookup_party(inner, &draft.counterparty.code, "supplier_payment_term").await?,
    };
    let wanted: Vec<(&str, Uom)> = draft.lines.iter().map(|l| (l.item_code.as_str(), l.uom)).collect();
    let products = products(inner, &wanted).await?;
    let mut lines = Vec::with_capacity(draft.lines.len());
    for (line, (product, unit)) in draft.lines.iter().zip(products) {
        lines.push(json!({
            "product": product,
            "quantity": line.qty,
            "unit": unit,
            "unit_price": value::decimal(amount(&line.unit_price.amount)?),
            "note": line.price_source,
        }));
    }
    let own = [("delivery_date", value::date(draft.own.needed_by))];
    Ok(body(draft, key, &vendor, (warehouse, currency), lines, own))
}

/// A quote draft's record, dated `today`.
async fn quote(
    inner: &Inner,
    branch: &str,
    draft: &QuoteDraft,
    key: &str,
    today: NaiveDate,
) -> Result<Value, ErpError> {
    let (warehouse, currency) = header(inner, branch).await?;
    let customer = match inner.master.customer(&draft.counterparty.code) {
        Some(customer) => customer,
        None => lookup_party(inner, &draft.counterparty.code, "customer_payment_term").await?,
    };
    let price_list = match customer.price_list {
        Some(id) => Some(id),
        None => lookup_price_list(inner, &draft.own.price_list).await?,
    };
    let wanted: Vec<(&str, Uom)> = draft.lines.iter().map(|l| (l.item_code.as_str(), l.uom)).collect();
    let products = products(inner, &wanted).await?;
    let codes: Vec<TaxCode> = draft.lines.iter().map(|l| l.tax_code).collect();
    let taxes = taxes(inner, &codes).await?;
    let mut lines = Vec::with_capacity(draft.lines.len());
    for ((line, (product, unit)), tax) in draft.lines.iter().zip(products).zip(taxes) {
        lines.push(json!({
            "product": product,
            "quantity": line.qty,
            "unit": unit,
            "unit_price": value::decimal(amount(&line.unit_price.amount)?),
            "taxes": [["add", [tax]]],
            "note": line.price_source,
        }));
    }
    let validity = draft.own.valid_until.signed_duration_since(today).num_days();
    let validity = value::timedelta_days(validity.max(0))
        .ok_or_else(|| ErpError::internal(format!("quote validity of {validity} days; {NO_DRAFT}")))?;
    let own = [
        ("price_list", json!(price_list)),
        ("quotation_date", value::date(today)),
        ("quotation_validity", validity),
        // The credit check is for the reviewer: the sale's description shows it.
        ("description", json!(draft.own.credit_check)),
    ];
    Ok(body(draft, key, &customer, (warehouse, currency), lines, own))
}

/// The record of `draft` to create under `key`: its party, warehouse,
/// currency, note and provenance, its `lines`, and the fields only its
/// kind has (`own`).
fn body<C, L, K>(
    draft: &DraftDocument<C, L, K>,
    key: &str,
    party: &PartyRef,
    (warehouse, currency): (i64, i64),
    lines: Vec<Value>,
    own: impl IntoIterator<Item = (&'static str, Value)>,
) -> Value {
    let mut body = json!({
        "party": party.id,
        "warehouse": warehouse,
        "currency": currency,
        "payment_term": party.payment_term,
        "comment": draft.note,
        "draftline_key": key,
        "draftline_client_ref": draft.client_ref,
        "drafted_by_agent_run": draft.drafted_by_agent_run,
        "drafted_on_behalf_of": draft.drafted_on_behalf_of,
        "drafted_by_tool_call": draft.drafted_by_tool_call,
        "lines": [["create", lines]],
    });
    if let Some(fields) = body.as_object_mut() {
        fields.extend(own.into_iter().map(|(name, value)| (name.to_owned(), value)));
    }
    body
}

/// A Money amount as the exact decimal it prints.
fn amount(text: &str) -> Result<Decimal, ErpError> {
    value::decimal_text(text).ok_or_else(|| ErpError::internal(format!("amount '{text}' is not a decimal; {NO_DRAFT}")))
}

/// The warehouse and currency ids of a draft of `branch`.
async fn header(inner: &Inner, branch: &str) -> Result<(i64, i64), ErpError> {
    let (warehouse, company) = tokio::try_join!(
        inner.master.warehouse(&inner.rest, branch),
        inner.master.company(&inner.rest),
    )?;
    let warehouse = warehouse.ok_or_else(|| {
        ErpError::internal(format!(
            "branch {branch} has no warehouse with that code in Tryton; {NO_DRAFT}"
        ))
    })?;
    Ok((warehouse.id, company.currency_id))
}

/// A party the tool's reads did not leave behind (one request).
async fn lookup_party(inner: &Inner, code: &str, term: &'static str) -> Result<PartyRef, ErpError> {
    let search = Search::new("party.party", json!([["code", "=", code]]), &[term, "sale_price_list"]).limit(1);
    let found = inner.rest.read(&search, "a draft's party").await?;
    let party = found
        .first()
        .ok_or_else(|| ErpError::internal(format!("party {code} is not in Tryton; {NO_DRAFT}")))?;
    Ok(PartyRef {
        id: party.id()?,
        payment_term: party.ref_id(term)?,
        price_list: party.ref_id("sale_price_list")?,
    })
}

/// A sales price list by name (one request).
async fn lookup_price_list(inner: &Inner, name: &str) -> Result<Option<i64>, ErpError> {
    if name.is_empty() {
        return Ok(None);
    }
    let search = Search::new("product.price_list", json!([["name", "=", name]]), &["name"]).limit(1);
    let found = inner.rest.read(&search, "a price list").await?;
    found.first().map(Record::id).transpose()
}

/// The product and unit ids of each `(item, unit)`, reading the items the
/// tool's reads did not leave behind (one request).
async fn products(inner: &Inner, wanted: &[(&str, Uom)]) -> Result<Vec<(i64, i64)>, ErpError> {
    let missing: Vec<String> = wanted
        .iter()
        .filter(|(code, _)| inner.master.product(code).is_none())
        .map(|(code, _)| (*code).to_owned())
        .collect();
    if !missing.is_empty() {
        inner.items(&missing).await?;
    }
    wanted
        .iter()
        .map(|(code, uom)| {
            let product: ProductRef = inner
                .master
                .product(code)
                .ok_or_else(|| ErpError::internal(format!("item {code} is not in Tryton; {NO_DRAFT}")))?;
            let unit = product
                .units
                .iter()
                .find(|(u, _)| u == uom)
                .map(|(_, id)| *id)
                .ok_or_else(|| ErpError::internal(format!("item {code} has no unit {uom} in Tryton; {NO_DRAFT}")))?;
            Ok((product.id, unit))
        })
        .collect()
}

/// The tax ids of `codes`, reading the taxes when one is not known (one request).
async fn taxes(inner: &Inner, codes: &[TaxCode]) -> Result<Vec<i64>, ErpError> {
    if codes.iter().any(|c| inner.master.tax(*c).is_none()) {
        inner.tax_types(chrono::Utc::now().date_naive()).await?;
    }
    codes
        .iter()
        .map(|code| {
            inner
                .master
                .tax(*code)
                .ok_or_else(|| ErpError::internal(format!("tax {code} is not in Tryton; {NO_DRAFT}")))
        })
        .collect()
}
