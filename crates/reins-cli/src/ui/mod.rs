//! `reins ui`: the web inbox. Runs, a run's timeline, and the calls waiting for a person with
//! approve / deny-with-message / edit-arguments, a call in doubt with skip / supply-result /
//! run-it-again ([`in_doubt`]); pages refresh their live part every two
//! seconds. Decisions go through [`RunStore::decide`] like `reins runs approve`; the run is
//! then resumed in this process (a later `ask` suspends it again: nobody is at a terminal),
//! unless the inbox was started without the model's key ([`without_key`]: the run is left to
//! `reins runs resume`).
//! Ctrl-C or SIGTERM stops the server and every run it resumes ([`resumes`]).
//!
//! Security: loopback by default, and a token all the same ([`inbox_token`]: made at start and
//! printed in the address to open, unless given with `--token`, which any other address
//! needs; `--no-token` trusts loopback). The token is sent once as `?token=`, then a session
//! secret of this inbox, never the token, is kept in an `HttpOnly`, `SameSite=Strict` cookie
//! named for its port (a browser sends it to every port of the host); the page is shown again at its address without the
//! token. On loopback a request must name a loopback host (against DNS rebinding), and a
//! request refused at the door ends its connection ([`access`]). Every state-changing request
//! is a POST that must carry the page's anti-forgery token and, when the browser sends one, an
//! `Origin` matching the `Host`. Everything from a run is HTML-escaped ([`escape::escape`]).

mod access;
mod body_deadline;
mod decisions;
mod escape;
mod forms;
mod html;
mod in_doubt;
mod inbox_token;
mod listening;
mod ownership;
mod refusal;
mod resumes;
mod runs_list;
mod runs_shown;
mod timeline;
mod without_key;
mod write_deadline;
mod wrong_tokens;

use access::{forged, guard};
use decisions::{approve, checked_target, decide, deny};
pub use inbox_token::{InboxToken, NoToken, choose as choose_token};
use ownership::{own_run, serves};
use refusal::refused;
use resumes::{Resumes, resume_failure, resumed_here, spawn_resume};
use runs_list::runs_html;
pub use without_key::{Resuming, load_agent};

use crate::config::LoadedAgent;
use crate::interrupt::StopSignal;
use crate::lease_keeper::holder_is_gone;
use crate::listen_address::ListenAddress;
use crate::{decide, runs};
use axum::Json;
use axum::extract::{Form, Path, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Router, middleware};
use reins::agent::RunStatus;
use reins::hooks::budget::Budget;
use reins::store::BoxedStore;
use reins::store::RunStore;
use serde::Deserialize;
use std::sync::{Arc, Mutex};

struct App {
    agent: LoadedAgent,
    /// Whether the inbox goes on with the runs it decides: not without the model's key.
    resuming: Resuming,
    /// The agent's name: the inbox serves only its runs (agents beside each other share a
    /// store, and a run resumed with another agent's tools would fail).
    name: String,
    /// The agent's own model as `provider/name`.
    model: String,
    /// The file's prices by model label, when it gives any.
    pricing: Option<Budget>,
    store: BoxedStore,
    /// What every request must carry.
    token: InboxToken,
    /// Whether it listens on loopback only: then a request must name a loopback host
    /// ([`access`]: against DNS rebinding).
    on_loopback: bool,
    /// The name of the session cookie, with the inbox's port: a browser sends a host's cookies
    /// to all its ports, so two inboxes on one machine would otherwise replace each other's
    /// session, each locking the person out of the other.
    token_cookie: String,
    /// What the session cookie carries once the token was given: made at start, of this
    /// inbox alone, never the token ([`inbox_token::session_secret`]).
    session: String,
    csrf: String,
    /// Ctrl-C or SIGTERM: stops the server and the runs it resumes.
    stop: StopSignal,
    /// The runs resumed in the background, waited for before the process exits (so that
    /// those a stop interrupted have given their leases back).
    resumes: Mutex<Resumes>,
    /// Held from the check that a call waits to the decision's record: two people deciding
    /// the same call at once get one decision and one refusal, never two acceptances with
    /// the later silently replacing the earlier.
    deciding: tokio::sync::Mutex<()>,
    /// Wrong tokens this minute: past a few, answered 429.
    wrong_tokens: wrong_tokens::WrongTokens,
}

/// Serves the inbox for `agent` on `bind` until `stop` (Ctrl-C or SIGTERM); then the runs it
/// resumes are stopped and their leases given back before it returns. A stop while it opens
/// its store or starts listening returns at once, as cleanly: the caller starts listening
/// for the signals before anything that can take time.
pub async fn serve(
    agent: LoadedAgent,
    resuming: Resuming,
    bind: ListenAddress,
    token: InboxToken,
    stop: StopSignal,
) -> Result<(), String> {
    if let Some(error) = inbox_token::unguarded(&bind, &token) {
        return Err(error);
    }
    let body_timeout = body_deadline::timeout()?;
    let Some(store) = stop.unless_stopped(crate::store::open(&agent)).await else {
        return Ok(());
    };
    let store = store?;
    let Some(listener) = stop
        .unless_stopped(tokio::net::TcpListener::bind(bind.bind()))
        .await
    else {
        return Ok(());
    };
    let listener = listener.map_err(|error| bind.bind_failed("--bind", &error))?;
    let address = listener.local_addr().map_err(|error| error.to_string())?;
    let app = Arc::new(App {
        token_cookie: format!("reins_token_{}", address.port()),
        session: inbox_token::session_secret()?,
        model: crate::assemble::model_label(agent.file.model.get_ref()),
        pricing: crate::assemble::price_table(&agent),
        name: agent.name(),
        agent,
        resuming,
        store,
        token,
        on_loopback: bind.loopback(),
        csrf: uuid::Uuid::new_v4().simple().to_string(),
        stop,
        resumes: Mutex::new(Resumes::default()),
        deciding: tokio::sync::Mutex::new(()),
        wrong_tokens: wrong_tokens::WrongTokens::new(),
    });
    let stopping = app.clone();
    let router = Router::new()
        .route("/", get(index))
        .route("/live/runs", get(live_runs))
        .route("/runs/{run}", get(run_page))
        .route("/live/runs/{run}", get(live_run))
        .route("/runs/{run}/calls/{call}/approve", post(approve))
        .route("/runs/{run}/calls/{call}/deny", post(deny))
        .route(
            "/runs/{run}/calls/{call}/skip",
            in_doubt::route(post(in_doubt::skip)),
        )
        .route(
            "/runs/{run}/calls/{call}/supply",
            in_doubt::route(post(in_doubt::supply)),
        )
        .route("/runs/{run}/resume", post(resume))
        .route("/runs/{run}/fork", post(fork))
        .route(html::SCRIPT_PATH, get(script))
        // Inside the guard, so that a 408 carries the guarding headers too.
        .layer(middleware::from_fn_with_state(
            body_timeout,
            body_deadline::within,
        ))
        .layer(middleware::from_fn_with_state(app.clone(), guard))
        // Outermost: what the framework refuses itself is a page too.
        .layer(middleware::map_response(refusal::as_page))
        .with_state(app);
    // Tests and scripts read this line to find the port (`--bind 127.0.0.1:0`). A token made
    // here is shown in it, to the person who started the inbox, and nowhere else; one given
    // with --token is theirs already, and stays out of the terminal and its logs.
    match &stopping.token {
        InboxToken::Generated(token) => {
            eprintln!("reins: inbox on http://{address}/?token={token}");
        }
        InboxToken::Off | InboxToken::Supplied(_) => eprintln!("reins: inbox on http://{address}/"),
    }
    if let Some(warning) = inbox_token::seen_by_every_user(&stopping.token) {
        eprintln!("{warning}");
    }
    if let Some(line) = stopping.resuming.startup_line(&stopping.agent.path) {
        eprintln!("{line}");
    }
    let served = listening::serve_until_stopped(listener, router, &stopping.stop).await;
    // No request is served any more, so no run is resumed any more: those that are end at the
    // same stop, giving their leases back.
    resumes::wait_for_all(&stopping).await;
    served
}

fn server_error(error: impl std::fmt::Display) -> Response {
    refused(StatusCode::INTERNAL_SERVER_ERROR, &error.to_string(), None)
}

async fn index(State(app): State<Arc<App>>) -> Response {
    match runs_html(&app).await {
        Ok(table) => Html(html::page(
            &format!("runs of {}", app.agent.name()),
            &html::live_part("live", &table),
            "/live/runs",
            false,
        ))
        .into_response(),
        Err(response) => response,
    }
}

async fn live_runs(State(app): State<Arc<App>>) -> Response {
    match runs_html(&app).await {
        Ok(table) => Json(html::live_parts(&[("live", &table)])).into_response(),
        Err(response) => response,
    }
}

/// The live parts of `run`'s page: its timeline (with the decision trail) and its forms, with
/// the person's edit `kept` in its call's form when given.
async fn run_parts(
    app: &App,
    run: &str,
    kept: Option<&forms::KeptArgs<'_>>,
) -> Result<(String, String), Response> {
    let state = own_run(app, run).await?;
    let pending = runs::pending_of(&app.store, run)
        .await
        .map_err(server_error)?;
    let forms = if resumed_here(app, run) {
        forms::resumed_here()
    } else if pending.is_empty() && state.status == RunStatus::Suspended {
        // Decided elsewhere (`reins runs approve`), or here without the model's key, but not
        // resumed yet.
        app.resuming
            .resume_or_command(&app.agent.path, run, forms::resume_form(run, &app.csrf))
    } else if state.status == RunStatus::Running {
        // Driven by a process, or left by one (Ctrl-C, a crash): its lease tells.
        // A dead process of this machine, pid namespace and boot drives nothing: a resume
        // takes the run over.
        match runs::lease_of(&app.store, run)
            .await
            .map_err(server_error)?
        {
            Some(lease) if !holder_is_gone(&lease.owner) => forms::driven_elsewhere(&lease),
            _ => app.resuming.resume_or_command(
                &app.agent.path,
                run,
                forms::resume_left_run_form(run, &app.csrf),
            ),
        }
    } else if state.status == RunStatus::Suspended {
        // Said before the decision too: the person deciding knows the run stops there.
        app.resuming
            .resume_or_command(&app.agent.path, run, String::new())
            + &forms::waiting_forms(&pending, &app.csrf, kept)
    } else {
        forms::waiting_forms(&pending, &app.csrf, kept)
    };
    let forms = match resume_failure(app, run) {
        Some(failure) => forms::resume_failure(&failure) + &forms,
        None => forms,
    };
    let latest = app
        .store
        .checkpoints(run)
        .await
        .map_err(server_error)?
        .last()
        .map(|checkpoint| checkpoint.version);
    let forms = forms + &forms::fork_form(run, latest, &app.csrf);
    let decisions = app.store.decisions(run).await.map_err(server_error)?;
    let trail = crate::trail::views(&state, &decisions);
    Ok((
        timeline::run_timeline(&state, pending.len(), &app.model) + &html::decision_trail(&trail),
        forms,
    ))
}

async fn run_page(State(app): State<Arc<App>>, Path(run): Path<String>) -> Response {
    match run_parts(&app, &run, None).await {
        Ok((timeline, forms)) => {
            Html(run_page_html(&app, &run, &timeline, &forms, &forms)).into_response()
        }
        Err(response) => response,
    }
}

/// `run`'s page, its forms part `forms` where the live address answers `live_forms`: the
/// two differ on a page that shows a person's edit again ([`forms::KeptArgs`]), whose
/// refresh then keeps it until the run changes, rather than putting the model's arguments
/// back in its box.
fn run_page_html(app: &App, run: &str, timeline: &str, forms: &str, live_forms: &str) -> String {
    html::page(
        &format!("run {run}"),
        &format!(
            "{}{}{}",
            html::trace_link(
                app.agent
                    .file
                    .ui
                    .trace_link
                    .as_ref()
                    .map(|l| l.get_ref().as_str()),
                run
            ),
            html::live_part("live", timeline),
            html::live_part_as("decisions", forms, live_forms),
        ),
        &format!("/live/runs/{}", escape::url_segment(run)),
        true,
    )
}

async fn live_run(State(app): State<Arc<App>>, Path(run): Path<String>) -> Response {
    match run_parts(&app, &run, None).await {
        Ok((timeline, forms)) => Json(html::live_parts(&[
            ("live", &timeline),
            ("decisions", &forms),
        ]))
        .into_response(),
        Err(response) => response,
    }
}

/// The pages' script ([`html::SCRIPT`]).
async fn script() -> Response {
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "text/javascript; charset=utf-8",
        )],
        html::SCRIPT,
    )
        .into_response()
}

#[derive(Deserialize)]
struct ResumeForm {
    csrf: String,
}

async fn resume(
    State(app): State<Arc<App>>,
    Path(run): Path<String>,
    Form(form): Form<ResumeForm>,
) -> Response {
    if let Some(refused) = forged(&app, &form.csrf) {
        return refused;
    }
    if let Err(refused) = own_run(&app, &run).await {
        return refused;
    }
    if let Some(why) = app.resuming.refusal(&app.agent.path, &run) {
        return refused(StatusCode::CONFLICT, &why, Some(&run));
    }
    // The page offered the button while nobody drove the run; another process may have taken
    // it since. Its resume would be refused as busy in the background: say so now, and who.
    if !resumed_here(&app, &run) {
        match runs::lease_of(&app.store, &run).await {
            Ok(Some(lease)) if !holder_is_gone(&lease.owner) => {
                return resumes::taken_meanwhile(&run, &lease);
            }
            Ok(_) => {}
            Err(error) => return server_error(error),
        }
    }
    spawn_resume(app, run.clone());
    Redirect::to(&format!("/runs/{}", escape::url_segment(&run))).into_response()
}

#[derive(Deserialize)]
struct ForkForm {
    csrf: String,
    /// The checkpoint's version (default: the latest).
    at: Option<String>,
}

async fn fork(
    State(app): State<Arc<App>>,
    Path(run): Path<String>,
    Form(form): Form<ForkForm>,
) -> Response {
    if let Some(refused) = forged(&app, &form.csrf) {
        return refused;
    }
    if let Err(refused) = own_run(&app, &run).await {
        return refused;
    }
    let at = match form.at.as_deref().map(str::trim).filter(|a| !a.is_empty()) {
        None => None,
        Some(text) => match text.parse::<i64>() {
            Ok(version) => Some(version),
            Err(_) => {
                return refused(
                    StatusCode::BAD_REQUEST,
                    "the checkpoint is not a number",
                    Some(&run),
                );
            }
        },
    };
    let edit = crate::fork::ForkEdit {
        call: None,
        change: decide::ArgsChange::None,
    };
    match crate::fork::fork_run(&app.store, &app.agent, &run, at, edit).await {
        Ok(state) => {
            // A fork that waits for nothing continues at once (unless the inbox resumes no
            // run: its page then says how it goes on); one that waits shows its forms.
            if state.status == RunStatus::Running && matches!(app.resuming, Resuming::Here) {
                spawn_resume(app, state.run_id.clone());
            }
            Redirect::to(&format!("/runs/{}", escape::url_segment(&state.run_id))).into_response()
        }
        Err(error) => refused(StatusCode::CONFLICT, &error, Some(&run)),
    }
}
