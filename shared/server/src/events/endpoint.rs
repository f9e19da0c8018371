//! Where webhooks may go. An endpoint is an `https` URL, or (when a local
//! setting allows it, `DRAFTLINE_WEBHOOKS_ALLOW_LOOPBACK`) an `http` or
//! `https` URL on the loopback address. Private, link-local, shared,
//! multicast and unspecified addresses, and the cloud metadata address,
//! are refused: in the URL when it is set, and among the addresses its
//! host resolves to at each connect, so that a name resolving somewhere
//! else later (DNS rebinding) is refused then.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The environment variable that lets endpoints on the loopback address
/// through (a local demo, the tests): `true` or `1`.
pub const ALLOW_LOOPBACK: &str = "DRAFTLINE_WEBHOOKS_ALLOW_LOOPBACK";

/// Whether loopback endpoints are allowed here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Reach {
    /// Endpoints on 127.0.0.0/8 and ::1 (and `localhost`).
    pub loopback: bool,
}

impl Reach {
    /// What the environment allows.
    pub fn from_env() -> Self {
        let loopback = std::env::var(ALLOW_LOOPBACK).is_ok_and(|v| matches!(v.trim(), "1" | "true"));
        Self { loopback }
    }

    /// The URL `url`, if an endpoint may be there, else why not.
    pub fn check_url(self, url: &str) -> Result<http::Uri, String> {
        let uri: http::Uri = url
            .parse()
            .map_err(|_| "not a URL: write an absolute https:// URL".to_owned())?;
        let scheme = uri.scheme_str().unwrap_or_default();
        let Some(host) = uri.host() else {
            return Err("not an absolute URL: write an https:// URL with a host".to_owned());
        };
        if uri.authority().is_some_and(|a| a.as_str().contains('@')) {
            return Err("a URL with a user or password is not allowed: put credentials in the secret".to_owned());
        }
        let address = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .ok();
        let loopback = host.eq_ignore_ascii_case("localhost") || address.is_some_and(|a| a.is_loopback());
        match (scheme, loopback) {
            ("https", false) => {}
            ("https" | "http", true) if self.loopback => {}
            ("https" | "http", true) => {
                return Err(format!(
                    "{host} is the loopback address, allowed only where {ALLOW_LOOPBACK}=true is set (a local demo)"
                ));
            }
            ("http", false) => return Err("webhooks are sent over https only: write an https:// URL".to_owned()),
            _ => return Err(format!("{scheme}: webhooks are sent over https only")),
        }
        if let Some(address) = address {
            self.guard()(address)?;
        }
        Ok(uri)
    }

    /// The judge of each address a delivery connects to.
    pub fn guard(self) -> fn(IpAddr) -> Result<(), String> {
        if self.loopback { allowed_with_loopback } else { allowed }
    }
}

fn allowed_with_loopback(address: IpAddr) -> Result<(), String> {
    if address.is_loopback() {
        Ok(())
    } else {
        allowed(address)
    }
}

/// Whether a webhook may connect to `address`: a public unicast address.
fn allowed(address: IpAddr) -> Result<(), String> {
    let refused = match address {
        IpAddr::V4(v4) => refused_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => refused_v4(v4),
            None => refused_v6(v6),
        },
    };
    refused.map_or(Ok(()), |what| {
        Err(format!("{address} is {what}, where webhooks are not sent"))
    })
}

fn refused_v4(v4: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = v4.octets();
    if v4 == Ipv4Addr::new(169, 254, 169, 254) {
        Some("the cloud metadata address")
    } else if v4.is_loopback() {
        Some("a loopback address")
    } else if v4.is_private() {
        Some("a private address")
    } else if v4.is_link_local() {
        Some("a link-local address")
    } else if a == 100 && (64..128).contains(&b) {
        Some("a shared (carrier-grade NAT) address")
    } else if v4.is_unspecified() || a == 0 {
        Some("an unspecified address")
    } else if v4.is_multicast() || v4.is_broadcast() || a >= 240 {
        Some("not a unicast address")
    } else if v4.is_documentation() || (a == 198 && (b == 18 || b == 19)) {
        Some("a reserved address")
    } else {
        None
    }
}

fn refused_v6(v6: Ipv6Addr) -> Option<&'static str> {
    let first = v6.segments()[0];
    if v6.is_loopback() {
        Some("a loopback address")
    } else if v6.is_unspecified() {
        Some("an unspecified address")
    } else if first & 0xfe00 == 0xfc00 {
        Some("a private (unique local) address")
    } else if first & 0xffc0 == 0xfe80 {
        Some("a link-local address")
    } else if v6.is_multicast() {
        Some("not a unicast address")
    } else if v6 == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
        Some("the cloud metadata address")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_https_to_a_public_address_passes_unless_loopback_is_allowed_here() {
        let strict = Reach::default();
        assert!(strict.check_url("https://hooks.example.com/draftline").is_ok());
        assert!(
            strict
                .check_url("https://203.0.113.9/x")
                .unwrap_err()
                .contains("reserved")
        );
        for (url, says) in [
            ("http://hooks.example.com/", "https only"),
            ("ftp://hooks.example.com/", "https only"),
            ("https://127.0.0.1:8080/hook", "loopback address, allowed only where"),
            ("http://localhost/hook", "loopback address, allowed only where"),
            ("https://169.254.169.254/latest/meta-data/", "cloud metadata"),
            ("https://10.0.0.7/", "a private address"),
            ("https://[fe80::1]/", "link-local"),
            ("https://[::ffff:192.168.1.1]/", "a private address"),
            ("https://user:pw@hooks.example.com/", "user or password"),
            ("/relative", "not an absolute URL"),
        ] {
            let refused = strict.check_url(url).unwrap_err();
            assert!(refused.contains(says), "{url}: {refused}");
        }
        let local = Reach { loopback: true };
        assert!(local.check_url("http://127.0.0.1:8080/hook").is_ok());
        assert!(local.check_url("http://localhost:8080/hook").is_ok());
        assert!(
            local.check_url("http://hooks.example.com/").is_err(),
            "still https elsewhere"
        );
        assert!(local.check_url("https://169.254.169.254/").is_err());
        assert!(local.guard()("::1".parse().unwrap()).is_ok());
        assert!(strict.guard()("::1".parse().unwrap()).is_err());
        assert!(strict.guard()("93.184.215.14".parse().unwrap()).is_ok());
    }
}
