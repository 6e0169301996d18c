//! The step port's names, keys, limits and refusals, with a stand-in port.

use super::*;

fn port() -> Steps {
    executing_port("run", |_, _| {})
}

#[tokio::test]
async fn a_step_returns_what_its_work_produced() {
    let steps = port();
    let value = steps
        .step("run/a".to_owned(), || async { Value::from(7) })
        .await;
    assert_eq!(value, Ok(Value::from(7)));
}

#[test]
fn step_keys_list_the_steps_in_order_whatever_order_the_keys_come_in() {
    let mut keys: Vec<String> = (1..=12)
        .map(|n| step_key(n, &format!("run/model/{n}")))
        .collect();
    keys.reverse();
    keys.extend(["pending".to_owned(), "failure".to_owned()]);
    let expected: Vec<String> = (1..=12).map(|n| format!("run/model/{n}")).collect();
    assert_eq!(steps_from_keys(Vec::new(), keys), expected);
    // A step's name may hold slashes: only the number is split off.
    assert_eq!(
        steps_from_keys(Vec::new(), vec![step_key(1, "run/record/a/b")]),
        ["run/record/a/b"]
    );
}

#[test]
fn steps_of_the_old_list_come_before_those_of_per_step_keys() {
    let legacy = vec!["run/model/1".to_owned(), "run/t1c0".to_owned()];
    let keys = vec![
        step_key(4, "run/t2c0"),
        LEGACY_STEPS_STATE.to_owned(),
        step_key(3, "run/model/2"),
    ];
    assert_eq!(
        steps_from_keys(legacy, keys),
        ["run/model/1", "run/t1c0", "run/model/2", "run/t2c0"]
    );
}

#[tokio::test]
async fn recorded_values_have_a_namespace_no_built_in_step_shares() {
    let names = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&names);
    let steps = executing_port("run", move |name, _| {
        seen.lock().expect("names").push(name.to_owned());
    });
    for name in ["model/1", "t1c0", "approval/t1c0"] {
        let value = steps.record(name, || async { 7u8 }).await;
        assert_eq!(value, Ok(7));
    }
    assert_eq!(
        *names.lock().expect("names"),
        [
            "run/record/model/1",
            "run/record/t1c0",
            "run/record/approval/t1c0"
        ]
    );
    assert_eq!(steps.next_model_step(), "run/model/1");
}

#[tokio::test]
async fn a_value_that_does_not_serialize_is_an_error_at_the_call_not_a_null() {
    // JSON objects have string keys only: this map cannot be journaled.
    let unserializable = || async { std::collections::BTreeMap::from([(vec![1u8], 1u8)]) };
    let journaled = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&journaled);
    let on_restate = executing_port("run", move |name, value| {
        seen.lock()
            .expect("journal")
            .push((name.to_owned(), value.clone()));
    });
    for steps in [on_restate, Steps::embedded()] {
        let Err(error) = steps.record("lookup", unserializable).await else {
            panic!("an unserializable value is refused");
        };
        assert!(error.step.ends_with("/record/lookup"), "{error}");
        assert!(
            error
                .message
                .starts_with("the value cannot be journaled: it does not serialize to JSON"),
            "{error}"
        );
    }
    assert!(
        journaled.lock().expect("journal").is_empty(),
        "no value (no null) was journaled"
    );
}

#[tokio::test]
async fn a_value_over_the_step_limit_is_the_step_s_failure_and_one_at_it_is_kept() {
    let journaled = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&journaled);
    let steps = executing_port("run", move |name, _| {
        seen.lock().expect("journal").push(name.to_owned());
    });
    // As JSON a string is its text and two quotes.
    let at_limit = "x".repeat(MAX_STEP_BYTES - 2);
    let kept = steps
        .step("run/fits".to_owned(), || async { Value::String(at_limit) })
        .await;
    assert!(kept.is_ok(), "a value of exactly the limit is journaled");
    let over = "x".repeat(MAX_STEP_BYTES - 1);
    let Err(error) = steps
        .step("run/over".to_owned(), || async { Value::String(over) })
        .await
    else {
        panic!("a value over the limit is refused");
    };
    assert_eq!(error.step, "run/over");
    assert_eq!(
        error.message,
        format!(
            "the result is {} bytes as JSON, more than a journaled step may hold \
             ({MAX_STEP_BYTES} bytes)",
            MAX_STEP_BYTES + 1
        )
    );
    assert_eq!(*journaled.lock().expect("journal"), ["run/fits"]);
}

#[tokio::test]
async fn a_step_inside_a_step_is_refused_instead_of_waiting_forever() {
    let steps = port();
    let inner = steps.clone();
    let outer = steps
        .step("run/outer".to_owned(), || async move {
            match inner.record("inner", || async { 1 }).await {
                Ok(value) => Value::from(value),
                Err(error) => Value::String(error.message),
            }
        })
        .await
        .expect("the outer step");
    assert_eq!(
        outer,
        Value::String(
            "a step cannot run inside another step (e.g. Steps::record inside a tool call)"
                .to_owned()
        )
    );
}
