//! The tools a run sees: the agent's fixed tools, plus the latest list of each
//! [`ToolSource`], refreshed between model turns. A source is the user's code: one that
//! panics keeps the tools it last gave, as one whose refresh fails does.

use crate::panics::{call_caught, panic_message};
use crate::tool::{ToolDefinition, ToolSet, ToolSource};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, PoisonError};

/// One consistent list of tools and the definitions advertised for them.
pub(crate) struct AvailableTools {
    pub set: ToolSet,
    pub definitions: Arc<[ToolDefinition]>,
}

impl AvailableTools {
    pub fn new(set: ToolSet) -> Arc<Self> {
        let definitions = Arc::from(set.definitions().to_vec());
        Arc::new(AvailableTools { set, definitions })
    }
}

/// The agent's tool sources and the list they last gave, shared by every run of the agent.
pub(crate) struct LiveTools {
    fixed: ToolSet,
    sources: Vec<Arc<dyn ToolSource>>,
    /// Each source's latest list, in the order of `sources`. Held across a refresh so that
    /// concurrent runs do not list the same source twice.
    latest: tokio::sync::Mutex<Vec<ToolSet>>,
    current: Mutex<Arc<AvailableTools>>,
}

impl LiveTools {
    /// The tools of `fixed` followed by each source's current list (see [`combine`]: a name
    /// already taken keeps its first tool).
    pub fn new(fixed: ToolSet, sources: Vec<Arc<dyn ToolSource>>) -> Self {
        let latest: Vec<ToolSet> = sources.iter().map(|source| source.current()).collect();
        let current = Mutex::new(AvailableTools::new(combine(&fixed, &latest)));
        LiveTools {
            fixed,
            sources,
            latest: tokio::sync::Mutex::new(latest),
            current,
        }
    }

    /// The tools as of the last refresh.
    pub fn current(&self) -> Arc<AvailableTools> {
        Arc::clone(&self.current.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Refreshes the sources that say they changed and returns the tools to use from now on.
    pub async fn refresh(&self) -> Arc<AvailableTools> {
        if !self.sources.iter().any(|source| has_changed(&**source)) {
            return self.current();
        }
        let mut latest = self.latest.lock().await;
        let mut refreshed = false;
        for (source, list) in self.sources.iter().zip(latest.iter_mut()) {
            // Another run may have refreshed it while this one waited for the lock.
            if !has_changed(&**source) {
                continue;
            }
            match call_caught(|| source.refresh()).await {
                Ok(Ok(tools)) => {
                    *list = tools;
                    refreshed = true;
                }
                Ok(Err(error)) => {
                    tracing::warn!(target: "reins::tools", %error, "a tool source failed to refresh; its previous tools stay");
                }
                Err(panic) => {
                    let message = panic_message(&*panic);
                    tracing::warn!(target: "reins::tools", %message, "a tool source panicked refreshing; its previous tools stay");
                }
            }
        }
        if refreshed {
            let tools = AvailableTools::new(combine(&self.fixed, &latest));
            tracing::debug!(target: "reins::tools", tools = ?tools.set, "tools refreshed");
            *self.current.lock().unwrap_or_else(PoisonError::into_inner) = Arc::clone(&tools);
            tools
        } else {
            self.current()
        }
    }
}

/// Whether `source` says its tools changed. A source that panics saying so is taken as
/// unchanged (its tools stay), and the panic is logged.
fn has_changed(source: &dyn ToolSource) -> bool {
    catch_unwind(AssertUnwindSafe(|| source.changed())).unwrap_or_else(|panic| {
        let message = panic_message(&*panic);
        tracing::warn!(target: "reins::tools", %message, "a tool source panicked saying whether it changed; its tools stay");
        false
    })
}

/// The agent's own tools, then each source's tools whose names are not taken yet. A source
/// is often a server the application does not control: a tool it lists under the name of one
/// of the agent's own tools (or of an earlier source's) must not stand in for that tool, which
/// the application's policies and approvals were written for.
fn combine(fixed: &ToolSet, lists: &[ToolSet]) -> ToolSet {
    let mut all = fixed.clone();
    for list in lists {
        for name in all.extend_missing_from(list) {
            tracing::warn!(
                target: "reins::tools",
                tool = name,
                "a tool source lists a tool under a name the agent already has; the agent's own \
                 (or an earlier source's) is kept and the source's left out"
            );
        }
    }
    all
}
