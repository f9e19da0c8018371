//! # draftline-review
//!
//! The people's side of draftline: server-rendered pages under `/review`
//! where a signed-in person reads what agents did and approves or rejects
//! their drafts. Agents only ever read and draft; this crate is the only
//! place a decision is made, and only for a person with an interactive
//! session and an approve scope that no tool accepts.
//!
//! It plugs into every runtime through [`draftline_server::pages::Pages`]:
//! its own deployed function (`api/review.rs`, [`run_function`]) and
//! `draftline serve`. It reads documents through the ERP port, so the queue
//! and the run pages work on every backend; decisions are recorded here only
//! where the backend says approvals happen in draftline
//! ([`Approvals::InDraftline`](draftline_erp::port::Approvals)).
//!
//! ## Layout
//! - [`settings`]: [`settings::ReviewSettings`], the pages' own settings
//!   (`DRAFTLINE_SESSION_*`, `DRAFTLINE_OIDC_*`, `DRAFTLINE_REVIEW_*`),
//!   parsed from the deployment's settings source.
//! - [`session`]: the signed, stateless session cookie and CSRF tokens.
//! - [`sign_in`]: the sign-in page, the demo sign-in of `draftline serve`,
//!   sign-out; [`oidc`]: OpenID Connect (authorization code + PKCE).
//! - [`queue`] (`GET /review`), [`run`] (`GET /review/runs/<id>`),
//!   [`document`] (`GET /review/documents/<number>`): the pages.
//! - [`decide`]: `POST …/approve` and `…/reject`: idempotent, audited,
//!   recorded on the document in one transaction.
//! - [`trail`]: reading the audit items of a run and of a document.
//! - [`duplicates`]: the open drafts of the same counterparty and items,
//!   marked on the document page and in the queue.
//! - [`html`] (escaping, layout, badges, amounts), [`web`] (forms,
//!   cookies, responses, the Content-Security-Policy).
//! - [`demo`]: the audit trail of the seeded demo drafts.

pub mod decide;
pub mod demo;
pub mod document;
pub mod duplicates;
pub mod html;
pub mod notifications;
pub mod oidc;
pub mod poll;
pub mod queue;
pub mod run;
pub mod session;
pub mod settings;
pub mod sign_in;
pub mod trail;
pub mod web;

use std::process::ExitCode;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use draftline_contract::ToolError;
use draftline_contract::identity::Caller;
use draftline_contract::settings::{ConfigError, Source};
use draftline_dynamo::Db;
use draftline_erp::domain::DocumentKind;
use draftline_erp::port::Erp;
use draftline_server::App;
use draftline_server::config::Config;
use draftline_server::edge::Admitted;
use draftline_server::events::mail::LocalMailbox;
use draftline_server::pages::Pages;
use http::{Method, Request, Response, StatusCode};

use crate::session::{Session, SessionKeys};
use crate::settings::ReviewSettings;

/// Where the review pages live.
pub const PREFIX: &str = "/review";

/// How a deployment reaches its ERP from its settings' source
/// (`draftline_erp_backends` provides it).
pub type ErpOf = fn(&Source, &Db) -> Result<Arc<dyn Erp>, ConfigError>;

/// The review pages of one deployment, built once per warm instance.
pub struct ReviewPages {
    erp: Arc<dyn Erp>,
    keys: SessionKeys,
    demo_sign_in: bool,
    oidc: Option<oidc::Oidc>,
    allow_self_approval: bool,
    /// The messages `draftline serve` keeps when no SMTP server is set.
    mailbox: Option<LocalMailbox>,
}

impl ReviewPages {
    /// The pages with `settings` in `config`'s deployment, over `erp`.
    /// Refuses (naming the setting) a deployment where nobody could sign
    /// in, or whose sessions could not be sealed.
    pub fn new(config: &Config, settings: &ReviewSettings, erp: Arc<dyn Erp>) -> Result<Self, ConfigError> {
        let keys = SessionKeys::of(config, settings)?;
        let oidc = settings
            .oidc
            .as_ref()
            .map(|oidc| oidc::Oidc::new(oidc, config))
            .transpose()?;
        if oidc.is_none() && !settings.demo_sign_in {
            return Err(ConfigError::Missing("DRAFTLINE_OIDC_ISSUER"));
        }
        Ok(Self {
            erp,
            keys,
            demo_sign_in: settings.demo_sign_in,
            oidc,
            allow_self_approval: settings.allow_self_approval,
            mailbox: None,
        })
    }

    /// The pages, also showing the messages of `mailbox` at
    /// `/review/mail` (`draftline serve` without SMTP, like a mail
    /// catcher; never a deployed function).
    pub fn with_mailbox(self, mailbox: LocalMailbox) -> Self {
        Self {
            mailbox: Some(mailbox),
            ..self
        }
    }

    /// The ERP the pages read.
    pub fn erp(&self) -> &Arc<dyn Erp> {
        &self.erp
    }

    /// The session keys (tests sign people in with them).
    pub fn keys(&self) -> &SessionKeys {
        &self.keys
    }

    /// The signed-in person of a request: its session cookie opens, has
    /// not expired and was not signed out ([`session::is_revoked`]).
    async fn session(&self, app: &App, request: &Request<Bytes>) -> Result<Option<Session>, ToolError> {
        let Some(session) = web::cookie(request.headers(), self.keys.session_cookie())
            .and_then(|cookie| self.keys.open_session(cookie, app.clock().now()))
        else {
            return Ok(None);
        };
        if session::is_revoked(app.table(), &session).await? {
            return Ok(None);
        }
        Ok(Some(session))
    }
}

/// What one page request has: the app, the pages, the person, the request id.
pub struct Context<'a> {
    /// The app (table, clock, configuration, cursor key).
    pub app: &'a App,
    /// The pages (ERP, keys, settings).
    pub pages: &'a ReviewPages,
    /// The signed-in person.
    pub session: &'a Session,
    /// The request id, shown on error pages.
    pub request_id: &'a str,
}

impl Context<'_> {
    pub fn person(&self) -> &Caller {
        &self.session.person
    }

    /// The CSRF token of this session's forms.
    pub fn csrf(&self) -> String {
        self.pages.keys.csrf_token(self.session)
    }

    /// The page header for this person.
    pub fn header<'h>(&self, csrf: &'h str) -> html::Header<'h>
    where
        Self: 'h,
    {
        html::Header {
            person: Some((
                self.session.person.user().as_str(),
                self.session.person.branch().as_str(),
            )),
            csrf: Some(csrf),
        }
    }

    /// A full page for this person.
    pub fn page(&self, status: StatusCode, title: &str, main: &str) -> Response<Bytes> {
        let csrf = self.csrf();
        web::html(status, html::layout(title, &self.header(&csrf), main))
    }

    /// The page of an error (its status, its text, the request id).
    pub fn error_page(&self, err: &ToolError) -> Response<Bytes> {
        if err.status().is_server_error() {
            tracing::error!(request_id = self.request_id, error = %err, "review page failed");
        }
        let main = error_main(err, self.request_id);
        self.page(err.status(), error_title(err), &main)
    }
}

fn error_title(err: &ToolError) -> &'static str {
    match err.status() {
        StatusCode::NOT_FOUND => "Not found",
        StatusCode::FORBIDDEN => "Not allowed",
        StatusCode::BAD_REQUEST => "Cannot do that",
        s if s.is_server_error() => "Try again",
        _ => "Cannot do that",
    }
}

fn error_main(err: &ToolError, request_id: &str) -> String {
    format!(
        "<h1>{}</h1>{}<p class=\"muted\">Reference: <code>{}</code> · <a href=\"/review\">Back to the queue</a></p>",
        html::text(error_title(err)),
        html::notice("error", &err.public_message()),
        html::text(request_id)
    )
}

/// A page for someone not signed in (sign-in, errors before a session).
pub fn anonymous_page(status: StatusCode, title: &str, main: &str) -> Response<Bytes> {
    web::html(
        status,
        html::layout(
            title,
            &html::Header {
                person: None,
                csrf: None,
            },
            main,
        ),
    )
}

/// An error page for someone not signed in.
fn anonymous_error(err: &ToolError, request_id: &str) -> Response<Bytes> {
    anonymous_page(err.status(), error_title(err), &error_main(err, request_id))
}

/// Whether `person` may see documents of `kind` (a read or approve scope of its module).
pub fn may_see(person: &Caller, kind: DocumentKind) -> bool {
    let scopes = person.scopes();
    match kind {
        DocumentKind::PurchaseOrder => scopes.grants("purchasing:read") || scopes.grants("purchasing:approve"),
        DocumentKind::Quote => scopes.grants("sales:read") || scopes.grants("sales:approve"),
    }
}

/// The scope that approves documents of `kind`. No tool accepts it.
pub fn approve_scope(kind: DocumentKind) -> &'static str {
    match kind {
        DocumentKind::PurchaseOrder => "purchasing:approve",
        DocumentKind::Quote => "sales:approve",
    }
}

#[async_trait]
impl Pages for ReviewPages {
    fn prefix(&self) -> &'static str {
        PREFIX
    }

    async fn handle(&self, app: &App, request: Admitted) -> Response<Bytes> {
        let (origin, request_id) = (request.origin(), request.request_id().to_owned());
        let mut response = match origin {
            Err(err) => anonymous_error(&err, &request_id),
            Ok(()) => self.route(app, request.into_request().0, &request_id).await,
        };
        // Every answer names its request, as the tools' do.
        if let Ok(id) = http::HeaderValue::from_str(&request_id) {
            response.headers_mut().insert("x-request-id", id);
        }
        response
    }
}

impl ReviewPages {
    async fn route(&self, app: &App, request: Request<Bytes>, request_id: &str) -> Response<Bytes> {
        let request_id = request_id.to_owned();
        let path = request.uri().path().trim_end_matches('/').to_owned();
        let rest = path.strip_prefix(PREFIX).unwrap_or_default();
        let method = request.method().clone();
        let segments: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();

        // The pages anyone may reach.
        match (method.clone(), segments.as_slice()) {
            (Method::GET, ["assets", "review.css"]) => return web::stylesheet(),
            (Method::GET | Method::HEAD, ["signin"]) => return sign_in::page(app, self, &request, &request_id).await,
            (Method::POST, ["signin", "demo"]) => return sign_in::demo(app, self, &request, &request_id),
            (Method::GET, ["signin", "oidc"]) => return oidc::start(app, self, &request, &request_id).await,
            (Method::GET, ["callback"]) => return oidc::callback(app, self, &request, &request_id).await,
            (Method::POST, ["signout"]) => return sign_in::sign_out(self, app, &request, &request_id).await,
            _ => {}
        }
        // Approving and rejecting refuse a bearer token outright, signed in or not.
        if let (Method::POST, ["documents", number, verb @ ("approve" | "reject")]) =
            (method.clone(), segments.as_slice())
            && request.headers().contains_key(http::header::AUTHORIZATION)
        {
            return decide::refuse_bearer(app, &request, number, verb, &request_id).await;
        }
        let session = match self.session(app, &request).await {
            Ok(session) => session,
            Err(err) => return anonymous_error(&err, &request_id),
        };
        let Some(session) = session else {
            if method == Method::POST {
                // A form posted without a session: nothing is done.
                let err = ToolError::Unauthenticated(draftline_contract::error::AuthFailure::Missing);
                let main = format!(
                    "<h1>Sign in first</h1>{}<p><a href=\"/review/signin\">Sign in</a></p>",
                    html::notice(
                        "error",
                        &format!(
                            "You are not signed in (or your session expired), so nothing was done. {}",
                            err.public_message().split(". ").next().unwrap_or_default()
                        )
                    )
                );
                return anonymous_page(StatusCode::UNAUTHORIZED, "Sign in first", &main);
            }
            let next = request.uri().path_and_query().map(|p| p.as_str()).unwrap_or(PREFIX);
            return web::see_other(&format!(
                "/review/signin?next={}",
                web::encode(&web::safe_next(Some(next)))
            ));
        };
        let cx = Context {
            app,
            pages: self,
            session: &session,
            request_id: &request_id,
        };
        let response = match (method, segments.as_slice()) {
            (Method::GET | Method::HEAD, []) => queue::page(&cx, &request).await,
            (Method::GET | Method::HEAD, ["runs", run]) => run::page(&cx, &request, run).await,
            (Method::GET | Method::HEAD, ["documents", number]) => document::page(&cx, &request, number).await,
            (Method::POST, ["documents", number, verb @ ("approve" | "reject")]) => {
                decide::post(&cx, request.body(), number, verb).await
            }
            (Method::GET | Method::HEAD, ["notifications"]) => notifications::page(&cx, &request).await,
            (Method::GET | Method::HEAD, ["mail"]) if self.mailbox.is_some() => {
                notifications::mailbox(&cx, self.mailbox.as_ref())
            }
            (Method::POST, ["notifications", "send-again"]) => notifications::send_again(&cx, request.body()).await,
            _ => cx.error_page(&ToolError::NotFound(format!(
                "There is no review page at {}. The queue is at /review.",
                path.chars().take(80).collect::<String>()
            ))),
        };
        tracing::info!(
            request_id,
            person = %session.person.user(),
            status = response.status().as_u16(),
            "review page"
        );
        response
    }
}

/// Runs the review pages as a deployed function (`api/review.rs`): the
/// configuration once, the ERP `erp_of` names, the pages' own settings,
/// the pages, served through Lambda or Vercel like every function. A
/// deployed function never offers the demo sign-in: the environment cannot
/// turn it on. Its registry holds the tools' definitions only (the run page
/// names their modules; the function serves no tool), so its binary links
/// no tool's code.
pub async fn run_function(erp_of: ErpOf) -> ExitCode {
    draftline_server::runtime::run_pages(|source, config, db| {
        let erp = erp_of(source, db)?;
        let settings = ReviewSettings::from_source(source)?;
        let pages: Arc<dyn Pages> = Arc::new(ReviewPages::new(config, &settings, erp.clone())?);
        Ok((draftline_erp::definitions(), pages))
    })
    .await
}
