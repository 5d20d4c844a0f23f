//! The house, held by the code's own imports: no circle between rooms (the top-level modules of
//! `src/`) nor between the files of one folder, no arrow from a lower floor to a higher one, and
//! `docs/architecture.md` drawing exactly the arrows the imports make. `tools/import-graph.py`
//! reads the imports the same way, to draw the graph by hand.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module: which crate (`lib` or the `bin` program) and its path (`["transform", "path"]`).
type Module = (&'static str, Vec<String>);

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Comments blanked, string and char literals emptied: what is left is code.
fn strip_comments_and_strings(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let (mut out, mut i) = (String::with_capacity(text.len()), 0);
    let at = |i: usize, s: &str| s.chars().enumerate().all(|(k, c)| b.get(i + k) == Some(&c));
    while i < b.len() {
        let word_before = i > 0 && (b[i - 1].is_alphanumeric() || b[i - 1] == '_');
        if at(i, "//") {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if at(i, "/*") {
            i += 2;
            while i < b.len() && !at(i, "*/") {
                i += 1;
            }
            i += 2;
        } else if b[i] == 'r' && !word_before && (at(i + 1, "\"") || at(i + 1, "#")) {
            let mut j = i + 1;
            while b.get(j) == Some(&'#') {
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(b[i]);
                i += 1;
                continue;
            }
            let hashes = j - i - 1;
            j += 1;
            while j < b.len() && !(b[j] == '"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&'#'))) {
                j += 1;
            }
            i = j + 1 + hashes;
            out.push_str("\"\"");
        } else if b[i] == '"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != '"' {
                j += if b[j] == '\\' { 2 } else { 1 };
            }
            i = j + 1;
            out.push_str("\"\"");
        } else if b[i] == '\'' && (b.get(i + 2) == Some(&'\'') || (b.get(i + 1) == Some(&'\\'))) {
            // a char literal ('a', '\n', '\u{1b}'), not a lifetime
            let mut j = i + 1;
            if b[j] == '\\' {
                j += 2;
                while j < b.len() && b[j] != '\'' {
                    j += 1;
                }
            } else {
                j += 1;
            }
            i = j + 1;
            out.push_str("' '");
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

/// `a::{b, c::{d, e as f}}` into `[a, b]`, `[a, c, d]`, `[a, c, e]` (globs and aliases dropped).
fn expand_use_tree(tree: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    walk_use(&[], &without_aliases(tree), &mut out);
    out
}

/// The use tree without whitespace and without `as alias` parts (their commas and braces kept).
fn without_aliases(tree: &str) -> String {
    let mut out = String::new();
    let tokens: Vec<&str> = tree.split_whitespace().collect();
    let mut k = 0;
    while k < tokens.len() {
        if tokens[k] == "as" && k + 1 < tokens.len() {
            let alias = tokens[k + 1];
            out.extend(alias.chars().filter(|c| matches!(c, ',' | '{' | '}')));
            k += 2;
            continue;
        }
        out.push_str(tokens[k]);
        k += 1;
    }
    out
}

fn walk_use(prefix: &[String], s: &str, out: &mut Vec<Vec<String>>) {
    let (mut depth, mut start, mut parts) = (0i32, 0, Vec::new());
    for (k, ch) in s.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&s[start..k]);
                start = k + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    for part in parts.into_iter().filter(|p| !p.is_empty()) {
        if let Some((head, rest)) = part.split_once('{') {
            let mut p = prefix.to_vec();
            p.extend(head.split("::").filter(|x| !x.is_empty()).map(str::to_string));
            walk_use(&p, &rest[..rest.rfind('}').unwrap_or(rest.len())], out);
        } else {
            let mut p = prefix.to_vec();
            p.extend(part.split("::").filter(|x| !x.is_empty() && *x != "*").map(str::to_string));
            out.push(p);
        }
    }
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The inline `mod name { ... }` blocks of a file: (start, end, name), by character offset.
fn inline_modules(text: &str) -> Vec<(usize, usize, String)> {
    let mut opening = BTreeMap::new();
    for (k, _) in text.match_indices("mod ") {
        if k > 0 && is_word(text[..k].chars().last().unwrap()) {
            continue;
        }
        let rest = &text[k + 4..];
        let name: String = rest.trim_start().chars().take_while(|c| is_word(*c)).collect();
        let after = rest.trim_start()[name.len()..].trim_start();
        if !name.is_empty() && after.starts_with('{') {
            let brace = k + 4 + (rest.len() - after.len());
            opening.insert(brace, name);
        }
    }
    let (mut blocks, mut stack, mut depth) = (Vec::new(), Vec::<(i32, usize, String)>::new(), 0i32);
    for (k, ch) in text.char_indices() {
        if ch == '{' {
            depth += 1;
            if let Some(name) = opening.get(&k) {
                stack.push((depth, k, name.clone()));
            }
        } else if ch == '}' {
            if stack.last().is_some_and(|s| s.0 == depth) {
                let (_, start, name) = stack.pop().unwrap();
                blocks.push((start, k, name));
            }
            depth -= 1;
        }
    }
    blocks
}

/// Every path in a file that may name a module of ours, with the inline modules it sits in.
fn paths_in(text: &str) -> Vec<(Vec<String>, Vec<String>)> {
    let blocks = inline_modules(text);
    let inner = |pos: usize| -> Vec<String> {
        let mut within: Vec<&(usize, usize, String)> = blocks.iter().filter(|(s, e, _)| *s < pos && pos < *e).collect();
        within.sort();
        within.into_iter().map(|(_, _, n)| n.clone()).collect()
    };
    let mut found = Vec::new();
    let mut rest = text.to_string();
    // `use` items
    let mut k = 0;
    while let Some(off) = text[k..].find("use ") {
        let at = k + off;
        k = at + 4;
        if at > 0 && is_word(text[..at].chars().last().unwrap()) {
            continue;
        }
        let Some(end) = text[at..].find(';') else { break };
        for segs in expand_use_tree(&text[at + 4..at + end]) {
            found.push((segs, inner(at)));
        }
        rest.replace_range(at..at + end, &" ".repeat(end));
        k = at + end;
    }
    // inline paths: `word::word...`
    let chars: Vec<(usize, char)> = rest.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (pos, c) = chars[i];
        let starts = (c.is_ascii_lowercase() || c == '_') && (i == 0 || !(is_word(chars[i - 1].1) || chars[i - 1].1 == ':'));
        if !starts {
            i += 1;
            continue;
        }
        let mut segs = Vec::new();
        let mut j = i;
        loop {
            let s = j;
            while j < chars.len() && is_word(chars[j].1) {
                j += 1;
            }
            segs.push(chars[s..j].iter().map(|(_, c)| *c).collect::<String>());
            if j + 2 < chars.len() && chars[j].1 == ':' && chars[j + 1].1 == ':' && is_word(chars[j + 2].1) {
                j += 2;
            } else {
                break;
            }
        }
        if segs.len() > 1 {
            found.push((segs, inner(pos)));
        }
        i = j.max(i + 1);
    }
    found
}

fn module_path(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel.trim_end_matches(".rs").split('/').map(str::to_string).collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    if parts == ["lib"] || parts == ["main"] {
        parts.clear();
    }
    parts
}

fn resolve(segs: &[String], here: &[String], inner: &[String], modules: &BTreeMap<&'static str, BTreeSet<Vec<String>>>, krate: &'static str) -> Option<Module> {
    let head = segs.first()?.as_str();
    if head == "super" && !inner.is_empty() {
        // `super` inside an inline module (`mod tests { use super::*; }`): the file's own module
        return if segs.len() > 1 { resolve(&segs[1..], here, &inner[..inner.len() - 1], modules, krate) } else { Some((krate, here.to_vec())) };
    }
    if !inner.is_empty() && !matches!(head, "crate" | "peerpods_build") {
        return None;
    }
    let (mut base, rest, krate): (Vec<String>, &[String], &'static str) = match head {
        "crate" => (Vec::new(), &segs[1..], krate),
        "peerpods_build" => (Vec::new(), &segs[1..], "lib"),
        "super" | "self" => {
            let mut base = here.to_vec();
            let mut r = segs;
            while let Some(first) = r.first().filter(|f| *f == "super" || *f == "self") {
                if first == "super" {
                    base.pop();
                }
                r = &r[1..];
            }
            (base, r, krate)
        }
        _ => {
            let mut child = here.to_vec();
            child.push(head.to_string());
            if !modules[krate].contains(&child) {
                return None;
            }
            (here.to_vec(), segs, krate)
        }
    };
    for seg in rest {
        base.push(seg.clone());
        if !modules[krate].contains(&base) {
            base.pop();
            break;
        }
    }
    Some((krate, base))
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a folder entry").path();
        if path.is_dir() {
            rs_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module graph of `src/`: every arrow from one module (file) to another.
fn module_arrows() -> BTreeSet<(Module, Module)> {
    let src = root().join("src");
    let mut files = Vec::new();
    rs_files(&src, &mut files);
    let rel = |p: &Path| p.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
    let krate_of = |r: &str| if r == "main.rs" || r.starts_with("cli/") { "bin" } else { "lib" };
    let mut modules: BTreeMap<&'static str, BTreeSet<Vec<String>>> = BTreeMap::from([("lib", BTreeSet::new()), ("bin", BTreeSet::new())]);
    for f in &files {
        let r = rel(f);
        modules.get_mut(krate_of(&r)).unwrap().insert(module_path(&r));
    }
    let mut arrows = BTreeSet::new();
    for f in &files {
        let r = rel(f);
        let krate = krate_of(&r);
        let here = module_path(&r);
        let text = strip_comments_and_strings(&std::fs::read_to_string(f).expect("a source file is readable"));
        for (segs, inner) in paths_in(&text) {
            if let Some(to) = resolve(&segs, &here, &inner, &modules, krate) {
                let from = (krate, here.clone());
                if to != from {
                    arrows.insert((from, to));
                }
            }
        }
    }
    arrows
}

/// The room a module belongs to: its top-level module (`lib` and `main` for the crate roots).
fn room((krate, path): &Module) -> String {
    match path.first() {
        Some(top) => top.clone(),
        None if *krate == "bin" => "main".into(),
        None => "lib".into(),
    }
}

fn name((krate, path): &Module) -> String {
    if path.is_empty() {
        return if *krate == "bin" { "main.rs".into() } else { "lib.rs".into() };
    }
    path.join("/")
}

fn room_arrows(arrows: &BTreeSet<(Module, Module)>) -> BTreeSet<(String, String)> {
    arrows.iter().map(|(a, b)| (room(a), room(b))).filter(|(a, b)| a != b).collect()
}

/// Arrows between files of one folder (a file and its folder's `mod.rs` do not count: the door
/// holds what its files share).
fn sibling_arrows(arrows: &BTreeSet<(Module, Module)>) -> BTreeSet<(Module, Module)> {
    let mut out = BTreeSet::new();
    for ((ka, pa), (kb, pb)) in arrows {
        if ka != kb {
            continue;
        }
        let common = pa.iter().zip(pb).take_while(|(x, y)| x == y).count();
        if common == 0 || common == pa.len() || common == pb.len() {
            continue;
        }
        out.insert(((*ka, pa[..=common].to_vec()), (*kb, pb[..=common].to_vec())));
    }
    out
}

/// Nodes that reach themselves again (each circle's members, sorted).
fn circles<N: Ord + Clone>(arrows: &BTreeSet<(N, N)>) -> Vec<Vec<N>> {
    let nodes: BTreeSet<N> = arrows.iter().flat_map(|(a, b)| [a.clone(), b.clone()]).collect();
    let reach = |from: &N| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(n) = todo.pop() {
            for (a, b) in arrows.iter().filter(|(a, _)| *a == n) {
                let _ = a;
                if seen.insert(b.clone()) {
                    todo.push(b.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<N, BTreeSet<N>> = nodes.iter().map(|n| (n.clone(), reach(n))).collect();
    let mut out: Vec<Vec<N>> = Vec::new();
    for n in &nodes {
        if !reaches[n].contains(n) {
            continue;
        }
        let members: Vec<N> = nodes.iter().filter(|m| reaches[n].contains(*m) && reaches[*m].contains(n)).cloned().collect();
        if !out.contains(&members) {
            out.push(members);
        }
    }
    out
}

fn architecture_page() -> String {
    std::fs::read_to_string(root().join("docs/architecture.md")).expect("docs/architecture.md exists")
}

/// The rooms' floors as `docs/architecture.md`'s table gives them (`| room | floor | ... |`).
fn floors(page: &str) -> BTreeMap<String, u32> {
    page.lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.trim().strip_prefix('|')?.split('|').map(str::trim).collect();
            let room = cells.first()?.trim_matches('`');
            let floor = cells.get(1)?.parse().ok()?;
            Some((room.to_string(), floor))
        })
        .collect()
}

/// The room graph as `docs/architecture.md` draws it.
fn mermaid(arrows: &BTreeSet<(String, String)>) -> String {
    let mut out = String::from("```mermaid\ngraph TD\n");
    for (a, b) in arrows {
        out.push_str(&format!("  {a} --> {b}\n"));
    }
    out.push_str("```\n");
    out
}

#[test]
fn no_circle_between_rooms_nor_between_the_files_of_a_folder() {
    let arrows = module_arrows();
    let rooms = circles(&room_arrows(&arrows));
    let files: Vec<Vec<String>> = circles(&sibling_arrows(&arrows)).iter().map(|c| c.iter().map(name).collect()).collect();
    assert!(rooms.is_empty() && files.is_empty(), "circles between rooms: {rooms:?}; between files: {files:?} (tools/import-graph.py draws them)");
}

#[test]
fn every_arrow_points_down_a_floor() {
    let page = architecture_page();
    let floors = floors(&page);
    let arrows = room_arrows(&module_arrows());
    let rooms: BTreeSet<&String> = arrows.iter().flat_map(|(a, b)| [a, b]).collect();
    let unplaced: Vec<&&String> = rooms.iter().filter(|r| !floors.contains_key(r.as_str())).collect();
    assert!(unplaced.is_empty(), "rooms without a floor in docs/architecture.md: {unplaced:?}");
    let up: Vec<String> = arrows
        .iter()
        .filter(|(a, b)| floors[a] <= floors[b])
        .map(|(a, b)| format!("{a} (floor {}) -> {b} (floor {})", floors[a], floors[b]))
        .collect();
    assert!(up.is_empty(), "arrows that do not point down: {up:#?}");
}

#[test]
fn the_architecture_page_draws_the_imports() {
    let page = architecture_page();
    let expected = mermaid(&room_arrows(&module_arrows()));
    assert!(
        page.contains(&expected),
        "docs/architecture.md's graph differs from the imports; the graph they make (tools/import-graph.py --mermaid):\n{expected}"
    );
}

#[test]
fn the_reader_sees_through_comments_strings_and_aliases() {
    let text = strip_comments_and_strings("use a::{b as c, d::{e, f}}; // crate::x::y\nlet s = \"crate::z\"; let c = '\"'; mod tests { use super::*; }");
    assert!(!text.contains("crate::x") && !text.contains("crate::z"), "{text}");
    let paths: Vec<Vec<String>> = paths_in(&text).into_iter().map(|(p, _)| p).collect();
    let want: Vec<Vec<String>> = [vec!["a", "b"], vec!["a", "d", "e"], vec!["a", "d", "f"], vec!["super"]]
        .iter()
        .map(|p| p.iter().map(|s| s.to_string()).collect())
        .collect();
    assert_eq!(paths, want);
    let circle = BTreeSet::from([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]);
    assert_eq!(circles(&circle), vec![vec!["a", "b", "c"]]);
}
