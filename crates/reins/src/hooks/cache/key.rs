//! The cache key of a model call: a SHA-256 digest of the model (its label and what it says
//! it is) and the request, and of how many answers the run already got for it.

use crate::agent::HookContext;
use crate::completion::CompletionRequest;
use sha2::{Digest, Sha256};
use std::collections::HashMap;

/// The version of the keys a recording's lines are written with (`key_version`). Lines
/// without one (version 1, written before it) keyed a model by its label alone; version 2
/// keys it by its provider's and its own name too; version 3 by where it is served too
/// ([`CompletionModel::endpoint`](crate::completion::CompletionModel::endpoint)). A version
/// keys a model as the one before did when the model says nothing the later version added:
/// a model that says nothing has the same key in all three, one that says no endpoint the
/// same in versions 2 and 3.
pub(super) const KEY_VERSION: u32 = 3;

/// The model a call goes to, as the cache tells models apart: the label it is registered
/// under, its provider's and its own name, and where it is served, where it says them
/// ([`CompletionModel::provider_name`](crate::completion::CompletionModel::provider_name),
/// [`model_name`](crate::completion::CompletionModel::model_name),
/// [`endpoint`](crate::completion::CompletionModel::endpoint): a base URL without
/// credentials).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ModelKey<'a> {
    pub label: &'a str,
    pub provider: Option<&'a str>,
    pub name: Option<&'a str>,
    pub endpoint: Option<&'a str>,
}

impl<'a> ModelKey<'a> {
    /// A model that says nothing, under `label`.
    #[cfg(test)]
    pub(super) fn by_label(label: &'a str) -> Self {
        ModelKey {
            label,
            provider: None,
            name: None,
            endpoint: None,
        }
    }

    /// The model as key version `version` keyed it: what it says that the version did not
    /// key left out (version 1: the label alone; version 2: no endpoint).
    pub(super) fn as_of(self, version: u32) -> Self {
        match version {
            1 => ModelKey {
                label: self.label,
                provider: None,
                name: None,
                endpoint: None,
            },
            2 => ModelKey {
                endpoint: None,
                ..self
            },
            _ => self,
        }
    }
}

/// The cache key of the first `request` sent to `model` in a run.
pub(super) fn key(
    model: ModelKey<'_>,
    request: &CompletionRequest,
) -> Result<[u8; 32], serde_json::Error> {
    let mut digest = Sha256::new();
    digest.update(model.label.as_bytes());
    digest.update([0]);
    // Each version keeps the key of the one before for a model that says nothing it added,
    // so recordings made with such a model still serve. Where version 1 has the request's
    // JSON (its first byte `{`), version 2 has a 1 and version 3 a 2, so no two versions'
    // keys of a model digest the same bytes unless the model's keys are the same.
    let parts: &[Option<&str>] = if model.endpoint.is_some() {
        digest.update([2]);
        &[model.provider, model.name, model.endpoint]
    } else if model.provider.is_some() || model.name.is_some() {
        digest.update([1]);
        &[model.provider, model.name]
    } else {
        &[]
    };
    for part in parts {
        match part {
            None => digest.update([0]),
            Some(text) => {
                digest.update([1]);
                digest.update((text.len() as u64).to_le_bytes());
                digest.update(text.as_bytes());
            }
        }
    }
    serde_json::to_writer(DigestWriter(&mut digest), request)?;
    Ok(digest.finalize().into())
}

/// Feeds serialized JSON straight into the digest, without building the text.
struct DigestWriter<'d>(&'d mut Sha256);

impl std::io::Write for DigestWriter<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.update(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// How many responses the run got for each request digest, in its scratchpad. A request
/// sent again in one run (a hook's `ModelTurnAction::repeat` sends the same one) is keyed
/// by how many answers came before it: served the first answer again, a repeat would gain
/// nothing, and a replay would not follow the recorded run.
#[derive(Default)]
pub(super) struct Answered(HashMap<[u8; 32], u32>);

impl Answered {
    /// How many answers to `request` the run got before.
    pub(super) fn before(ctx: &HookContext, request: [u8; 32]) -> u32 {
        ctx.scratchpad()
            .update(|answered: &mut Answered| answered.0.get(&request).copied())
            .unwrap_or(0)
    }

    /// The key of the answer to `request` after `before` others.
    pub(super) fn nth(request: [u8; 32], before: u32) -> [u8; 32] {
        if before == 0 {
            // The first answer keeps the request's own digest, as recordings always had it.
            return request;
        }
        let mut digest = Sha256::new();
        digest.update(request);
        digest.update(before.to_le_bytes());
        digest.finalize().into()
    }

    /// The run got a response to `request`.
    pub(super) fn count(ctx: &HookContext, request: [u8; 32]) {
        ctx.scratchpad().update(|answered: &mut Answered| {
            let n = answered.0.entry(request).or_default();
            *n = n.saturating_add(1);
        });
    }
}
