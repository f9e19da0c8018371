//! The one error type of the contract and its fixed mapping to codes,
//! HTTP statuses and retryable flags (DESIGN.md, "HTTP contract").
//!
//! Every step of the pipeline fails with a [`ToolError`]. Its `message` is
//! written for a model: what failed, the allowed values, what to do next and
//! what did NOT happen. Causes of 5xx errors stay in the log; the caller only
//! ever sees the generic text.

use serde::Serialize;

/// The stable error codes of the HTTP contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// Bad JSON, schema, validator or business rule; a write without a key.
    ValidationError,
    /// Missing or invalid credentials.
    Unauthenticated,
    /// The caller lacks the scope the tool requires.
    Forbidden,
    /// Document absent or in another branch (same text either way).
    NotFound,
    /// The idempotency key is in flight (409) or was used with other arguments (422).
    Conflict,
    /// A person must decide first (a near-duplicate of an open agent draft).
    InputRequired,
    /// The person asked (an INPUT_REQUIRED question) said no.
    Declined,
    /// The caller is over its budget.
    RateLimited,
    /// A limit of the tenant's policy (a run's or a day's budget, a
    /// counterparty rule, a per-tool rate).
    LimitReached,
    /// DynamoDB (or another dependency) throttled, timed out or is down.
    DependencyUnavailable,
    /// A bug.
    InternalError,
}

impl ErrorCode {
    /// The code as it appears on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ValidationError => "VALIDATION_ERROR",
            Self::Unauthenticated => "UNAUTHENTICATED",
            Self::Forbidden => "FORBIDDEN",
            Self::NotFound => "NOT_FOUND",
            Self::Conflict => "CONFLICT",
            Self::InputRequired => "INPUT_REQUIRED",
            Self::Declined => "DECLINED",
            Self::RateLimited => "RATE_LIMITED",
            Self::LimitReached => "LIMIT_REACHED",
            Self::DependencyUnavailable => "DEPENDENCY_UNAVAILABLE",
            Self::InternalError => "INTERNAL_ERROR",
        }
    }
}

/// Which promise a refused value broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IssueKind {
    /// The published schema (type, required, enum, pattern, length, range,
    /// format, header rules): a client that follows the schema never sees it.
    Schema,
    /// A rule the schema cannot express: something that depends on the data
    /// (an unknown vendor, a unit the item is not stocked in), the date, or
    /// other fields.
    Rule,
}

/// One problem with one field of the input, located by its JSON path
/// (`lines[2].uom`; `header:Idempotency-Key`; empty for the document as a whole).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldIssue {
    /// JSON path of the offending value.
    pub path: String,
    /// What is wrong with it and what is allowed.
    pub message: String,
    /// Whether the schema already said so, or a rule beyond it.
    pub kind: IssueKind,
}

impl FieldIssue {
    /// A broken rule at `path` (data, date or cross-field).
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
            kind: IssueKind::Rule,
        }
    }

    /// A value the published schema already refuses, at `path`.
    pub fn schema(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            kind: IssueKind::Schema,
            ..Self::new(path, message)
        }
    }
}

/// The existing document a draft would duplicate, and the question a
/// person must answer before anything is created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Question {
    /// The open agent draft that already exists.
    pub existing: ExistingDraft,
    /// The question, as a person reads it ("PO-SBY-000031 from run r-17 …
    /// Create another draft anyway?").
    pub prompt: String,
}

/// An open agent draft, as a question names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExistingDraft {
    /// Its number (`PO-SBY-000031`).
    pub number: String,
    /// What kind of document (`purchase_order`, `quote`).
    pub kind: String,
    /// The agent run that drafted it, if any.
    pub agent_run: Option<String>,
    /// When it was drafted (RFC 3339, UTC).
    pub created_at: String,
    /// What it drafts, in words (`10 BOX of BRG-0042 from V-00231`).
    pub summary: String,
}

/// The limit of a tenant's policy a call reached, as the error names it
/// (`error.limit`): which limit, whose, how much is used, what this call
/// would add, and when it resets. Amounts are decimal strings in `unit`;
/// drafts are counted as whole numbers, also as strings. A counterparty
/// rule counts nothing: its `max` and `used` are `None`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReachedLimit {
    /// The limit's path in the policy (`per_run.max_drafts`,
    /// `per_run.max_value`, `per_person_per_day.max_value`).
    pub name: String,
    /// What it counts: `drafts`, or a currency code (`IDR`).
    pub unit: String,
    /// Whose use it counts (`agent run r-17`, `buyer-sby on 2026-11-29`).
    pub applies_to: String,
    /// The most the limit allows (`None`: a rule, not an amount).
    pub max: Option<String>,
    /// What is used of it so far (`None`: a rule, not an amount).
    pub used: Option<String>,
    /// What this call would have added.
    pub this_call: String,
    /// When it resets (RFC 3339, UTC); `None` for a run's limit, which
    /// lasts as long as the run.
    pub resets_at: Option<String>,
    /// The version of the policy that set it.
    pub policy_version: u64,
}

/// Why a request was not authenticated. Each reason has its own text; the
/// `WWW-Authenticate` challenge is the same for all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthFailure {
    /// No `Authorization` header.
    Missing,
    /// Not `Bearer <token>`, or not a JWT.
    Malformed,
    /// `exp` is in the past.
    Expired,
    /// `nbf` is in the future.
    NotYetValid,
    /// The signature does not verify, or the key is unknown.
    BadSignature,
    /// An algorithm outside the allowlist (including `none`).
    DisallowedAlgorithm,
    /// `iss` is not this deployment's issuer.
    WrongIssuer,
    /// `aud` does not contain this deployment's resource URL.
    WrongAudience,
    /// A required claim (`sub`, `tenant_id`, `branch_id`, …) is missing or malformed.
    BadClaims,
}

impl AuthFailure {
    /// A short, fixed name (`missing`, `expired`, …).
    pub fn name(self) -> &'static str {
        match self {
            Self::Missing => "missing",
            Self::Malformed => "malformed",
            Self::Expired => "expired",
            Self::NotYetValid => "not_yet_valid",
            Self::BadSignature => "bad_signature",
            Self::DisallowedAlgorithm => "disallowed_algorithm",
            Self::WrongIssuer => "wrong_issuer",
            Self::WrongAudience => "wrong_audience",
            Self::BadClaims => "bad_claims",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Self::Missing => "No bearer token was sent.",
            Self::Malformed => "The Authorization header is not a well-formed bearer JWT.",
            Self::Expired => "The access token has expired.",
            Self::NotYetValid => "The access token is not valid yet (nbf is in the future).",
            Self::BadSignature => "The access token's signature does not verify.",
            Self::DisallowedAlgorithm => {
                "The access token uses an algorithm this server does not accept (allowed: RS256, ES256, HS256)."
            }
            Self::WrongIssuer => "The access token was issued by an issuer this server does not trust.",
            Self::WrongAudience => "The access token was not issued for this server (wrong audience).",
            Self::BadClaims => {
                "The access token lacks a required claim (sub, tenant_id, branch_id, branch_code, scope)."
            }
        }
    }
}

/// The contract's error. Each variant has a fixed status, code and
/// retryable flag; see [`ToolError::status`].
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// Input rejected. `details` locate every problem.
    #[error("{message}")]
    Validation {
        /// Model-readable summary.
        message: String,
        /// One entry per problem.
        details: Vec<FieldIssue>,
    },
    /// Credentials missing or invalid.
    #[error("{}", .0.describe())]
    Unauthenticated(AuthFailure),
    /// A verified token whose issuer's claim mapping does not find one of
    /// draftline's identity facts in it, or names a tenant the issuer may
    /// not name: what is wrong, naming the claim.
    #[error(
        "The access token's {0}, so this server cannot tell who is calling. Nothing was read or written. Get an \
         access token from your identity provider that carries it."
    )]
    UnmappedClaim(String),
    /// The caller lacks `scope`.
    #[error("{message}")]
    Forbidden {
        /// The scope the tool requires.
        scope: String,
        /// Model-readable text.
        message: String,
    },
    /// A browser request from another site, or a rebound host name, reached
    /// a server that acts for a signed-in caller (DNS rebinding protection).
    #[error("{0}")]
    ForeignOrigin(String),
    /// The document does not exist for this caller.
    #[error("{0}")]
    NotFound(String),
    /// The same key is still being processed.
    #[error("{message}")]
    InFlight {
        /// Model-readable text.
        message: String,
        /// When to try again.
        retry_after_seconds: u64,
    },
    /// The key was already used with different arguments.
    #[error("{0}")]
    KeyReused(String),
    /// Other calls of the caller's branch held what this one needed (a
    /// document number, a transaction on the same items) for every attempt;
    /// nothing was created, and the same call may be sent again.
    #[error("{message}")]
    Busy {
        /// Model-readable text.
        message: String,
        /// When to try again.
        retry_after_seconds: u64,
    },
    /// A person must decide before anything is created: the draft closely
    /// matches an open agent draft. Nothing was created.
    #[error("{message}")]
    InputRequired {
        /// Model-readable text: what exists, and how to confirm.
        message: String,
        /// The choice, for machines.
        question: Box<Question>,
        /// The sealed state the confirmed retry must carry (set by the server).
        request_state: Option<String>,
    },
    /// The person answered an INPUT_REQUIRED question with no (declined or
    /// cancelled it). Nothing was created, and the same call must not be
    /// sent again unless the person changes their mind.
    #[error("{0}")]
    Declined(String),
    /// The caller is over its budget.
    #[error("{message}")]
    RateLimited {
        /// Model-readable text.
        message: String,
        /// When to try again.
        retry_after_seconds: u64,
    },
    /// A limit of the tenant's policy: nothing was created. A budget or a
    /// counterparty rule is 403 and not retryable as is; a per-tool rate
    /// is 429 with `Retry-After`.
    #[error("{message}")]
    LimitReached {
        /// Model-readable text: the limit, its use, what did not happen
        /// and what to do (split the order, wait, ask a person).
        message: String,
        /// The limit, for machines.
        limit: Box<ReachedLimit>,
        /// For a rate: when the next call may pass.
        retry_after_seconds: Option<u64>,
    },
    /// A dependency failed; nothing was written.
    #[error("{message}")]
    DependencyUnavailable {
        /// Model-readable text (never the cause).
        message: String,
        /// When to try again.
        retry_after_seconds: u64,
        /// The cause, for the log only.
        #[source]
        cause: Option<Box<dyn std::error::Error + Send + Sync>>,
        /// Whether a write may have been applied before the failure (the
        /// message says so); `false` means nothing was written.
        may_have_written: bool,
    },
    /// A bug. The caller sees a generic text; the cause goes to the log.
    #[error("internal error: {0}")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// The text every caller gets for an internal error.
pub const INTERNAL_ERROR_TEXT: &str = "Something went wrong inside draftline. Nothing was created or changed. \
     Do not retry this call; report the requestId to a person.";

impl ToolError {
    /// A validation error with one issue.
    pub fn invalid(path: impl Into<String>, message: impl Into<String>) -> Self {
        let message = message.into();
        Self::Validation {
            details: vec![FieldIssue::new(path, message.clone())],
            message,
        }
    }

    /// A validation error with one issue the published schema already
    /// states (a malformed header value).
    pub fn invalid_schema(path: impl Into<String>, message: impl Into<String>) -> Self {
        let message = message.into();
        Self::Validation {
            details: vec![FieldIssue::schema(path, message.clone())],
            message,
        }
    }

    /// A validation error listing several issues under one summary.
    pub fn invalid_fields(summary: impl Into<String>, details: Vec<FieldIssue>) -> Self {
        Self::Validation {
            message: summary.into(),
            details,
        }
    }

    /// DynamoDB (or another dependency) failed. `what_did_not_happen` ends the
    /// message ("No draft was created.").
    pub fn dependency(cause: impl Into<Box<dyn std::error::Error + Send + Sync>>, what_did_not_happen: &str) -> Self {
        Self::DependencyUnavailable {
            message: format!(
                "The ERP data store is temporarily unavailable. {what_did_not_happen} \
                 Retry the same call with the same idempotency key in a few seconds."
            ),
            retry_after_seconds: 2,
            cause: Some(cause.into()),
            may_have_written: false,
        }
    }

    /// The ERP (another system holding the documents) failed. With
    /// `may_have_written`, the draft may exist there and a retry with the
    /// same key finds it; otherwise nothing was created.
    pub fn erp_unavailable(
        cause: impl Into<Box<dyn std::error::Error + Send + Sync>>,
        may_have_written: bool,
        retry_after_seconds: u64,
    ) -> Self {
        let what = if may_have_written {
            "The draft may or may not have been created there. Retry this same call with the same idempotency key \
             in a few seconds: it returns the draft if it exists and creates it once if it does not."
        } else {
            "Nothing was created. Retry the same call with the same idempotency key in a few seconds."
        };
        Self::DependencyUnavailable {
            message: format!("The ERP is temporarily unavailable or did not answer in time. {what}"),
            retry_after_seconds,
            cause: Some(cause.into()),
            may_have_written,
        }
    }

    /// The ERP could not be read: nothing was changed.
    pub fn erp_unreadable(
        cause: impl Into<Box<dyn std::error::Error + Send + Sync>>,
        what_did_not_happen: &str,
    ) -> Self {
        Self::DependencyUnavailable {
            message: format!(
                "The ERP is temporarily unavailable or did not answer in time. {what_did_not_happen} Retry the \
                 same call in a few seconds."
            ),
            retry_after_seconds: 2,
            cause: Some(cause.into()),
            may_have_written: false,
        }
    }

    /// A retry continuing an earlier attempt whose ERP write may have
    /// happened (it took that attempt's lapsed claim over) could not ask the
    /// ERP whether the document exists: it may. The key stays claimed for
    /// that use; a retry after `retry_after_seconds` asks again.
    pub fn erp_unchecked(cause: impl Into<Box<dyn std::error::Error + Send + Sync>>, retry_after_seconds: u64) -> Self {
        Self::DependencyUnavailable {
            message: format!(
                "An earlier attempt of this call may have created the draft in the ERP, and the ERP did not answer \
                 in time whether it did, so the draft may or may not have been created there. This attempt created \
                 no other. Retry this same call with the same idempotency key in {retry_after_seconds} seconds: it \
                 returns the draft if it exists and creates it once if it does not. Do not change the arguments or \
                 the key."
            ),
            retry_after_seconds,
            cause: Some(cause.into()),
            may_have_written: true,
        }
    }

    /// The same error, with a retry no sooner than `seconds` (a retryable
    /// dependency failure whose key stays claimed until then).
    pub fn retry_no_sooner_than(mut self, seconds: u64) -> Self {
        if let Self::DependencyUnavailable {
            retry_after_seconds, ..
        } = &mut self
        {
            *retry_after_seconds = (*retry_after_seconds).max(seconds);
        }
        self
    }

    /// Whether this failure leaves open that a write was applied.
    pub fn may_have_written(&self) -> bool {
        matches!(
            self,
            Self::DependencyUnavailable {
                may_have_written: true,
                ..
            }
        )
    }

    /// DynamoDB (or another dependency) failed while a write was on its way:
    /// it may or may not have been applied. The model is told so, and that a
    /// retry with the same key is safe.
    pub fn dependency_uncertain(cause: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self::DependencyUnavailable {
            message: "The ERP data store did not confirm the write, so the draft may or may not have been created. \
                      Retry this same call with the same idempotency key in a few seconds: it returns the draft if \
                      it exists and creates it once if it does not. Do not change the arguments or the key."
                .into(),
            retry_after_seconds: 2,
            cause: Some(cause.into()),
            may_have_written: true,
        }
    }

    /// The call ran out of its time limit. For a draft the outcome is
    /// unknown; for a read, nothing was changed.
    pub fn deadline(limit: std::time::Duration, draft: bool) -> Self {
        let what = if draft {
            "A draft may or may not have been created. Retry this same call with the same idempotency key: it \
             returns the draft if it exists and creates it once if it does not."
        } else {
            "Nothing was changed. Retry the same call in a few seconds."
        };
        Self::DependencyUnavailable {
            message: format!(
                "This call did not finish within its time limit of {:.1} s because a service it depends on was \
                 too slow. {what}",
                limit.as_secs_f64()
            ),
            retry_after_seconds: 2,
            cause: Some(format!("call deadline of {limit:?} reached").into()),
            may_have_written: draft,
        }
    }

    /// A bug, with its cause for the log.
    pub fn internal(cause: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self::Internal(cause.into())
    }

    /// The stable code.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Validation { .. } => ErrorCode::ValidationError,
            Self::Unauthenticated(_) | Self::UnmappedClaim(_) => ErrorCode::Unauthenticated,
            Self::Forbidden { .. } | Self::ForeignOrigin(_) => ErrorCode::Forbidden,
            Self::NotFound(_) => ErrorCode::NotFound,
            Self::InFlight { .. } | Self::KeyReused(_) | Self::Busy { .. } => ErrorCode::Conflict,
            Self::InputRequired { .. } => ErrorCode::InputRequired,
            Self::Declined(_) => ErrorCode::Declined,
            Self::RateLimited { .. } => ErrorCode::RateLimited,
            Self::LimitReached { .. } => ErrorCode::LimitReached,
            Self::DependencyUnavailable { .. } => ErrorCode::DependencyUnavailable,
            Self::Internal(_) => ErrorCode::InternalError,
        }
    }

    /// The HTTP status.
    pub fn status(&self) -> http::StatusCode {
        use http::StatusCode as S;
        match self {
            Self::Validation { .. } => S::BAD_REQUEST,
            Self::Unauthenticated(_) | Self::UnmappedClaim(_) => S::UNAUTHORIZED,
            Self::Forbidden { .. } | Self::ForeignOrigin(_) => S::FORBIDDEN,
            Self::NotFound(_) => S::NOT_FOUND,
            Self::InFlight { .. } | Self::Busy { .. } | Self::InputRequired { .. } | Self::Declined(_) => S::CONFLICT,
            Self::KeyReused(_) => S::UNPROCESSABLE_ENTITY,
            Self::RateLimited { .. } => S::TOO_MANY_REQUESTS,
            Self::LimitReached {
                retry_after_seconds: Some(_),
                ..
            } => S::TOO_MANY_REQUESTS,
            Self::LimitReached { .. } => S::FORBIDDEN,
            Self::DependencyUnavailable { .. } => S::SERVICE_UNAVAILABLE,
            Self::Internal(_) => S::INTERNAL_SERVER_ERROR,
        }
    }

    /// Whether the same call may succeed if sent again unchanged.
    pub fn retryable(&self) -> bool {
        matches!(
            self,
            Self::InFlight { .. }
                | Self::Busy { .. }
                | Self::RateLimited { .. }
                | Self::DependencyUnavailable { .. }
                | Self::LimitReached {
                    retry_after_seconds: Some(_),
                    ..
                }
        )
    }

    /// Seconds to wait before retrying, for retryable errors.
    pub fn retry_after_seconds(&self) -> Option<u64> {
        match self {
            Self::InFlight {
                retry_after_seconds, ..
            }
            | Self::Busy {
                retry_after_seconds, ..
            }
            | Self::RateLimited {
                retry_after_seconds, ..
            }
            | Self::DependencyUnavailable {
                retry_after_seconds, ..
            } => Some(*retry_after_seconds),
            Self::LimitReached {
                retry_after_seconds, ..
            } => *retry_after_seconds,
            _ => None,
        }
    }

    /// The limit a LIMIT_REACHED error names.
    pub fn limit(&self) -> Option<&ReachedLimit> {
        match self {
            Self::LimitReached { limit, .. } => Some(limit),
            _ => None,
        }
    }

    /// The message a caller (and its model) sees. Never the cause of a 5xx.
    pub fn public_message(&self) -> String {
        match self {
            Self::Internal(_) => INTERNAL_ERROR_TEXT.to_owned(),
            Self::Unauthenticated(reason) => format!(
                "{} Nothing was read or written. Get a fresh access token for this server and send it as \
                 'Authorization: Bearer <token>'.",
                reason.describe()
            ),
            other => other.to_string(),
        }
    }

    /// Field issues, for validation errors.
    pub fn details(&self) -> Option<&[FieldIssue]> {
        match self {
            Self::Validation { details, .. } => Some(details),
            _ => None,
        }
    }

    /// The audit outcome this error stands for.
    pub fn is_denial(&self) -> bool {
        matches!(
            self,
            Self::Unauthenticated(_) | Self::UnmappedClaim(_) | Self::Forbidden { .. } | Self::ForeignOrigin(_)
        )
    }

    /// A short, fixed name of why a call was refused before anyone was
    /// identified (the anonymous trace counts by it).
    pub fn refusal_reason(&self) -> &'static str {
        match self {
            Self::Unauthenticated(failure) => failure.name(),
            Self::UnmappedClaim(_) => "unmapped_claim",
            Self::Forbidden { .. } => "forbidden",
            Self::ForeignOrigin(_) => "foreign_origin",
            Self::DependencyUnavailable { .. } => "identity_unavailable",
            Self::Validation { .. } => "invalid",
            _ => "other",
        }
    }
}

/// Errors are cloned where one decision is handed to several places (the
/// MCP endpoint answers and the pipeline audits the same failed
/// authentication). A cause does not clone, so a clone carries its text.
impl Clone for ToolError {
    fn clone(&self) -> Self {
        let cause_text =
            |cause: &(dyn std::error::Error + Send + Sync + 'static)| -> Box<dyn std::error::Error + Send + Sync> {
                let mut text = cause.to_string();
                let mut source = cause.source();
                while let Some(next) = source {
                    text.push_str(": ");
                    text.push_str(&next.to_string());
                    source = next.source();
                }
                text.into()
            };
        match self {
            Self::Validation { message, details } => Self::Validation {
                message: message.clone(),
                details: details.clone(),
            },
            Self::Unauthenticated(failure) => Self::Unauthenticated(*failure),
            Self::UnmappedClaim(message) => Self::UnmappedClaim(message.clone()),
            Self::Forbidden { scope, message } => Self::Forbidden {
                scope: scope.clone(),
                message: message.clone(),
            },
            Self::NotFound(message) => Self::NotFound(message.clone()),
            Self::ForeignOrigin(message) => Self::ForeignOrigin(message.clone()),
            Self::InFlight {
                message,
                retry_after_seconds,
            } => Self::InFlight {
                message: message.clone(),
                retry_after_seconds: *retry_after_seconds,
            },
            Self::KeyReused(message) => Self::KeyReused(message.clone()),
            Self::Declined(message) => Self::Declined(message.clone()),
            Self::InputRequired {
                message,
                question,
                request_state,
            } => Self::InputRequired {
                message: message.clone(),
                question: question.clone(),
                request_state: request_state.clone(),
            },
            Self::Busy {
                message,
                retry_after_seconds,
            } => Self::Busy {
                message: message.clone(),
                retry_after_seconds: *retry_after_seconds,
            },
            Self::RateLimited {
                message,
                retry_after_seconds,
            } => Self::RateLimited {
                message: message.clone(),
                retry_after_seconds: *retry_after_seconds,
            },
            Self::LimitReached {
                message,
                limit,
                retry_after_seconds,
            } => Self::LimitReached {
                message: message.clone(),
                limit: limit.clone(),
                retry_after_seconds: *retry_after_seconds,
            },
            Self::DependencyUnavailable {
                message,
                retry_after_seconds,
                cause,
                may_have_written,
            } => Self::DependencyUnavailable {
                message: message.clone(),
                retry_after_seconds: *retry_after_seconds,
                cause: cause.as_deref().map(cause_text),
                may_have_written: *may_have_written,
            },
            Self::Internal(cause) => Self::Internal(cause_text(cause.as_ref())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_has_the_status_code_and_retry_flag_of_the_design() {
        let cases: Vec<(ToolError, u16, &str, bool)> = vec![
            (ToolError::invalid("a", "b"), 400, "VALIDATION_ERROR", false),
            (
                ToolError::Unauthenticated(AuthFailure::Missing),
                401,
                "UNAUTHENTICATED",
                false,
            ),
            (
                ToolError::Forbidden {
                    scope: "x".into(),
                    message: "m".into(),
                },
                403,
                "FORBIDDEN",
                false,
            ),
            (ToolError::NotFound("n".into()), 404, "NOT_FOUND", false),
            (
                ToolError::InFlight {
                    message: "m".into(),
                    retry_after_seconds: 1,
                },
                409,
                "CONFLICT",
                true,
            ),
            (ToolError::KeyReused("m".into()), 422, "CONFLICT", false),
            (ToolError::Declined("d".into()), 409, "DECLINED", false),
            (
                ToolError::RateLimited {
                    message: "m".into(),
                    retry_after_seconds: 1,
                },
                429,
                "RATE_LIMITED",
                true,
            ),
            (
                ToolError::dependency("down", "No draft was created."),
                503,
                "DEPENDENCY_UNAVAILABLE",
                true,
            ),
            (ToolError::internal("bug"), 500, "INTERNAL_ERROR", false),
            (limit_reached(None), 403, "LIMIT_REACHED", false),
            (limit_reached(Some(12)), 429, "LIMIT_REACHED", true),
        ];
        for (err, status, code, retryable) in cases {
            assert_eq!(err.status().as_u16(), status, "{err:?}");
            assert_eq!(err.code().as_str(), code, "{err:?}");
            assert_eq!(err.retryable(), retryable, "{err:?}");
        }
    }

    fn limit_reached(retry_after_seconds: Option<u64>) -> ToolError {
        ToolError::LimitReached {
            message: "m".into(),
            limit: Box::new(ReachedLimit {
                name: "per_run.max_drafts".into(),
                unit: "drafts".into(),
                applies_to: "agent run r-1".into(),
                max: Some("10".into()),
                used: Some("10".into()),
                this_call: "1".into(),
                resets_at: None,
                policy_version: 1,
            }),
            retry_after_seconds,
        }
    }

    #[test]
    fn internal_errors_never_show_their_cause() {
        let err = ToolError::internal("secret table name draftline-prod");
        assert!(!err.public_message().contains("draftline-prod"));
    }
}
