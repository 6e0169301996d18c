//! An awaited run ([`RunFuture`]): runs one after another on a thread share one allocation,
//! and nothing of a finished or dropped run reaches the next.

use crate::common::{Recorder, add_tool};
use futures::future::FusedFuture;
use reins::agent::{AgentBuilder, OUTPUT_TOOL_NAME, RunFuture};
use reins::message::Message;
use reins::testing::{ScriptedModel, Turn};
use reins::tool::tool_fn;
use serde_json::json;
use std::future::{Future, IntoFuture};
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Waker};

#[tokio::test]
async fn runs_awaited_one_after_another_each_see_only_their_own_turns() {
    for round in 0..6_i64 {
        let model = ScriptedModel::new([
            Turn::tool_call("add", json!({"a": round, "b": 1})),
            Turn::text(format!("round {round}")),
        ]);
        let recorder = Recorder::default();
        let agent = AgentBuilder::new(model)
            .tool(add_tool())
            .add_hook(recorder.clone())
            .build();

        let response = agent
            .prompt(format!("question {round}"))
            .extended_details()
            .await
            .unwrap();

        assert_eq!(response.output, format!("round {round}"));
        // The prompt, the call, its result and the answer: nothing of the earlier runs.
        assert_eq!(response.history().len(), 4, "{:?}", response.history());
        let lines = recorder.lines();
        assert_eq!(
            lines.first().map(String::as_str),
            Some(&*format!("run_start question {round}"))
        );
        assert!(
            lines.contains(&format!("tool_result add {}", round + 1)),
            "{lines:?}"
        );
        assert_eq!(
            lines.last().map(String::as_str),
            Some(&*format!("settled ok round {round}"))
        );
    }
}

/// A typed answer.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Sum {
    sum: i64,
}

#[tokio::test]
async fn a_run_after_answered_runs_starts_from_its_own_prompt_and_history_alone() {
    for round in 0..4_i64 {
        // Answered as text (and as a typed value): the run's history is not handed back, so
        // its buffer serves the thread's next run.
        let answer_turn = if round % 2 == 0 {
            Turn::text(format!("{}", round + 2))
        } else {
            Turn::tool_call(OUTPUT_TOOL_NAME, json!({"sum": round + 2}))
        };
        let model = ScriptedModel::new([
            Turn::tool_call("add", json!({"a": round, "b": 2})),
            answer_turn,
        ]);
        let agent = AgentBuilder::new(model.clone()).tool(add_tool()).build();
        let answer = if round % 2 == 0 {
            agent.prompt(format!("text {round}")).await.unwrap()
        } else {
            let typed = agent.prompt(format!("typed {round}")).output::<Sum>();
            typed.await.unwrap().sum.to_string()
        };
        assert_eq!(answer, format!("{}", round + 2));
        let first = &model.requests()[0].history;
        assert_eq!(first.len(), 1, "round {round}: {first:?}");
        assert_eq!(model.requests()[1].history.len(), 3, "round {round}");

        // A run given an earlier conversation keeps it, and nothing else.
        let model = ScriptedModel::new([Turn::text("ok")]);
        let agent = AgentBuilder::new(model.clone()).build();
        let earlier = vec![
            Message::user(format!("earlier {round}")),
            Message::assistant("yes"),
        ];
        agent
            .prompt("and now?")
            .with_history(earlier.clone())
            .await
            .unwrap();
        let seen = &model.requests()[0].history;
        assert_eq!(seen[..2], earlier[..], "round {round}");
        assert_eq!(seen.len(), 3, "round {round}: {seen:?}");
    }
}

#[tokio::test]
async fn runs_awaited_side_by_side_on_one_thread_keep_apart() {
    let agent = |answer: &'static str| {
        AgentBuilder::new(ScriptedModel::new([
            Turn::tool_call("add", json!({"a": 1, "b": 2})),
            Turn::text(answer),
        ]))
        .tool(add_tool())
        .build()
    };
    // Each round finishes three runs together, so the next round starts from the spares.
    for _ in 0..3 {
        let (first, second, third) = (agent("first"), agent("second"), agent("third"));
        let (a, b, c) = tokio::join!(
            first.prompt("1"),
            second.prompt("2").into_future(),
            third.prompt("3")
        );
        assert_eq!(
            (a.unwrap(), b.unwrap(), c.unwrap()),
            ("first".into(), "second".into(), "third".into())
        );
    }
}

/// Sets its flag when dropped: a tool's future still running holds one.
struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn a_run_dropped_before_it_finishes_drops_its_tool_at_once_and_the_next_run_is_whole() {
    let dropped = Arc::new(AtomicBool::new(false));
    let flag = dropped.clone();
    let wait = tool_fn("wait", "Waits forever.", move |_: serde_json::Value| {
        let guard = SetOnDrop(flag.clone());
        async move {
            std::future::pending::<()>().await;
            drop(guard);
            Ok::<_, std::convert::Infallible>("never")
        }
    });
    let agent = AgentBuilder::new(ScriptedModel::new([Turn::tool_call("wait", json!({}))]))
        .tool(wait)
        .build();

    let mut run: RunFuture<String> = agent.prompt("Wait.").into_future();
    let mut cx = Context::from_waker(Waker::noop());
    assert!(std::pin::Pin::new(&mut run).poll(&mut cx).is_pending());
    assert!(!dropped.load(Ordering::SeqCst), "the tool is running");
    drop(run);
    assert!(
        dropped.load(Ordering::SeqCst),
        "dropping the run dropped the tool's future"
    );

    let agent = AgentBuilder::new(ScriptedModel::new([Turn::text("fresh")])).build();
    assert_eq!(agent.prompt("Again.").await.unwrap(), "fresh");
}

#[test]
fn a_finished_run_polled_again_stays_pending() {
    let agent = AgentBuilder::new(ScriptedModel::new([Turn::text("done")])).build();
    let mut run = pin!(agent.prompt("Hi").into_future());
    assert!(!run.is_terminated());
    let mut cx = Context::from_waker(Waker::noop());
    let Poll::Ready(answer) = run.as_mut().poll(&mut cx) else {
        panic!("a scripted text turn finishes in one poll");
    };
    assert_eq!(answer.unwrap(), "done");
    assert!(run.is_terminated());
    assert!(run.as_mut().poll(&mut cx).is_pending());
    assert!(format!("{run:?}").contains("finished: true"), "{run:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_finishing_on_worker_threads_give_each_task_its_own_answer() {
    let mut tasks = Vec::new();
    for n in 0..64 {
        tasks.push(tokio::spawn(async move {
            let agent = AgentBuilder::new(ScriptedModel::new([
                Turn::tool_call("add", json!({"a": n, "b": n})),
                Turn::text(format!("answer {n}")),
            ]))
            .tool(add_tool())
            .build();
            let response = agent.prompt("go").extended_details().await.unwrap();
            let history = response.history().len();
            (n, response.output, history)
        }));
    }
    for task in tasks {
        let (n, output, history) = task.await.unwrap();
        assert_eq!((output, history), (format!("answer {n}"), 4));
    }
}
