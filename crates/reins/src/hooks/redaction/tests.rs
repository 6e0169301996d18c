use super::*;
use crate::agent::hook::DispatchTarget;
use crate::agent::{
    AgentBuilder, CompletionCallAction, CompletionCallEvent, DispatchKind, HookStack, RequestPatch,
};
use crate::completion::CompletionRequest;
use crate::message::{AssistantContent, Document, Message, OneOrMany, Reasoning};
use crate::testing::{ScriptedModel, Turn};
use crate::tool::{ToolOutcome, tool_fn};
use serde_json::json;
use std::sync::Mutex;

const EMAIL: &str = "ada@example.com";
const CARD: &str = "4111 1111 1111 1111";

/// The tool result the model received with its second request.
fn tool_message(model: &ScriptedModel) -> String {
    model.requests()[1].history.last().unwrap().text()
}

#[tokio::test]
async fn tool_results_are_masked_for_the_model_and_the_hooks_after_it() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let model = ScriptedModel::new([Turn::tool_call("lookup", json!({})), Turn::text("ok")]);
    let lookup = tool_fn("lookup", "Looks up.", |_: Value| async {
        Ok::<_, std::convert::Infallible>(json!({"email": EMAIL, "n": 1}))
    });
    let agent = AgentBuilder::new(model.clone())
        .tool(lookup)
        .add_hook(Redaction::new())
        .add_hook(SeeOutcomes(Arc::clone(&seen)))
        .build();
    agent.prompt("who?").await.unwrap();
    let masked = r#"{"email":"[REDACTED:email]","n":1}"#;
    assert_eq!(tool_message(&model), masked);
    assert_eq!(
        *seen.lock().unwrap(),
        vec![(masked.to_owned(), ToolOutcome::Success)]
    );
}

/// Records the model-visible text and the outcome of each tool result.
struct SeeOutcomes(Arc<Mutex<Vec<(String, ToolOutcome)>>>);

impl AgentHook for SeeOutcomes {
    async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        if let Some(result) = event.tool_outcome() {
            let seen = (result.output().render(), result.outcome().clone());
            self.0.lock().unwrap().push(seen);
        }
        OutcomeAction::proceed()
    }
}

#[tokio::test]
async fn failed_tool_calls_are_masked_too() {
    let model = ScriptedModel::new([Turn::tool_call("login", json!({})), Turn::text("ok")]);
    let login = tool_fn("login", "Logs in.", |_: Value| async {
        Err::<String, _>("rejected key sk-live-0123456789abcdefghijkl")
    });
    let agent = AgentBuilder::new(model.clone())
        .tool(login)
        .add_hook(Redaction::new())
        .build();
    agent.prompt("log in").await.unwrap();
    let text = tool_message(&model);
    assert!(text.contains("rejected key [REDACTED:api_key]"), "{text}");
    assert!(!text.contains("sk-live"), "{text}");
}

#[tokio::test]
async fn requests_are_masked_while_the_run_keeps_its_history() {
    let model = ScriptedModel::new([Turn::text("noted")]);
    let agent = AgentBuilder::new(model.clone())
        .add_hook(Redaction::new().replacement("<{kind}>"))
        .build();
    let prompt = format!("Mail {EMAIL}, card {CARD}, SSN 123-45-6789.");
    let response = agent
        .prompt(prompt.as_str())
        .extended_details()
        .await
        .unwrap();
    let sent = model.requests()[0].history[0].text();
    assert_eq!(sent, "Mail <email>, card <credit_card>, SSN <ssn>.");
    assert_eq!(response.history()[0].text(), prompt);
}

#[tokio::test]
async fn every_part_of_an_earlier_history_is_masked_but_signed_reasoning() {
    let earlier = vec![
        Message::system(format!("operator: {EMAIL}")),
        Message::Assistant {
            content: OneOrMany::many([
                AssistantContent::Reasoning(Reasoning {
                    text: format!("signed {EMAIL}"),
                    signature: Some("sig".into()),
                }),
                AssistantContent::reasoning(format!("unsigned {EMAIL}")),
                AssistantContent::text(format!("text {EMAIL}")),
                AssistantContent::tool_call(
                    "c1",
                    "send",
                    json!({"to": [EMAIL], "n": 4111111111111111u64}),
                ),
            ])
            .unwrap(),
        },
        Message::tool_result("c1", "send", format!("sent to {EMAIL}")),
    ];
    let model = ScriptedModel::new([Turn::text("ok")]);
    let agent = AgentBuilder::new(model.clone())
        .add_hook(Redaction::new())
        .build();
    agent
        .prompt("clean prompt")
        .with_history(earlier)
        .await
        .unwrap();
    let sent = &model.requests()[0].history;
    assert_eq!(sent[0], Message::system("operator: [REDACTED:email]"));
    let Message::Assistant { content } = &sent[1] else {
        panic!("{sent:?}")
    };
    let parts = content.as_slice();
    assert_eq!(
        parts[0],
        AssistantContent::Reasoning(Reasoning {
            text: format!("signed {EMAIL}"),
            signature: Some("sig".into()),
        })
    );
    assert_eq!(
        parts[1],
        AssistantContent::reasoning("unsigned [REDACTED:email]")
    );
    assert_eq!(parts[2], AssistantContent::text("text [REDACTED:email]"));
    assert_eq!(
        parts[3],
        AssistantContent::tool_call(
            "c1",
            "send",
            json!({"to": ["[REDACTED:email]"], "n": "[REDACTED:credit_card]"})
        )
    );
    assert_eq!(sent[2].text(), "sent to [REDACTED:email]");
    assert_eq!(sent[3], Message::user("clean prompt"));
}

#[tokio::test]
async fn a_clean_request_is_not_patched_and_a_patch_replaces_only_the_history() {
    async fn dispatch(request: &CompletionRequest) -> DispatchAction {
        let target = DispatchTarget::Completion {
            turn: 1,
            model: "default",
            identity: Default::default(),
            request,
        };
        let event = DispatchEvent {
            kind: DispatchKind::Completion,
            target: &target,
        };
        Redaction::new()
            .on_dispatch(&HookContext::new("r"), event)
            .await
    }
    let clean = CompletionRequest::new(vec![Message::user("hello")]);
    assert_eq!(dispatch(&clean).await, DispatchAction::proceed());
    let dirty = CompletionRequest::new(vec![Message::user("hello"), Message::user(EMAIL)]);
    let expected = vec![Message::user("hello"), Message::user("[REDACTED:email]")];
    assert_eq!(
        dispatch(&dirty).await,
        DispatchAction::patch(RequestPatch::new().history(expected))
    );
}

/// Adds a system message holding an email address to every request's history.
struct AddsContact;

impl AgentHook for AddsContact {
    async fn on_completion_call(
        &self,
        _ctx: &HookContext,
        event: CompletionCallEvent<'_>,
    ) -> CompletionCallAction {
        let mut history = vec![Message::system(format!("escalate to {EMAIL}"))];
        history.extend(event.request.history.iter().cloned());
        CompletionCallAction::patch(RequestPatch::new().history(history))
    }
}

#[tokio::test]
async fn other_hooks_request_patches_are_masked_whatever_the_order() {
    for redaction_first in [true, false] {
        let model = ScriptedModel::new([Turn::text("ok")]);
        let hooks = if redaction_first {
            HookStack::new().with(Redaction::new()).with(AddsContact)
        } else {
            HookStack::new().with(AddsContact).with(Redaction::new())
        };
        let agent = AgentBuilder::new(model.clone()).add_hook(hooks).build();
        agent.prompt("hi").await.unwrap();
        let sent = &model.requests()[0].history;
        assert_eq!(sent[0], Message::system("escalate to [REDACTED:email]"));
        assert_eq!(sent[1], Message::user("hi"));
    }
}

#[test]
fn secrets_matchers_and_replacements() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    let redaction = Redaction::empty()
        .secret("")
        .secrets(["p\"ss\\word", "hunter2"])
        .secret_from_env("CARGO_MANIFEST_DIR")
        .secret_from_env("REINS_TEST_SURELY_UNSET_VARIABLE")
        .matcher("ticket", |text| {
            // Every "T-" plus the next 3 bytes, with a few ranges a careless matcher returns.
            let mut ranges: Vec<_> = text.match_indices("T-").map(|(i, _)| i..i + 5).collect();
            ranges.extend([Range { start: 3, end: 1 }, 2..2, 0..10_000]);
            ranges
        });
    assert_eq!(redaction.redact("pw hunter2!"), "pw [REDACTED:secret]!");
    assert_eq!(
        redaction.redact(&format!("in {dir}/src")),
        "in [REDACTED:secret]/src"
    );
    // A quoted secret is found in JSON text as well.
    let json = serde_json::to_string(&json!({"pw": "p\"ss\\word"})).unwrap();
    assert_eq!(redaction.redact(&json), r#"{"pw":"[REDACTED:secret]"}"#);
    assert_eq!(
        redaction.redact("see T-123 now"),
        "see [REDACTED:ticket] now"
    );
    // A range that is not on a character boundary is ignored, never sliced.
    assert_eq!(redaction.redact("T-ééé"), "T-ééé");
    let custom = Redaction::new().replacement("***");
    assert_eq!(custom.redact(&format!("{EMAIL} {CARD}")), "*** ***");
    let debug = format!("{redaction:?}");
    assert!(!debug.contains("hunter2"), "{debug}");
}

#[test]
fn overlapping_matches_merge_and_nothing_found_borrows() {
    let redaction = Redaction::new().secret("example.com/x");
    let text = format!("{EMAIL}/x and {CARD}");
    let found = redaction.find(&text);
    let kinds: Vec<_> = found.iter().map(|m| (m.range.clone(), m.kind)).collect();
    assert_eq!(kinds, vec![(0..17, "email"), (22..41, "credit_card")]);
    assert_eq!(
        redaction.redact(&text),
        "[REDACTED:email] and [REDACTED:credit_card]"
    );
    assert!(matches!(
        redaction.redact("nothing to see"),
        Cow::Borrowed("nothing to see")
    ));
}

#[test]
fn json_values_mask_strings_and_card_numbers_only() {
    let redaction = Redaction::new();
    let clean = json!({"id": 4111111111111112u64, "n": 12, "ok": true, "x": null, "k": "v"});
    assert_eq!(redaction.redact_json(&clean), None);
    let dirty = json!({"a": [1, {"b": EMAIL}], "card": 4111111111111111u64, "c": "d"});
    let masked =
        json!({"a": [1, {"b": "[REDACTED:email]"}], "card": "[REDACTED:credit_card]", "c": "d"});
    assert_eq!(redaction.redact_json(&dirty), Some(masked));
}

#[test]
fn json_object_keys_are_masked_and_keys_masked_alike_are_kept_apart() {
    let redaction = Redaction::new();
    let roles = json!({
        "ada@example.com": "admin",
        "bob@example.com": "viewer",
        "plan": {"sk-live-0123456789abcdefghijkl": true},
    });
    let masked = redaction.redact_json(&roles).unwrap();
    let text = masked.to_string();
    for leaked in ["example.com", "sk-live"] {
        assert!(!text.contains(leaked), "{leaked}: {text}");
    }
    assert_eq!(masked["plan"], json!({"[REDACTED:api_key]": true}));
    // Both entries reach the model, each under its own key.
    let fields = masked.as_object().unwrap();
    assert_eq!(fields.len(), 3, "{text}");
    let mut roles: Vec<_> = fields
        .iter()
        .filter(|(key, _)| key.starts_with("[REDACTED:email]"))
        .map(|(_, role)| role.as_str().unwrap())
        .collect();
    roles.sort_unstable();
    assert_eq!(roles, ["admin", "viewer"]);
}

#[test]
fn each_surface_can_be_turned_off() {
    let observed = |r: &Redaction| -> Vec<StepEventKind> {
        StepEventKind::ALL
            .into_iter()
            .filter(|&k| r.observes(k))
            .collect()
    };
    let both = Redaction::new();
    assert_eq!(
        observed(&both),
        vec![
            StepEventKind::CompletionDispatch,
            StepEventKind::ToolOutcome
        ]
    );
    assert_eq!(
        observed(&both.clone().requests(false)),
        vec![StepEventKind::ToolOutcome]
    );
    assert_eq!(
        observed(&both.tool_results(false)),
        vec![StepEventKind::CompletionDispatch]
    );
}

#[test]
fn a_disabled_pattern_is_not_masked() {
    let redaction = Redaction::new()
        .disable(Pattern::Email)
        .enable(Pattern::Ipv4);
    assert_eq!(
        redaction.redact(&format!("{EMAIL} at 10.1.2.3")),
        format!("{EMAIL} at [REDACTED:ipv4]")
    );
}

#[test]
fn a_json_escape_before_a_pattern_does_not_hide_it() {
    // A tool's JSON answer is scanned as its text, where a line break is `\n`.
    let text = crate::message::json_text(&json!({
        "notes": "card:\n4111 1111 1111 1111\nssn:\n123-45-6789\nkey:\nsk-live-0123456789abcdefghijkl\n\tAKIAIOSFODNN7EXAMPLE\nBearer abc123def456"
    }));
    let masked = Redaction::new().redact(&text).into_owned();
    for leaked in [
        "4111 1111 1111 1111",
        "123-45-6789",
        "sk-live-0123456789abcdefghijkl",
        "AKIAIOSFODNN7EXAMPLE",
        "abc123def456",
    ] {
        assert!(!masked.contains(leaked), "{leaked}: {masked}");
    }
    assert!(
        serde_json::from_str::<serde_json::Value>(&masked).is_ok(),
        "{masked}"
    );
    // An address after an escape keeps the escape whole: the text stays JSON.
    let email = crate::message::json_text(&json!({"to": "list:\nada@example.com"}));
    let masked = Redaction::new().redact(&email).into_owned();
    assert_eq!(masked, r#"{"to":"list:\n[REDACTED:email]"}"#);
}

#[tokio::test]
async fn a_json_tool_result_with_line_breaks_does_not_leak_a_card() {
    let model = ScriptedModel::new([Turn::tool_call("read", json!({})), Turn::text("ok")]);
    let read = tool_fn("read", "Reads a file.", |_: serde_json::Value| async {
        Ok::<_, std::convert::Infallible>(json!({"file": "Payment\n4111 1111 1111 1111\n"}))
    });
    let agent = AgentBuilder::new(model.clone())
        .tool(read)
        .add_hook(Redaction::new())
        .build();
    agent.prompt("read it").await.unwrap();
    let seen = tool_message(&model);
    assert!(!seen.contains("4111 1111 1111 1111"), "{seen}");
}

/// Adds a context document holding an email address to every request.
struct AddsNote;

impl AgentHook for AddsNote {
    async fn on_completion_call(
        &self,
        _ctx: &HookContext,
        _event: CompletionCallEvent<'_>,
    ) -> CompletionCallAction {
        let note = Document::new("note", format!("reply to {EMAIL}"));
        CompletionCallAction::patch(RequestPatch::new().context(note))
    }
}

#[tokio::test]
async fn the_preamble_and_context_documents_sent_are_masked() {
    let model = ScriptedModel::new([Turn::tool_call("noop", json!({})), Turn::text("ok")]);
    let noop = tool_fn("noop", "Does nothing.", |_: Value| async {
        Ok::<_, std::convert::Infallible>("done")
    });
    let agent = AgentBuilder::new(model.clone())
        .preamble(format!("Escalate to {EMAIL}."))
        .context(Document::new("crm", format!("card {CARD}")))
        .context(Document::new("clean", "nothing here"))
        .tool(noop)
        .add_hook(AddsNote)
        .add_hook(Redaction::new())
        .build();
    agent.prompt("hi").await.unwrap();
    let expected = vec![
        Document::new("crm", "card [REDACTED:credit_card]"),
        Document::new("clean", "nothing here"),
        Document::new("note", "reply to [REDACTED:email]"),
    ];
    // Every turn starts again from the agent's own preamble and documents.
    for sent in model.requests() {
        assert_eq!(
            sent.preamble.as_deref(),
            Some("Escalate to [REDACTED:email].")
        );
        assert_eq!(sent.documents, expected);
    }
}

#[tokio::test]
async fn a_stack_called_as_a_hook_masks_the_documents_it_is_shown() {
    let mut request = CompletionRequest::new(vec![Message::user("hello")]);
    request.preamble = Some("be brief".to_owned());
    request.documents = vec![
        Document::new("a", "clean"),
        Document::new(EMAIL, format!("mail {EMAIL}")),
    ];
    let target = DispatchTarget::Completion {
        turn: 1,
        model: "default",
        identity: Default::default(),
        request: &request,
    };
    let event = DispatchEvent {
        kind: DispatchKind::Completion,
        target: &target,
    };
    let stack = HookStack::new().with(Redaction::new());
    let action = stack.on_dispatch(&HookContext::new("r"), event).await;
    let DispatchAction::Patch(patch) = action else {
        panic!("{action:?}")
    };
    let mut sent = request.clone();
    patch.apply(&mut sent);
    assert_eq!(sent.preamble.as_deref(), Some("be brief"));
    assert_eq!(
        sent.documents,
        vec![
            Document::new("a", "clean"),
            Document::new("[REDACTED:email]", "mail [REDACTED:email]"),
        ]
    );
}

#[test]
fn unicode_escapes_and_doubly_encoded_json_do_not_hide_secrets() {
    let redaction = Redaction::new().secret("hunter2-staging");
    assert_eq!(
        redaction.redact(r"mail ada\u0040example.com, pw hunter2\u002Dstaging"),
        "mail [REDACTED:email], pw [REDACTED:secret]"
    );
    // A JSON answer holding JSON text (an HTTP body): escaped once more.
    let body = r#"{"email":"bob\u0040example.com","notes":"card:\n4111 1111 1111 1111","auth":"Bearer abc\/def123456"}"#;
    let text = crate::message::json_text(&json!({"status": 200, "body": body}));
    let masked = redaction.redact(&text).into_owned();
    for leaked in ["bob", "4111", "def123456"] {
        assert!(!masked.contains(leaked), "{leaked}: {masked}");
    }
    // The text, and the text it holds, are still JSON.
    let outer: Value = serde_json::from_str(&masked).unwrap();
    let inner: Value = serde_json::from_str(outer["body"].as_str().unwrap()).unwrap();
    assert_eq!(inner["email"], "[REDACTED:email]");
    assert_eq!(inner["notes"], "card:\n[REDACTED:credit_card]");
    // Escapes that hide nothing are left alone, and a backslash of a path is no escape.
    for clean in [
        r"C:\\Users\\ada\\notes.txt",
        r"caf\u00e9 \u0041BC",
        r"a\\nb",
    ] {
        assert_eq!(redaction.redact(clean), clean);
    }
}

#[tokio::test]
async fn a_tool_answer_carrying_an_escaped_body_is_masked() {
    let model = ScriptedModel::new([Turn::tool_call("fetch", json!({})), Turn::text("ok")]);
    let fetch = tool_fn("fetch", "Fetches.", |_: Value| async {
        let body = r#"{"owner":"ada\u0040example.com"}"#;
        Ok::<_, std::convert::Infallible>(json!({"status": 200, "body": body}))
    });
    let agent = AgentBuilder::new(model.clone())
        .tool(fetch)
        .add_hook(Redaction::new())
        .build();
    agent.prompt("fetch it").await.unwrap();
    let seen = tool_message(&model);
    assert!(!seen.contains("ada"), "{seen}");
}
