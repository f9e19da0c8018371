//! Tryton's JSON values, both ways: a [`Record`] read from a REST answer
//! (fields by name, nested Many2One objects and One2Many lists, Decimal,
//! date and datetime objects), and the encodings a domain or a create body
//! needs ([`date`], [`decimal`], [`timedelta_days`]).
//!
//! A value of the wrong shape is our bug or a misconfigured database, never
//! the caller's: every accessor fails with [`ErpError::internal`] naming the
//! model, the record and the field.

use std::str::FromStr;

use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, NaiveTime, SecondsFormat, Utc};
use draftline_contract::ErpError;
use rust_decimal::Decimal;
use serde_json::{Map, Value, json};

/// The largest whole quantity a record may carry (as the built-in backend).
pub const MAX_QUANTITY: i64 = 1_000_000_000_000;

/// One record of a REST answer.
#[derive(Debug, Clone)]
pub struct Record {
    model: &'static str,
    fields: Map<String, Value>,
}

impl Record {
    /// The record `value` of `model` (an answer's array element or nested object).
    pub fn new(model: &'static str, value: Value) -> Result<Self, ErpError> {
        match value {
            Value::Object(fields) => Ok(Self { model, fields }),
            other => Err(ErpError::internal(format!(
                "Tryton answered a {} that is not an object: {}",
                model,
                short(&other)
            ))),
        }
    }

    fn bad(&self, field: &str, want: &str) -> ErpError {
        let id = self.fields.get("id").map_or_else(|| "?".to_owned(), short);
        let got = self.fields.get(field).map_or_else(|| "nothing".to_owned(), short);
        ErpError::internal(format!(
            "Tryton's {} {id} has no {want} in field '{field}' (got {got})",
            self.model
        ))
    }

    /// The raw value of `field` (`None` when absent or null).
    pub fn get(&self, field: &str) -> Option<&Value> {
        self.fields.get(field).filter(|v| !v.is_null())
    }

    /// The record id.
    pub fn id(&self) -> Result<i64, ErpError> {
        self.get("id")
            .and_then(Value::as_i64)
            .ok_or_else(|| self.bad("id", "id"))
    }

    /// A text field that must be set.
    pub fn text(&self, field: &str) -> Result<String, ErpError> {
        self.opt_text(field)?.ok_or_else(|| self.bad(field, "text"))
    }

    /// A text field; null (and Tryton's `false` for an empty Char) is `None`.
    pub fn opt_text(&self, field: &str) -> Result<Option<String>, ErpError> {
        match self.get(field) {
            None | Some(Value::Bool(false)) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(self.bad(field, "text")),
        }
    }

    /// A Decimal field that must be set.
    pub fn decimal(&self, field: &str) -> Result<Decimal, ErpError> {
        self.opt_decimal(field)?.ok_or_else(|| self.bad(field, "decimal"))
    }

    /// A Decimal field (`{"__class__": "Decimal", "decimal": "…"}` or a plain number).
    pub fn opt_decimal(&self, field: &str) -> Result<Option<Decimal>, ErpError> {
        match self.get(field) {
            None => Ok(None),
            Some(value) => parse_decimal(value).map(Some).ok_or_else(|| self.bad(field, "decimal")),
        }
    }

    /// A Float field holding a whole number within ±[`MAX_QUANTITY`]
    /// (quantities, reorder points): anything else cannot be told in the
    /// port's whole units and is refused.
    pub fn whole(&self, field: &str) -> Result<i64, ErpError> {
        self.get(field)
            .and_then(Value::as_f64)
            .and_then(whole_number)
            .ok_or_else(|| self.bad(field, "whole number"))
    }

    /// A date field that must be set.
    pub fn date(&self, field: &str) -> Result<NaiveDate, ErpError> {
        self.opt_date(field)?.ok_or_else(|| self.bad(field, "date"))
    }

    /// A date field (`{"__class__": "date", "year": …}`).
    pub fn opt_date(&self, field: &str) -> Result<Option<NaiveDate>, ErpError> {
        match self.get(field) {
            None => Ok(None),
            Some(value) => parse_date(value).map(Some).ok_or_else(|| self.bad(field, "date")),
        }
    }

    /// A datetime field (UTC) that must be set.
    pub fn datetime(&self, field: &str) -> Result<DateTime<Utc>, ErpError> {
        self.get(field)
            .and_then(parse_datetime)
            .ok_or_else(|| self.bad(field, "datetime"))
    }

    /// A datetime field (UTC), or `None` when empty.
    pub fn opt_datetime(&self, field: &str) -> Result<Option<DateTime<Utc>>, ErpError> {
        match self.get(field) {
            None => Ok(None),
            Some(value) => parse_datetime(value)
                .map(Some)
                .ok_or_else(|| self.bad(field, "datetime")),
        }
    }

    /// A Many2One read with dotted fields: the nested record, or `None` when empty.
    pub fn one(&self, field: &str, model: &'static str) -> Result<Option<Record>, ErpError> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::Object(fields)) => Ok(Some(Record {
                model,
                fields: fields.clone(),
            })),
            Some(_) => Err(self.bad(field, "nested record")),
        }
    }

    /// A Many2One read without dotted fields: the id, or `None` when empty.
    pub fn ref_id(&self, field: &str) -> Result<Option<i64>, ErpError> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::Number(n)) => n.as_i64().map(Some).ok_or_else(|| self.bad(field, "id")),
            Some(Value::Object(fields)) => fields
                .get("id")
                .and_then(Value::as_i64)
                .map(Some)
                .ok_or_else(|| self.bad(field, "id")),
            Some(_) => Err(self.bad(field, "id")),
        }
    }

    /// A One2Many (or Many2Many) read with dotted fields: its records.
    pub fn many(&self, field: &str, model: &'static str) -> Result<Vec<Record>, ErpError> {
        match self.get(field) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items.iter().map(|v| Record::new(model, v.clone())).collect(),
            Some(_) => Err(self.bad(field, "list of records")),
        }
    }

    /// A text field of a nested Many2One (`party.code`), `None` when either is empty.
    pub fn nested_text(&self, field: &str, sub: &str) -> Result<Option<String>, ErpError> {
        match self.one(field, "nested")? {
            Some(nested) => nested.opt_text(sub),
            None => Ok(None),
        }
    }
}

fn short(value: &Value) -> String {
    value.to_string().chars().take(80).collect()
}

/// `value` as a whole number within ±[`MAX_QUANTITY`].
pub fn whole_number(value: f64) -> Option<i64> {
    // Within ±10^12 every whole f64 is exact and the cast cannot saturate.
    let bound = MAX_QUANTITY as f64;
    if value.is_finite() && value.fract() == 0.0 && (-bound..=bound).contains(&value) {
        Some(value as i64)
    } else {
        None
    }
}

/// A Tryton Decimal (object or plain number).
pub fn parse_decimal(value: &Value) -> Option<Decimal> {
    match value {
        Value::Object(map) if map.get("__class__").and_then(Value::as_str) == Some("Decimal") => {
            map.get("decimal").and_then(Value::as_str).and_then(decimal_text)
        }
        Value::Number(n) => decimal_text(&n.to_string()),
        Value::String(s) => decimal_text(s),
        _ => None,
    }
}

/// A decimal literal (`"288000"`, `"0.11"`, `"1e3"` is refused).
pub fn decimal_text(text: &str) -> Option<Decimal> {
    let text = text.trim();
    let plain = !text.is_empty()
        && text
            .bytes()
            .enumerate()
            .all(|(i, b)| b.is_ascii_digit() || b == b'.' || (i == 0 && (b == b'-' || b == b'+')));
    if plain { Decimal::from_str(text).ok() } else { None }
}

fn part(map: &Map<String, Value>, name: &str) -> Option<u32> {
    map.get(name)
        .and_then(Value::as_u64)
        .and_then(|v| u32::try_from(v).ok())
}

/// A Tryton date object.
pub fn parse_date(value: &Value) -> Option<NaiveDate> {
    let Value::Object(map) = value else { return None };
    if map.get("__class__").and_then(Value::as_str) != Some("date") {
        return None;
    }
    let year = map
        .get("year")
        .and_then(Value::as_i64)
        .and_then(|y| i32::try_from(y).ok())?;
    NaiveDate::from_ymd_opt(year, part(map, "month")?, part(map, "day")?)
}

/// A Tryton datetime object (naive, UTC).
pub fn parse_datetime(value: &Value) -> Option<DateTime<Utc>> {
    let Value::Object(map) = value else { return None };
    if map.get("__class__").and_then(Value::as_str) != Some("datetime") {
        return None;
    }
    let year = map
        .get("year")
        .and_then(Value::as_i64)
        .and_then(|y| i32::try_from(y).ok())?;
    let date = NaiveDate::from_ymd_opt(year, part(map, "month")?, part(map, "day")?)?;
    let time = NaiveTime::from_hms_micro_opt(
        part(map, "hour")?,
        part(map, "minute")?,
        part(map, "second")?,
        part(map, "microsecond").unwrap_or(0),
    )?;
    Some(NaiveDateTime::new(date, time).and_utc())
}

/// RFC 3339, UTC, milliseconds: how draftline writes `created_at`.
pub fn rfc3339(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// A date as Tryton reads it.
pub fn date(day: NaiveDate) -> Value {
    json!({"__class__": "date", "year": day.year(), "month": day.month(), "day": day.day()})
}

/// The start of `day` (UTC) as a Tryton datetime.
pub fn midnight(day: NaiveDate) -> Value {
    json!({"__class__": "datetime", "year": day.year(), "month": day.month(), "day": day.day(),
           "hour": 0, "minute": 0, "second": 0, "microsecond": 0})
}

/// An instant as a Tryton datetime (UTC, microseconds).
pub fn datetime(at: DateTime<Utc>) -> Value {
    use chrono::Timelike;
    json!({"__class__": "datetime", "year": at.year(), "month": at.month(), "day": at.day(),
           "hour": at.hour(), "minute": at.minute(), "second": at.second(),
           "microsecond": at.nanosecond().checked_div(1000).unwrap_or(0).min(999_999)})
}

/// An exact decimal as Tryton reads it.
pub fn decimal(amount: Decimal) -> Value {
    json!({"__class__": "Decimal", "decimal": amount.to_string()})
}

/// A timedelta of `days` days, or `None` when it does not fit.
pub fn timedelta_days(days: i64) -> Option<Value> {
    Some(json!({"__class__": "timedelta", "seconds": days.checked_mul(86_400)?}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tryton_values_decode_exactly() {
        let record = Record::new(
            "purchase.purchase",
            json!({
                "id": 7,
                "total": {"__class__": "Decimal", "decimal": "2880000.00"},
                "rate": 0.11,
                "qty": 10.0,
                "half": 2.5,
                "day": {"__class__": "date", "year": 2026, "month": 12, "day": 15},
                "at": {"__class__": "datetime", "year": 2026, "month": 12, "day": 1, "hour": 8,
                       "minute": 15, "second": 47, "microsecond": 23872},
                "party": {"id": 2, "code": "V-00231"},
                "empty": false,
                "lines": [{"id": 1}, {"id": 2}],
            }),
        )
        .unwrap();
        assert_eq!(record.id().unwrap(), 7);
        assert_eq!(record.decimal("total").unwrap().to_string(), "2880000.00");
        assert_eq!(record.decimal("rate").unwrap().to_string(), "0.11");
        assert_eq!(record.whole("qty").unwrap(), 10);
        assert!(record.whole("half").is_err());
        assert_eq!(record.date("day").unwrap().to_string(), "2026-12-15");
        assert_eq!(rfc3339(record.datetime("at").unwrap()), "2026-12-01T08:15:47.023Z");
        assert_eq!(record.nested_text("party", "code").unwrap().as_deref(), Some("V-00231"));
        assert_eq!(record.ref_id("party").unwrap(), Some(2));
        assert_eq!(record.opt_text("empty").unwrap(), None);
        assert_eq!(record.many("lines", "purchase.line").unwrap().len(), 2);
        assert!(record.text("total").is_err());
    }

    #[test]
    fn only_plain_decimal_literals_are_prices() {
        assert_eq!(decimal_text("340000"), Some(Decimal::from(340_000)));
        assert_eq!(decimal_text(" 12.5 "), Decimal::from_str("12.5").ok());
        for formula in ["unit_price * 0.9", "1e3", "", "cost_price"] {
            assert_eq!(decimal_text(formula), None, "{formula}");
        }
    }

    #[test]
    fn whole_numbers_are_bounded_and_exact() {
        assert_eq!(whole_number(-3.0), Some(-3));
        assert_eq!(whole_number(1e12), Some(1_000_000_000_000));
        assert_eq!(whole_number(1e13), None);
        assert_eq!(whole_number(f64::NAN), None);
        assert_eq!(whole_number(0.5), None);
    }

    #[test]
    fn encodings_are_the_ones_rest_md_shows() {
        let day = NaiveDate::from_ymd_opt(2026, 12, 15).unwrap();
        assert_eq!(
            date(day),
            json!({"__class__": "date", "year": 2026, "month": 12, "day": 15})
        );
        assert_eq!(
            timedelta_days(32).unwrap(),
            json!({"__class__": "timedelta", "seconds": 2_764_800})
        );
        assert_eq!(timedelta_days(i64::MAX), None);
        assert_eq!(
            decimal(Decimal::from(288_000)),
            json!({"__class__": "Decimal", "decimal": "288000"})
        );
    }
}
