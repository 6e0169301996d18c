//! Edited arguments checked against the tool's JSON schema before a decision is taken: an
//! approval through the ingress (`decide`, which anyone reaching the ingress can call, not
//! only the CLI, which checks first) must not run a tool with arguments its schema refuses.
//!
//! The schemas are the agent's own (its tools' definitions), not stored with the pending
//! call: the service builds the agent it runs and looks the tool up. A tool the agent no
//! longer has, or whose schema does not compile (an unknown `$schema` dialect, a `$ref` to
//! another document, a schema JSON Schema itself refuses), checks nothing, as the CLI does;
//! the worker logs the latter.

use reins::agent::Agent;
use reins::tool::schema_check::CompiledSchema;
use serde_json::Value;
use std::collections::HashMap;

/// How many mismatches a refusal lists: enough to fix the arguments, not a page of them.
const LISTED_MISMATCHES: usize = 3;

/// The parameter schemas of an agent's tools, by tool name.
#[derive(Debug, Clone, Default)]
pub(crate) struct ArgsSchemas {
    by_tool: HashMap<String, Value>,
}

impl ArgsSchemas {
    /// The schemas of `agent`'s tools (a tool source's as its list was when the agent was
    /// built).
    pub(crate) fn of(agent: &Agent) -> Self {
        let by_tool = agent
            .tools()
            .definitions()
            .iter()
            .map(|definition| (definition.name.clone(), definition.parameters.clone()))
            .collect();
        ArgsSchemas { by_tool }
    }

    /// Why `args`, edited for the call `call` of the tool `tool`, do not fit the tool's
    /// schema, if they do not: the first few mismatches, each with where it is. `None` when
    /// they fit, and when nothing can be checked (see the module's docs).
    pub(crate) fn misfit(&self, call: &str, tool: &str, args: &Value) -> Option<String> {
        let schema = self.by_tool.get(tool)?;
        let compiled = match CompiledSchema::compile(schema) {
            Ok(compiled) => compiled,
            Err(reason) => {
                tracing::warn!(
                    tool = %tool,
                    reason = %reason,
                    "the edited arguments of a call are not checked: the tool's schema cannot \
                     be compiled"
                );
                return None;
            }
        };
        compiled
            .check(args, LISTED_MISMATCHES)
            .err()
            .map(|mismatches| {
                format!(
                    "the edited arguments for `{call}` do not fit the schema of `{tool}`: \
                     {mismatches}"
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::ArgsSchemas;
    use serde_json::json;

    fn schemas(tool: &str, schema: serde_json::Value) -> ArgsSchemas {
        ArgsSchemas {
            by_tool: [(tool.to_owned(), schema)].into(),
        }
    }

    #[test]
    fn arguments_that_do_not_fit_say_where_and_why() {
        let transfer = schemas(
            "transfer",
            json!({
                "type": "object",
                "properties": {"amount": {"type": "integer", "minimum": 0}},
                "required": ["amount"]
            }),
        );
        assert_eq!(
            transfer.misfit("t1c0", "transfer", &json!({"amount": 5})),
            None
        );
        let said = transfer
            .misfit("t1c0", "transfer", &json!({"amount": "lots"}))
            .unwrap_or_default();
        assert!(
            said.starts_with("the edited arguments for `t1c0` do not fit the schema of `transfer`"),
            "{said}"
        );
        assert!(said.contains("(at /amount)"), "{said}");
        let said = transfer
            .misfit("t1c0", "transfer", &json!({}))
            .unwrap_or_default();
        assert!(said.contains("\"amount\" is a required property"), "{said}");
    }

    /// A tool the agent does not have, or a schema that does not compile, checks nothing.
    #[test]
    fn what_cannot_be_checked_is_let_through() {
        let remote = schemas(
            "lookup",
            json!({"$ref": "https://schemas.example/args.json"}),
        );
        assert_eq!(remote.misfit("t1c0", "lookup", &json!({"id": 5})), None);
        let invalid = schemas("lookup", json!({"properties": {"id": {"type": 5}}}));
        assert_eq!(invalid.misfit("t1c0", "lookup", &json!({"id": 5})), None);
        assert_eq!(
            invalid.misfit("t1c0", "transfer", &json!({"amount": "x"})),
            None
        );
    }
}
