use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::Value;

/// The `_meta` key under which the stand-in for a content block the client could not read
/// carries the block's `type` (see `lenient.rs`).
pub(crate) const UNREAD_CONTENT_META_KEY: &str = "reins/unreadContentType";

/// How many bytes of an unread block's `type` are kept: the type is the server's to choose.
const MAX_KIND_BYTES: usize = 64;

/// What an MCP tool call returned.
#[derive(Debug, Clone, PartialEq)]
pub struct McpToolResult {
    /// The content blocks, in order.
    pub content: Vec<McpContent>,
    /// The structured result (`structuredContent`), when the tool gave one.
    pub structured_content: Option<Value>,
    /// Whether the tool reported an error (`isError: true`).
    pub is_error: bool,
}

impl McpToolResult {
    pub(crate) fn from_rmcp(result: CallToolResult) -> Self {
        McpToolResult {
            content: result.content.iter().map(McpContent::from_rmcp).collect(),
            structured_content: result.structured_content,
            is_error: result.is_error.unwrap_or(false),
        }
    }

    /// The content as text: each block rendered by [`McpContent::render`], joined by newlines.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .map(McpContent::render)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// What the model is shown: the structured content as JSON when there is one (servers
    /// send the same JSON as text for older clients), else [`text`](McpToolResult::text).
    pub fn to_model_value(&self) -> Value {
        match &self.structured_content {
            Some(structured) => structured.clone(),
            None => Value::String(self.text()),
        }
    }

    /// [`to_model_value`](McpToolResult::to_model_value) within `max_bytes`: past it, the
    /// text (or the structured content's JSON text) cut by [`cut_to`].
    pub(crate) fn to_model_value_within(&self, max_bytes: usize) -> Value {
        match &self.structured_content {
            Some(structured) => {
                let json = structured.to_string();
                if json.len() <= max_bytes {
                    structured.clone()
                } else {
                    Value::String(cut_to("result", json, max_bytes))
                }
            }
            None => Value::String(cut_to("result", self.text(), max_bytes)),
        }
    }
}

/// `text` if it is at most `max_bytes` long, else its first `max_bytes` (back to a character
/// boundary) and a line saying how long the `what` was: what a model is shown of a server's
/// answer, or of a tool's description.
pub(crate) fn cut_to(what: &str, mut text: String, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return text;
    }
    let total = text.len();
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push_str(&format!(
        "\n[… cut: the {what} was {total} bytes, the first {end} are shown]"
    ));
    text
}

/// One content block of a tool result. Binary data is not kept: the model is shown a text
/// stand-in saying what it was.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum McpContent {
    /// Text.
    Text(String),
    /// An image.
    Image {
        /// Its MIME type.
        mime_type: String,
        /// Its size, decoded.
        bytes: usize,
    },
    /// Audio.
    Audio {
        /// Its MIME type.
        mime_type: String,
        /// Its size, decoded.
        bytes: usize,
    },
    /// An embedded resource.
    Resource {
        /// Its URI.
        uri: String,
        /// Its MIME type, if given.
        mime_type: Option<String>,
        /// Its text, for a text resource.
        text: Option<String>,
        /// Its size decoded, for a binary resource.
        bytes: Option<usize>,
    },
    /// A link to a resource the server can read.
    ResourceLink {
        /// Its URI.
        uri: String,
        /// Its name.
        name: String,
    },
    /// A block this version could not read, of a type it does not know (one MCP added
    /// since, say) or not shaped as MCP says; the rest of the result is kept, and the model
    /// is told this block was left out.
    Other {
        /// Its `type` as the server gave it (its first 64 bytes); empty when it had none.
        kind: String,
    },
}

impl McpContent {
    /// The block standing for one of type `kind` that could not be read.
    pub(crate) fn unread(kind: &str) -> Self {
        McpContent::Other {
            kind: head(kind, MAX_KIND_BYTES).to_owned(),
        }
    }

    fn from_rmcp(block: &ContentBlock) -> Self {
        match block {
            ContentBlock::Text(text) => {
                let unread = text
                    .meta
                    .as_ref()
                    .and_then(|meta| meta.0.get(UNREAD_CONTENT_META_KEY))
                    .and_then(Value::as_str);
                match unread {
                    Some(kind) => McpContent::unread(kind),
                    None => McpContent::Text(text.text.clone()),
                }
            }
            ContentBlock::Image(image) => McpContent::Image {
                mime_type: image.mime_type.clone(),
                bytes: base64_decoded_len(&image.data),
            },
            ContentBlock::Audio(audio) => McpContent::Audio {
                mime_type: audio.mime_type.clone(),
                bytes: base64_decoded_len(&audio.data),
            },
            ContentBlock::Resource(embedded) => match &embedded.resource {
                ResourceContents::TextResourceContents {
                    uri,
                    mime_type,
                    text,
                    ..
                } => McpContent::Resource {
                    uri: uri.clone(),
                    mime_type: mime_type.clone(),
                    text: Some(text.clone()),
                    bytes: None,
                },
                ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob,
                    ..
                } => McpContent::Resource {
                    uri: uri.clone(),
                    mime_type: mime_type.clone(),
                    text: None,
                    bytes: Some(base64_decoded_len(blob)),
                },
                _ => McpContent::unread("resource"),
            },
            ContentBlock::ResourceLink(link) => McpContent::ResourceLink {
                uri: link.uri.clone(),
                name: link.name.clone(),
            },
            // A kind rmcp reads and this version does not map: its type, from its JSON.
            other => {
                let json = serde_json::to_value(other).unwrap_or_default();
                McpContent::unread(json.get("type").and_then(Value::as_str).unwrap_or(""))
            }
        }
    }

    /// The block as the model sees it: text as is; `[image: image/png, 1234 bytes]`,
    /// `[audio: audio/wav, 1234 bytes]`; `[resource: uri]` followed by a text resource's text;
    /// `[resource: uri, mime, N bytes]` for a binary one; `[resource link: name, uri]`;
    /// `[content of type "video" not shown]` for a block that could not be read.
    pub fn render(&self) -> String {
        match self {
            McpContent::Text(text) => text.clone(),
            McpContent::Image { mime_type, bytes } => {
                format!("[image: {mime_type}, {bytes} bytes]")
            }
            McpContent::Audio { mime_type, bytes } => {
                format!("[audio: {mime_type}, {bytes} bytes]")
            }
            McpContent::Resource {
                uri,
                text: Some(text),
                ..
            } => format!("[resource: {uri}]\n{text}"),
            McpContent::Resource {
                uri,
                mime_type,
                bytes,
                ..
            } => {
                let mime = mime_type.as_deref().unwrap_or("application/octet-stream");
                format!("[resource: {uri}, {mime}, {} bytes]", bytes.unwrap_or(0))
            }
            McpContent::ResourceLink { uri, name } => format!("[resource link: {name}, {uri}]"),
            McpContent::Other { kind } if kind.is_empty() => {
                "[content without a type not shown]".to_owned()
            }
            McpContent::Other { kind } => format!("[content of type {kind:?} not shown]"),
        }
    }
}

/// The first `max_bytes` of `text`, back to a character boundary.
pub(crate) fn head(text: &str, max_bytes: usize) -> &str {
    let mut end = max_bytes.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The length of base64 `data` once decoded, without decoding it.
fn base64_decoded_len(data: &str) -> usize {
    let significant = data
        .bytes()
        .filter(|b| !b.is_ascii_whitespace() && *b != b'=')
        .count();
    significant * 3 / 4
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoded_length_of_base64() {
        assert_eq!(base64_decoded_len(""), 0);
        assert_eq!(base64_decoded_len("YQ=="), 1);
        assert_eq!(base64_decoded_len("YWI="), 2);
        assert_eq!(base64_decoded_len("YWJj"), 3);
        assert_eq!(base64_decoded_len("YWJjZA=="), 4);
    }

    #[test]
    fn long_text_is_cut_at_a_character_boundary() {
        assert_eq!(cut_to("result", "short".into(), 5), "short");
        assert_eq!(
            cut_to("result", "ab€cd".into(), 4),
            "ab\n[… cut: the result was 7 bytes, the first 2 are shown]"
        );
    }

    #[test]
    fn stand_ins() {
        let image = McpContent::Image {
            mime_type: "image/png".into(),
            bytes: 10,
        };
        assert_eq!(image.render(), "[image: image/png, 10 bytes]");
        let resource = McpContent::Resource {
            uri: "test://1".into(),
            mime_type: Some("text/plain".into()),
            text: Some("hello".into()),
            bytes: None,
        };
        assert_eq!(resource.render(), "[resource: test://1]\nhello");
        assert_eq!(
            McpContent::unread("video").render(),
            "[content of type \"video\" not shown]"
        );
        assert_eq!(
            McpContent::unread("").render(),
            "[content without a type not shown]"
        );
        // The type is the server's: it is cut, and quoted with its quotes and line breaks escaped.
        let odd = McpContent::unread(&format!("ab\"]\n{}", "€".repeat(100)));
        let McpContent::Other { kind } = &odd else {
            panic!("not an unread block");
        };
        assert_eq!(kind.len(), 62);
        assert!(
            odd.render().starts_with("[content of type \"ab\\\"]\\n€"),
            "{}",
            odd.render()
        );
    }

    #[test]
    fn head_keeps_whole_characters() {
        assert_eq!(head("ab€", 3), "ab");
        assert_eq!(head("ab", 10), "ab");
    }
}
