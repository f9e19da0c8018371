//! `purchasing_search_vendors`: vendors that supply the caller's branch, by
//! name, code or an item they supply, with their prices for that item.

use async_trait::async_trait;
use draftline_contract::ToolError;
use draftline_contract::cursor::CursorScope;
use draftline_contract::error::FieldIssue;
use draftline_contract::tool::{Call, ReadTool, ToolMeta, ToolSpec};
use draftline_contract::validation::rejected_with;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use validator::Validate;

use crate::domain::BranchVendor;
use crate::money::Money;
use crate::port::{Page, Scope};
use crate::units::Uom;

/// The page size when `limit` is null.
const DEFAULT_LIMIT: u32 = 10;
/// How many supplied item codes a vendor shows.
const ITEMS_SHOWN: usize = 20;

/// Input of `purchasing_search_vendors`. Filters combine (AND); all null lists every vendor of your branch.
#[derive(Debug, Clone, Serialize, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchVendorsInput {
    /// A vendor code (V-00231) or part of a vendor name (bearindo), case-insensitive; or null.
    #[validate(custom(function = "super::search_text"))]
    #[schemars(pattern(super::SEARCH_TEXT_PATTERN))]
    #[schemars(length(min = 1, max = 64))]
    pub query: Option<String>,
    /// Only vendors that supply this item (BRG-0042), with their prices for it; or null.
    #[validate(custom(function = "super::code"))]
    #[schemars(pattern(super::CODE_PATTERN))]
    pub item_code: Option<String>,
    /// Vendors per page, 1-50; null for 10.
    #[validate(range(min = 1, max = 50))]
    pub limit: Option<u32>,
    /// null for the first page; otherwise next_cursor from the previous answer, unchanged.
    #[validate(custom(function = "super::cursor"))]
    #[schemars(pattern(super::CURSOR_PATTERN))]
    pub cursor: Option<String>,
}

/// The filters a cursor is bound to.
#[derive(Debug, Serialize)]
struct Filters<'a> {
    query: Option<String>,
    item_code: Option<&'a str>,
}

/// Where a listing continues (inside the sealed cursor).
#[derive(Debug, Serialize, Deserialize)]
struct Position {
    after_vendor: String,
}

/// A vendor's price for the searched item in one unit.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VendorPrice {
    /// The item.
    pub item_code: String,
    /// The unit the price is for.
    pub uom: Uom,
    /// Current price per uom.
    pub unit_price: Money,
}

/// One vendor found.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VendorMatch {
    /// Vendor code: pass it as vendor_code to purchasing_create_po_draft.
    pub code: String,
    /// Name.
    pub name: String,
    /// The currency it invoices in.
    pub currency: String,
    /// Payment terms in days.
    pub payment_terms_days: i64,
    /// Codes of items on its price list (at most 20 shown).
    pub items_supplied: Vec<String>,
    /// How many items its price list has in all.
    pub items_supplied_count: u32,
    /// Its prices for item_code, one per unit it prices; empty when no item_code was given.
    pub prices: Vec<VendorPrice>,
}

/// Output of `purchasing_search_vendors`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchVendorsOutput {
    /// The caller's branch; only vendors that supply it are listed.
    pub branch_id: String,
    /// Matching vendors, by code.
    pub vendors: Vec<VendorMatch>,
    /// Pass this back as cursor for the next page; null when this is the last page.
    pub next_cursor: Option<String>,
}

super::erp_tool!(PurchasingSearchVendors);

impl ToolSpec for PurchasingSearchVendors {
    type Input = SearchVendorsInput;
    type Output = SearchVendorsOutput;
    const META: ToolMeta = ToolMeta {
        name: "purchasing_search_vendors",
        title: "Search vendors",
        description: "Finds the vendors that supply your branch, by vendor code, part of the name, or an item they \
supply. Filters combine; with all of them null every vendor of your branch is listed. Vendors that do not supply your \
branch are never returned. Returns each vendor's code, name, currency, payment terms and supplied items, plus its \
current prices for item_code in every unit it prices; at most limit vendors per page (1-50, default 10), pass \
next_cursor back as cursor for the next page. Use the code as vendor_code in purchasing_create_po_draft; for what \
needs ordering call inventory_list_below_reorder. \
Example: {\"query\": null, \"item_code\": \"BRG-0042\", \"limit\": 10, \"cursor\": null}",
        module: "purchasing",
        scope: "purchasing:read",
    };
}

#[async_trait]
impl ReadTool for PurchasingSearchVendors {
    async fn read(&self, call: &Call<'_>, input: SearchVendorsInput) -> Result<SearchVendorsOutput, ToolError> {
        let branch = call.caller.branch();
        let scope = Scope::of(call.caller);
        let query = input.query.as_deref().map(str::trim).map(str::to_owned);
        let filters = Filters {
            query: query.as_ref().map(|q| q.to_lowercase()),
            item_code: input.item_code.as_deref(),
        };
        let pages = CursorScope::new(call.cursors, call.caller, Self::META.name, &filters)?;
        let after: Option<Position> = pages.open(input.cursor.as_deref())?;
        let want = super::page_size(input.limit, DEFAULT_LIMIT);

        let (vendors, item) = match &input.item_code {
            Some(code) => {
                let (vendors, item) = tokio::try_join!(self.erp.branch_vendors(&scope), self.erp.item(&scope, code))?;
                let item = item.ok_or_else(|| {
                    rejected_with(
                        vec![FieldIssue::new(
                            "item_code",
                            format!(
                                "Item {code} does not exist. Check the code with inventory_get_stock, or leave \
                                 item_code null and search by vendor name"
                            ),
                        )],
                        "Nothing was read.",
                    )
                })?;
                (vendors, Some(item))
            }
            None => (self.erp.branch_vendors(&scope).await?, None),
        };
        let mut matching: Vec<BranchVendor> = vendors
            .into_iter()
            .filter(|v| query.as_deref().is_none_or(|q| v.matches(q)))
            .filter(|v| item.as_ref().is_none_or(|i| v.items.contains(&i.code)))
            .filter(|v| after.as_ref().is_none_or(|p| v.code > p.after_vendor))
            .collect();
        matching.sort_by(|a, b| a.code.cmp(&b.code));
        let Page {
            items: matching,
            next_after,
        } = Page::first(matching, want, |v| v.code.clone());

        let prices = match &item {
            Some(item) if !matching.is_empty() => {
                let wanted: Vec<(String, String, Uom)> = matching
                    .iter()
                    .flat_map(|v| item.units.iter().map(|u| (v.code.clone(), item.code.clone(), u.uom)))
                    .collect();
                self.erp.vendor_prices(&scope, &wanted).await?
            }
            _ => Vec::new(),
        };
        let next_cursor = next_after
            .map(|after_vendor| pages.seal(&Position { after_vendor }))
            .transpose()?;
        let vendors = matching
            .into_iter()
            .map(|v| {
                let mut own: Vec<VendorPrice> = prices
                    .iter()
                    .filter(|p| p.vendor == v.code)
                    .map(|p| VendorPrice {
                        item_code: p.item.clone(),
                        uom: p.uom,
                        unit_price: Money::new(p.unit_price, &v.currency),
                    })
                    .collect();
                own.sort_by_key(|p| p.uom);
                VendorMatch {
                    items_supplied_count: u32::try_from(v.items.len()).unwrap_or(u32::MAX),
                    items_supplied: v.items.iter().take(ITEMS_SHOWN).cloned().collect(),
                    code: v.code,
                    name: v.name,
                    currency: v.currency,
                    payment_terms_days: v.payment_terms_days,
                    prices: own,
                }
            })
            .collect();
        Ok(SearchVendorsOutput {
            branch_id: branch.to_string(),
            vendors,
            next_cursor,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{MemoryErp, TestCaller};

    fn search(query: Option<&str>, item_code: Option<&str>) -> SearchVendorsInput {
        SearchVendorsInput {
            query: query.map(str::to_owned),
            item_code: item_code.map(str::to_owned),
            limit: None,
            cursor: None,
        }
    }

    async fn run(erp: &MemoryErp, user: &str, input: SearchVendorsInput) -> Result<SearchVendorsOutput, ToolError> {
        let caller = TestCaller::demo(user).unwrap();
        PurchasingSearchVendors::new(erp.port())
            .read(&caller.call(), input)
            .await
    }

    fn codes(out: &SearchVendorsOutput) -> Vec<&str> {
        out.vendors.iter().map(|v| v.code.as_str()).collect()
    }

    #[tokio::test]
    async fn every_vendor_that_supplies_the_branch_is_listed_by_code_and_no_other() {
        let erp = MemoryErp::demo().unwrap();
        let sby = run(&erp, "buyer-sby", search(None, None)).await.unwrap();
        assert_eq!(sby.branch_id, "SBY-01");
        assert_eq!(codes(&sby), ["V-00231", "V-00415", "V-00508"]);
        let bearindo = &sby.vendors[0];
        assert_eq!(bearindo.items_supplied, ["BRG-0042", "BRG-0043", "VBT-0220"]);
        assert_eq!(bearindo.items_supplied_count, 3);
        assert!(bearindo.prices.is_empty());
        let bdg = run(&erp, "sales-bdg", search(None, None)).await.unwrap();
        assert_eq!(codes(&bdg), ["V-00231", "V-00508", "V-00612"]);
    }

    #[tokio::test]
    async fn an_item_code_finds_its_vendors_with_their_price_in_every_unit() {
        let erp = MemoryErp::demo().unwrap();
        let out = run(&erp, "buyer-sby", search(None, Some("BRG-0042"))).await.unwrap();
        assert_eq!(codes(&out), ["V-00231"]);
        let prices: Vec<(Uom, &str)> = out.vendors[0]
            .prices
            .iter()
            .map(|p| (p.uom, p.unit_price.amount.as_str()))
            .collect();
        assert_eq!(prices, [(Uom::Pcs, "12500.00"), (Uom::Box, "288000.00")]);
        assert_eq!(out.vendors[0].prices[0].unit_price.currency, "IDR");
    }

    #[tokio::test]
    async fn a_vendor_of_other_branches_only_is_found_by_neither_name_code_nor_item() {
        let erp = MemoryErp::demo().unwrap();
        // V-00612, PT Kabel Prima, supplies Jakarta and Bandung.
        for input in [
            search(Some("V-00612"), None),
            search(Some("kabel"), None),
            search(None, Some("CBL-0220")),
        ] {
            let out = run(&erp, "buyer-sby", input.clone()).await.unwrap();
            assert!(out.vendors.is_empty(), "{input:?}");
            let jkt = run(&erp, "buyer-jkt", input).await.unwrap();
            assert_eq!(codes(&jkt), ["V-00612"]);
        }
    }

    #[tokio::test]
    async fn a_name_query_is_trimmed_and_case_insensitive_and_filters_combine() {
        let erp = MemoryErp::demo().unwrap();
        let out = run(&erp, "buyer-sby", search(Some("  BEARINDO "), None)).await.unwrap();
        assert_eq!(codes(&out), ["V-00231"]);
        let both = run(&erp, "buyer-sby", search(Some("bearindo"), Some("OIL-0310")))
            .await
            .unwrap();
        assert!(both.vendors.is_empty());
    }

    #[tokio::test]
    async fn an_unknown_item_is_refused_with_a_next_step() {
        let erp = MemoryErp::demo().unwrap();
        let err = run(&erp, "buyer-sby", search(None, Some("BRG-9999")))
            .await
            .unwrap_err();
        let issue = &err.details().unwrap()[0];
        assert_eq!(issue.path, "item_code");
        assert!(
            issue.message.starts_with("Item BRG-9999 does not exist."),
            "{}",
            issue.message
        );
    }

    #[tokio::test]
    async fn pages_continue_after_the_last_vendor_shown() {
        let erp = MemoryErp::demo().unwrap();
        let mut input = search(None, None);
        input.limit = Some(2);
        let first = run(&erp, "buyer-sby", input.clone()).await.unwrap();
        assert_eq!(codes(&first), ["V-00231", "V-00415"]);
        input.cursor = first.next_cursor;
        let second = run(&erp, "buyer-sby", input).await.unwrap();
        assert_eq!(codes(&second), ["V-00508"]);
        assert_eq!(second.next_cursor, None);
    }

    #[tokio::test]
    async fn a_cursor_is_bound_to_the_filters_it_was_made_for() {
        let erp = MemoryErp::demo().unwrap();
        let mut input = search(None, None);
        input.limit = Some(1);
        let first = run(&erp, "buyer-sby", input).await.unwrap();
        let mut other = search(Some("baut"), None);
        other.cursor = first.next_cursor;
        let err = run(&erp, "buyer-sby", other).await.unwrap_err();
        assert_eq!(err.details().unwrap()[0].path, "cursor");
    }
}
