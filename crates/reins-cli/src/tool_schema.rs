//! A tool's arguments checked against its JSON schema: one check for the arguments a person
//! edits before approving a call (`edited_args`) and for those the model gives any tool
//! (`args_check`, before anyone is asked about the call), and again by a shell tool
//! (`shell_tool`), whose program must not run with arguments the schema refuses.

use serde_json::Value;

/// `args` for the tool `tool`, or why they do not fit its `schema`: the first few
/// mismatches, each with where it is. Checks a person's edited arguments
/// (`edited_args`), and the model's arguments of any tool before anyone is asked about the
/// call (`args_check`), and of a shell tool before its program runs (`ShellTool::call`).
pub fn fits(tool: &str, schema: &Value, args: &Value) -> Result<(), String> {
    // `reins check` has refused a schema that is not one; a schema that still does not
    // compile is left to the tool.
    let Ok(validator) = jsonschema::validator_for(schema) else {
        return Ok(());
    };
    let problems: Vec<String> = validator
        .iter_errors(args)
        .take(3)
        .map(|error| match error.instance_path().to_string() {
            at if at.is_empty() => error.to_string(),
            at => format!("{error} (at {at})"),
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the arguments do not fit the schema of `{tool}`: {}",
            problems.join("; ")
        ))
    }
}

/// What the model is told of a call whose arguments do not fit (`mismatch`, from [`fits`]),
/// whichever check refused it: what does not fit, and that nothing ran.
pub fn not_run(mismatch: &str) -> String {
    format!("{mismatch}; the tool did not run")
}
