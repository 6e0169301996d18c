//! Metrics derived from reins's spans and hook-decision events, so the driver records each
//! fact once (on its span) and the numbers follow from it.

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Counter, Histogram, Meter};
use std::time::Instant;
use tracing::field::{Field, Visit};

/// The instruments reins's spans feed.
#[derive(Debug, Clone)]
pub(crate) struct Instruments {
    operation_duration: Histogram<f64>,
    token_usage: Histogram<u64>,
    tool_duration: Histogram<f64>,
    tool_calls: Counter<u64>,
    hook_decisions: Counter<u64>,
}

impl Instruments {
    pub(crate) fn new(meter: &Meter) -> Self {
        Instruments {
            operation_duration: meter
                .f64_histogram("gen_ai.client.operation.duration")
                .with_unit("s")
                .with_description("GenAI operation duration")
                .with_boundaries(vec![
                    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48,
                    40.96, 81.92,
                ])
                .build(),
            token_usage: meter
                .u64_histogram("gen_ai.client.token.usage")
                .with_unit("{token}")
                .with_description("Number of input and output tokens used")
                .with_boundaries(vec![
                    1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0,
                    1048576.0, 4194304.0, 16777216.0, 67108864.0,
                ])
                .build(),
            tool_duration: meter
                .f64_histogram("gen_ai.execute_tool.duration")
                .with_unit("s")
                .with_description("Duration of tool calls, hooks included")
                .build(),
            tool_calls: meter
                .u64_counter("reins.tool.calls")
                .with_unit("{call}")
                .with_description("Tool calls answered, by tool and outcome")
                .build(),
            hook_decisions: meter
                .u64_counter("reins.hook.decisions")
                .with_unit("{decision}")
                .with_description("Hook decisions that changed a run, by kind")
                .build(),
        }
    }

    /// Records a closed span's figures.
    pub(crate) fn span_closed(&self, name: &str, fields: &SpanFields) {
        let seconds = fields.started.elapsed().as_secs_f64();
        match name {
            "chat" => {
                let attributes = fields.model_attributes();
                self.operation_duration.record(seconds, &attributes);
                for (kind, tokens) in [
                    ("input", fields.input_tokens),
                    ("output", fields.output_tokens),
                ] {
                    if let Some(tokens) = tokens {
                        let mut attributes = attributes.clone();
                        attributes.push(KeyValue::new("gen_ai.token.type", kind));
                        self.token_usage.record(tokens, &attributes);
                    }
                }
            }
            "execute_tool" => {
                let mut attributes = Vec::with_capacity(3);
                push(&mut attributes, "gen_ai.tool.name", &fields.tool_name);
                push(&mut attributes, "error.type", &fields.error_type);
                self.tool_duration.record(seconds, &attributes);
                push(&mut attributes, "reins.tool.outcome", &fields.tool_outcome);
                self.tool_calls.add(1, &attributes);
            }
            _ => {}
        }
    }

    /// Counts one hook decision.
    pub(crate) fn hook_decision(&self, event: &DecisionFields) {
        let mut attributes = Vec::with_capacity(2);
        push(&mut attributes, "reins.hook.action", &event.action);
        push(&mut attributes, "reins.hook.name", &event.hook);
        self.hook_decisions.add(1, &attributes);
    }
}

fn push(attributes: &mut Vec<KeyValue>, key: &'static str, value: &Option<String>) {
    if let Some(value) = value {
        attributes.push(KeyValue::new(key, value.clone()));
    }
}

/// The fields of a reins span that its metrics need, kept in the span's extensions.
#[derive(Debug)]
pub(crate) struct SpanFields {
    started: Instant,
    operation: Option<String>,
    provider: Option<String>,
    request_model: Option<String>,
    response_model: Option<String>,
    tool_name: Option<String>,
    tool_outcome: Option<String>,
    error_type: Option<String>,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
}

impl SpanFields {
    pub(crate) fn new() -> Self {
        SpanFields {
            started: Instant::now(),
            operation: None,
            provider: None,
            request_model: None,
            response_model: None,
            tool_name: None,
            tool_outcome: None,
            error_type: None,
            input_tokens: None,
            output_tokens: None,
        }
    }

    fn model_attributes(&self) -> Vec<KeyValue> {
        let mut attributes = Vec::with_capacity(6);
        push(&mut attributes, "gen_ai.operation.name", &self.operation);
        push(&mut attributes, "gen_ai.provider.name", &self.provider);
        push(&mut attributes, "gen_ai.request.model", &self.request_model);
        push(
            &mut attributes,
            "gen_ai.response.model",
            &self.response_model,
        );
        push(&mut attributes, "error.type", &self.error_type);
        attributes
    }
}

impl Visit for SpanFields {
    fn record_str(&mut self, field: &Field, value: &str) {
        let slot = match field.name() {
            "gen_ai.operation.name" => &mut self.operation,
            "gen_ai.provider.name" => &mut self.provider,
            "gen_ai.request.model" => &mut self.request_model,
            "gen_ai.response.model" => &mut self.response_model,
            "gen_ai.tool.name" => &mut self.tool_name,
            "reins.tool.outcome" => &mut self.tool_outcome,
            "error.type" => &mut self.error_type,
            _ => return,
        };
        *slot = Some(value.to_owned());
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        let Ok(value) = u64::try_from(value) else {
            return;
        };
        match field.name() {
            "gen_ai.usage.input_tokens" => self.input_tokens = Some(value),
            "gen_ai.usage.output_tokens" => self.output_tokens = Some(value),
            _ => {}
        }
    }

    fn record_debug(&mut self, _field: &Field, _value: &dyn std::fmt::Debug) {}
}

/// The fields of a `reins.hook.decision` event.
#[derive(Debug, Default)]
pub(crate) struct DecisionFields {
    pub(crate) is_decision: bool,
    action: Option<String>,
    hook: Option<String>,
}

impl Visit for DecisionFields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "reins.hook.action" => self.action = Some(value.to_owned()),
            "reins.hook.name" => self.hook = Some(value.to_owned()),
            _ => {}
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.is_decision = format!("{value:?}") == "reins.hook.decision";
        }
    }
}
