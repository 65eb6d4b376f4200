//! The checks of the chaos run, against the databases and what the clients saw, and the
//! figures they print.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use tool_test_support::fake_provider::FakeProvider;

use super::clients::{Call, Record};
use super::rig::Rig;
use super::{LEASE, LIST_BURST, TASKS};

/// The checks' figures, printed at the end.
#[derive(Default)]
pub(super) struct Report {
    pub(super) lines: Vec<String>,
}

impl Report {
    /// Every call answered, by a replica or by nginx for one that died, within the limits.
    pub(super) fn check_answers(&mut self, record: &Record, schedule: &str) {
        let mut by = BTreeMap::<(&str, u16), usize>::new();
        for c in &record.calls {
            *by.entry((c.kind, c.status)).or_default() += 1;
        }
        let unanswered: Vec<&Call> = record.calls.iter().filter(|c| c.status == 0).collect();
        assert!(
            unanswered.is_empty(),
            "calls with no answer: {unanswered:?}\n{schedule}"
        );
        // A backend found unreachable is said so, by kind, never where it is.
        for c in record
            .calls
            .iter()
            .filter(|c| c.status == 503 && c.replica.is_some())
        {
            assert!(
                c.message.contains("Redis is unavailable")
                    || c.message.contains("PostgreSQL is unavailable"),
                "{c:?}"
            );
            assert!(!c.message.contains("127.0.0.1"), "{c:?}");
        }
        let slowest_refusal = (record.calls.iter())
            .filter(|c| c.status == 503)
            .map(|c| c.took)
            .max()
            .unwrap_or_default();
        let slowest = record
            .calls
            .iter()
            .map(|c| c.took)
            .max()
            .unwrap_or_default();
        // A refusal comes within the configured waits, plus a pause a replica may be in.
        assert!(
            slowest_refusal < Duration::from_secs(10),
            "a 503 after {slowest_refusal:?}\n{schedule}"
        );
        assert!(
            slowest < Duration::from_secs(35),
            "a call answered after {slowest:?}\n{schedule}"
        );
        self.lines.push(format!(
            "{} HTTP calls by kind and status: {by:?}; slowest answer {:.1} s, slowest 503 {:.1} s",
            record.calls.len(),
            slowest.as_secs_f64(),
            slowest_refusal.as_secs_f64()
        ));
    }

    /// The audit against the calls: one intent per call that ran, one real outcome per call
    /// answered with a result or a tool error, `unknown` only once and only beside an intent
    /// (a call whose replica died or stalled), no intent for a call refused for PostgreSQL,
    /// and no request that ran twice.
    pub(super) fn check_audit(&mut self, rig: &Rig, record: &Record, schedule: &str) {
        // Recovery of any instance killed at the end: wait for its lease.
        std::thread::sleep(LEASE * 2);
        // Per call of the pipeline: its request, whether its intent was written, its outcomes.
        let mut calls = BTreeMap::<String, (String, usize, Vec<String>)>::new();
        for row in rig
            .sql(
                "SELECT call, request_id, event, coalesce(outcome, '') FROM tool_audit_records \
                 WHERE NOT dry_run AND request_id IS NOT NULL",
            )
            .lines()
        {
            let [call, id, event, outcome] = row.split('|').collect::<Vec<_>>()[..] else {
                panic!("{row}")
            };
            let entry = calls.entry(call.to_owned()).or_default();
            id.clone_into(&mut entry.0);
            if event == "intent" {
                entry.1 += 1;
            } else {
                entry.2.push(outcome.to_owned());
            }
        }
        // Per request: the calls that ran (an intent), with their outcomes.
        let mut ran = BTreeMap::<&str, Vec<&Vec<String>>>::new();
        let (mut unknown, mut late) = (0, 0);
        for (call, (id, intents, outcomes)) in &calls {
            let unknowns = outcomes.iter().filter(|o| *o == "unknown").count();
            let real = outcomes.len() - unknowns;
            if *intents == 0 {
                assert!(
                    unknowns == 0 && real == 1,
                    "{id} {call}: refused, outcomes {outcomes:?}\n{schedule}"
                );
                continue;
            }
            assert!(
                *intents == 1 && unknowns <= 1 && real <= 1 && !outcomes.is_empty(),
                "{id} {call}: {intents} intents, outcomes {outcomes:?}\n{schedule}"
            );
            unknown += unknowns;
            late += usize::from(unknowns == 1 && real == 1);
            ran.entry(id).or_default().push(outcomes);
        }
        let twice: Vec<_> = ran.iter().filter(|(_, calls)| calls.len() > 1).collect();
        assert!(
            twice.is_empty(),
            "requests run twice: {twice:?}\n{schedule}"
        );
        // A token runs its call once: its confirm and its resend never both ran.
        let both: Vec<&&str> = (ran.keys())
            .filter(|id| id.starts_with("confirm-"))
            .filter(|id| ran.contains_key(id.replacen("confirm-", "reuse-", 1).as_str()))
            .collect();
        assert!(
            both.is_empty(),
            "tokens that ran twice: {both:?}\n{schedule}"
        );
        let lost_with_replica = lost_with_replica(rig, schedule);
        let (mut checked, mut refused, mut committed_late, mut kept_and_lost) = (0, 0, 0, 0);
        for c in record.calls.iter().filter(|c| c.replica.is_some()) {
            let outcomes = ran.get(c.id.as_str()).map(|f| f[0]);
            // Refused before it ran, its intent not written in time. A PostgreSQL that answered
            // too late (blackholed) may still have committed it: then the refusal's own
            // outcome, `unavailable`, closes it, and nothing says it ran.
            if c.status == 503 && c.message.contains("not run") {
                if let Some(outcomes) = outcomes {
                    assert!(
                        outcomes.iter().any(|o| o == "unavailable")
                            && outcomes
                                .iter()
                                .all(|o| o == "unavailable" || o == "unknown"),
                        "{c:?}: refused, yet audited {outcomes:?}\n{schedule}"
                    );
                    committed_late += 1;
                }
                refused += 1;
                continue;
            }
            // Answered by a replica: if it ran, its one real outcome is there (a tool that
            // failed for a backend lost mid-call included); a result or the tool's own error
            // means it ran.
            let real = outcomes.map_or(0, |o| o.iter().filter(|o| *o != "unknown").count());
            if outcomes.is_some() || matches!(c.status, 200 | 404) {
                let lost = real == 0 && lost_with_replica(c);
                assert!(
                    real == 1 || lost,
                    "{c:?}: answered, its outcomes {outcomes:?}\n{schedule}"
                );
                kept_and_lost += usize::from(lost);
                checked += 1;
            }
        }
        self.lines.push(format!(
            "audit: {checked} calls that ran and were answered, each with one intent and one \
             outcome ({kept_and_lost} kept while PostgreSQL was away and lost with their replica, \
             `unknown` alone); {unknown} reported unknown ({late} of them later finished by a replica that \
             resumed); {refused} refused before running, none run ({committed_late} of their \
             intents committed after the write timed out, closed `unavailable`); {} calls of {} \
             requests audited, none run twice",
            calls.len(),
            calls.values().map(|c| &c.0).collect::<BTreeSet<_>>().len()
        ));
    }

    /// No code issued twice for one call; every code answered is in the database.
    pub(super) fn check_devices(&mut self, rig: &Rig, record: &Record) {
        let mut codes = BTreeMap::<String, usize>::new();
        for workspace in rig
            .sql("SELECT workspace FROM pairing_codes WHERE workspace LIKE 'add-%'")
            .lines()
        {
            *codes.entry(workspace.to_owned()).or_default() += 1;
        }
        let twice: Vec<_> = codes.iter().filter(|(_, n)| **n > 1).collect();
        assert!(
            twice.is_empty(),
            "codes issued twice for one call: {twice:?}"
        );
        let added: BTreeSet<&str> = (record.calls.iter())
            .filter(|c| c.kind == "add" && c.status == 200)
            .map(|c| c.id.as_str())
            .collect();
        for id in &added {
            assert!(
                codes.contains_key(*id),
                "{id}: answered, no code in the database"
            );
        }
        self.lines.push(format!(
            "devices: {} codes answered, {} in the database, none twice",
            added.len(),
            codes.len()
        ));
    }

    /// The shared limit on `device_list` held across replicas: at most its burst plus one a
    /// second over the run.
    pub(super) fn check_rate(&mut self, record: &Record, ran_for: Duration) {
        let served = (record.calls.iter())
            .filter(|c| c.kind == "list" && c.status == 200)
            .count();
        let bound = LIST_BURST + usize::try_from(ran_for.as_secs()).unwrap() + 1;
        assert!(
            served <= bound,
            "device_list served {served} times, above the limit's {bound}"
        );
        let limited = (record.calls.iter())
            .filter(|c| c.kind == "list" && c.status == 429)
            .count();
        self.lines.push(format!(
            "rate: device_list served {served} times (bound {bound}), {limited} refused 429"
        ));
    }

    /// Each scheduled task ran once: one run row, at most one model request for its prompt.
    pub(super) async fn check_tasks(&mut self, rig: &Rig, fake: &FakeProvider, schedule: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let runs: usize = rig.sql("SELECT count(*) FROM task_runs").parse().unwrap();
            if runs == TASKS {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{runs} of {TASKS} tasks ran:\n{}\n{schedule}",
                rig.sql("SELECT task_id, next_run, status FROM tasks")
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let mut prompts = BTreeMap::<usize, usize>::new();
        for request in fake.requests() {
            let text = request.to_string();
            if let Some(i) = (0..TASKS).find(|i| text.contains(&format!("Chaos task {i}."))) {
                *prompts.entry(i).or_default() += 1;
            }
        }
        let twice: Vec<_> = prompts.iter().filter(|(_, n)| **n > 1).collect();
        assert!(twice.is_empty(), "tasks run twice: {twice:?}\n{schedule}");
        let finished: usize = rig
            .sql("SELECT count(*) FROM task_runs WHERE outcome IS NOT NULL")
            .parse()
            .unwrap();
        self.lines.push(format!(
            "tasks: {TASKS} due across the run, each run once ({finished} finished, {} asked \
             the model)",
            prompts.len()
        ));
    }
}

/// Whether an answered call's outcome may be missing: PostgreSQL could not take it, so it was
/// kept in its replica's memory (the replica logs that it keeps some), and was lost with the
/// replica, killed meanwhile, or logged whole, request id and all, when it shut down first.
/// Either way the audit then rightly holds `unknown` alone.
fn lost_with_replica<'a>(rig: &'a Rig, schedule: &str) -> impl Fn(&Call) -> bool + 'a {
    let logs: BTreeMap<&str, String> = rig
        .replicas
        .iter()
        .map(|r| (r.id, crate::postgres::log(r)))
        .collect();
    let killed: BTreeSet<&str> = schedule
        .lines()
        .filter_map(|line| line.split("Kill(").nth(1)?.split(')').next()?.parse().ok())
        .map(|i: usize| rig.replicas[i].id)
        .collect();
    move |c: &Call| {
        c.replica.as_deref().is_some_and(|r| {
            logs[r].contains("outcomes that cannot be written are kept")
                && (killed.contains(r) || logs[r].contains(&format!("\"{}\"", c.id)))
        })
    }
}
