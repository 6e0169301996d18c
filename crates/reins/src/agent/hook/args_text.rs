//! A tool call's arguments as JSON text ([`ArgsText`]), which dispatch and outcome hooks
//! read: written the first time something asks for it.

use crate::message::arguments_text;
use serde_json::Value;
use std::borrow::Cow;
use std::sync::OnceLock;

/// A tool call's arguments as JSON text, written the first time something asks for it: a
/// dispatch hook that decides by the tool's name alone (an approval policy by name, a
/// counter) never pays for it.
#[derive(Debug, Clone)]
pub(crate) enum ArgsText<'a> {
    /// The arguments the model sent; the text is written on the first read.
    Lazy {
        value: &'a Value,
        text: OnceLock<String>,
    },
    /// Arguments a hook rewrote, already written.
    Written(String),
}

impl<'a> ArgsText<'a> {
    /// The text of `value`, not written yet.
    pub(crate) fn of(value: &'a Value) -> Self {
        ArgsText::Lazy {
            value,
            text: OnceLock::new(),
        }
    }

    /// The text of `value`, written already when `text` is `Some`.
    pub(crate) fn with_text(value: &'a Value, text: Option<String>) -> Self {
        ArgsText::Lazy {
            value,
            text: text.map_or_else(OnceLock::new, OnceLock::from),
        }
    }

    /// The text, written now if it was not yet.
    pub(crate) fn text(&self) -> &str {
        match self {
            ArgsText::Lazy { value, text } => text.get_or_init(|| arguments_text(value)),
            ArgsText::Written(text) => text,
        }
    }

    /// The text if something had it written, owned.
    pub(crate) fn into_written(self) -> Option<String> {
        match self {
            ArgsText::Lazy { text, .. } => text.into_inner(),
            ArgsText::Written(text) => Some(text),
        }
    }

    /// The arguments as a JSON value, as their text would read: the model's own value,
    /// borrowed, when it has one (no copy); else parsed from the text.
    pub(crate) fn read_value(&self) -> Result<Cow<'a, Value>, serde_json::Error> {
        match self {
            ArgsText::Lazy {
                value: Value::String(raw),
                ..
            } => serde_json::from_str(raw).map(Cow::Owned),
            ArgsText::Lazy { value, .. } => Ok(Cow::Borrowed(*value)),
            ArgsText::Written(text) => serde_json::from_str(text).map(Cow::Owned),
        }
    }

    /// The arguments read as `T`, as their text would be: the model's arguments directly,
    /// with no text written on the way.
    pub(crate) fn read_as<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        match self {
            ArgsText::Lazy { value, .. } => read_args(value),
            ArgsText::Written(text) => serde_json::from_str(text),
        }
    }
}

/// Arguments read as `T`, as their JSON text would be: arguments kept as a string (text the
/// model sent that is not JSON) are parsed as text; any other value is read directly, with no
/// text written on the way.
pub(crate) fn read_args<T: serde::de::DeserializeOwned>(
    args: &Value,
) -> Result<T, serde_json::Error> {
    match args {
        Value::String(raw) => serde_json::from_str(raw),
        value => T::deserialize(value),
    }
}
