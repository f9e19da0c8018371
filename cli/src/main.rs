//! The `draftline` command: `serve`, `token`, `table create|seed`,
//! `policy show|set|schema`.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};
use draftline_cli::{LocalErp, LocalOptions, Shape, TokenSpec, demo_spec, shaped_token, start_local};
use draftline_dynamo::Db;

/// draftline: a safe tool surface between an ERP and AI agents.
#[derive(Parser)]
#[command(name = "draftline", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run every function on 127.0.0.1 with the embedded DynamoDB engine and the demo data.
    Serve {
        /// Port to listen on.
        #[arg(long, default_value_t = 3000)]
        port: u16,
        /// Keep the data in DIR across restarts (default: in memory / a temporary directory).
        #[arg(long, value_name = "DIR")]
        data: Option<PathBuf>,
        /// Use this DynamoDB API instead of the embedded engine.
        #[arg(long, value_name = "URL")]
        dynamodb_endpoint: Option<String>,
        /// The ERP behind the tools: the built-in demo ERP, or a local Tryton
        /// (installed into the cache on first use, ~2 min; started and stopped with the server).
        #[arg(long, value_enum, default_value_t = ErpChoice::Builtin)]
        erp: ErpChoice,
    },
    /// Print an access token for a demo user, or for any claims you give.
    Token {
        /// A demo user: buyer-sby, clerk-sby, buyer-jkt, sales-bdg.
        #[arg(long, conflicts_with_all = ["sub", "tenant", "branch", "branch_code", "scope"])]
        user: Option<String>,
        /// Subject (user id).
        #[arg(long, requires_all = ["tenant", "branch", "scope"])]
        sub: Option<String>,
        /// Tenant id.
        #[arg(long)]
        tenant: Option<String>,
        /// Branch id (e.g. SBY-01).
        #[arg(long)]
        branch: Option<String>,
        /// Branch code printed on documents (default: the branch id up to its first '-').
        #[arg(long)]
        branch_code: Option<String>,
        /// Space-separated scopes.
        #[arg(long)]
        scope: Option<String>,
        /// Audience: the deployment's resource URL.
        #[arg(long, default_value = "http://127.0.0.1:3000")]
        resource: String,
        /// Lifetime in seconds.
        #[arg(long, default_value_t = 3600)]
        ttl: i64,
        /// Where the token keeps the tenant, branch, user and scopes: as
        /// draftline's own claims, or as that identity provider issues them,
        /// under its issuer in docs/identity.local.json (serve with
        /// DRAFTLINE_ISSUERS=docs/identity.local.json to try one).
        #[arg(long, value_enum, default_value_t = Shape::Draftline)]
        shape: Shape,
    },
    /// Manage the DynamoDB table at DRAFTLINE_DYNAMODB_ENDPOINT (or AWS).
    Table {
        #[command(subcommand)]
        action: TableAction,
    },
    /// A tenant's limits for its agents, in the table at DRAFTLINE_DYNAMODB_ENDPOINT (or AWS).
    Policy {
        #[command(subcommand)]
        action: PolicyAction,
    },
    /// A tenant's webhook endpoints, in the table at DRAFTLINE_DYNAMODB_ENDPOINT (or AWS).
    Notify {
        #[command(subcommand)]
        action: NotifyAction,
    },
}

#[derive(Subcommand)]
enum NotifyAction {
    /// Print the tenant's notification settings in force (with their version), each secret shown by its last
    /// 4 characters.
    Show {
        /// The tenant.
        #[arg(long, default_value = "demo")]
        tenant: String,
        /// Print the secrets whole (to edit the file and set it again).
        #[arg(long)]
        with_secrets: bool,
    },
    /// Store FILE as the tenant's next settings version; an invalid file, or an endpoint webhooks may not be
    /// sent to, is refused with the JSON path of each problem, and nothing is changed.
    Set {
        /// The settings (JSON: docs/notifications.md).
        file: PathBuf,
        /// The tenant.
        #[arg(long, default_value = "demo")]
        tenant: String,
        /// Who sets it (kept with the version).
        #[arg(long, env = "USER", default_value = "operator")]
        by: String,
    },
    /// Print a new random signing secret (whsec_...).
    Secret,
    /// Deliver what is due now, from here: one sweep of the outbox (every tenant's), or with --until-empty
    /// sweeps until one finds nothing to do; e-mail by DRAFTLINE_SMTP_URL and DRAFTLINE_MAIL_FROM if set.
    Sweep {
        /// Sweep again until nothing is due.
        #[arg(long)]
        until_empty: bool,
    },
}

#[derive(Subcommand)]
enum PolicyAction {
    /// Print the tenant's policy in force (with its version), as `set` takes it.
    Show {
        /// The tenant.
        #[arg(long, default_value = "demo")]
        tenant: String,
    },
    /// Store FILE as the tenant's next policy version; an invalid file is refused with the JSON path of
    /// each problem, and nothing is changed.
    Set {
        /// The policy document (JSON; `draftline policy schema` prints its schema).
        file: PathBuf,
        /// The tenant.
        #[arg(long, default_value = "demo")]
        tenant: String,
        /// Who sets it (kept with the version).
        #[arg(long, env = "USER", default_value = "operator")]
        by: String,
    },
    /// Print the policy document's JSON Schema.
    Schema,
}

/// `serve --erp`.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ErpChoice {
    /// The demo ERP in draftline's own table (or what `DRAFTLINE_ERP` names).
    Builtin,
    /// A local trytond with the demo database.
    Tryton,
}

#[derive(Subcommand)]
enum TableAction {
    /// Create the table from infra/dynamodb/table.json (no-op if it exists).
    Create,
    /// Write the demo data (no-op if already there).
    Seed,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    draftline_contract::crypto::install_crypto_provider();
    match Cli::parse().command {
        Command::Serve {
            port,
            data,
            dynamodb_endpoint,
            erp,
        } => serve(port, data, dynamodb_endpoint, erp).await,
        Command::Token {
            user,
            sub,
            tenant,
            branch,
            branch_code,
            scope,
            resource,
            ttl,
            shape,
        } => {
            let spec = match (user, sub) {
                (Some(user), _) => demo_spec(&user)?,
                (None, Some(sub)) => {
                    let branch = branch.context("--branch is required with --sub")?;
                    TokenSpec {
                        sub,
                        tenant: tenant.context("--tenant is required with --sub")?,
                        branch_code: branch_code
                            .unwrap_or_else(|| branch.split('-').next().unwrap_or(&branch).to_owned()),
                        branch,
                        scope: scope.context("--scope is required with --sub")?,
                        roles: Vec::new(),
                    }
                }
                (None, None) => anyhow::bail!("give --user <demo user> or --sub with --tenant, --branch and --scope"),
            };
            println!("{}", shaped_token(&spec, shape, &resource, ttl)?);
            Ok(())
        }
        Command::Table { action } => table(action).await,
        Command::Policy { action } => policy(action).await,
        Command::Notify { action } => notify(action).await,
    }
}

async fn notify(action: NotifyAction) -> anyhow::Result<()> {
    use draftline_cli::notify;
    use draftline_contract::identity::TenantId;
    use draftline_server::events::endpoint::Reach;
    let tenant_of = |tenant: &str| TenantId::parse(tenant).map_err(anyhow::Error::msg);
    match action {
        NotifyAction::Secret => println!("{}", draftline_server::events::sign::Secret::generate()),
        NotifyAction::Sweep { until_empty } => {
            let mailer = draftline_server::events::mail::Mailer::from_env().map_err(anyhow::Error::msg)?;
            let (runs, swept) = notify::sweep(&table_db().await, Reach::from_env(), mailer, until_empty).await?;
            println!(
                "{runs} sweep(s): {} event(s) fanned out, {} delivered, {} to retry, {} dead",
                swept.fanned_out, swept.delivered, swept.retried, swept.dead
            );
        }
        NotifyAction::Show { tenant, with_secrets } => {
            let tenant = tenant_of(&tenant)?;
            match notify::show(&table_db().await, &tenant, with_secrets).await? {
                Some(text) => println!("{text}"),
                None => anyhow::bail!("tenant {tenant} has no notification settings: no webhooks are sent"),
            }
        }
        NotifyAction::Set { file, tenant, by } => {
            let tenant = tenant_of(&tenant)?;
            let bytes = std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?;
            let reach = Reach::from_env();
            let stored = notify::set(&table_db().await, &tenant, &bytes, (&by, reach), chrono::Utc::now()).await?;
            println!(
                "tenant {tenant}: notification settings version {} in force; the next sweep sends by them",
                stored.number
            );
        }
    }
    Ok(())
}

async fn policy(action: PolicyAction) -> anyhow::Result<()> {
    use draftline_cli::policy;
    use draftline_contract::identity::TenantId;
    if let PolicyAction::Schema = action {
        println!(
            "{}",
            serde_json::to_string_pretty(draftline_contract::policy::schema())?
        );
        return Ok(());
    }
    let db = table_db().await;
    match action {
        PolicyAction::Show { tenant } => {
            let tenant = TenantId::parse(&tenant).map_err(anyhow::Error::msg)?;
            match policy::show(&db, &tenant).await? {
                Some(text) => println!("{text}"),
                None => anyhow::bail!("tenant {tenant} has no policy: no limits apply to its agents"),
            }
        }
        PolicyAction::Set { file, tenant, by } => {
            let tenant = TenantId::parse(&tenant).map_err(anyhow::Error::msg)?;
            let bytes = std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?;
            let stored = policy::set(&db, &tenant, &bytes, &by, chrono::Utc::now()).await?;
            println!(
                "tenant {tenant}: policy version {} in force; warm functions apply it within \
                 DRAFTLINE_POLICY_CACHE_SECONDS (default {} s)",
                stored.version,
                draftline_server::config::DEFAULT_POLICY_CACHE.as_secs()
            );
        }
        PolicyAction::Schema => {}
    }
    Ok(())
}

/// The table the `table` and `policy` commands work on.
async fn table_db() -> Db {
    let table = std::env::var("DRAFTLINE_TABLE").unwrap_or_else(|_| "draftline".to_owned());
    let endpoint = std::env::var("DRAFTLINE_DYNAMODB_ENDPOINT").ok();
    Db::connect(&table, endpoint.as_deref()).await
}

async fn serve(
    port: u16,
    data: Option<PathBuf>,
    dynamodb_endpoint: Option<String>,
    erp: ErpChoice,
) -> anyhow::Result<()> {
    draftline_server::observe::init_text_logs();
    if erp == ErpChoice::Tryton {
        println!("starting a local Tryton (the first run installs it from PyPI: about 2 minutes)");
    }
    // The outbox is delivered beside the server: every
    // DRAFTLINE_SWEEP_MILLISECONDS (default 250); `off`: by `draftline
    // notify sweep` elsewhere.
    let every = match std::env::var("DRAFTLINE_SWEEP_MILLISECONDS") {
        Ok(ms) if ms.trim() == "off" => None,
        Ok(ms) => Some(
            ms.trim()
                .parse::<u64>()
                .ok()
                .filter(|ms| (10..=60_000).contains(ms))
                .context("DRAFTLINE_SWEEP_MILLISECONDS: a whole number of milliseconds from 10 to 60000, or off")?,
        ),
        Err(_) => Some(250),
    };
    let sweep = draftline_cli::Sweep {
        every: std::time::Duration::from_millis(every.unwrap_or(250)),
        poll_every: std::time::Duration::from_secs(2),
        reach: draftline_server::events::endpoint::Reach::from_env(),
        mailer: draftline_server::events::mail::Mailer::from_env().map_err(anyhow::Error::msg)?,
        lease: match std::env::var("DRAFTLINE_SWEEP_LEASE_SECONDS") {
            Ok(seconds) => Some(std::time::Duration::from_secs(
                seconds
                    .trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|s| (10..=3600).contains(s))
                    .context("DRAFTLINE_SWEEP_LEASE_SECONDS: a whole number of seconds from 10 to 3600")?,
            )),
            Err(_) => None,
        },
    };
    let smtp = sweep.mailer.is_some();
    let server = start_local(LocalOptions {
        port,
        data,
        dynamodb_endpoint,
        erp: match erp {
            ErpChoice::Builtin => LocalErp::Builtin,
            ErpChoice::Tryton => LocalErp::LocalTryton,
        },
        sweep: every.map(|_| sweep.clone()),
        ..LocalOptions::default()
    })
    .await?;
    let url = server.url();
    println!("listening on {url}");
    if let Some(endpoint) = &server.app.config().dynamodb_endpoint {
        println!("dynamodb endpoint: {endpoint} (table {})", server.app.config().table);
    }
    let swept = match every {
        Some(every) => format!("the outbox is swept every {every} ms"),
        None => "the outbox is not swept here (DRAFTLINE_SWEEP_MILLISECONDS=off: `draftline notify sweep`)".to_owned(),
    };
    println!(
        "webhooks: {swept}; `draftline notify set FILE` sets a tenant's endpoints{}",
        if sweep.reach.loopback {
            " (loopback endpoints allowed)"
        } else {
            ""
        }
    );
    if smtp {
        println!("mail: sent over SMTP (DRAFTLINE_SMTP_URL)");
    } else {
        println!("mail: no SMTP server is set (DRAFTLINE_SMTP_URL), so messages are kept at {url}/review/mail");
    }
    match server.seeded {
        Some(draftline_erp_builtin::seed::Seeded::Wrote(n)) => println!("seeded the demo tenant: {n} items"),
        Some(draftline_erp_builtin::seed::Seeded::AlreadySeeded) => {
            println!("demo data already present; not seeded again")
        }
        None => {}
    }
    if let Some(tryton) = &server.tryton {
        // Local use only: the key lets a person read the ERP's data directly.
        println!(
            "tryton: {} database {} key {}",
            tryton.url,
            tryton.database,
            tryton.key.expose()
        );
    }
    if let Some(local) = server.local_tryton() {
        match (local.web_client_url(), local.databases().first()) {
            (Some(web), Some(database)) => {
                // Local demo only: the demo people's Tryton sign-ins.
                println!(
                    "tryton web client: {web}#{} (sao {}; sign in to database {} as a demo person:)",
                    database.name,
                    local.web_client().unwrap_or("?"),
                    database.name
                );
                for person in &database.people {
                    println!("  {:<13} password {}", person.login, person.password.expose());
                }
            }
            _ => println!("tryton web client: not installed (npm was not found; see the setup log above)"),
        }
    }
    println!(
        "tools: {}",
        server
            .app
            .registry()
            .all()
            .map(|t| t.name)
            .collect::<Vec<_>>()
            .join(", ")
    );
    let me = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "draftline".to_owned());
    println!("get a token:  TOKEN=$({me} token --user buyer-sby --resource {url})");
    println!(
        "call a tool:  curl -s {url}/api/inventory_get_stock -H \"Authorization: Bearer $TOKEN\" -d '{{\"item_code\":\"BRG-0042\"}}'"
    );
    tokio::signal::ctrl_c().await.context("waiting for Ctrl-C")?;
    Ok(())
}

async fn table(action: TableAction) -> anyhow::Result<()> {
    let db = table_db().await;
    match action {
        TableAction::Create => {
            let created = draftline_infra::create_table(db.client(), db.table()).await?;
            println!("table {}: {created:?}", db.table());
        }
        TableAction::Seed => {
            let seeded = draftline_erp_builtin::seed::seed_demo(&db)
                .await
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            draftline_cli::policy::seed_demo(&db, chrono::Utc::now()).await?;
            println!("table {}: {seeded:?}", db.table());
        }
    }
    Ok(())
}
