//! A `[[tools.shell]]` entry checked: its name is one every provider accepts, its schema is
//! a JSON object schema that compiles (one that does not, e.g. with a `$ref` to another
//! document or an unknown `$schema` dialect, would check no call's arguments), its
//! command's `{placeholders}` name only the schema's properties, and its `timeout_secs`, if
//! set, is at least 1.

use super::diagnostic::Diagnostic;
use super::{LoadedAgent, ShellToolConfig};
use std::collections::BTreeSet;

/// The JSON schema types a property may have.
const JSON_TYPES: [&str; 7] = [
    "string", "number", "integer", "boolean", "object", "array", "null",
];

/// Every problem of the shell tool `tool`, added to `problems`; `for_gemini` when one of the
/// agent's models is Gemini's (which is sent a name with a digit first with `_` before it).
pub fn check_shell_tool(
    agent: &LoadedAgent,
    tool: &ShellToolConfig,
    for_gemini: bool,
    problems: &mut Vec<Diagnostic>,
) {
    if let Err(message) = provider_safe_name(tool.name.get_ref(), for_gemini) {
        problems.push(agent.error_at(tool.name.span(), message));
    }
    let schema_span = tool.schema.span();
    // With a schema that is not one, its properties are unknown: no placeholder is blamed
    // for a mistake in the schema.
    let properties = match schema_properties(tool.schema.get_ref()).and_then(|properties| {
        compiles(tool.schema.get_ref())?;
        Ok(properties)
    }) {
        Ok(properties) => Some(properties),
        Err(message) => {
            problems.push(agent.error_at(schema_span, message));
            None
        }
    };
    if let Some(timeout) = &tool.timeout_secs
        && *timeout.get_ref() == 0
    {
        problems.push(agent.error_at(
            timeout.span(),
            "`timeout_secs` must be at least 1: every call of a tool given no time would time \
             out before its program ran",
        ));
    }
    let command = tool.command.get_ref();
    if command.is_empty() {
        problems.push(agent.error_at(tool.command.span(), "`command` is empty"));
    }
    for element in command {
        for name in placeholders(element) {
            if properties
                .as_ref()
                .is_some_and(|properties| !properties.contains(&name))
            {
                problems.push(agent.error_at(
                    tool.command.span(),
                    format!("`{{{name}}}` is not a property of the tool's `schema`"),
                ));
            }
        }
    }
}

/// Whether the providers accept `name` as a tool's name: 1 to 64 ASCII letters, digits, `_`
/// and `-`, and for Gemini one character fewer when a digit or `-` comes first. A provider
/// refuses a whole request for one bad name, so a mistake here would fail every model call of
/// the run.
fn provider_safe_name(name: &str, for_gemini: bool) -> Result<(), String> {
    const MAX: usize = 64;
    let allowed = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if name.is_empty() || name.len() > MAX {
        return Err(format!(
            "a tool's name must have 1 to {MAX} characters (`{name}` has {})",
            name.chars().count()
        ));
    }
    if let Some(bad) = name.chars().find(|c| !allowed(*c)) {
        return Err(format!(
            "`{name}` cannot be a tool's name: providers accept only ASCII letters, digits, `_` \
             and `-` (not {bad:?}); e.g. `{}`",
            name.replace(|c: char| !allowed(c), "_")
        ));
    }
    // Gemini is sent a name with a digit or `-` first (after any `_`) with one `_` more:
    // at the limit already, that is one character over it.
    if for_gemini && reins::providers::gemini::function_name(name).len() > MAX {
        return Err(format!(
            "`{name}` cannot be a tool's name for Gemini: a name with a digit or `-` first is \
             sent with `_` before it, one character over Gemini's {MAX}"
        ));
    }
    Ok(())
}

/// The property names of an object schema, or why it is not one.
fn schema_properties(schema: &toml::Value) -> Result<BTreeSet<String>, String> {
    let table = schema
        .as_table()
        .ok_or("`schema` must be a table (a JSON object schema)")?;
    if table.get("type").and_then(toml::Value::as_str) != Some("object") {
        return Err("`schema` must have `type = \"object\"`".to_owned());
    }
    let mut names = BTreeSet::new();
    if let Some(properties) = table.get("properties") {
        let properties = properties
            .as_table()
            .ok_or("`schema.properties` must be a table")?;
        for (name, property) in properties {
            let kind = property
                .as_table()
                .and_then(|p| p.get("type"))
                .and_then(toml::Value::as_str)
                .ok_or(format!("property `{name}` needs a `type`"))?;
            if !JSON_TYPES.contains(&kind) {
                return Err(format!("property `{name}` has unknown type `{kind}`"));
            }
            names.insert(name.clone());
        }
    }
    if let Some(required) = table.get("required") {
        let required = required
            .as_array()
            .ok_or("`schema.required` must be a list of property names")?;
        for name in required {
            let name = name
                .as_str()
                .ok_or("`schema.required` must be a list of property names")?;
            if !names.contains(name) {
                return Err(format!("required property `{name}` is not in `properties`"));
            }
        }
    }
    Ok(names)
}

/// Whether `schema` compiles as the tool's calls are checked with (`CompiledSchema::compile`);
/// else why not.
fn compiles(schema: &toml::Value) -> Result<(), String> {
    let schema = serde_json::to_value(schema).map_err(|error| error.to_string())?;
    reins::tool::schema_check::CompiledSchema::compile(&schema)
        .map(drop)
        .map_err(|reason| {
            format!("`schema` cannot be compiled, so it would check nothing: {reason}")
        })
}

/// The `{name}` placeholders of one command element.
pub fn placeholders(element: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = element;
    while let Some(open) = rest.find('{') {
        let after = &rest[open..];
        match placeholder_at(after) {
            Some(name) => {
                names.push(name.to_owned());
                rest = &after[name.len() + 2..];
            }
            None => rest = &after[1..],
        }
    }
    names
}

/// The name of the placeholder `text` starts with (`{name}`: ASCII letters, digits and `_`),
/// if it starts with one.
pub fn placeholder_at(text: &str) -> Option<&str> {
    let inside = text.strip_prefix('{')?;
    let close = inside.find('}')?;
    let name = &inside[..close];
    (!name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .then_some(name)
}
