//! # draftline-erp-backends
//!
//! The one place a deployment chooses its ERP: `DRAFTLINE_ERP` (read by the
//! server's one configuration parser) names a backend crate, and
//! [`catalogue`] builds every tool over it. A new ERP (Odoo, ERPNext) is a
//! crate implementing [`draftline_erp::port::Erp`] plus one arm of
//! [`Backend::connect`].

use std::sync::Arc;

use draftline_contract::Registry;
use draftline_dynamo::Db;
use draftline_erp::CatalogueTool;
use draftline_erp::port::Erp;
use draftline_erp_builtin::BuiltinErp;
use draftline_erp_tryton::{TrytonErp, TrytonKey};
use draftline_server::config::{Config, ConfigError, ErpSettings};

/// The ERP of a deployment, built once per instance (a backend keeps its
/// caches, connections and counters for the instance's life).
#[derive(Debug, Clone)]
pub enum Backend {
    /// The demo ERP in draftline's own table.
    Builtin(BuiltinErp),
    /// A Tryton database over its REST API.
    Tryton(TrytonErp),
}

impl Backend {
    /// The backend `config` names, reached with `db` where it keeps its data
    /// in draftline's table. Makes no request.
    pub fn connect(config: &Config, db: &Db) -> Result<Self, ConfigError> {
        match &config.erp {
            ErpSettings::Builtin => Ok(Self::Builtin(BuiltinErp::new(db.clone()))),
            ErpSettings::Tryton(tryton) => {
                let mut settings = draftline_erp_tryton::TrytonSettings::new(
                    tryton.url.clone(),
                    tryton.database.clone(),
                    TrytonKey::new(tryton.key.expose()),
                );
                settings.tenant = tryton.tenant.clone();
                TrytonErp::new(&settings)
                    .map(Self::Tryton)
                    .map_err(|err| ConfigError::Invalid {
                        name: "DRAFTLINE_TRYTON_URL",
                        reason: err.to_string(),
                    })
            }
        }
    }

    /// The backend as the tools see it.
    pub fn erp(&self) -> Arc<dyn Erp> {
        match self {
            Self::Builtin(erp) => Arc::new(erp.clone()),
            Self::Tryton(erp) => Arc::new(erp.clone()),
        }
    }

    /// Every tool over this backend.
    pub fn catalogue(&self) -> Registry {
        draftline_erp::catalogue(self.erp())
    }

    /// How many requests this instance sent to the ERP outside draftline's
    /// table (`None` for the built-in backend, whose reads are DynamoDB
    /// round trips).
    pub fn erp_requests(&self) -> Option<u64> {
        match self {
            Self::Builtin(_) => None,
            Self::Tryton(erp) => Some(erp.requests()),
        }
    }
}

/// Every tool, over the ERP `config` names: the
/// [`Catalogue`](draftline_server::runtime::Catalogue) the functions that
/// serve every tool (MCP, the listings) pass to `run_function`.
pub fn catalogue(config: &Config, db: &Db) -> Result<Registry, ConfigError> {
    Ok(Backend::connect(config, db)?.catalogue())
}

/// Tool `T` alone, over the ERP `config` names.
pub fn catalogue_of<T: CatalogueTool>(config: &Config, db: &Db) -> Result<Registry, ConfigError> {
    Ok(draftline_erp::catalogue_of::<T>(Backend::connect(config, db)?.erp()))
}

/// The whole `main` of tool `T`'s deployed function: `T` over the ERP of
/// the deployment's settings, and nothing else (no other tool, no MCP, no
/// listing is linked into its binary).
pub async fn run_tool<T: CatalogueTool>() -> std::process::ExitCode {
    use draftline_server::runtime::{ToolFunction, run_function};
    run_function(catalogue_of::<T>, ToolFunction(T::META.name)).await
}
