//! How the domain's tax types are stored: keys and item mappings.

use draftline_contract::ErpError;
use draftline_contract::identity::TenantId;
use draftline_erp::domain::*;

use super::attrs::{self, Item as Attrs, bv, nv, sv};
use crate::keys;

/// How a [`TaxType`] is stored.
pub trait TaxTypeRecord: Sized {
    /// The key of tax type `code`.
    fn key(tenant: &TenantId, code: TaxCode) -> Attrs;
    /// The item.
    fn to_item(&self, tenant: &TenantId) -> Attrs;
    /// Reads a tax type.
    fn from_item(item: &Attrs) -> Result<Self, ErpError>;
}

impl TaxTypeRecord for TaxType {
    fn key(tenant: &TenantId, code: TaxCode) -> Attrs {
        attrs::key(keys::tax_types(tenant), keys::tax_type_sk(code.code()))
    }

    fn to_item(&self, tenant: &TenantId) -> Attrs {
        Attrs::from([
            ("pk".to_owned(), sv(keys::tax_types(tenant))),
            ("sk".to_owned(), sv(keys::tax_type_sk(self.code.code()))),
            ("kind".to_owned(), sv("tax_type")),
            ("code".to_owned(), sv(self.code.code())),
            ("name".to_owned(), sv(&self.name)),
            ("rate_percent".to_owned(), nv(self.rate_percent)),
            ("applies_to".to_owned(), sv(&self.applies_to)),
            ("active".to_owned(), bv(self.active)),
        ])
    }

    fn from_item(item: &Attrs) -> Result<Self, ErpError> {
        let what = "tax type";
        Ok(Self {
            code: TaxCode::from_code(&attrs::s(item, what, "code")?).ok_or_else(|| attrs::corrupt(what, "code"))?,
            name: attrs::s(item, what, "name")?,
            rate_percent: attrs::dec(item, what, "rate_percent")?,
            applies_to: attrs::s(item, what, "applies_to")?,
            active: attrs::flag(item, "active"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use rust_decimal::Decimal;

    #[test]
    fn tax_is_exact_and_rounded_half_away_from_zero() {
        let vat = TaxType {
            code: TaxCode::Vat11,
            name: "VAT 11%".into(),
            rate_percent: Decimal::from(11),
            applies_to: "standard".into(),
            active: true,
        };
        // 12.345 x 11% = 1.35795 -> 1.36
        assert_eq!(vat.tax_on("12.345".parse().unwrap()).unwrap().to_string(), "1.36");
        assert_eq!(vat.tax_on(Decimal::from(5_280_000)).unwrap().to_string(), "580800.00");
        assert_eq!(vat.tax_on(Decimal::MAX), None);
        assert_eq!(vat.describe(), "VAT11 = 11%");
        let tenant = TenantId::parse("demo").unwrap();
        assert_eq!(TaxType::from_item(&vat.to_item(&tenant)).unwrap(), vat);
    }
}
