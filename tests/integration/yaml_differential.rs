//! Our YAML reading against PyYAML's (its scanner and parser are ports of libyaml's, as go-yaml's
//! are), on generated documents: flow collections at every indentation, escapes in quoted
//! scalars, anchors and aliases (as keys, with a colon right after), byte order marks, comments
//! and tabs. The generator is seeded, so the same documents come every run.
//!
//! Where we and PyYAML agree (both refuse, or both read the same tree), nothing more is done.
//! Where we disagree, the reference (kustomize v5.8.1, go-yaml) decides: the document is built as
//! a resource by both programs, and both must fail, or print the same bytes. libyaml, PyYAML and
//! go-yaml differ among themselves in places (go-yaml reads `\'`, PyYAML refuses it; PyYAML
//! reads `\/`, go-yaml refuses it), which is why the reference has the last word.
use std::fs;

use serde_json::{json, Value};

use crate::common::{manifest_dir, ours, reference_run, run_program, say_past_capture, skip, TempTree};

/// The seeds: each makes one document.
const SEEDS: std::ops::Range<u64> = 1..401;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const ESCAPES: [&str; 18] =
    ["\\'", "\\\"", "\\\\", "\\/", "\\t", "\\x41", "\\u00e9", "\\q", "\\ ", "\\N", "\\_", "\\e", "\\0", "\\a", "\\U0001F600", "\\L", "\\%", "\\\t"];
const ANCHOR_NAMES: [&str; 7] = ["n", "n1", "n-1", "n_1", "n.1", "n/1", "nö"];
const BLANKS: [&str; 7] = ["", " ", "  ", "   ", "    ", "      ", "        "];

/// One fragment under `spec:`, its keys at two spaces, named after `i`.
fn fragment(r: &mut Rng, i: usize) -> String {
    let k = format!("k{i}");
    match r.below(9) {
        // a flow sequence over lines, each line at some indentation
        0 => format!(
            "  {k}: [\n{}\"a\",{}b,\n{}c\n{}]\n",
            r.pick(&BLANKS),
            r.pick(&["", " ", "\n  "]),
            r.pick(&BLANKS),
            r.pick(&BLANKS)
        ),
        // a flow mapping over lines
        1 => format!("  {k}: {{\n{}a: 1,\n{}b: \"x\"\n{}}}\n", r.pick(&BLANKS), r.pick(&BLANKS), r.pick(&BLANKS)),
        // a double-quoted scalar with an escape, sometimes over two lines
        2 => {
            let split = r.pick(&["", "\n", "\n "]);
            format!("  {k}: \"x{}y{split}z\"\n", r.pick(&ESCAPES))
        }
        // single-quoted scalars, sometimes over lines
        3 => format!("  {k}: 'it''s{}'\n", r.pick(&["", "\n  more", "\n more", "\nmore"])),
        // an anchor, then its alias as a value and as a key (with or without a blank before `:`)
        4 => {
            let name = r.pick(&ANCHOR_NAMES);
            let colon = r.pick(&[":", " :"]);
            format!("  {k}: &{name} v{i}\n  {k}b: *{name}\n  {k}c:\n    *{name}{colon} w\n")
        }
        // a byte order mark inside a scalar, or starting a line
        5 => match r.below(4) {
            0 => format!("  {k}: a\u{feff}b\n"),
            1 => format!("  {k}: \"a\u{feff}b\"\n"),
            2 => format!("  {k}: |\n    a\u{feff}b\n"),
            _ => format!("\u{feff}  {k}: a\n"),
        },
        // comments
        6 => format!("  {k}: {}\n", r.pick(&["v # c", "v#c", "[a, # c\n    b]", "\"v\" #c", "'v'#c", "v\t# c", "{a: 1} # c"])),
        // tabs
        7 => format!("  {k}:{}\n", r.pick(&["\tv", " [a,\tb]", "\t[a]", " \"a\tb\"", "\n  - \tv", " {a:\t1}"])),
        // block collections at several indentations
        _ => {
            let (a, b) = (r.pick(&[" ", "  ", "   ", "    "]), r.pick(&["", " ", "  "]));
            format!("  {k}:\n  {b}- x\n  {b}- {a}y: 1\n  {b}  {a}z: 2\n")
        }
    }
}

fn document(seed: u64) -> String {
    let mut r = Rng::new(seed);
    let mut text = String::from("apiVersion: example.com/v1\nkind: Thing\nmetadata:\n  name: t\nspec:\n");
    for i in 0..1 + r.below(3) {
        text.push_str(&fragment(&mut r, i));
    }
    text
}

/// Our reading of `text`, in the shape compose.py writes (non-string scalars match any scalar).
fn our_tree(text: &str) -> Option<Vec<Value>> {
    fn tree(v: &Value) -> Value {
        match v {
            Value::Object(m) => json!({"map": m.iter().map(|(k, v)| json!([{"scalar": k}, tree(v)])).collect::<Vec<_>>()}),
            Value::Array(items) => json!({"seq": items.iter().map(tree).collect::<Vec<_>>()}),
            Value::String(s) => json!({"scalar": s}),
            _ => json!({"any": true}),
        }
    }
    let docs = peerpods_build::yaml::parse::parse_documents(text).ok()?;
    Some(docs.iter().filter(|d| !d.is_null()).map(tree).collect())
}

/// Whether our tree reads as PyYAML's (a typed scalar of ours matches any plain scalar).
fn same(ours: &Value, theirs: &Value) -> bool {
    match (ours.get("any"), ours.get("scalar")) {
        (Some(_), _) => theirs.get("plain") == Some(&Value::Bool(true)),
        (_, Some(s)) => theirs.get("scalar") == Some(s),
        _ => match (ours.get("map"), ours.get("seq"), theirs.get("map"), theirs.get("seq")) {
            (Some(Value::Array(a)), _, Some(Value::Array(b)), _) | (_, Some(Value::Array(a)), _, Some(Value::Array(b))) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| match (x, y) {
                    (Value::Array(x), Value::Array(y)) => same(&x[0], &y[0]) && same(&x[1], &y[1]),
                    _ => same(x, y),
                })
            }
            _ => false,
        },
    }
}

#[test]
fn generated_yaml_reads_as_pyyaml_reads_it_or_as_the_reference_does() {
    let label = "yaml_differential";
    let tree = TempTree::new(label);
    let texts: Vec<String> = SEEDS.map(document).collect();
    let input = tree.write("texts.json", &serde_json::to_string(&texts).unwrap());
    let output = tree.root.join("pyyaml.json");
    let script = manifest_dir().join("tests/yaml_differential/compose.py");
    let py = run_program("python3", &[script.to_str().unwrap(), input.to_str().unwrap(), output.to_str().unwrap()], &tree.root);
    if !py.success() {
        skip(label, &format!("python3 with PyYAML did not run (python3 -m pip install pyyaml): {}", py.stderr.trim()));
        return;
    }
    let theirs: Vec<Value> = serde_json::from_str(&fs::read_to_string(&output).unwrap()).unwrap();
    let mut disagreements = 0;
    let mut failures = Vec::new();
    for ((seed, text), pyyaml) in SEEDS.zip(&texts).zip(&theirs) {
        let ours_tree = our_tree(text);
        let agree = match (&ours_tree, pyyaml["ok"].as_bool().unwrap()) {
            (None, false) => true,
            (Some(docs), true) => {
                let py_docs = pyyaml["docs"].as_array().unwrap();
                docs.len() == py_docs.len() && docs.iter().zip(py_docs).all(|(a, b)| same(a, b))
            }
            _ => false,
        };
        if agree {
            continue;
        }
        disagreements += 1;
        // The reference decides: build the document as a resource with both programs.
        let case = format!("seed-{seed}");
        tree.write(&format!("{case}/kustomization.yaml"), "resources:\n- thing.yaml\n");
        tree.write(&format!("{case}/thing.yaml"), text);
        let dir = tree.root.join(&case);
        let dir = dir.to_str().unwrap();
        let Some(reference) = reference_run(&[dir], &tree.root, label) else { return };
        let r = ours(&["build", dir], &tree.root);
        let agrees = match (reference.success(), r.success()) {
            (true, true) => reference.stdout == r.stdout,
            (false, false) => true,
            _ => false,
        };
        if !agrees {
            failures.push(format!(
                "seed {seed}:\n{text}\n-- kustomize (exit {:?}):\n{}{}\n-- ours (exit {:?}):\n{}{}",
                reference.code, reference.stdout, reference.stderr, r.code, r.stdout, r.stderr
            ));
        }
    }
    say_past_capture(&format!(
        "yaml_differential: {} documents, {disagreements} read otherwise by PyYAML, {} of those otherwise than kustomize",
        texts.len(),
        failures.len()
    ));
    assert!(failures.is_empty(), "documents we read otherwise than kustomize (go-yaml):\n{}", failures.join("\n\n"));
}
