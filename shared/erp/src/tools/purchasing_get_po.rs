//! `purchasing_get_po`: one purchase order of the caller's branch, by number.

use async_trait::async_trait;
use draftline_contract::ToolError;
use draftline_contract::tool::{Call, ReadTool, ToolMeta, ToolSpec};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use validator::Validate;

use crate::domain::{PurchaseOrder, Reviewable};
use crate::port::Scope;

/// Input of `purchasing_get_po`.
#[derive(Debug, Clone, Serialize, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetPoInput {
    /// The PO number, e.g. PO-SBY-000124.
    #[validate(custom(function = "super::po_number"))]
    #[schemars(pattern(super::PO_NUMBER_PATTERN))]
    pub po_number: String,
}

super::erp_tool!(PurchasingGetPo);

impl ToolSpec for PurchasingGetPo {
    type Input = GetPoInput;
    type Output = PurchaseOrder;
    const META: ToolMeta = ToolMeta {
        name: "purchasing_get_po",
        title: "Get a purchase order",
        description: "Returns one purchase order of your branch by its number, with lines, server-computed totals and \
who drafted it (agent run and the person it acted for). Only your branch's orders can be read; a number from another \
branch is reported as not found. To create an order use purchasing_create_po_draft. \
Example: {\"po_number\": \"PO-SBY-000124\"}",
        module: "purchasing",
        scope: "purchasing:read",
    };
}

/// The one text for a PO that is missing or belongs to another branch.
pub fn po_not_found(number: &str) -> ToolError {
    ToolError::NotFound(format!(
        "Purchase order {number} was not found in your branch. Nothing was read. Check the number; \
         purchase order numbers look like PO-SBY-000124."
    ))
}

#[async_trait]
impl ReadTool for PurchasingGetPo {
    async fn read(&self, call: &Call<'_>, input: GetPoInput) -> Result<PurchaseOrder, ToolError> {
        self.erp
            .purchase_order(&Scope::of(call.caller), &input.po_number)
            .await?
            .map(|po| po.with_review_url(call.review_pages))
            .ok_or_else(|| po_not_found(&input.po_number))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{PoStatus, Verdict};
    use crate::testing::{MemoryErp, TestCaller};
    use crate::units::Uom;

    async fn get(user: &str, number: &str) -> Result<PurchaseOrder, ToolError> {
        let erp = MemoryErp::demo().unwrap();
        let caller = TestCaller::demo(user).unwrap();
        let input = GetPoInput {
            po_number: number.into(),
        };
        PurchasingGetPo::new(erp.port()).read(&caller.call(), input).await
    }

    #[tokio::test]
    async fn an_order_of_the_branch_is_read_with_its_lines_totals_provenance_and_review_page() {
        let po = get("buyer-sby", "PO-SBY-000001").await.unwrap();
        assert_eq!(po.status, PoStatus::Draft);
        assert_eq!(po.vendor.code, "V-00231");
        let lines: Vec<(&str, i64, Uom, i64, &str)> = po
            .lines
            .iter()
            .map(|l| {
                (
                    l.item_code.as_str(),
                    l.qty,
                    l.uom,
                    l.base_qty,
                    l.line_total.amount.as_str(),
                )
            })
            .collect();
        assert_eq!(
            lines,
            [
                ("BRG-0042", 10, Uom::Box, 240, "2880000.00"),
                ("VBT-0220", 12, Uom::Pcs, 12, "456000.00")
            ]
        );
        assert_eq!(po.total.amount, "3336000.00");
        assert_eq!(po.drafted_by_agent_run.as_deref(), Some("run-sby-reorder-2026-11-26"));
        assert_eq!(po.decision, None);
        assert_eq!(
            po.review_url.as_deref(),
            Some("https://draftline.test/review/documents/PO-SBY-000001")
        );
    }

    #[tokio::test]
    async fn a_rejected_order_carries_the_decision_and_its_reason() {
        let po = get("buyer-sby", "PO-SBY-000003").await.unwrap();
        assert_eq!(po.status, PoStatus::Rejected);
        let decision = po.decision.unwrap();
        assert_eq!(decision.verdict, Verdict::Rejected);
        assert_eq!(decision.decided_by, "approver-sby");
        assert!(
            po.next_step.contains("CV Baut Jaya raised the bolt price"),
            "{}",
            po.next_step
        );
    }

    #[tokio::test]
    async fn another_branchs_order_reads_exactly_like_a_missing_one() {
        let elsewhere = get("buyer-sby", "PO-JKT-000001").await.unwrap_err();
        let missing = get("buyer-sby", "PO-SBY-999999").await.unwrap_err();
        assert_eq!(elsewhere.to_string(), po_not_found("PO-JKT-000001").to_string());
        assert_eq!(missing.to_string(), po_not_found("PO-SBY-999999").to_string());
        assert!(matches!(elsewhere, ToolError::NotFound(_)));
        // Jakarta reads its own.
        assert_eq!(get("buyer-jkt", "PO-JKT-000001").await.unwrap().branch_id, "JKT-01");
    }
}
