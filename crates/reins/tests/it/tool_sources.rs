//! Tool sources: a list of tools that changes while the agent lives is taken between turns.

use futures::future::BoxFuture;
use reins::agent::*;
use reins::testing::{ScriptedModel, Turn};
use reins::tool::{ToolSet, ToolSource, tool_fn};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Deserialize, JsonSchema)]
struct Word {
    word: String,
}

fn echo(name: &str) -> ToolSet {
    let mut tools = ToolSet::new();
    let label = name.to_owned();
    tools.add(tool_fn(name, "Echoes a word.", move |args: Word| {
        let reply = format!("{label}: {}", args.word);
        async move { Ok::<_, String>(reply) }
    }));
    tools
}

/// A source whose list a test replaces; `fail` makes the next refreshes fail.
#[derive(Clone, Default)]
struct Switchboard {
    next: Arc<Mutex<Option<ToolSet>>>,
    fail: Arc<AtomicBool>,
    refreshes: Arc<AtomicUsize>,
    initial: Arc<Mutex<ToolSet>>,
}

impl Switchboard {
    fn starting_with(tools: ToolSet) -> Self {
        let board = Switchboard::default();
        *board.initial.lock().unwrap() = tools;
        board
    }

    fn announce(&self, tools: ToolSet) {
        *self.next.lock().unwrap() = Some(tools);
    }
}

impl ToolSource for Switchboard {
    fn current(&self) -> ToolSet {
        self.initial.lock().unwrap().clone()
    }

    fn changed(&self) -> bool {
        self.next.lock().unwrap().is_some()
    }

    fn refresh(&self) -> BoxFuture<'_, Result<ToolSet, String>> {
        Box::pin(async move {
            self.refreshes.fetch_add(1, Ordering::SeqCst);
            if self.fail.load(Ordering::SeqCst) {
                return Err("the server is restarting".to_owned());
            }
            self.next
                .lock()
                .unwrap()
                .take()
                .ok_or_else(|| "nothing announced".to_owned())
        })
    }
}

fn advertised(request: &reins::completion::CompletionRequest) -> Vec<String> {
    request.tools.iter().map(|tool| tool.name.clone()).collect()
}

#[tokio::test]
async fn a_new_list_is_advertised_and_callable_from_the_next_turn() {
    let board = Switchboard::starting_with(echo("old"));
    let model = ScriptedModel::new([
        Turn::tool_call("old", json!({"word": "one"})),
        Turn::tool_call("new", json!({"word": "two"})),
        Turn::text("done"),
    ]);
    let announcer = board.clone();
    let agent = AgentBuilder::new(model.clone())
        .tool(tool_fn("fixed", "Always there.", |args: Word| async move {
            Ok::<_, String>(args.word)
        }))
        .tool_source(board.clone())
        // The server announces its new list while the first turn runs.
        .add_hook(after_first_outcome(move || {
            let mut tools = echo("new");
            tools.extend_from(&echo("other"));
            announcer.announce(tools);
        }))
        .build();
    assert_eq!(agent.tools().names().collect::<Vec<_>>(), ["fixed", "old"]);

    let run = agent.prompt("go").extended_details().await.unwrap();
    assert_eq!(run.output, "done");
    let requests = model.requests();
    assert_eq!(advertised(&requests[0]), ["fixed", "old"]);
    assert_eq!(advertised(&requests[1]), ["fixed", "new", "other"]);
    assert_eq!(board.refreshes.load(Ordering::SeqCst), 1);
    let results: Vec<String> = run
        .tool_results()
        .map(|result| result.content.clone())
        .collect();
    assert_eq!(results, ["old: one", "new: two"]);

    // The next run starts from the refreshed list without listing again.
    model.push([Turn::text("again")]);
    assert_eq!(agent.prompt("again").await.unwrap(), "again");
    assert_eq!(advertised(&model.requests()[3]), ["fixed", "new", "other"]);
    assert_eq!(board.refreshes.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_failed_refresh_keeps_the_tools_and_is_tried_again_next_turn() {
    let board = Switchboard::starting_with(echo("old"));
    board.fail.store(true, Ordering::SeqCst);
    board.announce(echo("new"));
    let model = ScriptedModel::new([
        Turn::tool_call("old", json!({"word": "still here"})),
        Turn::tool_call("new", json!({"word": "arrived"})),
        Turn::text("done"),
    ]);
    let healer = board.clone();
    let agent = AgentBuilder::new(model.clone())
        .tool_source(board.clone())
        .add_hook(after_first_outcome(move || {
            healer.fail.store(false, Ordering::SeqCst)
        }))
        .build();
    assert_eq!(agent.prompt("go").await.unwrap(), "done");
    let requests = model.requests();
    assert_eq!(
        advertised(&requests[0]),
        ["old"],
        "the failed refresh kept the list"
    );
    assert_eq!(advertised(&requests[1]), ["new"]);
    assert_eq!(board.refreshes.load(Ordering::SeqCst), 2);
}

/// A hook that runs `once` after the first outcome of the agent's life (the first model
/// turn's).
fn after_first_outcome(once: impl Fn() + Send + Sync + 'static) -> impl AgentHook {
    struct AfterFirstOutcome<F> {
        once: F,
        done: AtomicBool,
    }
    impl<F: Fn() + Send + Sync + 'static> AgentHook for AfterFirstOutcome<F> {
        async fn on_outcome(&self, _: &HookContext, _: OutcomeEvent<'_>) -> OutcomeAction {
            if !self.done.swap(true, Ordering::SeqCst) {
                (self.once)();
            }
            OutcomeAction::Proceed
        }
    }
    AfterFirstOutcome {
        once,
        done: AtomicBool::new(false),
    }
}

/// A source that panics in `changed` or in `refresh` (before returning its future).
struct Panicky {
    in_changed: bool,
}

impl ToolSource for Panicky {
    fn current(&self) -> ToolSet {
        echo("steady")
    }

    fn changed(&self) -> bool {
        assert!(!self.in_changed, "source bug in changed");
        true
    }

    fn refresh(&self) -> BoxFuture<'_, Result<ToolSet, String>> {
        panic!("source bug in refresh")
    }
}

#[tokio::test]
async fn a_source_that_panics_keeps_its_tools_and_the_run_goes_on() {
    for in_changed in [true, false] {
        let model = ScriptedModel::new([
            Turn::tool_call("steady", json!({"word": "one"})),
            Turn::text("done"),
        ]);
        let agent = AgentBuilder::new(model.clone())
            .tool_source(Panicky { in_changed })
            .build();
        // Awaited in a task of its own: a panic escaping the run would end the task.
        let run = tokio::spawn(agent.prompt("go").extended_details().into_future()).await;
        let response = match run {
            Ok(Ok(response)) => response,
            other => panic!("in_changed = {in_changed}: expected an answer, got {other:?}"),
        };
        assert_eq!(response.output, "done");
        let results: Vec<_> = response.tool_results().map(|r| r.content.clone()).collect();
        assert_eq!(results, ["steady: one"], "in_changed = {in_changed}");
        assert!(
            model.requests().iter().all(|r| advertised(r) == ["steady"]),
            "the source's first tools stayed advertised"
        );
    }
}

#[tokio::test]
async fn a_source_cannot_stand_in_for_a_tool_the_agent_already_has() {
    // A server lists `transfer` beside its own tool, at the start and again after a refresh;
    // a second source lists `lookup`, which the first already has.
    let mut listed = echo("transfer");
    listed.extend_from(&echo("lookup"));
    let board = Switchboard::starting_with(listed);
    let later = Switchboard::starting_with(echo("lookup"));
    let model = ScriptedModel::new([
        Turn::tool_call("transfer", json!({"word": "one"})),
        Turn::tool_call("transfer", json!({"word": "two"})),
        Turn::tool_call("lookup", json!({"word": "three"})),
        Turn::text("done"),
    ]);
    let announcer = board.clone();
    let agent = AgentBuilder::new(model.clone())
        .tool(tool_fn(
            "transfer",
            "The application's own.",
            |args: Word| async move { Ok::<_, String>(format!("own transfer: {}", args.word)) },
        ))
        .tool_source(board.clone())
        .tool_source(later)
        .add_hook(after_first_outcome(move || {
            let mut tools = echo("transfer");
            tools.extend_from(&echo("lookup"));
            announcer.announce(tools);
        }))
        .build();
    assert_eq!(
        agent.tools().names().collect::<Vec<_>>(),
        ["transfer", "lookup"]
    );
    let run = agent.prompt("go").extended_details().await.unwrap();
    let results: Vec<String> = run
        .tool_results()
        .map(|result| result.content.clone())
        .collect();
    // Before and after the refresh the agent's own tool answers, and the first source's
    // `lookup` is the one called.
    assert_eq!(
        results,
        ["own transfer: one", "own transfer: two", "lookup: three"]
    );
    assert_eq!(board.refreshes.load(Ordering::SeqCst), 1);
    let description =
        |request: &reins::completion::CompletionRequest| request.tools[0].description.clone();
    for request in model.requests() {
        assert_eq!(description(&request), "The application's own.");
    }
}
