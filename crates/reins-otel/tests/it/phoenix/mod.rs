//! Export to a real trace backend: Arize Phoenix (installed by scripts/install/phoenix.sh),
//! started on loopback by the test. A durable run suspends in one process and is resumed in
//! another (the `reins-otel-demo` binary, twice); Phoenix's REST API must then show one trace.
//! A run recorded with content shows in Phoenix as the chat's messages, a failed call with
//! why. A run whose process is killed mid-run and that another process finishes is listed
//! all the same (`crashed.rs`).

mod crashed;
mod server;
mod suspended;

use serde_json::Value;
use server::{Phoenix, attr, demo, named};

#[tokio::test]
async fn a_run_suspended_in_one_process_and_resumed_in_another_is_one_trace_in_phoenix() {
    let client = reqwest::Client::new();
    let mut phoenix = Phoenix::start();
    phoenix.wait_ready(&client).await;
    let db = phoenix.dir.join("runs.sqlite");
    let run_id = "trip-1";

    assert_eq!(
        demo(&phoenix, "start", &db, run_id, false),
        "suspended: the booking awaits approval"
    );
    assert_eq!(
        demo(&phoenix, "resume", &db, run_id, false),
        "Sunny in Lisbon; the Alfama room is booked."
    );

    // Both processes flushed on exit.
    let spans = phoenix.spans_when(&client, "default", 7).await;
    let names: Vec<&str> = spans.iter().filter_map(|s| s["name"].as_str()).collect();
    assert_eq!(
        spans.len(),
        7,
        "spans in Phoenix: {names:?}\n{}",
        phoenix.log()
    );

    let trace_id = &spans[0]["context"]["trace_id"];
    assert!(
        spans.iter().all(|s| &s["context"]["trace_id"] == trace_id),
        "both halves are one trace: {spans:#?}"
    );

    let runs = named(&spans, "invoke_agent travel-agent");
    assert_eq!(runs.len(), 2, "{names:?}");
    let (first, resumed): (Vec<&Value>, Vec<&Value>) =
        runs.into_iter().partition(|s| s["parent_id"].is_null());
    let (first, resumed) = (first[0], resumed[0]);
    let first_id = &first["context"]["span_id"];
    let resumed_id = &resumed["context"]["span_id"];
    assert_eq!(
        &resumed["parent_id"], first_id,
        "the resumed half hangs under the first"
    );
    for run in [first, resumed] {
        assert_eq!(attr(run, "gen_ai.operation.name"), "invoke_agent");
        assert_eq!(attr(run, "gen_ai.agent.name"), "travel-agent");
        assert_eq!(attr(run, "gen_ai.conversation.id"), run_id);
        assert_eq!(attr(run, "gen_ai.provider.name"), "reins.demo");
        assert_eq!(attr(run, "gen_ai.request.model"), "demo-model");
    }
    assert_eq!(attr(first, "reins.run.status"), "suspended");
    assert_eq!(attr(first, "reins.resumed"), false);
    assert_eq!(attr(resumed, "reins.run.status"), "completed");
    assert_eq!(attr(resumed, "reins.resumed"), true);
    // Each half counts its own model calls: the run's 300 and 42 tokens, none twice.
    let tokens = |run: &Value, key: &str| attr(run, key).as_i64().expect("a count");
    assert_eq!(tokens(resumed, "gen_ai.usage.input_tokens"), 180);
    assert_eq!(
        tokens(first, "gen_ai.usage.input_tokens") + tokens(resumed, "gen_ai.usage.input_tokens"),
        300
    );
    assert_eq!(
        tokens(first, "gen_ai.usage.output_tokens") + tokens(resumed, "gen_ai.usage.output_tokens"),
        42
    );

    let chats = named(&spans, "chat demo-model");
    assert_eq!(chats.len(), 2, "{names:?}");
    for chat in &chats {
        assert_eq!(attr(chat, "gen_ai.operation.name"), "chat");
        assert_eq!(attr(chat, "gen_ai.response.model"), "demo-model-2026-01-01");
        let turn = attr(chat, "reins.turn").as_i64().expect("a turn");
        let parent = if turn == 1 { first_id } else { resumed_id };
        assert_eq!(&chat["parent_id"], parent, "turn {turn}");
        assert_eq!(
            attr(chat, "gen_ai.response.id"),
            format!("scripted-{turn}").as_str()
        );
        assert_eq!(
            attr(chat, "reins.effect_id"),
            format!("{run_id}/t{turn}").as_str()
        );
    }

    let weather = named(&spans, "execute_tool weather");
    assert_eq!(weather.len(), 1);
    assert_eq!(&weather[0]["parent_id"], first_id);
    assert_eq!(attr(weather[0], "gen_ai.tool.name"), "weather");
    assert_eq!(attr(weather[0], "gen_ai.tool.type"), "function");
    assert_eq!(attr(weather[0], "gen_ai.tool.call.id"), "call_1_0");
    assert_eq!(attr(weather[0], "reins.tool.outcome"), "success");

    let bookings = named(&spans, "execute_tool book");
    assert_eq!(bookings.len(), 2);
    let (asked, approved): (Vec<&Value>, Vec<&Value>) = bookings
        .into_iter()
        .partition(|s| &s["parent_id"] == first_id);
    assert_eq!(attr(asked[0], "reins.hook.action"), "suspend");
    let events = asked[0]["events"].as_array().expect("events");
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["name"], "reins.hook.decision");
    assert_eq!(events[0]["attributes"]["reins.hook.action"], "suspend");
    assert_eq!(
        events[0]["attributes"]["reins.hook.name"],
        "on_tool_dispatch"
    );
    assert_eq!(&approved[0]["parent_id"], resumed_id);
    assert_eq!(attr(approved[0], "reins.tool.outcome"), "success");
    assert_eq!(
        attr(approved[0], "reins.effect_id"),
        format!("{run_id}/t1c1").as_str()
    );
    assert!(
        spans
            .iter()
            .all(|s| s["attributes"].get("gen_ai.input.messages").is_none()),
        "no content without opting in"
    );
}

/// The attribute `key` of the first span named `name` that has it.
fn first_with<'a>(spans: &'a [Value], name: &str, key: &str) -> Option<&'a Value> {
    spans
        .iter()
        .filter(|s| s["name"] == name)
        .find_map(|s| s["attributes"].get(key))
}

#[test]
fn content_recorded_in_a_run_shows_in_phoenix_as_the_chats_messages() {
    use opentelemetry_otlp::WithExportConfig;
    use reins::agent::AgentBuilder;
    use reins::testing::Turn;
    use tracing_subscriber::layer::SubscriberExt;

    let mut phoenix = Phoenix::start();
    // Built before the runtime: the OTLP client blocks, on the batch exporter's own thread.
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_endpoint(format!("{}/v1/traces", phoenix.base))
        .build()
        .expect("an OTLP exporter");
    let project = opentelemetry_sdk::Resource::builder()
        .with_attribute(opentelemetry::KeyValue::new(
            "openinference.project.name",
            "content",
        ))
        .build();
    let tracer_provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(project)
        .build();
    let meter_provider = opentelemetry_sdk::metrics::SdkMeterProvider::builder().build();
    let telemetry = reins_otel::Telemetry::new().capture_content(|_, text| Some(text));
    let subscriber = tracing_subscriber::registry().with(reins_otel::layers(
        &tracer_provider,
        &meter_provider,
        telemetry,
    ));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let spans = runtime.block_on(async {
        let client = reqwest::Client::new();
        phoenix.wait_ready(&client).await;
        let model = crate::harness::NamedModel::new([
            Turn::tool_calls([
                ("lookup", serde_json::json!({"city": "Paris"})),
                ("forecast", serde_json::json!({"city": "Paris"})),
            ]),
            Turn::text("It is sunny in Paris."),
        ]);
        let lookup = reins::tool::tool_fn("lookup", "Looks a city up.", |_: Value| async {
            Ok::<_, std::convert::Infallible>("sunny")
        });
        let forecast = reins::tool::tool_fn("forecast", "Tomorrow's weather.", |_: Value| async {
            Err::<String, _>("the forecast service is down")
        });
        let agent = AgentBuilder::new(model)
            .name("weather")
            .preamble("Answer briefly.")
            .tool(lookup)
            .tool(forecast)
            .build();
        {
            reins_test_servers::ask_every_subscriber();
            let _recording = tracing::subscriber::set_default(subscriber);
            let answer = agent.prompt("Weather in Paris?").await.expect("an answer");
            assert_eq!(answer, "It is sunny in Paris.");
            // A model call that fails: the provider's words are its span's exception.
            let missing = crate::harness::NamedModel {
                model: "gpt-missing",
                ..crate::harness::NamedModel::new([Turn::error(
                    reins::completion::CompletionError::Http {
                        status: 404,
                        body: "the model `gpt-missing` does not exist".into(),
                    },
                )])
            };
            AgentBuilder::new(missing)
                .build()
                .prompt("Hello?")
                .await
                .expect_err("the model is missing");
        }
        tracer_provider.force_flush().expect("the spans are sent");
        phoenix.spans_when(&client, "content", 7).await
    });
    let names: Vec<&str> = spans.iter().filter_map(|s| s["name"].as_str()).collect();
    assert_eq!(
        spans.len(),
        7,
        "spans in Phoenix: {names:?}\n{}",
        phoenix.log()
    );

    // Phoenix reads the conventions' messages into its own; the answering turn's chat shows
    // the whole conversation, tool call and result included.
    let shown = |key: &str| first_with(&spans, "chat gpt-test", key).cloned();
    let input = "llm.input_messages";
    assert_eq!(
        shown(&format!("{input}.0.message.role")),
        Some("system".into())
    );
    assert_eq!(
        shown(&format!("{input}.0.message.content")),
        Some("Answer briefly.".into())
    );
    assert_eq!(
        shown(&format!("{input}.1.message.content")),
        Some("Weather in Paris?".into())
    );
    let answered = spans
        .iter()
        .find(|s| {
            s["name"] == "chat gpt-test"
                && s["attributes"]
                    .get(format!("{input}.3.message.role"))
                    .is_some()
        })
        .unwrap_or_else(|| panic!("no chat span shows the tool result: {spans:#?}"));
    let attribute = |key: &str| answered["attributes"][key].clone();
    assert_eq!(
        attribute(&format!(
            "{input}.2.message.tool_calls.0.tool_call.function.name"
        )),
        "lookup"
    );
    assert_eq!(attribute(&format!("{input}.3.message.role")), "tool");
    assert_eq!(attribute(&format!("{input}.3.message.content")), "sunny");
    assert_eq!(
        attribute("llm.output_messages.0.message.content"),
        "It is sunny in Paris."
    );
    // Each call's output, as Phoenix lists it (its own, made of the response's id and model,
    // unless one is given): the answer's text, or the calls it asks for.
    assert_eq!(attribute("output.value"), "It is sunny in Paris.");
    assert_eq!(attribute("output.mime_type"), "text/plain");
    let asking = spans
        .iter()
        .find(|s| s["name"] == "chat gpt-test" && s != &answered)
        .expect("the chat span asking for the tools");
    let asked = asking["attributes"]["output.value"]
        .as_str()
        .unwrap_or_default();
    let asked: Value = serde_json::from_str(asked)
        .unwrap_or_else(|_| panic!("the calls asked for, as JSON: {asked:?}"));
    assert_eq!(asked[0]["parts"][1]["name"], "forecast", "{asked}");
    assert_eq!(asking["attributes"]["output.mime_type"], "application/json");
    // A call's arguments are its input, which Phoenix lists (it reads none from the
    // conventions' arguments).
    let lookup = named(&spans, "execute_tool lookup");
    assert_eq!(attr(lookup[0], "input.value"), r#"{"city":"Paris"}"#);
    assert_eq!(attr(lookup[0], "input.mime_type"), "application/json");
    // A failed call shows why, as Phoenix shows an error: an `exception` event saying what
    // the model was told.
    let failed = named(&spans, "execute_tool forecast");
    assert_eq!(failed[0]["status_code"], "ERROR");
    let events = failed[0]["events"].as_array().cloned().unwrap_or_default();
    let exception = events
        .iter()
        .find(|e| e["name"] == "exception")
        .unwrap_or_else(|| panic!("no exception event on the failed call: {:#?}", failed[0]));
    let message = exception["attributes"]["exception.message"]
        .as_str()
        .unwrap_or_default();
    assert!(
        message.contains("the forecast service is down"),
        "{message}"
    );
    assert_eq!(
        exception["attributes"]["exception.type"],
        attr(failed[0], "error.type").clone()
    );
    // A failed model call shows why in the provider's words, with its failed span only.
    let missing = named(&spans, "chat gpt-missing");
    assert_eq!(missing[0]["status_code"], "ERROR");
    let events = missing[0]["events"].as_array().cloned().unwrap_or_default();
    let exception = events
        .iter()
        .find(|e| e["name"] == "exception")
        .unwrap_or_else(|| panic!("no exception event on the failed call: {:#?}", missing[0]));
    assert_eq!(exception["attributes"]["exception.type"], "404");
    let message = exception["attributes"]["exception.message"]
        .as_str()
        .unwrap_or_default();
    assert!(
        message.contains("`gpt-missing` does not exist"),
        "{message}"
    );
    let failed_run = named(&spans, "invoke_agent")
        .into_iter()
        .find(|s| s["context"]["span_id"] == missing[0]["parent_id"])
        .expect("the failed call's run");
    assert_eq!(failed_run["status_code"], "ERROR");
    assert!(
        failed_run["events"]
            .as_array()
            .is_none_or(|events| events.iter().all(|e| e["name"] != "exception")),
        "{failed_run:#}"
    );
    // The trace's root shows the run's input and answer (Phoenix lists them per trace).
    let root = |key: &str| first_with(&spans, "invoke_agent weather", key).cloned();
    assert_eq!(root("input.value"), Some("Weather in Paris?".into()));
    assert_eq!(root("output.value"), Some("It is sunny in Paris.".into()));
    drop(runtime);
    let _ = tracer_provider.shutdown();
}
