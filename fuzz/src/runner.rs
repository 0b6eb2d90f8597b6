//! Running one input through a target: the panic hook that records every panic (with its
//! location and backtrace, also those a served agent caught on its own tasks), `catch_unwind`
//! around the target, and the feedback a target gives about what its input did.

use std::backtrace::Backtrace;
use std::cell::RefCell;
use std::hash::{DefaultHasher, Hash as _, Hasher as _};
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Mutex, Once};

use crate::targets::Target;

/// A panic the hook recorded.
#[derive(Debug, Clone)]
pub struct Panicked {
    /// The panic's message.
    pub message: String,
    /// Where it panicked (`file:line:column`).
    pub location: String,
    /// The thread it panicked on.
    pub thread: String,
    /// Its backtrace (captured whatever `RUST_BACKTRACE` says).
    pub backtrace: String,
}

impl std::fmt::Display for Panicked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "panicked at {} (thread `{}`):\n{}\n\nbacktrace:\n{}",
            self.location, self.thread, self.message, self.backtrace
        )
    }
}

/// Every panic since the last [`run_one`] began, in order.
static PANICS: Mutex<Vec<Panicked>> = Mutex::new(Vec::new());
static HOOK: Once = Once::new();

thread_local! {
    /// The features of the input running on this thread.
    static FEEDBACK: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// Installs the panic hook that records panics instead of printing them (once per process).
pub fn install_panic_hook() {
    HOOK.call_once(|| {
        panic::set_hook(Box::new(|info| {
            let message = match info.payload().downcast_ref::<&str>() {
                Some(s) => (*s).to_owned(),
                None => info
                    .payload()
                    .downcast_ref::<String>()
                    .cloned()
                    .unwrap_or_else(|| "(a panic without a message)".to_owned()),
            };
            let recorded = Panicked {
                message,
                location: info
                    .location()
                    .map_or_else(|| "(unknown)".to_owned(), ToString::to_string),
                thread: std::thread::current()
                    .name()
                    .unwrap_or("(unnamed)")
                    .to_owned(),
                backtrace: Backtrace::force_capture().to_string(),
            };
            PANICS
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(recorded);
        }));
    });
}

/// Notes a feature of what the running input did (an HTTP status, an error code, a rule of
/// the linter): its first words, up to the first quote or colon (what follows is often the
/// input's), digits dropped (ids, counts, positions). An input with a feature no input
/// had before joins the corpus.
pub fn feedback(outcome: &str) {
    let mut hasher = DefaultHasher::new();
    let unquoted: String = outcome
        .chars()
        .take_while(|c| !matches!(c, '`' | '"' | '\''))
        .filter(|c| !c.is_ascii_digit())
        .take(48)
        .collect();
    // What follows a colon is often the input's (`task not found: ID`), unless the text before
    // it is a short heading (`parse error: expected value`): then one more word.
    let words: Vec<&str> = unquoted.split_whitespace().collect();
    let colon = words.iter().position(|w| w.ends_with(':'));
    let keep = match colon {
        Some(i) if i < 2 => i + 2,
        Some(i) => i + 1,
        None => 4,
    };
    words
        .iter()
        .take(keep.min(4))
        .for_each(|word| word.hash(&mut hasher));
    let feature = hasher.finish();
    if std::env::var_os("FUZZ_FEATURES").is_some() {
        eprintln!("feature {feature:016x}: {unquoted}");
    }
    FEEDBACK.with(|f| f.borrow_mut().push(feature));
}

/// Runs `target` on `data`: the features of what it did (see [`feedback`]), or the first panic
/// it caused (in the target, or on any task of the agent it served, while it ran).
pub fn run_one(target: &Target, data: &[u8]) -> Result<Vec<u64>, Panicked> {
    FEEDBACK.with(|f| f.borrow_mut().clear());
    guarded(
        AssertUnwindSafe(|| (target.run)(data)),
        "a panic the hook did not see",
    )?;
    Ok(FEEDBACK.with(|f| std::mem::take(&mut *f.borrow_mut())))
}

/// Checks that `target`'s agent still serves a valid request (the panic, if not).
pub fn check_alive(target: &Target) -> Result<(), Panicked> {
    let Some(alive) = target.alive else {
        return Ok(());
    };
    guarded(alive, "the liveness check panicked")
}

/// Runs `work`: the first panic it caused (the hook's record of it, on any thread, or
/// `unseen` where the hook saw none), if it caused one.
fn guarded(work: impl FnOnce() + panic::UnwindSafe, unseen: &str) -> Result<(), Panicked> {
    install_panic_hook();
    PANICS.lock().unwrap_or_else(|p| p.into_inner()).clear();
    let caught = panic::catch_unwind(work);
    let first = PANICS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .drain(..)
        .next();
    match (caught, first) {
        (_, Some(panicked)) => Err(panicked),
        (Err(_), None) => Err(Panicked {
            message: unseen.to_owned(),
            location: "(unknown)".to_owned(),
            thread: "(unknown)".to_owned(),
            backtrace: String::new(),
        }),
        (Ok(()), None) => Ok(()),
    }
}

/// A stable 64-bit hash of `data` (FNV-1a), for crash file names.
pub fn fnv1a(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}
