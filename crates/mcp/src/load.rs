//! The bounds on the server's load: how many calls run at once, how many may wait, how long
//! one may run, and how many answers may wait for the client to read them.
//!
//! Calls run in the order they arrived (tokio's semaphore is fair), at most
//! [`LoadLimits::max_running`] at a time; a call beyond [`LoadLimits::max_waiting`] waiting
//! ones is answered at once with a tool error saying to retry. A call starts only while fewer
//! than [`LoadLimits::max_unwritten`] answers are unwritten, and the transport stops reading
//! at the same bound, so a client that stops reading leaves the server holding a bounded
//! number of answers and requests.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};

/// The bounds a server runs within.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadLimits {
    /// How many calls run at once.
    pub max_running: usize,
    /// How many calls may wait for a turn; one more is refused with a tool error.
    pub max_waiting: usize,
    /// How many answers may wait for the client to read them before the server stops
    /// reading requests and starting calls.
    pub max_unwritten: usize,
    /// How long one call may run before it is stopped with a tool error.
    pub call_timeout: Duration,
}

/// The default time budget of one call.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(30);

impl Default for LoadLimits {
    /// Returns as many running calls as the machine has threads, 512 waiting, 32 unwritten
    /// answers and a 30 s budget per call.
    fn default() -> LoadLimits {
        let n_threads = std::thread::available_parallelism().map_or(1, usize::from);
        LoadLimits {
            max_running: n_threads,
            // Enough for one agent's `Promise.all` over hundreds of calls; a waiting call
            // holds only its arguments.
            max_waiting: 512,
            // One answer is at most a page (256 KiB of JSON), so this bounds unread answers
            // to a few MiB.
            max_unwritten: 32,
            call_timeout: DEFAULT_CALL_TIMEOUT,
        }
    }
}

/// The shared state of the bounds: the running slots, the waiting count and the unwritten
/// answers.
#[derive(Debug)]
pub(crate) struct Load {
    limits: LoadLimits,
    running: Arc<Semaphore>,
    n_waiting: AtomicUsize,
    n_unwritten: watch::Sender<usize>,
}

/// Why a call got no turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NoTurn {
    /// Too many calls are waiting already.
    Busy,
}

impl Load {
    /// Returns the state of a server within `limits` (at least one call runs at once).
    pub(crate) fn new(limits: LoadLimits) -> Load {
        let limits = LoadLimits {
            max_running: limits.max_running.max(1),
            max_unwritten: limits.max_unwritten.max(1),
            ..limits
        };
        Load {
            limits,
            running: Arc::new(Semaphore::new(limits.max_running)),
            n_waiting: AtomicUsize::new(0),
            n_unwritten: watch::Sender::new(0),
        }
    }

    /// Returns the bounds.
    pub(crate) fn limits(&self) -> LoadLimits {
        self.limits
    }

    /// Waits for this call's turn to run, in arrival order, and returns the slot it runs in
    /// (given back when dropped), or [`NoTurn::Busy`] at once when too many calls wait.
    pub(crate) async fn turn(&self) -> Result<OwnedSemaphorePermit, NoTurn> {
        if self.n_waiting.fetch_add(1, Ordering::SeqCst) >= self.limits.max_waiting {
            self.n_waiting.fetch_sub(1, Ordering::SeqCst);
            return Err(NoTurn::Busy);
        }
        let waiting = WaitingGuard(&self.n_waiting);
        // The semaphore is never closed, so acquiring fails only after `close`.
        let permit = Arc::clone(&self.running).acquire_owned().await;
        // A call starts only while the client reads what is answered; the slot is held
        // meanwhile so that later calls stay behind this one.
        self.wait_for_writer().await;
        drop(waiting);
        permit.map_err(|_closed| NoTurn::Busy)
    }

    /// Waits until fewer than `max_unwritten` answers wait for the client.
    pub(crate) async fn wait_for_writer(&self) {
        let mut receiver = self.n_unwritten.subscribe();
        let max = self.limits.max_unwritten;
        // The sender lives in `self`, so the channel cannot close while this waits.
        let _ = receiver.wait_for(|n_unwritten| *n_unwritten < max).await;
    }

    /// Counts one answer as unwritten until the returned guard is dropped.
    pub(crate) fn unwritten_answer(self: &Arc<Load>) -> UnwrittenGuard {
        self.n_unwritten.send_modify(|n| *n += 1);
        UnwrittenGuard(Arc::clone(self))
    }
}

/// Counts a call as waiting while it lives (also when the waiting future is dropped).
struct WaitingGuard<'load>(&'load AtomicUsize);

impl Drop for WaitingGuard<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// One answer handed to the transport and not yet written.
pub(crate) struct UnwrittenGuard(Arc<Load>);

impl Drop for UnwrittenGuard {
    fn drop(&mut self) {
        self.0.n_unwritten.send_modify(|n| *n = n.saturating_sub(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max_running: usize, max_waiting: usize) -> LoadLimits {
        LoadLimits {
            max_running,
            max_waiting,
            max_unwritten: 2,
            call_timeout: DEFAULT_CALL_TIMEOUT,
        }
    }

    #[test]
    fn a_call_past_the_waiting_bound_is_refused_and_the_others_run_in_order() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        runtime.block_on(async {
            let load = Arc::new(Load::new(limits(1, 2)));
            let first = load.turn().await.expect("a free slot");
            let order = Arc::new(std::sync::Mutex::new(Vec::new()));
            let mut waiters = Vec::new();
            for index in 0..2 {
                let load = Arc::clone(&load);
                let order = Arc::clone(&order);
                waiters.push(tokio::spawn(async move {
                    let _slot = load.turn().await.expect("within the bound");
                    order.lock().expect("no panic").push(index);
                    tokio::task::yield_now().await;
                }));
            }
            tokio::task::yield_now().await;
            assert_eq!(load.turn().await.err(), Some(NoTurn::Busy));
            drop(first);
            for waiter in waiters {
                waiter.await.expect("no panic");
            }
            assert_eq!(*order.lock().expect("no panic"), vec![0, 1]);
        });
    }

    #[test]
    fn no_call_starts_while_answers_are_unwritten() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        runtime.block_on(async {
            let load = Arc::new(Load::new(limits(4, 4)));
            let answers = [load.unwritten_answer(), load.unwritten_answer()];
            let waiting = {
                let load = Arc::clone(&load);
                tokio::spawn(async move { load.turn().await.map(drop) })
            };
            for _ in 0..10 {
                tokio::task::yield_now().await;
            }
            assert!(
                !waiting.is_finished(),
                "a call started with the writer full"
            );
            drop(answers);
            assert_eq!(waiting.await.expect("no panic"), Ok(()));
        });
    }
}
