//! Whether the server should be sent traffic (`GET /readyz`): not while it drains, nor while
//! a check of an engine it needs fails. A probe is cheap whatever the rate: the checks run at
//! most once at a time, their report is shared by every request that asks while they run and
//! kept for [`FRESH`], so a flood of probes holds at most one connection of each engine (a
//! PostgreSQL check cannot starve the audit that shares its pool) and logs each failure at
//! most once a period.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures_util::FutureExt as _;
use futures_util::future::{BoxFuture, Shared};

/// A readiness check: `Ok` when the engine it checks can serve, else why not, in the
/// operator's words (the engine's address included: callers never see it).
pub(crate) type ReadyCheck = Arc<dyn Fn() -> BoxFuture<'static, Result<(), String>> + Send + Sync>;

/// How long a report answers probes before the checks run again.
pub(crate) const FRESH: Duration = Duration::from_secs(1);

/// How long one check may take before it counts as failed.
const CHECK_LIMIT: Duration = Duration::from_secs(5);

/// The checks that failed in one run, by name, with why; and when the run ended.
#[derive(Debug)]
pub(crate) struct Report {
    pub(crate) failing: Vec<(Arc<str>, String)>,
    ended: Instant,
}

type Run = Shared<BoxFuture<'static, Arc<Report>>>;

/// Whether the server should be sent traffic. Clones share the draining flag and the last
/// report, so the options given to the router and to [`serve`](crate::http::serve) report the
/// same state.
#[derive(Clone)]
pub(crate) struct Readiness {
    pub(crate) draining: Arc<AtomicBool>,
    pub(crate) checks: Vec<(Arc<str>, ReadyCheck)>,
    last: Arc<Mutex<Option<Run>>>,
    fresh: Duration,
}

impl Default for Readiness {
    fn default() -> Self {
        Self {
            draining: Arc::default(),
            checks: Vec::new(),
            last: Arc::default(),
            fresh: FRESH,
        }
    }
}

impl std::fmt::Debug for Readiness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Readiness")
            .field("draining", &self.is_draining())
            .field(
                "checks",
                &self.checks.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl Readiness {
    /// Whether the server is draining (shutting down, still serving).
    pub(crate) fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Relaxed)
    }

    /// The checks' report: the one running, or the last if it ended less than [`FRESH`] ago,
    /// or a new run's.
    pub(crate) async fn report(&self) -> Arc<Report> {
        let run = {
            let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
            match &*last {
                Some(run) if run.peek().is_none_or(|r| r.ended.elapsed() < self.fresh) => {
                    run.clone()
                }
                _ => {
                    let run = run_checks(self.checks.clone()).boxed().shared();
                    *last = Some(run.clone());
                    run
                }
            }
        };
        run.await
    }
}

/// Runs every check concurrently, each within [`CHECK_LIMIT`], and logs each failure.
async fn run_checks(checks: Vec<(Arc<str>, ReadyCheck)>) -> Arc<Report> {
    let results =
        futures_util::future::join_all(checks.into_iter().map(|(name, check)| async move {
            let outcome = tokio::time::timeout(CHECK_LIMIT, check())
                .await
                .unwrap_or_else(|_| Err(format!("no answer within {} s", CHECK_LIMIT.as_secs())));
            (name, outcome)
        }))
        .await;
    let failing: Vec<(Arc<str>, String)> = results
        .into_iter()
        .filter_map(|(name, outcome)| outcome.err().map(|why| (name, why)))
        .collect();
    for (check, why) in &failing {
        tracing::warn!(target: "tool_runtime::http", check = &**check, why = why.as_str(), "not ready");
    }
    Arc::new(Report {
        failing,
        ended: Instant::now(),
    })
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;

    fn counting(runs: &Arc<AtomicUsize>, ok: bool, fresh: Duration) -> Readiness {
        let runs = runs.clone();
        let check: ReadyCheck = Arc::new(move || {
            let runs = runs.clone();
            Box::pin(async move {
                runs.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(50)).await;
                if ok {
                    Ok(())
                } else {
                    Err("PostgreSQL at app@db:5432/x is unavailable".into())
                }
            })
        });
        Readiness {
            checks: vec![("postgres".into(), check)],
            fresh,
            ..Readiness::default()
        }
    }

    #[tokio::test]
    async fn concurrent_probes_share_one_run_and_a_fresh_report_is_kept() {
        let runs = Arc::new(AtomicUsize::new(0));
        let readiness = counting(&runs, false, Duration::from_secs(3600));
        let reports = futures_util::future::join_all((0..100).map(|_| readiness.report())).await;
        assert_eq!(
            runs.load(Ordering::SeqCst),
            1,
            "one run for 100 concurrent probes"
        );
        assert!(
            reports
                .iter()
                .all(|r| r.failing.len() == 1 && &*r.failing[0].0 == "postgres")
        );
        readiness.report().await;
        // Clones (the router's and `serve`'s options) share the report.
        readiness.clone().report().await;
        assert_eq!(runs.load(Ordering::SeqCst), 1, "kept while fresh");
    }

    #[tokio::test]
    async fn a_stale_report_is_made_again() {
        let runs = Arc::new(AtomicUsize::new(0));
        let readiness = counting(&runs, true, Duration::ZERO);
        assert!(readiness.report().await.failing.is_empty());
        assert!(readiness.report().await.failing.is_empty());
        assert_eq!(runs.load(Ordering::SeqCst), 2);
    }
}
