//! `purchasing_create_po_draft`: a purchase-order draft, priced by the server
//! from the vendor's price list. The reference contract for draft tools.

use std::collections::BTreeSet;

use std::sync::Arc;

use async_trait::async_trait;
use chrono::NaiveDate;
use draftline_contract::ToolError;
use draftline_contract::error::FieldIssue;
use draftline_contract::tool::{Call, DocumentRef, Draft, DraftTool, RuleContext, ToolMeta, ToolSpec};
use draftline_contract::validation::rejected_with;
use rust_decimal::Decimal;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use validator::Validate;

use crate::domain::po::VendorRef;
use crate::domain::{Item, PoDraft, PoLine, PriceEntry, PurchaseOrder, Reviewable, Vendor};
use crate::money::{self, Money};
use crate::port::{Erp, Scope};
use crate::pricing;
use crate::units::Uom;

/// How far ahead `needed_by` may be.
const MAX_DAYS_AHEAD: i64 = 365;

/// One line to order.
#[derive(Debug, Clone, Serialize, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PoLineInput {
    /// The item code, e.g. BRG-0042.
    #[validate(custom(function = "super::code"))]
    #[schemars(pattern(super::CODE_PATTERN))]
    pub item_code: String,
    /// Whole units to order, 1-100000.
    #[validate(range(min = 1, max = 100_000))]
    pub qty: i64,
    /// The unit of qty; must be one of the item's units (inventory tools show them).
    pub uom: Uom,
}

/// Input of `purchasing_create_po_draft`. Prices, totals, branch, status and
/// dates other than needed_by are decided by the server.
#[derive(Debug, Clone, Serialize, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreatePoDraftInput {
    /// The vendor's code, e.g. V-00231 (purchasing_search_vendors finds it).
    #[validate(custom(function = "super::code"))]
    #[schemars(pattern(super::CODE_PATTERN))]
    pub vendor_code: String,
    /// The date the goods are needed, YYYY-MM-DD; today or later, at most 365 days ahead.
    #[serde(deserialize_with = "draftline_contract::validation::date::strict")]
    pub needed_by: NaiveDate,
    /// Your own unique reference for this intended draft, e.g. reorder-2026-11-29-BRG-0042. Reuse it only when retrying the same draft.
    #[validate(custom(function = "super::client_ref"))]
    #[schemars(pattern(super::CLIENT_REF_PATTERN))]
    pub client_ref: String,
    /// A note for the person who reviews the draft, or null.
    #[validate(length(max = 500))]
    pub note: Option<String>,
    /// 1-50 lines; each item and unit at most once.
    #[validate(length(min = 1, max = 50), nested)]
    pub lines: Vec<PoLineInput>,
}

/// The tool.
#[derive(Clone)]
pub struct PurchasingCreatePoDraft {
    erp: Arc<dyn Erp>,
}

impl PurchasingCreatePoDraft {
    /// The tool over `erp`.
    pub fn new(erp: Arc<dyn Erp>) -> Self {
        Self { erp }
    }
}

impl ToolSpec for PurchasingCreatePoDraft {
    type Input = CreatePoDraftInput;
    type Output = PurchaseOrder;
    const META: ToolMeta = ToolMeta {
        name: "purchasing_create_po_draft",
        title: "Create a purchase-order draft",
        description: "Creates a purchase order in status draft for your branch, priced by the server from the \
vendor's price list. The draft does not reach the vendor, stock or the ledger: a person reviews and approves it in the \
ERP. Each item must be supplied by the vendor and ordered in one of its units (e.g. PCS or BOX, 1 BOX = 24 PCS); \
needed_by is today or later. Returns the draft with its PO number, priced lines, totals and review_url: the page \
where a person reviews it (tell the user the draft waits there). Retrying with the same \
idempotency key (or the same X-Agent-Run-Id and client_ref) returns the same draft instead of a second one. Use \
purchasing_search_vendors to find the vendor code and inventory_list_below_reorder for what to order; to read a draft \
back use purchasing_get_po. Example: {\"vendor_code\": \"V-00231\", \"needed_by\": \"2026-12-15\", \"client_ref\": \
\"reorder-BRG-0042\", \"note\": null, \"lines\": [{\"item_code\": \"BRG-0042\", \"qty\": 10, \"uom\": \"BOX\"}]}",
        module: "purchasing",
        scope: "purchasing:draft",
    };

    fn rules(input: &CreatePoDraftInput, ctx: &RuleContext) -> Vec<FieldIssue> {
        let lines = input.lines.iter().map(|l| (l.item_code.as_str(), l.uom));
        super::date_in_window(
            "needed_by",
            input.needed_by,
            ctx.today,
            MAX_DAYS_AHEAD,
            "drafts are for the coming year",
        )
        .into_iter()
        .chain(super::repeated_lines(lines))
        .collect()
    }
}

const NO_DRAFT: &str = "No draft was created.";

/// Prices one line from the vendor's price list (see [`crate::pricing`]).
fn price_line(vendor: &Vendor, prices: &[PriceEntry], item: &Item, uom: Uom) -> Option<(Decimal, String)> {
    pricing::unit_price(&vendor.code, item, uom, |u| {
        prices
            .iter()
            .find(|p| p.item == item.code && p.uom == u)
            .map(|p| p.unit_price)
    })
    .map(|priced| (priced.unit_price, priced.source))
}

#[async_trait]
impl DraftTool for PurchasingCreatePoDraft {
    fn client_ref(input: &CreatePoDraftInput) -> &str {
        &input.client_ref
    }

    async fn draft(&self, call: &Call<'_>, input: CreatePoDraftInput) -> Result<Draft<PurchaseOrder>, ToolError> {
        let _tenant = call.caller.tenant();
        let branch = call.caller.branch();
        let scope = Scope::of(call.caller);
        let codes: Vec<String> = input
            .lines
            .iter()
            .map(|l| l.item_code.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let check = super::Check::of(call.decision, call.near_duplicate_window);
        let now = call.clock.now();
        let since = super::window_start(now, call.near_duplicate_window);
        let open_drafts = async {
            match check {
                super::Check::Look => self.erp.open_po_drafts(&scope, &input.vendor_code, since).await,
                _ => Ok(Vec::new()),
            }
        };
        // The reads are independent: issue them together.
        let (vendor, items, open) = tokio::try_join!(
            self.erp.vendor_with_prices(&scope, &input.vendor_code),
            self.erp.items(&scope, &codes),
            open_drafts,
        )?;
        let (vendor, prices) = match vendor {
            Some((vendor, prices)) if vendor.supplies(branch.as_str()) => (vendor, prices),
            // A vendor that does not serve this branch reads exactly like a missing one.
            _ => {
                return Err(rejected_with(
                    vec![FieldIssue::new(
                        "vendor_code",
                        format!(
                            "Vendor {} was not found for your branch. Call purchasing_search_vendors (by name or by \
                         item_code) to find the right vendor code.",
                            input.vendor_code
                        ),
                    )],
                    NO_DRAFT,
                ));
            }
        };

        let mut issues = Vec::new();
        let mut lines = Vec::with_capacity(input.lines.len());
        let mut totals = Vec::with_capacity(input.lines.len());
        for (i, line) in input.lines.iter().enumerate() {
            let Some(item) = items.get(&line.item_code) else {
                issues.push(FieldIssue::new(
                    format!("lines[{i}].item_code"),
                    format!(
                        "Item {} does not exist. Check the code with inventory_get_stock or \
                         inventory_list_below_reorder.",
                        line.item_code
                    ),
                ));
                continue;
            };
            let Some(unit) = item.unit(line.uom) else {
                let allowed: Vec<&str> = item.units.iter().map(|u| u.uom.code()).collect();
                issues.push(FieldIssue::new(
                    format!("lines[{i}].uom"),
                    format!(
                        "Item {code} is not stocked in {uom}. Allowed units for {code}: {units}. Resend the line \
                         with uom {choices}.",
                        code = item.code,
                        uom = line.uom,
                        units = item.describe_units(),
                        choices = allowed.join(" or "),
                    ),
                ));
                continue;
            };
            let Some((unit_price, price_source)) = price_line(&vendor, &prices, item, line.uom) else {
                let supplied: BTreeSet<&str> = prices.iter().map(|p| p.item.as_str()).collect();
                issues.push(FieldIssue::new(
                    format!("lines[{i}].item_code"),
                    format!(
                        "Vendor {} does not supply {} (it supplies: {}). Call purchasing_search_vendors with \
                         item_code {} to find a vendor that does.",
                        vendor.code,
                        item.code,
                        supplied.into_iter().collect::<Vec<_>>().join(", "),
                        item.code
                    ),
                ));
                continue;
            };
            let overflow = || money::overflow(&format!("lines[{i}] ({} x {} {})", item.code, line.qty, line.uom));
            let line_total = money::round(money::mul(unit_price, Decimal::from(line.qty)).ok_or_else(overflow)?);
            totals.push(line_total);
            lines.push(PoLine {
                line_no: u32::try_from(i).map_or(u32::MAX, |i| i.saturating_add(1)),
                item_code: item.code.clone(),
                item_name: item.name.clone(),
                qty: line.qty,
                uom: line.uom,
                base_qty: line.qty.checked_mul(unit.factor).ok_or_else(overflow)?,
                base_uom: item.base_uom,
                unit_price: Money::new(unit_price, &vendor.currency),
                price_source,
                line_total: Money::new(line_total, &vendor.currency),
            });
        }
        if !issues.is_empty() {
            return Err(rejected_with(issues, NO_DRAFT));
        }
        // Ask rather than guess: the same items from the same vendor drafted
        // in the last day under another key.
        let items_asked = codes.iter().map(String::as_str);
        if let Some(question) = super::near_duplicate(
            &open,
            call.draft_key,
            items_asked,
            &vendor.code,
            "purchase_order",
            "purchasing_get_po",
            now,
        ) {
            return Err(question);
        }
        if let super::Check::UseExisting(number) = check {
            let existing = self
                .erp
                .purchase_order(&scope, &number)
                .await?
                .ok_or_else(|| super::purchasing_get_po::po_not_found(&number))?;
            return Ok(Draft::Existing {
                document: DocumentRef {
                    id: existing.draft_id.clone(),
                    number: existing.po_number.clone(),
                    kind: "purchase_order".to_owned(),
                },
                output: existing.with_review_url(call.review_pages),
            });
        }

        let subtotal = money::sum(totals).ok_or_else(|| money::overflow("the purchase order total"))?;
        let draft = PoDraft {
            branch_id: branch.to_string(),
            vendor: VendorRef {
                code: vendor.code.clone(),
                name: vendor.name.clone(),
            },
            needed_by: input.needed_by,
            currency: vendor.currency.clone(),
            lines,
            subtotal: Money::new(subtotal, &vendor.currency),
            total: Money::new(subtotal, &vendor.currency),
            note: input.note.clone(),
            client_ref: input.client_ref.clone(),
            drafted_by_agent_run: call.agent.run_id.clone(),
            drafted_on_behalf_of: call.caller.user().to_string(),
            drafted_by_tool_call: call.agent.tool_call_id.clone(),
        };
        // Only a draft that passed every check is placed (and numbered), so
        // refused input writes nothing and leaves no gap.
        let placement = self
            .erp
            .place_po_draft(&scope, draft.clone(), call.draft_key, call.clock.now())
            .await?;
        Ok(super::prepared(
            placement,
            draft,
            PoDraft::numbered,
            |po: &PurchaseOrder| DocumentRef {
                id: po.draft_id.clone(),
                number: po.po_number.clone(),
                kind: "purchase_order".to_owned(),
            },
            call.review_pages,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(needed_by: &str) -> CreatePoDraftInput {
        CreatePoDraftInput {
            vendor_code: "V-00231".into(),
            needed_by: needed_by.parse().unwrap(),
            client_ref: "r".into(),
            note: None,
            lines: vec![
                PoLineInput {
                    item_code: "BRG-0042".into(),
                    qty: 1,
                    uom: Uom::Box,
                },
                PoLineInput {
                    item_code: "BRG-0042".into(),
                    qty: 2,
                    uom: Uom::Box,
                },
            ],
        }
    }

    #[test]
    fn needed_by_in_the_past_and_repeated_lines_are_refused() {
        let ctx = RuleContext {
            today: NaiveDate::from_ymd_opt(2026, 11, 29).unwrap(),
        };
        let issues = PurchasingCreatePoDraft::rules(&input("2026-11-28"), &ctx);
        let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(paths, ["needed_by", "lines[1]"]);
        assert!(
            PurchasingCreatePoDraft::rules(&input("2028-01-01"), &ctx)[0]
                .message
                .contains("365")
        );
    }
}
