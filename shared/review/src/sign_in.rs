//! Signing in and out.
//!
//! - `GET /review/signin`: the sign-in page. In a deployment it offers the
//!   organisation's identity provider ([`crate::oidc`]); `draftline serve`
//!   also lists the demo people, each one button.
//! - `POST /review/signin/demo`: signs a demo person in. Only where the
//!   configuration says so ([`ReviewSettings::demo_sign_in`]), which only
//!   `draftline serve` does: a deployed function answers 404. The form is
//!   CSRF-safe although nobody is signed in yet: the sign-in page sets a
//!   random pre-session cookie and the form carries its HMAC, and the post
//!   must come from this very origin (scheme, host and port) when the
//!   browser names one. A page on another local port can neither read the
//!   token nor pass the origin check, so it cannot sign the browser in.
//! - `POST /review/signout`: revokes the session on the server (so a copy
//!   of the cookie no longer opens a page) and clears the cookie (CSRF
//!   token required).
//!
//! [`ReviewSettings::demo_sign_in`]: crate::settings::ReviewSettings::demo_sign_in

use std::fmt::Write;

use bytes::Bytes;
use draftline_contract::ToolError;
use draftline_contract::identity::Scopes;
use draftline_erp::demo;
use draftline_server::App;
use http::{Request, Response, StatusCode};

use crate::html::{attr, text};
use crate::session::{Session, SignedInWith};
use crate::web::{self, Fields};
use crate::{ReviewPages, anonymous_page};

/// What a demo person reviews, in words.
fn reviews(scope: &str) -> &'static str {
    let scopes = Scopes::from_claim(scope);
    match (scopes.grants("purchasing:approve"), scopes.grants("sales:approve")) {
        (true, true) => "approves purchase orders and quotes",
        (true, false) => "approves purchase orders",
        (false, true) => "approves quotes",
        (false, false) if scopes.grants("purchasing:read") || scopes.grants("sales:read") => {
            "reads drafts, cannot approve"
        }
        _ => "sees no drafts",
    }
}

/// `GET /review/signin`.
pub async fn page(app: &App, pages: &ReviewPages, request: &Request<Bytes>, request_id: &str) -> Response<Bytes> {
    let query = Fields::of_query(request.uri());
    let next = web::safe_next(query.get("next"));
    match pages.session(app, request).await {
        Ok(Some(_)) => return web::see_other(&next),
        Ok(None) => {}
        Err(err) => return crate::anonymous_error(&err, request_id),
    }
    // The demo form's CSRF anchor: this browser's pre-session cookie, kept
    // while it lives, else a new one.
    let (set_pre, pre) = match web::cookie(request.headers(), pages.keys.pre_session_cookie())
        .filter(|pre| !pre.is_empty() && pre.len() <= 64)
    {
        Some(pre) => (None, pre.to_owned()),
        None => {
            let (cookie, pre) = pages.keys.new_pre_session();
            (Some(cookie), pre)
        }
    };
    let token = pages.keys.pre_session_token(&pre);
    let mut main = String::from("<h1>Sign in to review agent drafts</h1>");
    main.push_str(
        "<p class=\"muted\">Agents only read and draft. People sign in here to read what an agent did and to \
         approve or reject its drafts.</p>",
    );
    if pages.oidc.is_some() {
        let _ = write!(
            main,
            "<p><a class=\"badge status-done\" href=\"/review/signin/oidc?next={}\">Sign in with your organisation's \
             account</a></p>",
            attr(&web::encode(&next))
        );
    }
    if pages.demo_sign_in {
        main.push_str(
            "<h2>Demo people</h2><p class=\"muted\">Only on <code>draftline serve</code>: pick who you are. A \
             deployment signs people in with its identity provider instead.</p><ul class=\"people\">",
        );
        for user in demo::USERS.iter() {
            let _ = write!(
                main,
                "<li><form method=\"post\" action=\"/review/signin/demo\">\
                 <input type=\"hidden\" name=\"user\" value=\"{user}\">\
                 <input type=\"hidden\" name=\"next\" value=\"{next}\">\
                 <input type=\"hidden\" name=\"csrf\" value=\"{token}\">\
                 <button type=\"submit\"><strong>{name}</strong>\
                 <span class=\"small\">{branch} · {what}</span><br><span class=\"small muted\">{scope}</span>\
                 </button></form></li>",
                user = attr(user.sub),
                next = attr(&next),
                token = attr(&token),
                name = text(user.sub),
                branch = text(user.branch_id),
                what = text(reviews(user.scope)),
                scope = text(user.scope),
            );
        }
        main.push_str("</ul>");
    }
    let mut response = anonymous_page(StatusCode::OK, "Sign in", &main);
    if let Some(cookie) = set_pre {
        web::set_cookie(&mut response, &cookie);
    }
    response
}

/// A demo sign-in refused before anyone was signed in: 403 with why.
fn not_signed_in(why: &str, request_id: &str) -> Response<Bytes> {
    let err = ToolError::Forbidden {
        scope: "sign-in".to_owned(),
        message: format!("{why} Nobody was signed in. Open the sign-in page of this server and sign in from there."),
    };
    crate::anonymous_error(&err, request_id)
}

/// `POST /review/signin/demo`.
pub fn demo(app: &App, pages: &ReviewPages, request: &Request<Bytes>, request_id: &str) -> Response<Bytes> {
    if !pages.demo_sign_in {
        let err = ToolError::NotFound(
            "There is no demo sign-in here: a deployment signs people in with its identity provider. Nothing was \
             done."
                .into(),
        );
        return crate::anonymous_error(&err, request_id);
    }
    // Only this very origin may post the form (another local port is
    // another origin, though cookies do not tell ports apart).
    let origin = request
        .headers()
        .get(http::header::ORIGIN)
        .map(|o| o.to_str().unwrap_or_default());
    if origin.is_some_and(|origin| !draftline_server::edge::origin::is_own_origin(origin, &app.config().resource)) {
        tracing::warn!(request_id, "demo sign-in posted from another origin refused");
        return not_signed_in("This sign-in form was posted from another page's origin.", request_id);
    }
    let form = Fields::parse(request.body());
    let pre = web::cookie(request.headers(), pages.keys.pre_session_cookie());
    if !pages.keys.pre_session_matches(pre, form.get("csrf")) {
        tracing::warn!(request_id, "demo sign-in without this browser's sign-in token refused");
        return not_signed_in(
            "This sign-in form does not belong to this browser (it is old, or came from another page).",
            request_id,
        );
    }
    let Some(user) = form.get("user").and_then(demo::user) else {
        let err = ToolError::invalid(
            "user",
            format!(
                "That is not a demo person. Demo people: {}. Nobody was signed in.",
                demo::USERS.iter().map(|u| u.sub).collect::<Vec<_>>().join(", ")
            ),
        );
        return crate::anonymous_error(&err, request_id);
    };
    let person = crate::demo::demo_person(user.sub);
    let Some(person) = person else {
        return crate::anonymous_error(&ToolError::internal("a demo person does not parse"), request_id);
    };
    let now = app.clock().now();
    let session = Session::start_bounded(person, SignedInWith::Demo, now, pages.keys.max_session_seconds(), None);
    let mut response = web::see_other(&web::safe_next(form.get("next")));
    web::set_cookie(&mut response, &pages.keys.session_set_cookie(&session, now));
    web::set_cookie(&mut response, &pages.keys.clear(pages.keys.pre_session_cookie()));
    tracing::info!(request_id, person = user.sub, "signed in (demo)");
    response
}

/// `POST /review/signout`.
pub async fn sign_out(pages: &ReviewPages, app: &App, request: &Request<Bytes>, request_id: &str) -> Response<Bytes> {
    let form = Fields::parse(request.body());
    let session = match pages.session(app, request).await {
        Ok(session) => session,
        Err(err) => return crate::anonymous_error(&err, request_id),
    };
    if let Some(session) = &session
        && !pages.keys.csrf_matches(session, form.get("csrf"))
    {
        let main = format!(
            "<h1>Not signed out</h1>{}",
            crate::html::notice(
                "error",
                "This sign-out form does not belong to your session (it is old, or came from another page). \
                 Reload the page and sign out again."
            )
        );
        return anonymous_page(StatusCode::FORBIDDEN, "Not signed out", &main);
    }
    if let Some(session) = &session
        && let Err(err) = crate::session::revoke(app.table(), session, app.clock().now()).await
    {
        // The cookie stays: signing out half-way would leave a live copy.
        return crate::anonymous_error(&err, request_id);
    }
    let mut response = web::see_other("/review/signin");
    web::set_cookie(&mut response, &pages.keys.clear(pages.keys.session_cookie()));
    response
}
