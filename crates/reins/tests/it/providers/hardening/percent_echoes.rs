//! The key echoed in an answer spelled with percent-escapes, as a URL or a query string
//! carries it (a server quoting the request it received): scrubbed from the streamed
//! fragments and the assembled answer as from an error, however the fragments cut it.

use crate::providers::fixtures::chat::{self, Chat};
use crate::providers::fixtures::{Fixture, Settings, model_at};
use crate::providers::hostile::{Hostile, Reply};
use crate::providers::support::{drain, prompt, streamed_text, within};
use reins::completion::{CompletionModel, StreamChunk};
use reins::providers::RetryPolicy;

/// A key with characters a URL encodes.
const KEY: &str = "sk-live-QR7/w9+Zt=mnPX42";

/// Its end, which must show in no spelling.
const KEY_END: &str = "mnPX42";

fn settings() -> Settings {
    Settings::default().key(KEY).retry(RetryPolicy::none())
}

/// The key with its reserved characters escaped, and with every byte escaped (the hex in
/// either case).
fn spellings() -> [String; 2] {
    let reserved = KEY
        .replace('/', "%2F")
        .replace('+', "%2b")
        .replace('=', "%3D");
    let every_byte = KEY
        .bytes()
        .enumerate()
        .map(|(at, byte)| match at % 2 {
            0 => format!("%{byte:02X}"),
            _ => format!("%{byte:02x}"),
        })
        .collect();
    [reserved, every_byte]
}

/// Whether `text` spells the key's end in any of the forms sent.
fn shows_the_key(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    let every_byte_end: String = KEY_END.bytes().map(|b| format!("%{b:02x}")).collect();
    lower.contains(&KEY_END.to_ascii_lowercase()) || lower.contains(&every_byte_end)
}

/// `text` cut at each of `cuts` (byte offsets).
fn cut(text: &str, cuts: &[usize]) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut from = 0;
    for &at in cuts.iter().filter(|&&at| at > 0 && at < text.len()) {
        pieces.push(text[from..at].to_owned());
        from = at;
    }
    pieces.push(text[from..].to_owned());
    pieces
}

pub async fn an_answer_echoing_the_key_percent_encoded_does_not_show_it<F: Fixture>() {
    for spelled in spellings() {
        let whole = format!("You sent GET /v1?key={spelled}&x=1 to me.");
        let start = whole.find(&spelled).unwrap();
        // Cut inside an escape, right after one, and in the middle of the key.
        for cuts in [
            vec![start + 2],
            vec![start + 12, start + 14],
            vec![start + spelled.len() / 2],
            vec![start + 1, start + 4, start + 5],
        ] {
            let pieces = cut(&whole, &cuts);
            let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
            let server = Hostile::start(vec![
                Reply::json(&F::text_reply(&whole)),
                Reply::events(&F::text_stream(&pieces)).finish(),
            ])
            .await;
            let model = model_at::<F>(&server.url(), &settings());
            let answer = within(10, model.completion(&prompt("hi"))).await.unwrap();
            let (chunks, end) = within(10, drain(&model, &prompt("hi"))).await;
            let end = end.unwrap();
            let scrubbed = "You sent GET /v1?key=<redacted>&x=1 to me.";
            assert_eq!(answer.text(), scrubbed, "{spelled} cut at {cuts:?}");
            assert_eq!(end.text(), scrubbed, "{spelled} cut at {cuts:?}");
            assert_eq!(streamed_text(&chunks), scrubbed, "{spelled} cut {cuts:?}");
            // The whole answer's `Debug` output, its provider JSON included (a streamed
            // answer's is, for Chat and Gemini, its last event alone, which can quote the
            // piece of a key split across events).
            let shown = format!("{answer:?}");
            assert!(!shows_the_key(&shown), "{shown}");
            let shown = format!("{end:?}");
            assert!(!shows_the_key(&shown), "{spelled} cut at {cuts:?}: {shown}");
        }
    }
}

#[tokio::test]
async fn a_call_streaming_the_key_percent_encoded_in_its_arguments_does_not_show_it() {
    for spelled in spellings() {
        let arguments = format!(r#"{{"url":"https://api.test/v1?key={spelled}"}}"#);
        let start = arguments.find(&spelled).unwrap();
        for cuts in [vec![start + 2], vec![start + 7, start + 9]] {
            let events = chat::streamed_call("fetch", &cut(&arguments, &cuts));
            let server = Hostile::always(Reply::events(&events).finish()).await;
            let model = model_at::<Chat>(&server.url(), &settings());
            let (chunks, end) = within(10, drain(&model, &prompt("hi"))).await;
            let joined: String = chunks
                .iter()
                .filter_map(|chunk| match chunk {
                    StreamChunk::ToolCall { delta, .. } => Some(delta.as_str()),
                    _ => None,
                })
                .collect();
            assert_eq!(
                joined, r#"{"url":"https://api.test/v1?key=<redacted>"}"#,
                "{spelled} cut at {cuts:?}"
            );
            let answer = format!("{:?}", end.unwrap());
            assert!(!shows_the_key(&answer), "{answer}");
        }
    }
}
