//! `sales_get_quote`: one quote of the caller's branch, by number.

use async_trait::async_trait;
use draftline_contract::ToolError;
use draftline_contract::tool::{Call, ReadTool, ToolMeta, ToolSpec};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use validator::Validate;

use crate::domain::{Quote, Reviewable};
use crate::port::Scope;

/// Input of `sales_get_quote`.
#[derive(Debug, Clone, Serialize, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetQuoteInput {
    /// The quote number, e.g. QT-BDG-000012.
    #[validate(custom(function = "super::quote_number"))]
    #[schemars(pattern(super::QUOTE_NUMBER_PATTERN))]
    pub quote_number: String,
}

super::erp_tool!(SalesGetQuote);

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{DocumentStatus, TaxCode, Verdict};
    use crate::testing::{MemoryErp, TestCaller};

    async fn get(user: &str, number: &str) -> Result<Quote, ToolError> {
        let erp = MemoryErp::demo().unwrap();
        let caller = TestCaller::demo(user).unwrap();
        let input = GetQuoteInput {
            quote_number: number.into(),
        };
        SalesGetQuote::new(erp.port()).read(&caller.call(), input).await
    }

    #[tokio::test]
    async fn a_quote_of_the_branch_is_read_with_its_taxed_lines_and_review_page() {
        let quote = get("sales-bdg", "QT-BDG-000001").await.unwrap();
        assert_eq!(quote.status, DocumentStatus::Draft);
        assert_eq!(quote.customer.code, "C-BDG-001");
        let lines: Vec<(&str, &str, TaxCode, &str, &str)> = quote
            .lines
            .iter()
            .map(|l| {
                (
                    l.item_code.as_str(),
                    l.net_amount.amount.as_str(),
                    l.tax_code,
                    l.tax_amount.amount.as_str(),
                    l.line_total.amount.as_str(),
                )
            })
            .collect();
        assert_eq!(
            lines,
            [
                ("BRG-0042", "1700000.00", TaxCode::Vat11, "187000.00", "1887000.00"),
                ("GLV-0015", "1320000.00", TaxCode::Vat11, "145200.00", "1465200.00")
            ]
        );
        assert_eq!(
            (
                quote.subtotal.amount.as_str(),
                quote.tax_total.amount.as_str(),
                quote.total.amount.as_str()
            ),
            ("3020000.00", "332200.00", "3352200.00")
        );
        assert_eq!(
            quote.review_url.as_deref(),
            Some("https://draftline.test/review/documents/QT-BDG-000001")
        );
    }

    #[tokio::test]
    async fn an_approved_quote_carries_the_decision() {
        let quote = get("sales-bdg", "QT-BDG-000002").await.unwrap();
        assert_eq!(quote.status, DocumentStatus::Approved);
        assert_eq!(quote.decision.unwrap().verdict, Verdict::Approved);
    }

    #[tokio::test]
    async fn another_branchs_quote_reads_exactly_like_a_missing_one() {
        let elsewhere = get("buyer-sby", "QT-BDG-000001").await.unwrap_err();
        let missing = get("buyer-sby", "QT-SBY-000001").await.unwrap_err();
        let text = |number: &str| {
            format!(
                "Quote {number} was not found in your branch. Nothing was read. Check the number; quote numbers \
                 look like QT-BDG-000012."
            )
        };
        assert!(
            matches!(&elsewhere, ToolError::NotFound(m) if *m == text("QT-BDG-000001")),
            "{elsewhere:?}"
        );
        assert!(
            matches!(&missing, ToolError::NotFound(m) if *m == text("QT-SBY-000001")),
            "{missing:?}"
        );
    }
}
