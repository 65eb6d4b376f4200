//! Confirmation of destructive calls, decided in the pipeline for every front end alike.
//!
//! A call of a tool annotated `destructive` runs only when its caller confirmed it:
//!
//! - **up front**, for callers that mean it: [`Caller::confirm`](crate::Caller::confirm)
//!   (`--yes` on the CLI, `"confirm": true` over HTTP);
//! - **with a token**: a call without confirmation ends as `confirmation_required`, and its
//!   error carries a [`Confirmation`] ([`ToolError::confirmation`]): what would happen and a
//!   token to send back ([`Caller::confirmation`](crate::Caller::confirmation)) once the user
//!   agrees. Over HTTP the same is the error's `details`:
//!
//! ```json
//! {"type": "confirmation_required",
//!  "message": "`device_revoke` is destructive and was not run: it would revoke a device with {\"device_id\":\"dev_1\"}. Revoke device dev_1? Confirm to run it.",
//!  "details": {"tool": "device_revoke", "arguments": {"device_id": "dev_1"},
//!              "question": "Revoke device dev_1?", "preview": {...},
//!              "token": "c1-…", "expires_in": 300}}
//! ```
//!
//! `preview` is the tool's own dry-run result, for tools that support dry runs. Its code runs
//! as a call's does: charged to the rate limit, under the concurrency limit, and announced to
//! the audit first (an intent marked `dry_run`), so unconfirmed calls cannot run tool code
//! unlimited or unrecorded. The token is
//! bound to the tool, the arguments and the principal, expires after five minutes (unless the
//! registry sets another lifetime) and works once: a "yes" confirms exactly the call that was
//! asked about, for the caller it was asked of.
//!
//! Front ends that can put the question to a person implement [`Ask`](crate::tool::Ask) (the CLI on a terminal,
//! MCP through elicitation, the agent through its host's callback) and give it to their caller
//! ([`Caller::asking`](crate::Caller::asking)): the pipeline asks, redeems the token on a
//! yes and says what happens when no one can be asked. HTTP answers `409` and leaves the asking
//! to its client. Each attempt and each confirmed call is one pipeline run with one outcome
//! record in the audit, after an intent where tool code runs (the preview's dry run, the
//! confirmed call).
#![doc = include_str!("../../docs/confirm.md")]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use futures_util::future::BoxFuture;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::tool::definition::ToolMeta;
use crate::tool::error::{ErrorKind, ToolError};
use crate::tool::hex;

use crate::tool::error::Confirmation;
use tool_grammar::QuestionPiece;

/// What a confirmation token is bound to: the call it confirms, for the caller it was asked
/// of. A token redeemed for another tool, other arguments or another principal confirms
/// nothing.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct TokenBinding {
    /// The tool's name.
    pub tool: String,
    /// The SHA-256 of the call's arguments, in lowercase hex.
    pub arguments: String,
    /// The caller's principal; `None` for an anonymous caller.
    pub principal: Option<String>,
}

/// Where the confirmation tokens issued and not yet redeemed live: in this process by
/// default, or in a store every replica shares (Redis, with the `redis` feature), so that a
/// token issued by one replica is redeemed by any other, once.
pub trait ConfirmationStore: Send + Sync + 'static {
    /// Keeps `binding` under `token` for `ttl` of wall-clock time.
    fn put<'a>(
        &'a self,
        token: &'a str,
        binding: &'a TokenBinding,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), ToolError>>;

    /// Takes the binding of `token` out of the store: any attempt to redeem a token uses it
    /// up, whether or not it then matches the call. `None` when the token is unknown or has
    /// expired.
    fn take<'a>(&'a self, token: &'a str)
    -> BoxFuture<'a, Result<Option<TokenBinding>, ToolError>>;
}

/// How long a confirmation token stays valid unless the registry says otherwise
/// ([`RegistryBuilder::confirmation_lifetime`](crate::registry::RegistryBuilder::confirmation_lifetime)).
pub const TOKEN_LIFETIME: Duration = Duration::from_secs(300);

/// The most unanswered questions a [`MemoryConfirmationStore`] keeps at once; past it the
/// oldest are forgotten (their tokens then fail, and the caller is asked again).
const MAX_PENDING: usize = 4096;

/// The default [`ConfirmationStore`]: the tokens issued and not yet redeemed, in this
/// process. Each expires at a wall-clock time; a token is taken out on any attempt to redeem
/// it; at most 4096 are kept, the oldest forgotten first (their tokens then fail, and the
/// caller is asked again).
///
/// Behind a load balancer, each replica that uses it knows only its own tokens: a yes sent to
/// another replica is asked again. Give every replica's registry one shared store
/// ([`RegistryBuilder::confirmation_store`](crate::registry::RegistryBuilder::confirmation_store))
/// for a token issued by one to be redeemed by any other, once.
#[derive(Debug)]
pub struct MemoryConfirmationStore {
    pending: Mutex<HashMap<String, Pending>>,
    max_pending: usize,
}

#[derive(Debug)]
struct Pending {
    binding: TokenBinding,
    expires: SystemTime,
}

impl Default for MemoryConfirmationStore {
    fn default() -> Self {
        Self {
            pending: Mutex::default(),
            max_pending: MAX_PENDING,
        }
    }
}

impl MemoryConfirmationStore {
    /// An empty store.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps at most `max` unanswered tokens (default 4096; at least one), forgetting the
    /// oldest first.
    #[must_use]
    pub fn max_pending(mut self, max: usize) -> Self {
        self.max_pending = max.max(1);
        self
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Pending>> {
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl ConfirmationStore for MemoryConfirmationStore {
    fn put<'a>(
        &'a self,
        token: &'a str,
        binding: &'a TokenBinding,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), ToolError>> {
        let now = SystemTime::now();
        let mut pending = self.lock();
        pending.retain(|_, p| p.expires > now);
        while pending.len() >= self.max_pending {
            let Some(oldest) = pending
                .iter()
                .min_by_key(|(_, p)| p.expires)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            pending.remove(&oldest);
        }
        pending.insert(
            token.to_owned(),
            Pending {
                binding: binding.clone(),
                // A lifetime past what the clock can hold never expires.
                expires: now
                    .checked_add(ttl)
                    .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 24 * 3600)),
            },
        );
        Box::pin(std::future::ready(Ok(())))
    }

    fn take<'a>(
        &'a self,
        token: &'a str,
    ) -> BoxFuture<'a, Result<Option<TokenBinding>, ToolError>> {
        let kept = self.lock().remove(token);
        let now = SystemTime::now();
        let binding = kept.filter(|p| p.expires > now).map(|p| p.binding);
        Box::pin(std::future::ready(Ok(binding)))
    }
}

/// Issues confirmation tokens and checks them against the call they are sent with; the
/// tokens live in the registry's [`ConfirmationStore`].
pub(crate) struct Confirmations {
    store: Arc<dyn ConfirmationStore>,
    lifetime: Duration,
}

impl Default for Confirmations {
    fn default() -> Self {
        Self::new(Arc::new(MemoryConfirmationStore::default()), TOKEN_LIFETIME)
    }
}

impl Confirmations {
    pub(crate) fn new(store: Arc<dyn ConfirmationStore>, lifetime: Duration) -> Self {
        Self { store, lifetime }
    }

    /// How long the tokens issued stay valid.
    pub(crate) fn lifetime(&self) -> Duration {
        self.lifetime
    }

    /// A new token for this call, kept in the store; the store's error if it cannot keep it.
    pub(crate) async fn issue(
        &self,
        tool: &str,
        args: &Value,
        principal: Option<&str>,
    ) -> Result<String, ToolError> {
        let mut random = [0_u8; 16];
        // Without the OS's randomness there is no safe token: every call is then confirmed up
        // front or refused (the token below matches nothing ever issued).
        let ok = getrandom::fill(&mut random).is_ok();
        let token = format!("c1-{}", hex(&random));
        if ok {
            self.store
                .put(&token, &binding(tool, args, principal), self.lifetime)
                .await?;
        }
        Ok(token)
    }

    /// Uses up `token`, and says whether it was issued for exactly this call and has not
    /// expired; the store's error if it cannot be asked.
    pub(crate) async fn redeem(
        &self,
        token: &str,
        tool: &str,
        args: &Value,
        principal: Option<&str>,
    ) -> Result<bool, ToolError> {
        Ok(self
            .store
            .take(token)
            .await?
            .is_some_and(|kept| kept == binding(tool, args, principal)))
    }
}

/// What a token issued for this call is bound to.
fn binding(tool: &str, args: &Value, principal: Option<&str>) -> TokenBinding {
    TokenBinding {
        tool: tool.to_owned(),
        arguments: hex(&digest(args)),
        principal: principal.map(str::to_owned),
    }
}

/// Verbs a tool's name may begin or end with, so that `delete_note` and `note_delete` both
/// ask "Delete note ...?".
const VERBS: &[&str] = &[
    "add",
    "append",
    "apply",
    "approve",
    "archive",
    "ban",
    "block",
    "book",
    "buy",
    "cancel",
    "charge",
    "clear",
    "close",
    "create",
    "delete",
    "deploy",
    "destroy",
    "disable",
    "drop",
    "empty",
    "erase",
    "execute",
    "expire",
    "flush",
    "grant",
    "import",
    "insert",
    "kill",
    "merge",
    "move",
    "overwrite",
    "pair",
    "pay",
    "post",
    "publish",
    "purge",
    "push",
    "reboot",
    "refund",
    "reject",
    "release",
    "remove",
    "rename",
    "replace",
    "reset",
    "restart",
    "restore",
    "revoke",
    "rollback",
    "run",
    "schedule",
    "send",
    "set",
    "shutdown",
    "stop",
    "submit",
    "terminate",
    "transfer",
    "truncate",
    "unpair",
    "unpublish",
    "update",
    "upload",
    "wipe",
    "write",
];

/// The question a front end asks its user, made from the tool's name and the values of its
/// arguments: `device_revoke` or `revoke_device` with `{"device_id": "dev_1"}` →
/// `Revoke device dev_1?`. The verb is the name's first word if it is one of [`VERBS`], else
/// its last word if that is, else its first; a name of one word is `Run {name}?`. Secret
/// values are already redacted in `args`.
#[must_use]
pub(crate) fn question(tool: &str, args: &Value) -> String {
    let words: Vec<&str> = tool.split(['_', '-']).filter(|w| !w.is_empty()).collect();
    let is_verb = |w: &&str| VERBS.contains(&w.to_ascii_lowercase().as_str());
    let (verb, rest) = match words.as_slice() {
        [first, rest @ ..] if is_verb(first) => (*first, rest.to_vec()),
        [rest @ .., last] if is_verb(last) => (*last, rest.to_vec()),
        [first, rest @ ..] => (*first, rest.to_vec()),
        [] => (tool, Vec::new()),
    };
    let mut phrase = if rest.is_empty() {
        format!("Run {tool}")
    } else {
        let mut v = verb.chars();
        let verb: String = v
            .next()
            .map(|c| c.to_uppercase().chain(v).collect())
            .unwrap_or_default();
        format!("{verb} {}", rest.join(" "))
    };
    let values: Vec<String> = args
        .as_object()
        .into_iter()
        .flat_map(|m| m.values())
        .filter_map(|v| match v {
            Value::String(s) if s == crate::tool::secret::REDACTED => None,
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
        .collect();
    if !values.is_empty() {
        phrase.push(' ');
        phrase.push_str(&values.join(" "));
    }
    format!("{phrase}?")
}

/// A tool's own question (`#[tool(confirm = "...")]`) with each `{param}` replaced by that
/// argument's value: a string as it is, anything else as JSON, a missing one by nothing.
/// Secret values are already redacted in `args`.
fn filled(template: &str, args: &Value) -> String {
    let mut out = String::with_capacity(template.len());
    for piece in tool_grammar::question_pieces(template) {
        match piece {
            QuestionPiece::Text(text) | QuestionPiece::Unclosed(text) => out.push_str(text),
            QuestionPiece::Param(name) => match args.get(name) {
                Some(Value::String(s)) => out.push_str(s),
                Some(Value::Null) | None => {}
                Some(other) => out.push_str(&other.to_string()),
            },
        }
    }
    out
}

/// The `confirmation_required` error of a call: the question, the (redacted) arguments, the
/// dry-run preview if there is one, and the token. `stale`: the caller sent a token that does
/// not fit this call.
pub(crate) fn required(
    meta: &ToolMeta,
    shown_args: &Value,
    preview: Option<Value>,
    token: String,
    lifetime: Duration,
    stale: bool,
) -> ToolError {
    let question = match &meta.confirm {
        Some(template) => filled(template, shown_args),
        None => question(&meta.name, shown_args),
    };
    let why = if stale {
        " (the confirmation token sent is expired, used, or for another call)"
    } else {
        ""
    };
    let confirmation = Confirmation {
        tool: meta.name.to_string(),
        arguments: shown_args.clone(),
        question,
        preview,
        token,
        expires_in: lifetime,
    };
    ToolError::new(
        ErrorKind::CONFIRMATION_REQUIRED,
        format!(
            "`{}` is destructive and was not run{why}: it would {} with {shown_args}. {} Confirm to run it.",
            meta.name,
            meta.summary.trim_end_matches('.').to_lowercase(),
            confirmation.question,
        ),
    )
    .with_confirmation(confirmation)
}

/// The error of a call whose user said no when asked to confirm it.
pub(crate) fn declined(tool: &str) -> ToolError {
    ToolError::new(
        ErrorKind::CONFIRMATION_DECLINED,
        format!(
            "`{tool}` is destructive and was not run: the user declined. Do not retry it unless the user asks."
        ),
    )
}

/// SHA-256 of the arguments in a canonical form (object members sorted by key), so the same
/// arguments sent in another member order still match.
pub(crate) fn digest(args: &Value) -> [u8; 32] {
    fn feed(h: &mut Sha256, v: &Value) {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                h.update(b"{");
                for k in keys {
                    feed(h, &Value::String(k.clone()));
                    h.update(b":");
                    feed(h, &m[k]);
                    h.update(b",");
                }
                h.update(b"}");
            }
            Value::Array(items) => {
                h.update(b"[");
                for item in items {
                    feed(h, item);
                    h.update(b",");
                }
                h.update(b"]");
            }
            other => h.update(other.to_string().as_bytes()),
        }
    }
    let mut h = Sha256::new();
    feed(&mut h, args);
    h.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn confirmations(lifetime: Duration) -> Confirmations {
        Confirmations::new(Arc::new(MemoryConfirmationStore::new()), lifetime)
    }

    #[tokio::test]
    async fn a_lifetime_past_the_clock_never_expires() {
        let c = confirmations(Duration::MAX);
        let args = json!({"a": 1});
        let t = c.issue("rm", &args, None).await.unwrap();
        assert!(c.redeem(&t, "rm", &args, None).await.unwrap());
    }

    #[tokio::test]
    async fn a_token_works_once_for_its_own_call() {
        let c = Confirmations::default();
        let args = json!({"a": 1, "b": [1, 2]});
        let issue = || c.issue("rm", &args, Some("alice"));
        let t = issue().await.unwrap();
        let other = json!({"a": 2, "b": [1, 2]});
        assert!(!c.redeem(&t, "rm", &other, Some("alice")).await.unwrap());
        let t = issue().await.unwrap();
        assert!(!c.redeem(&t, "rm", &args, Some("bob")).await.unwrap());
        let t = issue().await.unwrap();
        assert!(!c.redeem(&t, "other", &args, Some("alice")).await.unwrap());
        let t = issue().await.unwrap();
        // Member order does not matter.
        let reordered = json!({"b": [1, 2], "a": 1});
        assert!(c.redeem(&t, "rm", &reordered, Some("alice")).await.unwrap());
        assert!(
            !c.redeem(&t, "rm", &args, Some("alice")).await.unwrap(),
            "used up"
        );
        assert!(
            !c.redeem("c1-forged", "rm", &args, Some("alice"))
                .await
                .unwrap()
        );
    }

    #[test]
    fn questions_read_verb_first() {
        assert_eq!(
            question("device_revoke", &json!({"device_id": "dev_1"})),
            "Revoke device dev_1?"
        );
        // The usual verb-first name reads the same way round.
        assert_eq!(question("delete_note", &json!({"id": 1})), "Delete note 1?");
        assert_eq!(question("note_delete", &json!({"id": 1})), "Delete note 1?");
        assert_eq!(
            question("revoke-api-key", &json!({"key": "k1"})),
            "Revoke api key k1?"
        );
        // A tool's own question, its values filled in.
        assert_eq!(
            filled(
                "Erase {path} for good ({n} files)?",
                &json!({"path": "/tmp/x", "n": 3})
            ),
            "Erase /tmp/x for good (3 files)?"
        );
        assert_eq!(filled("Drop {missing}{", &json!({})), "Drop {");
        // A verb it does not know: the first word, as most names are made.
        assert_eq!(
            question("frobnicate_widget", &json!({})),
            "Frobnicate widget?"
        );
        assert_eq!(question("purge", &json!({})), "Run purge?");
        assert_eq!(
            question(
                "secret_set",
                &json!({"value": crate::tool::secret::REDACTED, "n": 2})
            ),
            "Set secret 2?"
        );
    }
}
