//! The inbox's pages. Everything that comes from a run — the model's text, tool arguments and
//! results, ids — goes through [`escape`]: nothing a model or a tool wrote is rendered as HTML.

use super::escape::{escape, url_segment};
use super::timeline::{cut_for_timeline, status_shown};
use crate::approve::pretty;
use crate::run::{first_line, token_counts};
use crate::runs::{
    ListedRun, UnreadableListed, failure_shown, lease_shown, model_shown, status_name, tokens,
};
use crate::trail::DecisionView;
use reins::agent::RunState;
use reins::completion::Usage;
use reins::hooks::budget::Budget;
use reins::store::PendingApproval;
use std::fmt::Write;

const STYLE: &str = "body{font-family:sans-serif;margin:2em;max-width:60em}\
table{border-collapse:collapse}td,th{padding:.3em .8em;border-bottom:1px solid #ddd;text-align:left}\
td a,td.model{white-space:nowrap}\
pre{background:#f6f6f6;padding:.5em;white-space:pre-wrap;overflow-wrap:anywhere}.step{margin:.5em 0}.replaced{color:#777}\
.waiting{border:2px solid #c80;padding:1em;margin:1em 0}\
.failure{border:2px solid #b00;padding:.5em 1em;margin:1em 0}td .failure{border:0;padding:0;margin:0;\
color:#b00;font-size:.85em}.args-error{color:#b00;font-weight:bold;margin:.3em 0}textarea{width:100%;font-family:monospace}\
#changed{position:fixed;top:0;left:0;right:0;margin:0;padding:.5em 2em;background:#fec;\
border-bottom:2px solid #c80}";

/// The start of every page, up to and including its heading; with `back`, a link to the runs
/// page above it (left out on the runs page itself, where it would lead nowhere).
fn head(title: &str, back: bool) -> String {
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{title}</title>\
         <style>{STYLE}</style></head><body>{back}<h1>{title}</h1>",
        title = escape(title),
        back = if back {
            "<p><a href=\"/\">runs</a></p>"
        } else {
            ""
        },
    )
}

/// The page of a refused request: what went wrong (`message`, escaped), with a link back to
/// the run it was about, if any.
pub fn error_page(title: &str, message: &str, run: Option<&str>) -> String {
    let back = run.map_or_else(String::new, |run| {
        format!(
            "<p><a id=\"back\" href=\"/runs/{}\">back to run {}</a></p>",
            escape(&url_segment(run)),
            escape(run)
        )
    });
    format!(
        "{head}<p id=\"error\">{message}</p>{back}</body></html>",
        head = head(title, true),
        message = escape(message),
    )
}

/// A whole page: `body`, and the inbox's script ([`SCRIPT`], served at [`SCRIPT_PATH`]), which
/// refreshes its live parts ([`live_part`]) from `live_url` ([`live_parts`]) every two
/// seconds. A part is replaced only when the server's HTML of it changed (the run went on, or
/// waits for another call), and a part with forms not while a person uses it ([`SCRIPT`]).
/// `back` links to the runs page (not on that page).
pub fn page(title: &str, body: &str, live_url: &str, back: bool) -> String {
    format!(
        "{head}{body}<script src=\"{SCRIPT_PATH}\" data-live=\"{url}\"></script></body></html>",
        head = head(title, back),
        url = escape(live_url),
    )
}

/// Where the inbox's one script is served: a file of its own, so the pages' security policy
/// allows no inline script at all (`script-src 'self'`), and text a model wrote that ever
/// escaped its escaping could not run.
pub const SCRIPT_PATH: &str = "/inbox.js";

/// The inbox's script: fetches the page's live parts (its tag's `data-live`) every two
/// seconds and replaces the parts whose HTML changed, except a part with forms that a person
/// is using — the pointer on it, a field of it focused or changed. Replaced under the
/// pointer, the form of the call the person read would become another call's, and a click
/// meant for the first would approve the second (or what they typed would be lost). Such a
/// part is kept as it was, and a notice at the top of the window (`#changed`, over the page so
/// nothing moves under the pointer) says the run changed: a decision
/// sent from it about a call that no longer waits is refused by its binding. The part is
/// replaced at the first refresh after the person leaves it.
pub const SCRIPT: &str = "(()=>{const live=document.currentScript.dataset.live;\
for(const e of document.querySelectorAll('[data-digest]')){\
e.addEventListener('pointerenter',()=>{e.dataset.pointer='in';});\
e.addEventListener('pointerleave',()=>{delete e.dataset.pointer;});}\
const inUse=e=>e.dataset.pointer==='in'||(e!==document.activeElement&&e.contains(document.activeElement))\
||[...e.querySelectorAll('textarea,input')].some(f=>f.value!==f.defaultValue);\
const notice=kept=>{let n=document.getElementById('changed');\
if(!kept){if(n)n.remove();return;}\
if(!n){n=document.createElement('p');n.id='changed';const b=document.createElement('b');\
b.textContent='The run changed.';n.append(b,' The forms below are kept as they were while you use them: a decision about a call \
that no longer waits is refused. Move the pointer off them, or reload the page, to see the run as it is now.');document.body.append(n);}};\
setInterval(async()=>{try{const r=await fetch(live);if(!r.ok)return;\
const parts=await r.json();let kept=false;\
for(const[id,part]of Object.entries(parts)){const e=document.getElementById(id);\
if(!e||e.dataset.digest===part.digest)continue;\
if(e.querySelector('form')&&inUse(e)){kept=true;continue;}\
e.innerHTML=part.html;e.dataset.digest=part.digest;}\
notice(kept);}catch(e){}},2000);})();\n";

/// A part of a page that its script keeps up to date: `html` in the element `id`.
pub fn live_part(id: &str, html: &str) -> String {
    live_part_as(id, html, html)
}

/// [`live_part`] showing `html` where the live URL answers `live_html`: its script replaces
/// it only once the live URL answers something else (see [`super::run_page_html`]).
pub fn live_part_as(id: &str, html: &str, live_html: &str) -> String {
    format!(
        "<div id=\"{id}\" data-digest=\"{digest}\">{html}</div>",
        id = escape(id),
        digest = digest(live_html),
    )
}

/// What a live URL answers: each part's HTML and its digest, by the element's id.
pub fn live_parts(parts: &[(&str, &str)]) -> serde_json::Value {
    parts
        .iter()
        .map(|(id, html)| {
            (
                (*id).to_owned(),
                serde_json::json!({"html": html, "digest": digest(html)}),
            )
        })
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// A digest of a part's HTML, to tell whether it changed (not a secret: any hash does).
fn digest(html: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    html.hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

/// What the runs table shows beyond the runs' states.
pub struct RunsTable<'a> {
    /// The calls waiting for a decision.
    pub waiting: &'a [PendingApproval],
    /// The agent's own model as `provider/name`.
    pub own_model: &'a str,
    /// The file's prices by model label, to price a run from its budget record.
    pub pricing: Option<&'a Budget>,
    /// The agent's model's `[input, output]` price per million tokens, if any: for a run
    /// without a budget record, priced as if that model made every call.
    pub prices: Option<[f64; 2]>,
    /// The agent file, for the command an empty inbox suggests.
    pub agent_file: &'a str,
}

/// A run's cost: each model's tokens at its own price when the run has a budget record
/// (a run that switched models is priced per model), else all of the run's tokens at the
/// agent's model's price; blank without a price.
pub fn cost(state: &RunState, pricing: Option<&Budget>, prices: Option<[f64; 2]>) -> String {
    let per_model = pricing
        .and_then(|budget| budget.usage_in(state))
        .filter(|used| used.unpriced_models.is_empty())
        .map(|used| used.cost);
    let cost = per_model.or_else(|| {
        prices.map(|[input, output]| {
            (state.usage.input_tokens as f64 * input + state.usage.output_tokens as f64 * output)
                / 1_000_000.0
        })
    });
    cost.map_or_else(String::new, |cost| format!("{cost:.4}"))
}

/// The runs table, in the order given ([`super::runs_list`]: those waiting for a decision
/// first): agent, model, status, who drives a running run (or that it was left), turns,
/// tokens, cost, age (since the run was created).
pub fn runs_table(runs: &[&ListedRun], table: &RunsTable<'_>) -> String {
    if runs.is_empty() {
        return format!(
            "<p id=\"no-runs\">No runs yet. Start one with \
             <code>reins run {} \"your prompt\"</code>: it shows up here, and so does every call it makes that waits \
             for a decision.</p>",
            escape(table.agent_file)
        );
    }
    let mut html = String::from(
        "<table id=\"runs\"><tr><th>run</th><th>agent</th><th>model</th><th>status</th>\
         <th>lease</th><th>turns</th><th>tokens</th><th>cost</th><th>age</th><th>waiting</th></tr>",
    );
    for ListedRun {
        state,
        lease,
        created_at_ms,
    } in runs.iter().copied()
    {
        let count = table
            .waiting
            .iter()
            .filter(|p| p.run_id == state.run_id)
            .count();
        let _ = write!(
            html,
            "<tr class=\"run\" data-status=\"{status}\"><td><a href=\"/runs/{id_url}\">{id}</a></td>\
             <td class=\"agent\">{agent}</td><td class=\"model\">{model}</td>\
             {status_cell}<td class=\"lease\">{lease}</td><td class=\"turns\">{turns}</td>\
             <td class=\"tokens\">{tokens}</td><td class=\"cost\">{cost}</td>\
             <td class=\"age\">{age}</td><td>{count}</td></tr>",
            id_url = escape(&url_segment(&state.run_id)),
            id = escape(&state.run_id),
            status = status_name(state.status),
            status_cell = status_cell(state, count),
            lease = escape(&lease_shown(state.status, lease.as_ref())),
            agent = escape(state.agent_name.as_deref().unwrap_or("-")),
            model = escape(&model_shown(state, table.own_model)),
            turns = state.turn,
            tokens = tokens_shown(&state.usage),
            cost = cost(state, table.pricing, table.prices),
            age = crate::fork::age(*created_at_ms),
        );
    }
    html.push_str("</table>");
    html
}

/// A run's tokens in the runs table: their sum, the prompt's and the generated ones in a
/// tooltip; a dash when the provider gave no counts, said in the tooltip as the run's page
/// says it ("0" would read as none used).
fn tokens_shown(usage: &Usage) -> String {
    let shown = match tokens(usage) {
        0 => "—".to_owned(),
        sum => sum.to_string(),
    };
    format!(
        "<span title=\"{}\">{shown}</span>",
        escape(&token_counts(usage))
    )
}

/// Under a runs table that lists only some runs: how many more there are (at least, when
/// `older_not_counted`), and the command that lists them all.
pub fn runs_left_out(left_out: usize, older_not_counted: bool, agent_file: &str) -> String {
    let how_many = match (left_out, older_not_counted) {
        (0, false) => return String::new(),
        (0, true) => "Older runs".to_owned(),
        (left_out, false) => format!("{left_out} older run(s)"),
        (left_out, true) => format!("{left_out} or more older runs"),
    };
    format!(
        "<p id=\"runs-left-out\">{how_many} are not listed here: \
         <code>reins runs list {}</code> lists every run.</p>",
        escape(agent_file)
    )
}

/// The most unreadable runs the runs page names: a store of thousands of broken records
/// would make a page of megabytes, built and sent again every two seconds.
pub const MOST_UNREADABLE_LISTED: usize = 50;

/// The runs of the store this release cannot read (a newer release's record), each with why,
/// under the runs table: `reins runs list` lists them the same way. The first
/// [`MOST_UNREADABLE_LISTED`] of them, then how many more there are and the command that
/// lists them all (`agent_file`, as a shell word).
pub fn unreadable_runs(runs: &[UnreadableListed], agent_file: &str) -> String {
    if runs.is_empty() {
        return String::new();
    }
    let mut html = String::from(
        "<div id=\"unreadable\"><p>The store also holds runs this release cannot read \
         (written by a newer one?):</p><ul>",
    );
    for run in runs.iter().take(MOST_UNREADABLE_LISTED) {
        let _ = write!(
            html,
            "<li><code>{}</code>: {}</li>",
            escape(&run.run_id),
            escape(&run.reason)
        );
    }
    html.push_str("</ul>");
    let left_out = runs.len().saturating_sub(MOST_UNREADABLE_LISTED);
    if left_out > 0 {
        let _ = write!(
            html,
            "<p id=\"unreadable-left-out\">{left_out} more are not named here: \
             <code>reins runs list {}</code> lists every run.</p>",
            escape(agent_file)
        );
    }
    html.push_str("</div>");
    html
}

/// A run's status cell: its status as a person reads it ([`status_shown`]), and for a failed
/// run why, whole in a tooltip and cut short under the status.
fn status_cell(state: &RunState, waiting: usize) -> String {
    let status = status_shown(state, waiting);
    match failure_shown(state) {
        Some(failure) => format!(
            "<td class=\"status\" title=\"{whole}\">{status}<div class=\"failure\">{short}</div></td>",
            whole = escape(failure),
            short = escape(&first_line(failure, 60)),
        ),
        None => format!("<td class=\"status\">{status}</td>"),
    }
}

/// The run's decision trail: who decided what about which call, when, why, and the
/// arguments the decision was bound to (each cut like a timeline step: the page is fetched
/// again every two seconds). The digest it is bound to is a tooltip only: a person
/// reads the arguments (shown while the run holds the call, as it does once it went on).
pub fn decision_trail(trail: &[DecisionView]) -> String {
    if trail.is_empty() {
        return String::new();
    }
    let mut html = String::from("<h2>decisions</h2><div id=\"decisions-trail\">");
    for decision in trail {
        let _ = write!(
            html,
            "<div class=\"step decision{class}\" data-call=\"{call}\" title=\"bound to {binding}\">\
             <b>decision</b> {about}: {verdict} by <span class=\"decided-by\">{by}</span> \
             at {at}{reason}{replaced}{bound}{new}</div>",
            class = if decision.replaced { " replaced" } else { "" },
            replaced = if decision.replaced {
                " <i>(replaced by a later decision)</i>"
            } else {
                ""
            },
            call = escape(&decision.call),
            binding = escape(&decision.binding),
            about = escape(&crate::trail::about(decision)),
            verdict = escape(&cut_for_timeline(&decision.verdict)),
            by = escape(&decision.decided_by),
            at = escape(&decision.decided_at),
            reason = decision.reason.as_deref().map_or_else(String::new, |r| {
                format!(" — because {}", escape(&cut_for_timeline(r)))
            }),
            bound = decision
                .bound_arguments
                .as_ref()
                .map_or_else(String::new, |a| {
                    format!(
                        "<br>for the arguments<pre>{}</pre>",
                        escape(&cut_for_timeline(&pretty(a)))
                    )
                }),
            new = decision
                .new_arguments
                .as_ref()
                .map_or_else(String::new, |a| {
                    format!(
                        "ran with<pre>{}</pre>",
                        escape(&cut_for_timeline(&pretty(a)))
                    )
                }),
        );
    }
    html.push_str("</div>");
    html
}

/// A link to the run's trace, from the agent file's `[ui] trace_link` template.
pub fn trace_link(template: Option<&str>, run: &str) -> String {
    match template {
        Some(template) => format!(
            "<p><a id=\"trace\" href=\"{}\">trace of this run</a></p>",
            escape(&template.replace("{run}", &url_segment(run)))
        ),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reins::agent::AgentBuilder;
    use reins::completion::{CompletionError, Usage};
    use reins::hooks::fallback::ModelFallback;
    use reins::testing::{ScriptedModel, Turn};

    #[tokio::test]
    async fn a_run_is_priced_per_model_from_its_budget_record() {
        // The default model fails; the fallback reads a million tokens, at twice the price.
        let failing = ScriptedModel::new([Turn::error(CompletionError::Timeout("slow".into()))]);
        let backup = ScriptedModel::new([Turn::text("ok").usage(Usage::new(1_000_000, 0))]);
        let agent = AgentBuilder::new(failing)
            .named_model("fallback-1", backup)
            .add_hook(ModelFallback::new(["default", "fallback-1"]))
            .add_hook(Budget::new().max_model_calls(5))
            .build();
        let run = agent.prompt("hi").extended_details().await.unwrap();
        let pricing = Budget::new()
            .default_price(1.0, 1.0)
            .price("fallback-1", 2.0, 2.0);
        let own_price = Some([1.0, 1.0]);
        assert_eq!(cost(&run.state, Some(&pricing), own_price), "2.0000");
        // Without a price table, or a model it does not price, the agent's model's price.
        assert_eq!(cost(&run.state, None, own_price), "1.0000");
        let partial = Budget::new().price("default", 3.0, 3.0);
        assert_eq!(cost(&run.state, Some(&partial), own_price), "1.0000");
        assert_eq!(cost(&run.state, None, None), "");
    }
}
