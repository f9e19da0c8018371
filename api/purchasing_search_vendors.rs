//! `POST /api/purchasing_search_vendors`: see `draftline_erp::tools::purchasing_search_vendors`.

use draftline_erp::tools::purchasing_search_vendors::PurchasingSearchVendors;

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    draftline_erp_backends::run_tool::<PurchasingSearchVendors>().await
}
