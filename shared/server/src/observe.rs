//! Logging: JSON lines in functions (one per call, see the pipeline), plain
//! text for the local server. Never a token or an argument payload.
//!
//! `DRAFTLINE_LOG` is a list of `target=level` and a bare default level
//! (`info,draftline_erp_tryton=debug`): per-target levels, no span or field
//! filters, so no regular-expression engine is linked into every function.

use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

const DEFAULT_FILTER: &str = "info,aws_smithy_runtime=warn,hyper=warn";

fn filter() -> Targets {
    let default = || DEFAULT_FILTER.parse().unwrap_or_default();
    match std::env::var("DRAFTLINE_LOG") {
        Ok(spec) => spec.parse().unwrap_or_else(|e| {
            eprintln!("DRAFTLINE_LOG '{spec}' is not a log filter ({e}); using '{DEFAULT_FILTER}'");
            default()
        }),
        Err(_) => default(),
    }
}

/// JSON log lines on stdout (deployed functions). Safe to call twice.
pub fn init_json_logs() {
    let _ = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .json()
                .flatten_event(true)
                .with_current_span(false)
                .with_span_list(false)
                .with_writer(std::io::stdout),
        )
        .with(filter())
        .try_init();
}

/// Human-readable log lines on stderr (the local server). Safe to call twice.
pub fn init_text_logs() {
    let _ = tracing_subscriber::registry()
        .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr))
        .with(filter())
        .try_init();
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing::Level;
    use tracing::level_filters::LevelFilter;

    #[test]
    fn the_default_filter_keeps_our_info_and_quiets_the_sdk() {
        let targets: Targets = DEFAULT_FILTER.parse().unwrap();
        assert!(targets.would_enable("draftline_server::pipeline", &Level::INFO));
        assert!(!targets.would_enable("draftline_server::pipeline", &Level::DEBUG));
        assert!(!targets.would_enable("aws_smithy_runtime::client", &Level::INFO));
        assert!(targets.would_enable("aws_smithy_runtime::client", &Level::WARN));
        let debug: Targets = "warn,draftline_erp_tryton=debug".parse().unwrap();
        assert!(debug.would_enable("draftline_erp_tryton::rest", &Level::DEBUG));
        assert_eq!(debug.default_level(), Some(LevelFilter::WARN));
    }
}
