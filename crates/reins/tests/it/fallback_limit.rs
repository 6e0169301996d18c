//! A model fallback chain longer than a turn's model calls: the run's error still names every
//! model that failed, and says why the rest were not tried.

use reins::agent::{
    AgentBuilder, AgentHook, EMPTY_ANSWER, FailedCall, HookContext, MAX_MODEL_CALLS_PER_TURN,
    OutcomeAction, OutcomeEvent, PromptError,
};
use reins::completion::CompletionError;
use reins::hooks::fallback::ModelFallback;
use reins::testing::{ScriptedModel, Turn};

fn down(label: &str) -> CompletionError {
    CompletionError::Http {
        status: 503,
        body: format!("{label} is down"),
    }
}

#[tokio::test]
async fn a_chain_longer_than_the_turns_calls_keeps_every_failure() {
    let labels = chain(MAX_MODEL_CALLS_PER_TURN + 2);
    let agent = falling_back(&labels, |_, label| Turn::error(down(label)));

    let failure = CompletionFailure::of(agent.prompt("hi").await);
    let tried = &labels[..MAX_MODEL_CALLS_PER_TURN];
    let expected: Vec<FailedCall> = tried
        .iter()
        .map(|label| FailedCall::new(label.clone(), down(label)))
        .collect();
    assert_eq!(
        failure.failed_calls, expected,
        "every failed call, oldest first"
    );
    assert_eq!(failure.source, down(&tried[MAX_MODEL_CALLS_PER_TURN - 1]));
    assert!(failure.call_limit_reached);
    let message = &failure.message;
    for label in tried {
        assert!(
            message.contains(&format!("{label}: the provider answered HTTP 503")),
            "{message}"
        );
    }
    assert!(
        message.ends_with(&format!(
            "the turn made its limit of {MAX_MODEL_CALLS_PER_TURN} model calls, so the next \
             model was not tried"
        )),
        "{message}"
    );
}

/// What a run that ended with its models' failures reports.
struct CompletionFailure {
    message: String,
    source: CompletionError,
    failed_calls: Vec<FailedCall>,
    call_limit_reached: bool,
}

impl CompletionFailure {
    /// The failure `outcome` ended with; panics unless it is the models' failures.
    fn of<T: std::fmt::Debug>(outcome: Result<T, PromptError>) -> Self {
        let error = outcome.expect_err("the run should fail");
        let message = error.to_string();
        let PromptError::Completion {
            source,
            failed_calls,
            call_limit_reached,
            ..
        } = error
        else {
            panic!("expected the models' failures, got {error:?}");
        };
        CompletionFailure {
            message,
            source,
            failed_calls,
            call_limit_reached,
        }
    }
}

/// The chain's labels: `default`, then `backup1`, `backup2`… (`count` in all).
fn chain(count: usize) -> Vec<String> {
    (0..count)
        .map(|index| match index {
            0 => "default".to_owned(),
            n => format!("backup{n}"),
        })
        .collect()
}

/// An agent whose model under each of `labels` answers `turn(label)`, falling back along them.
fn falling_back(labels: &[String], turn: impl Fn(usize, &str) -> Turn) -> reins::agent::Agent {
    let mut builder = AgentBuilder::new(ScriptedModel::new([turn(0, &labels[0])]));
    for (index, label) in labels.iter().enumerate().skip(1) {
        builder = builder.named_model(label.clone(), ScriptedModel::new([turn(index, label)]));
    }
    builder
        .add_hook(ModelFallback::new(labels.to_vec()))
        .build()
}

fn empty_answer() -> CompletionError {
    CompletionError::Other(EMPTY_ANSWER.to_owned())
}

/// The call at the limit answers empty: the run fails as when it fails at the limit, the
/// empty answer one of the failed calls, rather than with a rejected action.
#[tokio::test]
async fn an_empty_answer_at_the_limit_is_a_failed_call_of_the_turn() {
    let labels = chain(MAX_MODEL_CALLS_PER_TURN + 2);
    let last = MAX_MODEL_CALLS_PER_TURN - 1;
    let agent = falling_back(&labels, |index, label| match index {
        index if index == last => Turn::text(""),
        _ => Turn::error(down(label)),
    });
    let failure = CompletionFailure::of(agent.prompt("hi").await);
    let mut expected: Vec<FailedCall> = labels[..last]
        .iter()
        .map(|label| FailedCall::new(label.clone(), down(label)))
        .collect();
    expected.push(FailedCall::new(labels[last].clone(), empty_answer()));
    assert_eq!(failure.failed_calls, expected);
    assert_eq!(failure.source, empty_answer());
    assert!(failure.call_limit_reached);
    let message = &failure.message;
    assert!(
        message.contains(&format!("{}: {EMPTY_ANSWER}", labels[last])),
        "{message}"
    );
}

/// An empty answer the chain went past is named with the failures when the chain ends on one.
#[tokio::test]
async fn an_empty_answer_passed_over_is_among_the_failed_calls() {
    let labels = chain(2);
    let agent = falling_back(&labels, |index, label| match index {
        0 => Turn::text(" "),
        _ => Turn::error(down(label)),
    });
    match agent.prompt("hi").await {
        Err(PromptError::Completion {
            failed_calls,
            call_limit_reached: false,
            ..
        }) => assert_eq!(
            failed_calls,
            [
                FailedCall::new("default", empty_answer()),
                FailedCall::new("backup1", down("backup1")),
            ]
        ),
        other => panic!("expected the models' failures, got {other:?}"),
    }
}

/// Asks for the turn again on `default` whatever its outcome.
struct AlwaysRetry;

impl AgentHook for AlwaysRetry {
    async fn on_outcome(&self, _: &HookContext, _: OutcomeEvent<'_>) -> OutcomeAction {
        OutcomeAction::retry_on("default")
    }
}

#[tokio::test]
async fn a_hook_retrying_an_answer_past_the_limit_is_rejected_with_the_failures_so_far() {
    // One call fails, the rest answer: the hook's endless retry is the run's problem, and its
    // reason still says what failed.
    let mut turns = vec![Turn::error(down("default"))];
    turns.extend((1..MAX_MODEL_CALLS_PER_TURN).map(|_| Turn::text("an answer")));
    let agent = AgentBuilder::new(ScriptedModel::new(turns))
        .add_hook(AlwaysRetry)
        .build();
    match agent.prompt("hi").await {
        Err(PromptError::RejectedAction { reason, .. }) => {
            assert!(
                reason.contains(&format!("{MAX_MODEL_CALLS_PER_TURN} model calls"))
                    && reason.contains("default: the provider answered HTTP 503: default is down"),
                "{reason}"
            );
        }
        other => panic!("expected the retry to be rejected, got {other:?}"),
    }
}
