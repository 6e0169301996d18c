//! Which compression a signal's exports are sent with: `gzip` when its own variable
//! (`OTEL_EXPORTER_OTLP_TRACES_COMPRESSION`, `..._METRICS_COMPRESSION`), else
//! `OTEL_EXPORTER_OTLP_COMPRESSION`, says so; none when neither does, or one says `none`.
//!
//! A value reins-otel cannot send (`zstd`, which it is built without, `brotli`, a typo) is
//! ignored, as OpenTelemetry asks of an enum value it does not know, and the next variable
//! read: the exports go on (uncompressed, unless the shared variable says `gzip`) rather than
//! stop. The SDK does the same, but says so only when its `internal-logs` are on, and before
//! any subscriber is installed to hear it; reins-otel says it once set up, naming the
//! variable (not its value, as it names every variable it reads).

use opentelemetry_otlp::{Compression, OTEL_EXPORTER_OTLP_COMPRESSION};

/// What a signal's compression variables say.
#[derive(Debug, PartialEq)]
pub(crate) struct Chosen {
    /// The compression to send with, if any.
    pub(crate) compression: Option<Compression>,
    /// The variables read whose value names no compression reins-otel can send.
    pub(crate) ignored: Vec<&'static str>,
}

/// The compression `signal_variable` (else [`OTEL_EXPORTER_OTLP_COMPRESSION`]) chooses, read
/// through `var` as the SDK reads them: an empty value is unset, the value's case does not
/// matter, and a value it does not know passes to the next variable.
pub(crate) fn chosen(
    signal_variable: &'static str,
    var: impl Fn(&str) -> Option<String>,
) -> Chosen {
    let mut ignored = Vec::new();
    for name in [signal_variable, OTEL_EXPORTER_OTLP_COMPRESSION] {
        let Some(value) = var(name).filter(|value| !value.is_empty()) else {
            continue;
        };
        if value.eq_ignore_ascii_case("none") {
            return Chosen {
                compression: None,
                ignored,
            };
        }
        if value.eq_ignore_ascii_case("gzip") {
            return Chosen {
                compression: Some(Compression::Gzip),
                ignored,
            };
        }
        ignored.push(name);
    }
    Chosen {
        compression: None,
        ignored,
    }
}

/// Says, once for each of `ignored` (the variables whose value was ignored), that it was.
pub(crate) fn warn_ignored(ignored: &[&'static str]) {
    let mut said: Vec<&str> = Vec::new();
    for &name in ignored {
        if said.contains(&name) {
            continue;
        }
        said.push(name);
        tracing::warn!(
            target: crate::delivery::TARGET,
            "{name} is ignored: reins-otel compresses exports with gzip, or not at all (none)"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_env::env;

    const TRACES: &str = "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION";
    const GENERAL: &str = OTEL_EXPORTER_OTLP_COMPRESSION;

    fn chosen_by(vars: &[(&str, &str)]) -> Chosen {
        chosen(TRACES, env(vars))
    }

    #[test]
    fn a_signals_own_variable_comes_first_and_none_turns_gzip_off() {
        let gzip = Some(Compression::Gzip);
        assert_eq!(chosen_by(&[]).compression, None);
        assert_eq!(chosen_by(&[(GENERAL, "gzip")]).compression, gzip);
        assert_eq!(chosen_by(&[(GENERAL, "GZIP")]).compression, gzip);
        assert_eq!(chosen_by(&[(TRACES, "gzip")]).compression, gzip);
        let off = chosen_by(&[(TRACES, "none"), (GENERAL, "gzip")]);
        assert_eq!(off.compression, None);
        let empty = chosen_by(&[(TRACES, ""), (GENERAL, "gzip")]);
        assert_eq!((empty.compression, empty.ignored), (gzip, vec![]));
    }

    #[test]
    fn a_value_that_cannot_be_sent_is_ignored_and_the_next_variable_read() {
        for value in ["zstd", "brotli", "gzip!", " gzip"] {
            let alone = chosen_by(&[(GENERAL, value)]);
            assert_eq!((alone.compression, alone.ignored), (None, vec![GENERAL]));
            let then_gzip = chosen_by(&[(TRACES, value), (GENERAL, "gzip")]);
            assert_eq!(
                (then_gzip.compression, then_gzip.ignored),
                (Some(Compression::Gzip), vec![TRACES])
            );
        }
    }
}
