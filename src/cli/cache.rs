//! `cache list|clear`: the cache of remote bases, and the build flags that choose it.
use std::path::PathBuf;

use clap::{Args, Subcommand};
use peerpods_build::helm::cache::RenderCache;
use peerpods_build::remote::{Cache, RemoteOptions};

/// Where remote bases (git URLs in `resources`/`components`) are cached.
#[derive(Args, Clone, Debug, Default)]
pub struct RemoteArgs {
    /// The cache folder for remote bases (default: $PEERPODS_BUILD_CACHE, else
    /// $XDG_CACHE_HOME/peerpods-build or ~/.cache/peerpods-build).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Fetch nothing: build remote bases from the cache only (tags and branches as last fetched),
    /// and helm charts from the render cache without running helm.
    #[arg(long)]
    pub offline: bool,
    /// Print a line on stderr for each remote fetch that takes over a second (the default
    /// when stderr is a terminal).
    #[arg(long, conflicts_with = "quiet")]
    pub progress: bool,
    /// Print no progress line.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

impl RemoteArgs {
    pub fn options(&self) -> RemoteOptions {
        use peerpods_build::remote::progress::Progress;
        let progress = match (self.progress, self.quiet) {
            (true, _) => Progress::Always,
            (_, true) => Progress::Never,
            _ => Progress::Auto,
        };
        RemoteOptions { cache_dir: self.cache_dir.clone(), offline: self.offline, progress }
    }
}

#[derive(Args)]
pub struct CacheArgs {
    #[command(subcommand)]
    action: CacheAction,
    /// The cache folder (default: $PEERPODS_BUILD_CACHE, else the platform cache folder).
    #[arg(long, global = true, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
}

#[derive(Subcommand)]
enum CacheAction {
    /// One line per cached checkout (URL, commit, the tags/branches last seen there, folder),
    /// then one per cached helm rendering (`helm`, key, chart and release, file).
    List,
    /// Remove every cached checkout and helm rendering.
    Clear,
}

pub fn run(args: &CacheArgs) -> Result<(), String> {
    let cache = Cache::locate(args.cache_dir.as_deref());
    match args.action {
        CacheAction::List => {
            let cache = Cache::open(args.cache_dir.as_deref()).map_err(|e| format!("cache {}: {e}", cache.root().display()))?;
            let mut lines = Vec::new();
            for entry in cache.list() {
                let refs = if entry.refs.is_empty() { "-".to_string() } else { entry.refs.join(",") };
                let mut notes = Vec::new();
                if !entry.submodules {
                    notes.push("without submodules");
                }
                if !entry.intact {
                    notes.push("damaged: fetched again on next use");
                }
                let notes = if notes.is_empty() { String::new() } else { format!(" ({})", notes.join(", ")) };
                lines.push(format!("{}\t{}\t{refs}\t{}{notes}\n", entry.url, entry.commit, entry.path.display()));
            }
            for rendering in RenderCache::in_folder(cache.folder()).list() {
                let notes = if rendering.intact { "" } else { " (damaged: rendered again on next use)" };
                lines.push(format!("helm\t{}\t{}\t{}{notes}\n", rendering.key, rendering.about, rendering.path.display()));
            }
            super::stdout::print(lines.concat().as_bytes())
        }
        CacheAction::Clear => {
            // Both kinds of entry go while the folder is held: no build reads either meanwhile.
            let renderings = RenderCache::in_folder(cache.folder());
            let (checkouts, rendered) = cache
                .folder()
                .exclusively(|| Ok((cache.clear()?, renderings.clear()?)))
                .map_err(|e| format!("clearing {}: {e}", cache.root().display()))?;
            eprintln!("removed {} cached checkout(s) and {} helm rendering(s) from {}", checkouts.removed, rendered.removed, cache.root().display());
            for kept in checkouts.kept.iter().chain(&rendered.kept) {
                eprintln!("left {}: it carries no cache marker (not made by peerpods-build)", kept.display());
            }
            Ok(())
        }
    }
}
