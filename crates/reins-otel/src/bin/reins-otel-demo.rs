//! A traced agent run in two processes, exported to the collector `OTEL_EXPORTER_OTLP_ENDPOINT`
//! names: no API key needed (the model is scripted).
//!
//! ```text
//! reins-otel-demo start  RUNS.sqlite RUN_ID   # looks the weather up, then suspends the booking
//! reins-otel-demo resume RUNS.sqlite RUN_ID   # approves the booking and finishes the run
//! ```
//!
//! Both halves show up as one trace: the resumed `invoke_agent` span is a child of the first.
//! Logs are shown on stderr as `RUST_LOG` enables them (errors only when it is unset).

use reins::agent::{
    AgentBuilder, AgentHook, DispatchAction, DispatchEvent, HookContext, PromptError, ToolDecision,
};
use reins::completion::{
    CompletionError, CompletionModel, CompletionRequest, CompletionResponse, RawResponse, Usage,
};
use reins::store::SqliteStore;
use reins::testing::{ScriptedModel, Turn};
use reins::tool::tool_fn;
use serde_json::{Value, json};
use std::convert::Infallible;
use std::process::ExitCode;
use tracing_subscriber::Layer as _;

/// The scripted model, named like a hosted one so the trace reads like a real run's.
struct DemoModel(ScriptedModel);

impl CompletionModel for DemoModel {
    async fn completion(
        &self,
        request: &CompletionRequest,
    ) -> Result<CompletionResponse, CompletionError> {
        let mut response = self.0.completion(request).await?;
        response.raw = RawResponse::new(json!({"model": "demo-model-2026-01-01"}));
        Ok(response)
    }

    fn model_name(&self) -> Option<&str> {
        Some("demo-model")
    }

    fn provider_name(&self) -> Option<&str> {
        Some("reins.demo")
    }
}

/// Bookings wait for a person's approval.
struct ApproveBookings;
impl AgentHook for ApproveBookings {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        match event.tool_name() {
            Some("book") => DispatchAction::suspend("bookings need approval"),
            _ => DispatchAction::proceed(),
        }
    }
}

fn agent() -> reins::agent::Agent {
    let model = DemoModel(ScriptedModel::resumable([
        Turn::tool_calls([
            ("weather", json!({"city": "Lisbon"})),
            ("book", json!({"hotel": "Alfama"})),
        ])
        .usage(Usage::new(120, 30)),
        Turn::text("Sunny in Lisbon; the Alfama room is booked.").usage(Usage::new(180, 12)),
    ]));
    AgentBuilder::new(model)
        .name("travel-agent")
        .tool(tool_fn(
            "weather",
            "Today's weather.",
            |args: Value| async move { Ok::<_, Infallible>(format!("sunny in {}", args["city"])) },
        ))
        .tool(tool_fn("book", "Books a room.", |args: Value| async move {
            Ok::<_, Infallible>(format!("booked {}", args["hotel"]))
        }))
        .add_hook(ApproveBookings)
        .build()
}

async fn run(mode: &str, store: SqliteStore, run_id: &str) -> Result<String, String> {
    let agent = agent();
    let result = match mode {
        "start" => {
            agent
                .prompt("Check Lisbon's weather and book the Alfama hotel.")
                .run_id(run_id)
                .durable(store)
                .await
        }
        "resume" => {
            agent
                .resume_stored(store, run_id)
                .decide("t1c1", ToolDecision::Approve)
                .await
        }
        other => return Err(format!("unknown mode `{other}` (use start or resume)")),
    };
    match result {
        Ok(answer) => Ok(answer),
        Err(PromptError::Suspended { .. }) => Ok("suspended: the booking awaits approval".into()),
        Err(error) => Err(error.to_string()),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [mode, path, run_id] = args.as_slice() else {
        eprintln!("usage: reins-otel-demo start|resume RUNS.sqlite RUN_ID");
        return ExitCode::from(2);
    };
    // Set up before the runtime: the OTLP exporters run on their own threads. Logs go to
    // stderr as RUST_LOG enables them (errors only when unset): an export that fails says so.
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_filter(tracing_subscriber::EnvFilter::from_default_env());
    let otel = match reins_otel::Config::new().init_with(stderr) {
        Ok(otel) => otel,
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| error.to_string())
        .and_then(|runtime| {
            let store = SqliteStore::open(path).map_err(|error| error.to_string())?;
            runtime.block_on(run(mode, store, run_id))
        });
    let flushed = otel.shutdown();
    match (outcome, flushed) {
        (Ok(answer), Ok(())) => {
            println!("{answer}");
            ExitCode::SUCCESS
        }
        (Err(error), _) => {
            eprintln!("{error}");
            ExitCode::FAILURE
        }
        (_, Err(error)) => {
            eprintln!("{error}");
            ExitCode::FAILURE
        }
    }
}
