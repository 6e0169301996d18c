//! [`BoxedModel`]: "some model", chosen at run time, without a type parameter.

use super::{
    CompletionError, CompletionModel, CompletionRequest, CompletionResponse, CompletionStream,
    DynCompletionModel,
};
use std::fmt;
use std::sync::Arc;

/// Any [`CompletionModel`], erased: for code that picks a provider at run time (a CLI flag, a
/// config file) and holds the result in one variable or field. Cheap to clone.
///
/// ```
/// use reins::agent::AgentBuilder;
/// use reins::completion::BoxedModel;
/// use reins::providers::openai::{self, OpenAI};
/// use reins::testing::{ScriptedModel, Turn};
///
/// /// The model an `--offline` flag asks for.
/// fn model(offline: bool) -> Result<BoxedModel, reins::providers::ProviderError> {
///     Ok(if offline {
///         BoxedModel::new(ScriptedModel::new([Turn::text("hello")]))
///     } else {
///         BoxedModel::new(OpenAI::from_env()?.completion(openai::GPT_5_5))
///     })
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let agent = AgentBuilder::new(model(true)?).build();
/// assert_eq!(agent.prompt("hi").await?, "hello");
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct BoxedModel(Arc<dyn DynCompletionModel>);

impl BoxedModel {
    /// Erases `model`.
    pub fn new(model: impl CompletionModel) -> Self {
        BoxedModel(Arc::new(model))
    }
}

impl fmt::Debug for BoxedModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BoxedModel")
    }
}

impl CompletionModel for BoxedModel {
    async fn completion(
        &self,
        request: &CompletionRequest,
    ) -> Result<CompletionResponse, CompletionError> {
        self.0.completion(request).await
    }

    async fn stream(
        &self,
        request: &CompletionRequest,
    ) -> Result<CompletionStream, CompletionError> {
        self.0.stream(request).await
    }

    fn supports_native_output(&self) -> bool {
        self.0.supports_native_output()
    }

    fn model_name(&self) -> Option<&str> {
        self.0.model_name()
    }

    fn provider_name(&self) -> Option<&str> {
        self.0.provider_name()
    }

    fn endpoint(&self) -> Option<&str> {
        self.0.endpoint()
    }
}
