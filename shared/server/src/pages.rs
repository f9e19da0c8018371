//! Pages for people, served next to the tools: the seam through which the
//! review pages (`draftline-review`) plug into every runtime without the
//! server depending on them.
//!
//! An [`App`](crate::pipeline::App) may carry one [`Pages`] handler
//! ([`App::with_pages`](crate::pipeline::App::with_pages)); the local
//! server routes every path under its [`prefix`](Pages::prefix) to it, and
//! a deployed function built with [`run_pages`](crate::runtime::run_pages)
//! serves only it. The trait is the app's (its handler is handed the app),
//! so it is defined beside it.

pub use crate::pipeline::Pages;

/// Whether `path` is `prefix` or below it.
pub fn owns(prefix: &str, path: &str) -> bool {
    path.strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::owns;

    #[test]
    fn a_prefix_owns_itself_and_what_is_below_it_only() {
        assert!(owns("/review", "/review"));
        assert!(owns("/review", "/review/runs/x"));
        assert!(!owns("/review", "/reviewer"));
        assert!(!owns("/review", "/api/review"));
    }
}
