//! A store-neutral write set: what an ERP backend's document writes and a
//! person's decision are when they share the draft's (or the decision's)
//! one transaction of draftline's table. They cross the ERP port as these
//! types; only `draftline-dynamo` turns them into DynamoDB requests, and
//! the in-memory ERP of the tests applies them to its books.

use std::collections::{BTreeMap, HashMap};

use crate::ToolError;

/// A stored value, as draftline's table holds them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A string.
    S(String),
    /// A number, in its decimal text.
    N(String),
    /// A boolean.
    Bool(bool),
    /// Null.
    Null,
    /// A list.
    L(Vec<Value>),
    /// A map.
    M(BTreeMap<String, Value>),
    /// A set of strings.
    Ss(Vec<String>),
}

impl Value {
    /// A string value.
    pub fn s(text: impl Into<String>) -> Self {
        Self::S(text.into())
    }

    /// A whole number.
    pub fn n(number: i64) -> Self {
        Self::N(number.to_string())
    }

    /// The string, if it is one.
    pub fn as_s(&self) -> Option<&str> {
        match self {
            Self::S(text) => Some(text),
            _ => None,
        }
    }

    /// The number's decimal text, if it is one.
    pub fn as_n(&self) -> Option<&str> {
        match self {
            Self::N(number) => Some(number),
            _ => None,
        }
    }

    /// The boolean, if it is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Self::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The list, if it is one.
    pub fn as_l(&self) -> Option<&[Value]> {
        match self {
            Self::L(values) => Some(values),
            _ => None,
        }
    }

    /// The map, if it is one.
    pub fn as_m(&self) -> Option<&BTreeMap<String, Value>> {
        match self {
            Self::M(map) => Some(map),
            _ => None,
        }
    }

    /// The set of strings, if it is one.
    pub fn as_ss(&self) -> Option<&[String]> {
        match self {
            Self::Ss(texts) => Some(texts),
            _ => None,
        }
    }
}

/// An item: its attributes by name, its key (`pk`, `sk`) among them.
pub type Attributes = BTreeMap<String, Value>;

/// The key of one item.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TableKey {
    /// The partition key.
    pub pk: String,
    /// The sort key.
    pub sk: String,
}

impl TableKey {
    /// The key of an item (`None` when it has no string `pk` and `sk`).
    pub fn of(item: &Attributes) -> Option<Self> {
        Some(Self {
            pk: item.get("pk")?.as_s()?.to_owned(),
            sk: item.get("sk")?.as_s()?.to_owned(),
        })
    }
}

/// What one batch read found, by key: the key lookup's (the key's record,
/// the gate's policy and counter, the keys a backend asked it to read,
/// [`crate::tool::DraftTool::reads`]) for each to pick its own from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found(HashMap<TableKey, Attributes>);

impl Found {
    /// `items` by their keys (an item without a `pk` and an `sk` is none
    /// of them).
    pub fn of(items: impl IntoIterator<Item = Attributes>) -> Self {
        Self(
            items
                .into_iter()
                .filter_map(|item| Some((TableKey::of(&item)?, item)))
                .collect(),
        )
    }

    /// The item at `key`, if it was found.
    pub fn get(&self, key: &TableKey) -> Option<&Attributes> {
        self.0.get(key)
    }

    /// Takes the item at `key` out, if it was found.
    pub fn take(&mut self, key: &TableKey) -> Option<Attributes> {
        self.0.remove(key)
    }
}

/// The kind of a stored value, for a condition on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueType {
    /// A number.
    N,
    /// A string.
    S,
}

/// What must hold of the stored item for a write to apply; when it does
/// not, the whole transaction is cancelled and nothing is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Condition {
    /// The attribute is absent.
    Absent(String),
    /// The attribute is stored (with any value).
    Exists(String),
    /// The attribute is stored with this value.
    Equals(String, Value),
    /// The attribute is not stored as a value of this type.
    NotOfType(String, ValueType),
    /// Every one of them holds.
    All(Vec<Condition>),
    /// At least one of them holds.
    Any(Vec<Condition>),
    /// It does not hold.
    Not(Box<Condition>),
    /// The attribute is a string that begins with this.
    BeginsWith(String, String),
    /// The attribute is stored as a whole number no greater than this
    /// (absent, or of another type: it does not hold).
    AtMost(String, i64),
}

impl Condition {
    /// Whether it holds of `stored` (`None`: no item has the key).
    pub fn holds(&self, stored: Option<&Attributes>) -> bool {
        let get = |name: &str| stored.and_then(|item| item.get(name));
        match self {
            Self::Absent(name) => get(name).is_none(),
            Self::Exists(name) => get(name).is_some(),
            Self::Equals(name, value) => get(name) == Some(value),
            Self::NotOfType(name, kind) => !matches!(
                (get(name), kind),
                (Some(Value::N(_)), ValueType::N) | (Some(Value::S(_)), ValueType::S)
            ),
            Self::All(all) => all.iter().all(|c| c.holds(stored)),
            Self::Any(any) => any.iter().any(|c| c.holds(stored)),
            Self::Not(condition) => !condition.holds(stored),
            Self::BeginsWith(name, prefix) => get(name)
                .and_then(Value::as_s)
                .is_some_and(|text| text.starts_with(prefix.as_str())),
            Self::AtMost(name, max) => get(name)
                .and_then(Value::as_n)
                .and_then(|n| n.parse::<i64>().ok())
                .is_some_and(|n| n <= *max),
        }
    }
}

/// An update of one item's attributes (the item is made if absent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Update {
    /// The item.
    pub key: TableKey,
    /// Attributes set to a value.
    pub set: Vec<(String, Value)>,
    /// Attributes set to a value only where they are absent.
    pub set_if_absent: Vec<(String, Value)>,
    /// Numbers added to (absent: counted from zero).
    pub add: Vec<(String, i64)>,
    /// Attributes removed.
    pub remove: Vec<String>,
    /// What must hold first.
    pub condition: Option<Condition>,
}

impl Update {
    /// An update of the item at `key` that changes nothing yet.
    pub fn of(key: TableKey) -> Self {
        Self {
            key,
            set: Vec::new(),
            set_if_absent: Vec::new(),
            add: Vec::new(),
            remove: Vec::new(),
            condition: None,
        }
    }
}

/// One write of a transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Write {
    /// The item, new: no item has its key yet.
    PutNew(Attributes),
    /// The item, over what is stored, if `condition` holds (`None`: always).
    PutIf(Attributes, Option<Condition>),
    /// An update of one item.
    Update(Update),
    /// The item at the key removed, if `condition` holds (`None`: always).
    Delete(TableKey, Option<Condition>),
}

/// A secondary index: its name and the attributes of its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Index {
    /// The index's name.
    pub name: &'static str,
    /// Its partition key's attribute.
    pub pk: &'static str,
    /// Its sort key's attribute.
    pub sk: &'static str,
}

/// The items of one partition (of the table, or of an index), in sort-key
/// order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    /// The index read (`None`: the table itself).
    pub index: Option<Index>,
    /// The partition.
    pub pk: String,
    /// What their sort keys begin with, if only some are wanted.
    pub sk_prefix: Option<String>,
    /// Which of the items read are returned (they are read, and count
    /// towards `limit`, either way).
    pub filter: Option<Condition>,
    /// Highest sort key first.
    pub newest_first: bool,
    /// At most this many items read (`None`: one page's worth).
    pub limit: Option<i32>,
    /// Start after this item's key (a page's [`Page::last`]).
    pub after: Option<Attributes>,
    /// Return the items' keys alone.
    pub keys_only: bool,
    /// Read strongly consistent (the table only; an index cannot be).
    pub consistent: bool,
}

impl Query {
    /// Every item of partition `pk` of the table, oldest first.
    pub fn partition(pk: impl Into<String>) -> Self {
        Self {
            index: None,
            pk: pk.into(),
            sk_prefix: None,
            filter: None,
            newest_first: false,
            limit: None,
            after: None,
            keys_only: false,
            consistent: false,
        }
    }
}

/// One page of a query.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Page {
    /// The items read that passed the filter, in order.
    pub items: Vec<Attributes>,
    /// The key of the last item read, when more may follow.
    pub last: Option<Attributes>,
}

/// A write's condition did not hold; nothing of it was applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConditionFailed;

impl Write {
    /// The key of the item it writes (`None`: a put of an item without one).
    pub fn key(&self) -> Option<TableKey> {
        match self {
            Self::PutNew(item) | Self::PutIf(item, _) => TableKey::of(item),
            Self::Update(update) => Some(update.key.clone()),
            Self::Delete(key, _) => Some(key.clone()),
        }
    }

    /// What it leaves at its key when applied over `stored` (`None`: no
    /// item), as a table applies it: its condition first.
    pub fn apply(&self, stored: Option<&Attributes>) -> Result<Option<Attributes>, ConditionFailed> {
        let check = |condition: Option<&Condition>| match condition {
            Some(condition) if !condition.holds(stored) => Err(ConditionFailed),
            _ => Ok(()),
        };
        match self {
            Self::PutNew(item) => {
                check(Some(&Condition::Absent("pk".to_owned())))?;
                Ok(Some(item.clone()))
            }
            Self::PutIf(item, condition) => {
                check(condition.as_ref())?;
                Ok(Some(item.clone()))
            }
            Self::Delete(_, condition) => {
                check(condition.as_ref())?;
                Ok(None)
            }
            Self::Update(update) => {
                check(update.condition.as_ref())?;
                Ok(Some(update.applied(stored)))
            }
        }
    }
}

impl Update {
    /// The item it leaves over `stored` (made from its key if absent).
    fn applied(&self, stored: Option<&Attributes>) -> Attributes {
        let mut item = stored.cloned().unwrap_or_else(|| {
            Attributes::from([
                ("pk".to_owned(), Value::s(&self.key.pk)),
                ("sk".to_owned(), Value::s(&self.key.sk)),
            ])
        });
        for (name, value) in &self.set {
            item.insert(name.clone(), value.clone());
        }
        for (name, value) in &self.set_if_absent {
            item.entry(name.clone()).or_insert_with(|| value.clone());
        }
        for (name, n) in &self.add {
            let was = item
                .get(name)
                .and_then(Value::as_n)
                .and_then(|text| text.parse::<i64>().ok())
                .unwrap_or(0);
            item.insert(name.clone(), Value::n(was.saturating_add(*n)));
        }
        for name in &self.remove {
            item.remove(name);
        }
        item
    }
}

/// The writes a backend hands the server for one transaction, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteSet(pub Vec<Write>);

impl WriteSet {
    /// How many items it writes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether it writes nothing.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Why the table cancelled one item of a transaction.
#[derive(Debug, Clone, PartialEq)]
pub enum Cancelled {
    /// The item was fine; another one cancelled the transaction.
    Fine,
    /// Its condition failed; the item as stored, when the put asked for it
    /// (`ReturnValuesOnConditionCheckFailure = ALL_OLD`), neutral.
    ConditionFailed(Option<Attributes>),
    /// Another transaction was writing it at the same moment.
    Conflict,
    /// Throttling or capacity: nothing was applied.
    Other(String),
}

/// Why a transaction did not commit. Nothing of it was applied, except
/// with [`TransactFailure::Failed`] of an uncertain outcome.
#[derive(Debug)]
pub enum TransactFailure {
    /// The table cancelled it: one reason per item, in the items' order.
    Cancelled(Vec<Cancelled>),
    /// Another transaction held an item, or the request token was used for
    /// other items: nothing was applied.
    InProgress,
    /// The table failed; the error says whether the write may have applied.
    Failed(ToolError),
}

impl TransactFailure {
    /// The reason of item `index`, when the transaction was cancelled.
    pub fn reason(&self, index: usize) -> Option<&Cancelled> {
        match self {
            Self::Cancelled(reasons) => reasons.get(index),
            _ => None,
        }
    }

    /// Whether an item's condition failed or another transaction touched
    /// it: the transaction lost a race and may be prepared again.
    pub fn lost_a_race(&self) -> bool {
        match self {
            Self::Cancelled(reasons) => reasons
                .iter()
                .any(|r| matches!(r, Cancelled::ConditionFailed(_) | Cancelled::Conflict)),
            Self::InProgress => true,
            Self::Failed(_) => false,
        }
    }
}

/// The error of a transaction cancelled for throttling or capacity: nothing
/// was applied, retry.
pub fn cancelled_error(reasons: &[Cancelled], what_did_not_happen: &str) -> ToolError {
    let codes: Vec<&str> = reasons
        .iter()
        .map(|reason| match reason {
            Cancelled::Fine => "None",
            Cancelled::ConditionFailed(_) => "ConditionalCheckFailed",
            Cancelled::Conflict => "TransactionConflict",
            Cancelled::Other(code) => code,
        })
        .collect();
    ToolError::dependency(format!("transaction cancelled: {codes:?}"), what_did_not_happen)
}
