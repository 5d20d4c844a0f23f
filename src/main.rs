//! The `peerpods-build` program: the command line lives in `cli/`, the engine in the library.

mod cli;

/// Builds allocate many small values from several threads at once; mimalloc serves those
/// without the lock and page-protection traffic of the system allocator's per-thread heaps.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    cli::main()
}
