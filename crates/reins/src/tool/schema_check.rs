//! A tool's arguments checked against its JSON schema (feature `schema-check`), for a caller
//! that holds arguments the run itself does not deserialize: a person's edit of a call's
//! arguments before approving it, or a tool whose parameters are a schema rather than a Rust
//! type (an MCP server's, a command line's). reins-mcp checks an MCP tool's structured
//! result against its `outputSchema` with it too.
//!
//! [`CompiledSchema::compile`] compiles a schema once (no remote `$ref`s: a `$ref` to another
//! document does not compile); [`CompiledSchema::check`] then says whether a value fits,
//! and if not, what does not: the first few mismatches, each with its JSON pointer.
//!
//! ```
//! use reins::tool::schema_check::CompiledSchema;
//! use serde_json::json;
//!
//! let schema = json!({
//!     "type": "object",
//!     "properties": {"amount": {"type": "integer", "minimum": 0}},
//!     "required": ["amount"]
//! });
//! let transfer = CompiledSchema::compile(&schema).expect("the schema compiles");
//! assert_eq!(transfer.check(&json!({"amount": 5}), 3), Ok(()));
//! assert_eq!(
//!     transfer.check(&json!({"amount": -1}), 3),
//!     Err("-1 is less than the minimum of 0 (at /amount)".to_owned())
//! );
//!
//! // A schema JSON Schema itself refuses checks nothing: the caller is told why.
//! assert!(CompiledSchema::compile(&json!({"type": 5})).is_err());
//! ```

use serde_json::Value;

/// A JSON schema compiled, to check values against.
#[derive(Debug)]
pub struct CompiledSchema {
    validator: jsonschema::Validator,
}

impl CompiledSchema {
    /// `schema` compiled, or why it cannot be (an unknown `$schema` dialect, a `$ref` to
    /// another document, a schema JSON Schema itself refuses), in the validator's words.
    pub fn compile(schema: &Value) -> Result<Self, String> {
        jsonschema::validator_for(schema)
            .map(|validator| CompiledSchema { validator })
            .map_err(|error| error.to_string())
    }

    /// `Ok` when `value` fits the schema; else its first `at_most` mismatches (at least one),
    /// each followed by ` (at <JSON pointer>)` unless it is the whole value's, joined by
    /// `; `. The caller says whose value it is, in its own words.
    pub fn check(&self, value: &Value, at_most: usize) -> Result<(), String> {
        let mismatches: Vec<String> = self
            .validator
            .iter_errors(value)
            .take(at_most.max(1))
            .map(|error| match error.instance_path().to_string() {
                at if at.is_empty() => error.to_string(),
                at => format!("{error} (at {at})"),
            })
            .collect();
        if mismatches.is_empty() {
            Ok(())
        } else {
            Err(mismatches.join("; "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::CompiledSchema;
    use serde_json::{Value, json};

    fn compiled(schema: Value) -> CompiledSchema {
        match CompiledSchema::compile(&schema) {
            Ok(compiled) => compiled,
            Err(reason) => panic!("{schema} does not compile: {reason}"),
        }
    }

    fn order() -> CompiledSchema {
        compiled(json!({
            "type": "object",
            "properties": {
                "item": {"type": "string"},
                "count": {"type": "integer", "minimum": 1},
                "gift": {"type": "boolean"}
            },
            "required": ["item"]
        }))
    }

    #[test]
    fn each_mismatch_is_listed_with_where_it_is() {
        let order = order();
        assert_eq!(order.check(&json!({"item": "pen", "count": 2}), 3), Ok(()));
        assert_eq!(
            order.check(&json!({"item": "pen", "count": 0, "gift": "yes"}), 3),
            Err(
                "0 is less than the minimum of 1 (at /count); \"yes\" is not of type \"boolean\" \
                 (at /gift)"
                    .to_owned()
            )
        );
        // A mismatch of the whole value has no pointer.
        assert_eq!(
            order.check(&json!({"count": 2}), 3),
            Err("\"item\" is a required property".to_owned())
        );
    }

    #[test]
    fn no_more_mismatches_are_listed_than_asked_and_never_none() {
        let order = order();
        let wrong = json!({"count": 0, "gift": "yes"});
        let listed = |at_most| match order.check(&wrong, at_most) {
            Ok(()) => panic!("{wrong} fits"),
            Err(mismatches) => mismatches.split("; ").count(),
        };
        assert_eq!(listed(5), 3);
        assert_eq!(listed(2), 2);
        assert_eq!(listed(0), 1);
    }

    #[test]
    fn a_schema_that_does_not_compile_says_why() {
        for schema in [
            json!({"$ref": "https://schemas.example/args.json"}),
            json!({"$schema": "https://schemas.example/unknown-dialect"}),
            json!({"type": "object", "properties": {"n": {"type": 5}}}),
        ] {
            match CompiledSchema::compile(&schema) {
                Ok(_) => panic!("{schema} compiled"),
                Err(reason) => assert!(!reason.is_empty(), "{schema}"),
            }
        }
    }
}
