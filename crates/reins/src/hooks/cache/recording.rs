//! A recording of model responses: one JSON line per response (or failed call), keyed by the
//! digest of the model and the request, and the version of that key.

use super::key::KEY_VERSION;
use crate::completion::{CompletionError, CompletionResponse, FinishReason, RawResponse, Usage};
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

/// One line of a recording, as written: the hex SHA-256 digest of the model (label, provider,
/// name and endpoint, never a credential) and the request, the version of that key ([`KEY_VERSION`]), and the response,
/// or the failure of a call that failed.
#[derive(Serialize)]
struct LineOut<'a> {
    key: String,
    key_version: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    response: Option<&'a CachedResponse>,
    #[serde(skip_serializing_if = "Option::is_none")]
    failure: Option<&'a CompletionError>,
}

/// One line of a recording, as read.
#[derive(Deserialize)]
struct LineIn {
    key: String,
    /// `None` on the lines of before it was written: version 1.
    #[serde(default)]
    key_version: Option<u32>,
    #[serde(default)]
    response: Option<CachedResponse>,
    #[serde(default)]
    failure: Option<CompletionError>,
}

/// What a call got, as one line records it.
#[derive(Debug, Clone, Copy)]
pub(super) enum Answer<'a> {
    /// The model's response.
    Response(&'a CachedResponse),
    /// The call failed.
    Failure(&'a CompletionError),
}

/// What a recording holds, by key: the responses, and the failures of calls that failed (a
/// key is in one map at most: its last line decides).
#[derive(Default)]
pub(super) struct Recorded {
    pub responses: HashMap<[u8; 32], CachedResponse>,
    pub failures: HashMap<[u8; 32], CompletionError>,
    /// The keys whose last line is of an older version than [`KEY_VERSION`], with that
    /// version (1: keyed by the model's label alone; 2: without its endpoint). They serve a
    /// model whose key that version shares (one that says nothing the later versions key);
    /// for another model they only tell that the recording predates its keys.
    pub older: HashMap<[u8; 32], u32>,
}

/// An open recording, appended to as responses arrive.
pub(super) struct Recording {
    path: PathBuf,
    file: Mutex<File>,
}

impl Recording {
    /// Reads every response and failure recorded in `path`.
    pub(super) fn read(path: &Path) -> Result<Recorded, CacheError> {
        let io = |source| CacheError::Io {
            path: path.to_owned(),
            source,
        };
        let mut recorded = Recorded::default();
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
            match parsed.key_version.unwrap_or(1) {
                KEY_VERSION => {
                    recorded.older.remove(&key);
                }
                version @ 1..KEY_VERSION => {
                    recorded.older.insert(key, version);
                }
                // Its keys would never match here: say so rather than miss every call.
                version if version > KEY_VERSION => {
                    return Err(malformed(format!(
                        "`key_version` {version} is newer than this reins reads \
                         ({KEY_VERSION}): replay it with the reins that recorded it"
                    )));
                }
                version => {
                    return Err(malformed(format!("`key_version` {version} is no version")));
                }
            }
            // A later line for the same key (the call made again) replaces an earlier one.
            match (parsed.response, parsed.failure) {
                (Some(response), None) => {
                    recorded.failures.remove(&key);
                    recorded.responses.insert(key, response);
                }
                (None, Some(failure)) => {
                    recorded.responses.remove(&key);
                    recorded.failures.insert(key, failure);
                }
                _ => {
                    let message = "a line holds either a `response` or a `failure`";
                    return Err(malformed(message.into()));
                }
            }
        }
        Ok(recorded)
    }

    /// Opens `path` for appending (creating it), with what is already in it.
    pub(super) fn open(path: &Path) -> Result<(Recorded, Recording), CacheError> {
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

    /// Appends one answer as one line, written whole so concurrent runs never interleave.
    pub(super) fn append(&self, key: &[u8; 32], answer: Answer<'_>) -> std::io::Result<()> {
        let (response, failure) = match answer {
            Answer::Response(response) => (Some(response), None),
            Answer::Failure(failure) => (None, Some(failure)),
        };
        let line = LineOut {
            key: lower_hex(key),
            key_version: KEY_VERSION,
            response,
            failure,
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
