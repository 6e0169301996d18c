//! [`ClientError`]: why a call to Restate's ingress or admin API failed.

use std::time::Duration;

/// Why an ingress call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The ingress could not be reached or the connection failed.
    #[error("the Restate ingress could not be reached: {0}")]
    Transport(String),
    /// The ingress took the call and answered nothing within the call timeout
    /// ([`RestateRuns::call_timeout`](crate::RestateRuns::call_timeout)): the server runs,
    /// but the call's handler did not answer — most often no worker is running, or its
    /// deployment is not registered.
    #[error(
        "the Restate ingress answered nothing in {} s (is a worker running, and its deployment \
         registered?)",
        .0.as_secs()
    )]
    Timeout(Duration),
    /// The admin API (deployment registration) could not be reached.
    #[error("the Restate admin API could not be reached: {0}")]
    AdminTransport(String),
    /// The admin API took the registration and answered nothing within
    /// [`REGISTRATION_TIMEOUT`](crate::REGISTRATION_TIMEOUT).
    #[error(
        "the Restate admin API answered nothing in {} s (is this its address, and can it reach \
         the deployment?)",
        .0.as_secs()
    )]
    AdminTimeout(Duration),
    /// The admin API answered with an error status.
    #[error("the Restate admin API answered HTTP {status}: {body}")]
    AdminHttp {
        /// The HTTP status.
        status: u16,
        /// What the admin API said: one printable line of the start of its answer (at most
        /// 300 characters, `…` when cut; empty when it could not be read), the credentials
        /// the call sent masked as `***`.
        body: String,
    },
    /// The ingress answered with an error status (for `output`, a failed run: the body says
    /// why).
    #[error("the Restate ingress answered HTTP {status}: {body}")]
    Http {
        /// The HTTP status.
        status: u16,
        /// What the ingress said: one printable line of the start of its answer (at most 300
        /// characters, `…` when cut; empty when it could not be read), the credentials the
        /// call sent (bearer token, the URL's password) masked as `***`.
        body: String,
    },
    /// The answer could not be read.
    #[error("the Restate ingress answered something unreadable: {0}")]
    Decode(String),
    /// The ingress address or the run id does not make a valid URL.
    #[error("invalid ingress URL: {0}")]
    Url(String),
    /// The admin API's address does not make a valid URL.
    #[error("invalid admin API URL: {0}")]
    AdminUrl(String),
    /// The server has no run under this id: it was never started (or not on this server).
    #[error("no run `{run_id}` is known to the Restate server")]
    UnknownRun {
        /// The run id asked about.
        run_id: String,
    },
    /// A run under this id was started before
    /// ([`RestateRuns::start`](crate::RestateRuns::start)): a run id runs once, so the new
    /// prompt was not taken (the embedded stores' `StoreError::AlreadyExists`).
    #[error("run `{run_id}` already exists: a run id runs once, and the new prompt was not taken")]
    AlreadyExists {
        /// The run id that is taken.
        run_id: String,
    },
    /// The run did not end within the time its caller waited for its output
    /// ([`RestateRuns::output_within`](crate::RestateRuns::output_within),
    /// [`RestateRuns::output_timeout`](crate::RestateRuns::output_timeout)): it goes on
    /// (working, or waiting for a decision its status lists); only the wait ended.
    #[error(
        "run `{run_id}` has not ended after {}; it goes on (its status says where it is)",
        waited_for(.waited)
    )]
    NotEnded {
        /// The run waited for.
        run_id: String,
        /// How long the caller waited.
        waited: Duration,
    },
    /// The bearer token cannot be sent in an HTTP header (it holds a control character or a
    /// line break); the token itself is not repeated.
    #[error("the bearer token cannot be sent in an HTTP header (it holds a control character)")]
    InvalidToken,
}

/// `waited` for a person: whole seconds, or milliseconds under one second.
fn waited_for(waited: &Duration) -> String {
    if waited.as_secs() == 0 {
        format!("{} ms", waited.as_millis())
    } else {
        format!("{} s", waited.as_secs())
    }
}
