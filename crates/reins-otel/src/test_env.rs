//! For unit tests: the environment as a list of variables, in the shape the set-up reads
//! it through (`Fn(&str) -> Option<String>`), so no test sets the process's own.

/// A reader of `vars` as the environment: a variable not listed is unset.
pub(crate) fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
    move |name| {
        vars.iter()
            .find(|(var, _)| *var == name)
            .map(|(_, value)| (*value).to_owned())
    }
}
