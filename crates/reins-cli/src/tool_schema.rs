//! A tool's arguments checked against its JSON schema: one check for the arguments a person
//! edits before approving a call (`edited_args`) and for those the model gives any tool
//! (`args_check`, before anyone is asked about the call), and again by a shell tool
//! (`shell_tool`), whose program must not run with arguments the schema refuses.
//!
//! A schema that does not compile (an unknown `$schema` dialect, a `$ref` to another
//! document, a schema JSON Schema itself refuses) checks nothing. A shell tool's is the agent
//! file's: `reins check`, and every command that loads the file, refuses it at its line, so
//! none reaches a run (and a shell tool that had one would run nothing). An MCP tool's is its
//! server's, which the file cannot fix and which checks its arguments itself: its calls go on
//! unchecked to the approval rules and the server, and the person is told so on stderr, once
//! for each tool and schema ([`SchemaCache`]), and again for each edit of its arguments.

use reins::tool::schema_check::CompiledSchema;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// The most tools whose compiled schemas a [`SchemaCache`] keeps: past it, storing one more
/// drops any one other (not the oldest), compiled again when next called.
const CACHED_TOOLS: usize = 1024;

/// How many mismatches a refusal lists: enough to fix the arguments, not a page of them.
const LISTED_MISMATCHES: usize = 3;

/// `args` for the tool `tool`, or why they do not fit its `schema`: the first few
/// mismatches, each with where it is.
pub fn check(tool: &str, schema: &CompiledSchema, args: &Value) -> Result<(), String> {
    schema.check(args, LISTED_MISMATCHES).map_err(|mismatches| {
        format!("the arguments do not fit the schema of `{tool}`: {mismatches}")
    })
}

/// `args` for the tool `tool`, or why they do not fit its `schema` ([`check`]), the schema
/// compiled for this one check: a person's edited arguments (`edited_args`). A schema that
/// does not compile checks nothing, and the person is told so on stderr ([`unchecked`]).
pub fn fits(tool: &str, schema: &Value, args: &Value) -> Result<(), String> {
    match CompiledSchema::compile(schema) {
        Ok(compiled) => check(tool, &compiled, args),
        Err(reason) => {
            errln!(
                "reins: {}",
                reins::text::printable(&unchecked(tool, &reason))
            );
            Ok(())
        }
    }
}

/// What the person is told of a tool whose schema does not compile (`reason`, from
/// `CompiledSchema::compile`): its arguments are not checked, and why.
pub fn unchecked(tool: &str, reason: &str) -> String {
    format!("the arguments of `{tool}` are not checked: its schema cannot be compiled ({reason})")
}

/// What the model is told of a call whose arguments do not fit (`mismatch`, from [`check`]),
/// whichever check refused it: what does not fit, and that nothing ran.
pub fn not_run(mismatch: &str) -> String {
    format!("{mismatch}; the tool did not run")
}

/// The tools' schemas compiled, by tool name, shared by every clone (every agent and call of
/// the process): a tool's schema is compiled on its first call, and again only when the
/// turn's tool list gives it another schema (an MCP server's tools can change). At most
/// [`CACHED_TOOLS`] tools are kept. The lock is held only to look up and to store, never
/// while a schema compiles or arguments are checked.
#[derive(Debug, Clone, Default)]
pub struct SchemaCache(Arc<Mutex<HashMap<String, Compiled>>>);

/// A tool's schema and what compiling it gave.
#[derive(Debug)]
struct Compiled {
    schema: Value,
    validator: Result<Arc<CompiledSchema>, String>,
}

/// A tool's schema as a [`SchemaCache`] has it.
#[derive(Debug, Clone)]
pub enum Cached {
    /// The schema compiled.
    Validator(Arc<CompiledSchema>),
    /// The schema does not compile, for `reason`; `first` the first time this tool's schema
    /// is looked up (since it changed, or was dropped to keep the cache bounded).
    Uncompilable {
        /// Why the schema does not compile.
        reason: String,
        /// Whether this is the first lookup of this tool's schema.
        first: bool,
    },
}

impl Compiled {
    fn cached(&self, first: bool) -> Cached {
        match &self.validator {
            Ok(validator) => Cached::Validator(Arc::clone(validator)),
            Err(reason) => Cached::Uncompilable {
                reason: reason.clone(),
                first,
            },
        }
    }
}

impl SchemaCache {
    /// The tool `tool`'s `schema` compiled: the one compiled before when the schema is the
    /// same, else compiled now (and kept in place of the tool's earlier schema).
    pub fn get(&self, tool: &str, schema: &Value) -> Cached {
        let found = self
            .lock()
            .get(tool)
            .filter(|compiled| compiled.schema == *schema)
            .map(|compiled| compiled.cached(false));
        if let Some(found) = found {
            return found;
        }
        let compiled = Compiled {
            schema: schema.clone(),
            validator: CompiledSchema::compile(schema).map(Arc::new),
        };
        let mut tools = self.lock();
        // Another call may have compiled the same schema meanwhile: the first one stored is
        // the one told about.
        if let Some(stored) = tools.get(tool).filter(|stored| stored.schema == *schema) {
            return stored.cached(false);
        }
        if tools.len() >= CACHED_TOOLS && !tools.contains_key(tool) {
            let dropped = tools.keys().next().cloned();
            if let Some(dropped) = dropped {
                tools.remove(&dropped);
            }
        }
        let cached = compiled.cached(true);
        tools.insert(tool.to_owned(), compiled);
        cached
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Compiled>> {
        // Nothing panics while the lock is held; a poisoned map is still whole.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::{CACHED_TOOLS, Cached, SchemaCache};
    use reins::tool::schema_check::CompiledSchema;
    use serde_json::{Value, json};
    use std::sync::Arc;

    fn note_schema() -> Value {
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
    }

    fn validator(cached: Cached) -> Arc<CompiledSchema> {
        match cached {
            Cached::Validator(validator) => validator,
            Cached::Uncompilable { reason, .. } => panic!("does not compile: {reason}"),
        }
    }

    #[test]
    fn a_tools_schema_is_compiled_once_and_again_when_it_changes() {
        let cache = SchemaCache::default();
        let first = validator(cache.get("save_note", &note_schema()));
        let again = validator(cache.clone().get("save_note", &note_schema()));
        assert!(Arc::ptr_eq(&first, &again), "compiled again");
        assert_eq!(again.check(&json!({"text": "draft"}), 1), Ok(()));

        // The server lists the tool anew, `text` now a number: its new schema is checked.
        let changed = json!({"type": "object", "properties": {"text": {"type": "number"}}});
        let recompiled = validator(cache.get("save_note", &changed));
        assert!(!Arc::ptr_eq(&first, &recompiled));
        assert!(recompiled.check(&json!({"text": "draft"}), 1).is_err());
        assert_eq!(recompiled.check(&json!({"text": 3}), 1), Ok(()));
    }

    #[test]
    fn a_schema_that_does_not_compile_is_reported_once_for_each_schema() {
        let cache = SchemaCache::default();
        let remote = json!({"$ref": "https://schemas.example/args.json"});
        let dialect = json!({"$schema": "https://schemas.example/unknown-dialect"});
        let invalid = json!({"type": "object", "properties": {"n": {"type": 5}}});
        for schema in [remote, dialect, invalid] {
            let Cached::Uncompilable { reason, first } = cache.get("lookup", &schema) else {
                panic!("{schema} compiled");
            };
            assert!(first && !reason.is_empty(), "{schema}: {reason}");
            assert!(
                matches!(
                    cache.get("lookup", &schema),
                    Cached::Uncompilable { first: false, .. }
                ),
                "{schema} reported twice"
            );
        }
    }

    #[test]
    fn the_cache_keeps_a_bounded_number_of_tools() {
        let cache = SchemaCache::default();
        for n in 0..CACHED_TOOLS + 10 {
            validator(cache.get(&format!("tool_{n}"), &note_schema()));
        }
        assert_eq!(cache.lock().len(), CACHED_TOOLS);
        assert!(
            cache
                .lock()
                .contains_key(&format!("tool_{}", CACHED_TOOLS + 9))
        );
    }
}
