//! A trytond on this machine with the seeded demo database(s), for
//! `draftline serve --erp tryton` and the tests.
//!
//! [`LocalTryton::start`] writes the embedded `tryton/` folder into
//! `<cache>/src-<hash>/` (so any build works without the source tree), runs
//! its `setup.sh <cache> <data> <database>` for each database (a copy of the
//! seeded template; the first run builds the venv, installs Tryton's web
//! client from npm and builds the template, ~2 min), reads the lines it
//! prints (`key <KEY>`, `web-client <version>`, `person <login> <password>`),
//! then spawns `serve.sh <cache> <data> <port>` once for all of them and
//! waits until `GET /` answers (200: the web client's page; 405 without one).
//! [`LocalTryton::review_url_setter`] tells the databases where draftline's
//! review pages are (`configure.sh`), for the forms' run links.
//! [`LocalTryton::start_pool`] makes `demo_1` … `demo_n`, fresh copies, for
//! tests that each take one database. Every database must exist before
//! trytond starts: a file copied in later is not served (REST.md).
//!
//! trytond runs under a small shell watchdog that stops it when this
//! process's end of the watchdog's stdin closes: on [`Drop`], and also when
//! the process exits without dropping (a `static` in a test binary).
//!
//! The API is blocking (it runs scripts and waits for a port); from async
//! code, call it in `tokio::task::spawn_blocking`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use crate::embedded;
use crate::settings::{TrytonKey, TrytonSettings};

/// How long trytond may take to listen.
const READY_WITHIN: Duration = Duration::from_secs(60);
/// How long trytond may take to stop before it is killed.
const STOP_WITHIN: Duration = Duration::from_secs(10);

/// Why a local Tryton did not start.
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    /// A file or process operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// `setup.sh` failed or printed no key.
    #[error("tryton/setup.sh for database {database} failed: {reason}")]
    Setup {
        /// The database.
        database: String,
        /// Its exit status and the end of its output.
        reason: String,
    },
    /// trytond did not answer in time, or exited.
    #[error("trytond did not start: {0}")]
    Serve(String),
    /// A database name setup.sh would refuse, or no home for the cache.
    #[error("{0}")]
    Invalid(String),
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> LocalError {
    let what = what.into();
    move |source| LocalError::Io { what, source }
}

/// One database of a local Tryton and its REST key.
#[derive(Clone, Debug)]
pub struct LocalDatabase {
    /// The database name (`demo`, `demo_3`).
    pub name: String,
    /// Its REST key (a fresh one per copy).
    pub key: TrytonKey,
    /// The demo people's Tryton users (login = the demo user), with their
    /// passwords: a person signs in to the web client with them.
    pub people: Vec<LocalPerson>,
}

impl LocalDatabase {
    /// The Tryton user of demo person `login`.
    pub fn person(&self, login: &str) -> Option<&LocalPerson> {
        self.people.iter().find(|p| p.login == login)
    }
}

/// A demo person's Tryton user and password (a local demo's; `Debug`
/// shows `***` for the password).
#[derive(Clone, PartialEq, Eq)]
pub struct LocalPerson {
    /// The Tryton login, the demo user's id (`approver-sby`).
    pub login: String,
    /// The password (random per seeded template).
    pub password: TrytonKey,
}

impl std::fmt::Debug for LocalPerson {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalPerson")
            .field("login", &self.login)
            .field("password", &"***")
            .finish()
    }
}

/// What setup.sh printed for one database.
#[derive(Debug)]
struct SetUp {
    key: TrytonKey,
    web_client: Option<String>,
    people: Vec<LocalPerson>,
}

/// A running trytond serving local databases; stopped on drop.
#[derive(Debug)]
pub struct LocalTryton {
    url: String,
    cache: PathBuf,
    src: PathBuf,
    data_dir: PathBuf,
    databases: Vec<LocalDatabase>,
    web_client: Option<String>,
    watchdog: Option<Child>,
    stdin: Option<ChildStdin>,
}

impl LocalTryton {
    /// `$DRAFTLINE_TRYTON_CACHE` when set, else
    /// `${XDG_CACHE_HOME:-$HOME/.cache}/draftline/tryton`.
    pub fn default_cache_dir() -> Result<PathBuf, LocalError> {
        if let Some(dir) = std::env::var_os("DRAFTLINE_TRYTON_CACHE").filter(|v| !v.is_empty()) {
            return Ok(PathBuf::from(dir));
        }
        let base = match std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
            Some(dir) => PathBuf::from(dir),
            None => std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|home| PathBuf::from(home).join(".cache"))
                .ok_or_else(|| LocalError::Invalid("neither XDG_CACHE_HOME nor HOME is set".into()))?,
        };
        Ok(base.join("draftline").join("tryton"))
    }

    /// Sets up `databases` in `data_dir` (kept when they already exist:
    /// their data survives a restart) and serves them on `port` (a free one
    /// when `None`).
    pub fn start(cache: &Path, data_dir: &Path, databases: &[&str], port: Option<u16>) -> Result<Self, LocalError> {
        let src = write_sources(cache)?;
        std::fs::create_dir_all(data_dir).map_err(io(format!("creating {}", data_dir.display())))?;
        let mut set_up = Vec::with_capacity(databases.len());
        let mut web_client = None;
        for name in databases {
            let done = setup(&src, cache, data_dir, name)?;
            web_client = done.web_client;
            set_up.push(LocalDatabase {
                name: (*name).to_owned(),
                key: done.key,
                people: done.people,
            });
        }
        serve(&src, cache, data_dir, set_up, web_client, port)
    }

    /// `n` fresh copies of the demo database, `demo_1` … `demo_n` (existing
    /// ones are replaced), served by one trytond on a free port.
    pub fn start_pool(cache: &Path, data_dir: &Path, n: usize) -> Result<Self, LocalError> {
        let names: Vec<String> = (1..=n).map(|i| format!("demo_{i}")).collect();
        for name in &names {
            // With its SQLite sidecars: a stale write-ahead log would be
            // replayed into the fresh copy.
            for suffix in ["sqlite", "sqlite-wal", "sqlite-shm", "sqlite-journal"] {
                let file = data_dir.join(format!("{name}.{suffix}"));
                match std::fs::remove_file(&file) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(io(format!("removing {}", file.display()))(e)),
                }
            }
        }
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        Self::start(cache, data_dir, &names, None)
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The databases served, in the order asked.
    pub fn databases(&self) -> &[LocalDatabase] {
        &self.databases
    }

    /// The version of Tryton's web client (sao) trytond serves at
    /// [`web_client_url`](Self::web_client_url), when setup.sh installed it.
    pub fn web_client(&self) -> Option<&str> {
        self.web_client.as_deref()
    }

    /// Tryton's web client, `http://127.0.0.1:<port>/` (its database is
    /// chosen in the sign-in dialog, or by a `#<database>` link), when it
    /// is installed.
    pub fn web_client_url(&self) -> Option<String> {
        self.web_client.as_ref().map(|_| format!("{}/", self.url))
    }

    /// Tells the draftline module of every database where draftline's
    /// review pages are (`http://127.0.0.1:3000/review`), so the purchase
    /// and sale forms link an agent draft to its run page (`configure.sh`;
    /// blocking, a few hundred milliseconds): a closure that owns what it
    /// needs, for `tokio::task::spawn_blocking`.
    pub fn review_url_setter(&self, review_pages: &str) -> impl FnOnce() -> Result<(), LocalError> + Send + 'static {
        let script = self.src.join("configure.sh");
        let cache = self.cache.clone();
        let data_dir = self.data_dir.clone();
        let names: Vec<String> = self.databases.iter().map(|d| d.name.clone()).collect();
        let review_pages = review_pages.to_owned();
        move || {
            for name in names {
                let output = Command::new("bash")
                    .arg(&script)
                    .arg(&cache)
                    .arg(&data_dir)
                    .arg(&name)
                    .arg(&review_pages)
                    .stdin(Stdio::null())
                    .output()
                    .map_err(io("running tryton/configure.sh with bash"))?;
                if !output.status.success() {
                    return Err(LocalError::Setup {
                        database: name,
                        reason: format!(
                            "configure.sh: {}\n{}",
                            output.status,
                            String::from_utf8_lossy(&output.stderr)
                        ),
                    });
                }
            }
            Ok(())
        }
    }

    /// Settings for database `name` (serving the tenant of the same name).
    pub fn settings(&self, name: &str) -> Option<TrytonSettings> {
        self.databases
            .iter()
            .find(|d| d.name == name)
            .map(|d| TrytonSettings::new(self.url.clone(), d.name.clone(), d.key.clone()))
    }

    /// A REST key of its own for Tryton user `login` (a person the seed
    /// made, e.g. `approver-sby`) in `database`, written into the database
    /// file as setup.sh writes the tools' key (trytond looks keys up on
    /// every request): for a test that acts as that person in Tryton.
    pub fn rest_key_for(&self, database: &str, login: &str) -> Result<TrytonKey, LocalError> {
        const MINT: &str = r#"
import secrets, sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=30)
with db:
    user = db.execute(
        "SELECT id FROM res_user WHERE login = ?", (sys.argv[2],)).fetchone()
    if user is None:
        sys.exit(f"no Tryton user {sys.argv[2]!r}")
    key = secrets.token_hex(32)
    db.execute(
        "INSERT INTO res_user_application"
        " (key, \"user\", application, state, create_uid, create_date)"
        " VALUES (?, ?, 'rest', 'validated', 0, CURRENT_TIMESTAMP)",
        (key, user[0]))
print(key)
"#;
        let python = std::env::var_os("DRAFTLINE_PYTHON").unwrap_or_else(|| "python3".into());
        let minted = Command::new(python)
            .arg("-c")
            .arg(MINT)
            .arg(self.data_dir.join(format!("{database}.sqlite")))
            .arg(login)
            .output()
            .map_err(io("running python3 to mint a REST key"))?;
        let key = String::from_utf8_lossy(&minted.stdout).trim().to_owned();
        if !minted.status.success() || key.is_empty() {
            return Err(LocalError::Setup {
                database: database.to_owned(),
                reason: format!("a REST key for {login}: {}", String::from_utf8_lossy(&minted.stderr)),
            });
        }
        Ok(TrytonKey::new(key))
    }

    /// Stops trytond and waits for it (also done on drop).
    pub fn stop(&mut self) {
        // Closing the watchdog's stdin makes it stop trytond and exit.
        drop(self.stdin.take());
        let Some(mut watchdog) = self.watchdog.take() else {
            return;
        };
        let until = Instant::now().checked_add(STOP_WITHIN);
        loop {
            match watchdog.try_wait() {
                Ok(Some(_)) => return,
                Ok(None) if until.is_some_and(|u| Instant::now() < u) => std::thread::sleep(Duration::from_millis(50)),
                _ => break,
            }
        }
        tracing::warn!("trytond did not stop in time; killing its watchdog");
        let _ = watchdog.kill();
        let _ = watchdog.wait();
    }
}

impl Drop for LocalTryton {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Writes the embedded `tryton/` folder to `<cache>/src-<hash>/` unless it is there.
fn write_sources(cache: &Path) -> Result<PathBuf, LocalError> {
    std::fs::create_dir_all(cache).map_err(io(format!("creating {}", cache.display())))?;
    let dir = cache.join(format!("src-{}", embedded::digest()));
    if dir.join(".complete").exists() {
        return Ok(dir);
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let tmp = cache.join(format!(".src-{}-{}-{nanos}", embedded::digest(), std::process::id()));
    for file in embedded::FILES {
        let path = tmp.join(file.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io(format!("creating {}", parent.display())))?;
        }
        std::fs::write(&path, file.bytes).map_err(io(format!("writing {}", path.display())))?;
        #[cfg(unix)]
        if file.path.ends_with(".sh") {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                .map_err(io(format!("making {} executable", path.display())))?;
        }
    }
    std::fs::write(tmp.join(".complete"), b"").map_err(io("marking the sources complete"))?;
    match std::fs::rename(&tmp, &dir) {
        Ok(()) => Ok(dir),
        // Another process wrote the same files first.
        Err(_) if dir.join(".complete").exists() => {
            let _ = std::fs::remove_dir_all(&tmp);
            Ok(dir)
        }
        Err(e) => Err(io(format!("moving the sources to {}", dir.display()))(e)),
    }
}

/// Runs `setup.sh` for `database` and returns what it prints: the key,
/// the web client's version, the demo people's passwords.
fn setup(src: &Path, cache: &Path, data_dir: &Path, database: &str) -> Result<SetUp, LocalError> {
    if !crate::settings::is_database_name(database) {
        return Err(LocalError::Invalid(format!(
            "database name must be [A-Za-z0-9_-]+: {database}"
        )));
    }
    let failed = |reason: String| LocalError::Setup {
        database: database.to_owned(),
        reason,
    };
    let mut child = Command::new("bash")
        .arg(src.join("setup.sh"))
        .arg(cache)
        .arg(data_dir)
        .arg(database)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(io("running tryton/setup.sh with bash"))?;
    // Progress goes to stderr: pass it on as it comes, keep the end for errors.
    let progress = child.stderr.take().map(|stderr| {
        std::thread::spawn(move || {
            let mut tail: Vec<String> = Vec::new();
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                tracing::info!(target: "draftline_erp_tryton::setup", "{line}");
                tail.push(line);
                if tail.len() > 40 {
                    tail.remove(0);
                }
            }
            tail
        })
    });
    let mut stdout = String::new();
    if let Some(mut out) = child.stdout.take() {
        out.read_to_string(&mut stdout)
            .map_err(io("reading setup.sh's output"))?;
    }
    let status = child.wait().map_err(io("waiting for setup.sh"))?;
    let tail = progress.and_then(|t| t.join().ok()).unwrap_or_default().join("\n");
    if !status.success() {
        return Err(failed(format!("{status}\n{tail}")));
    }
    parse_setup(&stdout).ok_or_else(|| failed(format!("it printed no `key <KEY>` line\n{tail}")))
}

/// setup.sh's stdout: `key <KEY>`, then maybe `web-client <version>` and
/// `person <login> <password>` lines.
fn parse_setup(stdout: &str) -> Option<SetUp> {
    let key = stdout
        .lines()
        .find_map(|line| line.strip_prefix("key "))
        .map(|key| TrytonKey::new(key.trim()))
        .filter(|key| !key.expose().is_empty())?;
    let web_client = stdout
        .lines()
        .find_map(|line| line.strip_prefix("web-client "))
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty());
    let people = stdout
        .lines()
        .filter_map(|line| line.strip_prefix("person "))
        .filter_map(|rest| {
            let (login, password) = rest.trim().split_once(' ')?;
            Some(LocalPerson {
                login: login.to_owned(),
                password: TrytonKey::new(password.trim()),
            })
        })
        .collect();
    Some(SetUp {
        key,
        web_client,
        people,
    })
}

/// A free local port (another process may take it before trytond does).
fn free_port() -> Result<u16, LocalError> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(io("finding a free port"))?;
    Ok(listener.local_addr().map_err(io("finding a free port"))?.port())
}

/// The watchdog: runs serve.sh, stops trytond when its stdin closes, and
/// exits when trytond does.
const WATCHDOG: &str = r#"
exec 3<&0
bash "$@" 3<&- </dev/null &
server=$!
( read -r _ <&3; kill -TERM "$server" 2>/dev/null ) &
watcher=$!
exec 3<&-
wait "$server"
status=$?
kill "$watcher" 2>/dev/null
exit "$status"
"#;

fn serve(
    src: &Path,
    cache: &Path,
    data_dir: &Path,
    databases: Vec<LocalDatabase>,
    web_client: Option<String>,
    port: Option<u16>,
) -> Result<LocalTryton, LocalError> {
    let port = match port {
        Some(port) => port,
        None => free_port()?,
    };
    let log_path = data_dir.join("trytond.log");
    let log = std::fs::File::create(&log_path).map_err(io(format!("creating {}", log_path.display())))?;
    let log_err = log.try_clone().map_err(io("opening trytond's log"))?;
    let mut watchdog = Command::new("bash")
        .arg("-c")
        .arg(WATCHDOG)
        .arg("draftline-trytond")
        .arg(src.join("serve.sh"))
        .arg(cache)
        .arg(data_dir)
        .arg(port.to_string())
        .stdin(Stdio::piped())
        .stdout(log)
        .stderr(log_err)
        .spawn()
        .map_err(io("running tryton/serve.sh with bash"))?;
    let stdin = watchdog.stdin.take();
    let mut local = LocalTryton {
        url: format!("http://127.0.0.1:{port}"),
        cache: cache.to_owned(),
        src: src.to_owned(),
        data_dir: data_dir.to_owned(),
        databases,
        web_client,
        watchdog: Some(watchdog),
        stdin,
    };
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let started = Instant::now();
    loop {
        // `GET /`: the web client's page (200), or 405 without one.
        if matches!(probe(&address, "/", None, Duration::from_secs(2)), Some(200 | 405)) {
            break;
        }
        let exited = local.watchdog.as_mut().and_then(|w| w.try_wait().ok().flatten());
        if exited.is_some() || started.elapsed() > READY_WITHIN {
            let log = std::fs::read_to_string(&log_path).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(30).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            local.stop();
            let why = match exited {
                Some(status) => format!("it exited ({status})"),
                None => format!("no answer on port {port} within {READY_WITHIN:?}"),
            };
            return Err(LocalError::Serve(format!(
                "{why}; {}:\n{}",
                log_path.display(),
                tail.join("\n")
            )));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    // Load every database's pool now (1-2 s each on first use), so that the
    // first real request stays well inside its timeout.
    std::thread::scope(|scope| {
        for database in &local.databases {
            scope.spawn(move || {
                let path = format!("/{}/rest/model/company.company?s=1", database.name);
                let status = probe(&address, &path, Some(&database.key), Duration::from_secs(60));
                if status != Some(200) {
                    tracing::warn!(database = %database.name, ?status, "warming up a Tryton database failed");
                }
            });
        }
    });
    tracing::info!(url = %local.url, databases = local.databases.len(), "trytond is serving");
    Ok(local)
}

/// The status of `GET path` (with the key and the company context), or `None`.
fn probe(address: &SocketAddr, path: &str, key: Option<&TrytonKey>, timeout: Duration) -> Option<u16> {
    let mut stream = TcpStream::connect_timeout(address, Duration::from_secs(1)).ok()?;
    stream.set_read_timeout(Some(timeout)).ok()?;
    stream.set_write_timeout(Some(timeout)).ok()?;
    let auth = key.map_or_else(String::new, |k| {
        format!(
            "Authorization: Bearer {}\r\nX-Tryton-Context: eyJjb21wYW55IjoxfQ==\r\n",
            k.expose()
        )
    });
    let request = format!("GET {path} HTTP/1.1\r\nHost: {address}\r\n{auth}Connection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut head = [0u8; 16];
    let mut read = 0usize;
    while read < head.len() {
        match stream.read(head.get_mut(read..)?) {
            Ok(0) | Err(_) => break,
            Ok(n) => read = read.checked_add(n)?,
        }
    }
    // "HTTP/1.1 405 ..."
    let head = std::str::from_utf8(head.get(..read)?).ok()?;
    head.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sources_are_written_once_per_content() {
        let cache = std::env::temp_dir().join(format!("draftline-tryton-src-{}", std::process::id()));
        let dir = write_sources(&cache).unwrap();
        assert!(dir.join("setup.sh").exists());
        assert!(dir.join("modules/draftline/view/purchase_form.xml").exists());
        assert_eq!(write_sources(&cache).unwrap(), dir);
        std::fs::remove_dir_all(&cache).unwrap();
    }

    #[test]
    fn setup_sh_tells_the_key_the_web_client_and_the_people() {
        let done =
            parse_setup("key abc\nweb-client 8.0.11\nperson buyer-sby pw-1\nperson approver-sby pw-2\nperson broken\n")
                .unwrap();
        assert_eq!(done.key.expose(), "abc");
        assert_eq!(done.web_client.as_deref(), Some("8.0.11"));
        let logins: Vec<&str> = done.people.iter().map(|p| p.login.as_str()).collect();
        assert_eq!(logins, ["buyer-sby", "approver-sby"]);
        assert_eq!(done.people[1].password.expose(), "pw-2");
        assert!(!format!("{:?}", done.people).contains("pw-"));
        let bare = parse_setup("key abc\n").unwrap();
        assert!(bare.web_client.is_none() && bare.people.is_empty());
        assert!(parse_setup("nothing\n").is_none());
    }

    #[test]
    fn a_database_name_setup_sh_would_refuse_is_refused_first() {
        let err = setup(Path::new("/nonexistent"), Path::new("/tmp"), Path::new("/tmp"), "a b").unwrap_err();
        assert!(matches!(err, LocalError::Invalid(_)), "{err}");
    }
}
