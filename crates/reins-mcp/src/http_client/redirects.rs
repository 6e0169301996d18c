//! Which redirects a request follows.

use http::StatusCode;

/// The most redirects one request follows.
const MAX_REDIRECTS: usize = 10;

/// Follows a redirect only when it keeps the method and body (307, 308) and stays on the
/// origin first asked, at most [`MAX_REDIRECTS`] times; any other is the answer.
pub(super) fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let keeps_the_request = matches!(
            attempt.status(),
            StatusCode::TEMPORARY_REDIRECT | StatusCode::PERMANENT_REDIRECT
        );
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if !keeps_the_request || !same_origin {
            attempt.stop()
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    })
}
