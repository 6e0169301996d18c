//! Which exporters a signal is sent to: `OTEL_TRACES_EXPORTER` and `OTEL_METRICS_EXPORTER`,
//! as OpenTelemetry's environment variable specification defines them (an enum, `otlp` by
//! default, which an implementation may accept as a comma-separated list).
//!
//! reins-otel has `otlp`, `console` ([`crate::console`]) and `none`. A value it does not have
//! (`zipkin`, `prometheus`, the deprecated `logging`, a typo) is left out with a warning, as
//! the specification asks of an enum value an implementation does not recognize ("generate a
//! warning and gracefully ignore the setting"); a list of which nothing is left is ignored
//! whole, the signal then sent over OTLP as by default. The export does not stop for a
//! misspelt variable: a program that set a collector up would lose its trace to a typo.

/// The variable that chooses the traces' exporters.
pub(crate) const TRACES: &str = "OTEL_TRACES_EXPORTER";

/// The variable that chooses the metrics' exporters.
pub(crate) const METRICS: &str = "OTEL_METRICS_EXPORTER";

/// Exporter names the specification defines that reins-otel does not have: said by name,
/// as no one's secret. Anything else is said as a value it does not know, unquoted (every
/// variable reins-otel reads is named, never quoted: one may hold a key pasted in the wrong
/// place).
const KNOWN_ELSEWHERE: [&str; 5] = ["zipkin", "prometheus", "logging", "otlp/stdout", "jaeger"];

/// The exporters one signal is sent to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Exporters {
    /// Over OTLP, to the collector.
    pub(crate) otlp: bool,
    /// Written to the console ([`crate::console`]).
    pub(crate) console: bool,
}

impl Exporters {
    /// What an unset variable means: OTLP alone.
    const DEFAULT: Exporters = Exporters {
        otlp: true,
        console: false,
    };
}

/// What a signal's exporter variable chose, and what of it was left out.
#[derive(Debug, PartialEq)]
pub(crate) struct Selected {
    /// The exporters to send the signal to.
    pub(crate) exporters: Exporters,
    /// The variable read.
    variable: &'static str,
    /// Each entry left out: its name when the specification knows it, else `None`.
    ignored: Vec<Option<&'static str>>,
    /// Whether nothing the variable said was kept, so it was ignored whole.
    defaulted: bool,
}

/// The exporters `variable` chooses, read through `var`: unset or empty is `otlp`; entries are
/// separated by commas, their case and surrounding spaces do not matter; `none` chooses
/// nothing (alone, the signal is exported nowhere).
pub(crate) fn selected(variable: &'static str, var: impl Fn(&str) -> Option<String>) -> Selected {
    let value = var(variable).unwrap_or_default();
    let mut chosen = Exporters {
        otlp: false,
        console: false,
    };
    let mut known = false;
    let mut ignored = Vec::new();
    for entry in value.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let entry = entry.to_ascii_lowercase();
        match entry.as_str() {
            "otlp" => chosen.otlp = true,
            "console" => chosen.console = true,
            "none" => {}
            other => {
                ignored.push(KNOWN_ELSEWHERE.iter().copied().find(|n| *n == other));
                continue;
            }
        }
        known = true;
    }
    let defaulted = !known && !ignored.is_empty();
    Selected {
        exporters: if known { chosen } else { Exporters::DEFAULT },
        variable,
        ignored,
        defaulted,
    }
}

impl Selected {
    /// Says, once the subscriber that hears it is installed, what was left out of the
    /// variable, and what the signal is sent to when nothing was kept.
    pub(crate) fn warn_ignored(&self) {
        if self.ignored.is_empty() {
            return;
        }
        let mut named: Vec<&str> = self.ignored.iter().flatten().copied().collect();
        named.dedup();
        let unknown = self.ignored.iter().filter(|name| name.is_none()).count();
        let mut what = named.join(", ");
        if unknown > 0 {
            let values = if unknown == 1 { "a value" } else { "values" };
            if !what.is_empty() {
                what.push_str(" and ");
            }
            what.push_str(&format!("{values} it does not know"));
        }
        let then = if self.defaulted {
            ": ignored, so OTLP is used as when it is unset"
        } else {
            ": left out"
        };
        tracing::warn!(
            target: crate::delivery::TARGET,
            "{} names {what}; reins-otel exports to otlp, console or none{then}",
            self.variable
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_env::env;

    fn chosen(value: &str) -> Exporters {
        selected(TRACES, env(&[(TRACES, value)])).exporters
    }

    const OTLP: Exporters = Exporters {
        otlp: true,
        console: false,
    };
    const CONSOLE: Exporters = Exporters {
        otlp: false,
        console: true,
    };
    const BOTH: Exporters = Exporters {
        otlp: true,
        console: true,
    };
    const NOWHERE: Exporters = Exporters {
        otlp: false,
        console: false,
    };

    #[test]
    fn unset_or_empty_is_otlp_and_a_list_chooses_each_it_names() {
        assert_eq!(selected(TRACES, env(&[])).exporters, OTLP);
        assert_eq!(chosen(""), OTLP);
        assert_eq!(chosen(" , "), OTLP);
        assert_eq!(chosen("console"), CONSOLE);
        assert_eq!(chosen(" Console "), CONSOLE);
        assert_eq!(chosen("console,otlp"), BOTH);
        assert_eq!(chosen("otlp, CONSOLE"), BOTH);
        assert_eq!(chosen("none"), NOWHERE);
        assert_eq!(chosen("none,console"), CONSOLE);
    }

    #[test]
    fn an_exporter_it_lacks_is_left_out_and_a_list_of_nothing_else_ignored() {
        let zipkin = selected(TRACES, env(&[(TRACES, "zipkin")]));
        assert_eq!(
            (zipkin.exporters, zipkin.ignored, zipkin.defaulted),
            (OTLP, vec![Some("zipkin")], true)
        );
        let typo = selected(TRACES, env(&[(TRACES, "consol")]));
        assert_eq!(
            (typo.exporters, typo.ignored, typo.defaulted),
            (OTLP, vec![None], true)
        );
        let mixed = selected(TRACES, env(&[(TRACES, "console,sk-live-1234")]));
        assert_eq!(
            (mixed.exporters, mixed.ignored, mixed.defaulted),
            (CONSOLE, vec![None], false)
        );
        let none = selected(METRICS, env(&[(METRICS, "none,prometheus")]));
        assert_eq!((none.exporters, none.defaulted), (NOWHERE, false));
    }
}
