//! One builder for every provider: base URL, key and how it is sent, headers, timeouts,
//! retries, limits and redirects; each provider adds only its own options.

use super::client::HttpClient;
use super::credentials::{
    endpoint_of, looks_like_credential, secret_query, shown_query, shown_url, url_encoded,
};
use super::echoes::{MIN_ECHOED_SECRET_LEN, Secrets};
use super::protocol::sealed::Sealed;
use super::retry::RetryPolicy;
use super::settings::{ApiKey, Auth, Limits, ProviderError, Redirects, Timeouts, scrub_key};
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};
use reqwest::redirect;
use std::fmt;
use std::sync::Arc;

/// Where a provider's settings come from when nothing else is said.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct ProviderDefaults {
    /// The base URL, when the service has one.
    pub base_url: Option<&'static str>,
    /// How the key is sent.
    pub auth: fn() -> Auth,
    /// The variable `from_env` reads the key from.
    pub key_env: &'static str,
    /// The variable `from_env` reads a base URL from, when set.
    pub base_url_env: &'static str,
}

/// A hosted service reins builds a client for ([`OpenAI`](crate::providers::openai::OpenAI),
/// [`Anthropic`](crate::providers::anthropic::Anthropic),
/// [`Gemini`](crate::providers::gemini::Gemini),
/// [`OpenAICompatible`](crate::providers::openai_compatible::OpenAICompatible)). Sealed.
///
/// Every hosted client is built the same way, so code can be written once for any of them:
///
/// ```
/// use reins::providers::anthropic::Anthropic;
/// use reins::providers::openai::OpenAI;
/// use reins::providers::{Provider, ProviderBuilder, ProviderError};
///
/// /// A client of any hosted service, sent to a gateway on this machine.
/// fn through_gateway<P: Provider>(builder: ProviderBuilder<P>) -> Result<P, ProviderError> {
///     builder.api_key("gateway-key").base_url("http://127.0.0.1:4000").build()
/// }
///
/// let openai = through_gateway(OpenAI::builder())?;
/// let anthropic = through_gateway(Anthropic::builder())?;
/// assert_eq!(openai.completion("gpt-4o-mini").model(), "gpt-4o-mini");
/// assert_eq!(anthropic.completion("claude-sonnet-4-5").model(), "claude-sonnet-4-5");
/// # Ok::<(), ProviderError>(())
/// ```
pub trait Provider: Sealed + Sized {
    /// The provider's own builder options.
    #[doc(hidden)]
    type Options: Default + fmt::Debug;
    /// Its defaults.
    #[doc(hidden)]
    const DEFAULTS: ProviderDefaults;
    /// Headers the provider sends on every request (before the user's own, which win); none
    /// unless its options add some.
    #[doc(hidden)]
    fn headers(_options: &Self::Options) -> Vec<(&'static str, String)> {
        Vec::new()
    }
    /// The client, from its connection and options.
    #[doc(hidden)]
    fn from_client(client: Arc<HttpClient>, options: Self::Options) -> Self;
}

/// Builds a provider's client: `OpenAI::builder()`, `Anthropic::builder()`, … Every setting
/// has a default; [`build`](ProviderBuilder::build) checks them all and never panics.
pub struct ProviderBuilder<P: Provider> {
    base_url: Option<String>,
    api_key: Option<ApiKey>,
    auth: Option<Auth>,
    headers: Vec<(String, String)>,
    query: Vec<(String, String)>,
    timeouts: Timeouts,
    retry: RetryPolicy,
    limits: Limits,
    redirects: Redirects,
    options: P::Options,
}

impl<P: Provider> Default for ProviderBuilder<P> {
    fn default() -> Self {
        ProviderBuilder {
            base_url: None,
            api_key: None,
            auth: None,
            headers: Vec::new(),
            query: Vec::new(),
            timeouts: Timeouts::default(),
            retry: RetryPolicy::default(),
            limits: Limits::default(),
            redirects: Redirects::default(),
            options: P::Options::default(),
        }
    }
}

impl<P: Provider> fmt::Debug for ProviderBuilder<P> {
    /// Header names only: values may be credentials.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let header_names: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("ProviderBuilder")
            // Without user info, query, fragment or the key (some gateways take it in the
            // path): each may hold a credential.
            .field(
                "base_url",
                &self.base_url.as_deref().map(|url| self.shown(url)),
            )
            .field("api_key", &self.api_key)
            .field("auth", &self.auth)
            .field("headers", &header_names)
            .field("query", &shown_query(&self.query, self.api_key.as_ref()))
            .field("timeouts", &self.timeouts)
            .field("retry", &self.retry)
            .field("limits", &self.limits)
            .field("redirects", &self.redirects)
            .field("options", &self.options)
            .finish()
    }
}

impl<P: Provider> ProviderBuilder<P> {
    /// A builder with the provider's defaults.
    pub fn new() -> Self {
        ProviderBuilder::default()
    }

    /// This builder with its provider's own options changed by `change`: how each provider's
    /// option setters are written.
    pub(crate) fn with_options(mut self, change: impl FnOnce(&mut P::Options)) -> Self {
        change(&mut self.options);
        self
    }

    /// A builder keyed from the provider's key variable, with its base-URL variable when set.
    pub fn from_env() -> Result<Self, ProviderError> {
        Ok(Self::new()
            .api_key(required_env(P::DEFAULTS.key_env)?)
            .base_url_from_env())
    }

    /// The base URL from the provider's variable (`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`,
    /// `GEMINI_BASE_URL`, as their SDKs read them) when it is set and not empty; else
    /// unchanged. For a key that comes from elsewhere, with a proxy set for every tool
    /// honoured all the same.
    pub fn base_url_from_env(self) -> Self {
        match optional_env(P::DEFAULTS.base_url_env) {
            Some(base_url) => self.base_url(base_url),
            None => self,
        }
    }

    /// The API key.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(ApiKey::new(key));
        self
    }

    /// How the key is sent (each provider has its default: a bearer token, `x-api-key`, …).
    pub fn auth(mut self, auth: Auth) -> Self {
        self.auth = Some(auth);
        self
    }

    /// The base URL, e.g. a proxy's. A query in it (`?api-version=…`) is sent with every
    /// request, as [`query`](Self::query) sends one.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// A header sent with every request; it replaces a header of the same name set by the
    /// provider. A value that looks like a credential is kept out of `Debug` output.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// A query parameter added to every request's URL (e.g. Azure's `api-version`). A value
    /// that looks like a credential (by its name, its shape, or holding the key; or a `sig`
    /// or `code`)
    /// is kept out of `Debug` output and errors.
    pub fn query(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        let name = name.into();
        self.query.retain(|(existing, _)| *existing != name);
        self.query.push((name, value.into()));
        self
    }

    /// Connect, first-byte, idle and total timeouts.
    pub fn timeouts(mut self, timeouts: Timeouts) -> Self {
        self.timeouts = timeouts;
        self
    }

    /// How failed calls are retried (HTTP 429, 5xx and connection failures).
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Size limits on bodies, events and lines.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Whether redirects are followed (never, by default).
    pub fn redirects(mut self, redirects: Redirects) -> Self {
        self.redirects = redirects;
        self
    }

    /// `url`, a base URL as given, as `Debug` and errors show it: without user info, query or
    /// fragment ([`shown_url`]), and without the key, which a gateway may take in the path.
    fn shown(&self, url: &str) -> String {
        scrub_key(&shown_url(url), self.api_key.as_ref())
    }

    /// Builds the client. Without a key, requests carry no credential (e.g. for a gateway that
    /// adds its own). A header, key or base URL that is not valid is an error naming it.
    pub fn build(self) -> Result<P, ProviderError> {
        let defaults = P::DEFAULTS;
        let base_url = self
            .base_url
            .clone()
            .or_else(|| defaults.base_url.map(str::to_owned))
            .ok_or_else(|| ProviderError::InvalidBaseUrl("(none given)".to_owned()))?;
        let mut url = match reqwest::Url::parse(base_url.trim_end_matches('/')) {
            Ok(url) if matches!(url.scheme(), "http" | "https") => url,
            // The URL as given may hold a password or a key: the error names the rest.
            _ => return Err(ProviderError::InvalidBaseUrl(self.shown(&base_url))),
        };
        let endpoint = endpoint_of(&url);
        // A query written into the base URL (`…/v1?api-version=…`) is sent with every
        // request as one set with `query` is (which wins on a name both give), and kept out
        // of `Debug` and errors alike: left in the URL, the request's path would be joined
        // after it. A fragment is never sent.
        let mut query: Vec<(String, String)> = url
            .query_pairs()
            .filter(|(name, _)| !self.query.iter().any(|(set, _)| set == name))
            .map(|(name, value)| (name.into_owned(), value.into_owned()))
            .collect();
        query.extend(self.query);
        url.set_query(None);
        url.set_fragment(None);
        let base_url = url.as_str().trim_end_matches('/').to_owned();
        let key = self.api_key.as_ref();
        let mut headers = HeaderMap::new();
        // Header values that look like credentials: scrubbed from errors and answers.
        let mut header_secrets = Vec::new();
        let provider_headers = P::headers(&self.options);
        let provider_headers = provider_headers.iter().map(|(n, v)| (*n, v.as_str()));
        let user_headers = self.headers.iter().map(|(n, v)| (n.as_str(), v.as_str()));
        for (name, value) in provider_headers.chain(user_headers) {
            if insert_header(&mut headers, name, value, key)? {
                // The credential in `Bearer <token>` is echoed alone as often as whole. A
                // short value is no secret worth masking everywhere it appears.
                let (_, token) = value.split_once(' ').unwrap_or_default();
                header_secrets.extend(
                    [value, token.trim()]
                        .into_iter()
                        .filter(|secret| secret.len() >= MIN_ECHOED_SECRET_LEN)
                        .map(str::to_owned),
                );
            }
        }
        let auth = self.auth.unwrap_or_else(defaults.auth);
        let credential = match (key, auth) {
            (Some(key), Auth::Bearer) => Some((
                AUTHORIZATION,
                sensitive_value(AUTHORIZATION.as_str(), &format!("Bearer {}", key.expose()))?,
            )),
            (Some(key), Auth::Header(name)) => {
                Some((header_name(&name)?, sensitive_value(&name, key.expose())?))
            }
            (None, _) | (Some(_), Auth::None) => None,
        };
        let http = reqwest::Client::builder()
            .connect_timeout(self.timeouts.connect)
            .default_headers(headers)
            .redirect(redirect_policy(self.redirects))
            .build()
            .map_err(|error| ProviderError::Client(error.to_string()))?;
        // Query values that look like credentials: kept out of `Debug`, scrubbed from errors
        // (a transport error quotes the URL).
        let other_secrets: Vec<String> = query
            .iter()
            .filter(|(name, value)| {
                !value.is_empty() && secret_query(name, value, self.api_key.as_ref())
            })
            .flat_map(|(_, value)| [value.clone(), url_encoded(value)])
            .chain(header_secrets)
            .collect();
        let echoes = Secrets::new(
            self.api_key
                .iter()
                .map(|key| key.expose().to_owned())
                .chain(other_secrets.iter().cloned()),
        )
        .map(Arc::new);
        let mut client = HttpClient {
            echoes,
            http,
            base_url,
            endpoint: String::new(),
            query,
            other_secrets,
            credential,
            api_key: self.api_key,
            timeouts: self.timeouts,
            retry: self.retry,
            limits: self.limits,
        };
        // A key that is part of the path (some gateways take one there) is no endpoint.
        client.endpoint = client.scrub(&endpoint);
        Ok(P::from_client(Arc::new(client), self.options))
    }
}

/// Same-origin redirects within the count are followed; anything else stops at the redirect,
/// which the client reports as an error. reqwest drops `Authorization` on a cross-origin
/// redirect but not `x-api-key` and the like, so cross-origin ones are never followed.
fn redirect_policy(redirects: Redirects) -> redirect::Policy {
    match redirects {
        Redirects::None => redirect::Policy::none(),
        Redirects::SameOrigin { max } => redirect::Policy::custom(move |attempt| {
            let same_origin = attempt
                .previous()
                .first()
                .is_some_and(|first| first.origin() == attempt.url().origin());
            if same_origin && attempt.previous().len() <= max {
                attempt.follow()
            } else {
                attempt.stop()
            }
        }),
    }
}

fn header_name(name: &str) -> Result<HeaderName, ProviderError> {
    HeaderName::from_bytes(name.as_bytes()).map_err(|_| ProviderError::InvalidHeader(name.into()))
}

fn sensitive_value(name: &str, value: &str) -> Result<HeaderValue, ProviderError> {
    let mut value =
        HeaderValue::from_str(value).map_err(|_| ProviderError::InvalidHeader(name.into()))?;
    value.set_sensitive(true);
    Ok(value)
}

/// Adds a header, marked sensitive when its name or value looks like a credential; whether it
/// does.
fn insert_header(
    headers: &mut HeaderMap,
    name: &str,
    value: &str,
    key: Option<&ApiKey>,
) -> Result<bool, ProviderError> {
    let name = header_name(name)?;
    let mut header =
        HeaderValue::from_str(value).map_err(|_| ProviderError::InvalidHeader(name.to_string()))?;
    let credential = looks_like_credential(name.as_str(), value, key);
    header.set_sensitive(credential);
    headers.insert(name, header);
    Ok(credential)
}

/// Reads a required environment variable.
pub(crate) fn required_env(name: &'static str) -> Result<String, ProviderError> {
    match std::env::var(name) {
        Ok(value) if !value.trim().is_empty() => Ok(value),
        Ok(_) | Err(std::env::VarError::NotUnicode(_)) => Err(ProviderError::InvalidEnv(name)),
        Err(std::env::VarError::NotPresent) => Err(ProviderError::MissingEnv(name)),
    }
}

/// Reads an optional environment variable (unset or empty means absent).
pub(crate) fn optional_env(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .filter(|value| !value.trim().is_empty())
}
