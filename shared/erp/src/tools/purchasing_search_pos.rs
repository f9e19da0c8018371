//! `purchasing_search_pos`: purchase orders of the caller's branch by status,
//! vendor and creation date, newest first, paginated with a sealed cursor.

use async_trait::async_trait;
use chrono::NaiveDate;
use draftline_contract::ToolError;
use draftline_contract::cursor::CursorScope;
use draftline_contract::error::FieldIssue;
use draftline_contract::tool::{Call, ReadTool, RuleContext, ToolMeta, ToolSpec};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use validator::Validate;

use crate::domain::PoStatus;
use crate::domain::po::VendorRef;
use crate::money::Money;
use crate::port::{PoFilter, Scope};

/// The page size when `limit` is null.
const DEFAULT_LIMIT: u32 = 20;
/// How many DynamoDB pages one call evaluates before it hands out a cursor.
const MAX_QUERY_PAGES: usize = 5;

/// Input of `purchasing_search_pos`. Filters combine (AND); all null lists every order of your branch.
#[derive(Debug, Clone, Serialize, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchPosInput {
    /// Only orders in this status (a search filter: it never changes an order), or null for any.
    pub status: Option<PoStatus>,
    /// Only orders to this vendor (V-00231), or null.
    #[validate(custom(function = "super::code"))]
    #[schemars(pattern(super::CODE_PATTERN))]
    pub vendor_code: Option<String>,
    /// Only orders created on or after this day, YYYY-MM-DD (UTC), or null.
    #[serde(default, deserialize_with = "draftline_contract::validation::date::strict_opt")]
    pub created_from: Option<NaiveDate>,
    /// Only orders created on or before this day, YYYY-MM-DD (UTC), or null.
    #[serde(default, deserialize_with = "draftline_contract::validation::date::strict_opt")]
    pub created_to: Option<NaiveDate>,
    /// Orders per page, 1-50; null for 20.
    #[validate(range(min = 1, max = 50))]
    pub limit: Option<u32>,
    /// null for the first page; otherwise next_cursor from the previous answer, unchanged (same filters).
    #[validate(custom(function = "super::cursor"))]
    #[schemars(pattern(super::CURSOR_PATTERN))]
    pub cursor: Option<String>,
}

/// Where a listing continues (inside the sealed cursor).
#[derive(Debug, Serialize, Deserialize)]
struct Position {
    after_po: String,
}

/// One purchase order found.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PoSummary {
    /// The PO number; purchasing_get_po reads the whole order.
    pub po_number: String,
    /// Its status.
    pub status: PoStatus,
    /// The vendor.
    pub vendor: VendorRef,
    /// When it was created (RFC 3339, UTC).
    pub created_at: String,
    /// When the goods are needed (YYYY-MM-DD).
    pub needed_by: NaiveDate,
    /// The order total.
    pub total: Money,
    /// How many lines it has.
    pub line_count: u32,
    /// The agent run that drafted it, if an agent did.
    pub drafted_by_agent_run: Option<String>,
    /// The person it was drafted for.
    pub drafted_on_behalf_of: String,
}

/// Output of `purchasing_search_pos`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchPosOutput {
    /// The caller's branch; other branches' orders are never included.
    pub branch_id: String,
    /// Matching orders, newest (highest number) first.
    pub purchase_orders: Vec<PoSummary>,
    /// Pass this back as cursor, with the same filters, for the next page; null when there are no more.
    pub next_cursor: Option<String>,
}

super::erp_tool!(PurchasingSearchPos);

impl ToolSpec for PurchasingSearchPos {
    type Input = SearchPosInput;
    type Output = SearchPosOutput;
    const META: ToolMeta = ToolMeta {
        name: "purchasing_search_pos",
        title: "Search purchase orders",
        description: "Searches the purchase orders of your branch by status, vendor and creation date range. \
Filters combine; with all of them null every order of your branch is listed; status is only a search filter \
(draft, approved, sent, received, cancelled) and never changes an order. Other branches' orders are never returned. \
Returns PO number, status, vendor, dates, total and who drafted each order, newest first, at most limit per page \
(1-50, default 20); when next_cursor is not null, call again with the same filters and cursor set to it (a page may \
be short and still have a next_cursor). To read one order in full use purchasing_get_po; to create one use \
purchasing_create_po_draft. \
Example: {\"status\": \"draft\", \"vendor_code\": null, \"created_from\": \"2026-11-01\", \"created_to\": null, \
\"limit\": 20, \"cursor\": null}",
        module: "purchasing",
        scope: "purchasing:read",
    };

    fn rules(input: &SearchPosInput, _ctx: &RuleContext) -> Vec<FieldIssue> {
        match (input.created_from, input.created_to) {
            (Some(from), Some(to)) if from > to => vec![FieldIssue::new(
                "created_to",
                format!("{to} is before created_from {from}; send a range whose start is not after its end"),
            )],
            _ => Vec::new(),
        }
    }
}

#[async_trait]
impl ReadTool for PurchasingSearchPos {
    async fn read(&self, call: &Call<'_>, input: SearchPosInput) -> Result<SearchPosOutput, ToolError> {
        let branch = call.caller.branch();
        // The filters a cursor is bound to.
        let filter = PoFilter {
            status: input.status,
            vendor_code: input.vendor_code,
            created_from: input.created_from,
            created_to: input.created_to,
        };
        let pages = CursorScope::new(call.cursors, call.caller, Self::META.name, &filter)?;
        let after: Option<Position> = pages.open(input.cursor.as_deref())?;
        // The position is only ever a PO number; anything else was not sealed by us.
        if after.as_ref().is_some_and(|p| super::po_number(&p.after_po).is_err()) {
            return Err(draftline_contract::cursor::foreign_cursor());
        }
        let page = self
            .erp
            .search_purchase_orders(
                &Scope::of(call.caller),
                &filter,
                after.as_ref().map(|p| p.after_po.as_str()),
                super::page_size(input.limit, DEFAULT_LIMIT),
                MAX_QUERY_PAGES,
            )
            .await?;
        let next_cursor = page
            .next_after
            .map(|after_po| pages.seal(&Position { after_po }))
            .transpose()?;
        Ok(SearchPosOutput {
            branch_id: branch.to_string(),
            purchase_orders: page
                .items
                .into_iter()
                .map(|po| PoSummary {
                    line_count: u32::try_from(po.lines.len()).unwrap_or(u32::MAX),
                    po_number: po.po_number,
                    status: po.status,
                    vendor: po.vendor,
                    created_at: po.created_at,
                    needed_by: po.needed_by,
                    total: po.total,
                    drafted_by_agent_run: po.drafted_by_agent_run,
                    drafted_on_behalf_of: po.drafted_on_behalf_of,
                })
                .collect(),
            next_cursor,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{MemoryErp, TestCaller};

    fn every() -> SearchPosInput {
        SearchPosInput {
            status: None,
            vendor_code: None,
            created_from: None,
            created_to: None,
            limit: None,
            cursor: None,
        }
    }

    async fn run(erp: &MemoryErp, user: &str, input: SearchPosInput) -> Result<SearchPosOutput, ToolError> {
        let caller = TestCaller::demo(user).unwrap();
        PurchasingSearchPos::new(erp.port()).read(&caller.call(), input).await
    }

    fn numbers(out: &SearchPosOutput) -> Vec<&str> {
        out.purchase_orders.iter().map(|po| po.po_number.as_str()).collect()
    }

    #[tokio::test]
    async fn the_branchs_orders_are_listed_newest_first_and_no_other_branchs() {
        let erp = MemoryErp::demo().unwrap();
        let out = run(&erp, "buyer-sby", every()).await.unwrap();
        assert_eq!(out.branch_id, "SBY-01");
        assert_eq!(numbers(&out), ["PO-SBY-000003", "PO-SBY-000002", "PO-SBY-000001"]);
        assert_eq!(out.next_cursor, None);
        let first = &out.purchase_orders[2];
        assert_eq!(first.line_count, 2);
        assert_eq!(first.total.amount, "3336000.00");
        assert_eq!(
            first.drafted_by_agent_run.as_deref(),
            Some("run-sby-reorder-2026-11-26")
        );
        assert_eq!(first.drafted_on_behalf_of, "buyer-sby");
    }

    #[tokio::test]
    async fn status_vendor_and_dates_filter_and_combine() {
        let erp = MemoryErp::demo().unwrap();
        let drafts = SearchPosInput {
            status: Some(PoStatus::Draft),
            ..every()
        };
        assert_eq!(
            numbers(&run(&erp, "buyer-sby", drafts).await.unwrap()),
            ["PO-SBY-000001"]
        );
        let oil = SearchPosInput {
            vendor_code: Some("V-00508".into()),
            ..every()
        };
        assert_eq!(numbers(&run(&erp, "buyer-sby", oil).await.unwrap()), ["PO-SBY-000002"]);
        // Both bounds are whole days, inclusive.
        let from = SearchPosInput {
            created_from: Some("2026-11-25".parse().unwrap()),
            ..every()
        };
        assert_eq!(
            numbers(&run(&erp, "buyer-sby", from).await.unwrap()),
            ["PO-SBY-000002", "PO-SBY-000001"]
        );
        let to = SearchPosInput {
            created_to: Some("2026-11-25".parse().unwrap()),
            ..every()
        };
        assert_eq!(
            numbers(&run(&erp, "buyer-sby", to).await.unwrap()),
            ["PO-SBY-000003", "PO-SBY-000002"]
        );
        let none = SearchPosInput {
            status: Some(PoStatus::Draft),
            vendor_code: Some("V-00508".into()),
            ..every()
        };
        assert!(run(&erp, "buyer-sby", none).await.unwrap().purchase_orders.is_empty());
    }

    #[tokio::test]
    async fn pages_of_twenty_continue_with_the_cursor_until_the_last() {
        let erp = MemoryErp::demo().unwrap();
        let first = run(&erp, "buyer-jkt", every()).await.unwrap();
        assert_eq!(first.purchase_orders.len(), 20);
        assert_eq!(first.purchase_orders[0].po_number, "PO-JKT-000024");
        assert_eq!(first.purchase_orders[19].po_number, "PO-JKT-000005");
        let next = SearchPosInput {
            cursor: first.next_cursor.clone(),
            ..every()
        };
        let second = run(&erp, "buyer-jkt", next).await.unwrap();
        assert_eq!(
            numbers(&second),
            ["PO-JKT-000004", "PO-JKT-000003", "PO-JKT-000002", "PO-JKT-000001"]
        );
        assert_eq!(second.next_cursor, None);
    }

    #[tokio::test]
    async fn a_cursor_with_other_filters_is_refused() {
        let erp = MemoryErp::demo().unwrap();
        let first = run(&erp, "buyer-jkt", every()).await.unwrap();
        let other = SearchPosInput {
            status: Some(PoStatus::Received),
            cursor: first.next_cursor,
            ..every()
        };
        let err = run(&erp, "buyer-jkt", other).await.unwrap_err();
        assert_eq!(err.details().unwrap()[0].path, "cursor");
    }

    #[tokio::test]
    async fn a_sealed_position_that_is_not_a_po_number_is_refused() {
        let erp = MemoryErp::demo().unwrap();
        let caller = TestCaller::demo("buyer-jkt").unwrap();
        let filter = PoFilter::default();
        let pages = CursorScope::new(&caller.cursors, &caller.caller, "purchasing_search_pos", &filter).unwrap();
        let forged = pages.seal(&Position { after_po: "ZZZ".into() }).unwrap();
        let err = run(
            &erp,
            "buyer-jkt",
            SearchPosInput {
                cursor: Some(forged),
                ..every()
            },
        )
        .await
        .unwrap_err();
        assert_eq!(err.details().unwrap()[0].path, "cursor");
    }

    #[test]
    fn a_range_whose_start_is_after_its_end_is_refused() {
        let ctx = RuleContext {
            today: "2026-11-29".parse().unwrap(),
        };
        let backwards = SearchPosInput {
            created_from: Some("2026-11-20".parse().unwrap()),
            created_to: Some("2026-11-10".parse().unwrap()),
            ..every()
        };
        let issues = PurchasingSearchPos::rules(&backwards, &ctx);
        assert_eq!(issues.len(), 1);
        assert_eq!(issues[0].path, "created_to");
        let one_day = SearchPosInput {
            created_from: Some("2026-11-20".parse().unwrap()),
            created_to: Some("2026-11-20".parse().unwrap()),
            ..every()
        };
        assert!(PurchasingSearchPos::rules(&one_day, &ctx).is_empty());
    }
}
