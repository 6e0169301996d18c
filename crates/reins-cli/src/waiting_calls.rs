//! The calls of a run that wait for a decision, as a refused decision names them: a call id
//! given wrongly (`t9`) is answered with the ids that would do, each with its tool, so the
//! person can give the right one without looking the run up.

/// The most waiting calls named; the rest are counted (`and 3 more`): a run may wait on many.
const MOST_NAMED: usize = 5;

/// What follows "run `R` has no call `ID` waiting for a decision": the calls that do wait
/// (`waiting: `t1c0` (save_note), `t1c1` (search) and 2 more`), each its id and its tool's
/// name, or that none does.
pub fn waiting_instead<'a>(calls: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let calls: Vec<(&str, &str)> = calls.into_iter().collect();
    if calls.is_empty() {
        return "no call of it waits for a decision".to_owned();
    }
    let named: Vec<String> = calls
        .iter()
        .take(MOST_NAMED)
        .map(|(id, tool)| format!("`{id}` ({tool})"))
        .collect();
    let more = calls.len().saturating_sub(MOST_NAMED);
    let list = if more > 0 {
        format!("{} and {more} more", named.join(", "))
    } else {
        named.join(", ")
    };
    format!("waiting: {list}")
}

#[cfg(test)]
mod tests {
    use super::waiting_instead;

    #[test]
    fn names_a_few_waiting_calls_and_counts_the_rest() {
        assert_eq!(
            waiting_instead([("t1c0", "save_note")]),
            "waiting: `t1c0` (save_note)"
        );
        let ids: Vec<String> = (0..8).map(|n| format!("t1c{n}")).collect();
        let many = waiting_instead(ids.iter().map(|id| (id.as_str(), "search")));
        assert_eq!(
            many,
            "waiting: `t1c0` (search), `t1c1` (search), `t1c2` (search), `t1c3` (search), \
             `t1c4` (search) and 3 more"
        );
        assert_eq!(waiting_instead([]), "no call of it waits for a decision");
    }
}
