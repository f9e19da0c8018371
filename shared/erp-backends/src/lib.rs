//! # draftline-erp-backends
//!
//! The one place a deployment chooses its ERP: `DRAFTLINE_ERP` (read by the
//! server's one configuration parser) names a backend crate, and
//! [`catalogue`] builds every tool over it. A new ERP (Odoo, ERPNext) is a
//! crate implementing [`draftline_erp::port::Erp`] plus one arm here.

use std::sync::Arc;

use draftline_contract::Registry;
use draftline_dynamo::Db;
use draftline_erp::port::Erp;
use draftline_erp_builtin::BuiltinErp;
use draftline_server::config::{Config, ConfigError, ErpSettings};

/// The ERP `config` names, reached with `db` where it keeps its data in
/// draftline's table.
pub fn erp(config: &Config, db: &Db) -> Result<Arc<dyn Erp>, ConfigError> {
    match &config.erp {
        ErpSettings::Builtin => Ok(Arc::new(BuiltinErp::new(db.clone()))),
        ErpSettings::Tryton(_) => Err(ConfigError::Invalid {
            name: "DRAFTLINE_ERP",
            reason: "the tryton backend is not part of this build".into(),
        }),
    }
}

/// Every tool, over the ERP `config` names: a
/// [`Catalogue`](draftline_server::runtime::Catalogue) for `run_function`.
pub fn catalogue(config: &Config, db: &Db) -> Result<Registry, ConfigError> {
    Ok(draftline_erp::catalogue(erp(config, db)?))
}
