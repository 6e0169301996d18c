//! A run's timeline as its page shows it: its status, then its steps, each cut to
//! [`TIMELINE_STEP_BYTES`], the latest [`MOST_TIMELINE_STEPS`] of them (the page is fetched
//! again every two seconds while it is open; `reins runs show` prints the whole run).

use super::escape::escape;
use crate::approve::pretty;
use crate::run::token_counts;
use crate::runs::{Step, failure_shown, model_shown, status_name, timeline};
use reins::agent::{RunState, RunStatus};
use std::fmt::Write;

/// The most bytes of one step a run's timeline shows: the page is fetched again every two
/// seconds while it is open, and a waiting call's arguments are shown whole in its form.
const TIMELINE_STEP_BYTES: usize = 16 * 1024;

/// The most bytes of a tool's name a timeline step shows: the name is the model's, so a
/// hostile one could fill the page with it as with arguments; a real tool's name is a few
/// dozen characters.
const TIMELINE_NAME_BYTES: usize = 256;

/// `text`, or its start within [`TIMELINE_STEP_BYTES`] (at a char boundary) and how much more
/// there is, which `reins runs show` prints whole.
pub(super) fn cut_for_timeline(text: &str) -> std::borrow::Cow<'_, str> {
    cut(text, TIMELINE_STEP_BYTES)
}

/// `text`, or its start within `most` bytes and how much more there is.
fn cut(text: &str, most: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= most {
        return std::borrow::Cow::Borrowed(text);
    }
    let end = (0..=most)
        .rev()
        .find(|&end| text.is_char_boundary(end))
        .unwrap_or(0);
    std::borrow::Cow::Owned(format!(
        "{}\n… [{} more bytes: `reins runs show` prints the whole step]",
        &text[..end],
        text.len() - end
    ))
}

/// A run's status as the runs table and the run's page say it: a suspended run waits for a decision (`waiting`
/// calls wait for one), or, every call decided, for someone to resume it. The row's
/// `data-status`, `runs list` and `--json` keep the stored status's word.
pub(super) fn status_shown(state: &RunState, waiting: usize) -> &'static str {
    match state.status {
        RunStatus::Suspended if waiting > 0 => "waiting for a decision",
        RunStatus::Suspended => "decided, waiting to resume",
        status => status_name(status),
    }
}

/// The most steps of a run's timeline its page shows: the latest, after a line saying how many
/// earlier ones are not shown. The page is built and sent again every two seconds while it is
/// open, and each step may hold up to [`TIMELINE_STEP_BYTES`]: 200 steps (some 65 turns of a
/// model calling a tool) keep it to a few megabytes at worst, and cover what a person deciding
/// a waiting call reads back.
pub(super) const MOST_TIMELINE_STEPS: usize = 200;

/// A run's status and timeline (the live part of its page), its latest
/// [`MOST_TIMELINE_STEPS`] steps; `waiting` calls wait for a decision.
pub(super) fn run_timeline(state: &RunState, waiting: usize, own_model: &str) -> String {
    let mut html = format!(
        "<p>status: <b id=\"status\" data-status=\"{}\">{}</b> — {} turn(s), model {}, {}</p>",
        status_name(state.status),
        status_shown(state, waiting),
        state.turn,
        escape(&model_shown(state, own_model)),
        token_counts(&state.usage),
    );
    if let Some(failure) = failure_shown(state) {
        let _ = write!(
            html,
            "<div class=\"failure\"><b>why it failed</b><pre id=\"failure\">{}</pre></div>",
            escape(failure)
        );
    }
    let steps = timeline(state);
    let hidden = steps.len().saturating_sub(MOST_TIMELINE_STEPS);
    if hidden > 0 {
        let _ = write!(
            html,
            "<p id=\"steps-hidden\">{hidden} earlier step(s) are not shown here: \
             <code>reins runs show</code> prints every step.</p>"
        );
    }
    html.push_str("<div id=\"timeline\">");
    for step in steps.into_iter().skip(hidden) {
        let _ = match step {
            Step::User(text) => write!(
                html,
                "<div class=\"step user\"><b>user</b><pre>{}</pre></div>",
                escape(&cut_for_timeline(&text))
            ),
            Step::Assistant(text) => write!(
                html,
                "<div class=\"step assistant\"><b>assistant</b><pre>{}</pre></div>",
                escape(&cut_for_timeline(&text))
            ),
            Step::Call { tool, args } => write!(
                html,
                "<div class=\"step call\"><b>tool call</b> {}<pre>{}</pre></div>",
                escape(&cut(&tool, TIMELINE_NAME_BYTES)),
                escape(&cut_for_timeline(&pretty(&args)))
            ),
            Step::Hook { kind, value } => write!(
                html,
                "<div class=\"step hook\"><b>hook record</b> {}<pre>{}</pre></div>",
                escape(&kind),
                escape(&cut_for_timeline(&value.to_string()))
            ),
            Step::Result { tool, output } => write!(
                html,
                "<div class=\"step result\"><b>result of</b> {}<pre>{}</pre></div>",
                escape(&cut(&tool, TIMELINE_NAME_BYTES)),
                escape(&cut_for_timeline(&output))
            ),
        };
    }
    html.push_str("</div>");
    html
}

#[cfg(test)]
mod tests {
    use super::*;
    use reins::agent::AgentBuilder;
    use reins::completion::Usage;
    use reins::message::{AssistantContent, Message, OneOrMany};
    use reins::testing::{ScriptedModel, Turn};

    /// A run with nothing in it yet.
    fn empty_state() -> RunState {
        serde_json::from_value(serde_json::json!({
            "version": 1, "run_id": "long", "agent_name": null, "turn": 0,
            "history": [], "usage": {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0},
            "entries": [], "last_model": null, "invalid_tool_call_retries": 0
        }))
        .expect("a minimal state")
    }

    /// The timeline of a run of `model` answering "hi".
    async fn timeline_of(model: ScriptedModel) -> String {
        let run = AgentBuilder::new(model)
            .build()
            .prompt("hi")
            .extended_details();
        let state = run.await.unwrap().state;
        run_timeline(&state, 0, "m")
    }

    #[tokio::test]
    async fn a_huge_step_is_cut_in_the_timeline() {
        let big = "é".repeat(50_000);
        let page = timeline_of(ScriptedModel::new([Turn::text(big.clone())])).await;
        assert!(page.len() < TIMELINE_STEP_BYTES + 2_000, "{}", page.len());
        assert!(
            page.contains(&format!(
                "… [{} more bytes",
                big.len() - TIMELINE_STEP_BYTES
            )),
            "cut at a char boundary, saying how much is left"
        );
    }

    #[test]
    fn a_huge_tool_name_from_the_model_is_cut_in_the_timeline() {
        // A name the model made up, which both its call and the answer to it name.
        let name = "n".repeat(1_000_000);
        let mut state = empty_state();
        state.history.push(Message::Assistant {
            content: OneOrMany::one(AssistantContent::tool_call(
                "c1",
                name.clone(),
                serde_json::json!({}),
            )),
        });
        state
            .history
            .push(Message::tool_result("c1", name.clone(), "no such tool"));
        let page = run_timeline(&state, 0, "m");
        assert!(page.contains("<b>tool call</b> nnn"), "{}", &page[..500]);
        assert!(page.contains("<b>result of</b> nnn"), "{}", &page[..500]);
        assert!(page.len() < 8_000, "{}", page.len());
        let left = format!("… [{} more bytes", name.len() - TIMELINE_NAME_BYTES);
        assert_eq!(page.matches(&left).count(), 2, "says how much is left");
    }

    #[tokio::test]
    async fn huge_token_counts_are_shown_as_given() {
        // A hostile provider's counts: their sum would overflow (the runs table's column
        // saturates it, `runs::tokens`); the run's page shows each.
        let model = ScriptedModel::new([Turn::text("ok").usage(Usage::new(u64::MAX, 7))]);
        let page = timeline_of(model).await;
        assert!(page.contains(&format!("{} prompt + 7 generated tokens", u64::MAX)));
    }

    #[test]
    fn a_run_of_many_steps_shows_the_latest_and_says_how_many_are_hidden() {
        let mut state = empty_state();
        let steps = MOST_TIMELINE_STEPS * 5;
        for step in 0..steps {
            state.history.push(Message::user(format!("step-{step}.")));
        }
        let page = run_timeline(&state, 0, "m");
        assert_eq!(
            page.matches("<div class=\"step ").count(),
            MOST_TIMELINE_STEPS,
            "{page}"
        );
        let hidden = steps - MOST_TIMELINE_STEPS;
        assert!(
            page.contains(&format!("{hidden} earlier step(s) are not shown here")),
            "{page}"
        );
        assert!(
            page.contains(&format!("step-{}.", steps - 1)),
            "the latest step"
        );
        assert!(
            page.contains(&format!("step-{hidden}.")),
            "the oldest step shown"
        );
        assert!(!page.contains(&format!("step-{}.", hidden - 1)), "{page}");
    }
}
