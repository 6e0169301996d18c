//! Programs an agent file names by a path (`./save.sh`): found beside the agent file, so the
//! agent runs the same from any directory, as every other path in the file does.

use crate::common::fakellm::FakeLlm;
use crate::common::{AgentDir, model_table, outcome, save_note_rules};
use std::os::unix::fs::PermissionsExt;

#[test]
fn a_shell_tool_named_by_a_relative_path_runs_from_any_directory() {
    let server = FakeLlm::start(&save_note_rules("", ""));
    let agent = AgentDir::new(&format!(
        "{}\n[[tools.shell]]\nname = \"save_note\"\ndescription = \"Saves a note.\"\n\
         command = [\"./save.sh\", \"{{text}}\"]\n\
         schema = {{ type = \"object\", properties = {{ text = {{ type = \"string\" }} }}, \
         required = [\"text\"] }}\n",
        model_table(&server.openai_url())
    ));
    let script = agent.dir.path().join("save.sh");
    std::fs::write(&script, "#!/bin/sh\nprintf 'note: %s' \"$1\"\n").expect("the script");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");

    let elsewhere = tempfile::tempdir().expect("a temporary directory");
    let (code, stdout, stderr) = outcome(
        agent
            .keyed(&["run", "AGENT", "Save a note."])
            .current_dir(elsewhere.path()),
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(stdout.trim(), "Done: the note is saved.", "{stderr}");
}
