//! A store-neutral write set: what an ERP backend's document writes and a
//! person's decision are when they share the draft's (or the decision's)
//! one transaction of draftline's table. They cross the ERP port as these
//! types; only `draftline-dynamo` turns them into DynamoDB requests, and
//! the in-memory ERP of the tests applies them to its books.

use std::collections::BTreeMap;

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

/// What the key lookup's one batch found for the keys a backend asked it
/// to read ([`crate::tool::DraftTool::reads`]): the items that exist, each
/// once, for the backend to pick its own from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found(pub Vec<Attributes>);

impl Found {
    /// The item at `key`, if it was found.
    pub fn get(&self, key: &TableKey) -> Option<&Attributes> {
        self.0.iter().find(|item| {
            item.get("pk").and_then(Value::as_s) == Some(key.pk.as_str())
                && item.get("sk").and_then(Value::as_s) == Some(key.sk.as_str())
        })
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
    /// The attribute is stored with this value.
    Equals(String, Value),
    /// The attribute is not stored as a value of this type.
    NotOfType(String, ValueType),
    /// Every one of them holds.
    All(Vec<Condition>),
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
}

impl Write {
    /// The key of the item it writes (`None`: a put of an item without one).
    pub fn key(&self) -> Option<TableKey> {
        match self {
            Self::PutNew(item) | Self::PutIf(item, _) => TableKey::of(item),
            Self::Update(update) => Some(update.key.clone()),
        }
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
