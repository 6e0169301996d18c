//! What a model call's dispatch says of the model it goes to: beyond the label it is
//! registered under ([`DispatchEvent::model`]), what the model says it is — so a hook that
//! keys by model (the response cache) tells apart two models under one label.

use super::effect::{DispatchEvent, DispatchTarget};

impl<'a> DispatchEvent<'a> {
    /// The provider of the model about to be called
    /// ([`CompletionModel::provider_name`](crate::completion::CompletionModel::provider_name):
    /// `openai`, `anthropic`, …), for a model call: the model the turn goes to (the one
    /// `on_model_select` or a fallback's retry chose), not only its label. `None` for a model
    /// that names no provider (a model of your own, a [`ScriptedModel`] unless told), or for
    /// another effect.
    ///
    /// ```
    /// use reins::agent::{AgentBuilder, AgentHook, DispatchAction, DispatchEvent, HookContext};
    /// use reins::testing::{ScriptedModel, Turn};
    /// use std::sync::{Arc, Mutex};
    ///
    /// /// Writes down which model each call goes to.
    /// #[derive(Clone, Default)]
    /// struct Calls(Arc<Mutex<Vec<String>>>);
    ///
    /// impl AgentHook for Calls {
    ///     async fn on_dispatch(&self, _: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
    ///         if let Some(label) = event.model() {
    ///             let provider = event.model_provider().unwrap_or("-");
    ///             let name = event.model_name().unwrap_or("-");
    ///             self.0.lock().unwrap().push(format!("{label}: {provider}/{name}"));
    ///         }
    ///         DispatchAction::proceed()
    ///     }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let model = ScriptedModel::new([Turn::text("hi")])
    ///     .with_provider_name("openai")
    ///     .with_model_name("gpt-4o");
    /// let calls = Calls::default();
    /// let agent = AgentBuilder::new(model).add_hook(calls.clone()).build();
    /// agent.prompt("Hello").await.unwrap();
    /// assert_eq!(*calls.0.lock().unwrap(), ["default: openai/gpt-4o"]);
    /// # }
    /// ```
    ///
    /// [`ScriptedModel`]: crate::testing::ScriptedModel
    pub fn model_provider(&self) -> Option<&'a str> {
        match *self.target {
            DispatchTarget::Completion { identity, .. } => identity.provider,
            _ => None,
        }
    }

    /// The name of the model about to be called as its provider knows it
    /// ([`CompletionModel::model_name`](crate::completion::CompletionModel::model_name):
    /// `gpt-4o`, …), for a model call; see [`model_provider`](Self::model_provider). `None`
    /// for a model that names none, or for another effect.
    pub fn model_name(&self) -> Option<&'a str> {
        match *self.target {
            DispatchTarget::Completion { identity, .. } => identity.name,
            _ => None,
        }
    }

    /// Where the model about to be called is served
    /// ([`CompletionModel::endpoint`](crate::completion::CompletionModel::endpoint): a
    /// provider's model says its base URL without credentials, `https://api.openai.com/v1`),
    /// for a model call; see [`model_provider`](Self::model_provider). Two servers answering
    /// under one provider and model name differ here. `None` for a model that says none (a
    /// model of your own, a [`ScriptedModel`](crate::testing::ScriptedModel) unless told), or
    /// for another effect.
    pub fn model_endpoint(&self) -> Option<&'a str> {
        match *self.target {
            DispatchTarget::Completion { identity, .. } => identity.endpoint,
            _ => None,
        }
    }
}
