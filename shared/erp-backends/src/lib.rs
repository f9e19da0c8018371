//! # draftline-erp-backends
//!
//! The one place a deployment chooses its ERP: `DRAFTLINE_ERP` names a
//! backend crate, which parses its own settings from the same
//! [`Source`] ([`ErpSettings::from_source`]), and [`catalogue`] builds every
//! tool over it. A new ERP (Odoo, ERPNext) is a crate implementing
//! [`draftline_erp::port::Erp`] and parsing its settings, plus one variant
//! of [`ErpSettings`] and [`Backend`] here (and the CLI's `--erp` choice).

use std::sync::Arc;

use draftline_contract::Registry;
use draftline_contract::identity::TenantId;
use draftline_contract::settings::{ConfigError, Source};
use draftline_dynamo::Db;
use draftline_erp::CatalogueTool;
use draftline_erp::port::Erp;
use draftline_erp_builtin::BuiltinErp;
use draftline_erp_tryton::{TrytonErp, TrytonSettings};
use draftline_server::config::Config;

/// Which ERP holds the documents (`DRAFTLINE_ERP`), with its backend's settings.
#[derive(Debug, Clone)]
pub enum ErpSettings {
    /// `builtin`: the demo ERP in draftline's own table (the default).
    Builtin,
    /// `tryton`: a Tryton database over its REST API (`DRAFTLINE_TRYTON_*`).
    Tryton(TrytonSettings),
}

impl ErpSettings {
    /// Reads `DRAFTLINE_ERP`, and has the backend it names read its own variables.
    pub fn from_source(source: &Source) -> Result<Self, ConfigError> {
        match source.get("DRAFTLINE_ERP").as_deref().map(str::trim) {
            None | Some("builtin") => Ok(Self::Builtin),
            Some("tryton") => Ok(Self::Tryton(TrytonSettings::from_source(source)?)),
            Some(other) => Err(ConfigError::Invalid {
                name: "DRAFTLINE_ERP",
                reason: format!("'{other}' is not an ERP backend; allowed: builtin, tryton"),
            }),
        }
    }
}

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
    /// The backend `settings` name, reached with `db` where it keeps its
    /// data in draftline's table. Makes no request.
    pub fn connect(settings: &ErpSettings, db: &Db) -> Result<Self, ConfigError> {
        match settings {
            ErpSettings::Builtin => Ok(Self::Builtin(BuiltinErp::new(db.clone()))),
            ErpSettings::Tryton(settings) => {
                TrytonErp::new(settings)
                    .map(Self::Tryton)
                    .map_err(|err| ConfigError::Invalid {
                        name: "DRAFTLINE_TRYTON_URL",
                        reason: err.to_string(),
                    })
            }
        }
    }

    /// The backend `source` names ([`ErpSettings::from_source`], then [`Backend::connect`]).
    pub fn from_source(source: &Source, db: &Db) -> Result<Self, ConfigError> {
        Self::connect(&ErpSettings::from_source(source)?, db)
    }

    /// The backend as the tools see it.
    pub fn erp(&self) -> Arc<dyn Erp> {
        match self {
            Self::Builtin(erp) => Arc::new(erp.clone()),
            Self::Tryton(erp) => Arc::new(erp.clone()),
        }
    }

    /// The ERP with the tenant whose decisions it takes in its own workflow,
    /// which draftline learns of by polling (Tryton); `None` for the
    /// built-in backend, whose decisions are made on the review pages.
    pub fn polled(&self) -> Option<(Arc<dyn Erp>, TenantId)> {
        match self {
            Self::Builtin(_) => None,
            Self::Tryton(erp) => Some((self.erp(), erp.tenant().clone())),
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

/// Every tool, over the ERP `source` names: the
/// [`Catalogue`](draftline_server::runtime::Catalogue) the functions that
/// serve every tool (MCP, the listings) pass to `run_function`.
pub fn catalogue(source: &Source, _: &Config, db: &Db) -> Result<Registry, ConfigError> {
    Ok(Backend::from_source(source, db)?.catalogue())
}

/// Every tool's definition and no tool's code, whatever the ERP: the
/// [`Catalogue`](draftline_server::runtime::Catalogue) of the listing
/// function (`api/tools.rs`), whose binary then links no backend.
pub fn definitions(_: &Source, _: &Config, _: &Db) -> Result<Registry, ConfigError> {
    Ok(draftline_erp::definitions())
}

/// Tool `T` alone, over the ERP `source` names.
pub fn catalogue_of<T: CatalogueTool>(source: &Source, _: &Config, db: &Db) -> Result<Registry, ConfigError> {
    Ok(draftline_erp::catalogue_of::<T>(
        Backend::from_source(source, db)?.erp(),
    ))
}

/// The whole `main` of tool `T`'s deployed function: `T` over the ERP of
/// the deployment's settings, and nothing else (no other tool, no MCP, no
/// listing is linked into its binary).
pub async fn run_tool<T: CatalogueTool>() -> std::process::ExitCode {
    use draftline_server::runtime::{ToolFunction, run_function};
    run_function(catalogue_of::<T>, ToolFunction(T::META.name)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_listing_defines_every_tool_as_the_catalogue_does_and_serves_none() {
        // No request is made: the client is only built.
        let db = Db::connect("draftline", Some("http://127.0.0.1:9")).await;
        let served = Backend::connect(&ErpSettings::Builtin, &db).unwrap().catalogue();
        let listed = draftline_erp::definitions();
        let json = |registry: &Registry| {
            serde_json::json!({
                "tools": registry.all().collect::<Vec<_>>(),
                "modules": registry.modules(),
            })
        };
        assert_eq!(json(&listed), json(&served));
        assert_eq!(listed.all().count(), 13);
        for definition in served.all() {
            assert!(served.get(definition.name).is_some());
            assert!(listed.get(definition.name).is_none(), "{} is served", definition.name);
        }
    }

    #[test]
    fn the_erp_is_builtin_unless_named_and_an_unknown_one_is_refused() {
        assert!(matches!(
            ErpSettings::from_source(&Source::map([("A", "b")])),
            Ok(ErpSettings::Builtin)
        ));
        let builtin = Source::map([("DRAFTLINE_ERP", " builtin ")]);
        assert!(matches!(ErpSettings::from_source(&builtin), Ok(ErpSettings::Builtin)));
        let err = ErpSettings::from_source(&Source::map([("DRAFTLINE_ERP", "odoo")])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "DRAFTLINE_ERP is invalid: 'odoo' is not an ERP backend; allowed: builtin, tryton"
        );
    }

    #[test]
    fn tryton_reads_its_own_settings() {
        let tryton = Source::map([("DRAFTLINE_ERP", "tryton")]);
        assert_eq!(
            ErpSettings::from_source(&tryton).unwrap_err(),
            ConfigError::Missing("DRAFTLINE_TRYTON_URL")
        );
        let tryton = tryton
            .with("DRAFTLINE_TRYTON_URL", "http://127.0.0.1:8000/")
            .with("DRAFTLINE_TRYTON_DATABASE", "demo")
            .with("DRAFTLINE_TRYTON_KEY", "k3y-never-shown");
        let settings = ErpSettings::from_source(&tryton).unwrap();
        assert!(matches!(&settings, ErpSettings::Tryton(t) if t.url == "http://127.0.0.1:8000"));
        assert!(!format!("{settings:?}").contains("k3y-never-shown"));
    }
}
