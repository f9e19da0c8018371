//! `sales_get_quote`: one quote of the caller's branch, by number.

use std::sync::Arc;

use async_trait::async_trait;
use draftline_contract::ToolError;
use draftline_contract::tool::{Call, ReadTool, ToolMeta, ToolSpec};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use validator::Validate;

use crate::domain::{Quote, Reviewable};
use crate::port::{Erp, Scope};

/// Input of `sales_get_quote`.
#[derive(Debug, Clone, Serialize, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetQuoteInput {
    /// The quote number, e.g. QT-BDG-000012.
    #[validate(custom(function = "super::quote_number"))]
    #[schemars(pattern(super::QUOTE_NUMBER_PATTERN))]
    pub quote_number: String,
}

/// The tool.
#[derive(Clone)]
pub struct SalesGetQuote {
    erp: Arc<dyn Erp>,
}

impl SalesGetQuote {
    /// The tool over `erp`.
    pub fn new(erp: Arc<dyn Erp>) -> Self {
        Self { erp }
    }
}

impl ToolSpec for SalesGetQuote {
    type Input = GetQuoteInput;
    type Output = Quote;
    const META: ToolMeta = ToolMeta {
        name: "sales_get_quote",
        title: "Get a quote",
        description: "Returns one quote of your branch by its number, with its priced and taxed lines, totals, the \
credit check and who drafted it (agent run and the person it acted for). Only your branch's quotes can be read; a \
number from another branch is reported as not found. To create a quote use sales_create_quote_draft. \
Example: {\"quote_number\": \"QT-BDG-000012\"}",
        module: "sales",
        scope: "sales:read",
    };
}

#[async_trait]
impl ReadTool for SalesGetQuote {
    async fn read(&self, call: &Call<'_>, input: GetQuoteInput) -> Result<Quote, ToolError> {
        self.erp
            .quote(&Scope::of(call.caller), &input.quote_number)
            .await?
            .map(|quote| quote.with_review_url(call.review_pages))
            .ok_or_else(|| {
                ToolError::NotFound(format!(
                    "Quote {} was not found in your branch. Nothing was read. Check the number; quote numbers look \
                     like QT-BDG-000012.",
                    input.quote_number
                ))
            })
    }
}
