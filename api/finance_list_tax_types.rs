//! `POST /api/finance_list_tax_types`: see `draftline_erp::tools::finance_list_tax_types`.

use draftline_erp::tools::finance_list_tax_types::FinanceListTaxTypes;

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    draftline_erp_backends::run_tool::<FinanceListTaxTypes>().await
}
