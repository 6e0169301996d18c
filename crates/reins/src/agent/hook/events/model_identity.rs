//! What the model a call goes to says it is, as a model call's dispatch carries it (read by
//! hooks through the accessors in `model_call.rs`).

use crate::completion::DynCompletionModel;

/// What the model a call goes to says it is: its provider's and its own name, and where it
/// is served
/// ([`CompletionModel::provider_name`](crate::completion::CompletionModel::provider_name),
/// [`model_name`](crate::completion::CompletionModel::model_name),
/// [`endpoint`](crate::completion::CompletionModel::endpoint)), each `None` where the model
/// says none.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ModelIdentity<'a> {
    pub provider: Option<&'a str>,
    pub name: Option<&'a str>,
    pub endpoint: Option<&'a str>,
}

impl<'a> ModelIdentity<'a> {
    /// What `model` says it is (a model whose methods panic names nothing).
    pub(crate) fn of(model: &'a dyn DynCompletionModel) -> Self {
        ModelIdentity {
            provider: model.provider_name(),
            name: model.model_name(),
            endpoint: model.endpoint(),
        }
    }
}
