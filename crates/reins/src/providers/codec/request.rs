//! What the protocols write alike in a request body: the system text, the tool list, optional
//! settings, and the caller's `additional_params`.

use crate::completion::{CompletionError, CompletionRequest};
use crate::message::Message;
use crate::providers::transport::excerpt_json;
use crate::tool::ToolDefinition;
use serde::Serialize;
use serde_json::{Map, Value, json};

/// Context documents as one block of text, the same for every provider.
pub(crate) fn render_documents(request: &CompletionRequest) -> String {
    let mut text = String::from("Context documents:\n");
    for document in &request.documents {
        text.push_str(&format!(
            "<document id=\"{}\">\n{}\n</document>\n",
            document.id, document.text
        ));
    }
    text
}

/// The texts a request gives as system instructions, in the order every protocol sends them:
/// the preamble, the text of each system message of the history, then the context documents.
pub(crate) fn system_texts(request: &CompletionRequest) -> Vec<String> {
    let mut texts: Vec<String> = request.preamble.iter().cloned().collect();
    texts.extend(request.history.iter().filter_map(|message| match message {
        Message::System { content } => Some(content.clone()),
        _ => None,
    }));
    if !request.documents.is_empty() {
        texts.push(render_documents(request));
    }
    texts
}

/// The [`system_texts`] as one text, for an API that takes the system instructions apart from
/// the messages: the texts `keep` accepts, joined by blank lines; `None` when it keeps none.
pub(crate) fn system_text(
    request: &CompletionRequest,
    keep: impl Fn(&str) -> bool,
) -> Option<String> {
    let texts: Vec<String> = system_texts(request)
        .into_iter()
        .filter(|text| keep(text))
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n\n"))
}

/// The request's tools, each written by `definition` in the API's shape; `None` when it has
/// none, as no API is sent an empty tool list.
pub(crate) fn tool_list(
    request: &CompletionRequest,
    definition: impl FnMut(&ToolDefinition) -> Value,
) -> Option<Vec<Value>> {
    (!request.tools.is_empty()).then(|| request.tools.iter().map(definition).collect())
}

/// Sets `key` in `body` to `value`, when the request has one: a setting left unset is left
/// to the API's default.
pub(crate) fn insert_some(body: &mut Map<String, Value>, key: &str, value: Option<impl Serialize>) {
    if let Some(value) = value {
        body.insert(key.into(), json!(value));
    }
}

/// `body` with the request's `additional_params` merged in last (they win, key by key). They
/// must be a JSON object (or null): anything else cannot be merged and is an error, never
/// silently dropped.
pub(crate) fn merge_additional_params(
    mut body: Map<String, Value>,
    request: &CompletionRequest,
) -> Result<Value, CompletionError> {
    match &request.additional_params {
        None | Some(Value::Null) => {}
        Some(Value::Object(params)) => {
            body.extend(params.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        Some(other) => {
            return Err(CompletionError::InvalidRequest(format!(
                "additional_params must be a JSON object to merge into the request body, got: {}",
                excerpt_json(other)
            )));
        }
    }
    Ok(Value::Object(body))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Document;

    #[test]
    fn system_texts_are_the_preamble_system_messages_then_documents() {
        let mut request = CompletionRequest::new(vec![
            Message::system("first"),
            Message::user("hi"),
            Message::system(" "),
        ]);
        request.preamble = Some(String::new());
        request.documents = vec![Document::new("d", "text")];
        let texts = system_texts(&request);
        assert_eq!(texts[..3], ["", "first", " "]);
        assert!(texts[3].contains("<document id=\"d\">"));
        let joined = system_text(&request, |text| !text.trim().is_empty()).unwrap();
        assert!(
            joined.starts_with("first\n\nContext documents:"),
            "{joined}"
        );
        assert_eq!(system_text(&CompletionRequest::new(vec![]), |_| true), None);
    }
}
