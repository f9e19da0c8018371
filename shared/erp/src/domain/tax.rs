//! Tax types: the codes a quote line may carry and their rates.

use std::fmt;

use rust_decimal::Decimal;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::money;

/// Every tax code the ERP knows. Which are in use, and at which rate, is
/// data: `finance_list_tax_types` lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
pub enum TaxCode {
    /// VAT at the standard rate.
    #[serde(rename = "VAT11")]
    Vat11,
    /// VAT at the former standard rate (no longer in use).
    #[serde(rename = "VAT10")]
    Vat10,
    /// Zero-rated VAT (exports, bonded zones).
    #[serde(rename = "VAT0")]
    Vat0,
    /// Exempt from VAT (exempt customers and goods).
    #[serde(rename = "EXEMPT")]
    Exempt,
}

impl TaxCode {
    /// Every code, in the order they are listed.
    pub const ALL: [TaxCode; 4] = [Self::Vat11, Self::Vat10, Self::Vat0, Self::Exempt];

    /// The code as written in documents.
    pub fn code(self) -> &'static str {
        match self {
            Self::Vat11 => "VAT11",
            Self::Vat10 => "VAT10",
            Self::Vat0 => "VAT0",
            Self::Exempt => "EXEMPT",
        }
    }

    /// Parses a stored code.
    pub fn from_code(code: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.code() == code)
    }
}

impl fmt::Display for TaxCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// A tax type of the tenant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaxType {
    /// The code.
    pub code: TaxCode,
    /// Name (`VAT 11%`).
    pub name: String,
    /// Rate in percent, exact (`11`).
    pub rate_percent: Decimal,
    /// When it applies.
    pub applies_to: String,
    /// Whether new documents may use it.
    pub active: bool,
}

impl TaxType {
    /// Tax on a net amount: net x rate / 100, rounded by [`money::round`];
    /// `None` when the product does not fit.
    pub fn tax_on(&self, net: Decimal) -> Option<Decimal> {
        let tax = net.checked_mul(self.rate_percent)?.checked_div(Decimal::from(100))?;
        Some(money::round(tax))
    }

    /// `VAT11 = 11%`.
    pub fn describe(&self) -> String {
        format!("{} = {}%", self.code, self.rate_percent.normalize())
    }
}
