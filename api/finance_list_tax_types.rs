//! `POST /api/finance_list_tax_types`: see `draftline_erp::tools::finance_list_tax_types`.

use draftline_contract::runtime::{Function, run_function};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    run_function(draftline_erp::catalogue(), Function::Tool("finance_list_tax_types")).await
}
