//! The recorder: present only in an `explain` build. It tells each step of the build what it is
//! (its kustomization entry, at the file:line:column the parser reports) and where the text of
//! each value it writes lives (a patch's line, a literal, an env file's line).
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::resource::nodes::Step;
use crate::resource::provenance::{Located, Origin, Provenance, Source, StepInfo, StepRecord};
use crate::resource::{ResMap, Resource};
use crate::yaml::positions::{document_positions, Pos, PosNode};

/// A file as the recorder knows it: its name as printed and its position tree.
struct Positions {
    display: Arc<str>,
    text: String,
    docs: Vec<Option<PosNode>>,
}

/// Asks an `explain` build to record provenance (see [`crate::resource::provenance`]).
#[derive(Default)]
pub struct Recorder {
    /// File names are printed relative to this folder (the working folder).
    base: PathBuf,
    /// Printed before every file name (`main:` for a side of `diff --base main`).
    prefix: String,
    files: Mutex<HashMap<PathBuf, Arc<Positions>>>,
    /// Checkouts of remote bases: the kustomization root in the checkout, and how a file there
    /// is named (`URL//PATH/` before the file, `?ref=REF` after it).
    remotes: Mutex<Vec<(PathBuf, String, String)>>,
    /// Each `vars` entry by name: the kustomization declaring it and its index there.
    vars: Mutex<HashMap<String, (PathBuf, usize)>>,
    /// Folders as the file system resolves them: most files share their folder with others.
    folders: Mutex<HashMap<PathBuf, PathBuf>>,
}

const START: Pos = Pos { line: 1, column: 1 };

impl Recorder {
    /// A recorder printing file names relative to `base`.
    pub fn new(base: PathBuf) -> Self {
        let base = base.canonicalize().unwrap_or(base);
        Recorder { base, ..Default::default() }
    }

    /// [`Self::new`], with `prefix` printed before every file name.
    pub fn with_prefix(base: PathBuf, prefix: &str) -> Self {
        Recorder { prefix: prefix.to_string(), ..Recorder::new(base) }
    }

    /// A file's name as printed: relative to the base folder, or named by its remote base.
    pub fn display(&self, file: &Path) -> Arc<str> {
        let file = self.resolved(file);
        for (root, before, after) in self.remotes.lock().unwrap().iter() {
            if let Ok(rest) = file.strip_prefix(root) {
                return format!("{}{before}{}{after}", self.prefix, rest.display()).into();
            }
        }
        format!("{}{}", self.prefix, relative_to(&self.base, &file).display()).into()
    }

    /// `file` with its links resolved: its folder's resolution (kept) and its name, or for a
    /// link (or a path without a plain last part) the whole path resolved.
    fn resolved(&self, file: &Path) -> PathBuf {
        let whole = || file.canonicalize().unwrap_or_else(|_| file.to_path_buf());
        let (Some(folder), Some(name)) = (file.parent(), file.file_name()) else { return whole() };
        if folder.as_os_str().is_empty() || file.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) {
            return whole();
        }
        if let Some(known) = self.folders.lock().unwrap().get(folder) {
            return known.join(name);
        }
        let Ok(resolved) = folder.canonicalize() else { return whole() };
        let joined = resolved.join(name);
        self.folders.lock().unwrap().insert(folder.to_path_buf(), resolved);
        joined
    }

    /// Files below `root` belong to a remote base: `path` in the repository `url` at `git_ref`;
    /// they are named `URL//PATH/FILE?ref=REF`.
    pub fn enter_remote(&self, root: &Path, url: &str, git_ref: &str, path: &str) {
        let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        let path = path.trim_matches('/');
        let before = if path.is_empty() { format!("{url}//") } else { format!("{url}//{path}/") };
        let after = if git_ref.is_empty() { String::new() } else { format!("?ref={git_ref}") };
        let mut remotes = self.remotes.lock().unwrap();
        if !remotes.iter().any(|(r, _, _)| *r == root) {
            remotes.push((root, before, after));
        }
    }

    /// The position trees of a file whose text was read already (once per file).
    fn positions(&self, file: &Path, text: Option<&str>) -> Arc<Positions> {
        if let Some(known) = self.files.lock().unwrap().get(file) {
            return known.clone();
        }
        let text = text.map(str::to_string).or_else(|| crate::bounded_read::read_text(file).ok()).unwrap_or_default();
        let docs = document_positions(&text).unwrap_or_default();
        let positions = Arc::new(Positions { display: self.display(file), text, docs });
        self.files.lock().unwrap().insert(file.to_path_buf(), positions.clone());
        positions
    }

    /// Gives the resources read from `file` their history: each field at its line and column.
    /// `resources` are the file's resources in order (the items of a `List` in its place).
    pub fn loaded(&self, file: &Path, text: &str, resources: &mut [Resource]) {
        // Read once and not kept: a resource file's positions are needed only here, and keeping
        // every file's tree would double the memory of a large build.
        let known = self.files.lock().unwrap().get(file).cloned();
        let positions = known.unwrap_or_else(|| {
            Arc::new(Positions { display: self.display(file), text: String::new(), docs: document_positions(text).unwrap_or_default() })
        });
        let mut nodes = Vec::new();
        for doc in positions.docs.iter().flatten() {
            let is_list = doc.get("kind").and_then(PosNode::text).is_some_and(|k| k.ends_with("List"));
            match doc.get("items") {
                Some(PosNode::Seq { items, .. }) if is_list => nodes.extend(items.iter()),
                _ if matches!(doc, PosNode::Map { .. }) => nodes.push(doc),
                _ => {}
            }
        }
        for (i, r) in resources.iter_mut().enumerate() {
            let node = nodes.get(i).copied();
            r.provenance = Some(Box::new(Provenance::loaded(&r.value, node, &positions.display, node.map_or(START, PosNode::at))));
        }
    }

    /// A step of the kustomization `file`: its entry `field` (item `index`), with `detail`.
    pub fn step(&self, file: &Path, field: &str, index: Option<usize>, detail: Option<String>) -> StepRecord {
        StepRecord::plain(self.info(file, field, index, detail))
    }

    /// A generator or transformer step whose output comes from elsewhere (a chart's template,
    /// a KRM function): entry `field[index]` of kustomization `file`, with `origin`. A step that
    /// makes resources marks each with [`crate::resource::provenance::created`]; one that
    /// changes resources runs inside [`crate::target::recorded`] with this record.
    pub fn step_with_origin(&self, file: &Path, field: &str, index: Option<usize>, origin: Origin) -> StepRecord {
        StepRecord::plain(StepInfo { origin, ..self.info(file, field, index, None) })
    }

    fn info(&self, file: &Path, field: &str, index: Option<usize>, detail: Option<String>) -> StepInfo {
        let kust = self.positions(file, None);
        let node = kust.docs.first().and_then(Option::as_ref).and_then(|d| d.get(field));
        let at = match index {
            Some(i) => node.and_then(|n| n.item(i)).or(node),
            None => node,
        };
        let name = match index {
            Some(i) => format!("{field}[{i}]"),
            None => field.to_string(),
        };
        StepInfo { rule: Source { file: kust.display.clone(), at: at.map_or(START, PosNode::at) }, name, detail, origin: Origin::Entry }
    }

    /// A step of kustomization `file` whose writes point at the entry's own fields: the value of
    /// `under` (`pairs`, or nothing for `commonLabels`) keyed by the written field's last key.
    pub fn keyed_step(&self, file: &Path, field: &'static str, index: Option<usize>, under: &'static str) -> StepRecord {
        let info = self.info(file, field, index, None);
        let kust = self.positions(file, None);
        let display = kust.display.clone();
        StepRecord {
            info: Arc::new(info),
            locate: Box::new(move |_, path, _, _| {
                let entry = entry_node(&kust, field, index);
                let map = if under.is_empty() { entry } else { entry.and_then(|e| e.get(under)) };
                let key = match path.last() {
                    Some(Step::Key(k)) => k.as_str(),
                    _ => return Located::default(),
                };
                let source = map.and_then(|m| m.get(key)).map(|n| Source { file: display.clone(), at: n.at() });
                Located { source, ..Default::default() }
            }),
        }
    }

    /// `namespace`, `namePrefix`, `nameSuffix`: the entry is the value.
    pub fn value_step(&self, file: &Path, field: &str) -> StepRecord {
        self.step(file, field, None, None)
    }

    /// `replicas[i]`: the count.
    pub fn replicas_step(&self, file: &Path, index: usize) -> StepRecord {
        let kust = self.positions(file, None);
        let mut info = self.info(file, "replicas", Some(index), None);
        if let Some(count) = entry_node(&kust, "replicas", Some(index)).and_then(|e| e.get("count")) {
            info.rule.at = count.at();
        }
        StepRecord::plain(info)
    }

    /// `images`: the entry whose new name, tag or digest the written image holds.
    pub fn images_step(&self, file: &Path) -> StepRecord {
        let info = self.info(file, "images", Some(0), None);
        let kust = self.positions(file, None);
        StepRecord {
            info: Arc::new(info),
            locate: Box::new(move |root, path, _, _| {
                let Some(image) = crate::resource::nodes::value_at(root, path).and_then(Value::as_str) else {
                    return Located::default();
                };
                let Some(PosNode::Seq { items, .. }) = kust.docs.first().and_then(Option::as_ref).and_then(|d| d.get("images")) else {
                    return Located::default();
                };
                for (i, entry) in items.iter().enumerate().rev() {
                    let field = |name: &str| entry.get(name).filter(|n| n.text().is_some_and(|t| !t.is_empty()));
                    let holds = |name: &str, test: &dyn Fn(&str) -> bool| field(name).filter(|n| n.text().is_some_and(test));
                    let hit = holds("digest", &|d| image.ends_with(&format!("@{d}")))
                        .or_else(|| holds("newTag", &|t| image.ends_with(&format!(":{t}"))))
                        .or_else(|| holds("newName", &|n| image.starts_with(n)));
                    if let Some(node) = hit {
                        let source = Some(Source { file: kust.display.clone(), at: node.at() });
                        return Located { source, name: Some(format!("images[{i}]")), detail: None };
                    }
                }
                Located::default()
            }),
        }
    }

    /// `patches[i]` / `patchesJson6902[i]` / `patchesStrategicMerge[i]`: the patch's text (a
    /// file, or the inline `patch`), each written field at the patch's line of its value.
    pub fn patch_step(&self, file: &Path, field: &str, index: usize, patch_file: Option<(PathBuf, String)>) -> StepRecord {
        let kust = self.positions(file, None);
        let (patch, offset) = match patch_file {
            Some((path, text)) => (self.positions(&path, Some(&text)), Some((0, 0))),
            None => {
                let entry = entry_node(&kust, field, Some(index));
                // The line the inline text's header is on or after: its key's, or the item's.
                let (inline, from) = match entry {
                    Some(e) if field == "patchesStrategicMerge" => (Some(e), e.at().line),
                    Some(e) => (e.get("patch"), e.entry("patch").map_or(0, |(key_at, _)| key_at.line)),
                    None => (None, 0),
                };
                let text = inline.and_then(PosNode::text).unwrap_or_default().to_string();
                let offset = block_offset(&kust.text, from);
                let docs = document_positions(&text).unwrap_or_default();
                (Arc::new(Positions { display: kust.display.clone(), text, docs }), offset)
            }
        };
        let doc = patch.docs.iter().flatten().next().cloned();
        let is_json6902 = matches!(doc, Some(PosNode::Seq { .. })) || field == "patchesJson6902";
        let detail = Some(if is_json6902 { "json 6902" } else { "strategic merge" }.to_string());
        let info = self.info(file, field, Some(index), detail);
        let display = patch.display.clone();
        // Listed patches name their target themselves; other patches select theirs.
        let check_id = field == "patchesStrategicMerge";
        StepRecord {
            info: Arc::new(info),
            locate: Box::new(move |root, path, _, _| {
                let found = doc.as_ref().and_then(|d| match is_json6902 {
                    true => locate_json6902(d, path),
                    false => locate_strategic(d, root, path, check_id),
                });
                // A quoted inline patch: its positions are not the kustomization's.
                let (Some((p, detail)), Some(offset)) = (found, offset) else { return Located::default() };
                let at = Pos { line: p.line + offset.0, column: p.column + offset.1 };
                Located { source: Some(Source { file: display.clone(), at }), name: None, detail }
            }),
        }
    }

    /// `configMapGenerator[i]` / `secretGenerator[i]`: a data key at its literal, its env
    /// file's line or its `files` entry.
    pub fn generator_step(&self, file: &Path, field: &'static str, index: usize, root_dir: PathBuf) -> StepRecord {
        let info = self.info(file, field, Some(index), None);
        let kust = self.positions(file, None);
        let env_files: Vec<(Arc<str>, String)> = entry_node(&kust, field, Some(index))
            .into_iter()
            .flat_map(|e| [e.get("envs"), e.get("env")])
            .flatten()
            .flat_map(|n| match n {
                PosNode::Seq { items, .. } => items.iter().filter_map(PosNode::text).map(str::to_string).collect(),
                PosNode::Scalar { text, .. } => vec![text.clone()],
                _ => Vec::new(),
            })
            .filter_map(|rel| {
                let path = root_dir.join(&rel);
                crate::bounded_read::read_text(&path).ok().map(|text| (self.display(&path), text))
            })
            .collect();
        StepRecord {
            info: Arc::new(info),
            locate: Box::new(move |_, path, _, _| {
                let entry = entry_node(&kust, field, Some(index));
                let key = match path {
                    [Step::Key(data), Step::Key(key)] if data == "data" || data == "binaryData" || data == "stringData" => key,
                    [Step::Key(meta), Step::Key(name)] if meta == "metadata" && name == "name" => {
                        let source = entry.and_then(|e| e.get("name")).map(|n| Source { file: kust.display.clone(), at: n.at() });
                        return Located { source, ..Default::default() };
                    }
                    _ => return Located::default(),
                };
                let in_list = |list: &str, test: &dyn Fn(&str) -> bool| match entry.and_then(|e| e.get(list)) {
                    Some(PosNode::Seq { items, .. }) => items.iter().rev().find(|n| n.text().is_some_and(test)).map(PosNode::at),
                    _ => None,
                };
                let literal = in_list("literals", &|t| t.split_once('=').is_some_and(|(k, _)| k.trim() == key));
                let file_entry = || {
                    in_list("files", &|t| match t.split_once('=') {
                        Some((k, _)) => k == key,
                        None => Path::new(t).file_name().is_some_and(|n| n == key.as_str()),
                    })
                };
                if let Some(at) = literal.or_else(file_entry) {
                    return Located { source: Some(Source { file: kust.display.clone(), at }), ..Default::default() };
                }
                for (display, text) in env_files.iter().rev() {
                    let lines: Vec<&str> = text.lines().collect();
                    let line = lines.iter().enumerate().rev().find(|(_, l)| {
                        let l = l.trim_start();
                        l.split_once('=').map_or(l == key, |(k, _)| k.trim_end() == key)
                    });
                    if let Some((n, l)) = line {
                        let column = (l.len() - l.trim_start().len()) as u32 + 1;
                        let at = Pos { line: n as u32 + 1, column };
                        return Located { source: Some(Source { file: display.clone(), at }), ..Default::default() };
                    }
                }
                Located::default()
            }),
        }
    }

    /// `replacements[i]`: each written field names the entry whose targets' field paths hold it,
    /// and that entry's source.
    pub fn replacements_step(&self, file: &Path, resources: &ResMap) -> StepRecord {
        let info = self.info(file, "replacements", Some(0), None);
        let kust = self.positions(file, None);
        // Where each entry's source field was set, looked up before the step runs.
        let sources: Vec<Option<Source>> = match kust.docs.first().and_then(Option::as_ref).and_then(|d| d.get("replacements")) {
            Some(PosNode::Seq { items, .. }) => items.iter().map(|entry| replacement_source(entry, resources)).collect(),
            _ => Vec::new(),
        };
        StepRecord {
            info: Arc::new(info),
            locate: Box::new(move |root, path, _, _| {
                let Some(PosNode::Seq { items, .. }) = kust.docs.first().and_then(Option::as_ref).and_then(|d| d.get("replacements")) else {
                    return Located::default();
                };
                for (i, entry) in items.iter().enumerate().rev() {
                    let targets = match entry.get("targets") {
                        Some(PosNode::Seq { items, .. }) => items.as_slice(),
                        _ => &[],
                    };
                    let hit = targets.iter().find_map(|t| match t.get("fieldPaths") {
                        Some(PosNode::Seq { items, .. }) => items.iter().find(|fp| fp.text().is_some_and(|fp| field_path_matches(fp, root, path))),
                        _ => None,
                    });
                    if let Some(fp) = hit {
                        let source = entry.get("source").map(|s| {
                            let text = |k: &str| s.get(k).and_then(PosNode::text).unwrap_or_default().to_string();
                            let field = s.get("fieldPath").and_then(PosNode::text).unwrap_or("metadata.name").to_string();
                            format!("from {}/{}.{field}", text("kind"), text("name"))
                        });
                        let set_by = sources.get(i).cloned().flatten();
                        return Located {
                            source: Some(set_by.unwrap_or(Source { file: kust.display.clone(), at: fp.at() })),
                            name: Some(format!("replacements[{i}]")),
                            detail: source,
                        };
                    }
                }
                Located::default()
            }),
        }
    }

    /// Kustomization `file` declares `vars` (each an entry with a `name`).
    pub fn declare_vars(&self, file: &Path, vars: &[Value]) {
        let mut declared = self.vars.lock().unwrap();
        for (i, var) in vars.iter().enumerate() {
            if let Some(name) = var.get("name").and_then(Value::as_str) {
                declared.entry(name.to_string()).or_insert_with(|| (file.to_path_buf(), i));
            }
        }
    }

    /// The top level's `vars`: a field where `$(NAME)` was replaced points at the declaration of
    /// var NAME (`vars[i]` in its kustomization), and names the field the value came from.
    pub fn vars_step(&self, file: &Path) -> StepRecord {
        let info = self.info(file, "vars", None, None);
        let declared: HashMap<String, Located> = self
            .vars
            .lock()
            .unwrap()
            .iter()
            .map(|(name, (declared_in, i))| {
                let kust = self.positions(declared_in, None);
                let entry = entry_node(&kust, "vars", Some(*i));
                let text = |node: Option<&PosNode>, k: &str| node.and_then(|n| n.get(k)).and_then(PosNode::text).map(str::to_string);
                let objref = entry.and_then(|e| e.get("objref"));
                let field = text(entry.and_then(|e| e.get("fieldref")), "fieldpath").unwrap_or_else(|| "metadata.name".into());
                let from = format!("from {}/{}.{field}", text(objref, "kind").unwrap_or_default(), text(objref, "name").unwrap_or_default());
                let source = Source { file: kust.display.clone(), at: entry.map_or(START, PosNode::at) };
                (name.clone(), Located { source: Some(source), name: Some(format!("vars[{i}]")), detail: Some(from) })
            })
            .collect();
        StepRecord {
            info: Arc::new(info),
            locate: Box::new(move |_, _, _, before| {
                let before = before.and_then(Value::as_str).unwrap_or_default();
                let mut rest = before;
                while let Some(start) = rest.find("$(") {
                    let after = &rest[start + 2..];
                    let Some(end) = after.find(')') else { break };
                    if let Some(found) = declared.get(&after[..end]) {
                        return found.clone();
                    }
                    rest = &after[end..];
                }
                Located::default()
            }),
        }
    }

    /// The top level's hash suffixes: a generated name at its generator's entry.
    pub fn hash_step(&self, file: &Path) -> StepRecord {
        let mut info = self.info(file, "hash suffix", None, Some("content hash".into()));
        info.name = "hash suffix".into();
        StepRecord {
            info: Arc::new(info),
            locate: Box::new(|_, _, history, _| Located { source: history.last().map(|e| e.source().clone()), ..Default::default() }),
        }
    }

    /// The top level's name references: a reference at the place that set the referenced
    /// resource's final name.
    pub fn name_reference_step(&self, file: &Path, resources: &ResMap) -> StepRecord {
        let mut info = self.info(file, "nameReference", None, None);
        info.name = "name reference".into();
        let mut names: HashMap<String, (String, Option<Source>)> = HashMap::new();
        let mut namespaces: HashMap<String, (String, Option<Source>)> = HashMap::new();
        for r in resources.iter() {
            let set_by = |field: &str| {
                let node = r.provenance.as_ref().and_then(|p| p.at(&[Step::Key("metadata".into()), Step::Key(field.into())]));
                node.and_then(|p| p.events.last()).map(|e| e.source().clone())
            };
            let id = format!("{}/{}", r.kind(), r.name());
            names.entry(r.name().to_string()).or_insert_with(|| (id.clone(), set_by("name")));
            if !r.namespace().is_empty() {
                namespaces.entry(r.namespace().to_string()).or_insert_with(|| (id, set_by("namespace")));
            }
        }
        StepRecord {
            info: Arc::new(info),
            locate: Box::new(move |root, path, _, _| {
                let value = crate::resource::nodes::value_at(root, path).and_then(Value::as_str);
                let table = if matches!(path.last(), Some(Step::Key(k)) if k == "namespace") { &namespaces } else { &names };
                match value.and_then(|v| table.get(v)) {
                    Some((id, source)) => Located { source: source.clone(), name: None, detail: Some(format!("to {id}")) },
                    None => Located::default(),
                }
            }),
        }
    }
}

/// Where the field a replacement entry reads was set: its resource's history of that field.
fn replacement_source(entry: &PosNode, resources: &ResMap) -> Option<Source> {
    let source = entry.get("source")?;
    let text = |k: &str| source.get(k).and_then(PosNode::text);
    let field_path = text("fieldPath").unwrap_or("metadata.name");
    let resource = resources.iter().find(|r| {
        text("kind").is_none_or(|k| k == r.kind()) && text("name").is_none_or(|n| n == r.name() || r.original_id().name == n)
    })?;
    let mut path = Vec::new();
    let mut node = &resource.value;
    for segment in crate::transform::path::split_replacement_path(field_path) {
        let step = match node {
            Value::Array(items) => match segment.trim_matches(|c| c == '[' || c == ']').split_once('=') {
                Some((k, v)) => Step::Index(items.iter().position(|item| item.get(k).and_then(Value::as_str) == Some(v))?),
                None => Step::Index(segment.parse().ok()?),
            },
            _ => Step::Key(segment),
        };
        node = crate::resource::nodes::value_at(node, std::slice::from_ref(&step))?;
        path.push(step);
    }
    let history = resource.provenance.as_ref()?.at(&path)?;
    history.events.last().map(|e| e.source().clone())
}

/// `file` as a path from `base` (with `..` where it lies beside it); absolute when the two
/// share nothing but the root.
fn relative_to(base: &Path, file: &Path) -> PathBuf {
    // Sharing only the root: the absolute path says more than a chain of `..`.
    let common = base.components().zip(file.components()).take_while(|(x, y)| x == y).count();
    if common <= 1 {
        return file.to_path_buf();
    }
    crate::build_metadata::relative_path_buf(file, base)
}

/// `field` (item `index`) of a kustomization's position tree.
fn entry_node<'p>(kust: &'p Positions, field: &str, index: Option<usize>) -> Option<&'p PosNode> {
    let node = kust.docs.first()?.as_ref()?.get(field)?;
    match index {
        Some(i) => node.item(i),
        None => Some(node),
    }
}

/// Lines and columns to add to positions inside an inline block scalar (`patch: |-`) whose
/// header is on line `from` of `text`: the content starts on the next line, indented.
/// Nothing to add where there is no header (a quoted patch, positions then being its own).
fn block_offset(text: &str, from: u32) -> Option<(u32, u32)> {
    let lines: Vec<&str> = text.lines().collect();
    let header = from as usize;
    if header == 0 || !lines.get(header - 1).is_some_and(|l| crate::yaml::positions::is_block_header(l)) {
        return None;
    }
    let first = lines[header..].iter().find(|l| !l.trim().is_empty());
    let indent = first.map_or(0, |l| l.len() - l.trim_start().len()) as u32;
    Some((header as u32, indent))
}

/// The node of a strategic-merge patch that holds the field at `path` of the patched
/// resource: list items matched by `name`, else by position.
fn locate_strategic(doc: &PosNode, root: &Value, path: &[Step], check_id: bool) -> Option<(Pos, Option<String>)> {
    if check_id {
        let kind = doc.get("kind").and_then(PosNode::text);
        let name = doc.get("metadata").and_then(|m| m.get("name")).and_then(PosNode::text);
        if kind != root.get("kind").and_then(Value::as_str) || name != root.pointer("/metadata/name").and_then(Value::as_str) {
            return None;
        }
    }
    let mut node = doc;
    let mut value = root;
    for step in path {
        match step {
            Step::Key(k) => {
                node = node.get(k)?;
                value = value.get(k.as_str())?;
            }
            Step::Index(i) => {
                let item = value.get(*i)?;
                let PosNode::Seq { items, .. } = node else { return None };
                node = match item.get("name").and_then(Value::as_str) {
                    Some(name) => items.iter().find(|n| n.get("name").and_then(PosNode::text) == Some(name))?,
                    None => items.get(*i)?,
                };
                value = item;
            }
        }
    }
    Some((node.at(), None))
}

/// The op of a JSON 6902 patch that wrote the field at `path` (the last whose path holds it),
/// at the line of its value.
fn locate_json6902(doc: &PosNode, path: &[Step]) -> Option<(Pos, Option<String>)> {
    let PosNode::Seq { items, .. } = doc else { return None };
    for (i, op) in items.iter().enumerate().rev() {
        let Some(pointer) = op.get("path").and_then(PosNode::text) else { continue };
        let tokens: Vec<String> = pointer.split('/').skip(1).map(|t| t.replace("~1", "/").replace("~0", "~")).collect();
        if tokens.len() > path.len() {
            continue;
        }
        let holds = tokens.iter().zip(path).all(|(t, s)| match s {
            Step::Key(k) => t == k,
            Step::Index(n) => t == "-" || t.parse::<usize>().is_ok_and(|t| t == *n),
        });
        if !holds {
            continue;
        }
        let detail = Some(format!("json 6902, op {i}: {}", op.get("op").and_then(PosNode::text).unwrap_or("?")));
        let mut node = op.get("value").unwrap_or(op);
        for step in &path[tokens.len()..] {
            let next = match step {
                Step::Key(k) => node.get(k),
                Step::Index(n) => node.item(*n),
            };
            match next {
                Some(n) => node = n,
                None => break,
            }
        }
        return Some((node.at(), detail));
    }
    None
}

/// Whether a replacement's `fieldPath` (`spec.containers.[name=app].image`, `a.*.b`, `a.0.b`)
/// names the field at `path`.
fn field_path_matches(field_path: &str, root: &Value, path: &[Step]) -> bool {
    let segments = crate::transform::path::split_replacement_path(field_path);
    if segments.len() != path.len() {
        return false;
    }
    let mut node = root;
    for (seg, step) in segments.iter().zip(path) {
        let holds = match step {
            Step::Key(k) => seg == k || seg == "*",
            Step::Index(n) => match seg.strip_prefix('[').and_then(|s| s.strip_suffix(']')).and_then(|s| s.split_once('=')) {
                Some((key, want)) => node.get(*n).and_then(|item| item.get(key)).and_then(Value::as_str) == Some(want),
                None => seg == "*" || seg == "-" || seg.parse::<usize>().is_ok_and(|s| s == *n),
            },
        };
        if !holds {
            return false;
        }
        node = crate::resource::nodes::value_at(node, std::slice::from_ref(step)).unwrap_or(&Value::Null);
    }
    true
}
