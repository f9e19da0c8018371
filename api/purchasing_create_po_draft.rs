//! `POST /api/purchasing_create_po_draft`: see `draftline_erp::tools::purchasing_create_po_draft`.

use draftline_contract::runtime::{Function, run_function};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    run_function(draftline_erp::catalogue(), Function::Tool("purchasing_create_po_draft")).await
}
