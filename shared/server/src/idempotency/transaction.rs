//! One transaction of a key, by its named parts: what a draft commits (its
//! key record, a person's answer consumed, the document's writes, the
//! audit item, the event that announces the draft, the limit counters) and what a claim, its completion or its
//! release commit, each part a store-neutral [`Write`]. The store sends
//! the parts in one transaction of its [`crate::storage::Table`] and reads
//! a cancellation back by part ([`Part`]), so no caller knows where in the
//! transaction an item went.

use draftline_contract::store::{Write, WriteSet};

use crate::policy::CounterKind;

/// The parts of one transaction of a key. The key record is always its
/// first item: a replay wins over every other reason it was cancelled.
#[derive(Debug, Clone)]
pub struct KeyTransaction {
    record: Write,
    answer: Option<Write>,
    document: Vec<Write>,
    audit: Option<Write>,
    event: Option<Write>,
    counters: Vec<(CounterKind, Write)>,
    /// Items written with the key's own (a release's give-backs), which
    /// refuse nothing of their own.
    along: Vec<Write>,
    /// Until when (epoch seconds) the record it writes answers every
    /// retry of the key, when it completes the key: the store notes the
    /// key once it committed ([`super::answered`]).
    pub(super) answers_until: Option<i64>,
}

/// Which part of a [`KeyTransaction`] an item of it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The key record (its put, or a release's delete).
    Record,
    /// A person's "create another" answer, consumed.
    Answer,
    /// One of the document's writes.
    Document,
    /// The audit item.
    Audit,
    /// The event that announces the draft ([`crate::events`]).
    Event,
    /// The counter of one limit kind.
    Counter(CounterKind),
    /// An item written along (a give-back).
    Along,
}

impl KeyTransaction {
    /// A transaction of the key's `record` write alone.
    pub fn of(record: Write) -> Self {
        Self {
            record,
            answer: None,
            document: Vec::new(),
            audit: None,
            event: None,
            counters: Vec::new(),
            along: Vec::new(),
            answers_until: None,
        }
    }

    /// With a person's answer consumed (its condition: not used before).
    pub fn consuming(mut self, answer: Option<Write>) -> Self {
        self.answer = answer;
        self
    }

    /// With the document's writes (the ERP backend's).
    pub fn placing(mut self, document: WriteSet) -> Self {
        self.document = document.0;
        self
    }

    /// With the call's audit item.
    pub fn auditing(mut self, audit: Write) -> Self {
        self.audit = Some(audit);
        self
    }

    /// With the outbox item of the event that announces the draft.
    pub fn announcing(mut self, event: Write) -> Self {
        self.event = Some(event);
        self
    }

    /// With the limit counters, each by the kind of limit it counts.
    pub fn counting(mut self, counters: Vec<(CounterKind, Write)>) -> Self {
        self.counters = counters;
        self
    }

    /// With items that go along and refuse nothing of their own.
    pub fn along(mut self, items: Vec<Write>) -> Self {
        self.along = items;
        self
    }

    /// The writes in the order sent, each with its part.
    pub fn into_writes(self) -> (Vec<Write>, Vec<Part>) {
        let mut items = Vec::with_capacity(5 + self.document.len() + self.counters.len() + self.along.len());
        let mut parts = Vec::with_capacity(items.capacity());
        let mut add = |item, part| {
            items.push(item);
            parts.push(part);
        };
        add(self.record, Part::Record);
        if let Some(answer) = self.answer {
            add(answer, Part::Answer);
        }
        for write in self.document {
            add(write, Part::Document);
        }
        if let Some(audit) = self.audit {
            add(audit, Part::Audit);
        }
        if let Some(event) = self.event {
            add(event, Part::Event);
        }
        for (kind, counter) in self.counters {
            add(counter, Part::Counter(kind));
        }
        for item in self.along {
            add(item, Part::Along);
        }
        (items, parts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use draftline_contract::store::TableKey;

    fn item(name: &str) -> Write {
        let key = TableKey {
            pk: name.to_owned(),
            sk: "S".to_owned(),
        };
        Write::Delete(key, None)
    }

    fn name(item: &Write) -> String {
        item.key().unwrap().pk
    }

    #[test]
    fn the_record_goes_first_and_every_item_is_known_by_its_part() {
        let transaction = KeyTransaction::of(item("record"))
            .counting(vec![(CounterKind::Run, item("run")), (CounterKind::Day, item("day"))])
            .auditing(item("audit"))
            .announcing(item("event"))
            .placing(WriteSet(vec![item("po"), item("queue")]))
            .consuming(Some(item("answer")));
        let (items, parts) = transaction.into_writes();
        let names: Vec<String> = items.iter().map(name).collect();
        assert_eq!(
            names,
            ["record", "answer", "po", "queue", "audit", "event", "run", "day"]
        );
        assert_eq!(
            parts,
            [
                Part::Record,
                Part::Answer,
                Part::Document,
                Part::Document,
                Part::Audit,
                Part::Event,
                Part::Counter(CounterKind::Run),
                Part::Counter(CounterKind::Day),
            ]
        );
    }
}
