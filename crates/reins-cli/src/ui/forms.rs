//! The inbox's forms: deciding a waiting call (one in doubt: skip it, supply its result or
//! run it again), resuming a run, forking it, and what stands in
//! their place while the inbox itself runs the run. Everything from a run goes through
//! [`escape`], as on the pages ([`super::html`]).

use super::escape::{escape, url_segment};
use super::in_doubt::MOST_SUPPLIED_RESULT_BYTES;
use crate::approve::{policy_reason, pretty};
use crate::runs::lease_shown;
use reins::agent::RunStatus;
use reins::store::LeaseHolder;
use reins::store::PendingApproval;
use std::fmt::Write;

/// In place of the forms of a run this inbox is running: it goes on, and the page follows.
pub fn resumed_here() -> String {
    "<p id=\"resumed-here\">This inbox is running the run now: this page follows it, and \
     a call that waits for a decision shows up here.</p>"
        .to_owned()
}

/// The button that resumes a run stored as running that no process drives: its lease was
/// given back (stopped with Ctrl-C), ran out (its process died), or is held by a process of
/// this machine, pid namespace and boot that died, so the resume takes it at once and the
/// run goes on here.
pub fn resume_left_run_form(run: &str, csrf: &str) -> String {
    format!(
        "<form method=\"post\" action=\"/runs/{run}/resume\">\
         <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
         <p id=\"not-finished\"><span id=\"lease\">left (resumable)</span>: this run has not \
         finished and no process drives it any more (it was stopped, or its process died). \
         <button type=\"submit\" name=\"resume\">resume the run</button></p></form>",
        run = escape(&url_segment(run)),
        csrf = escape(csrf),
    )
}

/// In place of the resume button of a running run another process drives: who, and until
/// when. The button comes back once that process leaves the run (the page follows it).
pub fn driven_elsewhere(lease: &LeaseHolder) -> String {
    format!(
        "<p id=\"driven\"><span id=\"lease\">{driven}</span>: that process runs it, so this \
         inbox does not. If it stops or dies, the run can be resumed here once its lease is \
         given back or runs out, or at once if it ran on this machine, in this container, since \
         the machine last started.</p>",
        driven = escape(&lease_shown(RunStatus::Running, Some(lease))),
    )
}

/// Why this inbox's last resume of the run failed (another process took it first).
pub fn resume_failure(message: &str) -> String {
    format!(
        "<p id=\"resume-failed\">The last resume failed: {}</p>",
        escape(message)
    )
}

/// The button that resumes a suspended run whose calls were all decided.
pub fn resume_form(run: &str, csrf: &str) -> String {
    format!(
        "<form method=\"post\" action=\"/runs/{run}/resume\">\
         <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
         <p>Every waiting call is decided. \
         <button type=\"submit\" name=\"resume\">resume the run</button></p></form>",
        run = escape(&url_segment(run)),
        csrf = escape(csrf),
    )
}

/// The button that forks the run from one of its checkpoints (the latest by default) into a
/// new run, whose page it then opens.
pub fn fork_form(run: &str, latest_version: Option<i64>, csrf: &str) -> String {
    let Some(latest) = latest_version else {
        return String::new();
    };
    format!(
        "<form id=\"fork\" method=\"post\" action=\"/runs/{run}/fork\">\
         <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
         <label>start a new run from this one as it was at checkpoint \
         <input type=\"number\" name=\"at\" min=\"1\" max=\"{latest}\" value=\"{latest}\"> \
         (of {latest})</label> <button type=\"submit\" name=\"fork\">fork</button> \
         <small>this run stays as it is</small></form>",
        run = escape(&url_segment(run)),
        csrf = escape(csrf),
    )
}

/// A person's edit of a call's arguments that the inbox could not take (not JSON, or not
/// what the tool takes): its form is shown again with their text in the box and why beside
/// it, rather than a page of its own that loses the text.
pub struct KeptArgs<'a> {
    /// The call the form decides.
    pub call: &'a str,
    /// The call's binding as the person's page showed it: sent again, a call that changed
    /// since is still refused by the store.
    pub binding: &'a str,
    /// What they wrote in the box.
    pub text: &'a str,
    /// Why it was not taken.
    pub error: &'a str,
}

/// The arguments box of `call`'s form that approves it, under `label`: the call's arguments,
/// or the person's text `kept` for it, with why it was not taken beside it (focused, so that
/// they read it and the page's refresh keeps it). The binding its form sends.
fn args_box<'a>(
    call: &'a PendingApproval,
    kept: Option<&KeptArgs<'a>>,
    label: &str,
) -> (String, &'a str) {
    match kept.filter(|kept| kept.call == call.internal_call_id) {
        Some(kept) => (
            format!(
                "<label>{label}<br><textarea name=\"args\" rows=\"8\" autofocus \
                 aria-describedby=\"args-error\">{text}</textarea></label>\
                 <p id=\"args-error\" class=\"args-error\" role=\"alert\">{error}: change \
                 the arguments and approve again</p>",
                text = escape(kept.text),
                error = escape(kept.error),
            ),
            kept.binding,
        ),
        None => (
            format!(
                "<label>{label}<br><textarea name=\"args\" rows=\"8\">{args}</textarea></label><br>",
                args = escape(&pretty(&call.arguments)),
            ),
            &call.binding,
        ),
    }
}

/// The forms for the calls waiting for a decision; with `kept`, the person's edit that was
/// not taken in its call's form.
pub fn waiting_forms(
    pending: &[PendingApproval],
    csrf: &str,
    kept: Option<&KeptArgs<'_>>,
) -> String {
    let mut html = String::new();
    for call in pending {
        let base = format!(
            "/runs/{}/calls/{}",
            url_segment(&call.run_id),
            url_segment(&call.internal_call_id)
        );
        if call.in_doubt {
            html.push_str(&in_doubt_forms(call, &base, csrf, kept));
            continue;
        }
        let (args_box, approved_binding) = args_box(
            call,
            kept,
            "arguments (you may change them before approving)",
        );
        let _ = write!(
            html,
            "<div class=\"waiting\" data-call=\"{call_id}\"><p><b>{tool}</b> {reason}</p>\
             <form method=\"post\" action=\"{base}/approve\">\
             <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
             <input type=\"hidden\" name=\"binding\" value=\"{approved_binding}\">\
             {args_box}<button type=\"submit\" name=\"approve\">approve</button></form>\
             <form method=\"post\" action=\"{base}/deny\">\
             <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
             <input type=\"hidden\" name=\"binding\" value=\"{binding}\">\
             <input type=\"text\" name=\"message\" placeholder=\"message for the model\">\
             <button type=\"submit\" name=\"deny\">deny</button></form></div>",
            call_id = escape(&call.internal_call_id),
            tool = escape(&call.tool_name),
            reason = escape(&why_waiting(&call.reason)),
            base = escape(&base),
            csrf = escape(csrf),
            binding = escape(&call.binding),
            approved_binding = escape(approved_binding),
        );
    }
    html
}

/// The forms for a call in doubt: it started before the run stopped and recorded no result,
/// so it may have had its effect. Run it again (approve), or answer it without running it:
/// skip it (the model is told, with the person's message) or supply what it returned (the
/// model reads it as the tool's output). Each button says what it does.
fn in_doubt_forms(
    call: &PendingApproval,
    base: &str,
    csrf: &str,
    kept: Option<&KeptArgs<'_>>,
) -> String {
    let (args_box, approved_binding) = args_box(
        call,
        kept,
        "arguments it started with (you may change them before running it again)",
    );
    format!(
        "<div class=\"waiting in-doubt\" data-call=\"{call_id}\" data-in-doubt=\"true\">\
         <p><b>{tool}</b> <strong class=\"in-doubt\">in doubt</strong>: it started before the \
         run stopped and recorded no result, so it may have had its effect already (check \
         before running it again).</p>\
         <form method=\"post\" action=\"{base}/skip\">\
         <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
         <input type=\"hidden\" name=\"binding\" value=\"{binding}\">\
         <input type=\"text\" name=\"message\" placeholder=\"why (optional, the model reads it)\">\
         <button type=\"submit\" name=\"skip\">skip</button> \
         <small>not run again: the model is told you skipped it, with your message</small></form>\
         <form method=\"post\" action=\"{base}/supply\">\
         <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
         <input type=\"hidden\" name=\"binding\" value=\"{binding}\">\
         <label>the result it returned (you checked: it ran), at most {most} KiB<br>\
         <textarea name=\"result\" rows=\"4\" required maxlength=\"{most_bytes}\"></textarea></label><br>\
         <button type=\"submit\" name=\"supply\">supply result</button> \
         <small>not run again: the model reads this text as the tool's output</small></form>\
         <form method=\"post\" action=\"{base}/approve\">\
         <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
         <input type=\"hidden\" name=\"binding\" value=\"{approved_binding}\">\
         {args_box}<button type=\"submit\" name=\"approve\">run it again</button> \
         <small>runs the tool again: its effect may happen twice</small></form></div>",
        call_id = escape(&call.internal_call_id),
        tool = escape(&call.tool_name),
        base = escape(base),
        csrf = escape(csrf),
        binding = escape(&call.binding),
        most = MOST_SUPPLIED_RESULT_BYTES / 1024,
        most_bytes = MOST_SUPPLIED_RESULT_BYTES,
        approved_binding = escape(approved_binding),
    )
}

/// Why a call waits, as the inbox says it. The reason stored for a call nobody was asked about
/// points at the commands that decide it, `reins ui` among them: here the person decides it on
/// the page, told why the policy asks when it says. Any other reason (a call in doubt, a
/// hook's or the approval service's) is shown.
fn why_waiting(reason: &str) -> String {
    match policy_reason(reason) {
        Some("") => "waits for your decision: approve or deny it below".to_owned(),
        Some(why) => format!("waits for your decision ({why}): approve or deny it below"),
        None if reason.is_empty() => "waits for your decision: approve or deny it below".to_owned(),
        None => format!("waits for a decision ({reason})"),
    }
}
