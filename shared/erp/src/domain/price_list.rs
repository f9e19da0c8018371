//! Sales price lists: what customers pay. A customer names one list; quotes
//! are priced from it.

use rust_decimal::Decimal;

use crate::units::Uom;

/// One price of a sales price list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListPrice {
    /// The list (`PL-WHOLESALE`).
    pub list: String,
    /// The item.
    pub item: String,
    /// The unit the price is for.
    pub uom: Uom,
    /// Price per unit before tax, exact.
    pub unit_price: Decimal,
}
