//! One model turn's request while its hooks run: the request the turn starts from until a
//! hook patches it, then a copy for this turn only.

use super::RequestPatch;
use crate::completion::CompletionRequest;
use crate::message::Message;

/// A model turn's request as its hooks see and patch it, over `B`, the request the turn
/// starts from: the run's own (`&mut CompletionRequest`, whose history the turn borrows), or
/// one only read (`&CompletionRequest`: what a stack called directly as a hook is shown).
///
/// A run sends one request every turn, its history lent for the turn; a patch applies to
/// that turn only, so the first patch of a turn copies the request and changes the copy
/// (copy on write: an unpatched turn copies nothing). A patch that replaces the history
/// keeps the starting history aside, to be given back when the turn ends.
pub(crate) struct TurnRequest<B> {
    /// The request the turn starts from.
    base: B,
    /// This turn's copy, once a hook patched the request. (Boxed: a turn's request lives in
    /// the run's future while the model is called, and few turns are patched.)
    patched: Option<Box<CompletionRequest>>,
    /// The starting history, once a patch replaced the turn's.
    saved_history: Option<Vec<Message>>,
}

/// What a turn's request starts from: read, and copied on a turn's first patch.
pub(crate) trait RequestBase {
    /// The request as it is.
    fn request(&self) -> &CompletionRequest;
    /// The copy a turn's first patch changes.
    fn copy(&mut self) -> CompletionRequest;
}

/// The run's request: its history moves to the copy (it is the turn's while the turn lasts),
/// so a patched turn does not copy the history.
impl RequestBase for &mut CompletionRequest {
    #[inline]
    fn request(&self) -> &CompletionRequest {
        self
    }
    fn copy(&mut self) -> CompletionRequest {
        let history = std::mem::take(&mut self.history);
        let mut copy = self.clone();
        copy.history = history;
        copy
    }
}

/// A request only read (what a stack called directly as a hook sees of its caller's turn):
/// copied whole, and only when one of its members patches it.
impl RequestBase for &CompletionRequest {
    #[inline]
    fn request(&self) -> &CompletionRequest {
        self
    }
    fn copy(&mut self) -> CompletionRequest {
        (*self).clone()
    }
}

impl<B: RequestBase> TurnRequest<B> {
    /// The turn's request: `base` until a hook patches it.
    pub(crate) fn new(base: B) -> Self {
        TurnRequest {
            base,
            patched: None,
            saved_history: None,
        }
    }

    /// The request the model will be sent: the patched copy, or the one the turn started
    /// from.
    pub(crate) fn get(&self) -> &CompletionRequest {
        self.patched.as_deref().unwrap_or(self.base.request())
    }

    /// The starting history, whatever a patch sends the model instead.
    pub(crate) fn run_history(&self) -> &[Message] {
        match &self.saved_history {
            Some(history) => history,
            None => &self.get().history,
        }
    }

    /// Applies `patch` to this turn's copy of the request, made on the first patch.
    pub(crate) fn patch(&mut self, mut patch: RequestPatch) {
        let sent = match &mut self.patched {
            Some(sent) => sent,
            None => self.patched.insert(Box::new(self.base.copy())),
        };
        if let Some(history) = patch.history.take() {
            let run_history = std::mem::replace(&mut sent.history, history);
            if self.saved_history.is_none() {
                self.saved_history = Some(run_history);
            }
        }
        patch.apply(sent);
    }

    /// The patched copy as patched, its history the patch's (`None`: no hook patched it).
    pub(crate) fn into_patched(self) -> Option<CompletionRequest> {
        self.patched.map(|sent| *sent)
    }
}

impl TurnRequest<&mut CompletionRequest> {
    /// Ends the turn: the run's history, and the patched copy the model was sent (its
    /// history emptied), if a hook patched the request.
    pub(crate) fn finish(mut self) -> (Vec<Message>, Option<CompletionRequest>) {
        let sent_history = match &mut self.patched {
            Some(sent) => std::mem::take(&mut sent.history),
            None => std::mem::take(&mut self.base.history),
        };
        (
            self.saved_history.unwrap_or(sent_history),
            self.patched.map(|sent| *sent),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::ToolChoice;

    fn run_request() -> CompletionRequest {
        CompletionRequest {
            preamble: Some("Be brief.".to_owned()),
            history: vec![Message::user("Add 1 and 2.")],
            ..CompletionRequest::default()
        }
    }

    #[test]
    fn an_unpatched_turn_sends_the_runs_request_and_gives_its_history_back() {
        let mut run = run_request();
        let turn = TurnRequest::new(&mut run);
        assert_eq!(turn.get().preamble.as_deref(), Some("Be brief."));
        assert_eq!(turn.run_history().len(), 1);
        let (history, patched) = turn.finish();
        assert_eq!(history, vec![Message::user("Add 1 and 2.")]);
        assert!(patched.is_none());
        assert!(run.history.is_empty(), "the history was lent, not copied");
    }

    #[test]
    fn a_patch_changes_this_turns_copy_and_leaves_the_runs_request_as_it_was() {
        let mut run = run_request();
        let mut turn = TurnRequest::new(&mut run);
        turn.patch(RequestPatch {
            preamble: Some("Be thorough.".to_owned()),
            ..RequestPatch::default()
        });
        turn.patch(RequestPatch {
            tool_choice: Some(ToolChoice::None),
            ..RequestPatch::default()
        });
        assert_eq!(turn.get().preamble.as_deref(), Some("Be thorough."));
        assert_eq!(turn.get().tool_choice, Some(ToolChoice::None));
        assert_eq!(
            turn.get().history.len(),
            1,
            "the copy carries the run's history"
        );
        let (history, patched) = turn.finish();
        assert_eq!(history, vec![Message::user("Add 1 and 2.")]);
        let sent = patched.expect("patched");
        assert_eq!(sent.preamble.as_deref(), Some("Be thorough."));
        assert!(sent.history.is_empty());
        assert_eq!(run.preamble.as_deref(), Some("Be brief."));
        assert_eq!(run.tool_choice, None);
    }

    #[test]
    fn a_replaced_history_is_sent_and_the_runs_is_given_back() {
        let mut run = run_request();
        let mut turn = TurnRequest::new(&mut run);
        turn.patch(RequestPatch {
            history: Some(vec![Message::user("Summarised.")]),
            ..RequestPatch::default()
        });
        turn.patch(RequestPatch {
            history: Some(vec![Message::user("Summarised again.")]),
            ..RequestPatch::default()
        });
        assert_eq!(turn.get().history, vec![Message::user("Summarised again.")]);
        assert_eq!(turn.run_history(), [Message::user("Add 1 and 2.")]);
        let (history, _) = turn.finish();
        assert_eq!(history, vec![Message::user("Add 1 and 2.")]);
    }

    #[test]
    fn a_read_request_is_shown_as_it_is_until_a_patch_copies_it_whole() {
        let shown = run_request();
        let turn = TurnRequest::new(&shown);
        assert!(
            std::ptr::eq(turn.get(), &shown),
            "an unpatched turn shows the request itself, not a copy"
        );
        assert!(turn.into_patched().is_none());

        let mut turn = TurnRequest::new(&shown);
        turn.patch(RequestPatch {
            temperature: Some(0.0),
            ..RequestPatch::default()
        });
        assert!(!std::ptr::eq(turn.get(), &shown));
        assert_eq!(turn.run_history(), [Message::user("Add 1 and 2.")]);
        let patched = turn.into_patched().expect("patched");
        assert_eq!(patched.temperature, Some(0.0));
        assert_eq!(
            patched.history, shown.history,
            "the copy carries the history"
        );
        assert_eq!(shown.temperature, None, "the shown request is unchanged");
    }
}
