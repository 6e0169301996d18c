//! A recording of model responses: one JSON line per response, keyed by the request's digest.

use crate::completion::{CompletionResponse, FinishReason, RawResponse, Usage};
use crate::hex::lower_hex;
use crate::message::{AssistantContent, OneOrMany};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// A model response as the cache keeps and records it: what the run uses of it (the
/// provider's raw response is not kept).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CachedResponse {
    /// The assistant's content.
    pub content: OneOrMany<AssistantContent>,
    /// Why the model stopped, when it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<FinishReason>,
    /// The provider's id of the original response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
    /// The tokens the original call used (a served turn reports none).
    #[serde(default)]
    pub usage: Usage,
}

impl CachedResponse {
    pub(super) fn of(response: &CompletionResponse) -> Self {
        CachedResponse {
            content: response.content.clone(),
            finish_reason: response.finish_reason.clone(),
            response_id: response.response_id.clone(),
            usage: response.usage,
        }
    }

    /// The response a served turn gets: no usage, since no tokens were spent.
    pub(super) fn to_response(&self) -> CompletionResponse {
        CompletionResponse {
            content: self.content.clone(),
            usage: Usage::default(),
            finish_reason: self.finish_reason.clone(),
            response_id: self.response_id.clone(),
            raw: RawResponse::none(),
        }
    }
}

/// A recording could not be opened, read or parsed.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// The file could not be opened or read.
    #[error("response cache {path}: {source}")]
    Io {
        /// The recording's path.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// A line is not a recorded response.
    #[error("response cache {path}, line {line}: {message}")]
    Malformed {
        /// The recording's path.
        path: PathBuf,
        /// The one-based line number.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
}

/// One line of a recording, as written: the hex SHA-256 digest of the model label and the
/// request, and the response.
#[derive(Serialize)]
struct LineOut<'a> {
    key: String,
    response: &'a CachedResponse,
}

/// One line of a recording, as read.
#[derive(Deserialize)]
struct LineIn {
    key: String,
    response: CachedResponse,
}

/// An open recording, appended to as responses arrive.
pub(super) struct Recording {
    path: PathBuf,
    file: Mutex<File>,
}

type Entries = HashMap<[u8; 32], CachedResponse>;

impl Recording {
    /// Reads every response recorded in `path`.
    pub(super) fn read(path: &Path) -> Result<Entries, CacheError> {
        let io = |source| CacheError::Io {
            path: path.to_owned(),
            source,
        };
        let mut entries = HashMap::new();
        let reader = BufReader::new(File::open(path).map_err(io)?);
        for (index, line) in reader.lines().enumerate() {
            let line = line.map_err(io)?;
            if line.trim().is_empty() {
                continue;
            }
            let malformed = |message: String| CacheError::Malformed {
                path: path.to_owned(),
                line: index + 1,
                message,
            };
            let parsed: LineIn =
                serde_json::from_str(&line).map_err(|e| malformed(e.to_string()))?;
            let key = parse_key(&parsed.key)
                .ok_or_else(|| malformed("`key` is not a 64-digit hex digest".into()))?;
            entries.insert(key, parsed.response);
        }
        Ok(entries)
    }

    /// Opens `path` for appending (creating it), with the responses already in it.
    pub(super) fn open(path: &Path) -> Result<(Entries, Recording), CacheError> {
        let io = |source| CacheError::Io {
            path: path.to_owned(),
            source,
        };
        // Read as well as appended to, to see how the file ends; writes still go to its end.
        let mut file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(path)
            .map_err(io)?;
        let entries = Recording::read(path)?;
        // A last line without its newline (a file saved by an editor or another tool) would
        // have the next response appended to it, and the recording would no longer read.
        if !ends_with_newline(&mut file).map_err(io)? {
            file.write_all(b"\n").map_err(io)?;
        }
        let recording = Recording {
            path: path.to_owned(),
            file: Mutex::new(file),
        };
        Ok((entries, recording))
    }

    /// Appends one response as one line, written whole so concurrent runs never interleave.
    pub(super) fn append(&self, key: &[u8; 32], response: &CachedResponse) -> std::io::Result<()> {
        let line = LineOut {
            key: lower_hex(key),
            response,
        };
        let mut bytes = serde_json::to_vec(&line)?;
        bytes.push(b'\n');
        let mut file = self.file.lock().unwrap_or_else(PoisonError::into_inner);
        file.write_all(&bytes)?;
        file.flush()
    }
}

impl fmt::Debug for Recording {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Recording").field(&self.path).finish()
    }
}

/// Whether `file` is empty or ends with a newline.
fn ends_with_newline(file: &mut File) -> std::io::Result<bool> {
    if file.metadata()?.len() == 0 {
        return Ok(true);
    }
    file.seek(SeekFrom::End(-1))?;
    let mut last = [0];
    file.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

fn parse_key(text: &str) -> Option<[u8; 32]> {
    if text.len() != 64 || !text.is_ascii() {
        return None;
    }
    let mut key = [0; 32];
    for (index, byte) in key.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(index * 2..index * 2 + 2)?, 16).ok()?;
    }
    Some(key)
}
