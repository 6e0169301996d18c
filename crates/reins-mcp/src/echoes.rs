//! The server's credentials, echoed in a tool's result or its tool list: a server (or a
//! proxy before it) can quote the bearer token, a header's value or the URL's query back in
//! what a tool returns, or in a tool's description or schema. From there it would reach the
//! model, the run's history and the store a durable run is kept in; it is replaced first, by
//! reins' own redaction.

use crate::content::{McpContent, McpToolResult};
use reins::hooks::redaction::Redaction;
use std::borrow::Cow;

/// Secrets shorter than this are not looked for in results: a short header value would mask
/// ordinary words everywhere (the providers' bound too).
pub(crate) const MIN_ECHOED_SECRET_LEN: usize = 8;

/// The redaction of a connection's `secrets` (each with what errors show instead; a tool's
/// result shows `[redacted]`), or `None` without any long enough to look for.
pub(crate) fn redaction(secrets: &[(String, String)]) -> Option<Redaction> {
    let long: Vec<&String> = secrets
        .iter()
        .map(|(secret, _)| secret)
        .filter(|secret| secret.len() >= MIN_ECHOED_SECRET_LEN)
        .collect();
    (!long.is_empty()).then(|| Redaction::empty().secrets(long).replacement("[redacted]"))
}

/// `result` with every secret `echoes` knows replaced.
pub(crate) fn scrubbed(mut result: McpToolResult, echoes: &Redaction) -> McpToolResult {
    let clean = |text: &mut String| {
        if let Cow::Owned(redacted) = echoes.redact(text) {
            *text = redacted;
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
    if let Some(redacted) = result
        .structured_content
        .as_ref()
        .and_then(|structured| echoes.redact_json(structured))
    {
        result.structured_content = Some(redacted);
    }
    result
}

/// `tool` as listed, with every secret `echoes` knows replaced where the model, or a run's
/// record, would read it: its title (and its annotations' title), description and schemas.
/// Its name is kept: calls go to the server by it (and the model's name for it holds only
/// what providers accept, 64 characters at most).
pub(crate) fn scrubbed_tool(mut tool: rmcp::model::Tool, echoes: &Redaction) -> rmcp::model::Tool {
    let clean = |text: &mut String| {
        if let Cow::Owned(redacted) = echoes.redact(text) {
            *text = redacted;
        }
    };
    if let Some(title) = &mut tool.title {
        clean(title);
    }
    if let Some(title) = tool
        .annotations
        .as_mut()
        .and_then(|hints| hints.title.as_mut())
    {
        clean(title);
    }
    if let Some(description) = &mut tool.description
        && let Cow::Owned(redacted) = echoes.redact(description)
    {
        *description = Cow::Owned(redacted);
    }
    let schema = |schema: &std::sync::Arc<rmcp::model::JsonObject>| match echoes
        .redact_json(&serde_json::Value::Object((**schema).clone()))
    {
        Some(serde_json::Value::Object(redacted)) => Some(std::sync::Arc::new(redacted)),
        _ => None,
    };
    if let Some(redacted) = schema(&tool.input_schema) {
        tool.input_schema = redacted;
    }
    if let Some(redacted) = tool.output_schema.as_ref().and_then(schema) {
        tool.output_schema = Some(redacted);
    }
    tool
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_token_in_text_resources_and_structured_content_is_replaced() {
        let secrets = [("tok-12345".to_owned(), "[redacted]".to_owned())];
        let result = McpToolResult {
            content: vec![
                McpContent::Text("Bearer tok-12345".into()),
                McpContent::Resource {
                    uri: "file:///tok-12345".into(),
                    mime_type: None,
                    text: Some("tok-12345".into()),
                    bytes: None,
                },
            ],
            structured_content: Some(json!({"auth": ["tok-12345"], "tok-12345": 1})),
            is_error: false,
        };
        let result = scrubbed(result, &redaction(&secrets).unwrap());
        assert!(!format!("{result:?}").contains("tok-12345"), "{result:?}");
        assert_eq!(
            result.content[0],
            McpContent::Text("Bearer [redacted]".into())
        );
        assert_eq!(
            result.structured_content,
            Some(json!({"auth": ["[redacted]"], "[redacted]": 1}))
        );
        assert!(redaction(&[]).is_none());
        assert!(redaction(&[("acme".to_owned(), "[redacted]".to_owned())]).is_none());
    }
}
