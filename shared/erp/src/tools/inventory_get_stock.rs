//! `inventory_get_stock`: on hand, reserved and available stock of one item
//! in every warehouse of the caller's branch.

use std::sync::Arc;

use async_trait::async_trait;
use draftline_contract::ToolError;
use draftline_contract::tool::{Call, ReadTool, ToolMeta, ToolSpec};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use validator::Validate;

use crate::port::{Erp, ItemStock, Scope};
use crate::units::Uom;

/// Input of `inventory_get_stock`.
#[derive(Debug, Clone, Serialize, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetStockInput {
    /// The item code, e.g. BRG-0042.
    #[validate(custom(function = "super::code"))]
    #[schemars(pattern(super::CODE_PATTERN))]
    pub item_code: String,
}

/// Stock of the item in one warehouse.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WarehouseStock {
    /// Warehouse code.
    pub warehouse: String,
    /// Physically in the warehouse (base unit).
    pub on_hand: i64,
    /// Promised to open sales orders (base unit).
    pub reserved: i64,
    /// on_hand - reserved (base unit).
    pub available: i64,
}

/// Output of `inventory_get_stock`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetStockOutput {
    /// The item code.
    pub item_code: String,
    /// The item's description.
    pub item_name: String,
    /// The caller's branch; stock of other branches is never shown.
    pub branch_id: String,
    /// The unit all quantities are in.
    pub uom: Uom,
    /// One entry per warehouse of the branch that holds the item.
    pub warehouses: Vec<WarehouseStock>,
    /// Sum of on_hand over the warehouses.
    pub total_on_hand: i64,
    /// Sum of available over the warehouses.
    pub total_available: i64,
    /// The branch's reorder point for the item, if it has one.
    pub reorder_point: Option<i64>,
    /// Whether total_available is at or below the reorder point.
    pub below_reorder_point: bool,
}

/// The tool.
#[derive(Clone)]
pub struct InventoryGetStock {
    erp: Arc<dyn Erp>,
}

impl InventoryGetStock {
    /// The tool over `erp`.
    pub fn new(erp: Arc<dyn Erp>) -> Self {
        Self { erp }
    }
}

impl ToolSpec for InventoryGetStock {
    type Input = GetStockInput;
    type Output = GetStockOutput;
    const META: ToolMeta = ToolMeta {
        name: "inventory_get_stock",
        title: "Get stock of an item",
        description: "Returns on-hand, reserved and available stock of one item in every warehouse of your branch. \
Use it when you know the item code and need its current quantity; quantities are in the item's base unit and other \
branches' stock is never included. Returns the warehouses, the totals, the branch's reorder point and whether the item \
is at or below it. To find every item that needs reordering at once, use inventory_list_below_reorder instead. \
Example: {\"item_code\": \"BRG-0042\"}",
        module: "inventory",
        scope: "inventory:read",
    };
}

#[async_trait]
impl ReadTool for InventoryGetStock {
    async fn read(&self, call: &Call<'_>, input: GetStockInput) -> Result<GetStockOutput, ToolError> {
        let scope = Scope::of(call.caller);
        let branch = call.caller.branch();
        let found = self.erp.item_with_stock(&scope, &input.item_code).await?;
        let ItemStock { item, levels, policy } = found.ok_or_else(|| {
            ToolError::NotFound(format!(
                "Item {} was not found. Nothing was read. Check the code; inventory_list_below_reorder lists the \
                 items of your branch that need reordering.",
                input.item_code
            ))
        })?;
        let warehouses: Vec<WarehouseStock> = levels
            .iter()
            .map(|l| WarehouseStock {
                warehouse: l.warehouse.clone(),
                on_hand: l.on_hand,
                reserved: l.reserved,
                available: l.available(),
            })
            .collect();
        let total_on_hand = warehouses.iter().map(|w| w.on_hand).sum();
        let total_available = warehouses.iter().map(|w| w.available).sum();
        let reorder_point = policy.map(|p| p.reorder_point);
        Ok(GetStockOutput {
            item_code: item.code,
            item_name: item.name,
            branch_id: branch.to_string(),
            uom: item.base_uom,
            warehouses,
            total_on_hand,
            total_available,
            reorder_point,
            below_reorder_point: reorder_point.is_some_and(|p| total_available <= p),
        })
    }
}
