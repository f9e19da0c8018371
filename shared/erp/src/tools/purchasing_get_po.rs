//! `purchasing_get_po`: one purchase order of the caller's branch, by number.

use std::sync::Arc;

use async_trait::async_trait;
use draftline_contract::ToolError;
use draftline_contract::tool::{Call, ReadTool, ToolMeta, ToolSpec};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use validator::Validate;

use crate::domain::{PurchaseOrder, Reviewable};
use crate::port::{Erp, Scope};

/// Input of `purchasing_get_po`.
#[derive(Debug, Clone, Serialize, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetPoInput {
    /// The PO number, e.g. PO-SBY-000124.
    #[validate(custom(function = "super::po_number"))]
    #[schemars(pattern(super::PO_NUMBER_PATTERN))]
    pub po_number: String,
}

/// The tool.
#[derive(Clone)]
pub struct PurchasingGetPo {
    erp: Arc<dyn Erp>,
}

impl PurchasingGetPo {
    /// The tool over `erp`.
    pub fn new(erp: Arc<dyn Erp>) -> Self {
        Self { erp }
    }
}

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
