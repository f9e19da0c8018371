//! `inventory_list_below_reorder`: the examiner of the reorder job. Every
//! item of the caller's branch at or below its reorder point, with its stock,
//! a suggested order in a valid unit, and the preferred vendor's price.

use std::collections::HashMap;

use async_trait::async_trait;
use draftline_contract::ToolError;
use draftline_contract::cursor::CursorScope;
use draftline_contract::tool::{Call, ReadTool, ToolMeta, ToolSpec};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use validator::Validate;

use crate::domain::po::VendorRef;
use crate::domain::{BranchVendor, Item, PriceEntry};
use crate::money::{self, Money, ROUNDING_RULE};
use crate::port::{DueItem, Scope};
use crate::pricing;
use crate::reorder::{self, SUGGESTION_RULE};
use crate::units::Uom;

/// The page size when `limit` is null.
const DEFAULT_LIMIT: u32 = 20;

/// Input of `inventory_list_below_reorder`.
#[derive(Debug, Clone, Serialize, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListBelowReorderInput {
    /// Items per page, 1-50; null for 20.
    #[validate(range(min = 1, max = 50))]
    pub limit: Option<u32>,
    /// null for the first page; otherwise next_cursor from the previous answer, unchanged.
    #[validate(custom(function = "super::cursor"))]
    #[schemars(pattern(super::CURSOR_PATTERN))]
    pub cursor: Option<String>,
}

/// Where a listing continues (inside the sealed cursor).
#[derive(Debug, Serialize, Deserialize)]
struct Position {
    after_item: String,
}

/// One item that needs reordering.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReorderLine {
    /// Item code.
    pub item_code: String,
    /// Item description.
    pub item_name: String,
    /// The unit stock figures are in.
    pub base_uom: Uom,
    /// The units it can be ordered in, with conversions (`PCS, BOX (1 BOX = 24 PCS)`).
    pub allowed_units: String,
    /// On hand, all warehouses of the branch (base unit).
    pub on_hand: i64,
    /// Reserved for open sales orders (base unit).
    pub reserved: i64,
    /// on_hand - reserved (base unit).
    pub available: i64,
    /// Reorder when available is at or below this (base unit).
    pub reorder_point: i64,
    /// The usual order quantity (base unit).
    pub reorder_qty: i64,
    /// Suggested quantity, in whole suggested_uom.
    pub suggested_qty: i64,
    /// The unit of suggested_qty; valid for the item and priced by the vendor when one is shown.
    pub suggested_uom: Uom,
    /// suggested_qty in the base unit.
    pub suggested_base_qty: i64,
    /// The preferred vendor, or null when it does not supply your branch.
    pub preferred_vendor: Option<VendorRef>,
    /// The vendor's current price per suggested_uom, or null when it has none.
    pub unit_price: Option<Money>,
    /// Where unit_price came from.
    pub price_source: Option<String>,
    /// suggested_qty x unit_price, rounded; what the draft would cost.
    pub estimated_total: Option<Money>,
    /// What to do when the vendor or price is missing; null when the line is ready to order.
    pub note: Option<String>,
}

/// Output of `inventory_list_below_reorder`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListBelowReorderOutput {
    /// The caller's branch; other branches are never included.
    pub branch_id: String,
    /// Items at or below their reorder point, by item code.
    pub items: Vec<ReorderLine>,
    /// Pass this back as cursor for the next page; null when this is the last page.
    pub next_cursor: Option<String>,
    /// How suggested quantities are computed.
    pub suggestion_rule: String,
    /// How amounts are rounded.
    pub rounding: String,
}

super::erp_tool!(InventoryListBelowReorder);

impl ToolSpec for InventoryListBelowReorder {
    type Input = ListBelowReorderInput;
    type Output = ListBelowReorderOutput;
    const META: ToolMeta = ToolMeta {
        name: "inventory_list_below_reorder",
        title: "List items to reorder",
        description: "Lists every item of your branch whose available stock is at or below its reorder point, with \
what to order. Use it first for a reorder job: it replaces reading stock, policies, units and vendor prices item by \
item. Each item comes with on-hand, reserved and available stock (base unit), the reorder point, a suggested quantity \
in a unit the item can be ordered in, the preferred vendor (code and name) and its current price for that unit; when \
the preferred vendor does not supply your branch, preferred_vendor is null and a note says to call \
purchasing_search_vendors. Results are sorted by item code, at most limit per page (1-50, default 20); pass \
next_cursor back as cursor for the next page. Nothing is ordered: the vendor code, suggested quantity and unit go \
unchanged into a purchase-order draft of the purchasing module; for one item's stock per warehouse use \
inventory_get_stock. Example: {\"limit\": 20, \"cursor\": null}",
        module: "inventory",
        scope: "inventory:read",
    };
}

#[async_trait]
impl ReadTool for InventoryListBelowReorder {
    async fn read(&self, call: &Call<'_>, input: ListBelowReorderInput) -> Result<ListBelowReorderOutput, ToolError> {
        let branch = call.caller.branch();
        let scope = Scope::of(call.caller);
        // The listing has no filters: the cursor is bound to caller and tool only.
        let pages = CursorScope::new(call.cursors, call.caller, Self::META.name, &())?;
        let after: Option<Position> = pages.open(input.cursor.as_deref())?;
        let want = super::page_size(input.limit, DEFAULT_LIMIT);

        let page = self
            .erp
            .due_items(&scope, after.as_ref().map(|p| p.after_item.as_str()), want)
            .await?;
        let codes: Vec<String> = page.items.iter().map(|d| d.policy.item.clone()).collect();
        let vendor_codes: Vec<String> = page.items.iter().map(|d| d.policy.preferred_vendor.clone()).collect();
        let (items, vendors) = self.erp.items_and_branch_vendors(&scope, &codes, &vendor_codes).await?;

        // Prices only for vendors that supply the branch, in every unit of the item.
        let wanted: Vec<(String, String, Uom)> = page
            .items
            .iter()
            .filter(|d| vendors.contains_key(&d.policy.preferred_vendor))
            .filter_map(|d| items.get(&d.policy.item).map(|item| (d, item)))
            .flat_map(|(d, item)| {
                item.units
                    .iter()
                    .map(|u| (d.policy.preferred_vendor.clone(), item.code.clone(), u.uom))
            })
            .collect();
        let prices = if wanted.is_empty() {
            Vec::new()
        } else {
            self.erp.vendor_prices(&scope, &wanted).await?
        };

        let lines = page
            .items
            .iter()
            .map(|due| {
                let item = items.get(&due.policy.item).ok_or_else(|| {
                    ToolError::internal(format!(
                        "reorder policy for {} names an item missing from the item master",
                        due.policy.item
                    ))
                })?;
                Ok(reorder_line(due, item, &vendors, &prices))
            })
            .collect::<Result<Vec<_>, ToolError>>()?;
        let next_cursor = page
            .next_after
            .map(|after_item| pages.seal(&Position { after_item }))
            .transpose()?;
        Ok(ListBelowReorderOutput {
            branch_id: branch.to_string(),
            items: lines,
            next_cursor,
            suggestion_rule: SUGGESTION_RULE.to_owned(),
            rounding: ROUNDING_RULE.to_owned(),
        })
    }
}

/// One answer line: stock, the suggestion in a priced unit, and its price.
fn reorder_line(
    due: &DueItem,
    item: &Item,
    vendors: &HashMap<String, BranchVendor>,
    prices: &[PriceEntry],
) -> ReorderLine {
    let vendor = vendors.get(&due.policy.preferred_vendor);
    let price_of = |uom: Uom| {
        prices
            .iter()
            .find(|p| p.vendor == due.policy.preferred_vendor && p.item == item.code && p.uom == uom)
            .map(|p| p.unit_price)
    };
    let priced_units: Vec<Uom> = item
        .units
        .iter()
        .map(|u| u.uom)
        .filter(|u| vendor.is_some() && price_of(*u).is_some())
        .collect();
    let available = due.available();
    let suggestion = reorder::suggest(item, reorder::need(&due.policy, available), &priced_units);
    let priced = vendor.and_then(|v| pricing::unit_price(&v.code, item, suggestion.uom, price_of));
    let currency = vendor.map_or("IDR", |v| v.currency.as_str());
    let note = match (vendor, &priced) {
        (None, _) => Some(format!(
            "Preferred vendor {} does not supply your branch. Call purchasing_search_vendors with item_code {} to \
             find one that does.",
            due.policy.preferred_vendor, item.code
        )),
        (Some(v), None) => Some(format!(
            "Vendor {} has no price for {}. Call purchasing_search_vendors with item_code {} to find a vendor that \
             prices it.",
            v.code, item.code, item.code
        )),
        (Some(_), Some(_)) => None,
    };
    ReorderLine {
        item_code: item.code.clone(),
        item_name: item.name.clone(),
        base_uom: item.base_uom,
        allowed_units: item.describe_units(),
        on_hand: due.on_hand(),
        reserved: due.reserved(),
        available,
        reorder_point: due.policy.reorder_point,
        reorder_qty: due.policy.reorder_qty,
        suggested_qty: suggestion.qty,
        suggested_uom: suggestion.uom,
        suggested_base_qty: suggestion.base_qty,
        preferred_vendor: vendor.map(|v| VendorRef {
            code: v.code.clone(),
            name: v.name.clone(),
        }),
        unit_price: priced.as_ref().map(|p| Money::new(p.unit_price, currency)),
        price_source: priced.as_ref().map(|p| p.source.clone()),
        // An estimate too large to compute is left out rather than guessed.
        estimated_total: priced
            .as_ref()
            .and_then(|p| money::net(p.unit_price, suggestion.qty))
            .map(|total| Money::new(total, currency)),
        note,
    }
}

#[cfg(test)]
mod tests {
    use rust_decimal::Decimal;
    use std::str::FromStr;

    use super::*;
    use crate::testing::{MemoryErp, TestCaller};

    fn first_page(limit: Option<u32>) -> ListBelowReorderInput {
        ListBelowReorderInput { limit, cursor: None }
    }

    async fn list(erp: &MemoryErp, user: &str, input: ListBelowReorderInput) -> ListBelowReorderOutput {
        let caller = TestCaller::demo(user).unwrap();
        InventoryListBelowReorder::new(erp.port())
            .read(&caller.call(), input)
            .await
            .unwrap()
    }

    fn line<'a>(out: &'a ListBelowReorderOutput, item: &str) -> &'a ReorderLine {
        out.items.iter().find(|l| l.item_code == item).unwrap()
    }

    fn codes(out: &ListBelowReorderOutput) -> Vec<&str> {
        out.items.iter().map(|l| l.item_code.as_str()).collect()
    }

    #[tokio::test]
    async fn only_the_branchs_items_at_or_below_their_reorder_point_are_listed_by_code() {
        let erp = MemoryErp::demo().unwrap();
        let sby = list(&erp, "buyer-sby", first_page(None)).await;
        assert_eq!(sby.branch_id, "SBY-01");
        // BRG-0043 (380 available, point 96) and OIL-0310 (600, point 200) are not due.
        assert_eq!(codes(&sby), ["BLT-0107", "BRG-0042", "VBT-0220"]);
        assert_eq!(sby.next_cursor, None);
        let bdg = list(&erp, "sales-bdg", first_page(None)).await;
        assert_eq!(codes(&bdg), ["BRG-0042", "GLV-0015", "WLD-0501"]);
    }

    #[tokio::test]
    async fn the_suggestion_is_whole_boxes_priced_from_the_preferred_vendors_box_price() {
        let erp = MemoryErp::demo().unwrap();
        let out = list(&erp, "buyer-sby", first_page(None)).await;
        let bearing = line(&out, "BRG-0042");
        assert_eq!((bearing.on_hand, bearing.reserved, bearing.available), (40, 12, 28));
        assert_eq!(bearing.allowed_units, "PCS, BOX (1 BOX = 24 PCS)");
        // 240 PCS needed = 10 BOX of 24.
        assert_eq!(
            (bearing.suggested_qty, bearing.suggested_uom, bearing.suggested_base_qty),
            (10, Uom::Box, 240)
        );
        assert_eq!(bearing.preferred_vendor.as_ref().unwrap().code, "V-00231");
        assert_eq!(bearing.unit_price.as_ref().unwrap().amount, "288000.00");
        assert_eq!(
            bearing.price_source.as_deref(),
            Some("price list V-00231, BRG-0042 per BOX")
        );
        assert_eq!(bearing.estimated_total.as_ref().unwrap().amount, "2880000.00");
        assert_eq!(bearing.note, None);
        let bolts = line(&out, "BLT-0107");
        assert_eq!(
            (bolts.suggested_qty, bolts.suggested_uom, bolts.suggested_base_qty),
            (10, Uom::Box, 1000)
        );
        assert_eq!(bolts.estimated_total.as_ref().unwrap().amount, "1100000.00");
        // An item that only comes in pieces is suggested in pieces.
        let belts = line(&out, "VBT-0220");
        assert_eq!((belts.suggested_qty, belts.suggested_uom), (20, Uom::Pcs));
        assert_eq!(belts.estimated_total.as_ref().unwrap().amount, "760000.00");
    }

    #[tokio::test]
    async fn a_unit_the_vendor_does_not_price_is_not_suggested() {
        let erp = MemoryErp::demo().unwrap();
        erp.edit(|b| b.prices.retain(|p| !(p.item == "BRG-0042" && p.uom == Uom::Box)));
        let out = list(&erp, "buyer-sby", first_page(None)).await;
        let bearing = line(&out, "BRG-0042");
        assert_eq!((bearing.suggested_qty, bearing.suggested_uom), (240, Uom::Pcs));
        assert_eq!(bearing.unit_price.as_ref().unwrap().amount, "12500.00");
        assert_eq!(bearing.estimated_total.as_ref().unwrap().amount, "3000000.00");
    }

    #[tokio::test]
    async fn a_preferred_vendor_that_does_not_supply_the_branch_is_null_with_a_note() {
        let erp = MemoryErp::demo().unwrap();
        let out = list(&erp, "sales-bdg", first_page(None)).await;
        let electrodes = line(&out, "WLD-0501");
        assert_eq!(electrodes.preferred_vendor, None);
        assert_eq!(electrodes.unit_price, None);
        assert_eq!(electrodes.estimated_total, None);
        let note = electrodes.note.as_deref().unwrap();
        assert!(
            note.starts_with("Preferred vendor V-00415 does not supply your branch."),
            "{note}"
        );
        assert!(
            note.contains("purchasing_search_vendors with item_code WLD-0501"),
            "{note}"
        );
        // Still a valid unit of the item: 50 KG needed = 10 BOX of 5.
        assert_eq!((electrodes.suggested_qty, electrodes.suggested_uom), (10, Uom::Box));
        // Gloves' vendor V-00612 supplies Bandung: priced.
        let gloves = line(&out, "GLV-0015");
        assert_eq!(gloves.estimated_total.as_ref().unwrap().amount, "1050000.00");
    }

    #[tokio::test]
    async fn a_vendor_without_a_price_for_the_item_gets_a_note() {
        let erp = MemoryErp::demo().unwrap();
        erp.edit(|b| b.prices.retain(|p| p.item != "VBT-0220"));
        let out = list(&erp, "buyer-sby", first_page(None)).await;
        let belts = line(&out, "VBT-0220");
        assert_eq!(belts.preferred_vendor.as_ref().unwrap().code, "V-00231");
        assert_eq!(belts.unit_price, None);
        assert!(
            belts
                .note
                .as_deref()
                .unwrap()
                .starts_with("Vendor V-00231 has no price for VBT-0220.")
        );
    }

    #[tokio::test]
    async fn an_estimate_too_large_to_compute_is_left_out_not_guessed() {
        let erp = MemoryErp::demo().unwrap();
        let huge = Decimal::from_str("10000000000000000000000000000").unwrap();
        erp.edit(|b| {
            for p in b
                .prices
                .iter_mut()
                .filter(|p| p.item == "BRG-0042" && p.uom == Uom::Box)
            {
                p.unit_price = huge;
            }
        });
        let out = list(&erp, "buyer-sby", first_page(None)).await;
        let bearing = line(&out, "BRG-0042");
        assert!(bearing.unit_price.is_some());
        assert_eq!(bearing.estimated_total, None);
        // The other lines are unaffected.
        assert_eq!(
            line(&out, "BLT-0107").estimated_total.as_ref().unwrap().amount,
            "1100000.00"
        );
    }

    #[tokio::test]
    async fn pages_continue_where_the_last_one_ended() {
        let erp = MemoryErp::demo().unwrap();
        let first = list(&erp, "buyer-sby", first_page(Some(2))).await;
        assert_eq!(codes(&first), ["BLT-0107", "BRG-0042"]);
        let cursor = first.next_cursor.clone().unwrap();
        let next = ListBelowReorderInput {
            limit: Some(2),
            cursor: Some(cursor),
        };
        let second = list(&erp, "buyer-sby", next).await;
        assert_eq!(codes(&second), ["VBT-0220"]);
        assert_eq!(second.next_cursor, None);
    }

    #[tokio::test]
    async fn a_cursor_sealed_for_another_branch_is_refused() {
        let erp = MemoryErp::demo().unwrap();
        let cursor = list(&erp, "buyer-sby", first_page(Some(1))).await.next_cursor.unwrap();
        let jkt = TestCaller::demo("buyer-jkt").unwrap();
        let input = ListBelowReorderInput {
            limit: Some(1),
            cursor: Some(cursor),
        };
        let err = InventoryListBelowReorder::new(erp.port())
            .read(&jkt.call(), input)
            .await
            .unwrap_err();
        assert_eq!(err.details().unwrap()[0].path, "cursor");
    }
}
