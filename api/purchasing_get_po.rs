//! `POST /api/purchasing_get_po`: see `draftline_erp::tools::purchasing_get_po`.

use draftline_erp::tools::purchasing_get_po::PurchasingGetPo;

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    draftline_erp_backends::run_tool::<PurchasingGetPo>().await
}
