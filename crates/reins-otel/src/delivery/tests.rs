//! The delivery's counting and what it says, without a collector.

use super::*;

#[test]
fn lost_spans_are_counted_once_each() {
    let delivery = Delivery::new(
        "traces",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        Duration::from_secs(10),
    );
    delivery.ended.fetch_add(5, Ordering::SeqCst);
    delivery.record(2, &Ok(()));
    delivery.record(3, &Err(OTelSdkError::InternalFailure("down".into())));
    assert_eq!(delivery.take_unexported(), 3);
    assert_eq!(delivery.take_unexported(), 0, "already reported");
    delivery.ended.fetch_add(1, Ordering::SeqCst);
    assert_eq!(delivery.take_unexported(), 1);
    assert!(delivery.failing());
    assert_eq!(delivery.last_failure().as_deref(), Some("down"));
}

/// The `reins_otel` events logged while `work` runs, as their messages.
fn logged(work: impl FnOnce()) -> Vec<String> {
    use tracing_subscriber::layer::SubscriberExt;
    let written = Arc::new(Mutex::new(Vec::new()));
    let writer = written.clone();
    let layer = tracing_subscriber::fmt::layer()
        .with_ansi(false)
        .without_time()
        .with_writer(move || Lines(writer.clone()));
    tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), work);
    let written = written.lock().unwrap();
    String::from_utf8_lossy(&written)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// A writer appending to a shared buffer.
struct Lines(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Lines {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_rejection_is_said_once_a_streak_and_its_spans_counted_lost() {
    let delivery = Delivery::new(
        "traces",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        Duration::from_secs(10),
    );
    let partly = |delivery: &Delivery| {
        delivery.begin();
        delivery.ended.fetch_add(3, Ordering::SeqCst);
        delivery.rejected(Rejection::of(2, "too old".to_owned()));
        delivery.record(3, &Ok(()));
    };
    let wholly = |delivery: &Delivery| {
        delivery.begin();
        delivery.ended.fetch_add(1, Ordering::SeqCst);
        delivery.record(1, &Ok(()));
    };
    let lines = logged(|| {
        partly(&delivery);
        partly(&delivery);
        wholly(&delivery);
        partly(&delivery);
    });
    assert_eq!(lines.len(), 2, "{lines:?}");
    for line in &lines {
        assert!(
            line.ends_with(
                "traces are partly rejected by the collector at OTEL_EXPORTER_OTLP_ENDPOINT \
                 (2 spans rejected: \"too old\"); not said again until an export is \
                 wholly accepted"
            ),
            "{line}"
        );
    }
    assert_eq!(delivery.take_unexported(), 6);
    assert_eq!(
        delivery.last_failure().as_deref(),
        Some("2 spans rejected: \"too old\"")
    );
}

#[test]
fn a_collectors_message_is_quoted_on_one_line_and_cut() {
    assert_eq!(
        quoted("bad\nWARN forged \u{1b}[2J\"x\""),
        r#""bad\nWARN forged \u{1b}[2J\"x\"""#
    );
    let long = "é".repeat(5000);
    let said = quoted(&long);
    assert!(said.starts_with(&format!("\"{}\"...", "é".repeat(QUOTED_CHARS))));
    assert!(said.ends_with("(10000 bytes in all)"), "{said}");
}

#[test]
fn an_export_out_of_time_says_so() {
    let delivery = Delivery::new(
        "metrics",
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
        Duration::from_millis(1500),
    );
    delivery.begin();
    assert!(delivery.time_left() <= Duration::from_millis(1500));
    delivery.ran_out_of_time();
    delivery.record(
        0,
        &Err(OTelSdkError::InternalFailure("network error".into())),
    );
    assert_eq!(
        delivery.last_failure().as_deref(),
        Some("no complete answer within 1.5s")
    );
    delivery.begin();
    delivery.record(
        0,
        &Err(OTelSdkError::InternalFailure("network error".into())),
    );
    assert_eq!(delivery.last_failure().as_deref(), Some("network error"));
}
