//! Pricing a line from a price list: the list's price for the unit asked,
//! else the list's base-unit price times the unit's conversion. The same
//! rule prices purchase orders (the vendor's list), reorder suggestions and
//! quotes (the customer's list), so an estimate and its draft agree.

use rust_decimal::Decimal;

use crate::domain::Item;
use crate::units::Uom;

/// A unit price and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Priced {
    /// Price per unit asked, exact.
    pub unit_price: Decimal,
    /// `price list V-00231, BRG-0042 per BOX`, or the conversion used.
    pub source: String,
}

/// The price of one `uom` of `item` from the list called `list`, where
/// `price_of(u)` is the list's price per `u` of this item, if it has one.
/// `None` if the item does not come in `uom` or the list prices neither it
/// nor the base unit.
pub fn unit_price(list: &str, item: &Item, uom: Uom, price_of: impl Fn(Uom) -> Option<Decimal>) -> Option<Priced> {
    let factor = item.unit(uom)?.factor;
    if let Some(price) = price_of(uom) {
        return Some(Priced {
            unit_price: price,
            source: format!("price list {list}, {} per {uom}", item.code),
        });
    }
    let base = price_of(item.base_uom)?;
    Some(Priced {
        // Stored prices and factors are bounded, so this fits; a product
        // that did not would price nothing rather than panic.
        unit_price: base.checked_mul(Decimal::from(factor))?,
        source: format!(
            "price list {list}, {} per {} x {factor} ({factor} per {uom})",
            item.code, item.base_uom
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_units_own_price_wins_then_the_base_price_times_the_conversion() {
        let both = |u: Uom| match u {
            Uom::Pcs => Some(Decimal::from(12_500)),
            Uom::Box => Some(Decimal::from(288_000)),
            _ => None,
        };
        let boxed = unit_price("V-00231", &Item::test_bearing(), Uom::Box, both).unwrap();
        assert_eq!(boxed.unit_price, Decimal::from(288_000));
        assert_eq!(boxed.source, "price list V-00231, BRG-0042 per BOX");
        let base_only = |u: Uom| (u == Uom::Pcs).then(|| Decimal::from(12_500));
        let converted = unit_price("V-00231", &Item::test_bearing(), Uom::Box, base_only).unwrap();
        assert_eq!(converted.unit_price, Decimal::from(300_000));
        assert_eq!(
            converted.source,
            "price list V-00231, BRG-0042 per PCS x 24 (24 per BOX)"
        );
        assert_eq!(unit_price("V-00231", &Item::test_bearing(), Uom::Kg, both), None);
        assert_eq!(unit_price("V-00231", &Item::test_bearing(), Uom::Pcs, |_| None), None);
    }
}
