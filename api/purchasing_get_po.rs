//! `POST /api/purchasing_get_po`: see `draftline_erp::tools::purchasing_get_po`.

use draftline_contract::runtime::{Function, run_function};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    run_function(draftline_erp::catalogue(), Function::Tool("purchasing_get_po")).await
}
