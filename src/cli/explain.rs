//! `explain`: the build's output with, after each field, the file:line:column and the step
//! that set it; one field's history (`--field`); or the same as JSON (`--format json`).
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use clap::{Args, ValueEnum};
use peerpods_build::explain::{render, Recorder};
use peerpods_build::kustomization::LoadRestrictor;
use peerpods_build::resource::Resource;
use peerpods_build::{build, BuildOptions};
use rayon::prelude::*;
use serde_json::{json, Value};

#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    Yaml,
    Json,
}

#[derive(Args)]
pub struct ExplainArgs {
    /// The kustomization directory.
    #[arg(default_value = ".")]
    dir: PathBuf,
    /// Only this resource: KIND/NAME or KIND/NAME.NAMESPACE.
    #[arg(long, value_name = "KIND/NAME[.NAMESPACE]")]
    resource: Option<String>,
    /// The whole history of one field (`spec.template.spec.containers[name=app].image`).
    #[arg(long, value_name = "PATH")]
    field: Option<String>,
    /// `yaml`: the output with comments (or the field's history); `json`: path -> events.
    #[arg(long, value_enum, default_value = "yaml")]
    format: Format,
    /// LoadRestrictionsRootOnly (files must stay inside each kustomization's folder) or LoadRestrictionsNone.
    #[arg(long, default_value = "LoadRestrictionsRootOnly")]
    load_restrictor: String,
    #[command(flatten)]
    remote: super::cache::RemoteArgs,
}

pub fn run(args: &ExplainArgs) -> Result<(), String> {
    let load_restrictor = match args.load_restrictor.as_str() {
        "LoadRestrictionsRootOnly" | "rootOnly" => LoadRestrictor::RootOnly,
        "LoadRestrictionsNone" | "none" => LoadRestrictor::None,
        other => return Err(format!("illegal value for --load-restrictor: '{other}' (LoadRestrictionsRootOnly or LoadRestrictionsNone)")),
    };
    let cwd = std::env::current_dir().map_err(|e| format!("current directory: {e}"))?;
    let recorder = Some(Arc::new(Recorder::new(cwd)));
    let options = BuildOptions { load_restrictor, remote: args.remote.options(), recorder, ..Default::default() };
    let result = build(&args.dir, &options).map_err(|failure| {
        for warning in &failure.diagnostics.warnings {
            eprintln!("{warning}");
        }
        failure.error.to_string()
    })?;
    for warning in &result.diagnostics.warnings {
        eprintln!("{warning}");
    }
    let selected: Vec<&Resource> =
        result.resources.iter().filter(|r| args.resource.as_deref().is_none_or(|wanted| render::matches_resource(r, wanted))).collect();
    if let Some(wanted) = &args.resource {
        if selected.is_empty() {
            return Err(format!("--resource {wanted}: no such resource in the output of {}", args.dir.display()));
        }
    }
    // Deep documents need the build's large stack.
    peerpods_build::stack::on_large_stack(|| {
        let mut out = std::io::stdout().lock();
        let written = match (&args.field, args.format) {
            (None, Format::Yaml) => write_annotated(&selected, &mut out),
            (None, Format::Json) => out.write_all(json_text(selected.iter().map(|r| render::resource_json(r, None)).collect()).as_bytes()),
            (Some(field), format) => out.write_all(field_history(field, format, &selected)?.as_bytes()),
        };
        super::stdout::quiet_when_closed(written).map_err(|e| format!("writing output: {e}"))
    })??;
    std::mem::forget(result);
    Ok(())
}

/// The annotated output, rendered in parallel a slice at a time and written as it goes: a large
/// build's comments are three times its output, not worth holding whole.
fn write_annotated(selected: &[&Resource], out: &mut impl Write) -> std::io::Result<()> {
    for (n, slice) in selected.chunks(256).enumerate() {
        let texts: Vec<String> = slice.par_iter().map(|r| render::annotated(r)).collect();
        for (i, text) in texts.iter().enumerate() {
            if n > 0 || i > 0 {
                out.write_all(b"---\n")?;
            }
            out.write_all(text.as_bytes())?;
        }
    }
    Ok(())
}

/// The history of `field` in each selected resource that has it.
fn field_history(field: &str, format: Format, selected: &[&Resource]) -> Result<String, String> {
    let found: Vec<(&Resource, Vec<_>)> =
        selected.iter().filter_map(|r| render::resolve_path(&r.value, field).map(|path| (*r, path))).collect();
    if found.is_empty() {
        return Err(format!("--field {field}: no selected resource has this field"));
    }
    Ok(match format {
        Format::Yaml => found.iter().map(|(r, path)| render::field_history_text(r, path)).collect::<Vec<_>>().join("\n"),
        Format::Json => json_text(found.iter().map(|(r, path)| render::resource_json(r, Some(path))).collect()),
    })
}

fn json_text(resources: Vec<Value>) -> String {
    let mut text = serde_json::to_string_pretty(&json!({"resources": resources})).unwrap_or_default();
    text.push('\n');
    text
}
