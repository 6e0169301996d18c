//! Which spans and events [`Config::init`](crate::Config::init)'s subscriber exports: those
//! `RUST_LOG` enables, and reins's own whatever it says of other targets.

use std::borrow::Cow;
use tracing::level_filters::LevelFilter;
use tracing_subscriber::EnvFilter;

/// The target of reins's spans and hook-decision events.
const REINS_TARGET: &str = "reins";

/// Added to `RUST_LOG`'s directives when they say nothing of [`REINS_TARGET`]. A target
/// directive matches by prefix, so it also lets reins's other crates (`reins_mcp`, ...) and
/// modules log at `info`, as they do when `RUST_LOG` is unset.
const REINS_DIRECTIVE: &str = "reins=info";

/// The filter of the exporting layers, given `RUST_LOG`'s value: its directives, plus
/// [`REINS_DIRECTIVE`] unless one of them names reins's target (`reins=off` turns reins's
/// spans off, `reins=debug` lets more through); `info` when it is unset, empty or invalid.
///
/// Without the added directive, a `RUST_LOG` written for the application (`myapp=debug`)
/// would leave every other target off, reins's spans with them: the exporter, installed to
/// export them, would export nothing.
pub(crate) fn export_filter(rust_log: Option<&str>) -> EnvFilter {
    let Some(directives) = rust_log.map(str::trim).filter(|value| !value.is_empty()) else {
        return EnvFilter::new("info");
    };
    let directives = if names_reins(directives) {
        Cow::Borrowed(directives)
    } else {
        Cow::Owned(format!("{directives},{REINS_DIRECTIVE}"))
    };
    EnvFilter::try_new(&*directives).unwrap_or_else(|_| EnvFilter::new("info"))
}

/// Whether one of `directives` (`RUST_LOG`'s syntax: `target[span{field}]=level`, comma
/// separated) applies to reins's target: its target is a prefix of it, as `EnvFilter`
/// matches targets. A bare level (`warn`) names no target.
fn names_reins(directives: &str) -> bool {
    directives.split(',').any(|directive| {
        let target = directive
            .split(['[', '='])
            .next()
            .unwrap_or_default()
            .trim();
        !target.is_empty()
            && target.parse::<LevelFilter>().is_err()
            && REINS_TARGET.starts_with(target)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::trace::TracerProvider as _;
    use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
    use tracing_subscriber::Layer;
    use tracing_subscriber::layer::SubscriberExt;

    /// The names of the spans exported through a layer filtered for `rust_log`, of a reins
    /// span, an application's debug span and another crate's info span.
    fn exported(rust_log: Option<&str>) -> Vec<String> {
        let spans = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder()
            .with_simple_exporter(spans.clone())
            .build();
        let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("test"));
        let subscriber =
            tracing_subscriber::registry().with(layer.with_filter(export_filter(rust_log)));
        tracing::subscriber::with_default(subscriber, || {
            tracing::info_span!(target: "reins", "invoke_agent").in_scope(|| {});
            tracing::debug_span!(target: "myapp", "handler").in_scope(|| {});
            tracing::info_span!(target: "hyper", "connect").in_scope(|| {});
        });
        let mut names: Vec<String> = spans
            .get_finished_spans()
            .unwrap_or_default()
            .into_iter()
            .map(|span| span.name.into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn reins_spans_are_exported_whatever_rust_log_says_of_other_targets() {
        assert_eq!(exported(None), ["connect", "invoke_agent"]);
        assert_eq!(exported(Some("")), ["connect", "invoke_agent"]);
        assert_eq!(exported(Some("myapp=debug")), ["handler", "invoke_agent"]);
        assert_eq!(exported(Some("warn")), ["invoke_agent"]);
        assert_eq!(exported(Some("off")), ["invoke_agent"]);
        assert_eq!(exported(Some("not a [filter")), ["connect", "invoke_agent"]);
    }

    #[test]
    fn rust_log_naming_reins_decides_for_it() {
        assert!(exported(Some("reins=off")).is_empty());
        assert_eq!(exported(Some("myapp=debug,reins=off")), ["handler"]);
        assert_eq!(exported(Some("info,reins=warn")), ["connect"]);
        assert_eq!(exported(Some("warn,reins=debug")), ["invoke_agent"]);
        assert!(names_reins("reins[invoke_agent]=off"));
        assert!(!names_reins("reins_mcp=debug"));
        assert!(!names_reins("reins::agent=debug"));
        assert!(!names_reins("debug"));
    }
}
