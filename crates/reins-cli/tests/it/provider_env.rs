//! The provider's own base-URL variable: an agent file without `base_url` reaches the server
//! `OPENAI_BASE_URL` names (a proxy set for every tool), as the provider's SDKs do.

use crate::common::fakellm::FakeLlm;
use crate::common::{AgentDir, SAVE_NOTE_TOOL, outcome, save_note_rules};

#[test]
fn without_base_url_the_run_goes_where_openai_base_url_says() {
    let server = FakeLlm::start(&save_note_rules("", ""));
    let agent = AgentDir::new(&format!(
        "name = \"notes\"\n\n[model]\nprovider = \"openai\"\nname = \"gpt-5-mini\"\n\
         api_key_env = \"REINS_TEST_KEY\"\n\n{SAVE_NOTE_TOOL}"
    ));
    let (code, stdout, stderr) = outcome(
        agent
            .reins(&["run", "AGENT", "Save a note."])
            .env("REINS_TEST_KEY", "k")
            .env("OPENAI_BASE_URL", server.openai_url()),
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "Done: the note is saved.", "{stderr}");
}
