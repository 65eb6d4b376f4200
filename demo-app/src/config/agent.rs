//! `[agent]`: which model, how runs are bounded.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde::de::{Deserializer, Error};
use tool_runtime::Registry;
use tool_runtime::agent::{
    Agent, AgentBuilder, Api, Budgets, Model, ModelError, Tiers, default_model, detect_api,
    parse_reference,
};
use tool_runtime::app::AgentFlags;

use super::de;

/// `[agent]`. Keys and base URLs come from the environment variables the providers' SDKs read
/// (`tool_runtime::agent::Api::key_vars` and `base_url_var`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentConfig {
    /// `openai`, `openai-responses`, `anthropic`, `gemini` or `openai-compatible`; default: the
    /// first provider with a key in the environment.
    #[serde(deserialize_with = "de::api")]
    pub provider: Option<Api>,
    /// The model; default: the provider's current general model.
    pub model: Option<String>,
    /// Overrides the base URL from the environment.
    pub base_url: Option<String>,
    /// The environment variable holding the key, if not the provider's usual one.
    pub api_key_env: Option<String>,
    /// The system prompt.
    pub system: String,
    /// Stream replies (Chat Completions and OpenAI-compatible servers).
    pub stream: bool,
    /// Tool calls of one reply run at once.
    pub parallel: Option<usize>,
    /// Named tiers, `name = "provider:model"`; with two or more the model may switch.
    #[serde(deserialize_with = "tiers")]
    pub tiers: BTreeMap<String, ModelRef>,
    /// The tier runs start on (default: the first).
    pub default_tier: Option<String>,
    /// Where no one can be asked (no terminal, the server), run destructive calls the policy
    /// lets through without asking. Off by default: they are not run, and the model is told
    /// they need a confirmation no one can give (`confirmation_required`).
    pub auto_confirm: bool,
    /// Budgets of every run.
    pub budgets: AgentBudgets,
}

/// `[agent.budgets]`; what is not given keeps [`Budgets::default`].
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentBudgets {
    /// Model turns per run.
    pub max_turns: Option<u32>,
    /// Tool calls per run.
    pub max_tool_calls: Option<u32>,
    /// Tokens per run.
    pub max_tokens: Option<u64>,
    /// Wall-clock time per run: `"2m"`, `"90s"`.
    #[serde(deserialize_with = "de::some_duration")]
    pub deadline: Option<Duration>,
}

/// A model named `provider:model` (`anthropic:claude-haiku-4-5`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRef {
    /// The provider's API.
    pub api: Api,
    /// The model.
    pub model: String,
}

impl AgentBudgets {
    fn budgets(&self) -> Budgets {
        let mut budgets = Budgets::default()
            .max_tokens(self.max_tokens)
            .deadline(self.deadline);
        if let Some(n) = self.max_turns {
            budgets = budgets.max_turns(n);
        }
        if let Some(n) = self.max_tool_calls {
            budgets = budgets.max_tool_calls(n);
        }
        budgets
    }
}

impl AgentConfig {
    /// The agent these settings describe over `registry`, with `flags` (`--provider`,
    /// `--model`) over the file, and keys and base URLs read through `env`.
    pub fn builder(
        &self,
        flags: &AgentFlags,
        registry: Arc<Registry>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<AgentBuilder, ModelError> {
        let api = match flags.provider.or(self.provider) {
            Some(api) => api,
            None => detect_api(&env)?,
        };
        let name = match (&flags.model, &self.model) {
            (Some(m), _) => m.clone(),
            // The configured model belongs to the configured provider.
            (None, Some(m)) if flags.provider.is_none() => m.clone(),
            _ => default_model(api)?.to_owned(),
        };
        let mut main = Model::from_lookup(api, &name, self.api_key_env.as_deref(), &env)?
            .with_stream(self.stream);
        if let Some(url) = &self.base_url {
            main = main.with_base_url(url.clone());
        }
        let tiers = if self.tiers.is_empty() {
            Tiers::new("default", main)
        } else {
            let first = self
                .default_tier
                .clone()
                .unwrap_or_else(|| self.tiers.keys().next().cloned().unwrap_or_default());
            let mut tiers = Tiers::new(first.clone(), main);
            for (tier, reference) in &self.tiers {
                if *tier == first && (flags.provider.is_some() || flags.model.is_some()) {
                    continue;
                }
                let model = Model::from_lookup(reference.api, &reference.model, None, &env)?;
                tiers = tiers.tier(tier.clone(), model);
            }
            tiers.default_tier(&first)
        };
        let mut builder = Agent::builder(registry, tiers)
            .name("demo-app")
            .budgets(self.budgets.budgets())
            .system(self.system.clone());
        if let Some(n) = self.parallel {
            builder = builder.parallel(n);
        }
        if self.auto_confirm {
            builder = builder.confirm(|_| async { true });
        }
        Ok(builder)
    }
}

/// `name = "provider:model"` per tier.
fn tiers<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, ModelRef>, D::Error> {
    let tiers = BTreeMap::<String, String>::deserialize(d)?;
    let read = |(tier, reference): (String, String)| {
        let (api, model) =
            parse_reference(&reference).map_err(|e| D::Error::custom(format!("{tier}: {e}")))?;
        let model = model.to_owned();
        Ok((tier, ModelRef { api, model }))
    };
    tiers.into_iter().map(read).collect()
}
