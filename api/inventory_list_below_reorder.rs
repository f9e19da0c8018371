//! `POST /api/inventory_list_below_reorder`: see `draftline_erp::tools::inventory_list_below_reorder`.

use draftline_server::runtime::{Function, run_function};

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    run_function(
        draftline_erp_backends::catalogue,
        Function::Tool("inventory_list_below_reorder"),
    )
    .await
}
