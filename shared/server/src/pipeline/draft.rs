//! The idempotent draft path: the key, one read that answers every retry
//! ([`NextAction`]), the person's answer to a near-duplicate question, and
//! the atomic draft, written in one transaction with its key record, the
//! consumption of that answer and its audit item.

use std::time::Duration;

use http::StatusCode;

use super::external::{Generation, external_key};
use super::held::{Held, in_flight};
use super::{App, DRAFT_ATTEMPTS, Entry, Served, Success, Transport};
use crate::audit::{Answered, CallFacts, KeyFacts};
use crate::confirm::{self, Answer, Confirmed};
use crate::edge;
use crate::edge::trace::{self, Stage};
use crate::idempotency::{CommitFailure, IdempotencyKey, IdempotencyRecord, IdempotencyStore, NextAction};
use crate::policy::{Gate, Looked, Lookup};
use draftline_contract::canonical;
use draftline_contract::error::ToolError;
use draftline_contract::request::AgentContext;
use draftline_contract::store::{Found, TableKey};
use draftline_contract::tool::{Call, Decision, Draft, ErasedDraft, ParsedInput, Placement};

impl App {
    /// The idempotent draft path.
    pub(super) async fn draft(
        &self,
        tool: &dyn ErasedDraft,
        call: &Call<'_>,
        facts: &CallFacts,
        body: &[u8],
        entry: &Entry<'_>,
    ) -> Served {
        let keyed = async {
            let header = edge::idempotency_header(entry.headers)?;
            let input = tool.parse(body)?;
            let key = draft_key(header, call.agent, tool.client_ref(&input)?, entry.transport)?;
            let fingerprint = canonical::fingerprint(tool.definition().name, &input.canonical);
            Ok::<_, ToolError>((input, key, fingerprint))
        };
        let (input, key, fingerprint) = match trace::stage(Stage::Validation, keyed).await {
            Ok(keyed) => keyed,
            Err(err) => return Served::unaudited(Err(err), None),
        };
        let facts_of_key = KeyFacts {
            key: key.to_string(),
            fingerprint,
            answered: None,
        };
        self.draft_with_key(tool, call, facts, &input, &key, facts_of_key, entry.answer)
            .await
    }

    #[allow(clippy::too_many_arguments)]
    async fn draft_with_key(
        &self,
        tool: &dyn ErasedDraft,
        call: &Call<'_>,
        facts: &CallFacts,
        input: &ParsedInput,
        key: &IdempotencyKey,
        mut key_facts: KeyFacts,
        answer: Option<&Result<Answer, ToolError>>,
    ) -> Served {
        let owner = format!("{}/{}", call.caller.branch(), call.caller.user());
        let store = IdempotencyStore::new(self.table.as_ref(), call.caller, key).remembering(&self.answered);
        let fail = |err: ToolError, key_facts: KeyFacts| Served::unaudited(Err(err), Some(key_facts));
        let (gate, read, generation) = match self.look_up(tool, call, input, key, &key_facts, (&store, &owner)).await {
            Ok(Looking::Answered(answer)) => return Served::unaudited(answer, Some(key_facts)),
            Ok(Looking::Goes { gate, read, generation }) => (gate, read, generation),
            Err(err) => return fail(err, key_facts),
        };
        let name = tool.definition().name;
        let checked = trace::stage(Stage::Validation, async { tool.check_rules(input, &self.rules()) }).await;
        if let Err(err) = checked {
            return fail(err, key_facts);
        }
        let fingerprint = key_facts.fingerprint.clone();
        let asked = confirm::Asked {
            caller: call.caller,
            tool: name,
            fingerprint: &fingerprint,
            key,
        };
        let confirmed = match answer.map(|answer| self.confirmed(answer, &asked)).transpose() {
            Ok(confirmed) => confirmed,
            Err(err) => return fail(err, key_facts),
        };
        key_facts.answered = confirmed.as_ref().map(answered);
        let draft_key = external_key(&store, generation.id());
        let call = Call {
            draft_key: Some(&draft_key),
            decision: confirmed.as_ref().map(|c| &c.decision),
            near_duplicate_window: gate.near_duplicate_window(call.near_duplicate_window),
            ..*call
        };
        for attempt in 0..DRAFT_ATTEMPTS {
            // The lookup's reads stand for the first preparation only: one
            // that lost a race reads what the winner wrote.
            let call = Call {
                found: read.as_ref().filter(|_| attempt == 0),
                ..call
            };
            let held = Held {
                call: &call,
                facts,
                name,
                key_facts: &key_facts,
                owner: &owner,
                store: &store,
                key,
                consumption: confirmed.as_ref().and_then(|c| c.consumption.as_ref()),
            };
            match self.attempt(tool, input, &held, &generation, &gate, &asked).await {
                Attempted::Done { result, audited: true } => return Served::audited(result, Some(key_facts)),
                Attempted::Done { result, .. } => return Served::unaudited(result, Some(key_facts)),
                Attempted::Again => tokio::time::sleep(Duration::from_millis(5 + 20 * attempt as u64)).await,
            }
        }
        fail(lost_the_numbering_race(key), key_facts)
    }

    /// Looks the key up: one read answers every retry (replay, conflict or
    /// in flight). It comes before the rules that depend on the clock, so
    /// a retry after midnight still finds yesterday's draft. The limits
    /// gate's keys come with it (the tenant's policy unless cached, the
    /// run's counter), and so do the draft's own reads from the table (a
    /// backend that keeps its data there: the counterparty, items, prices,
    /// the near-duplicate marker), unless the store knows the key answered
    /// already ([`crate::idempotency::answered`]). A claim whose lease
    /// lapsed (its worker died, perhaps after the ERP write) is continued;
    /// anything else starts a new use.
    /// Past a replay, the draft is held at the limits gate.
    async fn look_up<'a>(
        &'a self,
        tool: &dyn ErasedDraft,
        call: &Call<'a>,
        input: &ParsedInput,
        key: &IdempotencyKey,
        key_facts: &KeyFacts,
        (store, owner): (&IdempotencyStore<'_>, &str),
    ) -> Result<Looking<'a>, ToolError> {
        let reads = || tool.reads(call, input);
        let limits = self
            .limits
            .lookup(call.caller, call.agent.run_id.as_deref(), self.clock.now());
        let (found, limits, read) = trace::stage(Stage::Idempotency, self.lookup(store, limits, reads)).await?;
        let continued = match found {
            Some(record) => match record.next_action(&key_facts.fingerprint, owner, self.clock.now()) {
                NextAction::Proceed => None,
                NextAction::LeaseExpired { generation, reserved } => Some((generation, reserved)),
                answered => match answer_of(answered, key) {
                    Some(answer) => return Ok(Looking::Answered(answer)),
                    None => None,
                },
            },
            None => None,
        };
        // Past a replay, a draft is held to the policy (a takeover carries
        // on a claim that was held and counted already).
        let gate = limits.hold(tool.definition().name, continued.is_some())?;
        let generation = match continued {
            Some((id, reserved)) => Generation::Continued { id, reserved },
            None => Generation::New(ulid::Ulid::new().to_string()),
        };
        Ok(Looking::Goes { gate, read, generation })
    }

    /// What a person's `answer` to an earlier question decides for the
    /// call `asked` (refused if it does not answer this very call).
    fn confirmed(
        &self,
        answer: &Result<Answer, ToolError>,
        asked: &confirm::Asked<'_>,
    ) -> Result<Confirmed, ToolError> {
        confirm::decide(
            &self.cursors,
            answer.as_ref().map_err(Clone::clone)?,
            asked,
            self.clock.now(),
        )
    }

    /// Prepares the draft `held` once, checks it at the `gate` and places
    /// it: in draftline's transaction, or in the ERP under a lease.
    async fn attempt(
        &self,
        tool: &dyn ErasedDraft,
        input: &ParsedInput,
        held: &Held<'_>,
        generation: &Generation,
        gate: &Gate<'_>,
        asked: &confirm::Asked<'_>,
    ) -> Attempted {
        let done = |result| Attempted::Done { result, audited: false };
        let prepared = match trace::stage(Stage::Erp, tool.prepare(held.call, input)).await {
            Ok(prepared) => prepared,
            Err(err) => return done(Err(self.asking(err, asked))),
        };
        // The counterparty rule, before anything is written (on either
        // backend: before the ERP is asked, too). Observe mode goes on and
        // the draft's audit item names the rule.
        let mut gate = gate.clone();
        if let Draft::Placed { stakes, .. } = &prepared
            && let Err(refusal) = gate.check_priced(stakes)
        {
            return done(Err(refusal));
        }
        let (created, writes, answer, stakes) = match prepared {
            Draft::Placed {
                placement: Placement::Atomic { document, writes },
                answer,
                stakes,
            } => (document, writes, answer, stakes),
            Draft::Placed {
                placement: Placement::External(external),
                answer,
                stakes,
            } => {
                // Boxed: the ERP path's future is large, and only drafts in
                // an external ERP take it.
                let placing = (external.as_ref(), answer, &stakes);
                let served = Box::pin(self.draft_external(held, generation, placing, gate)).await;
                return Attempted::Done {
                    result: served.result,
                    audited: served.audited,
                };
            }
            // A person chose the existing draft: nothing is written.
            Draft::Existing { document, output } => {
                return done(Ok(Success {
                    status: StatusCode::OK,
                    data: output,
                    replayed: false,
                    document: Some(document),
                }));
            }
        };
        let output = match answer(&created) {
            Ok(output) => output,
            Err(err) => return done(Err(err)),
        };
        match self
            .commit_held(held, (&output, &created.document, &stakes), writes, &mut gate)
            .await
        {
            Ok((committed, created)) => self.settled(held, committed, created),
            Err(err) => done(Err(err)),
        }
    }

    /// What a draft's commit came to, for the call.
    fn settled(
        &self,
        held: &Held<'_>,
        committed: Result<(), CommitFailure>,
        created: Result<Success, ToolError>,
    ) -> Attempted {
        let done = |result| Attempted::Done { result, audited: false };
        let key = held.key;
        match committed {
            Ok(()) => Attempted::Done {
                result: created,
                audited: true,
            },
            Err(CommitFailure::KeyTaken(Some(record))) => {
                match self.answer_from_record(&record, key, &held.key_facts.fingerprint, held.owner) {
                    Some(answer) => done(answer),
                    None => Attempted::Again,
                }
            }
            Err(CommitFailure::KeyTaken(None) | CommitFailure::KeyInFlight) => done(Err(in_flight(key, 1))),
            Err(CommitFailure::Contention | CommitFailure::CountersContended) => Attempted::Again,
            Err(CommitFailure::AnswerUsed) => done(Err(confirm::already_used())),
            Err(CommitFailure::Store(err)) => done(Err(err)),
            Err(CommitFailure::OverLimit { .. }) => {
                done(Err(ToolError::internal("a limit was reached after it was read")))
            }
        }
    }

    /// A preparation's refusal `err`; when it asks a person (a
    /// near-duplicate), nothing was created, and what the person is asked
    /// about is sealed into it, so only their answer to this very call
    /// (under its own key) counts, once.
    fn asking(&self, err: ToolError, asked: &confirm::Asked<'_>) -> ToolError {
        let ToolError::InputRequired { message, question, .. } = err else {
            return err;
        };
        match confirm::seal(&self.cursors, asked, &question.existing.number, self.clock.now()) {
            Ok(state) => ToolError::InputRequired {
                message,
                question,
                request_state: Some(state),
            },
            Err(err) => err,
        }
    }

    /// The key's stored record, read in one request with what the
    /// limits gate asks for (`limits`: the tenant's policy unless cached,
    /// the run's counter) and the draft's own `reads`, when the store asks
    /// for them: the record, what the gate found, and what the draft's
    /// reads found.
    async fn lookup<'a>(
        &self,
        store: &IdempotencyStore<'_>,
        limits: Lookup<'a>,
        reads: impl FnOnce() -> Option<Vec<TableKey>>,
    ) -> Result<(Option<IdempotencyRecord>, Looked<'a>, Option<Found>), ToolError> {
        let along: Vec<TableKey> = limits.keys().collect();
        let (record, found, reading) = store.look_up(along, reads, self.clock.now()).await?;
        let looked = limits.found(&found);
        Ok((record, looked, reading.then_some(found)))
    }

    /// What a stored record answers; `None` if the key is free after all.
    pub(super) fn answer_from_record(
        &self,
        record: &IdempotencyRecord,
        key: &IdempotencyKey,
        fingerprint: &str,
        owner: &str,
    ) -> Option<Result<Success, ToolError>> {
        answer_of(record.next_action(fingerprint, owner, self.clock.now()), key)
    }
}

/// A draft that lost the race for its number [`DRAFT_ATTEMPTS`] times.
fn lost_the_numbering_race(key: &IdempotencyKey) -> ToolError {
    ToolError::Busy {
        message: format!(
            "Other drafts of your branch were being numbered at the same moment, and this draft lost the race \
             {DRAFT_ATTEMPTS} times. No draft was created. Retry this same call unchanged (key '{key}') in a second."
        ),
        retry_after_seconds: 1,
    }
}

/// What a call's audit item says of the person's answer it acted on.
fn answered(confirmed: &Confirmed) -> Answered {
    Answered {
        decision: match confirmed.decision {
            Decision::CreateAnother => "create_another",
            Decision::UseExisting(_) => "use_existing",
        },
        existing: confirmed.existing.clone(),
    }
}

/// What looking a draft's key up came to.
enum Looking<'a> {
    /// The key's record answers the call (a replay, a conflict, in flight).
    Answered(Result<Success, ToolError>),
    /// The call goes on, held at its gate: what the lookup found for the
    /// draft's own reads, and which use of the key it is.
    Goes {
        gate: Gate<'a>,
        read: Option<Found>,
        generation: Generation,
    },
}

/// What one preparation and commit of a draft came to.
enum Attempted {
    /// The call is answered; `audited`: its audit item was written in the
    /// draft's own transaction.
    Done {
        result: Result<Success, ToolError>,
        audited: bool,
    },
    /// It lost a race on a document item (its number was taken): prepare again.
    Again,
}

/// The answer a key record's next action gives a call, when it answers
/// one (a replay, a conflict, in flight); `None` when the call goes on.
fn answer_of(next: NextAction, key: &IdempotencyKey) -> Option<Result<Success, ToolError>> {
    match next {
        NextAction::Replay(stored) => Some(Ok(Success {
            // The stored answer, sent again: a created draft's 201 becomes
            // 200 with `replayed: true` (DESIGN.md: 201 is for the call that
            // created it).
            status: if stored.status == StatusCode::CREATED {
                StatusCode::OK
            } else {
                stored.status
            },
            data: stored.data,
            replayed: true,
            document: stored.document,
        })),
        NextAction::Conflict => Some(Err(ToolError::KeyReused(format!(
            "Idempotency key '{key}' was already used for a different request (other arguments or another \
             tool). No draft was created. If you are retrying, resend exactly the original arguments; if this \
             is a new draft, use a new key (or a new client_ref)."
        )))),
        NextAction::InFlight(after) => Some(Err(in_flight(key, after))),
        NextAction::Proceed | NextAction::LeaseExpired { .. } => None,
    }
}

fn draft_key(
    header: Option<IdempotencyKey>,
    agent: &AgentContext,
    client_ref: &str,
    transport: Transport,
) -> Result<IdempotencyKey, ToolError> {
    if let Some(key) = header {
        return Ok(key);
    }
    let derived = match (&agent.run_id, transport) {
        (Some(run), _) => Some(IdempotencyKey::from_run(run, client_ref)),
        (None, Transport::Mcp) => Some(IdempotencyKey::from_client_ref(client_ref)),
        (None, Transport::Http) => None,
    };
    match derived {
        Some(key) => key.map_err(|reason| ToolError::invalid("header:X-Agent-Run-Id", reason)),
        None => Err(ToolError::invalid(
            "header:Idempotency-Key",
            "A draft needs an idempotency key so that a retry cannot create a second document. Send an \
             'Idempotency-Key' header (a new unique value per intended draft, the same value when you retry), \
             or an 'X-Agent-Run-Id' header, which is combined with client_ref. No draft was created.",
        )),
    }
}
