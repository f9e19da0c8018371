//! The embedded DynamoDB-compatible engine (`dynoxide-rs`, SQLite-backed),
//! served in process on a loopback port so that the application talks to it
//! through the same `aws-sdk-dynamodb` client it uses against AWS.

use std::net::SocketAddr;
use std::path::Path;

use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// A running embedded engine. Dropping it stops the engine.
#[derive(Debug)]
pub struct EmbeddedDynamo {
    addr: SocketAddr,
    task: JoinHandle<()>,
}

/// Why the engine could not start.
#[derive(Debug, thiserror::Error)]
pub enum EmbeddedError {
    /// The database could not be opened.
    #[error("cannot open the embedded DynamoDB database: {0}")]
    Open(String),
    /// The loopback port could not be bound.
    #[error("cannot bind the embedded DynamoDB engine to a loopback port: {0}")]
    Bind(#[from] std::io::Error),
}

impl EmbeddedDynamo {
    /// Starts the engine on `127.0.0.1:0`, in memory or persisted in `file`.
    pub async fn start(file: Option<&Path>) -> Result<Self, EmbeddedError> {
        let db = match file {
            None => dynoxide::Database::memory(),
            Some(path) => dynoxide::Database::new(&path.to_string_lossy()),
        }
        .map_err(|e| EmbeddedError::Open(e.to_string()))?;
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(dynoxide::server::serve_on(listener, db));
        Ok(Self { addr, task })
    }

    /// The endpoint URL to hand to the DynamoDB client.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for EmbeddedDynamo {
    fn drop(&mut self) {
        self.task.abort();
    }
}
