//! URLs in settings: origins, loopback hosts, and the one refusal every
//! owner of a URL setting shares (plain `http://` off loopback).
//!
//! The edge's DNS-rebinding check (`draftline-server`'s `edge::origin`)
//! parses origins with the same [`Origin`].

use std::net::{Ipv4Addr, Ipv6Addr};

use super::ConfigError;

/// A scheme, host and port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    scheme: String,
    host: String,
    port: u16,
}

impl Origin {
    /// Parses `scheme://host[:port]` (http or https), ignoring a path (the
    /// resource URL may have one); the scheme and host are lowercased.
    pub fn parse(value: &str) -> Option<Self> {
        let (scheme, rest) = value.trim().split_once("://")?;
        let scheme = scheme.to_ascii_lowercase();
        let default_port = match scheme.as_str() {
            "http" => 80,
            "https" => 443,
            _ => return None,
        };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        let (host, port) = split_authority(authority)?;
        Some(Self {
            scheme,
            host,
            port: port.unwrap_or(default_port),
        })
    }

    /// Whether the host is a loopback one ([`is_loopback_host`]).
    pub fn is_loopback(&self) -> bool {
        is_loopback_host(&self.host)
    }
}

/// Splits `host[:port]` (IPv6 in brackets); the host is lowercased.
pub fn split_authority(authority: &str) -> Option<(String, Option<u16>)> {
    if authority.is_empty() || authority.contains('@') {
        return None;
    }
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (inside, after) = rest.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(port) => Some(port),
            None if after.is_empty() => None,
            None => return None,
        };
        (format!("[{inside}]"), port)
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host.to_owned(), Some(port)),
            None => (authority.to_owned(), None),
        }
    };
    let port = match port {
        None => None,
        Some(port) => Some(port.parse::<u16>().ok()?),
    };
    if host.is_empty() {
        return None;
    }
    Some((host.to_ascii_lowercase(), port))
}

/// `localhost`, `127.0.0.0/8` or `[::1]`.
pub fn is_loopback_host(host: &str) -> bool {
    if host == "localhost" {
        return true;
    }
    if let Some(inside) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return inside.parse::<Ipv6Addr>().is_ok_and(|ip| ip.is_loopback());
    }
    host.parse::<Ipv4Addr>().is_ok_and(|ip| ip.is_loopback())
}

/// Whether `url` (`scheme://host[:port]/…`) names a loopback host.
pub fn is_loopback_url(url: &str) -> bool {
    Origin::parse(url).is_some_and(|origin| origin.is_loopback())
}

/// Refuses `url` of `name` unless it starts with `http://` or `https://`.
pub fn check_http_url(name: &'static str, url: &str) -> Result<(), ConfigError> {
    if url.starts_with("https://") || url.starts_with("http://") {
        Ok(())
    } else {
        Err(ConfigError::Invalid {
            name,
            reason: "must be an absolute http(s) URL".into(),
        })
    }
}

/// Refuses `url` of `name`, which carries `what`, when it is plain
/// `http://` off loopback.
pub fn https_off_loopback(name: &'static str, url: &str, what: &str) -> Result<(), ConfigError> {
    let plain = url
        .trim()
        .get(..7)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("http://"));
    if plain && !is_loopback_url(url) {
        return Err(ConfigError::Unsafe {
            name,
            reason: format!(
                "'{}' is plain http off loopback, which would put {what} on the wire in clear (and let anyone on \
                 the way change it). Use an https:// URL; plain http is accepted only for a loopback host \
                 (127.0.0.1, ::1, localhost)",
                url.chars().take(120).collect::<String>()
            ),
        });
    }
    Ok(())
}

/// [`check_http_url`], then [`https_off_loopback`]: the URL of a server
/// that `what` is sent to.
pub fn check_secure_url(name: &'static str, url: &str, what: &str) -> Result<(), ConfigError> {
    check_http_url(name, url)?;
    https_off_loopback(name, url, what)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authorities_are_parsed_strictly() {
        assert_eq!(split_authority("a.b:8080"), Some(("a.b".to_owned(), Some(8080))));
        assert_eq!(split_authority("[::1]"), Some(("[::1]".to_owned(), None)));
        assert_eq!(split_authority("user@host"), None);
        assert_eq!(split_authority("host:99999"), None);
        assert_eq!(split_authority(""), None);
        assert!(is_loopback_host("127.8.9.10"));
        assert!(!is_loopback_host("127.0.0.1.evil.com"));
    }

    #[test]
    fn plain_http_is_refused_off_loopback_only() {
        for url in [
            "http://127.0.0.1:4000/jwks",
            "http://[::1]:4000",
            "http://localhost:4000",
            "https://id.example.com",
        ] {
            assert!(https_off_loopback("X", url, "it").is_ok(), "{url}");
        }
        for url in [
            "http://id.example.com",
            "HTTP://id.example.com",
            "http://127.0.0.1.example.com/jwks",
        ] {
            let err = https_off_loopback("X", url, "the keys").unwrap_err();
            assert!(err.to_string().starts_with("X is unsafe: "), "{err}");
            assert!(err.to_string().contains("put the keys on the wire in clear"), "{err}");
        }
        assert_eq!(
            check_secure_url("X", "id.example.com", "it").unwrap_err().to_string(),
            "X is invalid: must be an absolute http(s) URL"
        );
    }
}
