//! `purchasing_create_po_draft`: a purchase-order draft, priced by the server
//! from the vendor's price list. Its kind's rules for the draft engine
//! ([`crate::drafting`]): the vendor must supply the branch, prices are the
//! vendor's, and a purchase draft carries no tax.

use std::collections::{BTreeSet, HashMap};

use async_trait::async_trait;
use chrono::NaiveDate;
use draftline_contract::ToolError;
use draftline_contract::error::FieldIssue;
use draftline_contract::tool::{RuleContext, ToolMeta, ToolSpec};
use draftline_contract::validation::rejected_with;
use rust_decimal::Decimal;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use validator::Validate;

use crate::domain::{Item, PoFields, PoLine, PurchaseOrder, Reviewable, VendorRef};
use crate::drafting::{DraftKind, NO_DRAFT, Party, Priced, Words, draft_tool, mismatch};
use crate::money::LineAmounts;
use crate::port::{CounterpartyReads, Scope};
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

draft_tool! { PurchasingCreatePoDraft: CreatePoDraftInput { vendor_code, lines: PoLineInput } }

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

#[async_trait]
impl DraftKind for PurchasingCreatePoDraft {
    type Input = CreatePoDraftInput;
    type Own = ();
    type Rule = ();
    type Printed = VendorRef;
    type DocLine = PoLine;
    type Fields = PoFields;
    type Output = PurchaseOrder;

    const WORDS: Words = Words {
        item_hint: "inventory_get_stock or inventory_list_below_reorder",
        unit_verb: "stocked",
        read_tool: "purchasing_get_po",
    };

    async fn party(
        &self,
        scope: &Scope<'_>,
        read: CounterpartyReads,
        _items: &HashMap<String, Item>,
        input: &CreatePoDraftInput,
    ) -> Result<Party<()>, ToolError> {
        let CounterpartyReads::Vendor(vendor) = read else {
            return Err(mismatch(PurchaseOrder::KIND));
        };
        match vendor {
            Some((vendor, prices)) if vendor.supplies(scope.branch.as_str()) => Ok(Party {
                list: vendor.code.clone(),
                code: vendor.code,
                name: vendor.name,
                currency: vendor.currency,
                prices: prices.into_iter().map(|p| (p.item, p.uom, p.unit_price)).collect(),
                own: (),
            }),
            // A vendor that does not serve this branch reads exactly like a missing one.
            _ => Err(rejected_with(
                vec![FieldIssue::new(
                    "vendor_code",
                    format!(
                        "Vendor {} was not found for your branch. Call purchasing_search_vendors (by name or by \
                         item_code) to find the right vendor code.",
                        input.vendor_code
                    ),
                )],
                NO_DRAFT,
            )),
        }
    }

    /// Named once the vendor's whole list is read (what was read holds the
    /// prices of the wanted items only).
    async fn unpriced(
        &self,
        scope: &Scope<'_>,
        vendor: &Party<()>,
        lines: &[(usize, &Item)],
    ) -> Result<Vec<FieldIssue>, ToolError> {
        let list = self.erp.vendor_with_prices(scope, &vendor.code).await?;
        let supplied: BTreeSet<&str> = list
            .iter()
            .flat_map(|(_, prices)| prices.iter().map(|p| p.item.as_str()))
            .collect();
        let supplied = supplied.into_iter().collect::<Vec<_>>().join(", ");
        let issue = |(i, item): &(usize, &Item)| {
            FieldIssue::new(
                format!("lines[{i}].item_code"),
                format!(
                    "Vendor {} does not supply {item} (it supplies: {supplied}). Call purchasing_search_vendors \
                     with item_code {item} to find a vendor that does.",
                    vendor.code,
                    item = item.code,
                ),
            )
        };
        Ok(lines.iter().map(issue).collect())
    }

    fn rule(_: &Party<()>, _: usize, _: &PoLineInput) -> Result<(), FieldIssue> {
        Ok(())
    }

    /// No tax on a purchase draft: a person posts it with its tax.
    fn tax((): &(), _: Decimal) -> Option<Decimal> {
        Some(Decimal::ZERO)
    }

    fn line((): (), priced: Priced) -> PoLine {
        priced.line
    }

    async fn existing(&self, scope: &Scope<'_>, number: String) -> Result<PurchaseOrder, ToolError> {
        self.erp
            .purchase_order(scope, &number)
            .await?
            .ok_or_else(|| super::purchasing_get_po::po_not_found(&number))
    }

    fn printed(vendor: &Party<()>) -> VendorRef {
        VendorRef {
            code: vendor.code.clone(),
            name: vendor.name.clone(),
        }
    }

    fn fields(_: Party<()>, input: &CreatePoDraftInput, _: &LineAmounts) -> Result<PoFields, ToolError> {
        Ok(PoFields {
            needed_by: input.needed_by,
        })
    }
}

#[cfg(test)]
mod tests {
    use draftline_contract::tool::{Call, Decision};

    use super::*;
    use crate::drafting::fixture::Fixture;
    use crate::port::Purchasing;
    use crate::testing::{TestCaller, issues};

    type Po = PurchasingCreatePoDraft;

    /// 10 BOX of BRG-0042 from V-00231: the README's draft.
    fn bearings() -> CreatePoDraftInput {
        Po::input("V-00231", &[("BRG-0042", 10, Uom::Box)])
    }

    #[tokio::test]
    async fn a_box_is_priced_from_the_vendors_box_price_and_counted_as_24_pieces() {
        let (erp, buyer) = Po::drafter();
        let po = Po::created(&erp, &buyer.draft("k1"), bearings()).await;
        assert_eq!(po.po_number, "PO-SBY-000004");
        assert_eq!(po.status, crate::domain::PoStatus::Draft);
        let line = &po.lines[0];
        assert_eq!(
            (line.qty, line.uom, line.base_qty, line.base_uom),
            (10, Uom::Box, 240, Uom::Pcs)
        );
        assert_eq!(line.unit_price.amount, "288000.00");
        assert_eq!(line.price_source, "price list V-00231, BRG-0042 per BOX");
        assert_eq!(line.line_total.amount, "2880000.00");
        assert_eq!(
            (po.subtotal.amount.as_str(), po.total.amount.as_str()),
            ("2880000.00", "2880000.00")
        );
        assert_eq!(po.currency, "IDR");
        assert_eq!(po.drafted_on_behalf_of, "buyer-sby");
        assert_eq!(po.drafted_by_agent_run.as_deref(), Some("run-test"));
        assert_eq!(po.created_at, "2026-11-29T09:00:00.000Z");
        assert_eq!(
            po.review_url.as_deref(),
            Some("https://draftline.test/review/documents/PO-SBY-000004")
        );
        // It reads back as it was answered.
        let stored = erp
            .purchase_order(&buyer.scope(), "PO-SBY-000004")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(stored.lines, po.lines);
    }

    #[tokio::test]
    async fn a_unit_the_vendor_does_not_price_is_the_base_price_times_the_conversion() {
        let (erp, buyer) = Po::drafter();
        // V-00231 prices BRG-0043 per PCS only (14250).
        let po = Po::created(
            &erp,
            &buyer.draft("k1"),
            Po::input("V-00231", &[("BRG-0043", 2, Uom::Box)]),
        )
        .await;
        let line = &po.lines[0];
        assert_eq!(line.unit_price.amount, "342000.00");
        assert_eq!(
            line.price_source,
            "price list V-00231, BRG-0043 per PCS x 24 (24 per BOX)"
        );
        assert_eq!((line.base_qty, line.line_total.amount.as_str()), (48, "684000.00"));
    }

    #[tokio::test]
    async fn every_refused_line_is_named_and_a_refusal_uses_no_number() {
        let (erp, buyer) = Po::drafter();
        let input = Po::input(
            "V-00231",
            &[
                ("BRG-0042", 10, Uom::Box),
                ("BRG-9999", 1, Uom::Pcs),
                ("BLT-0107", 1, Uom::Box),
            ],
        );
        let err = Po::refused(&erp, &buyer.draft("k1"), input).await;
        let found = issues(&err);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].0, "lines[1].item_code");
        assert!(
            found[0].1.starts_with("Item BRG-9999 does not exist."),
            "{}",
            found[0].1
        );
        assert_eq!(found[1].0, "lines[2].item_code");
        assert!(
            found[1]
                .1
                .starts_with("Vendor V-00231 does not supply BLT-0107 (it supplies: BRG-0042, BRG-0043, VBT-0220)."),
            "{}",
            found[1].1
        );
        assert_eq!(Po::last_number(&erp), 3);
        assert_eq!(
            Po::created(&erp, &buyer.draft("k2"), bearings()).await.po_number,
            "PO-SBY-000004"
        );
    }

    #[tokio::test]
    async fn a_vendor_that_does_not_supply_the_branch_reads_like_a_missing_one() {
        let (erp, buyer) = Po::drafter();
        // V-00612 exists, but supplies Jakarta and Bandung only.
        let elsewhere = Po::refused(
            &erp,
            &buyer.draft("k1"),
            Po::input("V-00612", &[("CBL-0220", 1, Uom::Roll)]),
        )
        .await;
        let missing = Po::refused(
            &erp,
            &buyer.draft("k1"),
            Po::input("V-99999", &[("CBL-0220", 1, Uom::Roll)]),
        )
        .await;
        let text = |code: &str| {
            format!(
                "Vendor {code} was not found for your branch. Call purchasing_search_vendors (by name or by \
                 item_code) to find the right vendor code."
            )
        };
        assert_eq!(issues(&elsewhere), [("vendor_code", text("V-00612").as_str())]);
        assert_eq!(issues(&missing), [("vendor_code", text("V-99999").as_str())]);
        let jakarta = TestCaller::demo("buyer-jkt").unwrap();
        let po = Po::created(
            &erp,
            &jakarta.draft("k1"),
            Po::input("V-00612", &[("CBL-0220", 1, Uom::Roll)]),
        )
        .await;
        assert_eq!(po.po_number, "PO-JKT-000025");
    }

    #[tokio::test]
    async fn use_existing_of_another_branchs_order_is_not_found() {
        let (erp, buyer) = Po::drafter();
        let elsewhere = Decision::UseExisting("PO-JKT-000001".into());
        let call = Call {
            decision: Some(&elsewhere),
            ..buyer.draft("k1")
        };
        let err = Po::refused(&erp, &call, bearings()).await;
        assert_eq!(
            err.to_string(),
            super::super::purchasing_get_po::po_not_found("PO-JKT-000001").to_string()
        );
    }

    #[tokio::test]
    async fn a_conversion_too_large_for_the_base_quantity_is_a_clear_error() {
        let (erp, buyer) = Po::drafter();
        erp.edit(|b| {
            let bearing = b.items.iter_mut().find(|i| i.code == "BRG-0042").unwrap();
            bearing.units.iter_mut().find(|u| u.uom == Uom::Box).unwrap().factor = i64::MAX;
        });
        let err = Po::refused(&erp, &buyer.draft("k1"), bearings()).await;
        assert!(
            err.to_string().contains("lines[0] (BRG-0042 x 10 BOX) is too large"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn a_total_too_large_to_add_up_is_refused_at_its_first_line() {
        let (erp, buyer) = Po::drafter();
        Po::set_price_of(&erp, "BRG-0042", Uom::Pcs, "40000000000000000000000000000");
        Po::set_price_of(&erp, "BRG-0043", Uom::Pcs, "40000000000000000000000000000");
        let input = Po::input("V-00231", &[("BRG-0042", 1, Uom::Pcs), ("BRG-0043", 1, Uom::Pcs)]);
        let err = Po::refused(&erp, &buyer.draft("k1"), input).await;
        let found = issues(&err);
        assert_eq!(found.len(), 1, "{err:?}");
        assert_eq!(found[0].0, "lines[0]");
        assert_eq!(Po::last_number(&erp), 3);
    }

    #[tokio::test]
    async fn a_total_of_ten_to_the_fourteen_is_refused_naming_the_line_and_the_largest_total() {
        // 100000 PCS at 1000000000.00 IDR: 10^14 IDR, one hundredth more
        // than a tenant's limits can count (it answered 500 before).
        let (erp, buyer) = Po::drafter();
        Po::set_price_of(&erp, "BRG-0043", Uom::Pcs, "1000000000.00");
        let input = Po::input("V-00231", &[("BRG-0042", 1, Uom::Box), ("BRG-0043", 100_000, Uom::Pcs)]);
        let err = Po::refused(&erp, &buyer.draft("k1"), input).await;
        assert!(matches!(err, ToolError::Validation { .. }), "{err:?}");
        let found = issues(&err);
        assert_eq!(found.len(), 1, "{err:?}");
        let (path, message) = &found[0];
        assert_eq!(*path, "lines[1]");
        assert!(
            message.contains("takes the draft's total to 100000000288000.00 IDR")
                && message.contains("the largest total a draft may have, 99999999999999.99 IDR"),
            "{message}"
        );
        assert_eq!(Po::last_number(&erp), 3, "nothing was numbered");
        // One hundredth less than the largest fits.
        Po::set_price_of(&erp, "BRG-0043", Uom::Pcs, "999999999.99");
        let po = Po::created(
            &erp,
            &buyer.draft("k2"),
            Po::input("V-00231", &[("BRG-0043", 100_000, Uom::Pcs)]),
        )
        .await;
        assert_eq!(po.total.amount, "99999999999000.00");
    }

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
