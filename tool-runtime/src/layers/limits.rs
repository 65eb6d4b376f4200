//! Rate and concurrency limits, per tool, in the pipeline.
//!
//! - **Rate**: `#[tool(rate = "10/min")]`, a token bucket per (principal, tool) from the
//!   `governor` crate; over it → `rate_limited` with `details.retry_after` in seconds (HTTP
//!   `Retry-After`). Anonymous callers share one bucket per tool. Calls refused for invalid
//!   arguments take from the bucket too.
//! - **Concurrency**: `#[tool(concurrency = 4)]`, a tokio semaphore; callers beyond it wait in a
//!   bounded queue (`RegistryBuilder::concurrency_queue`, default 64); a full queue →
//!   `unavailable`.
//!
//! Both can be set or overridden per tool when the registry is built
//! (`RegistryBuilder::rate_limit`, `RegistryBuilder::concurrency_limit`).

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::future::BoxFuture;
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};
use tokio::sync::Semaphore;

use crate::layers::hooks::{CallHook, HookPoint, Permit};
use crate::tool::definition::PendingCall;
use crate::tool::error::{ErrorKind, ToolError};

pub use crate::tool::definition::Rate;

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

/// The rate-limit hook: one keyed bucket set per limited tool.
pub(crate) struct RateLimits {
    by_tool: HashMap<String, DefaultKeyedRateLimiter<String>>,
    clock: DefaultClock,
}

impl RateLimits {
    pub(crate) fn new(rates: impl IntoIterator<Item = (String, Rate)>) -> Option<Self> {
        let by_tool: HashMap<_, _> = rates
            .into_iter()
            .map(|(tool, rate)| (tool, governor::RateLimiter::keyed(quota(rate))))
            .collect();
        (!by_tool.is_empty()).then(|| Self {
            by_tool,
            clock: DefaultClock::default(),
        })
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
        let decision = self
            .charge(&call.meta().name, call.context().principal())
            .map(|()| Permit::none());
        Box::pin(std::future::ready(decision))
    }
}

impl RateLimits {
    /// Takes one call from the bucket of (`principal`, `tool`), or says when to retry. Calls
    /// refused for their arguments are charged too, so a caller cannot make the server validate
    /// (and audit) bad calls faster than its limit.
    pub(crate) fn charge(&self, tool: &str, principal: Option<&str>) -> Result<(), ToolError> {
        let Some(limiter) = self.by_tool.get(tool) else {
            return Ok(());
        };
        let key = principal.unwrap_or_default().to_owned();
        limiter.check_key(&key).map_err(|not_until| {
            let wait = not_until.wait_time_from(self.clock.now());
            ToolError::new(
                ErrorKind::RATE_LIMITED,
                format!(
                    "`{tool}` is over its rate limit; retry in {:.1}s",
                    wait.as_secs_f64()
                ),
            )
            .with_retry_after(wait)
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
