//! Blocking work (a database query, file I/O) inside async tools.

use std::cell::Cell;

thread_local! {
    /// Set on the thread of a one-shot process's runtime, where [`blocking`] runs its work
    /// inline: the command line's, while its guard lives.
    pub(crate) static INLINE: Cell<bool> = const { Cell::new(false) };
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

#[cfg(test)]
mod tests {
    use super::{INLINE, blocking};
    use std::thread;

    /// Work inline on this thread from now on, or not; what it was before.
    fn inline(on: bool) -> bool {
        INLINE.with(|inline| inline.replace(on))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn runs_on_the_pool_unless_inline() {
        let here = thread::current().id();
        let elsewhere = blocking(|| thread::current().id()).await;
        assert_ne!(elsewhere, here);
        inline(true);
        assert_eq!(blocking(|| thread::current().id()).await, here);
        inline(false);
        assert_ne!(blocking(|| thread::current().id()).await, here);
    }

    #[tokio::test]
    async fn a_panic_resumes_in_the_caller() {
        use futures_util::FutureExt;
        for inline_work in [false, true] {
            let before = inline(inline_work);
            let caught = std::panic::AssertUnwindSafe(blocking(|| -> u8 { panic!("boom") }))
                .catch_unwind()
                .await
                .expect_err("the panic reaches the caller");
            assert_eq!(caught.downcast_ref::<&str>(), Some(&"boom"));
            inline(before);
        }
    }
}
