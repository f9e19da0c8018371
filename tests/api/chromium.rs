//! Headless Chromium for the browser tests (`browser.rs`, `tryton_web.rs`):
//! the distribution's `chromium` and `chromium-driver` (installed by
//! `scripts/browser.sh`), driven over WebDriver by `fantoccini`.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::wd::Capabilities;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

/// chromedriver, killed when dropped.
pub struct Driver {
    child: Child,
    url: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Driver {
    /// Starts chromedriver on a free port and waits until it answers.
    pub async fn start() -> Self {
        let port = crate::function_process::free_port();
        let child = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver runs (scripts/browser.sh installs it)");
        let driver = Self {
            child,
            url: format!("http://127.0.0.1:{port}"),
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let ready = reqwest::get(format!("{}/status", driver.url))
                .await
                .ok()
                .filter(|r| r.status().is_success());
            if ready.is_some() {
                return driver;
            }
            assert!(Instant::now() < deadline, "chromedriver did not come up");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// A new browser (its own cookies and storage: a person of their own).
    pub async fn browser(&self) -> Client {
        let mut args = vec![
            "--headless=new",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--window-size=1280,1000",
            "--lang=en-US",
        ];
        if as_root() {
            args.push("--no-sandbox");
        }
        let mut capabilities = Capabilities::new();
        capabilities.insert("browserName".into(), json!("chrome"));
        capabilities.insert("goog:chromeOptions".into(), json!({"args": args}));
        let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(capabilities)
            .connect(&self.url)
            .await
            .expect("a Chromium session");
        client
            .update_timeouts(fantoccini::wd::TimeoutConfiguration::new(
                Some(Duration::from_secs(10)),
                Some(Duration::from_secs(30)),
                Some(Duration::from_secs(0)),
            ))
            .await
            .unwrap();
        client
    }
}

/// Whether this process runs as root (Chromium's sandbox refuses root).
fn as_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        status
            .lines()
            .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
    })
}

/// The page's visible text. Right after a click or a form post the old
/// document may be gone and the new one not yet there: then what happened.
pub async fn page_text(client: &Client) -> String {
    match client.find(Locator::Css("body")).await {
        Ok(body) => body.text().await.unwrap_or_default(),
        Err(err) => format!("(no page yet: {err})"),
    }
}

/// Waits (bounded) until the page's text contains `needle`; the text then.
pub async fn wait_for_text(client: &Client, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let text = page_text(client).await;
        if text.contains(needle) {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "{needle:?} never appeared; the page says:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The folder `$CARGO_TARGET_TMPDIR/<name>`, made if missing.
pub fn screenshots(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes a PNG of the page to `screenshots(folder)/name`.
pub async fn screenshot(client: &Client, folder: &str, name: &str) {
    let png = client.screenshot().await.unwrap();
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    let path = screenshots(folder).join(name);
    std::fs::write(&path, png).unwrap();
    println!("screenshot: {}", path.display());
}
