//! The `draftline` command as a user runs it: a real process.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use draftline_infra::EmbeddedDynamo;

fn draftline() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_draftline"));
    for (name, _) in std::env::vars() {
        if name.starts_with("DRAFTLINE_") {
            command.env_remove(name);
        }
    }
    command
}

fn claims(token: &str) -> serde_json::Value {
    let payload = token.trim().split('.').nth(1).unwrap();
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap()
}

#[test]
fn token_prints_a_demo_users_claims_for_the_default_resource() {
    let out = draftline().args(["token", "--user", "buyer-sby"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let claims = claims(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(claims["sub"], "buyer-sby");
    assert_eq!(claims["tenant_id"], "demo");
    assert_eq!(claims["branch_id"], "SBY-01");
    assert_eq!(claims["branch_code"], "SBY");
    assert_eq!(
        claims["scope"],
        "purchasing:read purchasing:draft inventory:read agent:read"
    );
    assert_eq!(claims["iss"], "draftline-local");
    assert_eq!(claims["aud"], "http://127.0.0.1:3000");
}

#[test]
fn token_builds_any_other_identity() {
    let out = draftline()
        .args([
            "token",
            "--sub",
            "ana",
            "--tenant",
            "acme",
            "--branch",
            "MDN-02",
            "--scope",
            "inventory:read",
        ])
        .args(["--resource", "https://tools.acme.example"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let claims = claims(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(claims["branch_code"], "MDN");
    assert_eq!(claims["aud"], "https://tools.acme.example");
}

#[test]
fn an_unknown_demo_user_is_refused_with_the_list_of_demo_users() {
    let out = draftline().args(["token", "--user", "nobody"]).output().unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("buyer-sby") && stderr.contains("sales-bdg"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn table_create_and_seed_are_safe_to_run_twice() {
    let engine = EmbeddedDynamo::start(None).await.unwrap();
    let run = |args: &[&str]| {
        let out = draftline()
            .args(args)
            .env("DRAFTLINE_DYNAMODB_ENDPOINT", engine.endpoint())
            .env("DRAFTLINE_TABLE", "cli-test")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let created = tokio::task::block_in_place(|| run(&["table", "create"]));
    assert!(created.contains("New"), "{created}");
    let again = tokio::task::block_in_place(|| run(&["table", "create"]));
    assert!(again.contains("AlreadyExisted"), "{again}");
    let seeded = tokio::task::block_in_place(|| run(&["table", "seed"]));
    assert!(seeded.contains("Wrote"), "{seeded}");
    let reseeded = tokio::task::block_in_place(|| run(&["table", "seed"]));
    assert!(reseeded.contains("AlreadySeeded"), "{reseeded}");
}

#[test]
fn serve_says_where_it_listens_and_how_to_get_a_token() {
    let (_serving, lines) = serve_on(0, &[]);
    let listening = lines
        .iter()
        .find(|l| l.starts_with("listening on http://127.0.0.1:"))
        .expect("a listening line");
    assert!(!listening.ends_with(":0"), "{listening}");
    assert!(lines.iter().any(|l| l.contains("seeded the demo tenant")), "{lines:?}");
    assert!(
        lines.iter().any(|l| l.contains("draftline token --user buyer-sby")),
        "{lines:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn policy_set_refuses_an_invalid_file_with_each_path_and_a_valid_one_becomes_the_next_version() {
    let engine = EmbeddedDynamo::start(None).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        draftline()
            .args(args)
            .env("DRAFTLINE_DYNAMODB_ENDPOINT", engine.endpoint())
            .env("DRAFTLINE_TABLE", "cli-policy")
            .output()
            .unwrap()
    };
    let created = tokio::task::block_in_place(|| run(&["table", "create"]));
    assert!(created.status.success());
    let no_policy = tokio::task::block_in_place(|| run(&["policy", "show"]));
    assert!(
        !no_policy.status.success(),
        "a tenant without a policy has none to show"
    );

    let invalid = dir.path().join("invalid.json");
    std::fs::write(
        &invalid,
        r#"{"version": null, "mode": "loud", "time_zone": "+07:00", "limits": {"per_run": {"max_drafts": 5, "max_value": [{"currency": "IDR", "amount": 1}]}}, "extra": true}"#,
    )
    .unwrap();
    let refused = tokio::task::block_in_place(|| run(&["policy", "set", invalid.to_str().unwrap()]));
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    for path in ["mode:", "limits.per_run.max_value[0].amount:", "extra:"] {
        assert!(stderr.contains(path), "{path} in {stderr}");
    }
    assert!(stderr.contains("nothing was changed"), "{stderr}");
    let still_none = tokio::task::block_in_place(|| run(&["policy", "show"]));
    assert!(!still_none.status.success(), "the refused file changed nothing");

    let valid = dir.path().join("valid.json");
    std::fs::write(
        &valid,
        r#"{"version": null, "mode": "observe", "time_zone": "+07:00", "limits": {"per_run": {"max_drafts": 5, "max_value": null}}, "branches": null}"#,
    )
    .unwrap();
    let set = tokio::task::block_in_place(|| run(&["policy", "set", valid.to_str().unwrap()]));
    assert!(set.status.success(), "{}", String::from_utf8_lossy(&set.stderr));
    assert!(String::from_utf8_lossy(&set.stdout).contains("policy version 1 in force"));
    let shown = tokio::task::block_in_place(|| run(&["policy", "show"]));
    let shown: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(shown["version"], 1);
    assert_eq!(shown["mode"], "observe");
    let again = tokio::task::block_in_place(|| run(&["policy", "set", valid.to_str().unwrap()]));
    assert!(String::from_utf8_lossy(&again.stdout).contains("policy version 2 in force"));
    let schema = tokio::task::block_in_place(|| run(&["policy", "schema"]));
    let schema: serde_json::Value = serde_json::from_slice(&schema.stdout).unwrap();
    assert_eq!(schema["additionalProperties"], false);
}

/// A `draftline serve` process, killed on drop.
struct Serving(std::process::Child);

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `draftline serve` on `port` (0: any) with `env`, once it printed how to
/// get a token, and the lines it printed until then.
fn serve_on(port: u16, env: &[(&str, &str)]) -> (Serving, Vec<String>) {
    serve_with(&["--port", &port.to_string()], env)
}

/// `draftline serve` with `args` and `env`, once it printed how to get a
/// token, and the lines it printed until then.
fn serve_with(args: &[&str], env: &[(&str, &str)]) -> (Serving, Vec<String>) {
    let mut command = draftline();
    command
        .arg("serve")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = command.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let serving = Serving(child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut lines = Vec::new();
    while Instant::now() < deadline {
        if let Ok(line) = rx.recv_timeout(Duration::from_millis(200)) {
            let ready = line.contains("draftline token");
            lines.push(line);
            if ready {
                // Keep draining, so the server never blocks on a full pipe.
                std::thread::spawn(move || while rx.recv().is_ok() {});
                return (serving, lines);
            }
        }
    }
    panic!("serve did not start ({args:?}): {lines:?}");
}

/// The `name=value` of the cookie starting with `prefix` that `headers` set.
fn cookie_set(headers: &reqwest::header::HeaderMap, prefix: &str) -> Option<String> {
    headers
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.starts_with(prefix) && !c.contains("Max-Age=0"))
        .map(|c| c.split(';').next().unwrap_or_default().to_owned())
}

/// Signs demo person `user` in at `base` through the demo sign-in form, as
/// a browser does; the session cookie (`name=value`).
async fn signed_in(http: &reqwest::Client, base: &str, user: &str) -> String {
    let page = http.get(format!("{base}/review/signin")).send().await.unwrap();
    let pre = cookie_set(page.headers(), "draftline_pre_session").expect("a pre-session cookie");
    let body = page.text().await.unwrap();
    let form = &body[body.find("action=\"/review/signin/demo\"").expect("the demo form")..];
    let needle = "name=\"csrf\" value=\"";
    let token = &form[form.find(needle).unwrap() + needle.len()..];
    let token = &token[..token.find('"').unwrap()];
    let response = http
        .post(format!("{base}/review/signin/demo"))
        .header(reqwest::header::COOKIE, &pre)
        .form(&[("user", user), ("next", "/review"), ("csrf", token)])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 303, "demo sign-in of {user}");
    cookie_set(response.headers(), "draftline_session").expect("a session cookie")
}

/// The status of the review queue for a browser holding `cookie`.
async fn queue_with(http: &reqwest::Client, base: &str, cookie: &str) -> u16 {
    let response = http
        .get(format!("{base}/review"))
        .header(reqwest::header::COOKIE, cookie)
        .send()
        .await
        .unwrap();
    response.status().as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_serve_processes_sign_different_session_cookies_unless_the_session_secret_is_set() {
    draftline_contract::crypto::install_crypto_provider();
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    // One port for both processes: the same resource, so only the secret
    // can tell their cookies apart.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let base = format!("http://127.0.0.1:{port}");

    let (first, _) = serve_on(port, &[]);
    let cookie = signed_in(&http, &base, "approver-sby").await;
    assert_eq!(
        queue_with(&http, &base, &cookie).await,
        200,
        "the process that signed it accepts it"
    );
    drop(first);
    let (second, _) = serve_on(port, &[]);
    let refused = queue_with(&http, &base, &cookie).await;
    assert_ne!(refused, 200, "a second process accepted the first one's session cookie");
    let other = signed_in(&http, &base, "approver-sby").await;
    assert_eq!(queue_with(&http, &base, &other).await, 200);
    drop(second);

    // With DRAFTLINE_SESSION_SECRET set, sessions outlive a restart.
    let secret = [("DRAFTLINE_SESSION_SECRET", "a-local-session-secret-of-32-bytes-or-more")];
    let (kept, _) = serve_on(port, &secret);
    let cookie = signed_in(&http, &base, "approver-sby").await;
    drop(kept);
    let _again = serve_on(port, &secret);
    assert_eq!(
        queue_with(&http, &base, &cookie).await,
        200,
        "the set secret signs both processes' cookies"
    );
}

/// An endpoint on 127.0.0.1 that records each request's `webhook-id` and
/// never answers the first one (the sweeper is killed while it waits),
/// then answers 204.
fn holding_endpoint(hold_first: bool) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hooks", listener.local_addr().unwrap());
    let ids = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = ids.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let seen = seen.clone();
            std::thread::spawn(move || {
                let mut request = Vec::new();
                let mut buf = [0u8; 8192];
                // Headers, then the body its content-length names.
                loop {
                    let Ok(n) = stream.read(&mut buf) else { return };
                    if n == 0 {
                        return;
                    }
                    request.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&request).to_string();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let length = text
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().to_owned())
                            })
                            .and_then(|v| v.parse::<usize>().ok())
                            .unwrap_or(0);
                        if request.len() >= end + 4 + length {
                            break;
                        }
                    }
                }
                let text = String::from_utf8_lossy(&request).to_string();
                let id = text
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .starts_with("webhook-id:")
                            .then(|| l[11..].trim().to_owned())
                    })
                    .unwrap_or_default();
                let first = {
                    let mut ids = seen.lock().unwrap();
                    ids.push(id);
                    ids.len() == 1
                };
                if first && hold_first {
                    std::thread::sleep(Duration::from_secs(60));
                } else {
                    let _ = stream.write_all(b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n");
                }
            });
        }
    });
    (url, ids)
}

/// A hooks settings file in `dir` with one endpoint at `hook` for
/// `draft.created`.
fn hooks_file(dir: &std::path::Path, hook: &str) -> std::path::PathBuf {
    let file = dir.join("hooks.json");
    let settings = serde_json::json!({"version": null, "endpoints": [{
        "id": "orchestrator", "url": hook, "events": ["draft.created"],
        "secrets": ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"]
    }]});
    std::fs::write(&file, settings.to_string()).unwrap();
    file
}

/// A demo buyer's token for the server at `url`.
fn buyer_token(url: &str) -> String {
    let token = draftline()
        .args(["token", "--user", "buyer-sby", "--resource", url])
        .output()
        .unwrap();
    String::from_utf8(token.stdout).unwrap().trim().to_owned()
}

/// A fresh PO draft of `qty` PCS of `item` under idempotency key `key`,
/// through the server at `url`; it must be created.
async fn draft_po(url: &str, token: &str, key: &str, (item, qty): (&str, u32)) {
    let needed_by = (chrono::Utc::now() + chrono::Duration::days(14))
        .format("%Y-%m-%d")
        .to_string();
    let drafted = reqwest::Client::new()
        .post(format!("{url}/api/purchasing_create_po_draft"))
        .bearer_auth(token)
        .header("idempotency-key", key)
        .json(&serde_json::json!({
            "vendor_code": "V-00231", "needed_by": needed_by, "client_ref": key, "note": null,
            "lines": [{"item_code": item, "qty": qty, "uom": "PCS"}]
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(drafted.status(), 201, "{:?}", drafted.text().await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sweeper_killed_after_sending_and_before_marking_sends_again_with_the_same_id_after_a_restart() {
    draftline_contract::crypto::install_crypto_provider();
    let data = tempfile::tempdir().unwrap();
    let data_dir = data.path().to_str().unwrap().to_owned();
    let env = [
        ("DRAFTLINE_WEBHOOKS_ALLOW_LOOPBACK", "true"),
        ("DRAFTLINE_SWEEP_MILLISECONDS", "50"),
        ("DRAFTLINE_SWEEP_LEASE_SECONDS", "10"),
    ];
    let (serving, lines) = serve_with(&["--port", "0", "--data", &data_dir], &env);
    let line = |prefix: &str, lines: &[String]| -> String {
        lines
            .iter()
            .find_map(|l| l.strip_prefix(prefix))
            .unwrap_or_else(|| panic!("no '{prefix}' in {lines:?}"))
            .to_owned()
    };
    let url = line("listening on ", &lines);
    let engine = line("dynamodb endpoint: ", &lines);
    let (endpoint, table) = engine.split_once(" (table ").unwrap();
    let table = table.trim_end_matches(')');

    let (hook, ids) = holding_endpoint(true);
    let file = hooks_file(data.path(), &hook);
    let set = draftline()
        .args(["notify", "set", file.to_str().unwrap()])
        .env("DRAFTLINE_DYNAMODB_ENDPOINT", endpoint)
        .env("DRAFTLINE_TABLE", table)
        .env("DRAFTLINE_WEBHOOKS_ALLOW_LOOPBACK", "true")
        .output()
        .unwrap();
    assert!(set.status.success(), "{}", String::from_utf8_lossy(&set.stderr));
    draft_po(&url, &buyer_token(&url), "crash-1", ("BRG-0042", 1)).await;

    let wait_for = |n: usize| {
        let ids = ids.clone();
        async move {
            for _ in 0..300 {
                if ids.lock().unwrap().len() >= n {
                    return ids.lock().unwrap().clone();
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            panic!("the endpoint received {:?}, not {n}", ids.lock().unwrap());
        }
    };
    // Sent, and held: the sweeper waits for the answer, its delivery
    // claimed and not marked. It is killed there (SIGKILL).
    let first = wait_for(1).await;
    drop(serving);

    // Started again on the same data: once the lease lapses, the delivery
    // is due again and sent with the same webhook-id.
    let (_again, _) = serve_with(&["--port", "0", "--data", &data_dir], &env);
    let both = wait_for(2).await;
    assert!(first[0].starts_with("evt_"), "{first:?}");
    assert_eq!(both[1], first[0], "the same webhook-id");
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(ids.lock().unwrap().len(), 2, "delivered, and marked so");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notify_sweep_delivers_what_is_due_from_the_command_line_and_then_finds_nothing() {
    draftline_contract::crypto::install_crypto_provider();
    let data = tempfile::tempdir().unwrap();
    // The server sweeps nothing itself.
    let (_serving, lines) = serve_with(&["--port", "0"], &[("DRAFTLINE_SWEEP_MILLISECONDS", "off")]);
    assert!(
        lines.iter().any(|l| l.contains("the outbox is not swept here")),
        "{lines:?}"
    );
    let line = |prefix: &str| -> String {
        lines
            .iter()
            .find_map(|l| l.strip_prefix(prefix))
            .unwrap_or_else(|| panic!("no '{prefix}' in {lines:?}"))
            .to_owned()
    };
    let url = line("listening on ");
    let engine = line("dynamodb endpoint: ");
    let (endpoint, table) = engine.split_once(" (table ").unwrap();
    let table = table.trim_end_matches(')').to_owned();
    let here = |args: &[&str]| {
        let out = draftline()
            .args(args)
            .env("DRAFTLINE_DYNAMODB_ENDPOINT", endpoint)
            .env("DRAFTLINE_TABLE", &table)
            .env("DRAFTLINE_WEBHOOKS_ALLOW_LOOPBACK", "true")
            .env_remove("DRAFTLINE_SMTP_URL")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let (hook, ids) = holding_endpoint(false);
    let file = hooks_file(data.path(), &hook);
    here(&["notify", "set", file.to_str().unwrap()]);
    assert_eq!(
        here(&["notify", "sweep"]).trim(),
        "1 sweep(s): 0 event(s) fanned out, 0 delivered, 0 to retry, 0 dead"
    );
    let token = buyer_token(&url);
    // Three item sets: no near-duplicate question.
    for (n, item) in [(1, "BRG-0042"), (2, "BRG-0043"), (3, "VBT-0220")] {
        draft_po(&url, &token, &format!("cli-sweep-{n}"), (item, n)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(ids.lock().unwrap().is_empty(), "the server sweeps nothing");
    assert_eq!(
        here(&["notify", "sweep", "--until-empty"]).trim(),
        "2 sweep(s): 3 event(s) fanned out, 3 delivered, 0 to retry, 0 dead"
    );
    let delivered = ids.lock().unwrap().clone();
    assert_eq!(delivered.len(), 3, "{delivered:?}");
    assert!(delivered.iter().all(|id| id.starts_with("evt_")), "{delivered:?}");
    assert_eq!(
        here(&["notify", "sweep", "--until-empty"]).trim(),
        "1 sweep(s): 0 event(s) fanned out, 0 delivered, 0 to retry, 0 dead"
    );
}
