//! A stop asked for by another thread: while a flag is set for this thread
//! ([`reading_until_stopped`]), every open and read of a session file here fails once the
//! flag says stop, so a long parse or scan on this thread (a call whose client gave up) ends at its
//! next read instead of running to its end. Readers need no parameter for it.

use std::cell::RefCell;
use std::io;
use std::sync::Arc;

/// Something another thread sets to stop this thread's reads.
pub trait StopFlag: Send + Sync {
    /// Returns whether the reads should stop.
    fn is_stopped(&self) -> bool;
}

thread_local! {
    static FLAG: RefCell<Option<Arc<dyn StopFlag>>> = const { RefCell::new(None) };
}

/// Runs `run` with `flag` watched by every read on this thread, then watches nothing again
/// (also when `run` panics).
pub fn reading_until_stopped<R>(flag: Arc<dyn StopFlag>, run: impl FnOnce() -> R) -> R {
    struct Reset(Option<Arc<dyn StopFlag>>);
    impl Drop for Reset {
        fn drop(&mut self) {
            let previous = self.0.take();
            FLAG.with(|flag| *flag.borrow_mut() = previous);
        }
    }
    let previous = FLAG.with(|current| current.borrow_mut().replace(flag));
    let _reset = Reset(previous);
    run()
}

/// Returns the flag this thread's reads watch, if any: work handed to other threads (a
/// thread pool's tasks) watches it too through [`reading_while`].
pub fn watched_stop() -> Option<Arc<dyn StopFlag>> {
    FLAG.with(|flag| flag.borrow().clone())
}

/// Runs `run` watching `flag` when there is one (see [`reading_until_stopped`]), else as it
/// is: for a task on another thread, given the flag its caller watched.
pub fn reading_while<R>(flag: Option<Arc<dyn StopFlag>>, run: impl FnOnce() -> R) -> R {
    match flag {
        Some(flag) => reading_until_stopped(flag, run),
        None => run(),
    }
}

/// Returns an error when this thread's reads were asked to stop.
pub(crate) fn check() -> io::Result<()> {
    let is_stopped = FLAG.with(|flag| flag.borrow().as_ref().is_some_and(|flag| flag.is_stopped()));
    if is_stopped {
        Err(io::Error::other("stopped: the call was interrupted"))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    struct Flag(AtomicBool);

    impl StopFlag for Flag {
        fn is_stopped(&self) -> bool {
            self.0.load(Ordering::Relaxed)
        }
    }

    /// Reads on this thread fail once the flag is set, and only while it is watched.
    #[test]
    fn reads_stop_while_the_flag_is_watched() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, "a\nb\n".repeat(100_000)).expect("write");
        let file = std::fs::File::open(&path).expect("open");
        let flag = Arc::new(Flag(AtomicBool::new(false)));
        let mut buffer = [0u8; 4];
        let count = |file: &std::fs::File| crate::for_each_line(file, u64::MAX, 1 << 20, |_| {});
        reading_until_stopped(flag.clone(), || {
            assert!(crate::read_at(&file, &mut buffer, 0).is_ok());
            assert!(count(&file).is_ok());
            flag.0.store(true, Ordering::Relaxed);
            assert!(crate::read_at(&file, &mut buffer, 0).is_err());
            assert!(crate::open_session_file(&path).is_err());
            let error = count(&file).expect_err("stopped");
            assert!(error.to_string().contains("interrupted"), "{error}");
        });
        // Not watched any more.
        assert!(crate::read_at(&file, &mut buffer, 0).is_ok());
        assert!(count(&file).is_ok());
        assert!(crate::open_session_file(&path).is_ok());
    }
}
