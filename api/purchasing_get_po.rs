//! `POST /api/purchasing_get_po`: see `draftline_erp::tools::purchasing_get_po`.

use draftline_server::runtime::{Function, run_function};

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    run_function(draftline_erp_backends::catalogue, Function::Tool("purchasing_get_po")).await
}
