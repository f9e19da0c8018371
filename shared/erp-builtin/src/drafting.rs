//! What a draft reads, as keys: the built-in backend hands them to the
//! server's key lookup (one `BatchGetItem` with the key record, the
//! tenant's policy and the run's counter) and picks its own from what that
//! batch found. Read alone (a draft prepared again after a lost race, or
//! outside the server), the same keys are one `BatchGetItem` of its own.
//!
//! A purchase order reads the vendor's profile, the items, the vendor's
//! prices of each item (one item holds every unit: the line's own unit, or
//! the base unit times the conversion, prices it; which unit is the base is
//! the item's to say, read in the same batch), and the near-duplicate marker of the
//! vendor and item set. A quote reads the customer and its credit standing,
//! the items and their sales prices (one item each, every list), the
//! tenant's tax types and its marker.

use std::borrow::Cow;
use std::collections::HashMap;

use draftline_contract::ErpError;
use draftline_contract::store::{Found, TableKey};
use draftline_erp::domain::{
    CreditStanding, Customer, DocumentKind, Item, OpenDrafts, PriceEntry, TaxCode, TaxType, Vendor,
};
use draftline_erp::port::{CounterpartyReads, DraftReads, Scope, Wanted, Window};

use crate::model::attrs::{self, Item as Attrs, table_key};
use crate::model::near_duplicate::Marker;
use crate::model::price_list;
use crate::model::{CreditStandingRecord, CustomerRecord, ItemRecord, PriceEntryRecord, TaxTypeRecord, VendorRecord};
use crate::store::ErpStore;

/// The most distinct items whose prices ride in the batch (one key each,
/// every unit in it). A draft of more items reads the vendor's whole price list
/// with one `Query` instead.
pub const PRICED_IN_BATCH: usize = 8;

/// The marker of drafts of `kind` for `counterparty` and the item set
/// `items` in the caller's branch.
pub fn marker<'a>(scope: &Scope<'a>, kind: DocumentKind, counterparty: &'a str, items: &'a [String]) -> Marker<'a> {
    Marker {
        tenant: scope.tenant,
        branch: scope.branch,
        kind: kind.prefix(),
        counterparty,
        items,
    }
}

/// The keys a draft reads, by what each is for, in the batch's order.
struct Keys {
    /// The vendor's profile, or the customer's.
    counterparty: TableKey,
    /// A customer's credit standing (quotes).
    standing: Option<TableKey>,
    /// The near-duplicate marker of the counterparty and item set (read
    /// whether or not the check is on: see [`Wanted::marked`]).
    marker: TableKey,
    /// Each wanted item's, in `wanted.items` order.
    items: Vec<TableKey>,
    /// Each wanted item's prices, in the same order: the vendor's (none
    /// past [`PRICED_IN_BATCH`] items: the vendor's list is queried), or
    /// its sales prices on every list (the customer's list is known only
    /// once it is read).
    prices: Vec<TableKey>,
    /// Every tax type, in code order (quotes: there are four codes, and
    /// the refusal of one not in use names those that are).
    taxes: Vec<TableKey>,
}

impl Keys {
    /// The keys a draft of `kind` for `wanted` reads.
    fn of(scope: &Scope<'_>, kind: DocumentKind, wanted: &Wanted<'_>) -> Self {
        let (tenant, branch, code) = (scope.tenant, scope.branch, wanted.counterparty);
        let key = |item: Attrs| table_key(&item);
        let items = wanted.items.iter().map(|item| key(Item::key(tenant, item))).collect();
        let marker = marker(scope, kind, wanted.counterparty, wanted.items).table_key();
        match kind {
            DocumentKind::PurchaseOrder => Self {
                counterparty: key(Vendor::key(tenant, code)),
                standing: None,
                marker,
                items,
                prices: match wanted.items.len() <= PRICED_IN_BATCH {
                    true => (wanted.items.iter())
                        .map(|item| key(PriceEntry::key(tenant, code, item)))
                        .collect(),
                    false => Vec::new(),
                },
                taxes: Vec::new(),
            },
            DocumentKind::Quote => {
                // In code order, as the tax types' partition lists them.
                let mut codes = TaxCode::ALL;
                codes.sort_by_key(|code| code.code());
                Self {
                    counterparty: key(Customer::key(tenant, branch, code)),
                    standing: Some(key(CreditStanding::key(tenant, branch, code))),
                    marker,
                    items,
                    prices: (wanted.items.iter())
                        .map(|item| key(price_list::key(tenant, item)))
                        .collect(),
                    taxes: codes.iter().map(|code| key(TaxType::key(tenant, *code))).collect(),
                }
            }
        }
    }

    /// Every key, in the batch's order.
    fn all(&self) -> impl Iterator<Item = &TableKey> {
        let head = std::iter::once(&self.counterparty).chain(&self.standing);
        head.chain([&self.marker])
            .chain(&self.items)
            .chain(&self.prices)
            .chain(&self.taxes)
    }
}

/// The reads of a draft of `kind`, for the key lookup's batch.
pub fn reads(scope: &Scope<'_>, kind: DocumentKind, wanted: &Wanted<'_>) -> Vec<TableKey> {
    Keys::of(scope, kind, wanted).all().cloned().collect()
}

/// What a draft read: the items of its [`Keys`] that exist, by key, as
/// the key lookup's batch found them (the model reads the same neutral
/// attributes) or as one batch of their own finds them.
struct Read<'f>(Cow<'f, Found>);

impl<'f> Read<'f> {
    /// What the batch `found` for `keys`, or (without one) what one batch
    /// of their own finds.
    async fn of(store: &ErpStore<'_>, keys: &Keys, found: Option<&'f Found>) -> Result<Self, ErpError> {
        Ok(Self(match found {
            Some(found) => Cow::Borrowed(found),
            None => {
                let keys = keys
                    .all()
                    .map(|key| attrs::key(key.pk.clone(), key.sk.clone()))
                    .collect();
                Cow::Owned(Found::of(store.batch_get(keys).await?))
            }
        }))
    }

    /// The item at `key`, if it exists.
    fn get(&self, key: &TableKey) -> Option<&Attrs> {
        self.0.get(key)
    }

    /// The item at `key` as `read` reads it, if it exists.
    fn parse<T>(&self, key: &TableKey, read: fn(&Attrs) -> Result<T, ErpError>) -> Result<Option<T>, ErpError> {
        self.get(key).map(read).transpose()
    }
}

/// What a draft of `kind` for `wanted` reads: from `found` when the key
/// lookup's batch read [`reads`], else in one batch of its own.
pub async fn read(
    store: &ErpStore<'_>,
    scope: &Scope<'_>,
    kind: DocumentKind,
    wanted: &Wanted<'_>,
    open: Option<Window>,
    found: Option<&Found>,
) -> Result<DraftReads, ErpError> {
    let keys = Keys::of(scope, kind, wanted);
    let read = Read::of(store, &keys, found).await?;
    let mut items = HashMap::with_capacity(wanted.items.len());
    for (code, key) in wanted.items.iter().zip(&keys.items) {
        if let Some(item) = read.parse(key, Item::from_item)? {
            items.insert(code.clone(), item);
        }
    }
    // With no window but the check on (a person decided), the marker's
    // state alone, for the new draft's mark; with the check off, nothing
    // (unread: no mark).
    let open = match wanted.marked {
        true => Marker::read(read.get(&keys.marker), open.as_ref()),
        false => OpenDrafts::default(),
    };
    let counterparty = match kind {
        DocumentKind::PurchaseOrder => vendor(store, wanted, &keys, &read).await?,
        DocumentKind::Quote => customer(&keys, &read)?,
    };
    Ok(DraftReads {
        counterparty,
        items,
        open,
    })
}

/// A purchase order's vendor and its prices of the wanted items (the
/// vendor's whole price list in a `Query` past [`PRICED_IN_BATCH`] items).
async fn vendor(
    store: &ErpStore<'_>,
    wanted: &Wanted<'_>,
    keys: &Keys,
    read: &Read<'_>,
) -> Result<CounterpartyReads, ErpError> {
    let Some(vendor) = read.parse(&keys.counterparty, Vendor::from_item)? else {
        return Ok(CounterpartyReads::Vendor(None));
    };
    let prices = if wanted.items.len() <= PRICED_IN_BATCH {
        let mut prices = Vec::new();
        for key in &keys.prices {
            prices.extend(read.parse(key, PriceEntry::from_item)?.unwrap_or_default());
        }
        prices
    } else {
        store
            .vendor_with_prices(wanted.counterparty)
            .await?
            .map(|(_, prices)| prices)
            .unwrap_or_default()
    };
    Ok(CounterpartyReads::Vendor(Some((vendor, prices))))
}

/// A quote's customer, the tax types, the customer's standing and its
/// prices of the wanted items.
fn customer(keys: &Keys, read: &Read<'_>) -> Result<CounterpartyReads, ErpError> {
    let customer = read.parse(&keys.counterparty, Customer::from_item)?;
    let mut taxes = Vec::with_capacity(keys.taxes.len());
    for key in &keys.taxes {
        taxes.extend(read.parse(key, TaxType::from_item)?);
    }
    // A table seeded before standings were kept has none: the quote then
    // reads the customer's orders and invoices.
    let standing = match &keys.standing {
        Some(key) => read.parse(key, CreditStanding::from_item)?,
        None => None,
    };
    // The prices on the customer's list, in every unit (an item on no list
    // has no sales prices item).
    let prices = match &customer {
        Some(customer) => {
            let mut prices = Vec::new();
            for stored in keys.prices.iter().filter_map(|key| read.get(key)) {
                prices.extend(price_list::on_list(stored, &customer.price_list)?);
            }
            Some(prices)
        }
        None => None,
    };
    Ok(CounterpartyReads::Customer {
        customer,
        taxes,
        standing,
        prices,
    })
}
