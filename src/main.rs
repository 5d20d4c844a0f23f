//! The `peerpods-build` program: the command line lives in `cli/`, the engine in the library.

mod cli;

#[global_allocator]
static ALLOCATOR: peerpods_build::allocator::Allocator = peerpods_build::allocator::Allocator;

fn main() -> std::process::ExitCode {
    cli::main()
}
