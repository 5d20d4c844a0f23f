//! `man [COMMAND...]`: a manual page (roff), generated from the command-line definition:
//! `peerpods-build.1`, or `peerpods-build-COMMAND.1` for one command (`man edit set` for a
//! command of a command), with EXAMPLES, EXIT STATUS and ENVIRONMENT sections.

use clap::CommandFactory;

use super::{exit_status, Cli, Failure};

/// The environment a build reads (also `diff`'s, whose sides are builds, and that of `deps` and
/// `affected`, which fetch the remote bases a build reads).
const BUILD_ENVIRONMENT: &[(&str, &str)] = &[
    ("PEERPODS_BUILD_CACHE", "the cache of remote bases (else $XDG_CACHE_HOME/peerpods-build, else ~/.cache/peerpods-build)"),
    ("XDG_CACHE_HOME, HOME", "where the cache is when PEERPODS_BUILD_CACHE is not set"),
    ("KUSTOMIZE_ENABLE_MANAGEDBY_LABEL", "`on` does what --enable-managedby-label does, as in kustomize"),
    ("GIT_SSH_COMMAND, GIT_ASKPASS, GIT_CONFIG_*, GIT_SSL_CAINFO", "passed to git for remote bases; GIT_DIR, GIT_WORK_TREE and the like are dropped"),
    ("GIT_TERMINAL_PROMPT", "set to 0 for git unless set: a missing password fails at once"),
    ("HTTPS_PROXY, HTTP_PROXY, NO_PROXY", "the proxy for remote files and git over HTTPS"),
];

/// The environment of the cache commands.
const CACHE_ENVIRONMENT: &[(&str, &str)] = &[
    ("PEERPODS_BUILD_CACHE", "the cache of remote bases (else $XDG_CACHE_HOME/peerpods-build, else ~/.cache/peerpods-build)"),
    ("XDG_CACHE_HOME, HOME", "where the cache is when PEERPODS_BUILD_CACHE is not set"),
];

/// Prints the page of the program, or of the command named by `path` (`["edit", "set"]`), on stdout.
pub fn run(path: &[String]) -> Result<(), Failure> {
    let mut program = Cli::command();
    // Building sets each command's full names (`peerpods-build-build`, `peerpods-build build`),
    // which the page's title and synopsis use.
    program.build();
    let mut command = program;
    for name in path {
        let sub = command.find_subcommand(name).ok_or_else(|| {
            let known: Vec<&str> = command.get_subcommands().map(|c| c.get_name()).collect();
            Failure::Usage(format!("no command named {:?} (commands: {})", path.join(" "), known.join(", ")))
        })?;
        command = sub.clone();
    }
    let command = command.version(env!("CARGO_PKG_VERSION"));
    let page = render(command, path.first().map(String::as_str)).map_err(|e| format!("writing the manual page: {e}"))?;
    super::stdout::print(&page).map_err(Failure::from)
}

fn render(command: clap::Command, top: Option<&str>) -> std::io::Result<Vec<u8>> {
    let examples = command.get_after_help().map(|h| h.to_string());
    let mut page = Vec::new();
    clap_mangen::Man::new(command).render(&mut page)?;
    let page = String::from_utf8_lossy(&page).into_owned();
    // clap's EXTRA section (the help's examples, as one paragraph) gives way to ours, which
    // go before VERSION.
    let page = without_section(&page, ".SH EXTRA");
    let version_at = page.find(".SH VERSION").unwrap_or(page.len());
    let (before_version, version) = page.split_at(version_at);
    let mut head = before_version.to_string();
    let mut sections = Vec::new();
    if let Some(examples) = examples {
        // The help's text after its `Examples:` line, up to its exit statuses.
        let body = examples.split("Exit status:").next().unwrap_or_default();
        let body: Vec<&str> = body.lines().filter(|l| !l.starts_with("Example")).collect();
        section(&mut sections, "EXAMPLES", &body.join("\n"));
    }
    let statuses: Vec<&str> = exit_status!().lines().skip(1).map(str::trim).collect();
    section(&mut sections, "EXIT STATUS", &statuses.join("\n"));
    let environment = match top {
        None | Some("build") | Some("diff") | Some("check-settings") | Some("localize") | Some("deps") | Some("affected") => BUILD_ENVIRONMENT,
        Some("cache") => CACHE_ENVIRONMENT,
        Some(_) => &[],
    };
    let environment = if environment.is_empty() {
        "This command reads no environment variable of its own.".to_string()
    } else {
        environment.iter().map(|(name, what)| format!("{name}\n    {what}")).collect::<Vec<_>>().join("\n")
    };
    section(&mut sections, "ENVIRONMENT", &environment);
    head.push_str(&String::from_utf8_lossy(&sections));
    head.push_str(version);
    Ok(head.into_bytes())
}

/// `page` without the section that starts with `title` (up to the next `.SH`).
fn without_section(page: &str, title: &str) -> String {
    let Some(start) = page.find(title) else { return page.to_string() };
    let rest = &page[start + title.len()..];
    let end = rest.find(".SH ").map_or(page.len(), |i| start + title.len() + i);
    format!("{}{}", &page[..start], &page[end..])
}

/// A section of lines kept as written (`.nf`), escaped for roff.
fn section(page: &mut Vec<u8>, title: &str, text: &str) {
    let mut out = format!(".SH \"{title}\"\n.nf\n");
    for line in text.trim_matches('\n').lines() {
        let escaped = line.replace('\\', "\\e").replace('-', "\\-");
        if escaped.starts_with('.') || escaped.starts_with('\'') {
            out.push_str("\\&");
        }
        out.push_str(&escaped);
        out.push('\n');
    }
    out.push_str(".fi\n");
    page.extend_from_slice(out.as_bytes());
}
