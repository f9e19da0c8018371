//! `POST /review/documents/<number>/approve` and `…/reject`: a person's
//! decision on an agent draft.
//!
//! In order, nothing below a failed step runs:
//! 1. a bearer token is refused outright (agents never decide), whatever
//!    its scopes ([`refuse_bearer`], audited when the token names someone);
//! 2. the signed-in session (else no decision, see `lib.rs`) and the form's
//!    CSRF token, bound to that session;
//! 3. the approve scope of the document's kind (`purchasing:approve`,
//!    `sales:approve`, which no tool accepts) and an ERP whose approvals
//!    happen here;
//! 4. the form: its decision id (one per form shown) and, for a rejection,
//!    a reason;
//! 5. four eyes: the person an agent drafted for does not approve it
//!    (unless `DRAFTLINE_REVIEW_ALLOW_SELF_APPROVAL`);
//! 6. the ERP prepares the decision ([`Review::place_decision`]); its
//!    writes and the decision's audit item commit in ONE
//!    `TransactWriteItems`. A transaction that loses to another one (a
//!    double click in flight, a second person) prepares again: the same
//!    decision id then reads as already recorded and answers as a replay.
//!
//! Every attempt of a signed-in person is audited like a tool call: tool
//! `review.approve` / `review.reject`, transport `browser`, the person as
//! the one it was done for, the outcome and the text shown.
//!
//! [`Review::place_decision`]: draftline_erp::port::Review::place_decision

use std::time::Duration;

use bytes::Bytes;
use draftline_contract::ToolError;
use draftline_contract::identity::Caller;
use draftline_contract::request::AgentContext;
use draftline_contract::store::{TransactFailure, Write, cancelled_error};
use draftline_contract::tool::DocumentRef;
use draftline_erp::domain::{Decision, DocumentKind, NewDecision, Verdict};
use draftline_erp::port::{Approvals, DecisionPlacement, Scope};
use draftline_server::App;
use draftline_server::audit::{AuditRecord, CallFacts, Outcome, OutcomeKind, StoredArguments};
use draftline_server::events::{Drafted, Event, EventDecision};
use draftline_server::storage::Table;
use http::{Request, Response, StatusCode};
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::document::{self, kind_of};
use crate::web::{self, Fields};
use crate::{Context, anonymous_page, approve_scope, html};

/// The longest reason kept, in characters.
pub const MAX_REASON: usize = 500;
/// The shortest rejection reason, in characters.
pub const MIN_REASON: usize = 3;
/// How many times a decision is prepared again after losing a transaction.
const ATTEMPTS: u32 = 3;

const NOTHING_CHANGED: &str = "Nothing was changed.";

/// What is being decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verb {
    Approve,
    Reject,
}

impl Verb {
    fn of(verb: &str) -> Self {
        if verb == "approve" { Self::Approve } else { Self::Reject }
    }
    fn tool(self) -> &'static str {
        match self {
            Self::Approve => "review.approve",
            Self::Reject => "review.reject",
        }
    }
    fn verdict(self) -> Verdict {
        match self {
            Self::Approve => Verdict::Approved,
            Self::Reject => Verdict::Rejected,
        }
    }
    fn done(self) -> &'static str {
        match self {
            Self::Approve => "approved",
            Self::Reject => "rejected",
        }
    }
}

/// The text for a bearer token at approve or reject.
pub const BEARER_REFUSED: &str = "Approving and rejecting are for people: they need a signed-in session on the \
     review pages, and a bearer token is refused here whatever its scopes (agents only read and draft). Nothing \
     was changed.";

/// A bearer token at approve or reject: refused, and audited when the
/// token names a verified caller.
pub async fn refuse_bearer(
    app: &App,
    request: &Request<Bytes>,
    number: &str,
    verb: &str,
    request_id: &str,
) -> Response<Bytes> {
    let verb = Verb::of(verb);
    let err = ToolError::Forbidden {
        scope: "session".to_owned(),
        message: BEARER_REFUSED.to_owned(),
    };
    if let Ok(caller) = app.identify(request.headers()).await {
        let facts = facts(app, request_id, verb, "http", number, None, None);
        let record = AuditRecord::new(&facts, &caller, &refusal(&err));
        if let Err(audit) = record.write(app.table()).await {
            tracing::error!(request_id, error = %audit, "audit item not written");
        }
    }
    let main = format!(
        "<h1>Not allowed</h1>{}<p class=\"muted\">Reference: <code>{}</code></p>",
        html::notice("error", BEARER_REFUSED),
        html::text(request_id)
    );
    anonymous_page(StatusCode::FORBIDDEN, "Not allowed", &main)
}

fn facts(
    app: &App,
    request_id: &str,
    verb: Verb,
    transport: &'static str,
    number: &str,
    decision_id: Option<&str>,
    reason: Option<&str>,
) -> CallFacts {
    let arguments = json!({"number": number, "decision_id": decision_id, "reason": reason}).to_string();
    CallFacts {
        request_id: request_id.to_owned(),
        at: app.clock().now(),
        tool: verb.tool().to_owned(),
        transport,
        agent: AgentContext::default(),
        arguments: Some(StoredArguments {
            text: arguments.chars().take(2048).collect(),
            truncated: false,
        }),
        trace_id: None,
    }
}

/// The audit outcome of a person's action refused with `err`.
pub(crate) fn refusal(err: &ToolError) -> Outcome<'_> {
    Outcome {
        kind: if err.is_denial() {
            OutcomeKind::Denied
        } else {
            OutcomeKind::ToolError
        },
        http_status: err.status().as_u16(),
        code: Some(err.code().as_str()),
        message: Some(err.public_message()),
        document: None,
        key: None,
        authorized: !err.is_denial(),
    }
}

/// The form's decision id: 1-64 letters and digits (a ULID when the page made it).
fn decision_id(form: &Fields) -> Result<String, ToolError> {
    match form.get("decision_id") {
        Some(id) if id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric()) => Ok(id.to_owned()),
        _ => Err(ToolError::invalid(
            "decision_id",
            "This form has no valid decision id. Reload the document and decide again. Nothing was changed.",
        )),
    }
}

/// The reason: required (3-500 characters) for a rejection, optional for
/// an approval; no control characters but line breaks.
fn reason(form: &Fields, verb: Verb) -> Result<Option<String>, ToolError> {
    let reason = form.get("reason").map(|r| r.replace("\r\n", "\n"));
    let length = reason.as_deref().map_or(0, |r| r.chars().count());
    let bad = |message: String| Err(ToolError::invalid("reason", message));
    if reason
        .as_deref()
        .is_some_and(|r| r.chars().any(|c| c.is_control() && c != '\n' && c != '\t'))
    {
        return bad(format!(
            "The reason may not contain control characters. {NOTHING_CHANGED}"
        ));
    }
    if length > MAX_REASON {
        return bad(format!(
            "The reason is {length} characters; at most {MAX_REASON} are kept. Shorten it. {NOTHING_CHANGED}"
        ));
    }
    if verb == Verb::Reject && length < MIN_REASON {
        return bad(format!(
            "A rejection needs a reason of at least {MIN_REASON} characters: the agent and the person it acted \
             for read it. {NOTHING_CHANGED}"
        ));
    }
    Ok(reason)
}

/// `POST …/approve` or `…/reject` of a signed-in person.
pub async fn post(cx: &Context<'_>, body: &Bytes, number: &str, verb: &str) -> Response<Bytes> {
    let verb = Verb::of(verb);
    let form = Fields::parse(body);
    let reason_text = form
        .get("reason")
        .map(|r| r.chars().take(MAX_REASON).collect::<String>());
    let facts = facts(
        cx.app,
        cx.request_id,
        verb,
        "browser",
        number,
        form.get("decision_id"),
        reason_text.as_deref(),
    );
    match decide(cx, &form, number, verb, &facts).await {
        Ok(Decided::Now) => web::see_other(&format!(
            "/review/documents/{}?decided={}",
            web::encode(number),
            verb.done()
        )),
        Ok(Decided::Before) => web::see_other(&format!("/review/documents/{}?decided=already", web::encode(number))),
        Err(err) => {
            let record = AuditRecord::new(&facts, cx.person(), &refusal(&err));
            if let Err(audit) = record.write(cx.app.table()).await {
                tracing::error!(request_id = cx.request_id, error = %audit, "audit item not written");
            }
            cx.error_page(&err)
        }
    }
}

/// How a decision ended.
enum Decided {
    /// Recorded by this request.
    Now,
    /// This same decision (its decision id) was already recorded: a double click.
    Before,
}

async fn decide(
    cx: &Context<'_>,
    form: &Fields,
    number: &str,
    verb: Verb,
    facts: &CallFacts,
) -> Result<Decided, ToolError> {
    let person = cx.person();
    if !cx.pages.keys.csrf_matches(cx.session, form.get("csrf")) {
        return Err(ToolError::Forbidden {
            scope: "csrf".to_owned(),
            message: format!(
                "This form does not belong to your session (it is old, or came from another page or person). \
                 Reload {number} and decide again. {NOTHING_CHANGED}"
            ),
        });
    }
    let kind = kind_of(number).ok_or_else(|| document::not_found(number))?;
    let scope = approve_scope(kind);
    if !person.scopes().grants(scope) {
        return Err(ToolError::Forbidden {
            scope: scope.to_owned(),
            message: format!(
                "Deciding on {number} needs the scope {scope}, which your sign-in does not grant (granted: {}). \
                 {NOTHING_CHANGED}",
                person.scopes()
            ),
        });
    }
    if let Approvals::InErp { erp } = cx.pages.erp.approvals() {
        return Err(ToolError::invalid(
            "number",
            format!(
                "{number} is approved or rejected in {erp}, in its own workflow, not on this page: open it in {erp} \
                 (the document page links to it). {NOTHING_CHANGED}"
            ),
        ));
    }
    let decision_id = decision_id(form)?;
    let reason = reason(form, verb)?;
    let document = document::read(cx, number).await?.queue_entry();
    if verb == Verb::Approve
        && document.drafted_on_behalf_of == person.user().as_str()
        && !cx.pages.allow_self_approval
        && document.decision.is_none()
    {
        return Err(ToolError::Forbidden {
            scope: scope.to_owned(),
            message: format!(
                "You cannot approve {number}: it was drafted on your behalf, and a draft needs a second person's \
                 approval (four eyes). Ask another approver of your branch. {NOTHING_CHANGED}"
            ),
        });
    }
    let now = cx.app.clock().now();
    let new = NewDecision {
        decision: Decision {
            verdict: verb.verdict(),
            reason,
            decided_by: person.user().to_string(),
            decided_at: now.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        },
        decision_id: decision_id.clone(),
    };
    let drafted = document::drafted(&document);
    let scope = Scope::of(person);
    for attempt in 0..ATTEMPTS {
        match cx.pages.erp.place_decision(&scope, number, new.clone()).await? {
            DecisionPlacement::AlreadyRecorded { document, .. } => {
                replayed(cx, facts, &document).await?;
                return Ok(Decided::Before);
            }
            DecisionPlacement::Atomic { document, writes } => {
                let mut items = writes.0;
                let outcome = Outcome {
                    kind: OutcomeKind::Ok,
                    http_status: StatusCode::SEE_OTHER.as_u16(),
                    code: None,
                    message: None,
                    document: Some(&document),
                    key: None,
                    authorized: true,
                };
                let audit = AuditRecord::new(facts, person, &outcome);
                items.push(audit.put());
                items.push(decided_event(cx, &document, (&drafted, &new.decision), now).put());
                let token = request_token(person, number, &decision_id, audit.id());
                match commit(cx.app.table(), items, &token).await {
                    Ok(()) => {
                        tracing::info!(
                            request_id = cx.request_id,
                            number,
                            verdict = verb.done(),
                            person = %person.user(),
                            "decision recorded"
                        );
                        return Ok(Decided::Now);
                    }
                    // Another transaction got there first: read again.
                    Err(Commit::Lost) => {
                        tokio::time::sleep(Duration::from_millis(10 * u64::from(attempt + 1))).await;
                    }
                    Err(Commit::Failed(err)) => return Err(err),
                }
            }
        }
    }
    Err(ToolError::Busy {
        message: format!(
            "{number} was being changed by someone else at the same moment, {ATTEMPTS} times. Reload it and decide \
             again. {NOTHING_CHANGED}"
        ),
        retry_after_seconds: 1,
    })
}

/// The `draft.decided` event of `decision` on `document` (drafted as
/// `drafted`), written in the decision's own transaction.
fn decided_event(
    cx: &Context<'_>,
    document: &DocumentRef,
    (drafted, decision): (&Drafted, &Decision),
    at: chrono::DateTime<chrono::Utc>,
) -> Event {
    let decision = EventDecision {
        verdict: decision.verdict.as_str().to_owned(),
        decided_by: decision.decided_by.clone(),
        reason: decision.reason.clone(),
    };
    Event::decided(
        (cx.person().tenant().as_str(), cx.person().branch().as_str()),
        (document, drafted.clone()),
        decision,
        cx.app.review_pages(),
        at,
    )
}

/// The audit item of a decision sent again (a double click): its own write.
async fn replayed(cx: &Context<'_>, facts: &CallFacts, document: &DocumentRef) -> Result<(), ToolError> {
    let outcome = Outcome {
        kind: OutcomeKind::Replayed,
        http_status: StatusCode::SEE_OTHER.as_u16(),
        code: None,
        message: None,
        document: Some(document),
        key: None,
        authorized: true,
    };
    AuditRecord::new(facts, cx.person(), &outcome)
        .write(cx.app.table())
        .await
}

/// The `ClientRequestToken` of one attempt: the SDK's retries of it are
/// idempotent, and no two attempts, decisions or tenants share one.
fn request_token(person: &Caller, number: &str, decision_id: &str, attempt: &str) -> String {
    let mut digest = Sha256::new();
    for part in [person.tenant().as_str(), number, decision_id, attempt] {
        digest.update(part.as_bytes());
        digest.update([0]);
    }
    hex::encode(digest.finalize())[..36].to_owned()
}

/// Why a decision's transaction did not commit.
enum Commit {
    /// A condition failed or another transaction held an item: nothing was
    /// applied; prepare again.
    Lost,
    /// DynamoDB failed; the error says whether it may have been applied.
    Failed(ToolError),
}

async fn commit(table: &dyn Table, writes: Vec<Write>, token: &str) -> Result<(), Commit> {
    match table.transact(writes, token, NOTHING_CHANGED).await {
        Ok(()) => Ok(()),
        Err(failure) if failure.lost_a_race() => Err(Commit::Lost),
        Err(TransactFailure::Cancelled(reasons)) => Err(Commit::Failed(cancelled_error(&reasons, NOTHING_CHANGED))),
        Err(TransactFailure::Failed(err)) => Err(Commit::Failed(err)),
        Err(TransactFailure::InProgress) => Err(Commit::Lost),
    }
}

/// Whether the kind's module would let `person` decide (for pages).
pub fn may_decide(person: &Caller, kind: DocumentKind) -> bool {
    person.scopes().grants(approve_scope(kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rejection_needs_a_reason_and_an_approval_does_not() {
        let empty = Fields::parse(b"decision_id=01J");
        assert!(reason(&empty, Verb::Reject).is_err());
        assert_eq!(reason(&empty, Verb::Approve).unwrap(), None);
        let ok = Fields::parse(b"reason=Too+expensive");
        assert_eq!(reason(&ok, Verb::Reject).unwrap().as_deref(), Some("Too expensive"));
        let long = Fields::parse(format!("reason={}", "x".repeat(MAX_REASON + 1)).as_bytes());
        assert!(reason(&long, Verb::Approve).is_err());
        let control = Fields::parse(b"reason=bad%07bell");
        assert!(reason(&control, Verb::Reject).is_err());
    }

    #[test]
    fn a_decision_id_is_letters_and_digits() {
        assert_eq!(decision_id(&Fields::parse(b"decision_id=01JABC")).unwrap(), "01JABC");
        for bad in ["decision_id=", "decision_id=a%20b", "x=1"] {
            assert!(decision_id(&Fields::parse(bad.as_bytes())).is_err(), "{bad}");
        }
    }
}
