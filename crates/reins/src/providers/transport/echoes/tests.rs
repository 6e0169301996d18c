//! The echo filter and the response scrub against a key split, escaped and echoed in every
//! field a server writes.

use super::*;
use serde_json::json;

const KEY: &str = "sk-live-0123456789";

fn secrets() -> Arc<Secrets> {
    Arc::new(Secrets::new([KEY.to_owned(), String::new(), "EMPTY".to_owned()]).unwrap())
}

#[test]
fn a_placeholder_key_is_not_looked_for() {
    assert!(Secrets::new(["EMPTY".to_owned(), "k".to_owned()]).is_none());
    // Ordinary words are left alone even beside a real key.
    let mut text = "EMPTY k".to_owned();
    secrets().scrub(&mut text);
    assert_eq!(text, "EMPTY k");
}

fn filter() -> EchoFilter {
    EchoFilter::new(secrets())
}

fn pass_all(filter: &mut EchoFilter, chunks: Vec<StreamChunk>) -> Vec<StreamChunk> {
    let mut out = VecDeque::new();
    for chunk in chunks {
        filter.pass(chunk, &mut out);
    }
    out.into()
}

#[test]
fn a_key_split_across_fragments_is_replaced_and_no_fragment_shows_its_start() {
    let pieces = ["key: sk-", "live-01", "23456789 done", " sk"];
    let chunks = pieces.map(|p| StreamChunk::Text(p.to_owned())).to_vec();
    let mut filter = filter();
    let mut out = pass_all(&mut filter, chunks);
    let mut end = VecDeque::new();
    filter.release(&mut end);
    out.extend(end);
    let texts: Vec<String> = out
        .iter()
        .map(|chunk| match chunk {
            StreamChunk::Text(text) => text.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(texts, ["key: ", "<redacted> done", " ", "sk"]);
}

#[test]
fn only_fragments_that_cannot_hold_the_key_skip_the_scrub() {
    let secrets = secrets();
    assert!(secrets.plainly_clear("ordinary words, nothing like it"));
    for text in [
        "ends with s",
        "ends with sk",
        "has sk-l in it",
        "esc\\u0073k-live",
    ] {
        assert!(!secrets.plainly_clear(text), "{text}");
    }
    // A key hidden by a JSON escape is still found.
    let escaped = format!("key {}", KEY.replacen('s', "\\u0073", 1));
    let out = pass_all(&mut filter(), vec![StreamChunk::Text(escaped)]);
    assert!(!format!("{out:?}").contains("k-live-0123456789"), "{out:?}");
}

#[test]
fn tool_call_fragments_are_held_per_call_and_keep_their_name() {
    let call = |id: &str, name: Option<&str>, delta: &str| StreamChunk::ToolCall {
        id: id.to_owned(),
        name: name.map(str::to_owned),
        delta: delta.to_owned(),
    };
    let mut filter = filter();
    let out = pass_all(
        &mut filter,
        vec![
            call("a", Some("fetch"), r#"{"url":"https://x/?k=sk-live"#),
            call("a", None, r#"-0123456789"}"#),
            call("b", Some("other"), "s"),
            StreamChunk::Text("k".to_owned()),
        ],
    );
    // Call b's `s` waits for more of b (text between does not end it), so the answer's
    // end hands it out.
    let expected = [
        call("a", Some("fetch"), r#"{"url":"https://x/?k="#),
        call("a", None, r#"<redacted>"}"#),
        call("b", Some("other"), ""),
        StreamChunk::Text("k".to_owned()),
    ];
    assert_eq!(format!("{out:?}"), format!("{expected:?}"));
    let mut end = VecDeque::new();
    filter.release(&mut end);
    assert_eq!(format!("{end:?}"), format!("{:?}", [call("b", None, "s")]));
    // A name echoing the key is scrubbed as it streams, too.
    let named = pass_all(
        &mut EchoFilter::new(secrets()),
        vec![call("c", Some(&format!("x{KEY}")), "{}")],
    );
    let expected = [call("c", Some("x<redacted>"), "{}")];
    assert_eq!(format!("{named:?}"), format!("{expected:?}"));
}

/// Everything `chunks` streams, less the assembled response, by strand: text, reasoning,
/// and each call's arguments.
fn streamed(chunks: &[StreamChunk]) -> (String, String, String) {
    let (mut text, mut reasoning, mut arguments) = (String::new(), String::new(), String::new());
    for chunk in chunks {
        match chunk {
            StreamChunk::Text(piece) => text.push_str(piece),
            StreamChunk::Reasoning(piece) => reasoning.push_str(piece),
            StreamChunk::ToolCall { delta, .. } => arguments.push_str(delta),
            StreamChunk::Done(_) => {}
        }
    }
    (text, reasoning, arguments)
}

#[test]
fn a_key_split_around_another_strand_is_replaced_in_each_strand() {
    let (head, tail) = KEY.split_at(8);
    let call = |delta: &str| StreamChunk::ToolCall {
        id: "c".to_owned(),
        name: None,
        delta: delta.to_owned(),
    };
    let chunks = vec![
        StreamChunk::Text(format!("key: {head}")),
        StreamChunk::Reasoning("thinking".to_owned()),
        StreamChunk::Text(format!("{tail} .")),
        call(&format!(r#"{{"k":"{head}"#)),
        StreamChunk::Text("between".to_owned()),
        call(&format!(r#"{tail}"}}"#)),
    ];
    let mut filter = filter();
    let mut out = pass_all(&mut filter, chunks);
    let mut end = VecDeque::new();
    filter.release(&mut end);
    out.extend(end);
    let (text, reasoning, arguments) = streamed(&out);
    assert_eq!(text, "key: <redacted> .between");
    assert_eq!(reasoning, "thinking");
    assert_eq!(arguments, r#"{"k":"<redacted>"}"#);
}

#[test]
fn ids_signatures_and_finish_reasons_echoing_the_key_are_scrubbed() {
    let thought = crate::message::Reasoning {
        text: "hm".to_owned(),
        signature: Some(format!("sig_{KEY}")),
    };
    let content = OneOrMany::many(vec![
        AssistantContent::Reasoning(thought),
        AssistantContent::tool_call(format!("call_{KEY}"), "send", json!({})),
    ]);
    let mut response = CompletionResponse::new(content.unwrap());
    response.finish_reason = Some(FinishReason::Other(format!("why_{KEY}")));
    secrets().scrub_response(&mut response);
    let shown = format!("{response:?}");
    assert!(!shown.contains(KEY), "{shown}");
    assert_eq!(
        response.finish_reason,
        Some(FinishReason::Other("why_<redacted>".to_owned()))
    );
    // Streamed, a call's id is scrubbed in every fragment alike.
    let fragment = |delta: &str| StreamChunk::ToolCall {
        id: format!("call_{KEY}"),
        name: None,
        delta: delta.to_owned(),
    };
    let out = pass_all(&mut filter(), vec![fragment("{"), fragment("}")]);
    let ids: Vec<&str> = out
        .iter()
        .filter_map(|chunk| match chunk {
            StreamChunk::ToolCall { id, .. } => Some(id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(ids, ["call_<redacted>", "call_<redacted>"]);
}

#[test]
fn a_key_split_across_two_text_parts_is_replaced_in_the_joined_text() {
    let (head, tail) = KEY.split_at(8);
    let content = OneOrMany::many(vec![
        AssistantContent::text(format!("key: {head}")),
        AssistantContent::tool_call("c1", "noop", json!({})),
        AssistantContent::text(format!("{tail} .")),
    ]);
    let mut response = CompletionResponse::new(content.unwrap());
    secrets().scrub_response(&mut response);
    assert_eq!(response.text(), "key: <redacted> .");
    assert_eq!(response.tool_calls().count(), 1);
    // An honest answer's parts are left as they are.
    let content = OneOrMany::many(vec![
        AssistantContent::text("one"),
        AssistantContent::text("two"),
    ]);
    let mut honest = CompletionResponse::new(content.unwrap());
    secrets().scrub_response(&mut honest);
    assert_eq!(honest.content.len(), 2);
}

#[test]
fn the_assembled_response_is_scrubbed_everywhere() {
    let content = OneOrMany::many(vec![
        AssistantContent::text(format!("echo {KEY}")),
        AssistantContent::tool_call(
            "c1",
            "send",
            json!({"to": "x", "body": [format!("k={KEY}")], KEY: 1}),
        ),
    ]);
    let mut response = CompletionResponse::new(content.unwrap());
    response.response_id = Some(format!("resp-{KEY}"));
    response.raw = RawResponse::new(json!({"model": KEY, "choices": []}));
    let mut out = VecDeque::new();
    filter().pass(StreamChunk::Done(response.clone()), &mut out);
    secrets().scrub_response(&mut response);
    let Some(StreamChunk::Done(streamed)) = out.pop_front() else {
        panic!("the response: {out:?}")
    };
    assert!(out.is_empty(), "{out:?}");
    for response in [streamed, response] {
        let shown = format!("{response:?}");
        assert!(!shown.contains(KEY), "{shown}");
        assert_eq!(response.raw.json().unwrap()["model"], "<redacted>");
        assert_eq!(response.text(), "echo <redacted>");
        let AssistantContent::ToolCall(call) = &response.content.iter().nth(1).unwrap() else {
            panic!("a call")
        };
        assert_eq!(
            call.arguments,
            json!({"to": "x", "body": ["k=<redacted>"], "<redacted>": 1})
        );
    }
}
