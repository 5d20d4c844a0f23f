//! configMapGenerator and secretGenerator: ConfigMaps and Secrets made from literals, files and env files.
pub mod hash;

use base64::Engine;
use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::file_memo::FileMemo;
use crate::kustomization::types::{GeneratorArgs, GeneratorOptions, StringMap};
use crate::kustomization::Loader;
use crate::resource::{Behavior, Resource};

/// Which object a generator makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GeneratedKind {
    ConfigMap,
    Secret,
}

/// The most bytes of generator sources kept for the next build that reads them: the files of
/// the bases of the last few dozen apps of a monorepo.
const MEMO_SOURCE_BYTES: usize = 256 * 1024;

/// Makes one ConfigMap or Secret from a generator entry and the kustomization's `generatorOptions`.
/// `shared_files`: many builds of this process read the same kustomizations (`build DIR DIR...`),
/// so a source file unchanged since an earlier build read it is not read again.
pub fn generate(
    kind: GeneratedKind,
    args: &GeneratorArgs,
    global: Option<&GeneratorOptions>,
    loader: &Loader,
    shared_files: bool,
) -> Result<Resource> {
    let options = merge_options(args.options.as_ref(), global);
    let behavior = Behavior::from_text(&args.behavior);
    let pairs = key_value_pairs(args, loader, shared_files)?;

    let mut metadata = Map::new();
    metadata.insert("name".into(), Value::String(args.name.clone()));
    if !args.namespace.is_empty() {
        metadata.insert("namespace".into(), Value::String(args.namespace.clone()));
    }
    insert_string_map(&mut metadata, "labels", &options.labels);
    insert_string_map(&mut metadata, "annotations", &options.annotations);

    let mut object = Map::new();
    object.insert("apiVersion".into(), json!("v1"));
    object.insert("kind".into(), json!(match kind {
        GeneratedKind::ConfigMap => "ConfigMap",
        GeneratedKind::Secret => "Secret",
    }));
    object.insert("metadata".into(), Value::Object(metadata));

    let mut data = Map::new();
    let mut binary_data = Map::new();
    for (key, bytes) in pairs {
        let target = match kind {
            GeneratedKind::Secret => {
                check_key(&key, &data, "Secret", &args.name)?;
                data.insert(key, Value::String(wrapped_base64(&bytes)));
                continue;
            }
            GeneratedKind::ConfigMap => match String::from_utf8(bytes) {
                Ok(text) => {
                    check_key(&key, &data, "ConfigMap", &args.name)?;
                    check_key(&key, &binary_data, "ConfigMap", &args.name)?;
                    (&mut data, Value::String(text))
                }
                Err(e) => {
                    check_key(&key, &data, "ConfigMap", &args.name)?;
                    (&mut binary_data, Value::String(wrapped_base64(&e.into_bytes())))
                }
            },
        };
        target.0.insert(key, target.1);
    }
    // kyaml always gives a Secret a data map, even an empty one; an empty ConfigMap has none.
    if !data.is_empty() || kind == GeneratedKind::Secret {
        object.insert("data".into(), Value::Object(data));
    }
    if !binary_data.is_empty() {
        object.insert("binaryData".into(), Value::Object(binary_data));
    }
    if kind == GeneratedKind::Secret {
        let secret_type = if args.secret_type.is_empty() { "Opaque" } else { &args.secret_type };
        object.insert("type".into(), Value::String(secret_type.to_string()));
    }
    if options.immutable {
        object.insert("immutable".into(), Value::Bool(true));
    }

    let mut resource = Resource::new(Value::Object(object));
    resource.behavior = behavior;
    resource.needs_hash_suffix = !options.disable_name_suffix_hash.unwrap_or(false);
    // A label or annotation key go-yaml reads back as a boolean or a number (see
    // `Resource::plain_keys`).
    for (field, map) in [("labels", &options.labels), ("annotations", &options.annotations)] {
        for key in map.keys().filter(|k| crate::yaml::scalar::plain_key_as_go(k).is_some()) {
            let path = ["metadata", field, key.as_str()].map(|k| crate::resource::Step::Key(k.to_owned()));
            resource.plain_keys.push(path.to_vec());
        }
    }
    resource.generated = true;
    Ok(resource)
}

/// Base64 as kyaml writes Secret data and ConfigMap binaryData: lines of 70 characters, each ending in a newline, once the
/// encoding reaches 70 characters (a literal block in the output).
pub(crate) fn wrapped_base64(bytes: &[u8]) -> String {
    const LINE: usize = 70;
    let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
    if encoded.len() < LINE {
        return encoded;
    }
    let mut out = String::with_capacity(encoded.len() + encoded.len() / LINE + 1);
    for chunk in encoded.as_bytes().chunks(LINE) {
        out.push_str(std::str::from_utf8(chunk).unwrap());
        out.push('\n');
    }
    out
}

/// kustomize's `MergeGlobalOptionsIntoLocal`: the kustomization-wide options override the entry's.
fn merge_options(local: Option<&GeneratorOptions>, global: Option<&GeneratorOptions>) -> GeneratorOptions {
    let mut merged = local.cloned().unwrap_or_default();
    if let Some(g) = global {
        merged.labels.extend(g.labels.iter().map(|(k, v)| (k.clone(), v.clone())));
        merged.annotations.extend(g.annotations.iter().map(|(k, v)| (k.clone(), v.clone())));
        if g.disable_name_suffix_hash == Some(true) {
            merged.disable_name_suffix_hash = Some(true);
        }
        merged.immutable |= g.immutable;
    }
    merged
}

fn insert_string_map(target: &mut Map<String, Value>, field: &str, map: &StringMap) {
    if !map.is_empty() {
        let m = map.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
        target.insert(field.into(), Value::Object(m));
    }
}

fn check_key(key: &str, existing: &Map<String, Value>, kind: &str, name: &str) -> Result<()> {
    if existing.contains_key(key) {
        return Err(Error::msg(format!(
            "cannot add key {key}, another key by that name already exists in Data for {kind} \"{name}\""
        )));
    }
    // kustomize's key validator accepts every key (its `ErrIfInvalidKey` is a stub); the API
    // server is where a key such as `a/b` is refused.
    Ok(())
}

/// The generator's key/value pairs in kustomize's order: env files, then literals, then files.
/// A failure names its group of sources, as kustomize's `kv` loader words it.
fn key_value_pairs(args: &GeneratorArgs, loader: &Loader, shared_files: bool) -> Result<Vec<(String, Vec<u8>)>> {
    static ENV_FILES: FileMemo<Vec<(String, Vec<u8>)>> = FileMemo::new(MEMO_SOURCE_BYTES);
    static FILES: FileMemo<Vec<u8>> = FileMemo::new(MEMO_SOURCE_BYTES);
    let mut pairs = Vec::new();
    let env_files: Vec<&String> = args.envs.iter().chain(std::iter::once(&args.env).filter(|e| !e.is_empty())).collect();
    for env_file in &env_files {
        let parsed = match shared_files {
            true => loader.read_parsed(env_file, &ENV_FILES, |_, text| Ok((parse_env_file(&text)?, true))).map(|(_, parsed)| parsed.to_vec()),
            false => loader.read(env_file).and_then(|(_, text)| parse_env_file(&text)),
        };
        pairs.extend(parsed.map_err(loading_failed(|| format!("env source files: {}", go_list(&env_files))))?);
    }
    for literal in &args.literals {
        let (key, value) = parse_literal(literal).map_err(loading_failed(|| format!("literal sources {}", go_list(&args.literals))))?;
        pairs.push((key, value.into_bytes()));
    }
    for file in &args.files {
        let (key, path) = match file.split_once('=') {
            Some((k, p)) if !k.is_empty() && !p.is_empty() => (k.to_string(), p),
            Some(_) => return Err(Error::msg(format!("key or file path is missing in file source '{file}'"))),
            None => (file.rsplit('/').next().unwrap_or(file).to_string(), file.as_str()),
        };
        let read = match shared_files {
            true => loader.read_bytes_shared(path, &FILES).map(|(_, bytes)| bytes.to_vec()),
            false => loader.read_bytes(path).map(|(_, bytes)| bytes),
        };
        pairs.push((key, read.map_err(loading_failed(|| format!("file sources: {}", go_list(&args.files))))?));
    }
    Ok(pairs)
}

/// kustomize's words for a group of sources that failed; the group is worded only then.
fn loading_failed(group: impl FnOnce() -> String) -> impl FnOnce(Error) -> Error {
    move |e| Error::msg(format!("loading KV pairs: {}: {e}", group()))
}

/// A list of strings as Go's `%v` prints it: `[a b]`.
fn go_list<S: AsRef<str>>(items: &[S]) -> String {
    format!("[{}]", items.iter().map(AsRef::as_ref).collect::<Vec<_>>().join(" "))
}

/// `KEY=value`, with one pair of matching surrounding quotes removed from the value.
fn parse_literal(literal: &str) -> Result<(String, String)> {
    let Some((key, value)) = literal.split_once('=') else {
        return Err(Error::msg(format!("invalid literal source {literal}, expected key=value")));
    };
    if key.is_empty() {
        return Err(Error::msg(format!("invalid literal source {literal}, expected key=value")));
    }
    let unquoted = match value.as_bytes() {
        [first @ (b'"' | b'\''), .., last] if first == last && value.len() >= 2 => &value[1..value.len() - 1],
        _ => value,
    };
    Ok((key.to_string(), unquoted.to_string()))
}

/// An env file: `KEY=value` lines; blank lines and `#` comments skipped; a bare `KEY` takes the
/// value of that environment variable, as kustomize does.
fn parse_env_file(text: &str) -> Result<Vec<(String, Vec<u8>)>> {
    let mut pairs = Vec::new();
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for raw in text.split('\n') {
        let line = raw.strip_suffix('\r').unwrap_or(raw).trim_start();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k, v.to_string()),
            None => (line, std::env::var(line).unwrap_or_default()),
        };
        // As with literal keys, kustomize's `IsEnvVarName` is a stub: any key is taken, but
        // an empty one, which kyaml's field setter takes for no field at all.
        if key.is_empty() {
            continue;
        }
        pairs.push((key.to_string(), value.into_bytes()));
    }
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_secret_values_are_wrapped_at_70_characters_as_kyaml_does() {
        assert_eq!(wrapped_base64(b"short"), "c2hvcnQ=");
        let wrapped = wrapped_base64(&[b'x'; 60]);
        let lines: Vec<&str> = wrapped.split_terminator('\n').collect();
        assert_eq!(lines.iter().map(|l| l.len()).collect::<Vec<_>>(), vec![70, 10]);
        assert!(wrapped.ends_with('\n'));
    }

    #[test]
    fn literal_values_lose_one_pair_of_matching_quotes() {
        assert_eq!(parse_literal("A='x y'").unwrap(), ("A".into(), "x y".into()));
        assert_eq!(parse_literal("A=\"x\"").unwrap(), ("A".into(), "x".into()));
        assert_eq!(parse_literal("A='x\"").unwrap(), ("A".into(), "'x\"".into()));
        assert_eq!(parse_literal("A=b=c").unwrap(), ("A".into(), "b=c".into()));
        assert!(parse_literal("novalue").is_err());
    }

    #[test]
    fn env_files_skip_comments_and_keep_values_verbatim() {
        let pairs = parse_env_file("# c\n\n  A=1 \nB='q'\r\n").unwrap();
        assert_eq!(pairs, vec![("A".into(), b"1 ".to_vec()), ("B".into(), b"'q'".to_vec())]);
        // Any key but an empty one (see parse_env_file).
        assert_eq!(parse_env_file("1A=x\n=y\na b=z").unwrap(), vec![("1A".into(), b"x".to_vec()), ("a b".into(), b"z".to_vec())]);
    }
}
