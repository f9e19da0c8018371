//! The ERP data model and its DynamoDB item mapping (`From`/`TryFrom`-style
//! functions next to each struct), so tools read as domain code.

pub mod attrs;
pub mod item;
pub mod po;
pub mod stock;
pub mod vendor;

pub use item::{Item, UnitConversion};
pub use po::{PoLine, PurchaseOrder};
pub use stock::{ReorderPolicy, StockLevel};
pub use vendor::{PriceEntry, Vendor};
