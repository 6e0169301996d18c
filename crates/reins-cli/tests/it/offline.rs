//! The README's main job, `scripts/demo.sh`: `reins run` on the offline example agent on the
//! embedded local model (SmolLM2-135M by default; `--model` another GGUF): its first turn is made to call `write_note`, the approval shows in the
//! terminal, and the note is written only after it is approved.

use crate::common::AgentDir;
use crate::terminal::Tmux;

#[test]
fn the_offline_example_writes_a_note_after_approval_in_the_terminal() {
    let model = reins::providers::local::model_path_from_env()
        .unwrap_or_else(|error| panic!("the model is not available: {error}"));
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("agents")
        .join("offline-assistant.toml");
    let agent = AgentDir::new(&std::fs::read_to_string(example).expect("the example agent"));
    let reins = env!("CARGO_BIN_EXE_reins");
    let tmux = Tmux::start(&format!(
        "cd '{dir}' && '{reins}' run '{file}' --model '{model}'; echo EXIT=$?; sleep 600",
        dir = agent.dir.path().display(),
        model = model.display(),
        file = agent.file.display(),
    ));
    let screen = tmux.wait_for("(a)pprove, (d)eny, (e)dit arguments?");
    assert!(
        screen.contains("the model wants to run `write_note`"),
        "{screen}"
    );
    assert!(
        !agent.dir.path().join("notes.txt").exists(),
        "nothing is written before the approval"
    );
    tmux.type_line("a");
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
    let notes = std::fs::read_to_string(agent.dir.path().join("notes.txt")).expect("notes.txt");
    assert!(!notes.trim().is_empty(), "{screen}");
}
