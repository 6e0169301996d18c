//! The approval policy's own denials: a decider that times out, panics or gives no decision
//! is told of the denial the policy made for it, so a decider that records its decisions
//! records that one.

use reins::agent::AgentBuilder;
use reins::hooks::approval::{
    ApprovalDecider, ApprovalPolicy, ApprovalRequest, DeciderFailure, Decision, Rule,
};
use reins::message::Message;
use reins::testing::{ScriptedModel, Turn};
use reins::tool::tool_fn;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What a decider was told of: the call, why the policy decided, and the denial.
type Told = Arc<Mutex<Vec<(String, String, Decision)>>>;

/// How a [`Failing`] decider fails.
#[derive(Clone, Copy, PartialEq)]
enum Fails {
    Never,
    Panics,
    Unanswered,
}

/// A decider that never answers, panics, or says it cannot decide, and keeps what it is
/// told.
struct Failing {
    fails: Fails,
    told: Told,
}

impl ApprovalDecider for Failing {
    async fn decide(&self, _: &ApprovalRequest) -> Decision {
        if self.fails == Fails::Panics {
            panic!("decider bug");
        }
        std::future::pending().await
    }

    async fn try_decide(&self, request: &ApprovalRequest) -> Result<Decision, DeciderFailure> {
        match self.fails {
            Fails::Unanswered => Err(DeciderFailure::NoDecision(
                "the approval service gave no decision (it answered with status 500)".to_owned(),
            )),
            _ => Ok(self.decide(request).await),
        }
    }

    async fn failed_to_answer(
        &self,
        request: &ApprovalRequest,
        failure: &DeciderFailure,
        denial: &Decision,
    ) {
        self.told.lock().unwrap().push((
            request.internal_call_id.clone(),
            failure.to_string(),
            denial.clone(),
        ));
    }
}

/// Runs one `transfer` call past a policy asking `decider`; the tool result the model saw.
async fn asked(decider: Failing) -> String {
    let model = ScriptedModel::new([
        Turn::tool_call("transfer", json!({"amount": 5})),
        Turn::text("done"),
    ]);
    let transfer = tool_fn("transfer", "Moves money.", |_: Value| async {
        Ok::<_, std::convert::Infallible>("moved")
    });
    let policy = ApprovalPolicy::new()
        .rule(Rule::ask("*"))
        .decider(decider)
        .timeout(Duration::from_millis(20));
    let agent = AgentBuilder::new(model.clone())
        .tool(transfer)
        .add_hook(policy)
        .build();
    assert_eq!(agent.prompt("pay").await.unwrap(), "done");
    model.requests()[1]
        .history
        .iter()
        .find(|message| matches!(message, Message::Tool(_)))
        .map(Message::text)
        .expect("the call's result")
}

#[tokio::test]
async fn a_decider_that_timed_out_is_told_of_the_policys_denial() {
    let told = Told::default();
    let seen = asked(Failing {
        fails: Fails::Never,
        told: Arc::clone(&told),
    })
    .await;
    assert_eq!(
        *told.lock().unwrap(),
        [(
            "t1c0".to_owned(),
            "the decider timed out after 20 ms".to_owned(),
            Decision::deny(seen),
        )]
    );
}

#[tokio::test]
async fn a_decider_that_panicked_is_told_of_the_policys_denial() {
    let told = Told::default();
    let seen = asked(Failing {
        fails: Fails::Panics,
        told: Arc::clone(&told),
    })
    .await;
    assert!(seen.contains("the approver panicked"), "{seen}");
    assert_eq!(
        *told.lock().unwrap(),
        [(
            "t1c0".to_owned(),
            "the decider panicked".to_owned(),
            Decision::deny(seen),
        )]
    );
}

#[tokio::test]
async fn a_decider_that_gave_no_decision_is_told_of_the_policys_denial() {
    let told = Told::default();
    let seen = asked(Failing {
        fails: Fails::Unanswered,
        told: Arc::clone(&told),
    })
    .await;
    assert_eq!(
        seen,
        "`transfer` was not run: the approval service gave no decision (it answered with \
         status 500)"
    );
    assert_eq!(
        *told.lock().unwrap(),
        [(
            "t1c0".to_owned(),
            "the approval service gave no decision (it answered with status 500)".to_owned(),
            Decision::deny(seen),
        )]
    );
}
