//! `POST /api/inventory_get_stock`: see `draftline_erp::tools::inventory_get_stock`.

use draftline_erp::tools::inventory_get_stock::InventoryGetStock;

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    draftline_erp_backends::run_tool::<InventoryGetStock>().await
}
