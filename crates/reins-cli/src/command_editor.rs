//! The editor of `reins runs approve|fork --edit`, commands that drive no run: Ctrl-C is the
//! editor's while it is open, as at a run's approval question.

use crate::editor::Unedited;
use crate::interrupt::StopSignal;
use crate::question_ctrl_c::Asking;
use crate::run::EXIT_INTERRUPTED;
use serde_json::Value;

/// [`crate::approve::edit_in_editor`] for `reins runs approve|fork --edit`, which drive no
/// run (on the Restate store too), with Ctrl-C as at the approval question ([`crate::question_ctrl_c`]): every Ctrl-C while the editor is
/// open (and for a moment after) is the editor's, instead of ending reins the default way and
/// leaving an editor that takes it as a key (vi) fighting the shell for the terminal. Once it
/// is closed, a Ctrl-C (and SIGTERM, at any time) ends the command as interrupted (exit 130),
/// as one did before: the handlers stay installed for the rest of the process.
pub async fn edit_in_editor(args: &Value) -> Result<Value, Unedited> {
    let stop = StopSignal::listen();
    let asking = Asking::open();
    let editing = asking.editor(
        crate::approve::edit_in_editor(args),
        Unedited::quit_with_ctrl_c,
    );
    let Some(edited) = stop.unless_stopped(editing).await else {
        std::process::exit(EXIT_INTERRUPTED.into());
    };
    drop(asking);
    tokio::spawn(async move {
        stop.stopped().await;
        std::process::exit(EXIT_INTERRUPTED.into());
    });
    edited.unwrap_or_else(|| {
        Err(Unedited::Quit {
            why: "Ctrl-C came before the editor opened: the arguments are unchanged".to_owned(),
            by_ctrl_c: true,
        })
    })
}
