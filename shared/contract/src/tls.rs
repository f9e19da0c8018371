//! The process's one TLS crypto provider: aws-lc-rs. rustls, the AWS SDK's
//! HTTPS client and the JWT verification all use it; `reqwest` is built
//! without a provider of its own, so a client it builds uses this one.

/// Installs aws-lc-rs as the process-wide rustls provider, if none is yet.
///
/// Every binary calls it first thing (the function runtime, the CLI); the
/// code that builds an HTTPS client calls it too, so that no client built
/// by a library first (a test, an embedding program) panics for want of a
/// provider. Cheap after the first call: one atomic load.
pub fn install_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // An `Err` means another thread installed one between the check and
        // here: any installed provider will do, as only aws-lc-rs is built in.
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    }
}
