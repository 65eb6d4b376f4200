//! Which model a run talks to, over which API, with which key: [`Model`], and the named tiers
//! a run can move between ([`Tiers`]).

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use crate::Secret;
use crate::llm::Target;

/// A provider's wire format, pinned to one API version.
///
/// | API | endpoint | version |
/// | --- | --- | --- |
/// | [`OpenAiChat`](Api::OpenAiChat) | `POST {base}/chat/completions` | OpenAI REST API v1 (`https://api.openai.com/v1`) |
/// | [`OpenAiResponses`](Api::OpenAiResponses) | `POST {base}/responses` | OpenAI REST API v1, `store: false` |
/// | [`Anthropic`](Api::Anthropic) | `POST {base}/v1/messages` | `anthropic-version: 2023-06-01` |
/// | [`Gemini`](Api::Gemini) | `POST {base}/v1beta/models/{model}:generateContent` | Gemini API `v1beta` |
/// | [`OpenAiCompatible`](Api::OpenAiCompatible) | `POST {base}/chat/completions` | as OpenAI Chat Completions, non-strict specs, key optional (llama.cpp server, vLLM, Ollama) |
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Api {
    /// OpenAI Chat Completions.
    OpenAiChat,
    /// The OpenAI Responses API.
    OpenAiResponses,
    /// Anthropic Messages.
    Anthropic,
    /// Gemini `generateContent`.
    Gemini,
    /// A server that speaks OpenAI Chat Completions at a base URL of its own.
    OpenAiCompatible,
}

impl Api {
    /// Every API, in the order `--provider` lists them.
    pub const ALL: [Api; 5] = [
        Api::OpenAiChat,
        Api::OpenAiResponses,
        Api::Anthropic,
        Api::Gemini,
        Api::OpenAiCompatible,
    ];

    /// The name used in configuration and `--provider`: `openai`, `openai-responses`,
    /// `anthropic`, `gemini`, `openai-compatible`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Api::OpenAiChat => "openai",
            Api::OpenAiResponses => "openai-responses",
            Api::Anthropic => "anthropic",
            Api::Gemini => "gemini",
            Api::OpenAiCompatible => "openai-compatible",
        }
    }

    /// The provider as the GenAI semantic conventions name it (`gen_ai.provider.name`):
    /// `openai` (an OpenAI-compatible server included), `anthropic`, `gcp.gemini`.
    pub(crate) fn provider_name(self) -> &'static str {
        match self {
            Api::OpenAiChat | Api::OpenAiResponses | Api::OpenAiCompatible => "openai",
            Api::Anthropic => "anthropic",
            Api::Gemini => "gcp.gemini",
        }
    }

    /// The API called `name` (see [`name`](Self::name)).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Api> {
        Api::ALL.into_iter().find(|a| a.name() == name)
    }

    /// The form its tool specs take.
    #[must_use]
    pub fn target(self) -> Target {
        match self {
            Api::OpenAiChat | Api::OpenAiCompatible => Target::OpenAiChat,
            Api::OpenAiResponses => Target::OpenAiResponses,
            Api::Anthropic => Target::Anthropic,
            Api::Gemini => Target::Gemini,
        }
    }

    /// The environment variables its official SDK reads for the key, first found first: for
    /// OpenAI `OPENAI_API_KEY`; for Anthropic `ANTHROPIC_API_KEY` (sent as `x-api-key`), then
    /// `ANTHROPIC_AUTH_TOKEN` (sent as a bearer token); for Gemini `GOOGLE_API_KEY`, then
    /// `GEMINI_API_KEY`.
    #[must_use]
    pub fn key_vars(self) -> &'static [&'static str] {
        match self {
            Api::OpenAiChat | Api::OpenAiResponses | Api::OpenAiCompatible => &["OPENAI_API_KEY"],
            Api::Anthropic => &["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"],
            Api::Gemini => &["GOOGLE_API_KEY", "GEMINI_API_KEY"],
        }
    }

    /// The environment variable its official SDK reads for the base URL: `OPENAI_BASE_URL`,
    /// `ANTHROPIC_BASE_URL`, `GOOGLE_GEMINI_BASE_URL`.
    #[must_use]
    pub fn base_url_var(self) -> &'static str {
        match self {
            Api::OpenAiChat | Api::OpenAiResponses | Api::OpenAiCompatible => "OPENAI_BASE_URL",
            Api::Anthropic => "ANTHROPIC_BASE_URL",
            Api::Gemini => "GOOGLE_GEMINI_BASE_URL",
        }
    }

    /// The provider's own base URL; `None` for an OpenAI-compatible server, which has none.
    #[must_use]
    pub fn default_base_url(self) -> Option<&'static str> {
        match self {
            Api::OpenAiChat | Api::OpenAiResponses => Some("https://api.openai.com/v1"),
            Api::Anthropic => Some("https://api.anthropic.com"),
            Api::Gemini => Some("https://generativelanguage.googleapis.com"),
            Api::OpenAiCompatible => None,
        }
    }
}

impl fmt::Display for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a [`Model`] could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModelError {
    /// No API key: neither configured nor in the environment variable named.
    MissingKey {
        /// The API.
        api: Api,
        /// The environment variables that were read (`A or B`).
        env: String,
    },
    /// An OpenAI-compatible server needs a base URL.
    MissingBaseUrl {
        /// The environment variable that was read.
        env: String,
    },
    /// `provider:model` named no known provider, or no model.
    BadReference(String),
    /// No provider was named and none has a key in the environment.
    NoProvider,
    /// A provider without a model's name.
    NoModel(Api),
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::MissingKey { api, env } => write!(
                f,
                "no API key for `{api}`: set {env} in the environment (or name another variable with `api_key_env`)"
            ),
            ModelError::MissingBaseUrl { env } => write!(
                f,
                "an OpenAI-compatible server needs a base URL: set {env} (e.g. http://127.0.0.1:8080/v1) or `base_url`"
            ),
            ModelError::NoProvider => f.write_str(
                "no model provider is configured: set OPENAI_API_KEY, ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) or GOOGLE_API_KEY (or GEMINI_API_KEY) in the environment, or name a provider (--provider, or `provider` under [agent] in the configuration)",
            ),
            ModelError::NoModel(api) => write!(
                f,
                "`{api}` has no default model: name one with --model (or `model` under [agent])"
            ),
            ModelError::BadReference(r) => write!(
                f,
                "`{r}` is not `provider:model` with a provider among {}",
                Api::ALL.map(Api::name).join(", ")
            ),
        }
    }
}

impl std::error::Error for ModelError {}

/// A model at a provider: the API, the model's name, where to send requests and with which
/// key. Every request the agent makes follows it; swapping provider changes this value only.
///
/// ```
/// use tool_runtime::agent::{Api, Model};
/// let env = |name: &str| (name == "ANTHROPIC_API_KEY").then(|| "sk-ant-test".to_owned());
/// let model = Model::from_lookup(Api::Anthropic, "claude-sonnet-4-5", None, env).unwrap();
/// assert_eq!(model.base_url(), "https://api.anthropic.com");
/// assert!(!format!("{model:?}").contains("sk-ant-test"));
/// ```
#[derive(Clone)]
pub struct Model {
    pub(crate) api: Api,
    pub(crate) name: String,
    pub(crate) base_url: String,
    pub(crate) api_key: Option<Secret<String>>,
    /// The key goes as `Authorization: Bearer` where the API has another header for it
    /// (Anthropic's `ANTHROPIC_AUTH_TOKEN`).
    pub(crate) bearer: bool,
    pub(crate) timeout: Duration,
    pub(crate) max_retries: u32,
    pub(crate) retry_base: Duration,
    pub(crate) stream: bool,
    pub(crate) max_output_tokens: u32,
}

impl Model {
    /// `name` at `api`, with the key and base URL from the environment variables the
    /// provider's own SDK reads, in its order ([`Api::key_vars`], [`Api::base_url_var`]):
    ///
    /// | API | key | base URL | as the SDK |
    /// | --- | --- | --- | --- |
    /// | OpenAI (all three) | `OPENAI_API_KEY` | `OPENAI_BASE_URL` | `openai` |
    /// | Anthropic | `ANTHROPIC_API_KEY`, else `ANTHROPIC_AUTH_TOKEN` (a bearer token) | `ANTHROPIC_BASE_URL` | `anthropic` |
    /// | Gemini | `GOOGLE_API_KEY`, else `GEMINI_API_KEY` | `GOOGLE_GEMINI_BASE_URL` | `google-genai` |
    ///
    /// Empty variables count as unset. `key_env` names another variable for the key.
    pub fn from_env(api: Api, name: &str, key_env: Option<&str>) -> Result<Model, ModelError> {
        Self::from_lookup(api, name, key_env, |var| {
            std::env::var(var).ok().filter(|v| !v.is_empty())
        })
    }

    /// [`from_env`](Self::from_env) with the environment read through `lookup`.
    pub fn from_lookup(
        api: Api,
        name: &str,
        key_env: Option<&str>,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Model, ModelError> {
        let url_env = api.base_url_var();
        let (api_key, bearer) = match key_env {
            Some(var) => (lookup(var), false),
            None => api
                .key_vars()
                .iter()
                .find_map(|var| lookup(var).map(|key| (key, *var == "ANTHROPIC_AUTH_TOKEN")))
                .map_or((None, false), |(key, bearer)| (Some(key), bearer)),
        };
        if api_key.is_none() && api != Api::OpenAiCompatible {
            return Err(ModelError::MissingKey {
                api,
                env: key_env.map_or_else(|| api.key_vars().join(" or "), str::to_owned),
            });
        }
        let base_url = match (lookup(url_env), api.default_base_url()) {
            (Some(url), _) => url,
            (None, Some(url)) => url.to_owned(),
            (None, None) => {
                return Err(ModelError::MissingBaseUrl {
                    env: url_env.to_owned(),
                });
            }
        };
        let mut model = Model::new(api, name, base_url, api_key.map(Secret::new));
        model.bearer = bearer;
        Ok(model)
    }

    /// `name` at `api`, served at `base_url`, with `api_key` (none for a local server).
    #[must_use]
    pub fn new(
        api: Api,
        name: impl Into<String>,
        base_url: impl Into<String>,
        api_key: Option<Secret<String>>,
    ) -> Model {
        Model {
            api,
            name: name.into(),
            base_url: base_url.into().trim_end_matches('/').to_owned(),
            api_key,
            bearer: false,
            timeout: Duration::from_secs(120),
            max_retries: 2,
            retry_base: Duration::from_millis(500),
            stream: false,
            max_output_tokens: 4096,
        }
    }

    /// The API.
    #[must_use]
    pub fn api(&self) -> Api {
        self.api
    }

    /// The model's name at the provider.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where requests go.
    #[must_use]
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Sends requests to `url` instead (a proxy, a gateway, a local server).
    #[must_use]
    pub fn with_base_url(mut self, url: impl Into<String>) -> Self {
        url.into()
            .trim_end_matches('/')
            .clone_into(&mut self.base_url);
        self
    }

    /// How long one request may take, streaming included (default 120 s).
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How often a request answered 429 or 5xx (or not answered) is retried (default 2), and
    /// the first wait (default 500 ms, doubling, with jitter; a `Retry-After` answer decides
    /// instead).
    #[must_use]
    pub fn with_retries(mut self, max_retries: u32, first_wait: Duration) -> Self {
        self.max_retries = max_retries;
        self.retry_base = first_wait;
        self
    }

    /// Streams replies, on every API (server-sent events: Chat Completions chunks, Responses
    /// events, Anthropic message events, Gemini `streamGenerateContent`): text arrives as
    /// [`Event::TextDelta`](super::Event::TextDelta)s while the model writes.
    #[must_use]
    pub fn with_stream(mut self, stream: bool) -> Self {
        self.stream = stream;
        self
    }

    /// The most tokens one reply may have (default 4,096; Anthropic requires a bound).
    #[must_use]
    pub fn with_max_output_tokens(mut self, tokens: u32) -> Self {
        self.max_output_tokens = tokens;
        self
    }
}

impl fmt::Debug for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Model")
            .field("api", &self.api)
            .field("name", &self.name)
            .field("base_url", &self.base_url)
            .field(
                "api_key",
                &self.api_key.as_ref().map(|_| crate::tool::secret::REDACTED),
            )
            .field("stream", &self.stream)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.api, self.name)
    }
}

/// The provider to use when none is named: the first of OpenAI, Anthropic and Gemini whose key
/// `lookup` finds, then an OpenAI-compatible server if `OPENAI_BASE_URL` is set.
pub fn detect_api(lookup: impl Fn(&str) -> Option<String>) -> Result<Api, ModelError> {
    [Api::OpenAiChat, Api::Anthropic, Api::Gemini]
        .into_iter()
        .find(|api| api.key_vars().iter().any(|var| lookup(var).is_some()))
        .or_else(|| lookup("OPENAI_BASE_URL").map(|_| Api::OpenAiCompatible))
        .ok_or(ModelError::NoProvider)
}

/// A sensible current model of each provider, for configurations that name none.
pub fn default_model(api: Api) -> Result<&'static str, ModelError> {
    match api {
        Api::OpenAiChat | Api::OpenAiResponses => Ok("gpt-4.1-mini"),
        Api::Anthropic => Ok("claude-sonnet-4-5"),
        Api::Gemini => Ok("gemini-2.5-flash"),
        Api::OpenAiCompatible => Err(ModelError::NoModel(api)),
    }
}

/// Parses `provider:model` (`anthropic:claude-haiku-4-5`) into its API and model name.
pub fn parse_reference(reference: &str) -> Result<(Api, &str), ModelError> {
    reference
        .split_once(':')
        .and_then(|(api, model)| Some((Api::from_name(api)?, model)))
        .filter(|(_, model)| !model.is_empty())
        .ok_or_else(|| ModelError::BadReference(reference.to_owned()))
}

/// Named tiers of models (`fast`, `standard`, `expert`), one of them the default. With more than
/// one tier, a run offers the model a `switch_model` tool that moves the rest of the run to
/// another tier; a host sets a run's first tier with [`Run::tier`](super::Run::tier).
#[derive(Debug, Clone)]
pub struct Tiers {
    pub(crate) models: BTreeMap<String, Model>,
    pub(crate) default: String,
}

impl Tiers {
    /// One tier, `name`, holding `model`; the default.
    #[must_use]
    pub fn new(name: impl Into<String>, model: Model) -> Tiers {
        let name = name.into();
        Tiers {
            models: BTreeMap::from([(name.clone(), model)]),
            default: name,
        }
    }

    /// Adds (or replaces) tier `name`.
    #[must_use]
    pub fn tier(mut self, name: impl Into<String>, model: Model) -> Tiers {
        self.models.insert(name.into(), model);
        self
    }

    /// Makes `name` the default tier. Unknown names are ignored.
    #[must_use]
    pub fn default_tier(mut self, name: &str) -> Tiers {
        if self.models.contains_key(name) {
            name.clone_into(&mut self.default);
        }
        self
    }

    /// The tiers' names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.models.keys().map(String::as_str)
    }

    /// The model of tier `name`.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&Model> {
        self.models.get(name)
    }

    /// The default tier's name.
    #[must_use]
    pub fn default_name(&self) -> &str {
        &self.default
    }
}

impl From<Model> for Tiers {
    fn from(model: Model) -> Tiers {
        Tiers::new("default", model)
    }
}
