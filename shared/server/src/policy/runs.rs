//! The agent runs a warm instance counted lately: a hint, never a limit.
//!
//! When a policy limits a run's drafts, a draft's key lookup reads the
//! run's counter in the same request, so that a new draft in a run already
//! at its count is refused before it is priced and numbered
//! ([`super::Counting::run_at_its_count`]). The limit itself is the
//! counter's condition in the draft's transaction, which no draft passes at
//! the count whatever was read before.
//!
//! An instance that read a run's counter, and counted the drafts it
//! committed in that run since, knows a lower bound of the run's drafts (a
//! counter grows, except by a release giving back what a claim counted,
//! which only makes the bound too high: the next lookup reads sooner).
//! While that bound is fresh and leaves room for this draft, the counter is
//! left out of the lookup: it could only say the run is at its count if
//! other drafts of the run (on other instances, or in flight here) made up
//! the rest since, and then the draft's own counter condition refuses it,
//! in its transaction on the built-in backend (its number is a gap, as for
//! any refused draft) or in its claim on an ERP (after the ERP priced it).
//! A bound older than [`FRESH_FOR`], a run this instance does not know, or
//! one whose bound leaves no room, is read as before.

use std::collections::HashMap;
use std::sync::Mutex;

use chrono::{DateTime, Duration, Utc};

/// How long a read bound is trusted to leave the counter out of a lookup.
const FRESH_FOR: Duration = Duration::seconds(60);

/// How many runs an instance remembers; past it, it starts again from none
/// (a run forgotten costs its counter's place in one lookup, nothing more).
const REMEMBERED: usize = 4096;

/// What an instance knows of a run's drafts: at least `drafts`, as read at
/// `read_at` plus the drafts it committed in the run since.
#[derive(Debug, Clone, Copy)]
struct Bound {
    drafts: i64,
    read_at: DateTime<Utc>,
}

/// The runs this instance counted lately, each by its counter's partition
/// key (tenant, branch, user, run: another person's run of the same id is
/// another run).
#[derive(Debug, Default)]
pub struct KnownRuns(Mutex<HashMap<String, Bound>>);

impl KnownRuns {
    /// Whether the counter of the run at `pk` may be left out of a lookup
    /// at `now`: its bound, read less than [`FRESH_FOR`] ago, is below
    /// `max` drafts (this draft would be at most the run's `max`th).
    pub fn has_room(&self, pk: &str, max: u32, now: DateTime<Utc>) -> bool {
        self.0.lock().is_ok_and(|runs| {
            runs.get(pk).is_some_and(|bound| {
                now >= bound.read_at
                    && now.signed_duration_since(bound.read_at) < FRESH_FOR
                    && bound.drafts < i64::from(max)
            })
        })
    }

    /// Notes that the run at `pk` had `drafts` when read at `now`. A bound
    /// this instance holds already is a lower bound too (a read that left
    /// before a draft of the run here committed may arrive after it): the
    /// larger stands.
    pub fn read(&self, pk: &str, drafts: i64, now: DateTime<Utc>) {
        if let Ok(mut runs) = self.0.lock() {
            if runs.len() >= REMEMBERED && !runs.contains_key(pk) {
                runs.clear();
            }
            let drafts = runs.get(pk).map_or(drafts, |known| known.drafts.max(drafts));
            runs.insert(pk.to_owned(), Bound { drafts, read_at: now });
        }
    }

    /// Notes one more draft committed in the run at `pk` (nothing, for a
    /// run this instance has not read).
    pub fn counted(&self, pk: &str) {
        if let Ok(mut runs) = self.0.lock()
            && let Some(bound) = runs.get_mut(pk)
        {
            bound.drafts = bound.drafts.saturating_add(1);
        }
    }

    /// Forgets the run at `pk` (its counter refused a draft): the next
    /// draft reads it.
    pub fn forget(&self, pk: &str) {
        if let Ok(mut runs) = self.0.lock() {
            runs.remove(pk);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_000 + seconds, 0).unwrap()
    }

    #[test]
    fn a_run_has_room_while_its_read_bound_is_fresh_and_below_the_count() {
        let runs = KnownRuns::default();
        assert!(!runs.has_room("R", 10, at(0)), "an unknown run is read");
        runs.read("R", 7, at(0));
        assert!(runs.has_room("R", 10, at(59)));
        assert!(!runs.has_room("R", 10, at(60)), "a bound a minute old is read again");
        assert!(!runs.has_room("R", 10, at(-1)), "a clock that went back reads again");
        runs.counted("R");
        runs.counted("R");
        assert!(runs.has_room("R", 10, at(1)), "9 drafts: this one would be the 10th");
        runs.counted("R");
        assert!(
            !runs.has_room("R", 10, at(1)),
            "at its count: read, and refused before it is priced"
        );
        assert!(runs.has_room("R", 11, at(1)));
        runs.forget("R");
        assert!(!runs.has_room("R", 11, at(1)));
        runs.counted("S");
        assert!(!runs.has_room("S", 100, at(0)), "counting an unread run knows nothing");
    }

    #[test]
    fn a_read_that_left_before_a_draft_here_committed_does_not_lower_the_bound() {
        let runs = KnownRuns::default();
        runs.read("R", 4, at(0));
        runs.counted("R");
        runs.read("R", 4, at(1));
        assert!(
            !runs.has_room("R", 5, at(1)),
            "5 drafts known, a read of 4 arriving late"
        );
        runs.read("R", 7, at(2));
        assert!(runs.has_room("R", 8, at(2)));
        assert!(!runs.has_room("R", 7, at(2)));
    }

    #[test]
    fn a_full_memory_starts_again_from_none() {
        let runs = KnownRuns::default();
        for i in 0..REMEMBERED {
            runs.read(&format!("R{i}"), 0, at(0));
        }
        runs.read("R0", 1, at(0));
        assert!(runs.has_room("R1", 10, at(0)), "a run it holds is updated in place");
        runs.read("new", 0, at(0));
        assert!(!runs.has_room("R1", 10, at(0)));
        assert!(runs.has_room("new", 10, at(0)));
    }
}
