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

use crate::model::attrs::{Item as Attrs, same_key};
use crate::model::near_duplicate::Marker;
use crate::model::price_list;
use crate::model::{CreditStandingRecord, CustomerRecord, ItemRecord, PriceEntryRecord, TaxTypeRecord, VendorRecord};
use crate::store::ErpStore;

/// The most distinct items whose prices ride in the batch (one key each,
/// every unit in it). A draft of more items reads the vendor's whole price list
/// with one `Query` instead.
pub const PRICED_IN_BATCH: usize = 8;

/// The marker of `wanted` in the caller's branch, for drafts of `kind`.
pub fn marker<'a>(scope: &Scope<'a>, kind: &'a str, wanted: &Wanted<'a>) -> Marker<'a> {
    Marker {
        tenant: scope.tenant,
        branch: scope.branch,
        kind,
        counterparty: wanted.counterparty,
        items: wanted.items,
    }
}

/// The keys a purchase-order draft of `wanted` reads (the marker's
/// whether or not `wanted.marked`: see [`Wanted::marked`]).
fn po_keys(scope: &Scope<'_>, wanted: &Wanted<'_>) -> Vec<Attrs> {
    let tenant = scope.tenant;
    let mut keys = vec![
        Vendor::key(tenant, wanted.counterparty),
        marker(scope, DocumentKind::PurchaseOrder.prefix(), wanted).key(),
    ];
    keys.extend(wanted.items.iter().map(|code| Item::key(tenant, code)));
    if wanted.items.len() <= PRICED_IN_BATCH {
        keys.extend(
            wanted
                .items
                .iter()
                .map(|code| PriceEntry::key(tenant, wanted.counterparty, code)),
        );
    }
    keys
}

/// The keys of `items`, store-neutral, for the key lookup's batch.
fn neutral_keys(items: &[Attrs]) -> Vec<TableKey> {
    items.iter().filter_map(TableKey::of).collect()
}

/// The keys a quote draft of `wanted` reads: the customer and its credit
/// standing, the marker, the items and their sales prices (on every list:
/// the customer's is known only once it is read), and every tax type
/// (there are four codes; the refusal of one not in use names those that
/// are).
fn quote_keys(scope: &Scope<'_>, wanted: &Wanted<'_>) -> Vec<Attrs> {
    let tenant = scope.tenant;
    let mut keys = vec![
        Customer::key(tenant, scope.branch, wanted.counterparty),
        CreditStanding::key(tenant, scope.branch, wanted.counterparty),
        marker(scope, DocumentKind::Quote.prefix(), wanted).key(),
    ];
    keys.extend(wanted.items.iter().map(|code| Item::key(tenant, code)));
    keys.extend(wanted.items.iter().map(|code| price_list::key(tenant, code)));
    keys.extend(TaxCode::ALL.iter().map(|code| TaxType::key(tenant, *code)));
    keys
}

/// The keys a draft of `kind` for `wanted` reads.
fn keys(scope: &Scope<'_>, kind: DocumentKind, wanted: &Wanted<'_>) -> Vec<Attrs> {
    match kind {
        DocumentKind::PurchaseOrder => po_keys(scope, wanted),
        DocumentKind::Quote => quote_keys(scope, wanted),
    }
}

/// The reads of a draft of `kind`, for the key lookup's batch.
pub fn reads(scope: &Scope<'_>, kind: DocumentKind, wanted: &Wanted<'_>) -> Vec<TableKey> {
    neutral_keys(&keys(scope, kind, wanted))
}

/// What the batch found for `keys` (borrowed: the model reads the same
/// neutral attributes), or (without one) what one batch of their own finds.
async fn found_or_read<'f>(
    store: &ErpStore<'_>,
    keys: Vec<Attrs>,
    found: Option<&'f Found>,
) -> Result<Vec<Cow<'f, Attrs>>, ErpError> {
    match found {
        Some(found) => Ok(keys
            .iter()
            .filter_map(TableKey::of)
            .filter_map(|key| found.get(&key))
            .map(Cow::Borrowed)
            .collect()),
        None => Ok(store.batch_get(keys).await?.into_iter().map(Cow::Owned).collect()),
    }
}

/// The open drafts the marker lists within `open`, and what it was read
/// as: with no window but the check on (a person decided), its state alone,
/// for the new draft's mark; with the check off, nothing (unread: no mark).
fn open_drafts(
    read: &[Cow<'_, Attrs>],
    marker: &Marker<'_>,
    wanted: &Wanted<'_>,
    open: Option<Window>,
) -> Result<OpenDrafts, ErpError> {
    if !wanted.marked {
        return Ok(OpenDrafts::default());
    }
    let stored = at(read, &marker.key()).map(|i| &*read[i]);
    Ok(Marker::read(stored, open.as_ref()))
}

/// Whether `item` is at `key`.
fn at(items: &[Cow<'_, Attrs>], key: &Attrs) -> Option<usize> {
    items.iter().position(|item| same_key(item, key))
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
    let read = found_or_read(store, keys(scope, kind, wanted), found).await?;
    let mut items = HashMap::with_capacity(wanted.items.len());
    for code in wanted.items {
        if let Some(i) = at(&read, &Item::key(scope.tenant, code)) {
            items.insert(code.clone(), Item::from_item(&read[i])?);
        }
    }
    let open = open_drafts(&read, &marker(scope, kind.prefix(), wanted), wanted, open)?;
    let counterparty = match kind {
        DocumentKind::PurchaseOrder => vendor(store, scope, wanted, &read).await?,
        DocumentKind::Quote => customer(scope, wanted, &read)?,
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
    scope: &Scope<'_>,
    wanted: &Wanted<'_>,
    read: &[Cow<'_, Attrs>],
) -> Result<CounterpartyReads, ErpError> {
    let tenant = scope.tenant;
    let Some(i) = at(read, &Vendor::key(tenant, wanted.counterparty)) else {
        return Ok(CounterpartyReads::Vendor(None));
    };
    let vendor = Vendor::from_item(&read[i])?;
    let prices = if wanted.items.len() <= PRICED_IN_BATCH {
        let mut prices = Vec::new();
        for code in wanted.items {
            if let Some(i) = at(read, &PriceEntry::key(tenant, wanted.counterparty, code)) {
                prices.extend(PriceEntry::from_item(&read[i])?);
            }
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
fn customer(scope: &Scope<'_>, wanted: &Wanted<'_>, read: &[Cow<'_, Attrs>]) -> Result<CounterpartyReads, ErpError> {
    let tenant = scope.tenant;
    let customer = match at(read, &Customer::key(tenant, scope.branch, wanted.counterparty)) {
        Some(i) => Some(Customer::from_item(&read[i])?),
        None => None,
    };
    // In code order, as the tax types' partition lists them.
    let mut codes = TaxCode::ALL;
    codes.sort_by_key(|code| code.code());
    let mut taxes = Vec::with_capacity(codes.len());
    for code in codes {
        if let Some(i) = at(read, &TaxType::key(tenant, code)) {
            taxes.push(TaxType::from_item(&read[i])?);
        }
    }
    // A table seeded before standings were kept has none: the quote then
    // reads the customer's orders and invoices.
    let standing = match at(read, &CreditStanding::key(tenant, scope.branch, wanted.counterparty)) {
        Some(i) => Some(CreditStanding::from_item(&read[i])?),
        None => None,
    };
    // The prices on the customer's list, in every unit (an item on no list
    // has no sales prices item).
    let prices = match &customer {
        Some(customer) => {
            let mut prices = Vec::new();
            for code in wanted.items {
                if let Some(i) = at(read, &price_list::key(tenant, code)) {
                    prices.extend(price_list::on_list(&read[i], &customer.price_list)?);
                }
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
