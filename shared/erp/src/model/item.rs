//! The item master: what an item is and which units it comes in.

use aws_sdk_dynamodb::types::AttributeValue;
use draftline_contract::ToolError;
use draftline_contract::identity::TenantId;

use super::attrs::{self, Item as Attrs, nv, sv};
use crate::keys;
use crate::units::Uom;

/// One unit an item may be counted in, and how many base units it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitConversion {
    /// The unit.
    pub uom: Uom,
    /// Base units per one of this unit (1 for the base unit).
    pub factor: i64,
}

/// An item of the tenant's item master.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// `BRG-0042`.
    pub code: String,
    /// Description.
    pub name: String,
    /// The unit stock is kept in.
    pub base_uom: Uom,
    /// Every unit the item may be ordered in, the base unit first.
    pub units: Vec<UnitConversion>,
}

impl Item {
    /// The conversion for `uom`, if the item comes in it.
    pub fn unit(&self, uom: Uom) -> Option<&UnitConversion> {
        self.units.iter().find(|u| u.uom == uom)
    }

    /// "PCS, BOX (1 BOX = 24 PCS)": the allowed units, for error messages.
    pub fn describe_units(&self) -> String {
        let codes: Vec<&str> = self.units.iter().map(|u| u.uom.code()).collect();
        let conversions: Vec<String> = self
            .units
            .iter()
            .filter(|u| u.factor != 1)
            .map(|u| format!("1 {} = {} {}", u.uom, u.factor, self.base_uom))
            .collect();
        if conversions.is_empty() {
            codes.join(", ")
        } else {
            format!("{} ({})", codes.join(", "), conversions.join(", "))
        }
    }

    /// The DynamoDB key of item `code`.
    pub fn key(tenant: &TenantId, code: &str) -> Attrs {
        Attrs::from([
            ("pk".to_owned(), sv(keys::items(tenant))),
            ("sk".to_owned(), sv(keys::item_sk(code))),
        ])
    }

    /// The full item.
    pub fn to_item(&self, tenant: &TenantId) -> Attrs {
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
    pub fn from_item(item: &Attrs) -> Result<Self, ToolError> {
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
impl Item {
    /// BRG-0042 as the demo data has it: PCS, and BOX of 24.
    pub(crate) fn test_bearing() -> Self {
        Self {
            code: "BRG-0042".into(),
            name: "Bearing".into(),
            base_uom: Uom::Pcs,
            units: vec![
                UnitConversion {
                    uom: Uom::Pcs,
                    factor: 1,
                },
                UnitConversion {
                    uom: Uom::Box,
                    factor: 24,
                },
            ],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_units_are_described_with_their_conversion() {
        let item = Item::test_bearing();
        assert_eq!(item.describe_units(), "PCS, BOX (1 BOX = 24 PCS)");
        let tenant = TenantId::parse("demo").unwrap();
        assert_eq!(Item::from_item(&item.to_item(&tenant)).unwrap(), item);
    }
}
