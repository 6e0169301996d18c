//! [`RestateRuns`]: start, follow and decide runs through Restate's HTTP ingress.

use crate::answer::{MAX_ANSWER_BYTES, read_answer, refusal};
use crate::http::{
    CONNECT_TIMEOUT, NOT_HTTP, authorized, base_url, bearer, credentials, transport_text,
};
use crate::service::SERVICE_NAME;
use crate::wire::{DecisionRequest, RunInput, RunOutput, RunProgress};
use reins::agent::ToolDecision;
use reqwest::header::HeaderValue;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::time::Duration;

pub use crate::client_error::ClientError;

/// Starts, follows and decides the runs of the `ReinsAgent` workflow through Restate's HTTP
/// ingress (the same calls as the `curl` commands in the README).
///
/// ```no_run
/// use reins_restate::RestateRuns;
/// # async fn demo() -> Result<(), reins_restate::ClientError> {
/// let runs = RestateRuns::new("http://127.0.0.1:8080")?;
/// runs.start("order-42", "Refund order 42.").await?;
/// let progress = runs.status("order-42").await?;
/// if let Some(waiting) = progress.pending.first() {
///     runs.approve("order-42", &waiting.call).await?;
/// }
/// let output = runs.output("order-42").await?;
/// println!("{}", output.answer);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RestateRuns {
    ingress: reqwest::Url,
    http: reqwest::Client,
    /// `Authorization: Bearer <token>`, marked sensitive; `None` without a token.
    authorization: Option<HeaderValue>,
    /// How long a call that answers at once (start, status, decide) may take.
    call_timeout: Duration,
    /// How long [`RestateRuns::output`] waits for a run to end.
    output_timeout: Duration,
}

/// How long a call of [`RestateRuns`] that the ingress answers at once (`start`, `status`,
/// `decide`) may take unless told otherwise ([`RestateRuns::call_timeout`]); waiting for a
/// run's output has a limit of its own ([`DEFAULT_OUTPUT_TIMEOUT`]).
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// How long [`RestateRuns::output`] waits for a run to end unless told otherwise
/// ([`RestateRuns::output_timeout`], or [`RestateRuns::output_within`] for one call): 30
/// minutes, long enough for a run that works through its steps. A run that waits for a
/// person's decision may take days: wait for it with a limit of your own, or poll
/// [`RestateRuns::finished_output`] and [`RestateRuns::status`].
pub const DEFAULT_OUTPUT_TIMEOUT: Duration = Duration::from_secs(30 * 60);

impl std::fmt::Debug for RestateRuns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // User info in the ingress URL is sent as basic authentication: a credential, so it
        // is masked (a derived Debug printed the password).
        let mut shown = self.ingress.clone();
        if !shown.username().is_empty() {
            let _ = shown.set_username("***");
        }
        if shown.password().is_some() {
            let _ = shown.set_password(Some("***"));
        }
        // A query (a gateway's `?token=…`) may hold one too.
        if shown.query().is_some() {
            shown.set_query(Some("***"));
        }
        shown.set_fragment(None);
        f.debug_struct("RestateRuns")
            .field("ingress", &shown.as_str())
            .field("bearer_token", &self.authorization.as_ref().map(|_| "***"))
            .finish_non_exhaustive()
    }
}

impl RestateRuns {
    /// A client of the ingress at `ingress` (e.g. `http://127.0.0.1:8080`). User info in the
    /// URL (`http://user:password@host:8080`) is sent as basic authentication and masked in
    /// the client's `Debug`.
    /// An address that is no `http://` or `https://` URL is refused here, with
    /// [`ClientError::Url`] (which never repeats the address: it may hold a password).
    pub fn new(ingress: &str) -> Result<Self, ClientError> {
        let ingress = base_url(ingress).map_err(ClientError::Url)?;
        let http = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .build()
            .map_err(|error| ClientError::Transport(error.to_string()))?;
        Ok(RestateRuns {
            ingress,
            http,
            authorization: None,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            output_timeout: DEFAULT_OUTPUT_TIMEOUT,
        })
    }

    /// How long a call the ingress answers at once (`start`, `status`, `decide`) may take
    /// ([`DEFAULT_CALL_TIMEOUT`]): an ingress that accepts the connection and never answers
    /// is a [`ClientError::Timeout`] then, not a wait without end. Waiting for a run's
    /// output has a limit of its own ([`output_timeout`](RestateRuns::output_timeout)).
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// How long [`output`](RestateRuns::output) waits for a run to end
    /// ([`DEFAULT_OUTPUT_TIMEOUT`]); a run still going then is [`ClientError::NotEnded`].
    pub fn output_timeout(mut self, timeout: Duration) -> Self {
        self.output_timeout = timeout;
        self
    }

    /// Sends `Authorization: Bearer <token>` with every call (Restate Cloud, or an ingress
    /// behind an authenticating proxy), in place of the basic authentication of user info in
    /// the URL. The token is shown neither in the client's `Debug` nor in its errors.
    ///
    /// Restate keeps the headers of each call it takes with its invocation: the token is then
    /// in the journal's input entry (of the run, and of each `status` and `decide` call),
    /// readable through the admin API's SQL, and forwarded to the workers. Have the proxy in
    /// front of the ingress check the token and strip the header before Restate sees it; never
    /// reuse a model provider's key (or any other secret) as the token.
    ///
    /// ```no_run
    /// # fn demo() -> Result<(), reins_restate::ClientError> {
    /// let token = std::env::var("RESTATE_TOKEN").unwrap_or_default();
    /// let runs = reins_restate::RestateRuns::new("https://ingress.example")?.bearer_token(&token)?;
    /// # let _ = runs; Ok(()) }
    /// ```
    pub fn bearer_token(mut self, token: &str) -> Result<Self, ClientError> {
        self.authorization = Some(bearer(token)?);
        Ok(self)
    }

    fn url(&self, segments: &[&str]) -> Result<reqwest::Url, ClientError> {
        // A URL's path drops such segments instead of sending them.
        if let Some(dots) = segments
            .iter()
            .find(|segment| matches!(**segment, "." | ".."))
        {
            return Err(ClientError::Url(format!(
                "`{dots}` cannot be a run id (a URL's path has no segment of that name)"
            )));
        }
        let mut url = self.ingress.clone();
        // `new` took only http(s) URLs, which always have a path to extend.
        url.path_segments_mut()
            .map_err(|()| ClientError::Url(NOT_HTTP.to_owned()))?
            .pop_if_empty()
            .extend(segments);
        Ok(url)
    }

    /// Sends `request` and decodes its answer; an answer that did not come within the
    /// request's timeout is `timed_out()`.
    async fn send<T: DeserializeOwned>(
        &self,
        request: reqwest::RequestBuilder,
        timed_out: impl Fn() -> ClientError,
    ) -> Result<T, ClientError> {
        let failed = |error: reqwest::Error| {
            // A connection that could not be made in time is the server's absence; an answer
            // that did not come in time is a handler nobody runs (or a run still going).
            if error.is_timeout() && !error.is_connect() {
                timed_out()
            } else {
                ClientError::Transport(transport_text(error))
            }
        };
        let response = authorized(request, self.authorization.as_ref())
            .send()
            .await
            .map_err(failed)?;
        let status = response.status();
        if !status.is_success() {
            // Quoted, not read whole: an error's body can be a proxy's page, or without end.
            let secrets = credentials(&self.ingress, self.authorization.as_ref());
            return Err(ClientError::Http {
                status: status.as_u16(),
                body: refusal(response, &secrets).await,
            });
        }
        let body = read_answer(response, MAX_ANSWER_BYTES, failed).await?;
        // Handlers without output answer with an empty body.
        let body = if body.is_empty() { "null" } else { &body };
        serde_json::from_str(body).map_err(|error| ClientError::Decode(error.to_string()))
    }

    async fn post<B: Serialize, T: DeserializeOwned>(
        &self,
        segments: &[&str],
        body: &B,
    ) -> Result<T, ClientError> {
        let url = self.url(segments)?;
        let request = self.http.post(url).json(body).timeout(self.call_timeout);
        self.send(request, || self.call_timed_out()).await
    }

    /// What a call the ingress answers at once has become once its timeout passed.
    fn call_timed_out(&self) -> ClientError {
        ClientError::Timeout(self.call_timeout)
    }

    /// Starts the run `run_id` with `prompt` without waiting for it. A run id runs once:
    /// starting one that was started before (running, waiting or ended, until Restate forgets
    /// it) runs nothing and is [`ClientError::AlreadyExists`].
    pub async fn start(&self, run_id: &str, prompt: &str) -> Result<(), ClientError> {
        let input = RunInput {
            prompt: prompt.to_owned(),
        };
        let sent: Value = self
            .post(&[SERVICE_NAME, run_id, "run", "send"], &input)
            .await?;
        // Restate answers a workflow's second `send` with this status, and drops its input.
        if sent.get("status").and_then(Value::as_str) == Some("PreviouslyAccepted") {
            return Err(ClientError::AlreadyExists {
                run_id: run_id.to_owned(),
            });
        }
        Ok(())
    }

    /// Waits for the run `run_id` to end, at most for the
    /// [`output_timeout`](RestateRuns::output_timeout) ([`DEFAULT_OUTPUT_TIMEOUT`]), and
    /// returns its output; see [`output_within`](RestateRuns::output_within) for the errors.
    pub async fn output(&self, run_id: &str) -> Result<RunOutput, ClientError> {
        self.output_within(run_id, self.output_timeout).await
    }

    /// Waits at most `limit` for the run `run_id` to end and returns its output. A run still
    /// going (working, or waiting for a decision) when `limit` has passed is
    /// [`ClientError::NotEnded`]: the caller stops waiting, the run goes on. A failed run is
    /// [`ClientError::Http`] with the reason, and [`ClientError::UnknownRun`] when the server
    /// has no run under `run_id` (never started, or forgotten once its retention ended).
    pub async fn output_within(
        &self,
        run_id: &str,
        limit: Duration,
    ) -> Result<RunOutput, ClientError> {
        let url = self.url(&["restate", "workflow", SERVICE_NAME, run_id, "attach"])?;
        let request = self.http.get(url).timeout(limit);
        let not_ended = || ClientError::NotEnded {
            run_id: run_id.to_owned(),
            waited: limit,
        };
        self.send(request, not_ended)
            .await
            .map_err(|error| unknown_run(error, run_id))
    }

    /// The run's output if it has ended, without waiting: `None` while it runs or waits for
    /// a decision; a failed run is [`ClientError::Http`] with the reason, and
    /// [`ClientError::UnknownRun`] when the server has no run under `run_id`.
    pub async fn finished_output(&self, run_id: &str) -> Result<Option<RunOutput>, ClientError> {
        let url = self.url(&["restate", "workflow", SERVICE_NAME, run_id, "output"])?;
        let request = self.http.get(url).timeout(self.call_timeout);
        match self.send(request, || self.call_timed_out()).await {
            Ok(output) => Ok(Some(output)),
            // Restate answers 470 for an invocation that has not completed yet.
            Err(ClientError::Http { status: 470, .. }) => Ok(None),
            Err(error) => Err(unknown_run(error, run_id)),
        }
    }

    /// The run's journaled steps and the calls it is suspended on;
    /// [`ClientError::UnknownRun`] when the server has no run under `run_id`. A run is known
    /// as soon as [`start`](RestateRuns::start) has returned, before it journals anything.
    pub async fn status(&self, run_id: &str) -> Result<RunProgress, ClientError> {
        // The handler takes no input: the body must be empty.
        let url = self.url(&[SERVICE_NAME, run_id, "status"])?;
        let request = self.http.post(url).timeout(self.call_timeout);
        let progress: RunProgress = self.send(request, || self.call_timed_out()).await?;
        if progress != RunProgress::default() {
            return Ok(progress);
        }
        // The handler reads the workflow's state, which is just as empty for a run that has
        // journaled nothing yet as for no run at all: Restate's record of the invocation tells
        // them apart. `start` returns once Restate has recorded it.
        match self.finished_output(run_id).await {
            Err(unknown @ ClientError::UnknownRun { .. }) => Err(unknown),
            _ => Ok(progress),
        }
    }

    /// Decides about the suspended call `call` of the run `run_id`. Refused with
    /// [`ClientError::UnknownRun`] when the server has no run under `run_id` (a decision
    /// never starts one), and with [`ClientError::Http`] when the run does not wait on `call`
    /// (404), the edited arguments are not a JSON object or do not fit the tool's JSON schema
    /// (400) or the call has been decided already (409); a refused call keeps waiting.
    pub async fn decide(
        &self,
        run_id: &str,
        call: &str,
        decision: ToolDecision,
    ) -> Result<(), ClientError> {
        let request = DecisionRequest {
            call: call.to_owned(),
            decision,
        };
        match self
            .post::<_, Value>(&[SERVICE_NAME, run_id, "decide"], &request)
            .await
        {
            Ok(_) => Ok(()),
            // The handler answers 404 for any run that does not wait on `call`, a run that
            // does not exist included: say which it is. (The status of an unregistered
            // service is its own error, kept as it is.)
            Err(refused @ ClientError::Http { status: 404, .. }) => {
                match self.status(run_id).await {
                    Err(unknown @ ClientError::UnknownRun { .. }) => Err(unknown),
                    _ => Err(refused),
                }
            }
            Err(error) => Err(error),
        }
    }

    /// Approves the suspended call `call` as the model made it; see
    /// [`decide`](RestateRuns::decide) for the errors.
    pub async fn approve(&self, run_id: &str, call: &str) -> Result<(), ClientError> {
        self.decide(run_id, call, ToolDecision::approve()).await
    }

    /// Denies the suspended call `call`; the model sees `message` as its result. See
    /// [`decide`](RestateRuns::decide) for the errors.
    pub async fn deny(&self, run_id: &str, call: &str, message: &str) -> Result<(), ClientError> {
        self.decide(
            run_id,
            call,
            ToolDecision::Deny {
                message: message.to_owned(),
            },
        )
        .await
    }

    /// Approves the suspended call `call` with edited arguments; see
    /// [`decide`](RestateRuns::decide) for the errors.
    pub async fn approve_with_args(
        &self,
        run_id: &str,
        call: &str,
        args: Value,
    ) -> Result<(), ClientError> {
        self.decide(run_id, call, ToolDecision::approve_with_args(args))
            .await
    }
}

/// `error`, or [`ClientError::UnknownRun`] when it is the 404 Restate answers to a read of a
/// workflow's output (`attach`, `output`) that has no invocation under `run_id` (its body
/// says "not found"; Restate 1.7 answers so for an unregistered service too). A run's own
/// failure is never 404 (the `run` handler ends with 500, or 409 when cancelled), so the
/// status alone tells them apart.
fn unknown_run(error: ClientError, run_id: &str) -> ClientError {
    match error {
        ClientError::Http { status: 404, .. } => ClientError::UnknownRun {
            run_id: run_id.to_owned(),
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stand_ins::{closed_address, silent_server};

    /// `runs` in `Debug` shows none of `secrets`, and `masked` where they were.
    fn assert_masked(runs: &RestateRuns, secrets: &[&str], masked: &str) {
        let shown = format!("{runs:?}");
        for secret in secrets {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
        assert!(shown.contains(masked), "{shown}");
    }

    #[test]
    fn debug_output_masks_the_credentials_in_the_ingress_url_and_the_bearer_token() {
        let runs = RestateRuns::new("http://ann:s3cret@127.0.0.1:8080/").expect("a valid URL");
        assert_masked(&runs, &["s3cret", "ann"], "***:***@127.0.0.1:8080");
        let runs = runs.bearer_token("tok-9f8e7d").expect("a valid token");
        assert_masked(&runs, &["tok-9f8e7d"], r#"bearer_token: Some("***")"#);
    }

    /// An ingress that takes the connection and never answers ends a call at the call
    /// timeout, with an error, instead of holding the caller.
    #[tokio::test]
    async fn a_silent_ingress_ends_a_call_at_its_timeout() {
        let (address, held) = silent_server().await;
        let runs = RestateRuns::new(&format!("http://{address}"))
            .unwrap()
            .call_timeout(Duration::from_millis(200));
        // Told apart from an unreachable server: the server is there, its handler is not.
        let status = runs.status("r1").await;
        assert!(matches!(status, Err(ClientError::Timeout(_))), "{status:?}");
        let decided = runs.approve("r1", "t1c0").await;
        assert!(
            matches!(decided, Err(ClientError::Timeout(_))),
            "{decided:?}"
        );
        let said = decided
            .err()
            .map(|error| error.to_string())
            .unwrap_or_default();
        assert!(said.contains("is a worker running"), "{said}");
        held.abort();
    }

    /// A run's output that never comes ends the wait at the caller's limit, with an error
    /// naming the run; before, `output` waited for ever.
    #[tokio::test]
    async fn waiting_for_an_output_that_never_comes_ends_at_the_limit() {
        let (address, held) = silent_server().await;
        let runs = RestateRuns::new(&format!("http://{address}"))
            .unwrap()
            .output_timeout(Duration::from_millis(200));
        // A guard against a hang, far past the limit: the wait ends by itself.
        let guard = Duration::from_secs(60);
        let waited = tokio::time::timeout(guard, runs.output("r1")).await;
        assert!(
            matches!(&waited, Ok(Err(ClientError::NotEnded { run_id, .. })) if run_id == "r1"),
            "{waited:?}"
        );
        let within =
            tokio::time::timeout(guard, runs.output_within("r2", Duration::from_millis(100))).await;
        let said = match within {
            Ok(Err(error @ ClientError::NotEnded { .. })) => error.to_string(),
            other => panic!("expected the wait to end, got {other:?}"),
        };
        assert!(
            said.contains("run `r2` has not ended after 100 ms"),
            "{said}"
        );
        held.abort();
    }

    /// An address whose scheme was left out reads as a URL with the user name for a scheme
    /// and the password in its path: it is refused at once, and the error (shown, logged)
    /// does not repeat the password.
    #[test]
    fn an_address_without_http_is_refused_without_repeating_its_password() {
        let runs = RestateRuns::new("ops:hunter2@restate.internal:8080");
        let said = runs
            .err()
            .map(|error| error.to_string())
            .unwrap_or_default();
        assert!(said.contains("http://"), "{said}");
        assert!(!said.contains("hunter2"), "{said}");
    }

    /// Credentials in a URL go as basic authentication, never into an error's text.
    #[tokio::test]
    async fn an_unreachable_server_is_named_without_the_password_in_its_url() {
        let address = closed_address();
        let runs = RestateRuns::new(&format!("http://ops:hunter2@{address}")).unwrap();
        let said = runs.status("r1").await.err().map(|error| error.to_string());
        let said = said.unwrap_or_default();
        assert!(said.contains("could not be reached"), "{said}");
        assert!(!said.contains("hunter2"), "{said}");
    }

    /// A query in the ingress URL (a gateway's `?token=…`) is a credential too: an error
    /// reaching the ingress, and the client's `Debug`, name the server without it.
    #[tokio::test]
    async fn an_unreachable_server_is_named_without_the_query_of_its_url() {
        let address = closed_address();
        let runs = RestateRuns::new(&format!("http://{address}/?token=q-secret-55#frag-7"));
        let runs = runs.unwrap();
        let error = runs.status("r1").await.unwrap_err();
        let said = format!("{error:?} {error}");
        assert!(said.contains("could not be reached"), "{said}");
        let debug = format!("{runs:?}");
        assert!(debug.contains(&address.to_string()), "{debug}");
        for shown in [said, debug] {
            for secret in ["q-secret-55", "frag-7"] {
                assert!(!shown.contains(secret), "`{secret}` in {shown}");
            }
        }
    }

    #[tokio::test]
    async fn a_run_id_a_url_path_cannot_carry_is_refused() {
        let runs = RestateRuns::new("http://127.0.0.1:9").unwrap();
        for run in [".", ".."] {
            let status = runs.status(run).await;
            assert!(
                matches!(&status, Err(ClientError::Url(said)) if said.contains("cannot be a run id")),
                "{status:?}"
            );
        }
    }
}
