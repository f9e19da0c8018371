//! The delivery of draftline's events (webhooks and e-mail), triggered by
//! the table's stream and a schedule on AWS, by a cron on Vercel; on an
//! ERP that keeps its own decisions (Tryton), their poll too. See
//! `draftline_server::runtime::notify`.

use draftline_erp_backends::Backend;

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    draftline_review::poll::run_function(|source, db| Ok(Backend::from_source(source, db)?.polled())).await
}
