//! The process's one crypto provider: *ring*. rustls (every HTTPS client of
//! the process: `draftline_http`'s, for DynamoDB, the JWKS and Tryton, and
//! the review pages' OpenID Connect client) and the JWT signatures both use
//! it; `reqwest` is built without a provider of its own, so a client it
//! builds uses this one.
//!
//! `jsonwebtoken` ships providers for aws-lc-rs and RustCrypto only;
//! [`jwt`] is its provider over *ring*, so a function binary links one
//! library of public-key cryptography instead of two.

mod jwt;

/// Installs *ring* as the process-wide provider of rustls and of
/// `jsonwebtoken`, where none is installed yet.
///
/// Every binary calls it first thing (the function runtime, the CLI), and
/// so does the code that needs it: the one HTTP client's constructor
/// (`draftline_http::Client::new`), the review pages' OpenID Connect client,
/// and the JWT verifier and signer (`draftline_server::auth`). So nothing a
/// library builds first (a test, an embedding program) panics for want of
/// a provider. Cheap after the first call: two atomic loads.
pub fn install_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // An `Err` means another thread installed one between the check and
        // here: any installed provider will do, as only ring is built in.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    if jsonwebtoken::crypto::CryptoProvider::try_get_default().is_none() {
        let _ = jwt::PROVIDER.install_default();
    }
}
