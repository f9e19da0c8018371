//! `/review/*`: the review pages, where people sign in and approve or
//! reject agent drafts; see `draftline_review`.

use draftline_erp_backends::Backend;

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    draftline_review::run_function(|source, db| Ok(Backend::from_source(source, db)?.erp())).await
}
