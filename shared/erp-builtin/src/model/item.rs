//! How the domain's item types are stored: keys and item mappings.

use aws_sdk_dynamodb::types::AttributeValue;
use draftline_contract::ToolError;
use draftline_contract::identity::TenantId;
use draftline_erp::domain::*;
use draftline_erp::units::Uom;

use super::attrs::{self, Item as Attrs, nv, sv};
use crate::keys;

/// How a [`Item`] is stored.
pub trait ItemRecord: Sized {
    /// The DynamoDB key of item `code`.
    fn key(tenant: &TenantId, code: &str) -> Attrs;
    /// The full item.
    fn to_item(&self, tenant: &TenantId) -> Attrs;
    /// Reads an item.
    fn from_item(item: &Attrs) -> Result<Self, ToolError>;
}

impl ItemRecord for Item {
    /// The DynamoDB key of item `code`.
    fn key(tenant: &TenantId, code: &str) -> Attrs {
        Attrs::from([
            ("pk".to_owned(), sv(keys::items(tenant))),
            ("sk".to_owned(), sv(keys::item_sk(code))),
        ])
    }

    /// The full item.
    fn to_item(&self, tenant: &TenantId) -> Attrs {
        let mut item = Self::key(tenant, &self.code);
        item.insert("kind".into(), sv("item"));
        item.insert("code".into(), sv(&self.code));
        item.insert("name".into(), sv(&self.name));
        item.insert("base_uom".into(), sv(self.base_uom.code()));
        item.insert(
            "units".into(),
            AttributeValue::L(
                self.units
                    .iter()
                    .map(|u| {
                        AttributeValue::M(
                            [
                                ("uom".to_owned(), sv(u.uom.code())),
                                ("factor".to_owned(), nv(u.factor)),
                            ]
                            .into(),
                        )
                    })
                    .collect(),
            ),
        );
        item
    }

    /// Reads an item.
    fn from_item(item: &Attrs) -> Result<Self, ToolError> {
        let what = "item";
        let base = attrs::s(item, what, "base_uom")?;
        let units = item
            .get("units")
            .and_then(|v| v.as_l().ok())
            .ok_or_else(|| attrs::corrupt(what, "units"))?
            .iter()
            .map(|u| {
                let m = u.as_m().map_err(|_| attrs::corrupt(what, "units"))?;
                Ok(UnitConversion {
                    uom: Uom::from_code(&attrs::s(m, what, "uom")?).ok_or_else(|| attrs::corrupt(what, "uom"))?,
                    factor: attrs::int(m, what, "factor")?,
                })
            })
            .collect::<Result<Vec<_>, ToolError>>()?;
        Ok(Self {
            code: attrs::s(item, what, "code")?,
            name: attrs::s(item, what, "name")?,
            base_uom: Uom::from_code(&base).ok_or_else(|| attrs::corrupt(what, "base_uom"))?,
            units,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_item_round_trips_through_its_record() {
        let item = draftline_erp::demo::items().remove(0);
        let tenant = TenantId::parse("demo").unwrap();
        assert_eq!(Item::from_item(&item.to_item(&tenant)).unwrap(), item);
    }
}
