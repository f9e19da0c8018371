//! The export's settings, from OpenTelemetry's standard variables
//! (read through the same [`Source`] as every other setting).

use std::time::Duration;

use draftline_contract::request::percent_decode;
use draftline_contract::settings::{ConfigError, Source};

/// The longest a call waits for its spans and metrics to be exported, whatever
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

/// How metric points are reported
/// (`OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Temporality {
    /// `cumulative` (the specification's default): each point is the total
    /// since the instance started, under a `service.instance.id` of its own.
    Cumulative,
    /// `delta`: each export holds what changed since the last one.
    Delta,
    /// `lowmemory`: delta for counters and histograms, cumulative for the rest.
    LowMemory,
}

/// Where and how each call's spans and metrics are exported over
/// OTLP/HTTP protobuf. Present only when an endpoint is set for at least
/// one of them: without one nothing is exported.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportSettings {
    /// The traces URL: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it is, else
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` followed by `/v1/traces`; `None` when
    /// neither is set or `OTEL_TRACES_EXPORTER=none`.
    pub traces_endpoint: Option<String>,
    /// The metrics URL: `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` as it is, else
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` followed by `/v1/metrics`; `None` when
    /// neither is set or `OTEL_METRICS_EXPORTER=none`.
    pub metrics_endpoint: Option<String>,
    /// How metric points are reported.
    pub temporality: Temporality,
    /// `service.name`: `OTEL_SERVICE_NAME`, else `OTEL_RESOURCE_ATTRIBUTES`'s,
    /// else the Lambda function's name, else [`DEFAULT_SERVICE_NAME`].
    pub service_name: String,
    /// The other resource attributes of `OTEL_RESOURCE_ATTRIBUTES`.
    pub resource_attributes: Vec<(String, String)>,
    /// Which calls are exported.
    pub sampling: Sampling,
    /// How long a call waits for its export: [`MAX_FLUSH`], or the
    /// smallest of `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`,
    /// `OTEL_EXPORTER_OTLP_METRICS_TIMEOUT` and `OTEL_EXPORTER_OTLP_TIMEOUT`
    /// (milliseconds) that apply, when smaller.
    pub flush_timeout: Duration,
}

/// One signal's variables: its exporter switch, endpoint, path and timeout.
struct Signal {
    exporter: &'static str,
    endpoint: &'static str,
    path: &'static str,
    timeout: &'static str,
}

const TRACES: Signal = Signal {
    exporter: "OTEL_TRACES_EXPORTER",
    endpoint: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    path: "/v1/traces",
    timeout: "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
};

const METRICS: Signal = Signal {
    exporter: "OTEL_METRICS_EXPORTER",
    endpoint: "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
    path: "/v1/metrics",
    timeout: "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT",
};

impl Signal {
    /// The signal's URL, or `None` when it is off or has no endpoint.
    fn endpoint(&self, source: &Source) -> Result<Option<String>, ConfigError> {
        match source.get(self.exporter).as_deref().map(str::trim) {
            None | Some("") | Some("otlp") => {}
            Some("none") => return Ok(None),
            Some(_) => {
                return Err(ConfigError::Invalid {
                    name: self.exporter,
                    reason: "expected otlp or none (this build exports over OTLP only)".into(),
                });
            }
        }
        Ok(match source.url(self.endpoint)? {
            Some(endpoint) => Some(endpoint),
            None => source
                .url("OTEL_EXPORTER_OTLP_ENDPOINT")?
                .map(|base| format!("{}{}", base.trim_end_matches('/'), self.path)),
        })
    }

    /// The signal's own timeout (milliseconds), else the general one.
    fn timeout(&self, source: &Source) -> Result<Option<u64>, ConfigError> {
        match source.get(self.timeout) {
            Some(_) => source.bounded(self.timeout, 1..=600_000_u64, "milliseconds"),
            None => source.bounded("OTEL_EXPORTER_OTLP_TIMEOUT", 1..=600_000_u64, "milliseconds"),
        }
    }
}

impl ExportSettings {
    /// The export's settings, or `None` when no endpoint is set (or every
    /// signal that has one is switched off).
    pub fn from_source(source: &Source) -> Result<Option<Self>, ConfigError> {
        let traces_endpoint = TRACES.endpoint(source)?;
        let metrics_endpoint = METRICS.endpoint(source)?;
        if traces_endpoint.is_none() && metrics_endpoint.is_none() {
            return Ok(None);
        }
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
        let mut flush_timeout = MAX_FLUSH;
        for (signal, endpoint) in [(&TRACES, &traces_endpoint), (&METRICS, &metrics_endpoint)] {
            if endpoint.is_some()
                && let Some(ms) = signal.timeout(source)?
            {
                flush_timeout = flush_timeout.min(Duration::from_millis(ms));
            }
        }
        Ok(Some(Self {
            traces_endpoint,
            metrics_endpoint,
            temporality: temporality(source)?,
            service_name,
            resource_attributes,
            sampling: sampling(source)?,
            flush_timeout,
        }))
    }
}

fn temporality(source: &Source) -> Result<Temporality, ConfigError> {
    let name = source.get("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE");
    Ok(
        match name.as_deref().map(|n| n.trim().to_ascii_lowercase()).as_deref() {
            None | Some("") | Some("cumulative") => Temporality::Cumulative,
            Some("delta") => Temporality::Delta,
            Some("lowmemory") => Temporality::LowMemory,
            Some(_) => {
                return Err(ConfigError::Invalid {
                    name: "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE",
                    reason: "expected cumulative, delta or lowmemory".into(),
                });
            }
        },
    )
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
        assert_eq!(
            settings.traces_endpoint.as_deref(),
            Some("http://collector:4318/v1/traces")
        );
        assert_eq!(
            settings.metrics_endpoint.as_deref(),
            Some("http://collector:4318/v1/metrics")
        );
        assert_eq!(settings.temporality, Temporality::Cumulative);
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
        assert_eq!(
            settings.traces_endpoint.as_deref(),
            Some("https://api.honeycomb.io/v1/traces")
        );
        assert_eq!(
            settings.metrics_endpoint.as_deref(),
            Some("http://collector:4318/v1/metrics")
        );
        assert_eq!(settings.service_name, "tools");
        assert_eq!(settings.sampling, Sampling::ParentBasedAlwaysOn);
        assert_eq!(settings.flush_timeout, Duration::from_millis(50));
    }

    #[test]
    fn each_signal_has_its_own_endpoint_switch_and_timeout() {
        let base = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318");
        let settings = parse(&[
            base,
            ("OTEL_METRICS_EXPORTER", "none"),
            ("OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", "10"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(settings.metrics_endpoint, None);
        // A switched-off signal's timeout does not shorten the other's flush.
        assert_eq!(settings.flush_timeout, MAX_FLUSH);
        let settings = parse(&[
            (
                "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
                "https://metrics.example/otlp/v1/metrics",
            ),
            ("OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", "80"),
            ("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "Delta"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(settings.traces_endpoint, None);
        assert_eq!(
            settings.metrics_endpoint.as_deref(),
            Some("https://metrics.example/otlp/v1/metrics")
        );
        assert_eq!(settings.temporality, Temporality::Delta);
        assert_eq!(settings.flush_timeout, Duration::from_millis(80));
        let off = parse(&[
            base,
            ("OTEL_TRACES_EXPORTER", "none"),
            ("OTEL_METRICS_EXPORTER", "none"),
        ])
        .unwrap();
        assert_eq!(off, None, "both signals off: no exporter at all");
    }

    #[test]
    fn a_bad_setting_is_named() {
        let endpoint = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318");
        for (bad, name) in [
            (("OTEL_TRACES_SAMPLER", "sometimes"), "OTEL_TRACES_SAMPLER"),
            (("OTEL_RESOURCE_ATTRIBUTES", "novalue"), "OTEL_RESOURCE_ATTRIBUTES"),
            (("OTEL_EXPORTER_OTLP_TIMEOUT", "soon"), "OTEL_EXPORTER_OTLP_TIMEOUT"),
            (("OTEL_METRICS_EXPORTER", "prometheus"), "OTEL_METRICS_EXPORTER"),
            (("OTEL_TRACES_EXPORTER", "zipkin"), "OTEL_TRACES_EXPORTER"),
            (
                ("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "sometimes"),
                "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE",
            ),
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
