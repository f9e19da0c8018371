//! `POST /api/inventory_list_below_reorder`: see `draftline_erp::tools::inventory_list_below_reorder`.

use draftline_erp::tools::inventory_list_below_reorder::InventoryListBelowReorder;

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    draftline_erp_backends::run_tool::<InventoryListBelowReorder>().await
}
