//! `POST /api/sales_get_quote`: see `draftline_erp::tools::sales_get_quote`.

use draftline_server::runtime::{Function, run_function};

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    run_function(draftline_erp_backends::catalogue, Function::Tool("sales_get_quote")).await
}
