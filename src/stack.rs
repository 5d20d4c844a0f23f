//! Deep documents and the stack. Values as deep as the parser allows ([`crate::yaml::parse::MAX_DEPTH`])
//! are walked recursively by the parser's builder, the transformers, the patches, the emitter and
//! `Value`'s own clone, comparison and drop, which a default 2 MiB thread cannot hold. So a build,
//! its printing and its dropping run on the library's own thread pool, whose threads have a
//! large stack: the caller's thread may be of any size, and rayon's global pool is left alone.
use std::sync::OnceLock;

use rayon::{ThreadPool, ThreadPoolBuilder};

/// The stack of the threads doing a build's work: room for the deepest document in a debug
/// build. It is reserved address space; only the pages a deep document touches are used.
pub const STACK_SIZE: usize = 512 << 20;

/// Runs `work` (and every parallel step inside it) on the library's pool, whose threads have
/// [`STACK_SIZE`] of stack; a panic in `work` goes on in the caller.
pub fn on_large_stack<T: Send>(work: impl FnOnce() -> T + Send) -> Result<T, String> {
    Ok(pool()?.install(work))
}

/// Drops `value` on the library's pool, waiting until it is gone; where the pool cannot be
/// had, here.
pub fn drop_on_large_stack<T: Send>(value: T) {
    match pool() {
        Ok(pool) => pool.install(move || drop(value)),
        Err(_) => drop(value),
    }
}

/// How many threads the library's pool has (one where it cannot be had).
pub fn threads() -> usize {
    pool().map_or(1, ThreadPool::current_num_threads)
}

fn pool() -> Result<&'static ThreadPool, String> {
    static POOL: OnceLock<Result<ThreadPool, String>> = OnceLock::new();
    POOL.get_or_init(|| {
        ThreadPoolBuilder::new()
            .stack_size(STACK_SIZE)
            .thread_name(|i| format!("peerpods-build-{i}"))
            .build()
            .map_err(|e| format!("starting the build threads: {e}"))
    })
    .as_ref()
    .map_err(Clone::clone)
}
