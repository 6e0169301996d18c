use super::{RetrySafety, Tool, ToolTraits};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fmt::Display;
use std::future::Future;
use std::marker::PhantomData;
use std::time::Duration;

/// A [`Tool`] made from an async closure by [`tool_fn`].
pub struct FnTool<F, Args, Output, Error> {
    name: String,
    description: String,
    timeout: Option<Duration>,
    retry_safety: RetrySafety,
    traits: Option<ToolTraits>,
    function: F,
    types: PhantomData<fn(Args) -> (Output, Error)>,
}

/// Makes a tool from an async closure taking the arguments type.
///
/// ```
/// use reins::tool::tool_fn;
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct AddArgs { a: i64, b: i64 }
///
/// let add = tool_fn("add", "Adds two integers.", |args: AddArgs| async move {
///     Ok::<_, std::convert::Infallible>(args.a + args.b)
/// });
/// # let _ = add;
/// ```
pub fn tool_fn<F, Fut, Args, Output, Error>(
    name: impl Into<String>,
    description: impl Into<String>,
    function: F,
) -> FnTool<F, Args, Output, Error>
where
    F: Fn(Args) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Output, Error>> + Send,
    Args: DeserializeOwned + JsonSchema + Send + 'static,
    Output: Serialize + 'static,
    Error: Display + 'static,
{
    FnTool {
        name: name.into(),
        description: description.into(),
        timeout: None,
        retry_safety: RetrySafety::Undeclared,
        traits: None,
        function,
        types: PhantomData,
    }
}

impl<F, Args, Output, Error> FnTool<F, Args, Output, Error> {
    /// Declares what the tool is (read-only, destructive, idempotent), for hooks and approval
    /// rules (see [`ToolTraits`]).
    pub fn traits(mut self, traits: ToolTraits) -> Self {
        self.traits = Some(traits);
        self
    }

    /// Fails a call that takes longer than `limit` with a timeout.
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout = Some(limit);
        self
    }

    /// Declares whether a call left in doubt by a crash may be executed again (see
    /// [`RetrySafety`]).
    pub fn retry_safety(mut self, safety: RetrySafety) -> Self {
        self.retry_safety = safety;
        self
    }
}

impl<F, Fut, Args, Output, Error> Tool for FnTool<F, Args, Output, Error>
where
    F: Fn(Args) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Output, Error>> + Send,
    Args: DeserializeOwned + JsonSchema + Send + 'static,
    Output: Serialize + 'static,
    Error: Display + 'static,
{
    type Args = Args;
    type Output = Output;
    type Error = Error;

    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    fn retry_safety(&self) -> RetrySafety {
        self.retry_safety
    }

    fn traits(&self) -> Option<ToolTraits> {
        self.traits
    }

    fn call(&self, args: Args) -> impl Future<Output = Result<Output, Error>> + Send {
        (self.function)(args)
    }
}
