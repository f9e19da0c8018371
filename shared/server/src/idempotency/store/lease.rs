//! A key claimed for work that cannot share a transaction (a document in
//! the ERP): the claim under a lease, its completion under the lease's
//! token, and its release when the work definitely did not happen.

use super::*;
use draftline_contract::store::Update;

impl IdempotencyStore<'_> {
    /// Claims `key` for work that cannot share a transaction, as
    /// `claiming` says. The lease lasts `claiming.lease`; after it, another
    /// caller may take the key over. The items of `with` are written in the
    /// same transaction: the consumption of a person's answer (when its
    /// condition fails, nothing is claimed: [`Claim::AnswerUsed`]) and
    /// the limit counters (a failed condition is [`Claim::OverLimit`]).
    pub async fn claim(&self, claiming: &Claiming<'_>, with: ClaimedWith) -> Result<Claim, ToolError> {
        let Claiming { now, lease, ttl, .. } = *claiming;
        let token = LeaseToken(ulid::Ulid::new().to_string());
        let record = IdempotencyRecord {
            tool: claiming.tool.to_owned(),
            fingerprint: claiming.fingerprint.to_owned(),
            owner: claiming.owner.to_owned(),
            status: RecordStatus::InProgress,
            response: None,
            request_id: claiming.request_id.to_owned(),
            created_at: now,
            expires_at: now.timestamp() + ttl.as_secs() as i64,
            lease_until_ms: Some(now.timestamp_millis() + lease.as_millis() as i64),
            lease_token: Some(token.0.clone()),
            generation: Some(claiming.generation.to_owned()),
            reserved: claiming.reserved.cloned(),
        };
        let put = Write::PutIf(self.item(&record), Some(claimable(now, claiming.generation)));
        if with.consuming.is_some() || !with.counting.is_empty() {
            let transaction = KeyTransaction::of(put)
                .consuming(with.consuming)
                .counting(with.counting);
            return self.claim_in_transaction(transaction, token).await;
        }
        match self.table.write(put, "Nothing was claimed.").await? {
            Ok(()) => Ok(Claim::Acquired(token)),
            Err(stored) => stored
                .and_then(IdempotencyRecord::from_item)
                .map(|r| Claim::Taken(Box::new(r)))
                .ok_or_else(|| ToolError::internal("conditional check failed without the old item")),
        }
    }

    /// Sends a claim that rides with other parts (a person's answer, the
    /// limit counters) as its own transaction, and reads its outcome by part.
    async fn claim_in_transaction(&self, transaction: KeyTransaction, token: LeaseToken) -> Result<Claim, ToolError> {
        let key = self.key;
        // Its own attempt name: completing the claim commits under the token itself.
        let attempt = format!("claim-{}", token.0);
        match self.commit(transaction, &attempt).await {
            Ok(()) => Ok(Claim::Acquired(token)),
            Err(CommitFailure::KeyTaken(Some(record))) => Ok(Claim::Taken(record)),
            Err(CommitFailure::KeyTaken(None)) => {
                Err(ToolError::internal("conditional check failed without the old item"))
            }
            Err(CommitFailure::AnswerUsed) => Ok(Claim::AnswerUsed),
            Err(CommitFailure::OverLimit { counter, stored }) => Ok(Claim::OverLimit { counter, stored }),
            Err(CommitFailure::Contention | CommitFailure::CountersContended) => Ok(Claim::Contended),
            Err(CommitFailure::KeyInFlight) => Err(ToolError::Busy {
                message: format!(
                    "Another call with key '{key}' was being claimed at the same moment. No draft was created. \
                     Retry this same call unchanged in a second."
                ),
                retry_after_seconds: 1,
            }),
            Err(CommitFailure::Store(err)) => Err(err),
        }
    }

    /// Completes a claimed key with its response, only if `token` still holds
    /// the lease. Returns `false` when the lease was lost (nothing written).
    pub async fn complete(
        &self,
        token: &LeaseToken,
        http_status: u16,
        data: &serde_json::Value,
    ) -> Result<bool, ToolError> {
        let mut update = Update::of(self.record_key());
        update.set = vec![
            ("status".to_owned(), Value::s("COMPLETED")),
            ("http_status".to_owned(), Value::n(i64::from(http_status))),
            ("response".to_owned(), Value::S(data.to_string())),
        ];
        update.remove = vec!["lease_until".to_owned(), "lease_token".to_owned()];
        update.condition = Some(held_by(token));
        let written = self.table.write(Write::Update(update), "The result was not recorded.");
        Ok(written.await?.is_ok())
    }

    /// Completes a claimed key with `record` (status `COMPLETED`, the stored
    /// response and document) and, in the same transaction, the call's
    /// audit item and the `event` that announces the draft, only if
    /// `token` still holds the lease.
    /// Returns `false` when the lease was lost (nothing written: a worker
    /// that took the key over completes it instead).
    pub async fn complete_with(
        &self,
        token: &LeaseToken,
        record: &IdempotencyRecord,
        (audit, event): (Write, Write),
    ) -> Result<bool, ToolError> {
        let key = self.key;
        let put = Write::PutIf(self.item(record), Some(held_by(token)));
        let transaction = KeyTransaction::of(put).auditing(audit).announcing(event);
        match self.commit(transaction, &token.0).await {
            Ok(()) => Ok(true),
            Err(CommitFailure::KeyTaken(_)) => Ok(false),
            Err(
                CommitFailure::KeyInFlight
                | CommitFailure::Contention
                | CommitFailure::CountersContended
                | CommitFailure::AnswerUsed
                | CommitFailure::OverLimit { .. },
            ) => Err(ToolError::Busy {
                message: format!(
                    "The draft was created in the ERP, but recording its result met a concurrent write. Retry this \
                     same call unchanged (key '{key}') in a second: it returns that draft."
                ),
                retry_after_seconds: 1,
            }),
            Err(CommitFailure::Store(err)) => Err(err),
        }
    }

    /// Gives a claimed key back (the work failed and may be retried), only if
    /// `token` still holds the lease; `giving_back` (the consumption of a
    /// person's answer made with the claim, the limits it reserved) is
    /// written in the same transaction, so the same call may be retried and
    /// has counted nothing.
    pub async fn release(&self, token: &LeaseToken, giving_back: Vec<Write>) -> Result<bool, ToolError> {
        let delete = Write::Delete(self.record_key(), Some(held_by(token)));
        if !giving_back.is_empty() {
            let transaction = KeyTransaction::of(delete).along(giving_back);
            let attempt = format!("release-{}", token.0);
            return match self.commit(transaction, &attempt).await {
                Ok(()) => Ok(true),
                Err(CommitFailure::KeyTaken(_)) => Ok(false),
                Err(CommitFailure::Store(err)) => Err(err),
                Err(_) => Err(ToolError::dependency(
                    "the key's release met a concurrent write",
                    "The key was not released.",
                )),
            };
        }
        Ok(self.table.write(delete, "The key was not released.").await?.is_ok())
    }
}
