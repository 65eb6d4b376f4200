//! Rate and concurrency limits, per tool, in the pipeline.
//!
//! - **Rate**: `#[tool(rate = "10/min")]`, counted per (tool, principal) by the registry's
//!   [`RateLimiter`]: a token bucket in this process ([`MemoryRateLimiter`]) unless the
//!   registry is given another (`RegistryBuilder::rate_limiter`), such as one every replica
//!   shares; over it → `rate_limited` with `details.retry_after` in seconds (HTTP
//!   `Retry-After`). Anonymous callers share one count per tool. Calls refused for invalid
//!   arguments are charged too. A limiter that cannot count (its store is down) refuses the
//!   call with its error.
//! - **Concurrency**: `#[tool(concurrency = 4)]`, a tokio semaphore in this process (each
//!   replica of a deployment has its own); callers beyond it wait in a bounded queue
//!   (`RegistryBuilder::concurrency_queue`, default 64); a full queue → `unavailable`.
//!
//! Both can be set or overridden per tool when the registry is built
//! (`RegistryBuilder::rate_limit`, `RegistryBuilder::concurrency_limit`).

use std::collections::HashMap;
use std::fmt;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

use futures_util::future::BoxFuture;
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};
use tokio::sync::Semaphore;

use crate::layers::hooks::{CallHook, HookPoint, Permit};
use crate::tool::definition::PendingCall;
use crate::tool::error::{ErrorKind, ToolError};

use crate::tool::options::Rate;

/// A rate limiter's answer for one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Charge {
    /// The call is within its rate and was counted.
    Allowed,
    /// The call is over its rate: it may be tried again after this long.
    RetryAfter(std::time::Duration),
}

/// Where the rate limits' counts live: in this process by default, or in a store every
/// replica shares (Redis, with the `redis` feature), so that a limit of 30 calls a minute is
/// 30 for the whole deployment. Every charge goes through it: each call that reaches the
/// limits, and each call refused for its arguments.
///
/// The limiter is given each tool's rate (from `#[tool(rate)]`, the builder's
/// [`rate_limit`](crate::registry::RegistryBuilder::rate_limit) or configuration) with every
/// charge, and keys its counts by tool and principal; anonymous callers (`None`) share one
/// count per tool.
pub trait RateLimiter: Send + Sync + 'static {
    /// Counts one call of `tool` by `principal` against `rate`, or says when to retry. An
    /// error (the store cannot be reached) refuses the call with it, typically `unavailable`
    /// naming the store: a limit that cannot be checked is not skipped.
    fn charge<'a>(
        &'a self,
        tool: &'a str,
        principal: Option<&'a str>,
        rate: Rate,
    ) -> BoxFuture<'a, Result<Charge, ToolError>>;
}

fn quota(rate: Rate) -> Quota {
    let count = NonZeroU32::new(rate.count).unwrap_or(NonZeroU32::MIN);
    // `count` per `per`: one cell every per/count, up to `count` at once.
    Quota::with_period(rate.per / rate.count.max(1))
        .unwrap_or_else(|| Quota::per_second(count))
        .allow_burst(count)
}

/// The default [`RateLimiter`]: the counts in this process, a token bucket (GCRA, from the
/// `governor` crate) per tool and principal, with a burst of `count` and one call back every
/// `per / count`. A tool's buckets are made on its first charge, for the rate given; charged
/// later with another rate, the tool starts over with new buckets for it.
///
/// Each replica of a deployment that uses it counts on its own: behind a load balancer a
/// limit of 30 calls a minute is 30 per replica. Give the registry a limiter every replica
/// shares ([`RegistryBuilder::rate_limiter`](crate::registry::RegistryBuilder::rate_limiter))
/// to make it 30 for the whole deployment.
///
/// ```
/// use std::time::Duration;
/// use tool_runtime::layers::limits::{Charge, MemoryRateLimiter, RateLimiter};
/// use tool_runtime::tool::Rate;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let limiter = MemoryRateLimiter::new();
/// let rate = Rate { count: 1, per: Duration::from_secs(60) };
/// assert_eq!(limiter.charge("ping", Some("alice"), rate).await.unwrap(), Charge::Allowed);
/// assert!(matches!(
///     limiter.charge("ping", Some("alice"), rate).await.unwrap(),
///     Charge::RetryAfter(_)
/// ));
/// // Another principal has buckets of its own.
/// assert_eq!(limiter.charge("ping", Some("bob"), rate).await.unwrap(), Charge::Allowed);
/// # });
/// ```
#[derive(Default)]
pub struct MemoryRateLimiter {
    by_tool: RwLock<HashMap<String, Buckets>>,
    clock: DefaultClock,
}

/// One tool's buckets, keyed by principal, for the rate they were made for.
struct Buckets {
    rate: Rate,
    keyed: DefaultKeyedRateLimiter<String>,
}

impl MemoryRateLimiter {
    /// A limiter with no buckets yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes one call from the bucket of (`tool`, `principal`) at `rate`, or says how long
    /// until one is free.
    fn check(&self, tool: &str, principal: Option<&str>, rate: Rate) -> Charge {
        let key = principal.unwrap_or_default().to_owned();
        let answer = |buckets: &Buckets| match buckets.keyed.check_key(&key) {
            Ok(()) => Charge::Allowed,
            Err(not_until) => Charge::RetryAfter(not_until.wait_time_from(self.clock.now())),
        };
        {
            let by_tool = self
                .by_tool
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some(buckets) = by_tool.get(tool).filter(|b| b.rate == rate) {
                return answer(buckets);
            }
        }
        let mut by_tool = self
            .by_tool
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let buckets = by_tool
            .entry(tool.to_owned())
            .and_modify(|b| {
                if b.rate != rate {
                    *b = Buckets::new(rate);
                }
            })
            .or_insert_with(|| Buckets::new(rate));
        answer(buckets)
    }
}

impl Buckets {
    fn new(rate: Rate) -> Self {
        Self {
            rate,
            keyed: governor::RateLimiter::keyed(quota(rate)),
        }
    }
}

impl RateLimiter for MemoryRateLimiter {
    fn charge<'a>(
        &'a self,
        tool: &'a str,
        principal: Option<&'a str>,
        rate: Rate,
    ) -> BoxFuture<'a, Result<Charge, ToolError>> {
        Box::pin(std::future::ready(Ok(self.check(tool, principal, rate))))
    }
}

impl fmt::Debug for MemoryRateLimiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tools = self
            .by_tool
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .len();
        f.debug_struct("MemoryRateLimiter")
            .field("tools", &tools)
            .finish_non_exhaustive()
    }
}

/// The rate-limit hook: each limited tool's rate, charged through the registry's limiter.
pub(crate) struct RateLimits {
    limiter: Arc<dyn RateLimiter>,
    rates: HashMap<String, Rate>,
}

impl RateLimits {
    /// The hook for `rates`; `None` when no tool is limited.
    pub(crate) fn new(
        limiter: Arc<dyn RateLimiter>,
        rates: impl IntoIterator<Item = (String, Rate)>,
    ) -> Option<Self> {
        let rates: HashMap<_, _> = rates.into_iter().collect();
        (!rates.is_empty()).then_some(Self { limiter, rates })
    }

    /// Charges one call of `tool` by `principal` to its rate, if it has one: `rate_limited`
    /// with `retry_after` when over it, the limiter's own error when it cannot count. Calls
    /// refused for their arguments are charged too, so a caller cannot make the server
    /// validate (and audit) bad calls faster than its limit.
    pub(crate) async fn charge(
        &self,
        tool: &str,
        principal: Option<&str>,
    ) -> Result<(), ToolError> {
        let Some(&rate) = self.rates.get(tool) else {
            return Ok(());
        };
        match self.limiter.charge(tool, principal, rate).await? {
            Charge::Allowed => Ok(()),
            Charge::RetryAfter(wait) => Err(ToolError::new(
                ErrorKind::RATE_LIMITED,
                format!(
                    "`{tool}` is over its rate limit; retry in {:.1}s",
                    wait.as_secs_f64()
                ),
            )
            .with_retry_after(wait)),
        }
    }
}

impl CallHook for RateLimits {
    fn point(&self) -> HookPoint {
        HookPoint::RateLimit
    }

    fn before<'a>(
        &'a self,
        call: &'a mut PendingCall<'_>,
    ) -> BoxFuture<'a, Result<Permit, ToolError>> {
        let tool = &call.meta.name;
        let principal = call.ctx.principal();
        Box::pin(async move {
            self.charge(tool, principal).await?;
            Ok(Permit::none())
        })
    }
}

struct Slots {
    semaphore: Arc<Semaphore>,
    waiting: AtomicUsize,
}

/// The concurrency hook: a semaphore per limited tool, and a bounded queue in front of it.
pub(crate) struct ConcurrencyLimits {
    by_tool: HashMap<String, Slots>,
    queue: usize,
}

impl ConcurrencyLimits {
    pub(crate) fn new(
        limits: impl IntoIterator<Item = (String, u32)>,
        queue: usize,
    ) -> Option<Self> {
        let by_tool: HashMap<_, _> = limits
            .into_iter()
            .map(|(tool, n)| {
                let slots = Slots {
                    semaphore: Arc::new(Semaphore::new(n.max(1) as usize)),
                    waiting: AtomicUsize::new(0),
                };
                (tool, slots)
            })
            .collect();
        (!by_tool.is_empty()).then_some(Self { by_tool, queue })
    }
}

impl CallHook for ConcurrencyLimits {
    fn point(&self) -> HookPoint {
        HookPoint::Concurrency
    }

    fn before<'a>(
        &'a self,
        call: &'a mut PendingCall<'_>,
    ) -> BoxFuture<'a, Result<Permit, ToolError>> {
        Box::pin(async move {
            let Some(slots) = self.by_tool.get(&*call.meta().name) else {
                return Ok(Permit::none());
            };
            if let Ok(permit) = Arc::clone(&slots.semaphore).try_acquire_owned() {
                return Ok(Permit::hold(permit));
            }
            // Counted out on drop, so a caller that goes away while queued frees its place.
            let _waiting = Waiting(&slots.waiting);
            if slots.waiting.fetch_add(1, Ordering::AcqRel) >= self.queue {
                return Err(ToolError::new(
                    ErrorKind::UNAVAILABLE,
                    format!(
                        "`{}` is at its concurrency limit and its queue is full; try again shortly",
                        call.meta().name
                    ),
                ));
            }
            Arc::clone(&slots.semaphore)
                .acquire_owned()
                .await
                .map(Permit::hold)
                .map_err(|_| {
                    ToolError::new(ErrorKind::UNAVAILABLE, "the registry is shutting down")
                })
        })
    }
}

struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn rates_parse() {
        assert_eq!(
            Rate::parse("10/min"),
            Some(Rate {
                count: 10,
                per: Duration::from_secs(60)
            })
        );
        assert_eq!(
            Rate::parse("5/s").map(|r| r.per),
            Some(Duration::from_secs(1))
        );
        assert_eq!(Rate::parse("100 / hour").map(|r| r.count), Some(100));
        for bad in ["", "10", "0/s", "x/s", "10/day", "-1/s"] {
            assert_eq!(Rate::parse(bad), None, "{bad}");
        }
    }
}
