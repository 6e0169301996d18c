//! Typed answers, through an output tool or the model's native JSON mode.

use reins::agent::*;
use reins::message::{Message, ToolChoice};
use reins::testing::{ScriptedModel, Turn};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
struct Weather {
    city: String,
    celsius: f64,
}

#[tokio::test]
async fn tool_mode_reads_the_output_tool_and_persists_the_answer_as_text() {
    let model = ScriptedModel::new([Turn::tool_call(
        OUTPUT_TOOL_NAME,
        json!({"city": "Oslo", "celsius": -3.5}),
    )]);
    let agent = AgentBuilder::new(model.clone()).build();
    let typed = agent
        .prompt("Weather in Oslo?")
        .output::<Weather>()
        .mode(OutputMode::Tool)
        .extended_details()
        .await
        .unwrap();
    assert_eq!(
        typed.value,
        Weather {
            city: "Oslo".into(),
            celsius: -3.5
        }
    );
    let request = &model.requests()[0];
    assert_eq!(
        request.tool_names().collect::<Vec<_>>(),
        vec![OUTPUT_TOOL_NAME]
    );
    assert_eq!(
        request.tools[0].parameters["properties"]["celsius"]["type"],
        "number"
    );
    assert_eq!(request.tool_choice, Some(ToolChoice::Required));
    // Persisted as assistant text, with the output-tool call dropped.
    let last = typed.response.history().last().unwrap();
    assert_eq!(last.tool_calls().count(), 0);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&last.text()).unwrap(),
        json!({"city": "Oslo", "celsius": -3.5})
    );
}

#[tokio::test]
async fn the_turn_event_shows_the_output_tool_call() {
    struct Check;
    impl AgentHook for Check {
        async fn on_model_turn_finished(
            &self,
            _ctx: &HookContext,
            event: ModelTurnFinished<'_>,
        ) -> ModelTurnAction {
            assert!(event.has_tool_calls());
            ModelTurnAction::continue_run()
        }
    }
    let model = ScriptedModel::new([Turn::tool_call(
        OUTPUT_TOOL_NAME,
        json!({"city": "Rome", "celsius": 20}),
    )]);
    let agent = AgentBuilder::new(model).add_hook(Check).build();
    let weather: Weather = agent
        .prompt("x")
        .output()
        .mode(OutputMode::Tool)
        .await
        .unwrap();
    assert_eq!(weather.city, "Rome");
}

#[tokio::test]
async fn a_bad_answer_is_sent_back_and_the_model_tries_again() {
    let model = ScriptedModel::new([
        Turn::text("It is cold."),
        Turn::tool_call(OUTPUT_TOOL_NAME, json!({"city": "Oslo"})),
        Turn::tool_call(OUTPUT_TOOL_NAME, json!({"city": "Oslo", "celsius": 1})),
    ]);
    let agent = AgentBuilder::new(model.clone()).build();
    let weather: Weather = agent.prompt("x").output().await.unwrap();
    assert_eq!(weather.celsius, 1.0);
    let requests = model.requests();
    assert!(
        requests[1]
            .history
            .last()
            .unwrap()
            .text()
            .contains(OUTPUT_TOOL_NAME)
    );
    let feedback = requests[2].history.last().unwrap().text();
    assert!(feedback.contains("celsius"), "{feedback}");
}

/// How a typed run of `agent` allowed two model calls fails.
async fn ended_within_two_calls(agent: Agent) -> PromptError {
    agent
        .prompt("x")
        .max_turns(2)
        .output::<Weather>()
        .await
        .unwrap_err()
}

/// A typed run whose model calls run out while its answers are refused ends saying why its
/// last answer was refused (as a structured-output error), in each way an answer can be
/// refused; one whose model was still calling tools ends at its limit, as an untyped run.
#[tokio::test]
async fn a_run_out_of_calls_after_a_refused_answer_says_what_was_wrong() {
    let missing_field = Turn::tool_call(OUTPUT_TOOL_NAME, json!({"city": "Oslo"}));
    for (model, refused) in [
        (
            ScriptedModel::new([missing_field.clone(), missing_field]),
            "the last one was refused: it does not match the schema: missing field `celsius`",
        ),
        (
            ScriptedModel::new([Turn::text("It is cold."), Turn::text("Very cold.")]),
            "the last one was refused: it is text, not a call of the `final_output` tool",
        ),
        (
            ScriptedModel::new([Turn::text("cold"), Turn::text("{\"city\": 3}")])
                .with_native_output(),
            "the last one was refused: it is not JSON matching the schema",
        ),
    ] {
        let error = ended_within_two_calls(AgentBuilder::new(model).build()).await;
        let PromptError::StructuredOutput {
            message, history, ..
        } = &error
        else {
            panic!("expected the refused answer, got {error:?}");
        };
        assert!(
            message.contains("within the run's 2 model calls"),
            "{message}"
        );
        assert!(message.contains(refused), "{message}");
        // The model was told, each time, as in a run that goes on.
        assert_eq!(history.len(), 5, "{history:?}");
    }

    let model = ScriptedModel::new([
        Turn::tool_call(OUTPUT_TOOL_NAME, json!({"city": "Oslo"})),
        Turn::tool_call("lookup", json!({"city": "Oslo"})),
    ]);
    let error = ended_within_two_calls(AgentBuilder::new(model).tool(lookup()).build()).await;
    assert!(
        matches!(error, PromptError::MaxTurns { max_turns: 2, .. }),
        "{error:?}"
    );
}

/// A typed run streamed through the output tool: a refused answer is sent back as in an
/// awaited run, the answer's arguments stream as the output tool's fragments, and the final
/// response reads as the type.
#[tokio::test]
async fn a_streamed_typed_run_ends_with_an_answer_that_reads_as_the_type() {
    use futures::StreamExt;
    let model = ScriptedModel::new([
        Turn::tool_call(OUTPUT_TOOL_NAME, json!({"city": "Oslo"})),
        Turn::tool_call(OUTPUT_TOOL_NAME, json!({"city": "Oslo", "celsius": -2})),
    ]);
    let agent = AgentBuilder::new(model.clone()).build();
    let mut stream = agent.prompt("x").output::<Weather>().stream();
    let (mut fragments, mut last) = (String::new(), None);
    while let Some(item) = stream.next().await {
        match item.unwrap() {
            StreamItem::ToolCallDelta { delta, .. } => fragments.push_str(&delta),
            StreamItem::Final(response) => last = Some(response),
            _ => {}
        }
    }
    let response = last.expect("the stream ends with its answer");
    assert_eq!(
        response.output_as::<Weather>().unwrap(),
        Weather {
            city: "Oslo".into(),
            celsius: -2.0
        }
    );
    assert!(fragments.contains("celsius"), "{fragments}");
    let feedback = model.requests()[1].history.last().unwrap().text();
    assert!(feedback.contains("missing field `celsius`"), "{feedback}");
    // Read as another type, the answer is refused, saying why.
    let misread = response.output_as::<Vec<u8>>().unwrap_err();
    assert!(
        matches!(misread, PromptError::StructuredOutput { .. }),
        "{misread:?}"
    );
}

#[derive(Deserialize, JsonSchema)]
struct CityArgs {
    city: String,
}

/// `lookup`: a city's temperature, 12 wherever it is.
fn lookup() -> impl reins::tool::Tool {
    reins::tool::tool_fn(
        "lookup",
        "Temperature of a city.",
        |args: CityArgs| async move { Ok::<_, std::convert::Infallible>(format!("{}: 12", args.city)) },
    )
}

#[tokio::test]
async fn tools_still_run_before_the_final_answer() {
    let model = ScriptedModel::new([
        Turn::tool_call("lookup", json!({"city": "Paris"})),
        Turn::tool_call(OUTPUT_TOOL_NAME, json!({"city": "Paris", "celsius": 12})),
    ]);
    let agent = AgentBuilder::new(model.clone()).tool(lookup()).build();
    let weather: Weather = agent.prompt("x").output().await.unwrap();
    assert_eq!(weather.celsius, 12.0);
    assert_eq!(
        model.requests()[1].history.last(),
        Some(&Message::tool_result("call_1_0", "lookup", "Paris: 12"))
    );
}

#[tokio::test]
async fn a_non_object_type_is_wrapped_for_the_output_tool() {
    let model = ScriptedModel::new([Turn::tool_call(
        OUTPUT_TOOL_NAME,
        json!({"response": ["a", "b"]}),
    )]);
    let agent = AgentBuilder::new(model).build();
    let list: Vec<String> = agent.prompt("x").output().await.unwrap();
    assert_eq!(list, vec!["a", "b"]);
}

#[tokio::test]
async fn native_mode_sends_the_schema_and_parses_the_text() {
    let model = ScriptedModel::new([
        Turn::text("not json"),
        Turn::text("```json\n{\"city\": \"Lima\", \"celsius\": 18}\n```"),
    ])
    .with_native_output();
    let agent = AgentBuilder::new(model.clone()).build();
    let weather: Weather = agent.prompt("x").output().await.unwrap();
    assert_eq!(weather.city, "Lima");
    let requests = model.requests();
    assert!(
        requests[0].output_schema.is_some(),
        "auto picks native mode"
    );
    assert!(requests[0].tools.is_empty());
    assert!(requests[1].history.last().unwrap().text().contains("JSON"));
}

#[tokio::test]
async fn native_mode_on_a_model_without_it_is_a_clear_error() {
    let agent = AgentBuilder::new(ScriptedModel::new([])).build();
    let error = agent
        .prompt("x")
        .output::<Weather>()
        .mode(OutputMode::Native)
        .await
        .unwrap_err();
    assert!(matches!(error, PromptError::InvalidConfiguration(ref m) if m.contains("native")));
}

/// Suspends every `lookup` call for a person.
struct AskFirst;
impl AgentHook for AskFirst {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        if event.tool_name() == Some("lookup") {
            DispatchAction::suspend("a person approves lookups")
        } else {
            DispatchAction::proceed()
        }
    }
}

/// An agent on `model` whose `lookup` calls wait for a person.
fn asking_agent(model: ScriptedModel) -> Agent {
    AgentBuilder::new(model)
        .tool(lookup())
        .add_hook(AskFirst)
        .build()
}

/// Starts a run of `agent` asking for the weather as a typed answer through the output tool,
/// kept in `store` as `run_id`; it waits for a decision about its lookup.
async fn suspended_typed_run(agent: &Agent, store: &reins::store::MemoryStore, run_id: &str) {
    let suspended = agent
        .prompt("Weather in Paris?")
        .run_id(run_id)
        .durable(store.clone())
        .output::<Weather>()
        .mode(OutputMode::Tool)
        .await;
    assert!(
        matches!(suspended, Err(PromptError::Suspended { .. })),
        "{suspended:?}"
    );
}

/// A typed run resumed without its typed answer would find the model answering through a tool
/// the run no longer has, and fail for good: the resume is refused, the run left as it was,
/// and a resume that asks for the typed answer finishes it.
#[tokio::test]
async fn a_typed_run_resumed_without_its_typed_answer_is_refused_and_left_as_it_was() {
    use reins::store::{MemoryStore, RunStore};
    let agent = asking_agent(ScriptedModel::resumable([
        Turn::tool_call("lookup", json!({"city": "Paris"})),
        Turn::tool_call(OUTPUT_TOOL_NAME, json!({"city": "Paris", "celsius": 12})),
    ]));
    let store = MemoryStore::new();
    suspended_typed_run(&agent, &store, "typed").await;
    let stored = store.load("typed").await.unwrap();
    assert_eq!(stored.output_tool.as_deref(), Some(OUTPUT_TOOL_NAME));

    let untyped = agent
        .resume_stored(store.clone(), "typed")
        .decide("t1c0", ToolDecision::approve())
        .await;
    let Err(PromptError::InvalidConfiguration(message)) = &untyped else {
        panic!("expected the resume to be refused, got {untyped:?}");
    };
    assert!(message.contains(".output::<T>()"), "{message}");
    assert_eq!(store.load("typed").await.unwrap(), stored, "left as it was");

    let weather: Weather = agent
        .resume_stored(store.clone(), "typed")
        .decide("t1c0", ToolDecision::approve())
        .output()
        .await
        .unwrap();
    assert_eq!(weather.celsius, 12.0);
}

/// Of two answers in one turn, the one that reads as the type is the run's, even second.
#[tokio::test]
async fn of_several_answers_in_a_turn_the_first_that_reads_is_taken() {
    let model = ScriptedModel::new([Turn::tool_calls([
        (OUTPUT_TOOL_NAME, json!({"city": "Oslo"})),
        (OUTPUT_TOOL_NAME, json!({"city": "Oslo", "celsius": 4})),
    ])]);
    let agent = AgentBuilder::new(model.clone()).build();
    let weather: Weather = agent.prompt("x").output().await.unwrap();
    assert_eq!(weather.celsius, 4.0);
    assert_eq!(model.requests().len(), 1, "no turn spent on the first one");
}

/// An output type whose `Deserialize` panics on a negative number.
#[derive(Debug, JsonSchema)]
struct Positive(#[allow(dead_code)] u32);

impl<'de> Deserialize<'de> for Positive {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = i64::deserialize(deserializer)?;
        assert!(value >= 0, "a negative count: {value}");
        Ok(Positive(value as u32))
    }
}

/// The output type's own code panicking on an answer is an answer that cannot be read: the
/// model is told, and the panic never reaches the caller's task.
#[tokio::test]
async fn an_output_type_that_panics_reading_an_answer_fails_it_not_the_caller() {
    let model = ScriptedModel::new([
        Turn::tool_call(OUTPUT_TOOL_NAME, json!({"response": -3})),
        Turn::tool_call(OUTPUT_TOOL_NAME, json!({"response": 4})),
    ]);
    let agent = AgentBuilder::new(model.clone()).build();
    let Positive(count) = agent.prompt("How many?").output().await.unwrap();
    assert_eq!(count, 4);
    let feedback = model.requests()[1].history.last().unwrap().text();
    assert!(
        feedback.contains("panicked: a negative count: -3"),
        "{feedback}"
    );
}

/// A typed run resumed typed is taken in whichever mode its request resolves to now: one
/// started through the output tool may go on in the model's native mode.
#[tokio::test]
async fn a_typed_run_resumed_typed_in_another_mode_goes_on() {
    let model = ScriptedModel::resumable([
        Turn::tool_call("lookup", json!({"city": "Paris"})),
        Turn::text(r#"{"city": "Paris", "celsius": 12}"#),
    ])
    .with_native_output();
    let agent = asking_agent(model);
    let store = reins::store::MemoryStore::new();
    suspended_typed_run(&agent, &store, "typed-modes").await;
    // `.output()` alone: native mode, since the model has it.
    let weather: Weather = agent
        .resume_stored(store.clone(), "typed-modes")
        .decide("t1c0", ToolDecision::approve())
        .output()
        .await
        .unwrap();
    assert_eq!(weather.celsius, 12.0);
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
struct Forecast {
    days: Vec<Weather>,
}

/// A typed answer wrong deep inside is refused naming the field, so the model fixes that one.
#[tokio::test]
async fn a_refused_answer_names_the_field_the_model_got_wrong() {
    let model = ScriptedModel::new([
        Turn::tool_call(
            OUTPUT_TOOL_NAME,
            json!({"days": [{"city": "Oslo", "celsius": -2}, {"city": "Oslo", "celsius": "cold"}]}),
        ),
        Turn::tool_call(
            OUTPUT_TOOL_NAME,
            json!({"days": [{"city": "Oslo", "celsius": -2}, {"city": "Oslo", "celsius": -4}]}),
        ),
    ]);
    let agent = AgentBuilder::new(model.clone()).build();
    let forecast = agent.prompt("x").output::<Forecast>().await.unwrap();
    assert_eq!(forecast.days[1].celsius, -4.0);
    let feedback = model.requests()[1].history.last().unwrap().text();
    assert!(
        feedback.contains("at `days[1].celsius`: invalid type: string \"cold\", expected f64"),
        "{feedback}"
    );
}
