//! How the domain's item types are stored: keys and item mappings.

use draftline_contract::ErpError;
use draftline_contract::identity::{BranchId, TenantId};
use draftline_contract::store::Value;
use draftline_erp::domain::*;
use draftline_erp::units::Uom;

use super::attrs::{self, Item as Attrs, nv, sv};
use crate::keys;

/// The `kind` of an item master record's copy in a branch's stock partition.
pub const ITEM_COPY_KIND: &str = "item_copy";

/// How a [`Item`] is stored: once in the tenant's item master, and once more
/// in the stock partition of every branch that stocks it, so that a stock
/// read finds the item and its stock in one `Query`.
pub trait ItemRecord: Sized {
    /// The DynamoDB key of item `code` in the item master.
    fn key(tenant: &TenantId, code: &str) -> Attrs;
    /// The item master record, then its copy in the stock partition of each
    /// branch of `stocked_in` (those that keep stock or a reorder policy of
    /// it). Items are written from here only, so a copy never differs from
    /// its master.
    fn to_items(&self, tenant: &TenantId, stocked_in: &[BranchId]) -> Vec<Attrs>;
    /// Reads an item master record or a copy of one.
    fn from_item(item: &Attrs) -> Result<Self, ErpError>;
}

/// The attributes the master record and its copies share.
fn fields(item: &Item) -> Attrs {
    Attrs::from([
        ("code".to_owned(), sv(&item.code)),
        ("name".to_owned(), sv(&item.name)),
        ("base_uom".to_owned(), sv(item.base_uom.code())),
        (
            "units".to_owned(),
            Value::L(
                item.units
                    .iter()
                    .map(|u| {
                        Value::M(
                            [
                                ("uom".to_owned(), sv(u.uom.code())),
                                ("factor".to_owned(), nv(u.factor)),
                            ]
                            .into(),
                        )
                    })
                    .collect(),
            ),
        ),
    ])
}

impl ItemRecord for Item {
    fn key(tenant: &TenantId, code: &str) -> Attrs {
        attrs::key(keys::items(tenant), keys::item_sk(code))
    }

    /// The master record and one copy per branch of `stocked_in`.
    fn to_items(&self, tenant: &TenantId, stocked_in: &[BranchId]) -> Vec<Attrs> {
        let mut master = fields(self);
        master.extend(Self::key(tenant, &self.code));
        master.insert("kind".into(), sv("item"));
        let copies = stocked_in.iter().map(|branch| {
            let mut copy = fields(self);
            copy.insert("pk".into(), sv(keys::stock(tenant, branch)));
            copy.insert("sk".into(), sv(keys::item_copy_sk(&self.code)));
            copy.insert("kind".into(), sv(ITEM_COPY_KIND));
            // Like every record of the stock partition, it names its item.
            copy.insert("item".into(), sv(&self.code));
            copy
        });
        std::iter::once(master).chain(copies).collect()
    }

    /// Reads an item.
    fn from_item(item: &Attrs) -> Result<Self, ErpError> {
        let what = "item";
        let base = attrs::s(item, what, "base_uom")?;
        let units = item
            .get("units")
            .and_then(|v| v.as_l())
            .ok_or_else(|| attrs::corrupt(what, "units"))?
            .iter()
            .map(|u| {
                let m = u.as_m().ok_or_else(|| attrs::corrupt(what, "units"))?;
                Ok(UnitConversion {
                    uom: Uom::from_code(&attrs::s(m, what, "uom")?).ok_or_else(|| attrs::corrupt(what, "uom"))?,
                    factor: attrs::int(m, what, "factor")?,
                })
            })
            .collect::<Result<Vec<_>, ErpError>>()?;
        Ok(Self {
            code: attrs::s(item, what, "code")?,
            name: attrs::s(item, what, "name")?,
            base_uom: Uom::from_code(&base).ok_or_else(|| attrs::corrupt(what, "base_uom"))?,
            units,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_item_round_trips_through_its_master_record_and_each_copy() {
        let item = draftline_erp::demo::items().remove(0);
        let tenant = TenantId::parse("demo").unwrap();
        let branches = [BranchId::parse("SBY-01").unwrap(), BranchId::parse("JKT-01").unwrap()];
        let records = item.to_items(&tenant, &branches);
        assert_eq!(records.len(), 3);
        assert_eq!(records[0], {
            let mut master = Item::key(&tenant, "BRG-0042");
            master.extend(fields(&item));
            master.insert("kind".into(), sv("item"));
            master
        });
        for (copy, branch) in records[1..].iter().zip(&branches) {
            assert_eq!(copy["pk"], sv(keys::stock(&tenant, branch)));
            assert_eq!(copy["sk"], sv("ITEM#BRG-0042#ITEM"));
            assert_eq!(copy["kind"], sv(ITEM_COPY_KIND));
            assert_eq!(copy["item"], sv("BRG-0042"));
        }
        for record in &records {
            assert_eq!(Item::from_item(record).unwrap(), item);
        }
    }

    #[test]
    fn a_copy_sorts_among_its_items_stock_records_and_before_the_next_item() {
        let copy = keys::item_copy_sk("BRG-0042");
        assert!(copy.starts_with(&keys::stock_of_item("BRG-0042")));
        assert!(!copy.starts_with(&keys::stock_of_item("BRG-004")));
        assert!(copy < keys::policy_sk("BRG-0042"));
        assert!(copy < keys::stock_sk("BRG-0042", "SBY-WH1"));
        assert!(copy < keys::stock_after_item("BRG-0042"));
        assert!(keys::stock_after_item("BRG-0042") < keys::item_copy_sk("BRG-0043"));
    }
}
