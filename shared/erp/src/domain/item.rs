//! The item master: what an item is and which units it comes in.

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
        assert_eq!(Item::test_bearing().describe_units(), "PCS, BOX (1 BOX = 24 PCS)");
    }
}
