//! [`ConfigError`]: why a deployment's settings were refused.

/// A setting is missing or malformed; the message names the variable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A required variable is not set.
    #[error("{0} is not set; draftline cannot start without it (see DESIGN.md, Configuration)")]
    Missing(&'static str),
    /// Tokens are verified by JWKS only, and no secret seals pagination cursors.
    #[error(
        "DRAFTLINE_CURSOR_SECRET is not set; a deployment that verifies tokens with DRAFTLINE_JWKS_URL only needs it \
         (at least 32 bytes) to seal pagination cursors"
    )]
    NoCursorSecret,
    /// Neither way of verifying tokens is configured.
    #[error(
        "neither DRAFTLINE_JWKS_URL nor DRAFTLINE_JWT_SECRET is set; draftline cannot verify tokens without one of them"
    )]
    NoVerifier,
    /// A variable is set to something unusable.
    #[error("{name} is invalid: {reason}")]
    Invalid {
        /// The variable.
        name: &'static str,
        /// Why.
        reason: String,
    },
    /// A variable is set to something that would work, unsafely.
    #[error("{name} is unsafe: {reason}; draftline refuses to start with it")]
    Unsafe {
        /// The variable.
        name: &'static str,
        /// Why.
        reason: String,
    },
}
