//! Flux's own build (`tools/flux-build`, over `github.com/fluxcd/pkg/kustomize`, the package
//! kustomize-controller embeds): for every `overlays/<provider>`, what Flux applies from the folder
//! the Flux route commits (`peerpods-build build overlays/<p> -o rendered/<p>`, plain YAML, no
//! kustomization.yaml) is what Flux would have built from the source tree itself, with the
//! provider's Flux Kustomization as `deploy/flux/providers.yaml` writes it and with one that sets
//! Flux's own fields too: the same objects, byte for byte (Flux's build keeps the resources' order,
//! and its server-side apply orders them by kind itself).
use std::fs;
use std::path::Path;

use crate::common::{self, TempTree};
use crate::go_clients;

/// Flux Kustomizations (their spec is what the generator reads): the route's own (a path and
/// nothing else) and one with every field that changes the build.
const SPECS: [(&str, &str); 2] = [
    ("plain", "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: peer-pods\n  namespace: flux-system\nspec:\n  prune: true\n"),
    (
        "own-fields",
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: peer-pods\n  namespace: flux-system\nspec:\n  prune: true\n  \
         targetNamespace: peer-pods\n  commonMetadata:\n    labels:\n      team: platform\n    annotations:\n      \
         example.com/owner: platform\n  images:\n  - name: quay.io/confidential-containers/cloud-api-adaptor\n    newTag: flux-pinned\n  \
         patches:\n  - target:\n      kind: DaemonSet\n    patch: |\n      - op: add\n        path: /metadata/labels/patched-by\n        value: flux\n",
    ),
];

/// The documents of a YAML stream, sorted: the objects Flux applies, in no particular order.
fn objects(stream: &str) -> Vec<String> {
    let mut documents: Vec<String> = stream.split("\n---\n").map(|d| format!("{}\n", d.trim_end_matches('\n'))).filter(|d| d.trim() != "").collect();
    documents.sort();
    documents
}

fn flux_build(program: &Path, root: &Path, path: &str, spec: &Path) -> common::Run {
    common::run_program(program.to_str().unwrap(), &["-kustomization", spec.to_str().unwrap(), "-no-remote-bases", root.to_str().unwrap(), path], root)
}

#[test]
fn client_flux_applies_from_our_rendered_folders_what_it_builds_from_every_overlay() {
    let label = "Flux's build of every overlay";
    let Some((flux, _)) = go_clients::client(label, go_clients::FLUX_BUILD) else { return };
    // The source tree as a GitRepository holds it: the folders the overlays read.
    let tree = TempTree::new("flux");
    for folder in ["base", "components", "overlays"] {
        common::copy_dir(&common::manifest_dir().join(folder), &tree.root.join(folder));
    }
    let providers = common::provider_folders();
    assert!(!providers.is_empty());
    let mut failures = Vec::new();
    for provider in &providers {
        let overlay = format!("overlays/{provider}");
        let rendered = format!("rendered/{provider}");
        // As the README's Flux route does: mkdir -p rendered/<p>, then build into it.
        fs::create_dir_all(tree.root.join(&rendered)).unwrap();
        let ours = common::ours(&["build", &overlay, "-o", &rendered], &tree.root);
        assert!(ours.success(), "{overlay}: {}", ours.stderr);
        assert!(!tree.root.join(&rendered).join("kustomization.yaml").exists(), "{rendered} holds a kustomization.yaml, which Flux would build instead");
        for (name, text) in SPECS {
            let spec = tree.write(&format!("flux-{name}.yaml"), text);
            let from_source = flux_build(&flux, &tree.root, &overlay, &spec);
            let from_rendered = flux_build(&flux, &tree.root, &rendered, &spec);
            if !from_source.success() || !from_rendered.success() {
                failures.push(format!("{provider} ({name}): Flux failed: source {:?} {}; rendered {:?} {}", from_source.code, from_source.stderr, from_rendered.code, from_rendered.stderr));
                continue;
            }
            // Flux's build does not sort (kustomize's legacy order is the CLI's choice), and its
            // server-side apply orders the objects by kind itself: the same objects, byte for byte,
            // is the same apply.
            let (source, ours) = (objects(&from_source.stdout), objects(&from_rendered.stdout));
            if source.is_empty() {
                failures.push(format!("{provider} ({name}): Flux built nothing from the source"));
            } else if source != ours {
                let diff = similar::TextDiff::from_lines(&source.join("---\n"), &ours.join("---\n")).unified_diff().header("from the source", "from our rendering").to_string();
                failures.push(format!("{provider} ({name}): Flux applies something else from our rendering:\n{diff}"));
            }
        }
        // The generator's kustomization.yaml is removed again: the folders are as committed.
        assert!(!tree.root.join(&rendered).join("kustomization.yaml").exists());
    }
    assert!(failures.is_empty(), "{} of {} Flux builds differ:\n\n{}", failures.len(), providers.len() * SPECS.len(), failures.join("\n\n"));
    common::say_past_capture(&format!("Flux's build checked for {} providers: {}", providers.len(), providers.join(", ")));
}
