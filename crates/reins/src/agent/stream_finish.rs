//! [`PromptStream::finish`]: the rest of a streamed run, run to its end for its response.

use super::error::PromptError;
use super::response::PromptResponse;
use super::stream::PromptStream;
use super::stream_item::StreamItem;
use futures::StreamExt;

impl PromptStream {
    /// Runs the rest of the stream and returns the run's response (or its error), dropping
    /// the items on the way.
    ///
    /// For a run streamed for its hooks rather than for its items: an
    /// [`on_text_delta`](crate::agent::AgentHook::on_text_delta) hook that shows the text as
    /// it comes is called only by a streamed run, never by an awaited one. Items already
    /// taken from the stream stay taken; `finish` goes on from the next one. A stream that
    /// has already handed out its last item (its [`StreamItem::Final`] or its error) returns
    /// [`PromptError::StreamEnded`].
    ///
    /// ```
    /// use reins::agent::{ObservationAction, TextDeltaEvent};
    /// use reins::prelude::*;
    /// use reins::testing::{ScriptedModel, Turn};
    /// use std::sync::{Arc, Mutex};
    ///
    /// /// Shows the answer as it arrives (here: keeps it, to check).
    /// struct Show(Arc<Mutex<String>>);
    ///
    /// impl AgentHook for Show {
    ///     async fn on_text_delta(&self, _: &HookContext, event: TextDeltaEvent<'_>) -> ObservationAction {
    ///         self.0.lock().unwrap().push_str(event.delta); // print!("{}", event.delta)
    ///         ObservationAction::continue_run()
    ///     }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), PromptError> {
    /// let shown = Arc::new(Mutex::new(String::new()));
    /// let model = ScriptedModel::new([Turn::text("Hello there.")]);
    /// let agent = AgentBuilder::new(model).add_hook(Show(shown.clone())).build();
    ///
    /// let response = agent.prompt("Greet me.").stream().finish().await?;
    /// assert_eq!(response.output, "Hello there.");
    /// assert_eq!(*shown.lock().unwrap(), "Hello there.");
    /// # Ok(())
    /// # }
    /// ```
    pub async fn finish(mut self) -> Result<PromptResponse, PromptError> {
        while let Some(item) = self.next().await {
            if let StreamItem::Final(response) = item? {
                return Ok(*response);
            }
        }
        Err(PromptError::StreamEnded)
    }
}
