//! What the README says of traces holds for the spans reins records.

use crate::harness::{NamedModel, Recorded, attr, attr_str, span};
use reins::agent::AgentBuilder;
use reins::testing::Turn;
use reins_otel::Telemetry;
use serde_json::{Map, Value};

/// The tags the README's `trace_link` example searches a trace viewer for (the JSON of its
/// `tags=` parameter), with `{run}` replaced by `run_id`.
fn trace_link_tags(run_id: &str) -> Map<String, Value> {
    let readme = include_str!("../../../../README.md");
    let line = readme
        .lines()
        .find(|line| line.contains("trace_link = \""))
        .expect("the README shows a trace_link");
    let url = line.split('"').nth(1).expect("a quoted URL");
    let tags = url.split("tags=").nth(1).expect("a tags= parameter");
    let decoded = percent_decoded(tags).replace("{run}", run_id);
    serde_json::from_str(&decoded).unwrap_or_else(|error| panic!("{decoded}: {error}"))
}

/// `text` with its `%XX` escapes decoded.
fn percent_decoded(text: &str) -> String {
    let mut bytes = Vec::new();
    let mut rest = text.as_bytes();
    while let Some((&first, tail)) = rest.split_first() {
        if first == b'%' && tail.len() >= 2 {
            let hex = std::str::from_utf8(&tail[..2]).unwrap();
            bytes.push(u8::from_str_radix(hex, 16).unwrap());
            rest = &tail[2..];
        } else {
            bytes.push(first);
            rest = tail;
        }
    }
    String::from_utf8(bytes).unwrap()
}

#[tokio::test]
async fn the_readmes_trace_link_searches_for_attributes_the_run_span_has() {
    let recorded = Recorded::start(Telemetry::new());
    let agent = AgentBuilder::new(NamedModel::new([Turn::text("hi")])).build();
    // A run of a conversation, as each of `reins chat`'s is: its link finds the run all the
    // same.
    agent
        .prompt("hello")
        .run_id("run-7")
        .conversation_id("chat-1")
        .await
        .unwrap();
    let spans = recorded.spans();
    let run = span(&spans, "invoke_agent");
    let tags = trace_link_tags("run-7");
    assert!(!tags.is_empty());
    for (key, value) in tags {
        assert_eq!(Value::String(attr_str(run, &key)), value, "{key}");
    }
}

/// The crate docs' paragraph on how an `invoke_agent` span names its agent and its run.
fn agent_identity_docs() -> String {
    let crate_docs = include_str!("../../src/lib.rs");
    let paragraph: Vec<&str> = crate_docs
        .split("\n//!\n")
        .find(|paragraph| paragraph.contains("which agent ran"))
        .expect("the crate docs say how a run's span names its agent")
        .lines()
        .map(|line| line.trim_start_matches("//!").trim())
        .collect();
    paragraph.join(" ")
}

#[tokio::test]
async fn a_run_span_names_its_agent_and_run_as_the_crate_docs_say_and_has_no_agent_id() {
    let docs = agent_identity_docs();
    // The docs say why the conventions' agent id is left out, and what carries the run.
    for named in [
        "`gen_ai.agent.id`",
        "`gen_ai.agent.name`",
        "`gen_ai.conversation.id`",
        "`reins.run.id`",
    ] {
        assert!(docs.contains(named), "{named} in: {docs}");
    }

    let recorded = Recorded::start(Telemetry::new());
    let agent = AgentBuilder::new(NamedModel::new([Turn::text("hi"), Turn::text("hi")]))
        .name("weather")
        .build();
    agent.prompt("hello").run_id("run-1").await.unwrap();
    agent.prompt("hello").run_id("run-2").await.unwrap();
    let spans = recorded.spans();
    let runs: Vec<_> = spans
        .iter()
        .filter(|span| span.name == "invoke_agent weather")
        .collect();
    assert_eq!(runs.len(), 2);
    for (run, run_id) in runs.iter().zip(["run-1", "run-2"]) {
        assert_eq!(attr_str(run, "gen_ai.agent.name"), "weather");
        assert_eq!(attr_str(run, "reins.run.id"), run_id);
        assert_eq!(attr_str(run, "gen_ai.conversation.id"), run_id);
        assert_eq!(attr(run, "gen_ai.agent.id"), None, "{:?}", run.attributes);
    }
}
