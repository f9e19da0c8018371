//! `finance_list_tax_types`: the tax codes of the tenant and their rates.

use async_trait::async_trait;
use draftline_contract::ToolError;
use draftline_contract::tool::{Call, ReadTool, ToolMeta, ToolSpec};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use validator::Validate;

use crate::domain::TaxCode;
use crate::money::TAX_ROUNDING_RULE;
use crate::port::Scope;

/// Input of `finance_list_tax_types`: nothing; send an empty object.
#[derive(Debug, Clone, Serialize, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListTaxTypesInput {}

/// One tax type.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaxTypeView {
    /// The code to put in a quote line's tax_code.
    pub code: TaxCode,
    /// Name.
    pub name: String,
    /// Rate in percent, exact, as a string (`"11"`).
    pub rate_percent: String,
    /// When it applies.
    pub applies_to: String,
    /// Whether new documents may use it; inactive codes are refused.
    pub active: bool,
}

/// Output of `finance_list_tax_types`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListTaxTypesOutput {
    /// Every tax type, active ones first.
    pub tax_types: Vec<TaxTypeView>,
    /// How tax is computed and rounded on a document.
    pub rounding: String,
}

super::erp_tool!(FinanceListTaxTypes);

impl ToolSpec for FinanceListTaxTypes {
    type Input = ListTaxTypesInput;
    type Output = ListTaxTypesOutput;
    const META: ToolMeta = ToolMeta {
        name: "finance_list_tax_types",
        title: "List tax types",
        description: "Lists the tax codes you can put on a quote line, with their rates and when each applies. \
Call it before sales_create_quote_draft, which requires a tax_code on every line (for example VAT11 = 11% for most \
sales, VAT0 = 0% for exports, EXEMPT = 0% for tax-exempt customers). Returns every tax type with its code, name, rate \
in percent (an exact decimal string), when it applies and whether it is active (inactive codes are refused), and the \
rounding rule for tax. Takes no arguments; for what customers owe use finance_get_account_summary. Example: {}",
        module: "finance",
        scope: "finance:read",
    };
}

#[async_trait]
impl ReadTool for FinanceListTaxTypes {
    async fn read(&self, call: &Call<'_>, _input: ListTaxTypesInput) -> Result<ListTaxTypesOutput, ToolError> {
        let mut taxes = self.erp.tax_types(&Scope::of(call.caller)).await?;
        taxes.sort_by_key(|t| (!t.active, t.code));
        Ok(ListTaxTypesOutput {
            tax_types: taxes
                .into_iter()
                .map(|t| TaxTypeView {
                    code: t.code,
                    rate_percent: t.rate_percent.normalize().to_string(),
                    name: t.name,
                    applies_to: t.applies_to,
                    active: t.active,
                })
                .collect(),
            rounding: TAX_ROUNDING_RULE.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use rust_decimal::Decimal;

    use super::*;
    use crate::testing::{MemoryErp, TestCaller};

    async fn list(erp: &MemoryErp, caller: &TestCaller) -> ListTaxTypesOutput {
        FinanceListTaxTypes::new(erp.port())
            .read(&caller.call(), ListTaxTypesInput {})
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn active_codes_come_first_then_inactive_ones_with_their_exact_rates() {
        let erp = MemoryErp::demo().unwrap();
        let out = list(&erp, &TestCaller::demo("sales-bdg").unwrap()).await;
        let listed: Vec<(TaxCode, &str, bool)> = out
            .tax_types
            .iter()
            .map(|t| (t.code, t.rate_percent.as_str(), t.active))
            .collect();
        assert_eq!(
            listed,
            [
                (TaxCode::Vat11, "11", true),
                (TaxCode::Vat0, "0", true),
                (TaxCode::Exempt, "0", true),
                (TaxCode::Vat10, "10", false)
            ]
        );
        assert_eq!(out.tax_types[0].name, "VAT 11%");
        assert_eq!(out.rounding, TAX_ROUNDING_RULE);
    }

    #[tokio::test]
    async fn a_rate_is_an_exact_decimal_without_trailing_zeros() {
        let erp = MemoryErp::demo().unwrap();
        erp.edit(|b| {
            let vat = b.tax_types.iter_mut().find(|t| t.code == TaxCode::Vat11).unwrap();
            vat.rate_percent = Decimal::from_str("11.50").unwrap();
        });
        let out = list(&erp, &TestCaller::demo("sales-bdg").unwrap()).await;
        assert_eq!(out.tax_types[0].rate_percent, "11.5");
    }

    #[tokio::test]
    async fn another_tenant_has_no_tax_types() {
        let erp = MemoryErp::demo().unwrap();
        let stranger = TestCaller::of("acme", "BDG-01", "BDG", "seller", "finance:read").unwrap();
        assert!(list(&erp, &stranger).await.tax_types.is_empty());
    }
}
