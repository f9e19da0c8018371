//! A draftline document in Tryton, as every side reads it: the model a
//! kind becomes and its id, its product lines and the header and
//! provenance draftline wrote, and a person's decision as Tryton's own
//! fields tell it. Creating drafts ([`crate::drafts`]), reading documents
//! back ([`crate::purchasing`], [`crate::sales`]) and the review queue
//! ([`crate::review`]) share it, and it imports none of them.

use draftline_contract::ErpError;
use draftline_erp::domain::{Decision, DocumentKind, DraftDocument, PoLine, Verdict};
use draftline_erp::money::{self, LineAmounts, Money};
use rust_decimal::Decimal;

use crate::units::UnitSymbol;
use crate::value::{self, Record};

/// The id prefix of a purchase order created in Tryton.
pub(crate) const PO_ID_PREFIX: &str = "po_tryton_";
/// The id prefix of a quote created in Tryton.
pub(crate) const QUOTE_ID_PREFIX: &str = "qt_tryton_";

/// The Tryton model a draft of `kind` becomes.
pub(crate) fn model(kind: DocumentKind) -> &'static str {
    match kind {
        DocumentKind::PurchaseOrder => "purchase.purchase",
        DocumentKind::Quote => "sale.sale",
    }
}

/// The id prefix of a document of `kind` created in Tryton.
pub(crate) fn id_prefix(kind: DocumentKind) -> &'static str {
    match kind {
        DocumentKind::PurchaseOrder => PO_ID_PREFIX,
        DocumentKind::Quote => QUOTE_ID_PREFIX,
    }
}

/// A person's decision on an agent draft as far as Tryton's own fields
/// tell it: the state says which (quotation or later: approved; cancelled:
/// rejected), `draftline_decided_by` who (the module's login of the
/// document's `write_uid`, the last Tryton user who changed it: who pressed
/// the button unless someone edited it afterwards), `write_date` when.
/// Tryton keeps no reason (a person may leave a note on the document);
/// `None` for a draft, a document a person made, or one Tryton does not
/// say who changed.
pub(crate) fn tryton_decision(record: &Record) -> Result<Option<Decision>, ErpError> {
    if record.opt_text("draftline_key")?.is_none() {
        return Ok(None);
    }
    let verdict = match record.text("state")?.as_str() {
        "draft" => return Ok(None),
        "cancelled" => Verdict::Rejected,
        _ => Verdict::Approved,
    };
    let (Some(by), Some(at)) = (
        record.opt_text("draftline_decided_by")?,
        record.opt_datetime("write_date")?,
    ) else {
        return Ok(None);
    };
    Ok(Some(Decision {
        verdict,
        reason: None,
        decided_by: by,
        decided_at: value::rfc3339(at),
    }))
}

/// One line of a purchase or a sale as both kinds read it: a product's
/// line (other line types and lines without a product are not read).
pub(crate) struct DocumentLine {
    /// The line's record (its taxes, for a sale).
    pub record: Record,
    /// The product's code and name.
    pub item_code: String,
    pub item_name: String,
    /// Names the line in an error ("line BRG-0042 of purchase PO-…").
    pub what: String,
    /// The line's unit and the product's base unit.
    pub unit: UnitSymbol,
    pub base: UnitSymbol,
    /// Quantity in the line's unit, and its price per that unit.
    pub qty: i64,
    pub unit_price: Decimal,
}

impl DocumentLine {
    /// The product lines of `record` (model `line_model`), a `kind`
    /// (`purchase`, `sale`) numbered `number`.
    pub(crate) fn all_of(
        record: &Record,
        line_model: &'static str,
        kind: &str,
        number: &str,
    ) -> Result<Vec<Self>, ErpError> {
        let mut lines = Vec::new();
        for line in record.many("lines", line_model)? {
            if line.opt_text("type")?.is_some_and(|t| t != "line") {
                continue;
            }
            let Some(product) = line.one("product", "product.product")? else {
                continue;
            };
            let item_code = product.text("code")?;
            let what = format!("line {item_code} of {kind} {number}");
            lines.push(Self {
                unit: crate::units::line_unit(&what, line.nested_text("unit", "symbol")?)?,
                base: crate::units::line_unit(&what, product.nested_text("default_uom", "symbol")?)?,
                qty: line.whole("quantity")?,
                unit_price: line.opt_decimal("unit_price")?.unwrap_or(Decimal::ZERO),
                item_name: product.text("name")?,
                record: line,
                item_code,
                what,
            });
        }
        Ok(lines)
    }

    /// Where the line's price came from: its note (draftline writes the
    /// price source there), else `list`'s price of the item in its unit.
    pub(crate) fn price_source(&self, list: &str) -> Result<String, ErpError> {
        Ok(match self.record.opt_text("note")? {
            Some(note) if !note.trim().is_empty() => note,
            _ => format!("price list {list}, {} per {}", self.item_code, self.unit.uom),
        })
    }

    /// The line numbered `line_no`, priced from `list` in `currency`: its
    /// amounts by draftline's rounding rule, with `tax` on its net.
    pub(crate) fn priced(
        self,
        line_no: usize,
        list: &str,
        currency: &str,
        tax: impl FnOnce(Decimal) -> Option<Decimal>,
    ) -> Result<(PoLine, LineAmounts), ErpError> {
        let overflow = || money::overflow(&self.what);
        let amounts = LineAmounts::of(self.unit_price, self.qty, tax).ok_or_else(overflow)?;
        let line = PoLine {
            line_no: u32::try_from(line_no).map_or(u32::MAX, |n| n.saturating_add(1)),
            price_source: self.price_source(list)?,
            base_qty: self.qty.checked_mul(self.unit.factor).ok_or_else(overflow)?,
            qty: self.qty,
            uom: self.unit.uom,
            base_uom: self.base.uom,
            unit_price: Money::new(self.unit_price, currency),
            line_total: Money::new(amounts.total, currency),
            item_name: self.item_name,
            item_code: self.item_code,
        };
        Ok((line, amounts))
    }
}

/// A document's party (its code and name) and its currency's code, or an
/// internal error naming the document (`what`, `sale QT-…`) and what its
/// party is to it (`role`: vendor, customer).
pub(crate) fn party_and_currency(
    record: &Record,
    what: &str,
    role: &str,
) -> Result<((String, String), String), ErpError> {
    let party =
        (record.one("party", "party.party")?).ok_or_else(|| ErpError::internal(format!("{what} has no {role}")))?;
    let currency = (record.nested_text("currency", "code")?)
        .ok_or_else(|| ErpError::internal(format!("{what} has no currency")))?;
    Ok(((party.text("code")?, party.text("name")?), currency))
}

/// A document as draftline drafted it in Tryton: its header and
/// provenance from `record`, with what its kind read (`sums` of its lines,
/// in `currency`).
pub(crate) fn draft_of<C, L, K>(
    record: &Record,
    (counterparty, currency): (C, String),
    lines: Vec<L>,
    sums: &LineAmounts,
    own: K,
) -> Result<DraftDocument<C, L, K>, ErpError> {
    Ok(DraftDocument {
        branch_id: record.nested_text("warehouse", "code")?.unwrap_or_default(),
        counterparty,
        subtotal: Money::new(sums.net, &currency),
        total: Money::new(sums.total, &currency),
        currency,
        lines,
        // Tryton keeps an empty comment as "": no note.
        note: record.opt_text("comment")?.filter(|c| !c.is_empty()),
        client_ref: record.opt_text("draftline_client_ref")?.unwrap_or_default(),
        drafted_by_agent_run: record.opt_text("drafted_by_agent_run")?,
        drafted_on_behalf_of: record.opt_text("drafted_on_behalf_of")?.unwrap_or_default(),
        drafted_by_tool_call: record.opt_text("drafted_by_tool_call")?,
        own,
    })
}
