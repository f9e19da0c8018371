//! What a warm instance builds once ([`App`]), and what the rest reads of it.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{App, Pages};
use crate::anonymous::AnonymousTrace;
use crate::auth::Authenticator;
use crate::config::Config;
use crate::export::Exporter;
use crate::storage::{DynamoTable, Table};
use draftline_contract::clock::{Clock, SystemClock};
use draftline_contract::cursor::{CursorKey, KeySource};
use draftline_contract::tool::Registry;
use draftline_dynamo::Db;

impl App {
    /// Builds the app for `config`, connecting to DynamoDB.
    pub async fn new(registry: Registry, config: Config) -> Self {
        let db = Db::connect(&config.table, config.dynamodb_endpoint.as_deref()).await;
        Self::with_parts(registry, config, db, Arc::new(SystemClock))
    }

    /// Builds the app from parts on DynamoDB (tests inject a clock).
    pub fn with_parts(registry: Registry, config: Config, db: Db, clock: Arc<dyn Clock>) -> Self {
        let table = Arc::new(DynamoTable::new(db.clone()));
        let mut app = Self::on_table(registry, config, table, clock);
        app.db = Some(db);
        app
    }

    /// Builds the app on `table` (the pipeline's unit tests: in memory).
    pub fn on_table(registry: Registry, config: Config, table: Arc<dyn Table>, clock: Arc<dyn Clock>) -> Self {
        let cursors = config.cursor_key();
        if cursors.source() == KeySource::PublicFacts {
            tracing::warn!(
                "DRAFTLINE_CURSOR_SECRET is not set and there is no JWT secret: pagination cursors are sealed \
                 with a key derived from public settings (they still cannot leave the caller's branch)"
            );
        }
        let contracts = registry
            .all()
            .map(|definition| (definition.name.to_owned(), super::outcome::contract_version(definition)))
            .collect();
        Self {
            // Built only when an endpoint is set: otherwise a call pays one `Option` check.
            exporter: config.export.as_ref().and_then(Exporter::build),
            auth: Authenticator::new(&config.issuers, &config.resource, config.jwt_secret.as_ref()),
            contracts,
            cursors,
            review_pages: format!("{}/review", crate::auth::origin_of(&config.resource)),
            pages: None,
            limits: crate::policy::Limits::new(config.policy_cache, config.rate_limit_per_minute),
            answered: crate::idempotency::AnsweredKeys::default(),
            registry,
            table,
            db: None,
            clock,
            config,
            anonymous: AnonymousTrace::new(),
        }
    }

    /// This app, also serving `pages` (the review pages) under their prefix.
    pub fn with_pages(mut self, pages: Arc<dyn Pages>) -> Self {
        self.pages = Some(pages);
        self
    }

    /// The pages this app serves besides the tools, if any.
    pub fn pages(&self) -> Option<&Arc<dyn Pages>> {
        self.pages.as_ref()
    }

    /// Where this deployment's review pages are (`<resource origin>/review`).
    pub fn review_pages(&self) -> &str {
        &self.review_pages
    }

    /// The key that seals this deployment's pagination cursors.
    pub fn cursors(&self) -> &CursorKey {
        &self.cursors
    }

    /// The tools.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The instance's telemetry exporter, when an endpoint is set.
    pub fn exporter(&self) -> Option<&Exporter> {
        self.exporter.as_ref()
    }

    /// The table the pipeline keeps its records in.
    pub fn table(&self) -> &dyn Table {
        self.table.as_ref()
    }

    /// Runs `fut` as deployed function `function` would serve it: on
    /// DynamoDB, its requests are recorded for the grants it needs.
    pub async fn serving<F: std::future::Future>(&self, function: &'static str, fut: F) -> F::Output {
        match &self.db {
            Some(db) => db.serving(function, fut).await,
            None => fut.await,
        }
    }

    /// The DynamoDB connection, when the table is DynamoDB's.
    pub fn db(&self) -> Option<&Db> {
        self.db.as_ref()
    }

    /// What the tenant's policy leaves a caller or a run, read from the
    /// table with the instance's copy of each policy.
    pub fn examiner(&self) -> crate::policy::TableExaminer<'_> {
        crate::policy::TableExaminer::new(self.table.as_ref(), self.limits.policies())
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn clock(&self) -> &dyn Clock {
        self.clock.as_ref()
    }

    pub fn authenticator(&self) -> &Authenticator {
        &self.auth
    }

    /// The RFC 9728 metadata URL named in `WWW-Authenticate`.
    pub fn resource_metadata_url(&self) -> String {
        format!("{}/.well-known/oauth-protected-resource", self.config.resource)
    }

    /// The RFC 9728 protected resource metadata of this deployment.
    pub fn protected_resource_metadata(&self) -> Value {
        let mut scopes: Vec<&str> = self.registry.all().map(|t| t.scope).collect();
        scopes.sort_unstable();
        scopes.dedup();
        json!({
            "resource": self.config.resource,
            "authorization_servers": self.config.issuers.iter().map(|entry| &entry.issuer).collect::<Vec<_>>(),
            "bearer_methods_supported": ["header"],
            "scopes_supported": scopes,
            "resource_name": "draftline ERP tools",
        })
    }
}
