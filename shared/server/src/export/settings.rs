//! The export's settings, from OpenTelemetry's standard variables
//! (read through the same [`Source`] as every other setting).

use std::time::Duration;

use draftline_contract::request::percent_decode;
use draftline_contract::settings::{ConfigError, Source};

/// The longest a call waits for its spans to be exported, whatever
/// `OTEL_EXPORTER_OTLP_TIMEOUT` says: a collector that is down or slow
/// delays a call by at most this much.
pub const MAX_FLUSH: Duration = Duration::from_millis(300);

/// The service name when neither `OTEL_SERVICE_NAME` nor
/// `OTEL_RESOURCE_ATTRIBUTES` names one (and the platform does not either).
pub const DEFAULT_SERVICE_NAME: &str = "draftline";

/// Which calls are exported (`OTEL_TRACES_SAMPLER`, `OTEL_TRACES_SAMPLER_ARG`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Sampling {
    /// `always_on`.
    AlwaysOn,
    /// `always_off`.
    AlwaysOff,
    /// `traceidratio`: this fraction of traces, decided by trace id.
    TraceIdRatio(f64),
    /// `parentbased_always_on` (the default): as the caller decided, else on.
    ParentBasedAlwaysOn,
    /// `parentbased_always_off`.
    ParentBasedAlwaysOff,
    /// `parentbased_traceidratio`: as the caller decided, else by ratio.
    ParentBasedTraceIdRatio(f64),
}

/// Where and how each call's spans are exported over OTLP/HTTP protobuf.
/// Present only when an endpoint is set: without one nothing is exported.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportSettings {
    /// The traces URL: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it is, else
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` followed by `/v1/traces`.
    pub traces_endpoint: String,
    /// `service.name`: `OTEL_SERVICE_NAME`, else `OTEL_RESOURCE_ATTRIBUTES`'s,
    /// else the Lambda function's name, else [`DEFAULT_SERVICE_NAME`].
    pub service_name: String,
    /// The other resource attributes of `OTEL_RESOURCE_ATTRIBUTES`.
    pub resource_attributes: Vec<(String, String)>,
    /// Which calls are exported.
    pub sampling: Sampling,
    /// How long a call waits for its export: [`MAX_FLUSH`], or
    /// `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT` / `OTEL_EXPORTER_OTLP_TIMEOUT`
    /// (milliseconds) when smaller.
    pub flush_timeout: Duration,
}

impl ExportSettings {
    /// The export's settings, or `None` when no endpoint is set.
    pub fn from_source(source: &Source) -> Result<Option<Self>, ConfigError> {
        let traces_endpoint = match source.url("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")? {
            Some(endpoint) => endpoint,
            None => match source.url("OTEL_EXPORTER_OTLP_ENDPOINT")? {
                Some(base) => format!("{}/v1/traces", base.trim_end_matches('/')),
                None => return Ok(None),
            },
        };
        let mut resource_attributes = match source.get("OTEL_RESOURCE_ATTRIBUTES") {
            Some(list) => resource_attributes(&list).ok_or_else(|| ConfigError::Invalid {
                name: "OTEL_RESOURCE_ATTRIBUTES",
                reason: "expected a comma-separated list of key=value (values percent-encoded)".into(),
            })?,
            None => Vec::new(),
        };
        let listed_name = resource_attributes
            .iter()
            .position(|(key, _)| key == "service.name")
            .map(|at| resource_attributes.remove(at).1);
        let service_name = source
            .get("OTEL_SERVICE_NAME")
            .filter(|name| !name.trim().is_empty())
            .or(listed_name)
            .or_else(|| source.get("AWS_LAMBDA_FUNCTION_NAME"))
            .unwrap_or_else(|| DEFAULT_SERVICE_NAME.to_owned());
        let timeout = match source.get("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT") {
            Some(_) => source.bounded("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", 1..=600_000_u64, "milliseconds")?,
            None => source.bounded("OTEL_EXPORTER_OTLP_TIMEOUT", 1..=600_000_u64, "milliseconds")?,
        };
        let flush_timeout = timeout.map_or(MAX_FLUSH, |ms| MAX_FLUSH.min(Duration::from_millis(ms)));
        Ok(Some(Self {
            traces_endpoint,
            service_name,
            resource_attributes,
            sampling: sampling(source)?,
            flush_timeout,
        }))
    }
}

fn sampling(source: &Source) -> Result<Sampling, ConfigError> {
    let ratio = || {
        source
            .bounded("OTEL_TRACES_SAMPLER_ARG", 0.0..=1.0_f64, "a fraction")
            .map(|ratio| ratio.unwrap_or(1.0))
    };
    let name = source.get("OTEL_TRACES_SAMPLER");
    Ok(match name.as_deref().map(str::trim) {
        None | Some("") | Some("parentbased_always_on") => Sampling::ParentBasedAlwaysOn,
        Some("always_on") => Sampling::AlwaysOn,
        Some("always_off") => Sampling::AlwaysOff,
        Some("traceidratio") => Sampling::TraceIdRatio(ratio()?),
        Some("parentbased_always_off") => Sampling::ParentBasedAlwaysOff,
        Some("parentbased_traceidratio") => Sampling::ParentBasedTraceIdRatio(ratio()?),
        Some(_) => {
            return Err(ConfigError::Invalid {
                name: "OTEL_TRACES_SAMPLER",
                reason: "expected always_on, always_off, traceidratio, parentbased_always_on, \
                           parentbased_always_off or parentbased_traceidratio"
                    .into(),
            });
        }
    })
}

/// `key1=value1,key2=value2`, values percent-decoded (the W3C Baggage
/// format the OpenTelemetry specification names); `None` if malformed.
fn resource_attributes(list: &str) -> Option<Vec<(String, String)>> {
    list.split(',')
        .map(str::trim)
        .filter(|member| !member.is_empty())
        .map(|member| {
            let (key, value) = member.split_once('=')?;
            let key = key.trim();
            if key.is_empty() {
                return None;
            }
            Some((key.to_owned(), percent_decode(value.trim())?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(pairs: &[(&str, &str)]) -> Result<Option<ExportSettings>, ConfigError> {
        ExportSettings::from_source(&Source::map(pairs.iter().copied()))
    }

    #[test]
    fn nothing_is_exported_without_an_endpoint() {
        assert_eq!(parse(&[("OTEL_SERVICE_NAME", "x")]).unwrap(), None);
    }

    #[test]
    fn the_standard_variables_configure_the_export() {
        let settings = parse(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/"),
            (
                "OTEL_RESOURCE_ATTRIBUTES",
                "service.name=erp-tools, deployment.environment=prod%20eu",
            ),
            ("OTEL_TRACES_SAMPLER", "parentbased_traceidratio"),
            ("OTEL_TRACES_SAMPLER_ARG", "0.25"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "10000"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(settings.traces_endpoint, "http://collector:4318/v1/traces");
        assert_eq!(settings.service_name, "erp-tools");
        assert_eq!(
            settings.resource_attributes,
            [("deployment.environment".to_owned(), "prod eu".to_owned())]
        );
        assert_eq!(settings.sampling, Sampling::ParentBasedTraceIdRatio(0.25));
        // A longer timeout than the flush bound does not lengthen it; a shorter one shortens it.
        assert_eq!(settings.flush_timeout, MAX_FLUSH);
        let settings = parse(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"),
            (
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "https://api.honeycomb.io/v1/traces",
            ),
            ("OTEL_SERVICE_NAME", "tools"),
            ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "50"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(settings.traces_endpoint, "https://api.honeycomb.io/v1/traces");
        assert_eq!(settings.service_name, "tools");
        assert_eq!(settings.sampling, Sampling::ParentBasedAlwaysOn);
        assert_eq!(settings.flush_timeout, Duration::from_millis(50));
    }

    #[test]
    fn a_bad_setting_is_named() {
        let endpoint = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318");
        for (bad, name) in [
            (("OTEL_TRACES_SAMPLER", "sometimes"), "OTEL_TRACES_SAMPLER"),
            (("OTEL_RESOURCE_ATTRIBUTES", "novalue"), "OTEL_RESOURCE_ATTRIBUTES"),
            (("OTEL_EXPORTER_OTLP_TIMEOUT", "soon"), "OTEL_EXPORTER_OTLP_TIMEOUT"),
        ] {
            let err = parse(&[endpoint, bad]).unwrap_err();
            assert!(err.to_string().contains(name), "{err}");
        }
        let err = parse(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318")]).unwrap_err();
        assert!(err.to_string().contains("OTEL_EXPORTER_OTLP_ENDPOINT"), "{err}");
        let ratio = [
            endpoint,
            ("OTEL_TRACES_SAMPLER", "traceidratio"),
            ("OTEL_TRACES_SAMPLER_ARG", "2"),
        ];
        assert!(parse(&ratio).is_err());
    }
}
