//! The server's credentials, echoed in a tool's result: a server (or a proxy before it) can
//! quote the bearer token, a header's value or the URL's query back in what a tool returns.
//! From there it would reach the model, the run's history and the store a durable run is kept
//! in; it is replaced first, as in errors ([`scrub`]).

use crate::content::{McpContent, McpToolResult};
use crate::server::scrub;
use serde_json::Value;

/// `result` with every secret replaced by what may be shown instead.
pub(crate) fn scrubbed(mut result: McpToolResult, secrets: &[(String, String)]) -> McpToolResult {
    if secrets.is_empty() {
        return result;
    }
    let holds = |text: &str| {
        secrets
            .iter()
            .any(|(secret, _)| text.contains(secret.as_str()))
    };
    let clean = |text: &mut String| {
        if holds(text) {
            *text = scrub(text, secrets);
        }
    };
    for block in &mut result.content {
        match block {
            McpContent::Text(text) => clean(text),
            McpContent::Resource { uri, text, .. } => {
                clean(uri);
                if let Some(text) = text {
                    clean(text);
                }
            }
            McpContent::ResourceLink { uri, name } => {
                clean(uri);
                clean(name);
            }
            McpContent::Image { .. } | McpContent::Audio { .. } | McpContent::Other { .. } => {}
        }
    }
    if let Some(structured) = &mut result.structured_content {
        scrub_value(structured, &clean);
    }
    result
}

fn scrub_value(value: &mut Value, clean: &impl Fn(&mut String)) {
    match value {
        Value::String(text) => clean(text),
        Value::Array(items) => items.iter_mut().for_each(|item| scrub_value(item, clean)),
        Value::Object(fields) => {
            let keys: Vec<String> = fields.keys().cloned().collect();
            for key in keys {
                let mut new_key = key.clone();
                clean(&mut new_key);
                if let Some(mut field) = fields.remove(&key) {
                    scrub_value(&mut field, clean);
                    fields.insert(new_key, field);
                }
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_token_in_text_resources_and_structured_content_is_replaced() {
        let secrets = [("tok-123".to_owned(), "[redacted]".to_owned())];
        let result = McpToolResult {
            content: vec![
                McpContent::Text("Bearer tok-123".into()),
                McpContent::Resource {
                    uri: "file:///tok-123".into(),
                    mime_type: None,
                    text: Some("tok-123".into()),
                    bytes: None,
                },
            ],
            structured_content: Some(json!({"auth": ["tok-123"], "tok-123": 1})),
            is_error: false,
        };
        let result = scrubbed(result, &secrets);
        assert!(!format!("{result:?}").contains("tok-123"), "{result:?}");
        assert_eq!(
            result.content[0],
            McpContent::Text("Bearer [redacted]".into())
        );
        assert_eq!(
            result.structured_content,
            Some(json!({"auth": ["[redacted]"], "[redacted]": 1}))
        );
    }
}
