//! Blocking work (a database query, file I/O) inside async tools.

use std::cell::Cell;

thread_local! {
    /// Set on the thread of a one-shot process's runtime (see [`InlineGuard`]).
    static INLINE: Cell<bool> = const { Cell::new(false) };
}

/// Runs blocking work, such as a database query or file I/O, from an async tool without
/// stalling the other calls of a server: on tokio's blocking pool, like
/// [`tokio::task::spawn_blocking`], or inline in a one-shot command-line process.
///
/// One-shot means `App::main` (feature `cli`) running a single command (a tool call,
/// not `serve` or `mcp`) on a current-thread runtime: no other call is waiting there, and
/// starting a pool thread for one query costs more than most queries do. Inline work is not cut short by the call's time
/// limit; work on the pool is not either (it runs on after the caller is told `timeout`).
///
/// A panic in `f` resumes in the caller, where the pipeline turns it into an `internal` error.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let sum = tool_runtime::blocking(|| (1..=10).sum::<u32>()).await;
/// assert_eq!(sum, 55);
/// # }
/// ```
///
/// # Panics
///
/// Outside a tokio runtime, unless inline; and if the runtime shuts down before `f` ran.
pub async fn blocking<T, F>(f: F) -> T
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    if INLINE.with(Cell::get) {
        return f();
    }
    match tokio::task::spawn_blocking(f).await {
        Ok(value) => value,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => panic!("blocking work was not run: {e}"),
    }
}

/// While alive, [`blocking`] runs its work inline on this thread.
#[cfg_attr(not(feature = "cli"), allow(dead_code))]
pub(crate) struct InlineGuard(bool);

#[cfg_attr(not(feature = "cli"), allow(dead_code))]
impl InlineGuard {
    pub(crate) fn enter() -> Self {
        Self(INLINE.with(|inline| inline.replace(true)))
    }
}

impl Drop for InlineGuard {
    fn drop(&mut self) {
        INLINE.with(|inline| inline.set(self.0));
    }
}

#[cfg(test)]
mod tests {
    use super::{InlineGuard, blocking};
    use std::thread;

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn runs_on_the_pool_unless_inline() {
        let here = thread::current().id();
        let elsewhere = blocking(|| thread::current().id()).await;
        assert_ne!(elsewhere, here);
        let guard = InlineGuard::enter();
        assert_eq!(blocking(|| thread::current().id()).await, here);
        drop(guard);
        assert_ne!(blocking(|| thread::current().id()).await, here);
    }

    #[tokio::test]
    async fn a_panic_resumes_in_the_caller() {
        use futures_util::FutureExt;
        for inline in [false, true] {
            let _guard = inline.then(InlineGuard::enter);
            let caught = std::panic::AssertUnwindSafe(blocking(|| -> u8 { panic!("boom") }))
                .catch_unwind()
                .await
                .expect_err("the panic reaches the caller");
            assert_eq!(caught.downcast_ref::<&str>(), Some(&"boom"));
        }
    }
}
