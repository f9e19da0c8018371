//! `POST /api/inventory_get_stock`: see `draftline_erp::tools::inventory_get_stock`.

use draftline_server::runtime::{Function, run_function};

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    run_function(draftline_erp_backends::catalogue, Function::Tool("inventory_get_stock")).await
}
