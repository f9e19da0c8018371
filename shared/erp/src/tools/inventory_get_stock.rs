//! `inventory_get_stock`: on hand, reserved and available stock of one item
//! in every warehouse of the caller's branch.

use async_trait::async_trait;
use draftline_contract::ToolError;
use draftline_contract::tool::{Call, ReadTool, ToolMeta, ToolSpec};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use validator::Validate;

use crate::port::{ItemStock, Scope};
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

super::erp_tool!(InventoryGetStock);

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{MemoryErp, TestCaller};

    async fn stock(user: &str, item: &str) -> Result<GetStockOutput, ToolError> {
        let erp = MemoryErp::demo().unwrap();
        let caller = TestCaller::demo(user).unwrap();
        let input = GetStockInput { item_code: item.into() };
        InventoryGetStock::new(erp.port()).read(&caller.call(), input).await
    }

    fn warehouses(out: &GetStockOutput) -> Vec<(&str, i64, i64, i64)> {
        out.warehouses
            .iter()
            .map(|w| (w.warehouse.as_str(), w.on_hand, w.reserved, w.available))
            .collect()
    }

    #[tokio::test]
    async fn stock_is_read_per_warehouse_of_the_callers_branch_with_its_totals() {
        let out = stock("buyer-sby", "BRG-0042").await.unwrap();
        assert_eq!(out.branch_id, "SBY-01");
        assert_eq!(out.item_name, "Deep groove ball bearing 6204-2RS");
        assert_eq!(warehouses(&out), [("SBY-WH1", 30, 12, 18), ("SBY-WH2", 10, 0, 10)]);
        assert_eq!((out.total_on_hand, out.total_available), (40, 28));
        assert_eq!(out.reorder_point, Some(48));
        assert!(out.below_reorder_point);
    }

    #[tokio::test]
    async fn the_same_item_reads_each_branchs_own_stock_only() {
        let out = stock("buyer-jkt", "BRG-0042").await.unwrap();
        assert_eq!(out.branch_id, "JKT-01");
        assert_eq!(warehouses(&out), [("JKT-WH1", 520, 40, 480)]);
        assert_eq!(out.reorder_point, Some(96));
        assert!(!out.below_reorder_point);
    }

    #[tokio::test]
    async fn quantities_are_in_the_items_base_unit() {
        let oil = stock("buyer-sby", "OIL-0310").await.unwrap();
        assert_eq!(oil.uom, Uom::L);
        assert_eq!(oil.total_on_hand, 600);
        let bearing = stock("buyer-sby", "BRG-0042").await.unwrap();
        assert_eq!(bearing.uom, Uom::Pcs);
    }

    #[tokio::test]
    async fn available_stock_exactly_at_the_reorder_point_is_below_it() {
        // Bandung holds 48 of BRG-0042, none reserved; its reorder point is 48.
        let out = stock("sales-bdg", "BRG-0042").await.unwrap();
        assert_eq!((out.total_available, out.reorder_point), (48, Some(48)));
        assert!(out.below_reorder_point);
    }

    #[tokio::test]
    async fn an_item_the_branch_does_not_stock_has_no_warehouses_and_no_reorder_point() {
        let out = stock("buyer-sby", "GLV-0015").await.unwrap();
        assert_eq!(out.item_code, "GLV-0015");
        assert!(out.warehouses.is_empty());
        assert_eq!((out.total_on_hand, out.total_available), (0, 0));
        assert_eq!(out.reorder_point, None);
        assert!(!out.below_reorder_point);
    }

    #[tokio::test]
    async fn an_unknown_item_is_not_found_with_a_next_step() {
        let err = stock("buyer-sby", "BRG-9999").await.unwrap_err();
        let ToolError::NotFound(message) = err else {
            panic!("{err:?}")
        };
        assert!(
            message.starts_with("Item BRG-9999 was not found. Nothing was read."),
            "{message}"
        );
        assert!(message.contains("inventory_list_below_reorder"), "{message}");
    }

    #[tokio::test]
    async fn another_tenant_finds_no_item() {
        let erp = MemoryErp::demo().unwrap();
        let stranger = TestCaller::of("acme", "SBY-01", "SBY", "buyer", "inventory:read").unwrap();
        let input = GetStockInput {
            item_code: "BRG-0042".into(),
        };
        let err = InventoryGetStock::new(erp.port())
            .read(&stranger.call(), input)
            .await
            .unwrap_err();
        assert!(matches!(err, ToolError::NotFound(_)), "{err:?}");
    }
}
