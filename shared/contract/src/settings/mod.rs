//! Settings from one layered source (DESIGN.md, "Configuration").
//!
//! Each setting has one owner, and each owner parses its own part from the
//! same [`Source`]: the server its table, token verification and limits
//! (`draftline_server::config`), each ERP backend how to reach its ERP, the
//! review pages how people sign in. A source has three layers, and the
//! first with a value that is not blank wins:
//!
//! 1. overrides a program sets ([`Source::with`]: what `draftline serve`
//!    decides itself, such as the engine and the Tryton it started);
//! 2. the process environment ([`Source::env`]), or a map in tests
//!    ([`Source::map`]);
//! 3. defaults ([`Source::or`]: the local server's, for what a deployment
//!    must set).
//!
//! A set but blank variable counts as unset. The helpers parse what every
//! owner repeats (required values, secrets, flags, bounded numbers, URLs)
//! and fail with one error type, [`ConfigError`], whose message names the
//! variable; a deployed function prints it and refuses to start.
//!
//! - [`error`][]: [`ConfigError`].
//! - [`secret`][]: [`Secret`], never shown by `Debug`.
//! - [`url`][]: origins, loopback hosts, the absolute-URL check and the
//!   refusal of plain `http://` off loopback.

pub mod error;
pub mod secret;
pub mod url;

use std::collections::BTreeMap;
use std::fmt;
use std::ops::RangeInclusive;
use std::str::FromStr;

pub use error::ConfigError;
pub use secret::Secret;

/// Where settings come from: overrides, then the environment (or a map),
/// then defaults. Its `Debug` names the variables it holds, never a value.
#[derive(Clone)]
pub struct Source {
    overrides: BTreeMap<String, String>,
    base: Base,
    defaults: BTreeMap<String, String>,
}

#[derive(Clone)]
enum Base {
    Environment,
    Map(BTreeMap<String, String>),
}

impl fmt::Debug for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut shown = f.debug_struct("Source");
        shown.field("overrides", &self.overrides.keys().collect::<Vec<_>>());
        match &self.base {
            Base::Environment => shown.field("base", &"environment"),
            Base::Map(map) => shown.field("base", &map.keys().collect::<Vec<_>>()),
        };
        shown
            .field("defaults", &self.defaults.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// `true`, `1`, `yes` / `false`, `0`, `no`.
fn parse_flag(value: &str) -> Option<bool> {
    match value {
        "true" | "1" | "yes" => Some(true),
        "false" | "0" | "no" => Some(false),
        _ => None,
    }
}

fn not_blank(value: Option<&String>) -> Option<String> {
    value.filter(|v| !v.trim().is_empty()).cloned()
}

impl Source {
    /// The process environment, with no overrides or defaults.
    pub fn env() -> Self {
        Self {
            overrides: BTreeMap::new(),
            base: Base::Environment,
            defaults: BTreeMap::new(),
        }
    }

    /// `pairs` instead of the environment (tests, and a deployment's
    /// variables read elsewhere).
    pub fn map<K: Into<String>, V: Into<String>>(pairs: impl IntoIterator<Item = (K, V)>) -> Self {
        Self {
            base: Base::Map(pairs.into_iter().map(|(k, v)| (k.into(), v.into())).collect()),
            ..Self::env()
        }
    }

    /// The same source with `name` set to `value` whatever the environment says.
    pub fn with(mut self, name: &str, value: impl Into<String>) -> Self {
        self.overrides.insert(name.to_owned(), value.into());
        self
    }

    /// The same source with `value` for `name` when nothing else sets it.
    pub fn or(mut self, name: &str, value: impl Into<String>) -> Self {
        self.defaults.insert(name.to_owned(), value.into());
        self
    }

    /// The value of `name`, as set (not trimmed), from the first layer
    /// where it is not blank.
    pub fn get(&self, name: &str) -> Option<String> {
        not_blank(self.overrides.get(name))
            .or_else(|| match &self.base {
                Base::Environment => std::env::var(name).ok().filter(|v| !v.trim().is_empty()),
                Base::Map(map) => not_blank(map.get(name)),
            })
            .or_else(|| not_blank(self.defaults.get(name)))
    }

    /// The value of `name`, which must be set.
    pub fn required(&self, name: &'static str) -> Result<String, ConfigError> {
        self.get(name).ok_or(ConfigError::Missing(name))
    }

    /// The secret `name`, if set.
    pub fn secret(&self, name: &str) -> Option<Secret> {
        self.get(name).map(Secret::new)
    }

    /// The secret `name`, if set, which must have at least `min_bytes`.
    pub fn secret_of_at_least(&self, name: &'static str, min_bytes: usize) -> Result<Option<Secret>, ConfigError> {
        let secret = self.secret(name);
        if secret.as_ref().is_some_and(|s| s.expose().len() < min_bytes) {
            return Err(ConfigError::Invalid {
                name,
                reason: format!("must be at least {min_bytes} bytes"),
            });
        }
        Ok(secret)
    }

    /// The flag `name` (`true`/`1`/`yes` or `false`/`0`/`no`), if set.
    pub fn flag(&self, name: &'static str) -> Result<Option<bool>, ConfigError> {
        let Some(value) = self.get(name) else {
            return Ok(None);
        };
        let value = value.trim();
        parse_flag(value).map(Some).ok_or_else(|| ConfigError::Invalid {
            name,
            reason: format!("'{value}' is not true or false"),
        })
    }

    /// The URL `name`, if set, which must be an absolute http(s) URL.
    pub fn url(&self, name: &'static str) -> Result<Option<String>, ConfigError> {
        let url = self.get(name);
        if let Some(url) = &url {
            url::check_http_url(name, url)?;
        }
        Ok(url)
    }

    /// The URL `name` of a server that `what` is sent to, if set: an
    /// absolute http(s) URL, and not plain http off loopback.
    pub fn secure_url(&self, name: &'static str, what: &str) -> Result<Option<String>, ConfigError> {
        let url = self.get(name);
        if let Some(url) = &url {
            url::check_secure_url(name, url, what)?;
        }
        Ok(url)
    }

    /// The number `name` (trimmed), if set, which `accept` must take; the
    /// refusal says it is not "a number of `expected`".
    pub fn number<T: FromStr>(
        &self,
        name: &'static str,
        expected: &str,
        accept: impl FnOnce(&T) -> bool,
    ) -> Result<Option<T>, ConfigError> {
        let Some(value) = self.get(name) else {
            return Ok(None);
        };
        match value.trim().parse::<T>() {
            Ok(number) if accept(&number) => Ok(Some(number)),
            _ => Err(ConfigError::Invalid {
                name,
                reason: format!("'{value}' is not a number of {expected}"),
            }),
        }
    }

    /// The number `name`, if set, within `range`, counted in `unit`
    /// (`seconds`, `hours`).
    pub fn bounded<T: FromStr + PartialOrd + fmt::Display>(
        &self,
        name: &'static str,
        range: RangeInclusive<T>,
        unit: &str,
    ) -> Result<Option<T>, ConfigError> {
        let expected = format!("{unit} between {} and {}", range.start(), range.end());
        self.number(name, &expected, |n| range.contains(n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_win_over_the_environment_and_defaults_fill_what_is_unset_or_blank() {
        let source = Source::map([("A", "from-env"), ("B", "  "), ("C", "from-env")])
            .with("A", "override")
            .or("B", "default")
            .or("C", "default")
            .or("D", "default");
        assert_eq!(source.get("A").as_deref(), Some("override"));
        assert_eq!(source.get("B").as_deref(), Some("default"));
        assert_eq!(source.get("C").as_deref(), Some("from-env"));
        assert_eq!(source.get("D").as_deref(), Some("default"));
        assert_eq!(source.get("E"), None);
        assert_eq!(source.required("E"), Err(ConfigError::Missing("E")));
        // A value is kept as set: a secret's spaces are part of it.
        assert_eq!(Source::map([("S", " s ")]).get("S").as_deref(), Some(" s "));
    }

    #[test]
    fn the_source_never_shows_a_value() {
        let source = Source::map([("DRAFTLINE_JWT_SECRET", "s3cret-never-shown")]).with("K", "k3y-never-shown");
        let shown = format!("{source:?}");
        assert!(shown.contains("DRAFTLINE_JWT_SECRET"), "{shown}");
        assert!(!shown.contains("never-shown"), "{shown}");
    }

    #[test]
    fn numbers_flags_and_secrets_are_checked_with_the_variable_named() {
        let source = Source::map([("N", " 42 "), ("F", "yes"), ("G", " maybe "), ("S", "short")]);
        assert_eq!(source.bounded("N", 1..=100u64, "seconds"), Ok(Some(42)));
        assert_eq!(source.bounded("M", 1..=100u64, "seconds"), Ok(None));
        assert_eq!(
            source.bounded("N", 1..=10u64, "seconds").unwrap_err().to_string(),
            "N is invalid: ' 42 ' is not a number of seconds between 1 and 10"
        );
        assert_eq!(
            source.bounded("N", 1.0..=9.5f64, "seconds").unwrap_err().to_string(),
            "N is invalid: ' 42 ' is not a number of seconds between 1 and 9.5"
        );
        assert_eq!(source.flag("F"), Ok(Some(true)));
        assert_eq!(source.flag("H"), Ok(None));
        assert_eq!(
            source.flag("G").unwrap_err().to_string(),
            "G is invalid: 'maybe' is not true or false"
        );
        assert_eq!(
            source.secret_of_at_least("S", 32).unwrap_err().to_string(),
            "S is invalid: must be at least 32 bytes"
        );
        assert!(source.secret_of_at_least("S", 5).unwrap().is_some());
    }
}
