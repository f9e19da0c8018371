//! draftline units ⇄ Tryton `product.uom` symbols (MAPPING.md, "Items and
//! units"): base units by a fixed table (PCS ↔ `u`, KG ↔ `kg`, L ↔ `l`,
//! M ↔ `m`), package units as their code followed by how many base units
//! they hold (`BOX24` = BOX × 24, `CTN20`, `ROLL50`).

use draftline_contract::ErpError;
use draftline_erp::units::Uom;

/// A Tryton unit as draftline sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnitSymbol {
    /// The draftline unit.
    pub uom: Uom,
    /// Base units per one of it (1 for a base unit).
    pub factor: i64,
}

/// The largest package a symbol may describe.
const MAX_FACTOR: i64 = 1_000_000;

/// The draftline unit of a Tryton symbol, or `None` for a unit draftline
/// does not know (`g`, `h`, `BOX`, `BOX0`, `box24`).
pub fn from_symbol(symbol: &str) -> Option<UnitSymbol> {
    let base = |uom| Some(UnitSymbol { uom, factor: 1 });
    match symbol {
        "u" => return base(Uom::Pcs),
        "kg" => return base(Uom::Kg),
        "l" => return base(Uom::L),
        "m" => return base(Uom::M),
        _ => {}
    }
    let (uom, digits) = [(Uom::Box, "BOX"), (Uom::Ctn, "CTN"), (Uom::Roll, "ROLL")]
        .into_iter()
        .find_map(|(uom, prefix)| symbol.strip_prefix(prefix).map(|rest| (uom, rest)))?;
    if digits.is_empty() || digits.len() > 7 || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.starts_with('0') {
        return None;
    }
    let factor: i64 = digits.parse().ok()?;
    (1..=MAX_FACTOR).contains(&factor).then_some(UnitSymbol { uom, factor })
}

/// A unit of a document line, by its symbol.
pub(crate) fn line_unit(what: &str, symbol: Option<String>) -> Result<UnitSymbol, ErpError> {
    symbol
        .as_deref()
        .and_then(from_symbol)
        .ok_or_else(|| ErpError::internal(format!("{what} is in a unit draftline does not know ({symbol:?})")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_map_by_the_table_and_the_package_rule() {
        assert_eq!(
            from_symbol("u"),
            Some(UnitSymbol {
                uom: Uom::Pcs,
                factor: 1
            })
        );
        assert_eq!(
            from_symbol("kg"),
            Some(UnitSymbol {
                uom: Uom::Kg,
                factor: 1
            })
        );
        assert_eq!(from_symbol("l"), Some(UnitSymbol { uom: Uom::L, factor: 1 }));
        assert_eq!(from_symbol("m"), Some(UnitSymbol { uom: Uom::M, factor: 1 }));
        assert_eq!(
            from_symbol("BOX24"),
            Some(UnitSymbol {
                uom: Uom::Box,
                factor: 24
            })
        );
        assert_eq!(
            from_symbol("BOX5"),
            Some(UnitSymbol {
                uom: Uom::Box,
                factor: 5
            })
        );
        assert_eq!(
            from_symbol("CTN20"),
            Some(UnitSymbol {
                uom: Uom::Ctn,
                factor: 20
            })
        );
        assert_eq!(
            from_symbol("ROLL50"),
            Some(UnitSymbol {
                uom: Uom::Roll,
                factor: 50
            })
        );
        for unknown in [
            "g",
            "h",
            "BOX",
            "BOX0",
            "BOX024",
            "box24",
            "BOX2x",
            "ROLL99999999",
            "PCS",
            "",
        ] {
            assert_eq!(from_symbol(unknown), None, "{unknown}");
        }
    }
}
