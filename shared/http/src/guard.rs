//! Where a client may connect: a guard that judges every address a host
//! name resolves to, at connect time (so a name that resolves somewhere
//! else a second time is judged again, against DNS rebinding), and every
//! address written in a URL.

use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::task::{Context, Poll};

use hyper_util::client::legacy::connect::dns::{GaiResolver, Name};
use tower_service::Service;

/// Whether a client may connect to an address; `Err` says why not.
pub type AddressGuard = fn(IpAddr) -> Result<(), String>;

/// The system's resolver, with the client's guard (if any) over what it
/// finds: a name with one refused address is refused whole.
#[derive(Debug, Clone)]
pub(crate) struct Resolver {
    system: GaiResolver,
    guard: Option<AddressGuard>,
}

impl Resolver {
    pub(crate) fn new(guard: Option<AddressGuard>) -> Self {
        Self {
            system: GaiResolver::new(),
            guard,
        }
    }
}

/// The error a refused address is: the connect fails with it, and
/// [`crate::Error`] names it [`crate::ErrorKind::Refused`].
#[derive(Debug)]
pub(crate) struct RefusedAddress(pub(crate) String);

impl std::fmt::Display for RefusedAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RefusedAddress {}

type Resolving = Pin<Box<dyn Future<Output = Result<std::vec::IntoIter<SocketAddr>, io::Error>> + Send>>;

impl Service<Name> for Resolver {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = io::Error;
    type Future = Resolving;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), io::Error>> {
        self.system.poll_ready(cx)
    }

    fn call(&mut self, name: Name) -> Self::Future {
        let host = name.as_str().to_owned();
        let guard = self.guard;
        let resolving = self.system.call(name);
        Box::pin(async move {
            let found: Vec<SocketAddr> = resolving.await?.collect();
            if let Some(guard) = guard {
                for addr in &found {
                    guard(addr.ip()).map_err(|why| {
                        io::Error::other(RefusedAddress(format!("{host} resolves to {}: {why}", addr.ip())))
                    })?;
                }
            }
            Ok(found.into_iter())
        })
    }
}

/// The address a URL's host names literally (`127.0.0.1`, `[::1]`), if it
/// is one.
pub(crate) fn literal(host: &str) -> Option<IpAddr> {
    host.trim_start_matches('[').trim_end_matches(']').parse().ok()
}
