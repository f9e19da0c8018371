//! Reorder suggestions: whether an item needs reordering in a branch, how
//! much to order, and in which unit.

use crate::domain::{Item, ReorderPolicy, UnitConversion};
use crate::units::Uom;

/// How a suggestion is computed, stated in every answer that has one.
pub const SUGGESTION_RULE: &str = "An item needs reordering when its available stock (on hand minus reserved, \
all warehouses of the branch) is at or below its reorder point. Suggested quantity = the reorder quantity, raised \
if needed so that available stock ends above the reorder point; it is given in the largest unit the preferred \
vendor prices that divides it evenly, otherwise rounded up to whole units of the vendor's largest priced unit. \
Stock figures are in the item's base unit.";

/// What to order of one item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Suggestion {
    /// Whole units of `uom`.
    pub qty: i64,
    /// The unit.
    pub uom: Uom,
    /// The same quantity in the item's base unit.
    pub base_qty: i64,
}

/// Whether `available` stock is at or below the policy's reorder point.
pub fn is_due(policy: &ReorderPolicy, available: i64) -> bool {
    available <= policy.reorder_point
}

/// Base units to order: the reorder quantity, or more if that would leave
/// available stock at or below the reorder point.
pub fn need(policy: &ReorderPolicy, available: i64) -> i64 {
    let to_clear = policy.reorder_point.saturating_sub(available).saturating_add(1);
    policy.reorder_qty.max(to_clear).max(1)
}

/// `need` base units of `item` in a unit the vendor prices (`priced`): the
/// largest priced unit that divides it evenly, else whole units of the
/// largest priced unit, rounded up. With no priced unit, the item's own
/// units are used the same way.
pub fn suggest(item: &Item, need: i64, priced: &[Uom]) -> Suggestion {
    let usable = |u: &&UnitConversion| u.factor > 0;
    let mut candidates: Vec<&UnitConversion> = item
        .units
        .iter()
        .filter(usable)
        .filter(|u| priced.contains(&u.uom))
        .collect();
    if candidates.is_empty() {
        candidates = item.units.iter().filter(usable).collect();
    }
    candidates.sort_by_key(|u| std::cmp::Reverse(u.factor));
    let Some(largest) = candidates.first() else {
        return Suggestion {
            qty: need,
            uom: item.base_uom,
            base_qty: need,
        };
    };
    // Factors are positive (filtered above) and stored values are bounded
    // (`attrs::MAX_STORED_INT`), so none of this can overflow; the checked
    // forms make that a fact the compiler sees rather than a hope.
    let divides = |u: &&&UnitConversion| need.checked_rem(u.factor) == Some(0);
    let (unit, qty) = match candidates.iter().find(divides) {
        Some(even) => (*even, need.checked_div(even.factor).unwrap_or(need)),
        None => {
            let whole = need.checked_div(largest.factor).unwrap_or(need);
            let part = i64::from(need.checked_rem(largest.factor).is_some_and(|r| r != 0));
            (*largest, whole.saturating_add(part))
        }
    };
    Suggestion {
        qty,
        uom: unit.uom,
        base_qty: qty.saturating_mul(unit.factor),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(reorder_point: i64, reorder_qty: i64) -> ReorderPolicy {
        ReorderPolicy {
            item: "BRG-0042".into(),
            reorder_point,
            reorder_qty,
            preferred_vendor: "V-00231".into(),
        }
    }

    #[test]
    fn the_need_is_the_reorder_qty_or_enough_to_clear_the_reorder_point() {
        assert!(is_due(&policy(48, 240), 48));
        assert!(!is_due(&policy(48, 240), 49));
        assert_eq!(need(&policy(48, 240), 28), 240);
        assert_eq!(need(&policy(300, 100), 10), 291);
    }

    #[test]
    fn the_largest_priced_unit_that_divides_evenly_is_chosen_else_it_is_rounded_up() {
        let both = [Uom::Pcs, Uom::Box];
        assert_eq!(
            suggest(&Item::test_bearing(), 240, &both),
            Suggestion {
                qty: 10,
                uom: Uom::Box,
                base_qty: 240
            }
        );
        assert_eq!(suggest(&Item::test_bearing(), 250, &both).uom, Uom::Pcs);
        assert_eq!(
            suggest(&Item::test_bearing(), 250, &[Uom::Box]),
            Suggestion {
                qty: 11,
                uom: Uom::Box,
                base_qty: 264
            }
        );
        assert_eq!(suggest(&Item::test_bearing(), 30, &[]).uom, Uom::Pcs);
    }
}
