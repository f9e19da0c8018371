//! A loopback proxy in front of the real trytond that can stop forwarding:
//! hang (accept and never answer) or answer a fixed status itself. The mode
//! is checked on every chunk a client sends, so pooled keep-alive
//! connections switch too. It also counts how many requests it holds at
//! once, and keeps the `traceparent` each forwarded request carried (what
//! Tryton received).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use draftline_erp_tryton::TrytonSettings;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the proxy does with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Pass it to trytond.
    Forward,
    /// Read it and never answer.
    Hang,
    /// Answer with this HTTP status and a small HTML page.
    Answer(u16),
    /// Answer `200 []` (an empty search) after this many milliseconds.
    Slow(u64),
}

/// Requests held at once by the proxy ([`Mode::Slow`]).
#[derive(Debug, Default)]
struct Held {
    now: AtomicUsize,
    most: AtomicUsize,
    total: AtomicUsize,
    /// Each forwarded request's `traceparent` (`None`: it carried none).
    traceparents: Mutex<Vec<Option<String>>>,
}

pub struct Proxy {
    address: SocketAddr,
    mode: Arc<Mutex<Mode>>,
    held: Arc<Held>,
}

impl Proxy {
    /// A proxy to `upstream` (`http://127.0.0.1:<port>`), forwarding.
    pub async fn start(upstream: &str) -> Self {
        let upstream: SocketAddr = upstream.trim_start_matches("http://").parse().unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let mode = Arc::new(Mutex::new(Mode::Forward));
        let held = Arc::new(Held::default());
        let (shared, counts) = (mode.clone(), held.clone());
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tokio::spawn(connection(client, upstream, shared.clone(), counts.clone()));
            }
        });
        Self { address, mode, held }
    }

    /// The most requests [`Mode::Slow`] held at the same time, and how many it answered.
    pub fn held(&self) -> (usize, usize) {
        (
            self.held.most.load(Ordering::SeqCst),
            self.held.total.load(Ordering::SeqCst),
        )
    }

    /// A proxy in front of the database of `settings`, and the settings
    /// that reach the database through it.
    pub async fn before(settings: &TrytonSettings) -> (Self, TrytonSettings) {
        let proxy = Self::start(&settings.url).await;
        let mut through = settings.clone();
        through.url = proxy.url();
        (proxy, through)
    }

    /// The `traceparent` of each request forwarded to trytond, in order
    /// (`None` for a request that carried none).
    pub fn traceparents(&self) -> Vec<Option<String>> {
        self.held.traceparents.lock().unwrap().clone()
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    pub fn set(&self, mode: Mode) {
        *self.mode.lock().unwrap() = mode;
    }
}

async fn connection(client: TcpStream, upstream: SocketAddr, mode: Arc<Mutex<Mode>>, held: Arc<Held>) {
    let (mut from_client, to_client) = client.into_split();
    let to_client = Arc::new(tokio::sync::Mutex::new(to_client));
    let mut to_upstream = None;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from_client.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let current = *mode.lock().unwrap();
        match current {
            Mode::Forward => {
                // The connector's requests are small: a chunk that starts
                // with a method is a request's head.
                let chunk = String::from_utf8_lossy(&buf[..n]);
                if ["GET ", "POST ", "PUT ", "DELETE "]
                    .iter()
                    .any(|m| chunk.starts_with(m))
                {
                    let head = chunk.split("\r\n\r\n").next().unwrap_or_default();
                    let traceparent = head.lines().find_map(|line| {
                        let (name, value) = line.split_once(':')?;
                        name.eq_ignore_ascii_case("traceparent")
                            .then(|| value.trim().to_owned())
                    });
                    held.traceparents.lock().unwrap().push(traceparent);
                }
                if to_upstream.is_none() {
                    let Ok(stream) = TcpStream::connect(upstream).await else {
                        return;
                    };
                    let (mut from_upstream, writer) = stream.into_split();
                    let back = to_client.clone();
                    tokio::spawn(async move {
                        let mut buf = vec![0u8; 64 * 1024];
                        while let Ok(n) = from_upstream.read(&mut buf).await {
                            if n == 0 || back.lock().await.write_all(&buf[..n]).await.is_err() {
                                break;
                            }
                        }
                        let _ = back.lock().await.shutdown().await;
                    });
                    to_upstream = Some(writer);
                }
                if let Some(writer) = to_upstream.as_mut()
                    && writer.write_all(&buf[..n]).await.is_err()
                {
                    return;
                }
            }
            Mode::Hang => {
                tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
                return;
            }
            Mode::Answer(status) => {
                let body = format!("<!doctype html>\n<title>{status}</title>\n<p>injected by the test proxy</p>\n");
                let answer = format!(
                    "HTTP/1.1 {status} INJECTED\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let mut writer = to_client.lock().await;
                let _ = writer.write_all(answer.as_bytes()).await;
                let _ = writer.shutdown().await;
                return;
            }
            Mode::Slow(ms) => {
                // A GET has no body: its first chunk is the whole request.
                let now = held.now.fetch_add(1, Ordering::SeqCst) + 1;
                held.most.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                // Released before the answer goes out: the client's next
                // request can only come after this one is answered.
                held.now.fetch_sub(1, Ordering::SeqCst);
                held.total.fetch_add(1, Ordering::SeqCst);
                let answer = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n[]";
                let mut writer = to_client.lock().await;
                let _ = writer.write_all(answer.as_bytes()).await;
                let _ = writer.shutdown().await;
                return;
            }
        }
    }
}
