//! Stock per warehouse and reorder policies, per branch.

/// Stock of one item in one warehouse of a branch, in the item's base unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StockLevel {
    /// The item.
    pub item: String,
    /// The warehouse (`SBY-WH1`).
    pub warehouse: String,
    /// Physically there.
    pub on_hand: i64,
    /// Promised to open sales orders.
    pub reserved: i64,
}

/// When and how much to reorder an item in a branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReorderPolicy {
    /// The item.
    pub item: String,
    /// Reorder when available stock is at or below this (base units).
    pub reorder_point: i64,
    /// The usual order quantity (base units).
    pub reorder_qty: i64,
    /// The vendor to order from by default.
    pub preferred_vendor: String,
}

impl StockLevel {
    /// On hand minus reserved. Both are bounded where they are read
    /// ([`attrs::MAX_STORED_INT`]), so the difference always fits; it
    /// saturates rather than panic if that ever changed.
    pub fn available(&self) -> i64 {
        self.on_hand.saturating_sub(self.reserved)
    }
}
