//! The demo's tools: a calculator and a file lister (read-only) and a note writer (a side
//! effect, so the approval hook asks first).

use reins::tool::{Tool, tool_fn};
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::{Component, Path, PathBuf};

/// Tools that change something: the approval hook asks before each call.
pub const SIDE_EFFECT_TOOLS: &[&str] = &["write_note"];

#[derive(Deserialize, JsonSchema)]
pub struct CalcArgs {
    /// The arithmetic expression, e.g. `1234 * 5678` (+ - * / % ^ and parentheses).
    // The pattern also becomes part of the local model's grammar: only arithmetic fits.
    #[schemars(regex(pattern = r"^[-(0-9][-+*/%^(). 0-9]{0,79}$"))]
    pub expression: String,
}

#[derive(Deserialize, JsonSchema)]
pub struct ListArgs {
    /// A directory under the current one, e.g. `.` or `src`.
    pub directory: String,
}

#[derive(Deserialize, JsonSchema)]
pub struct NoteArgs {
    /// The file name (in the current directory), e.g. `notes.txt`.
    pub file: String,
    /// The text to append.
    pub text: String,
}

pub fn calculator() -> impl Tool {
    tool_fn(
        "calculator",
        "Evaluates an arithmetic expression exactly.",
        |args: CalcArgs| async move {
            evaluate(&args.expression).map(|value| format!("{} = {value}", args.expression.trim()))
        },
    )
}

pub fn list_files(root: PathBuf) -> impl Tool {
    tool_fn(
        "list_files",
        "Lists the files in a directory.",
        move |args: ListArgs| {
            let root = root.clone();
            async move { list(&root, &args.directory) }
        },
    )
}

pub fn write_note(root: PathBuf) -> impl Tool {
    tool_fn(
        "write_note",
        "Appends a line of text to a note file.",
        move |args: NoteArgs| {
            let root = root.clone();
            async move { append_note(&root, &args.file, &args.text) }
        },
    )
}

/// A path under `root`, or an error naming why not.
fn inside(root: &Path, relative: &str) -> Result<PathBuf, String> {
    let relative = Path::new(relative.trim());
    if relative
        .components()
        .any(|part| !matches!(part, Component::Normal(_) | Component::CurDir))
    {
        return Err(format!(
            "{} is not under the current directory",
            relative.display()
        ));
    }
    Ok(root.join(relative))
}

fn list(root: &Path, directory: &str) -> Result<String, String> {
    let directory = if directory.trim().is_empty() {
        "."
    } else {
        directory
    };
    let path = inside(root, directory)?;
    let entries = std::fs::read_dir(&path).map_err(|error| format!("{directory}: {error}"))?;
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => format!("{name}/"),
                _ => name,
            }
        })
        .collect();
    names.sort();
    let total = names.len();
    names.truncate(40);
    let mut listing = names.join("\n");
    if total > names.len() {
        listing.push_str(&format!("\n... and {} more", total - names.len()));
    }
    Ok(if listing.is_empty() {
        format!("{directory} is empty")
    } else {
        listing
    })
}

fn append_note(root: &Path, file: &str, text: &str) -> Result<String, String> {
    use std::io::Write;
    let name = Path::new(file.trim());
    if name.components().count() != 1 || name.file_name().is_none() {
        return Err(format!("{file:?} is not a plain file name"));
    }
    let path = inside(root, file)?;
    let mut note = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|error| format!("{file}: {error}"))?;
    writeln!(note, "{text}").map_err(|error| format!("{file}: {error}"))?;
    Ok(format!("appended {} bytes to {file}", text.len() + 1))
}

/// Evaluates `+ - * / % ^`, unary minus and parentheses over decimal numbers.
pub fn evaluate(expression: &str) -> Result<f64, String> {
    let tokens: Vec<char> = expression.chars().filter(|c| !c.is_whitespace()).collect();
    let mut parser = Calc { tokens, at: 0 };
    let value = parser.sum()?;
    match parser.peek() {
        None if value.is_finite() => Ok(value),
        None => Err(format!("{expression} has no finite value")),
        Some(c) => Err(format!("unexpected {c:?} in {expression:?}")),
    }
}

struct Calc {
    tokens: Vec<char>,
    at: usize,
}

impl Calc {
    fn peek(&self) -> Option<char> {
        self.tokens.get(self.at).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        let found = self.peek() == Some(c);
        if found {
            self.at += 1;
        }
        found
    }

    fn sum(&mut self) -> Result<f64, String> {
        let mut value = self.product()?;
        loop {
            if self.eat('+') {
                value += self.product()?;
            } else if self.eat('-') {
                value -= self.product()?;
            } else {
                return Ok(value);
            }
        }
    }

    fn product(&mut self) -> Result<f64, String> {
        let mut value = self.power()?;
        loop {
            if self.eat('*') || self.eat('x') || self.eat('×') {
                value *= self.power()?;
            } else if self.eat('/') || self.eat('÷') {
                value /= self.power()?;
            } else if self.eat('%') {
                value %= self.power()?;
            } else {
                return Ok(value);
            }
        }
    }

    fn power(&mut self) -> Result<f64, String> {
        let base = self.unary()?;
        if self.eat('^') {
            return Ok(base.powf(self.power()?));
        }
        Ok(base)
    }

    fn unary(&mut self) -> Result<f64, String> {
        if self.eat('-') {
            return Ok(-self.unary()?);
        }
        if self.eat('+') {
            return self.unary();
        }
        if self.eat('(') {
            let value = self.sum()?;
            return if self.eat(')') {
                Ok(value)
            } else {
                Err("a parenthesis is not closed".to_owned())
            };
        }
        let start = self.at;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_digit() || c == '.' || c == ',' || c == '_')
        {
            self.at += 1;
        }
        let number: String = self.tokens[start..self.at]
            .iter()
            .filter(|c| **c != ',' && **c != '_')
            .collect();
        match self.peek() {
            _ if !number.is_empty() => number
                .parse()
                .map_err(|_| format!("{number:?} is not a number")),
            Some(c) => Err(format!("expected a number, found {c:?}")),
            None => Err("the expression ends too early".to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic() {
        assert_eq!(evaluate("1234 * 5678"), Ok(7_006_652.0));
        assert_eq!(evaluate("-(2 + 3) * 4 ^ 2 / 8"), Ok(-10.0));
        assert_eq!(evaluate("1,000 + 0.5"), Ok(1000.5));
        assert!(evaluate("2 +").is_err());
        assert!(evaluate("1 / 0").is_err());
        assert!(evaluate("two").is_err());
    }

    #[test]
    fn paths_stay_under_the_root() {
        let root = Path::new("/tmp/root");
        assert!(inside(root, "../etc").is_err());
        assert!(inside(root, "/etc").is_err());
        assert_eq!(inside(root, "./src"), Ok(root.join("./src")));
    }
}
