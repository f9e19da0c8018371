//! A fault proxy in front of trytond: every request is read whole and sent
//! to Tryton on a connection of its own, except those a test gave a fault
//! to. Faults are queued per [`Target`] and used one request at a time, so
//! a test says "the next create is committed and then answered 502" or "the
//! next search by key hangs", and everything else passes through.
//!
//! The proxy speaks HTTP/1.1, one request per connection (each answer says
//! `connection: close`): a fault then ends exactly the request it was for,
//! never one that a client's pool sent later on the same connection.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

/// A test's server on a fresh Tryton database that it reaches through a
/// new proxy, with `options`.
pub async fn behind_a_proxy(options: draftline_cli::LocalOptions) -> (crate::helpers::TestApp, FaultyTryton) {
    let database = tokio::task::spawn_blocking(crate::tryton::fresh_database)
        .await
        .unwrap();
    let proxy = FaultyTryton::start(&database.url).await;
    let settings = draftline_erp_tryton::TrytonSettings {
        url: proxy.url(),
        ..database
    };
    let app = crate::helpers::spawn_app_on_erp(draftline_cli::LocalErp::Tryton(settings), options).await;
    (app, proxy)
}

/// Which requests a fault is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// `POST …/rest/model/purchase.purchase`: a purchase order's create.
    CreatePurchase,
    /// `GET …/rest/model/purchase.purchase` whose domain asks for one
    /// `draftline_key`: the search a takeover makes before it creates.
    FindPurchaseByKey,
}

/// What the proxy does to one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Sends it to Tryton and, once Tryton answered (a create is then
    /// committed), answers `status` itself, as a gateway that lost the
    /// answer does (502, 504).
    AnswerAfter(u16),
    /// Sends it to Tryton and, once Tryton answered, resets the caller's
    /// connection (TCP RST): the request was sent, no answer came back.
    ResetAfter,
    /// Sends it to Tryton and, once Tryton answered, keeps the caller
    /// waiting without a byte until it gives up.
    HoldAfter,
    /// Sends it to Tryton and, once Tryton answered, answers 200 itself
    /// with a JSON record that lacks every field asked for.
    UnreadableAfter,
    /// Answers `status` itself; Tryton never sees the request.
    Refuse(u16),
    /// Answers 200 with an empty list itself: a search that missed what
    /// Tryton holds. Tryton never sees the request.
    Missed,
    /// Keeps the caller waiting; Tryton never sees the request.
    Hang,
}

#[derive(Default)]
struct Plan {
    faults: HashMap<Target, VecDeque<Fault>>,
    /// Requests seen of each target, with or without a fault.
    seen: HashMap<Target, usize>,
    /// Every request seen, of any target or none.
    requests: usize,
}

/// The proxy: `url()` in front of one trytond.
pub struct FaultyTryton {
    address: SocketAddr,
    plan: Arc<Mutex<Plan>>,
    /// Notified each time Tryton answered a request the proxy then kept
    /// from its caller (the faults named `…After`).
    pub answered: Arc<Notify>,
}

impl FaultyTryton {
    /// A proxy in front of `upstream` (`http://127.0.0.1:<port>`).
    pub async fn start(upstream: &str) -> Self {
        let upstream: SocketAddr = upstream
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .parse()
            .unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let plan = Arc::new(Mutex::new(Plan::default()));
        let answered = Arc::new(Notify::new());
        let (shared, notify) = (plan.clone(), answered.clone());
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tokio::spawn(serve(client, upstream, shared.clone(), notify.clone()));
            }
        });
        Self {
            address,
            plan,
            answered,
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Gives the next request of `target` (after those already given one) `fault`.
    pub fn then(&self, target: Target, fault: Fault) {
        let mut plan = self.plan.lock().unwrap();
        plan.faults.entry(target).or_default().push_back(fault);
    }

    /// Requests of `target` seen so far.
    pub fn seen(&self, target: Target) -> usize {
        self.plan.lock().unwrap().seen.get(&target).copied().unwrap_or(0)
    }

    /// Every request seen so far, of any kind.
    pub fn requests(&self) -> usize {
        self.plan.lock().unwrap().requests
    }

    /// Faults given and not used yet.
    pub fn pending(&self) -> usize {
        self.plan.lock().unwrap().faults.values().map(VecDeque::len).sum()
    }
}

/// One request, read whole: its head (lines without their CRLF) and body.
struct Request {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    /// Which [`Target`] it is, if any.
    fn target(&self) -> Option<Target> {
        let (path, query) = self.target.split_once('?').unwrap_or((&self.target, ""));
        if !path.ends_with("/rest/model/purchase.purchase") {
            return None;
        }
        match self.method.as_str() {
            "POST" => Some(Target::CreatePurchase),
            "GET" => {
                let by_key = form_pairs(query).any(|(name, value)| {
                    name == "d"
                        && URL_SAFE
                            .decode(value)
                            .ok()
                            .and_then(|domain| String::from_utf8(domain).ok())
                            .is_some_and(|domain| domain.contains(r#"["draftline_key","=","#))
                });
                by_key.then_some(Target::FindPurchaseByKey)
            }
            _ => None,
        }
    }

    /// The request as sent on to Tryton, asking it to close the connection after.
    fn bytes(&self) -> Vec<u8> {
        let mut out = format!("{} {} HTTP/1.1\r\n", self.method, self.target);
        for (name, value) in &self.headers {
            if !name.eq_ignore_ascii_case("connection") {
                out.push_str(&format!("{name}: {value}\r\n"));
            }
        }
        out.push_str("connection: close\r\n\r\n");
        let mut bytes = out.into_bytes();
        bytes.extend_from_slice(&self.body);
        bytes
    }
}

/// `name=value` pairs of a query string (values percent-decoded).
fn form_pairs(query: &str) -> impl Iterator<Item = (String, String)> + '_ {
    query.split('&').filter_map(|pair| {
        let (name, value) = pair.split_once('=')?;
        Some((percent_decode(name), percent_decode(value)))
    })
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) => {
                        out.push(b);
                        i += 3;
                        continue;
                    }
                    None => out.push(b'%'),
                }
            }
            b'+' => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Reads up to the end of a head (`\r\n\r\n`); `None` at EOF before one.
async fn read_head(stream: &mut (impl AsyncRead + Unpin), buffer: &mut Vec<u8>) -> Option<usize> {
    let mut chunk = [0u8; 16 * 1024];
    loop {
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            return Some(at + 4);
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
    }
}

fn header_lines(head: &[u8]) -> (String, Vec<(String, String)>) {
    let text = String::from_utf8_lossy(head);
    let mut lines = text.split("\r\n").filter(|line| !line.is_empty());
    let first = lines.next().unwrap_or_default().to_owned();
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_owned(), value.trim().to_owned()))
        .collect();
    (first, headers)
}

fn content_length(headers: &[(String, String)]) -> Option<usize> {
    headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.parse().ok())
}

async fn read_request(client: &mut TcpStream) -> Option<Request> {
    let mut buffer = Vec::new();
    let end = read_head(client, &mut buffer).await?;
    let (first, headers) = header_lines(&buffer[..end]);
    let mut parts = first.split(' ');
    let (method, target) = (parts.next()?.to_owned(), parts.next()?.to_owned());
    let mut body = buffer.split_off(end);
    let length = content_length(&headers).unwrap_or(0);
    let mut chunk = [0u8; 16 * 1024];
    while body.len() < length {
        match client.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => body.extend_from_slice(&chunk[..n]),
        }
    }
    Some(Request {
        method,
        target,
        headers,
        body,
    })
}

/// Sends `request` to Tryton and reads its whole answer, rewritten to close
/// the caller's connection after it.
async fn forward(upstream: SocketAddr, request: &Request) -> Option<Vec<u8>> {
    let mut server = TcpStream::connect(upstream).await.ok()?;
    server.write_all(&request.bytes()).await.ok()?;
    let mut buffer = Vec::new();
    let end = read_head(&mut server, &mut buffer).await?;
    let (status_line, headers) = header_lines(&buffer[..end]);
    let mut body = buffer.split_off(end);
    let mut chunk = [0u8; 64 * 1024];
    let chunked = headers
        .iter()
        .any(|(name, value)| name.eq_ignore_ascii_case("transfer-encoding") && value.contains("chunked"));
    loop {
        let complete = match content_length(&headers) {
            Some(length) => body.len() >= length,
            None if chunked => body.ends_with(b"0\r\n\r\n"),
            None => false,
        };
        if complete {
            break;
        }
        match server.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => body.extend_from_slice(&chunk[..n]),
        }
    }
    let mut out = format!("{status_line}\r\n");
    for (name, value) in &headers {
        if !name.eq_ignore_ascii_case("connection") {
            out.push_str(&format!("{name}: {value}\r\n"));
        }
    }
    out.push_str("connection: close\r\n\r\n");
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(&body);
    Some(bytes)
}

/// A gateway's own answer.
fn gateway_answer(status: u16) -> Vec<u8> {
    let body = format!("<html><body><h1>{status}</h1>answered by the test's fault proxy</body></html>");
    format!(
        "HTTP/1.1 {status} Fault\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A 200 with `body` as JSON.
fn json_answer(body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Keeps `client` open, reading nothing of use, until the caller closes it
/// (or a minute passes).
async fn hold(mut client: TcpStream) {
    let mut chunk = [0u8; 1024];
    let _ = tokio::time::timeout(Duration::from_secs(60), async {
        while let Ok(n) = client.read(&mut chunk).await {
            if n == 0 {
                break;
            }
        }
    })
    .await;
}

async fn serve(mut client: TcpStream, upstream: SocketAddr, plan: Arc<Mutex<Plan>>, answered: Arc<Notify>) {
    let Some(request) = read_request(&mut client).await else {
        return;
    };
    let fault = {
        let mut plan = plan.lock().unwrap();
        plan.requests += 1;
        request.target().and_then(|target| {
            *plan.seen.entry(target).or_default() += 1;
            plan.faults.get_mut(&target).and_then(VecDeque::pop_front)
        })
    };
    match fault {
        Some(Fault::Refuse(status)) => {
            let _ = client.write_all(&gateway_answer(status)).await;
            let _ = client.shutdown().await;
        }
        Some(Fault::Hang) => hold(client).await,
        Some(Fault::Missed) => {
            let _ = client.write_all(&json_answer("[]")).await;
            let _ = client.shutdown().await;
        }
        None => {
            if let Some(answer) = forward(upstream, &request).await {
                let _ = client.write_all(&answer).await;
            }
            let _ = client.shutdown().await;
        }
        Some(after) => {
            // Tryton answers in full (a create is committed) before the fault.
            let _ = forward(upstream, &request).await;
            answered.notify_one();
            match after {
                Fault::AnswerAfter(status) => {
                    let _ = client.write_all(&gateway_answer(status)).await;
                    let _ = client.shutdown().await;
                }
                Fault::UnreadableAfter => {
                    let _ = client.write_all(&json_answer(r#"{"id": 0}"#)).await;
                    let _ = client.shutdown().await;
                }
                Fault::ResetAfter => {
                    let _ = client.set_zero_linger();
                    drop(client);
                }
                _ => hold(client).await,
            }
        }
    }
}
