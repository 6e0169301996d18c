//! A tool that replaces one of the same name from elsewhere (another MCP server, or a
//! server's tool for the application's own) is warned about; the later one serves.

use crate::common::warnings::warnings_of;
use reins::agent::AgentBuilder;
use reins::testing::{ScriptedModel, Turn};
use reins::tool::Tool;
use serde_json::json;

/// A tool named `search` from `origin` (`None`: the application's own).
struct Search(Option<&'static str>);

impl Tool for Search {
    type Args = serde_json::Value;
    type Output = String;
    type Error = std::convert::Infallible;

    fn name(&self) -> &str {
        "search"
    }
    fn description(&self) -> &str {
        "Searches."
    }
    fn origin(&self) -> Option<&str> {
        self.0
    }
    async fn call(&self, _: serde_json::Value) -> Result<String, Self::Error> {
        Ok(format!("from {:?}", self.0))
    }
}

#[tokio::test]
async fn a_tool_replaced_by_one_from_another_server_is_warned_about_and_the_later_one_serves() {
    let ((), warnings) = warnings_of(|| {
        let _ = AgentBuilder::new(ScriptedModel::new([Turn::text("ok")]))
            .tool(Search(None))
            .tools([Search(Some("web")), Search(Some("web"))])
            .tools([Search(Some("intranet"))]);
    });
    // The application's own replaced by `web`'s, then `web`'s by `intranet`'s; `web`'s by
    // its own namesake is the same origin and no surprise.
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[0].contains("`web` replaces the one of the application"),
        "{warnings:?}"
    );
    assert!(
        warnings[1].contains("`intranet` replaces the one of `web`"),
        "{warnings:?}"
    );
    let model = ScriptedModel::new([Turn::tool_call("search", json!({})), Turn::text("done")]);
    let agent = AgentBuilder::new(model.clone())
        .tool(Search(Some("web")))
        .tools([Search(Some("intranet"))])
        .build();
    agent.prompt("find").await.unwrap();
    let requests = model.requests();
    let result = format!("{:?}", requests[1].history);
    assert!(result.contains("from Some(\\\"intranet\\\")"), "{result}");
}
