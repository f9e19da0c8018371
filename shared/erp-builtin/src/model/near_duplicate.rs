//! The near-duplicate marker: one item per branch, kind, counterparty and
//! item set, listing the open agent drafts of exactly those items. It is
//! the one record of a branch's open drafts: the near-duplicate check reads
//! one marker (a keyed read, in the key lookup's batch), and the review
//! pages read a counterparty's markers (one `Query` of their partition).
//!
//! Each open draft is one attribute of the marker, `d#<number>`, holding
//! the draft as JSON; `v` counts the drafts ever added. A draft is added
//! in its own transaction, on the condition that the marker is still as
//! the check read it ([`Seen`]): of two drafts of the same items placed at
//! once, the second's transaction fails, it is prepared again, and asks.
//! A person's decision removes its draft in the decision's own transaction.
//! Drafts older than a day, and all but the [`KEPT`] newest, are dropped by
//! the next draft that reads them, and a marker expires (DynamoDB TTL,
//! `expires_at`) a day after its newest draft, so a counterparty's
//! partition holds the item sets drafted in the last day (and markers
//! written before markers expired, until their item set is drafted or
//! decided on again, which sets their expiry). While the
//! near-duplicate check is off (no window), no draft is marked: nothing
//! reads the marker then, and concurrent drafts of the same items would
//! only contend for it.

use chrono::{DateTime, SecondsFormat, Utc};
use draftline_contract::ErpError;
use draftline_contract::identity::{BranchId, TenantId};
use draftline_contract::store::{Condition, TableKey, Update, Value, ValueType, Write};
use draftline_erp::domain::{OpenDraft, OpenDrafts, Seen};
use draftline_erp::port::Window;

use super::attrs::{self, Item as Attrs};
use crate::keys;

/// The prefix of a draft's attribute in a marker.
const ENTRY: &str = "d#";

/// The item kind of a marker.
pub const KIND: &str = "near_duplicate";

/// How long an open draft is remembered for the near-duplicate check.
pub const OPEN_DRAFT_SECONDS: i64 = 86_400;

/// The most open drafts a marker lists: the newest. The question names the
/// newest open draft of the same items (not the caller's own), so a few
/// are enough, and the marker stays a small item however many drafts of
/// the same items are made in a day (after "create another", or by a
/// deployment that drafts one item set all day).
pub const KEPT: usize = 8;

/// `at` as the marker's times are written (RFC 3339, milliseconds, `Z`).
fn text(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// The open drafts `stored` lists that were drafted in the last day before
/// `now` (any time, without it), and the numbers of those it lists that
/// were not (or whose entry does not parse: one warning line and a count
/// each).
fn entries(stored: &Attrs, now: Option<DateTime<Utc>>) -> (Vec<OpenDraft>, Vec<String>) {
    let forgotten = now.map(|now| {
        text(
            now.checked_sub_signed(chrono::Duration::seconds(OPEN_DRAFT_SECONDS))
                .unwrap_or(now),
        )
    });
    let mut listed = Vec::new();
    let mut stale = Vec::new();
    for (name, value) in stored {
        let Some(number) = name.strip_prefix(ENTRY) else {
            continue;
        };
        match value
            .as_s()
            .and_then(|text| serde_json::from_str::<OpenDraft>(text).ok())
        {
            Some(draft)
                if forgotten
                    .as_ref()
                    .is_some_and(|forgotten| draft.created_at < *forgotten) =>
            {
                stale.push(number.to_owned());
            }
            Some(draft) => listed.push(draft),
            None => {
                unreadable(stored, name);
                stale.push(number.to_owned());
            }
        }
    }
    (listed, stale)
}

/// The marker's version, if it is one [`Marker::read`] accepts.
fn version(stored: &Attrs) -> Option<u64> {
    attrs::int(stored, "near-duplicate marker", "v")
        .ok()
        .and_then(|v| u64::try_from(v).ok())
}

/// A marker (or one of its entries, `what`) that cannot be read: one
/// warning line and a count ([`draftline_dynamo::unreadable_at`]).
fn unreadable(stored: &Attrs, what: &str) {
    let part = |name: &str| stored.get(name).and_then(Value::as_s).unwrap_or("");
    draftline_dynamo::unreadable_at(KIND, (part("pk"), part("sk")), what);
}

/// The stored version of an unreadable marker (`None`: there is none).
fn stored_version(stored: &Attrs) -> Option<Value> {
    stored.get("v").cloned()
}

/// The open drafts `markers` (a counterparty's, as its partition's `Query`
/// returns them) list that were drafted within `window`: what the review
/// pages show as near-duplicates, from the record the check reads (a
/// marker the check would treat as absent lists nothing here either).
pub fn listed(markers: &[Attrs], window: &Window) -> Vec<OpenDraft> {
    let since = text(window.since);
    markers
        .iter()
        .filter(|marker| version(marker).is_some())
        .flat_map(|marker| entries(marker, Some(window.now)).0)
        .filter(|draft| draft.created_at >= since)
        .collect()
}

/// Where the open drafts of one item set are marked.
#[derive(Debug, Clone, Copy)]
pub struct Marker<'a> {
    /// The tenant.
    pub tenant: &'a TenantId,
    /// The branch.
    pub branch: &'a BranchId,
    /// `PO` or `QT`.
    pub kind: &'a str,
    /// The vendor's or customer's code.
    pub counterparty: &'a str,
    /// The item codes, sorted and without repeats.
    pub items: &'a [String],
}

impl Marker<'_> {
    /// The open drafts `stored` lists that were drafted within `window`,
    /// and what the marker was read as: absent, or its version and the
    /// drafts the next write drops: those older than a day (when a window
    /// gives the time), and all but the [`KEPT`] − 1 newest, so that with
    /// the new draft it lists at most [`KEPT`]. With no window (a person
    /// already decided), no draft is returned: the marker's state alone.
    ///
    /// A marker that cannot be read never refuses a draft: without a valid
    /// version it is [`Seen::Unreadable`] (absent, and replaced by the next
    /// draft's write), and an entry that does not parse is dropped by the
    /// next write; each is one warning line and a count.
    pub fn read(stored: Option<&Attrs>, window: Option<&Window>) -> OpenDrafts {
        let Some(stored) = stored else {
            return OpenDrafts {
                drafts: Vec::new(),
                seen: Seen::Absent,
            };
        };
        let Some(version) = version(stored) else {
            unreadable(stored, "no valid version 'v'");
            let listed = stored
                .keys()
                .filter_map(|name| name.strip_prefix(ENTRY))
                .map(str::to_owned)
                .collect();
            return OpenDrafts {
                drafts: Vec::new(),
                seen: Seen::Unreadable {
                    version: stored_version(stored),
                    listed,
                },
            };
        };
        // Without a window no entry is stale by age: only the bound drops.
        let (mut listed, mut stale) = entries(stored, window.map(|window| window.now));
        // Newest first; past the newest KEPT − 1, dropped by the next write.
        listed.sort_by(|a, b| b.created_at.cmp(&a.created_at).then_with(|| b.number.cmp(&a.number)));
        if listed.len() >= KEPT {
            stale.extend(listed.drain(KEPT - 1..).map(|draft| draft.number));
        }
        let drafts = match window {
            Some(window) => {
                let since = text(window.since);
                listed.retain(|draft| draft.created_at >= since);
                listed
            }
            None => Vec::new(),
        };
        OpenDrafts {
            drafts,
            seen: Seen::Version { version, stale },
        }
    }

    /// The marker's key, store-neutral.
    pub fn table_key(&self) -> TableKey {
        TableKey {
            pk: keys::near_duplicates(self.tenant, self.branch, self.kind, self.counterparty),
            sk: keys::near_duplicate_sk(self.items),
        }
    }

    /// The write that adds `draft`, made at `now`, to the marker, if it is
    /// still as `seen` says, dropping the drafts that read found stale or
    /// past the newest [`KEPT`], and setting the marker to expire a day
    /// after `now`; none when the marker was not read (the check is off:
    /// nothing is marked). An unreadable marker is written anew listing
    /// `draft` alone, if its version is still as read: an update, so the
    /// roles that draft need no `PutItem` on markers (of two drafts that
    /// read it at once, the second's transaction fails and it reads again).
    pub fn add(&self, draft: &OpenDraft, seen: &Seen, now: DateTime<Utc>) -> Result<Option<Write>, ErpError> {
        let entry = serde_json::to_string(draft).map_err(ErpError::internal)?;
        let mut update = Update::of(self.table_key());
        update.set = vec![
            (format!("{ENTRY}{}", draft.number), Value::S(entry)),
            ("kind".to_owned(), Value::s(KIND)),
            (
                "expires_at".to_owned(),
                Value::n(now.timestamp().saturating_add(OPEN_DRAFT_SECONDS)),
            ),
        ];
        let dropped = match seen {
            Seen::Unread => return Ok(None),
            Seen::Absent => {
                update.add = vec![("v".to_owned(), 1)];
                update.condition = Some(Condition::Absent("pk".to_owned()));
                &[][..]
            }
            Seen::Version { version, stale } => {
                update.add = vec![("v".to_owned(), 1)];
                let version = i64::try_from(*version).map_err(ErpError::internal)?;
                update.condition = Some(Condition::Equals("v".to_owned(), Value::n(version)));
                stale.as_slice()
            }
            Seen::Unreadable { version, listed } => {
                let (condition, stored_one) = unreadable_condition(version.as_ref());
                update
                    .set
                    .push(("v".to_owned(), Value::n(if stored_one { 2 } else { 1 })));
                update.condition = Some(condition);
                listed.as_slice()
            }
        };
        // A number taken again (a sequence set back by hand) is set, not
        // also removed: a path cannot be both.
        update.remove = dropped
            .iter()
            .filter(|number| **number != draft.number)
            .map(|number| format!("{ENTRY}{number}"))
            .collect();
        Ok(Some(Write::Update(update)))
    }

    /// The write that removes draft `number` from the marker (a person
    /// decided on it at `decided_at`, epoch seconds). A marker that does
    /// not exist yet (a draft made before markers were kept, while the
    /// check was off, or seeded) is left an empty one at version 0, which
    /// the next draft reads as any other, expiring a day after the
    /// decision; a marker's version is never removed or changed here, nor
    /// the expiry of one that has it (an old marker without one gets the
    /// day after the decision: the drafts it still lists are older).
    pub fn remove(&self, number: &str, decided_at: i64) -> Write {
        let mut update = Update::of(self.table_key());
        update.set = vec![("kind".to_owned(), Value::s(KIND))];
        update.set_if_absent = vec![
            ("v".to_owned(), Value::n(0)),
            (
                "expires_at".to_owned(),
                Value::n(decided_at.saturating_add(OPEN_DRAFT_SECONDS)),
            ),
        ];
        update.remove = vec![format!("{ENTRY}{number}")];
        Write::Update(update)
    }
}

/// The condition that an unreadable marker's version is still as read
/// (absent, a number or a string compared as stored, else not a number
/// nor a string), and whether it was the number 1 (the new version must
/// differ from it, so that a second replacement fails its condition).
fn unreadable_condition(version: Option<&Value>) -> (Condition, bool) {
    let v = || "v".to_owned();
    match version {
        None => (Condition::Absent(v()), false),
        Some(stored @ Value::N(n)) => (
            Condition::Equals(v(), stored.clone()),
            n.parse::<f64>().is_ok_and(|n| n == 1.0),
        ),
        Some(stored @ Value::S(_)) => (Condition::Equals(v(), stored.clone()), false),
        Some(_) => (
            Condition::All(vec![
                Condition::NotOfType(v(), ValueType::N),
                Condition::NotOfType(v(), ValueType::S),
            ]),
            false,
        ),
    }
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};

    use draftline_contract::store::Value;

    use crate::model::attrs::{nv, sv};

    use super::*;

    /// A marker at version `v` listing drafts `(number, minutes after 09:00)`.
    fn stored(v: i64, drafts: &[(&str, i64)]) -> Attrs {
        let at =
            |minutes: i64| Utc.with_ymd_and_hms(2026, 12, 1, 9, 0, 0).unwrap() + chrono::Duration::minutes(minutes);
        let mut item = Attrs::from([("v".to_owned(), nv(v)), ("kind".to_owned(), sv(KIND))]);
        for (number, minutes) in drafts {
            let draft = OpenDraft {
                number: (*number).to_owned(),
                counterparty: "V-00231".to_owned(),
                lines: Vec::new(),
                agent_run: None,
                created_at: at(*minutes).to_rfc3339_opts(SecondsFormat::Millis, true),
                key: None,
            };
            item.insert(format!("{ENTRY}{number}"), sv(serde_json::to_string(&draft).unwrap()));
        }
        item
    }

    fn window(since_minutes: i64, now_minutes: i64) -> Window {
        let at =
            |minutes: i64| Utc.with_ymd_and_hms(2026, 12, 1, 9, 0, 0).unwrap() + chrono::Duration::minutes(minutes);
        Window {
            since: at(since_minutes),
            now: at(now_minutes),
        }
    }

    fn listed_of(marker: &Attrs) -> Vec<OpenDraft> {
        listed(std::slice::from_ref(marker), &window(0, 60))
    }

    fn numbers(open: &OpenDrafts) -> Vec<&str> {
        open.drafts.iter().map(|d| d.number.as_str()).collect()
    }

    #[test]
    fn a_marker_lists_the_drafts_in_the_window_newest_first_and_drops_those_past_a_day() {
        let marker = stored(3, &[("PO-1", 0), ("PO-2", 60 * 20), ("PO-3", 60 * 30)]);
        let open = Marker::read(Some(&marker), Some(&window(60 * 25, 60 * 31)));
        assert_eq!(numbers(&open), ["PO-3"]);
        assert_eq!(
            open.seen,
            Seen::Version {
                version: 3,
                stale: vec!["PO-1".to_owned()]
            }
        );
    }

    #[test]
    fn a_marker_keeps_the_newest_drafts_so_that_with_the_next_it_lists_at_most_kept() {
        let drafts: Vec<(String, i64)> = (1..=12).map(|n| (format!("PO-{n:02}"), n)).collect();
        let listed: Vec<(&str, i64)> = drafts.iter().map(|(n, m)| (n.as_str(), *m)).collect();
        let marker = stored(12, &listed);
        let open = Marker::read(Some(&marker), Some(&window(0, 60)));
        // The newest KEPT − 1 stay (with the new draft: KEPT); the rest go.
        assert_eq!(
            numbers(&open),
            ["PO-12", "PO-11", "PO-10", "PO-09", "PO-08", "PO-07", "PO-06"]
        );
        let Seen::Version { version, mut stale } = open.seen else {
            panic!("read: {:?}", open.seen)
        };
        stale.sort();
        assert_eq!(version, 12);
        assert_eq!(stale, ["PO-01", "PO-02", "PO-03", "PO-04", "PO-05"]);

        // After a person's decision (no window): its state alone, the same drops.
        let decided = Marker::read(Some(&marker), None);
        assert!(decided.drafts.is_empty());
        assert!(matches!(decided.seen, Seen::Version { version: 12, ref stale } if stale.len() == 5));
    }

    #[test]
    fn a_marker_without_a_valid_version_reads_as_unreadable_and_lists_nothing() {
        let mut no_version = stored(3, &[("PO-1", 0)]);
        no_version.remove("v");
        let mut text_version = stored(3, &[("PO-1", 0)]);
        text_version.insert("v".to_owned(), sv("3"));
        let negative = stored(-1, &[("PO-1", 0)]);
        let mut fraction = stored(3, &[("PO-1", 0)]);
        fraction.insert("v".to_owned(), Value::N("1.5".to_owned()));
        for (marker, stored_as) in [
            (no_version, None),
            (text_version, Some(Value::s("3"))),
            (negative, Some(Value::n(-1))),
            (fraction, Some(Value::N("1.5".to_owned()))),
        ] {
            let open = Marker::read(Some(&marker), Some(&window(0, 60)));
            assert!(open.drafts.is_empty(), "{marker:?}");
            let Seen::Unreadable { version, listed } = open.seen else {
                panic!("{marker:?}: {:?}", open.seen)
            };
            assert_eq!(version, stored_as, "{marker:?}");
            assert_eq!(listed, ["PO-1"], "{marker:?}");
            // The review pages list nothing of it either.
            assert!(listed_of(&marker).is_empty());
        }
    }

    #[test]
    fn an_entry_that_does_not_parse_is_dropped_by_the_next_write_and_the_others_stand() {
        let mut marker = stored(4, &[("PO-1", 10), ("PO-2", 20)]);
        marker.insert(format!("{ENTRY}PO-3"), sv("{not json"));
        marker.insert(format!("{ENTRY}PO-4"), nv(7));
        let open = Marker::read(Some(&marker), Some(&window(0, 60)));
        assert_eq!(numbers(&open), ["PO-2", "PO-1"]);
        let Seen::Version { version, mut stale } = open.seen else {
            panic!("read: {:?}", open.seen)
        };
        stale.sort();
        assert_eq!((version, stale), (4, vec!["PO-3".to_owned(), "PO-4".to_owned()]));
    }

    #[test]
    fn no_marker_reads_as_absent() {
        let open = Marker::read(None, Some(&window(0, 60)));
        assert!(open.drafts.is_empty());
        assert_eq!(open.seen, Seen::Absent);
    }
}
