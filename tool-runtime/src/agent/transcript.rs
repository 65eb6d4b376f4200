//! What a run said and did: the conversation in a provider-neutral form, every tool call with
//! its envelope, usage and timings; and the events a run emits as it goes.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::model::Api;

/// One message of a conversation, independent of any provider's format: each adapter writes
/// it the way its API wants (Anthropic's tool results as `tool_result` blocks in a user
/// message, Gemini's as `functionResponse` parts, ...). A conversation can therefore continue
/// on another provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Message {
    /// What the user said.
    User {
        /// The text.
        text: String,
    },
    /// What the model answered: text, tool calls, or both.
    Assistant {
        /// The text (may be empty when the model only calls tools).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        text: String,
        /// The tool calls, in the model's order.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
        /// Which model answered (`provider:model`).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        model: String,
        /// The reply in the provider's own form, sent back as is while the conversation stays
        /// on that API (Gemini's thought signatures, Responses' reasoning items).
        #[serde(skip)]
        native: Option<(Api, Value)>,
    },
    /// The results of the previous assistant message's tool calls, one per call, in order.
    Tool {
        /// The results.
        results: Vec<ToolResult>,
    },
}

impl Message {
    /// A user message.
    #[must_use]
    pub fn user(text: impl Into<String>) -> Message {
        Message::User { text: text.into() }
    }
}

/// A tool call as the model made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call's id (the provider's, or made up for providers without ids).
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as the model wrote them: JSON text, possibly not JSON at all.
    pub arguments: String,
}

/// The outcome of one tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The id of the call it answers.
    pub call_id: String,
    /// The tool's name.
    pub name: String,
    /// Whether the call failed (the model is told so).
    pub is_error: bool,
    /// What the model is sent: the tool's result, or the error (`type`, `message`, `details`).
    pub content: Value,
    /// The pipeline's envelope (`ok`, `result` or `error`, `meta` with the request id and
    /// duration), as every front end sees it. `null` for calls the pipeline never saw (a
    /// budget ended the run first, or `switch_model`).
    #[serde(default)]
    pub envelope: Value,
    /// How long the call took, confirmation included.
    #[serde(rename = "duration_ms", with = "millis")]
    pub duration: Duration,
}

/// Tokens used, as the provider counts them, every kind included: a budget applies to
/// [`total`](Self::total). The last three fields say how much of the first two was of a
/// special kind; each provider reports them its own way and this counts them alike.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens read: the prompt, the conversation and the tool specs, those read from the
    /// provider's prompt cache and those written to it included.
    pub input_tokens: u64,
    /// Tokens written, reasoning (thinking) included.
    pub output_tokens: u64,
    /// Of `input_tokens`, those read from the prompt cache (OpenAI `cached_tokens`, Anthropic
    /// `cache_read_input_tokens`, Gemini `cachedContentTokenCount`).
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Of `input_tokens`, those written to the prompt cache (OpenAI `cache_write_tokens`,
    /// Anthropic `cache_creation_input_tokens`).
    #[serde(default)]
    pub cache_write_tokens: u64,
    /// Of `output_tokens`, those spent reasoning (OpenAI `reasoning_tokens`, Gemini
    /// `thoughtsTokenCount`; Anthropic counts thinking in `output_tokens` without a breakdown).
    #[serde(default)]
    pub reasoning_tokens: u64,
}

impl Usage {
    /// Both together.
    #[must_use]
    pub fn total(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }

    pub(crate) fn add(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.reasoning_tokens += other.reasoning_tokens;
    }
}

/// A model's refusal to answer: its own refusal, or a provider's safety stop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    /// What the model said, when it said anything (an OpenAI `refusal`, an Anthropic reply's
    /// text before it stopped); empty after a safety stop with no content.
    pub text: String,
    /// The provider's word for it: `refusal` (OpenAI, Anthropic), `content_filter` (OpenAI),
    /// or Gemini's `finishReason` (`SAFETY`, `PROHIBITED_CONTENT`, `RECITATION`, ...) or, for a
    /// blocked prompt, its `blockReason`.
    pub reason: String,
    /// Whether the prompt was blocked (Gemini's `promptFeedback`) before any reply.
    #[serde(default)]
    pub prompt_blocked: bool,
    /// The safety ratings that came with it (Gemini), as the provider sent them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safety_ratings: Option<serde_json::Value>,
}

impl Refusal {
    pub(crate) fn new(text: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            reason: reason.into(),
            prompt_blocked: false,
            safety_ratings: None,
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = if self.prompt_blocked {
            "the provider blocked the prompt"
        } else {
            "the model refused"
        };
        write!(f, "{what} ({})", self.reason)?;
        if !self.text.is_empty() {
            write!(f, ": {}", self.text)?;
        }
        let rated: Vec<String> = self
            .safety_ratings
            .iter()
            .flat_map(|r| r.as_array().into_iter().flatten())
            .filter(|r| {
                r.get("blocked").and_then(serde_json::Value::as_bool) == Some(true)
                    || r.get("probability")
                        .and_then(serde_json::Value::as_str)
                        .is_some_and(|p| p == "HIGH" || p == "MEDIUM")
            })
            .filter_map(|r| {
                let category = r.get("category")?.as_str()?;
                let probability = r
                    .get("probability")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("blocked");
                Some(format!("{category} {probability}"))
            })
            .collect();
        if !rated.is_empty() {
            write!(f, " [{}]", rated.join(", "))?;
        }
        Ok(())
    }
}

/// One model turn: which model, how long the request took, what it used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    /// `provider:model`.
    pub model: String,
    /// From sending the request to the whole reply read, retries included.
    #[serde(rename = "duration_ms", with = "millis")]
    pub duration: Duration,
    /// Tokens used by this turn.
    pub usage: Usage,
    /// Requests retried (429, 5xx, no answer).
    pub retries: u32,
}

/// Everything a run said and did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Transcript {
    /// The conversation, the history given to the run included.
    pub messages: Vec<Message>,
    /// One entry per model turn.
    pub turns: Vec<Turn>,
    /// Tokens used by the whole run.
    pub usage: Usage,
    /// Tool calls made (every call the model asked for, run or not).
    pub tool_calls: u32,
    /// From start to end.
    #[serde(rename = "elapsed_ms", with = "millis")]
    pub elapsed: Duration,
}

impl Transcript {
    /// Every tool result of the run, in order.
    pub fn results(&self) -> impl Iterator<Item = &ToolResult> {
        self.messages.iter().flat_map(|m| match m {
            Message::Tool { results } => results.as_slice(),
            _ => &[],
        })
    }
}

/// What a run reports as it goes, for front ends that show progress (a terminal, a browser
/// over server-sent events). Serialised with a `type` tag: `{"type": "text_delta", ...}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// A model turn starts.
    TurnStarted {
        /// `provider:model`.
        model: String,
    },
    /// Text the model wrote (the whole text of a reply when the API does not stream).
    TextDelta {
        /// The new text.
        text: String,
    },
    /// A tool call is about to run.
    ToolCallStarted {
        /// The call's id.
        id: String,
        /// The tool.
        name: String,
        /// The arguments as the model wrote them.
        arguments: String,
    },
    /// A tool call ended.
    ToolCallFinished {
        /// The outcome.
        result: ToolResult,
    },
    /// A destructive call waits for the host's answer.
    ConfirmationRequested {
        /// The call's id.
        id: String,
        /// The question put to the user.
        question: String,
    },
    /// A model turn ended; what it used.
    Usage {
        /// This turn's tokens.
        turn: Usage,
        /// The run's tokens so far.
        total: Usage,
    },
    /// The model refused, or the provider stopped the reply for safety; the run ends (its
    /// `finished` event follows, with stop `refused`).
    Refused {
        /// What, and why.
        refusal: Refusal,
    },
    /// The run moved to another tier.
    ModelSwitched {
        /// The tier.
        tier: String,
        /// `provider:model`.
        model: String,
    },
    /// The run ended.
    Finished {
        /// The final answer, if the model gave one.
        answer: Option<String>,
        /// Why the run ended: `answered`; `empty_answer` when the model's last reply had no
        /// text and no tool call; or the error's kind (`refused`, `max_tokens`, ...).
        stop: String,
        /// The error's message when it did not end with an answer.
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// The run's tokens.
        usage: Usage,
    },
}

mod millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64() * 1000.0)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let ms = f64::deserialize(d)?;
        Ok(Duration::from_secs_f64(ms.max(0.0) / 1000.0))
    }
}
