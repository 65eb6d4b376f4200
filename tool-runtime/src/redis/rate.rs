//! `RedisRateLimiter`: the rate limits' counts in Redis, one GCRA state per (tool, principal).

use std::fmt;
use std::time::Duration;

use futures_util::future::BoxFuture;
use sha2::{Digest, Sha256};

use super::Redis;
use crate::layers::limits::{Charge, RateLimiter};
use crate::tool::Rate;
use crate::tool::error::ToolError;
use crate::tool::hex;

/// GCRA as the `governor` crate (the in-memory limiter) decides it, in one atomic script:
/// emission interval T = per/count, tolerance tau = T·(count−1), state the theoretical arrival
/// time (TAT) of the next call, absent meaning "now". A call at t0 is refused when
/// t0 < TAT − tau, to be retried after TAT − tau − t0; otherwise TAT becomes max(TAT, t0) + T.
/// The time is Redis's own (`TIME`, microseconds), so replicas with skewed clocks agree; the
/// key expires when its TAT has passed, when it would decide as an absent key does.
const GCRA: &str = r"
local t = tonumber(ARGV[1])
local tau = tonumber(ARGV[2])
local now = redis.call('TIME')
local t0 = tonumber(now[1]) * 1000000 + tonumber(now[2])
local tat = tonumber(redis.call('GET', KEYS[1])) or t0
local earliest = tat - tau
if t0 < earliest then
  return {0, earliest - t0}
end
local next = math.max(tat, t0) + t
redis.call('SET', KEYS[1], string.format('%.0f', next), 'PX', math.ceil((next - t0) / 1000))
return {1, 0}
";

/// The longest principal written into a key as it is; longer ones, and ones with characters
/// outside `[A-Za-z0-9._@-]`, are written as `~` and the SHA-256 of the principal.
const PRINCIPAL_AS_IS: usize = 64;

/// A [`RateLimiter`] whose counts live in Redis, so that every replica charges the same
/// buckets: a limit of 30 calls an hour is 30 for the whole deployment. Decides exactly as the
/// in-memory limiter (GCRA, as the `governor` crate implements it), with Redis's clock.
///
/// Keys: `{prefix}rate:{tool}:{principal}` (anonymous callers: an empty principal), each
/// expiring once its bucket is full again.
#[derive(Clone)]
pub struct RedisRateLimiter {
    redis: Redis,
    script: ::redis::Script,
}

impl fmt::Debug for RedisRateLimiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisRateLimiter")
            .field("redis", &self.redis)
            .finish_non_exhaustive()
    }
}

impl RedisRateLimiter {
    /// The limiter on `redis`'s connection (also [`Redis::rate_limiter`]).
    #[must_use]
    pub fn new(redis: Redis) -> Self {
        Self {
            redis,
            script: ::redis::Script::new(GCRA),
        }
    }

    fn key(&self, tool: &str, principal: Option<&str>) -> String {
        let principal = principal.unwrap_or_default();
        let plain = principal.len() <= PRINCIPAL_AS_IS
            && principal
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._@-".contains(&b));
        if plain {
            self.redis.key(&format!("rate:{tool}:{principal}"))
        } else {
            let digest = Sha256::digest(principal.as_bytes());
            self.redis.key(&format!("rate:{tool}:~{}", hex(&digest)))
        }
    }
}

/// T and tau in microseconds, as governor derives them from a rate.
fn interval_and_tolerance(rate: Rate) -> (u64, u64) {
    let count = rate.count.max(1);
    let t = u64::try_from((rate.per / count).as_micros())
        .unwrap_or(u64::MAX)
        .max(1);
    (t, t.saturating_mul(u64::from(count - 1)))
}

impl RateLimiter for RedisRateLimiter {
    fn charge<'a>(
        &'a self,
        tool: &'a str,
        principal: Option<&'a str>,
        rate: Rate,
    ) -> BoxFuture<'a, Result<Charge, ToolError>> {
        Box::pin(async move {
            let key = self.key(tool, principal);
            let (t, tau) = interval_and_tolerance(rate);
            let (allowed, wait_us): (i64, i64) = self
                .redis
                .run("charging a rate limit", |mut c| async move {
                    self.script
                        .key(key)
                        .arg(t)
                        .arg(tau)
                        .invoke_async(&mut c)
                        .await
                })
                .await?;
            Ok(if allowed == 1 {
                Charge::Allowed
            } else {
                Charge::RetryAfter(Duration::from_micros(
                    u64::try_from(wait_us).unwrap_or_default(),
                ))
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thirty_an_hour_is_one_every_two_minutes_thirty_at_once() {
        let rate = Rate::parse("30/hour").unwrap();
        assert_eq!(
            interval_and_tolerance(rate),
            (120_000_000, 29 * 120_000_000)
        );
        let once = Rate::parse("1/s").unwrap();
        assert_eq!(interval_and_tolerance(once), (1_000_000, 0));
    }
}
