#!/usr/bin/env python3
"""Render upstream's peerpod-ctrl and webhook kustomizations at a commit into
the components that ship them.

    tools/vendor-upstream-install.py CAA_GIT_DIR --commit COMMIT [--build CMD]

Exports `src/peerpod-ctrl/config` and `src/webhook/config` of
confidential-containers/cloud-api-adaptor at COMMIT (git archive), builds each
`config/default` with CMD (default: `peerpods-build build`, any kustomize
v5.6.0-compatible command works), and writes the rendering, with its source
recorded in a header, to:

    components/peerpod-ctrl/upstream.yaml   (without the Namespace
        confidential-containers-system: the peer pods install never owns it)
    components/webhook/upstream.yaml

Run it again whenever base/kustomization.yaml pins another adaptor commit.
"""

import argparse
import os
import shlex
import subprocess
import sys
import tarfile
import tempfile
import io

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGETS = [
    ("src/peerpod-ctrl/config", "components/peerpod-ctrl/upstream.yaml",
     {("Namespace", "confidential-containers-system")}),
    ("src/webhook/config", "components/webhook/upstream.yaml", set()),
]


def documents(text):
    docs, current = [], []
    for line in text.splitlines(keepends=True):
        if line.rstrip("\n") == "---":
            docs.append("".join(current))
            current = []
        else:
            current.append(line)
    docs.append("".join(current))
    return [d for d in docs if d.strip()]


def kind_and_name(doc):
    kind = name = None
    in_metadata = False
    for line in doc.splitlines():
        if line.startswith("kind: "):
            kind = line[6:].strip()
        if not line.startswith(" "):
            in_metadata = line.startswith("metadata:")
        elif in_metadata and line.startswith("  name: "):
            name = line[8:].strip()
    return kind, name


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("git_dir")
    parser.add_argument("--commit", required=True)
    parser.add_argument("--build", default=os.path.join(REPO, "target/debug/peerpods-build") + " build")
    args = parser.parse_args()
    commit = subprocess.run(["git", "--git-dir", args.git_dir, "rev-parse", args.commit + "^{commit}"],
                            check=True, capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory() as scratch:
        for config, output, dropped in TARGETS:
            archive = subprocess.run(["git", "--git-dir", args.git_dir, "archive", commit, config],
                                     check=True, capture_output=True).stdout
            tarfile.open(fileobj=io.BytesIO(archive)).extractall(scratch, filter="data")
            build = subprocess.run(shlex.split(args.build) + [os.path.join(scratch, config, "default")],
                                   check=True, capture_output=True, text=True)
            kept = [d for d in documents(build.stdout) if kind_and_name(d) not in dropped]
            header = (f"# Rendered from confidential-containers/cloud-api-adaptor {commit},\n"
                      f"# {config}/default, by tools/vendor-upstream-install.py; do not edit.\n")
            with open(os.path.join(REPO, output), "w", encoding="utf-8") as out:
                out.write(header + "---\n".join(kept))
            print(f"{output}: {len(kept)} objects", file=sys.stderr)


if __name__ == "__main__":
    main()
