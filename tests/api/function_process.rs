//! A deployed function binary run as a child process, the way Lambda or
//! Vercel runs it: its own environment, its stdout and stderr captured, killed
//! when the guard is dropped. Every wait is bounded.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use draftline_cli::demo_spec;
use draftline_server::config::LOCAL_ISSUER;

use crate::helpers::TestApp;

/// The `DRAFTLINE_RESOURCE` the function children are deployed as.
pub const FUNCTION_RESOURCE: &str = "https://tools.draftline.test";

/// How long a child may take to start, answer or exit.
pub const CHILD_TIMEOUT: Duration = Duration::from_secs(20);

/// The HS256 secret of the deployed functions the tests start: not the
/// public local-development secret, which a function whose resource is not
/// loopback refuses to start with.
pub const FUNCTION_SECRET: &str = "function-test-secret-3f9c1e7a5b2d8c4f6a0e9b3d1c7f5a2e";

/// The environment of a function deployed against `app`'s embedded DynamoDB:
/// same table, local issuer, [`FUNCTION_SECRET`], [`FUNCTION_RESOURCE`].
pub fn function_env(app: &TestApp) -> Vec<(String, String)> {
    let config = app.server.app.config();
    vec![
        ("DRAFTLINE_TABLE".into(), config.table.clone()),
        (
            "DRAFTLINE_DYNAMODB_ENDPOINT".into(),
            config
                .dynamodb_endpoint
                .clone()
                .expect("the embedded engine has an endpoint"),
        ),
        ("DRAFTLINE_RESOURCE".into(), FUNCTION_RESOURCE.into()),
        ("DRAFTLINE_ISSUER".into(), LOCAL_ISSUER.into()),
        ("DRAFTLINE_JWT_SECRET".into(), FUNCTION_SECRET.into()),
        ("AWS_REGION".into(), "us-east-1".into()),
    ]
}

/// A token of a demo user for the function children.
pub fn function_token(user: &str) -> String {
    function_token_for(&demo_spec(user).unwrap(), FUNCTION_RESOURCE)
}

/// A token for `spec` with audience `aud`, signed with [`FUNCTION_SECRET`].
pub fn function_token_for(spec: &draftline_cli::TokenSpec, aud: &str) -> String {
    let claims = draftline_server::auth::mint::TokenClaims::new(
        LOCAL_ISSUER,
        aud,
        &spec.sub,
        &spec.tenant,
        &spec.branch,
        &spec.branch_code,
        &spec.scope,
        spec.roles.clone(),
        600,
    );
    draftline_server::auth::mint::mint_hs256(FUNCTION_SECRET, &claims).unwrap()
}

/// A running function binary; dropping it kills the process.
pub struct FunctionProcess {
    child: Child,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
    readers: Vec<JoinHandle<()>>,
}

fn capture(stream: impl Read + Send + 'static, into: Arc<Mutex<String>>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { return };
            let mut text = into.lock().unwrap_or_else(|p| p.into_inner());
            text.push_str(&line);
            text.push('\n');
        }
    })
}

impl FunctionProcess {
    /// Starts `binary` with exactly `env` (nothing inherited from the test's environment).
    pub fn start(binary: &str, env: &[(String, String)]) -> Self {
        let mut command = Command::new(binary);
        command
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().unwrap_or_else(|e| panic!("{binary} starts: {e}"));
        let stdout = Arc::new(Mutex::new(String::new()));
        let stderr = Arc::new(Mutex::new(String::new()));
        let readers = vec![
            capture(child.stdout.take().unwrap(), stdout.clone()),
            capture(child.stderr.take().unwrap(), stderr.clone()),
        ];
        Self {
            child,
            stdout,
            stderr,
            readers,
        }
    }

    /// Everything the process wrote to stdout so far.
    pub fn stdout(&self) -> String {
        self.stdout.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Everything the process wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Both streams, for assertion messages.
    pub fn output(&self) -> String {
        format!("--- stdout\n{}--- stderr\n{}", self.stdout(), self.stderr())
    }

    /// Whether the process has exited (and how), without waiting.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Waits for the process to exit by itself, at most `timeout`; then waits
    /// for its output to be fully read.
    pub async fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.exited() {
                for reader in self.readers.drain(..) {
                    let _ = reader.join();
                }
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the process did not exit within {timeout:?}\n{}",
                self.output()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits until stdout contains `needle` (`Ok`) or the process exits
    /// (`Err`); panics when `timeout` runs out first.
    pub async fn wait_until_printed(&mut self, needle: &str, timeout: Duration) -> Result<(), ExitStatus> {
        let deadline = Instant::now() + timeout;
        while !self.stdout().contains(needle) {
            if let Some(status) = self.exited() {
                return Err(status);
            }
            assert!(
                Instant::now() < deadline,
                "no {needle:?} on stdout within {timeout:?}\n{}",
                self.output()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(())
    }

    /// The JSON lines of stdout (other lines skipped).
    pub fn json_lines(&self) -> Vec<serde_json::Value> {
        self.stdout()
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect()
    }

    /// Asserts that `secret` appears in neither stream.
    pub fn assert_never_printed(&self, secret: &str, what: &str) {
        assert!(!self.stdout().contains(secret), "{what} on stdout\n{}", self.output());
        assert!(!self.stderr().contains(secret), "{what} on stderr\n{}", self.output());
    }
}

impl Drop for FunctionProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts `binary` as a Vercel function (`VERCEL_DEV_PORT`, no
/// `VERCEL_IPC_PATH`, as under `vercel dev`) on a free port and waits until the
/// runtime says it listens. If another test took the port in between, tries
/// another one (at most three).
pub async fn start_vercel_function(binary: &str, env: &[(String, String)]) -> (FunctionProcess, u16) {
    let mut failures = String::new();
    for _ in 0..3 {
        let port = free_port();
        let mut env = env.to_vec();
        env.push(("VERCEL_DEV_PORT".into(), port.to_string()));
        let mut process = FunctionProcess::start(binary, &env);
        match process
            .wait_until_printed(&format!("Dev server listening: {port}"), CHILD_TIMEOUT)
            .await
        {
            Ok(()) => return (process, port),
            Err(status) => failures.push_str(&format!("port {port}: exited ({status})\n{}", process.output())),
        }
    }
    panic!("{binary} never listened:\n{failures}");
}
