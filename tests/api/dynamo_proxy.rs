//! A fault layer in front of a DynamoDB endpoint (the embedded engine):
//! a real socket the app's `aws-sdk-dynamodb` client talks to, which notes
//! each request's signer and each `BatchGetItem`'s keys. Every request is
//! passed on unchanged, except a `TransactWriteItems` a test
//! planned to lose a race: it is answered, without reaching the engine,
//! as DynamoDB answers a transaction another one held an item of
//! (`TransactionCanceledException`, reason `TransactionConflict` on that
//! item, `None` on the others).

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[derive(Default)]
struct Plan {
    /// Transactions still to answer with a conflict, and the text the
    /// contended item's partition key contains.
    conflicts: Vec<String>,
    /// Transactions answered with a conflict so far.
    answered: usize,
    /// The access key each request was signed with (SigV4's `Credential=`)
    /// and whether it carried a session token, in order.
    signers: Vec<(String, bool)>,
    /// The partition keys each `BatchGetItem` asked for, in order.
    batch_reads: Vec<Vec<String>>,
}

/// The proxy: [`FaultyDynamo::endpoint`] in front of one DynamoDB API.
pub struct FaultyDynamo {
    endpoint: String,
    plan: Arc<Mutex<Plan>>,
}

impl FaultyDynamo {
    /// A proxy in front of `upstream` (`http://127.0.0.1:<port>`).
    pub async fn start(upstream: &str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let plan = Arc::new(Mutex::new(Plan::default()));
        let (shared, upstream) = (plan.clone(), upstream.trim_end_matches('/').to_owned());
        draftline_contract::crypto::install_crypto_provider();
        let http = reqwest::Client::new();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tokio::spawn(serve(client, upstream.clone(), http.clone(), shared.clone()));
            }
        });
        Self { endpoint, plan }
    }

    /// The endpoint to give the app (`DRAFTLINE_DYNAMODB_ENDPOINT`).
    pub fn endpoint(&self) -> String {
        self.endpoint.clone()
    }

    /// Answers the next transaction with an item whose partition key
    /// contains `pk_part` with `TransactionConflict` on that item.
    pub fn conflict_on_next_transaction_with(&self, pk_part: &str) {
        self.plan.lock().unwrap().conflicts.push(pk_part.to_owned());
    }

    /// The access key of each request passed, in order, and whether it
    /// carried a session token (`x-amz-security-token`).
    pub fn signers(&self) -> Vec<(String, bool)> {
        self.plan.lock().unwrap().signers.clone()
    }

    /// The partition keys each `BatchGetItem` passed asked for, in order.
    pub fn batch_reads(&self) -> Vec<Vec<String>> {
        self.plan.lock().unwrap().batch_reads.clone()
    }

    /// How many transactions were answered with a conflict.
    pub fn conflicts_answered(&self) -> usize {
        self.plan.lock().unwrap().answered
    }
}

/// One HTTP/1.1 request as read off the socket.
struct Request {
    head: String,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.trim().eq_ignore_ascii_case(name).then(|| value.trim())
        })
    }
}

async fn read_request(client: &mut TcpStream, buffer: &mut Vec<u8>) -> Option<Request> {
    let mut chunk = [0u8; 8192];
    let end = loop {
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = client.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buffer[..end]).into_owned();
    let mut request = Request { head, body: Vec::new() };
    let length: usize = request
        .header("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    while buffer.len() < end + length {
        let n = client.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    }
    request.body = buffer[end..end + length].to_vec();
    buffer.drain(..end + length);
    Some(request)
}

/// The partition keys a `BatchGetItem` request asks for; `None` for any
/// other request.
fn batch_read(request: &Request) -> Option<Vec<String>> {
    if !request.header("x-amz-target")?.ends_with(".BatchGetItem") {
        return None;
    }
    let body: Value = serde_json::from_slice(&request.body).ok()?;
    let tables = body.get("RequestItems")?.as_object()?;
    Some(
        tables
            .values()
            .filter_map(|table| table.get("Keys")?.as_array())
            .flatten()
            .filter_map(|key| Some(key.get("pk")?.get("S")?.as_str()?.to_owned()))
            .collect(),
    )
}

/// The partition key of one `TransactItems` entry.
fn partition_key(entry: &Value) -> Option<&str> {
    let (_, action) = entry.as_object()?.iter().next()?;
    action
        .get("Item")
        .or_else(|| action.get("Key"))?
        .get("pk")?
        .get("S")?
        .as_str()
}

/// The planned conflict's answer to `request`, if it is the transaction
/// the plan is waiting for.
fn conflict_for(request: &Request, plan: &Mutex<Plan>) -> Option<Vec<u8>> {
    if !request.header("x-amz-target")?.ends_with(".TransactWriteItems") {
        return None;
    }
    let body: Value = serde_json::from_slice(&request.body).ok()?;
    let items = body.get("TransactItems")?.as_array()?;
    let mut plan = plan.lock().unwrap();
    let part = plan.conflicts.first()?.clone();
    let contended = items
        .iter()
        .position(|e| partition_key(e).is_some_and(|pk| pk.contains(&part)))?;
    plan.conflicts.remove(0);
    plan.answered += 1;
    let reasons: Vec<Value> = (0..items.len())
        .map(|i| {
            if i == contended {
                json!({"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"})
            } else {
                json!({"Code": "None"})
            }
        })
        .collect();
    let codes: Vec<&str> = (0..items.len())
        .map(|i| if i == contended { "TransactionConflict" } else { "None" })
        .collect();
    let body = json!({
        "__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
        "Message": format!(
            "Transaction cancelled, please refer cancellation reasons for specific reasons [{}]",
            codes.join(", ")
        ),
        "CancellationReasons": reasons,
    })
    .to_string();
    Some(
        format!(
            "HTTP/1.1 400 Bad Request\r\ncontent-type: application/x-amz-json-1.0\r\n\
             x-amzn-requestid: fault-layer\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    )
}

async fn serve(mut client: TcpStream, upstream: String, http: reqwest::Client, plan: Arc<Mutex<Plan>>) {
    let mut buffer = Vec::new();
    while let Some(request) = read_request(&mut client, &mut buffer).await {
        let key = request
            .header("authorization")
            .and_then(|a| a.split("Credential=").nth(1))
            .and_then(|c| c.split('/').next())
            .unwrap_or_default()
            .to_owned();
        let session = request.header("x-amz-security-token").is_some();
        plan.lock().unwrap().signers.push((key, session));
        if let Some(keys) = batch_read(&request) {
            plan.lock().unwrap().batch_reads.push(keys);
        }
        let answer = match conflict_for(&request, &plan) {
            Some(answer) => answer,
            None => forward(&request, &upstream, &http).await,
        };
        if client.write_all(&answer).await.is_err() {
            return;
        }
    }
}

/// Sends `request` on to `upstream` and returns its answer as bytes.
async fn forward(request: &Request, upstream: &str, http: &reqwest::Client) -> Vec<u8> {
    let path = request.head.split_whitespace().nth(1).unwrap_or("/");
    let mut sent = http.post(format!("{upstream}{path}")).body(request.body.clone());
    for line in request.head.lines().skip(1) {
        if let Some((name, value)) = line.split_once(':') {
            let name = name.trim();
            if !["host", "content-length", "connection"]
                .iter()
                .any(|h| name.eq_ignore_ascii_case(h))
            {
                sent = sent.header(name, value.trim());
            }
        }
    }
    let response = sent.send().await.unwrap();
    let status = response.status();
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or("")
    );
    for (name, value) in response.headers() {
        if ["content-length", "transfer-encoding", "connection"].contains(&name.as_str()) {
            continue;
        }
        head.push_str(&format!("{name}: {}\r\n", value.to_str().unwrap_or_default()));
    }
    let body = response.bytes().await.unwrap();
    head.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
    let mut answer = head.into_bytes();
    answer.extend_from_slice(&body);
    answer
}
