//! `reins serve`: the agent's Restate worker, until Ctrl-C or SIGTERM.

use crate::assemble::{Approvals, AssembleError, connect};
use crate::config::LoadedAgent;
use crate::interrupt::StopSignal;
use reins_restate::{AgentService, SERVICE_NAME};
use std::sync::Arc;

/// What `reins serve` was asked for besides the agent file.
pub struct ServeOptions {
    /// `--listen`: an address or a host name, with its port.
    pub listen: String,
    /// `--unverified-callers`: off loopback, serve without `restate_identity_keys`.
    pub unverified_callers: bool,
    /// `--register`: the Restate admin API to register the deployment with.
    pub register: Option<String>,
    /// `--deployment-url`: the URL Restate reaches the worker at.
    pub deployment: Option<String>,
}

/// Serves the agent as the Restate deployment on `listen`; registers it with the admin API at
/// `register` (as `deployment`, default `http://<listen address>`) once it listens. Returns
/// when the process is told to stop (`stop`), at any point: while it connects (MCP servers
/// start) or registers (up to two minutes) as well as once it serves. A mistake in the agent file that only connecting finds is
/// [`AssembleError::Invalid`], as for `reins run`; so is an address other than loopback
/// without `restate_identity_keys` or `--unverified-callers` (see [`super::listen`]).
pub async fn serve(
    agent: &LoadedAgent,
    options: ServeOptions,
    stop: StopSignal,
) -> Result<(), AssembleError> {
    let ServeOptions {
        listen,
        unverified_callers,
        register,
        deployment,
    } = options;
    if super::ingress(agent).is_none() {
        return Err(AssembleError::Failed(format!(
            "`reins serve` runs a Restate worker: {} needs `[store] restate = \"<ingress URL>\"`",
            agent.path.display()
        )));
    }
    let keys: Vec<String> = agent
        .file
        .store
        .as_ref()
        .map(|store| {
            store
                .get_ref()
                .restate_identity_keys
                .iter()
                .map(|key| key.get_ref().clone())
                .collect()
        })
        .unwrap_or_default();
    // Before anything starts (MCP servers, the port): a worker anyone could drive is refused.
    let resolved = crate::listen_address::ListenAddress::resolve(&listen).await?;
    let address = resolved.bind();
    if let Some(refusal) =
        super::listen::unguarded(agent, &resolved, !keys.is_empty(), unverified_callers)
    {
        return Err(AssembleError::Invalid(refusal));
    }
    // Before anything starts: a registration that cannot send its token fails at once.
    let admin_token = match register {
        Some(_) => super::admin_token(agent)?,
        None => None,
    };
    // A call an approval rule asks about goes to the file's webhook, its answer journaled so a
    // replay decides the same way; without one it suspends (nobody is at this terminal).
    let Some(connected) = stop
        .unless_stopped(connect(agent, Approvals::Restate))
        .await
    else {
        return stopped();
    };
    let connected = Arc::new(connected?);
    let service = {
        let connected = Arc::clone(&connected);
        AgentService::new(move |steps| connected.build(Some(steps)))
    };
    let listener = reins_restate::listener(address)
        .map_err(|error| format!("cannot listen on {listen}: {error}"))?;
    let local = listener
        .local_addr()
        .map_err(|error| format!("cannot listen on {listen}: {error}"))?;
    let deployment = deployment.unwrap_or_else(|| format!("http://{local}"));
    // With the server's keys, only its signed requests are taken (`check` read the keys).
    let taken = if keys.is_empty() {
        "any caller of this port"
    } else {
        "only requests the Restate server signed (`restate_identity_keys`)"
    };
    let worker = tokio::spawn(async move {
        if keys.is_empty() {
            reins_restate::serve_on(listener, service).await;
            Ok(())
        } else {
            reins_restate::serve_verified(listener, service, &keys).await
        }
    });
    eprintln!(
        "reins: serving agent `{}` ({}) as the Restate service {SERVICE_NAME} on {local}, \
         taking {taken}",
        agent.name(),
        connected.model_label
    );
    if let Some(admin) = register {
        let registering = async {
            match admin_token {
                Some(token) => {
                    reins_restate::register_deployment_with_token(&admin, &deployment, &token).await
                }
                None => reins_restate::register_deployment(&admin, &deployment).await,
            }
        };
        let Some(registered) = stop.unless_stopped(registering).await else {
            worker.abort();
            return stopped();
        };
        let (admin, deployment) = (super::shown(&admin), super::shown(&deployment));
        if let Err(error) = registered {
            worker.abort();
            let credentials = match error {
                reins_restate::ClientError::AdminHttp {
                    status: 401 | 403, ..
                } => format!("; {}", super::admin_refusal(agent)),
                _ => String::new(),
            };
            return Err(AssembleError::Failed(format!(
                "registering the deployment {deployment} with the Restate admin API at {admin} \
                 failed: {error}{credentials}"
            )));
        }
        eprintln!("reins: registered {deployment} with {admin}");
    } else {
        eprintln!(
            "reins: register it once with `restate deployments register {deployment}` or \
             `reins serve --register <admin URL>`"
        );
    }
    tokio::select! {
        () = stop.stopped() => {}
        finished = worker => {
            return Err(AssembleError::Failed(match finished {
                Ok(Ok(())) => "the worker stopped".to_owned(),
                Ok(Err(error)) => format!("the worker cannot serve: {error}"),
                Err(error) => format!("the worker stopped: {error}"),
            }));
        }
    }
    stopped()
}

/// Says the worker stopped, as it does whenever Ctrl-C or SIGTERM stops it (exit 0).
fn stopped() -> Result<(), AssembleError> {
    eprintln!("reins: stopped");
    Ok(())
}
