//! The command line a new user gets wrong: a misspelt or forgotten command is not taken as
//! a prompt for the built-in demo, but refused (exit 2) with the command that was meant.

use crate::common::{AgentDir, model_table, outcome};

fn agent() -> AgentDir {
    AgentDir::new(&model_table("http://127.0.0.1:9"))
}

#[test]
fn a_misspelt_command_names_the_command_meant() {
    let agent = agent();
    let (code, stdout, stderr) = outcome(agent.reins(&["chekc", "AGENT"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains("unknown command `chekc`: did you mean `reins check`?"),
        "{stderr}"
    );
}

#[test]
fn an_agent_file_without_a_command_says_how_to_run_it() {
    let agent = agent();
    let (code, stdout, stderr) = outcome(agent.reins(&["agent.toml"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains("run the agent file with `reins run agent.toml`"),
        "{stderr}"
    );
}
