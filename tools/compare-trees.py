#!/usr/bin/env python3
"""Builds every kustomization folder under ROOT with the reference (kubectl kustomize) and with
peerpods-build, and sorts the folders: the same bytes, different bytes, only one of the two
failing, both failing (with kustomize's last error line in ours, or not).

    tools/compare-trees.py ROOT OUT [--ours BIN] [--reference KUBECTL] [--jobs N]

Writes a file per folder that is not the same (both outputs, both errors) into OUT, prints one
line per such folder and a JSON summary last. For a checkout of a public repository: every
kustomization in it, the way its users build them."""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys

NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


def folders(root):
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(s for s in subfolders if s != ".git")
        if any(name in files for name in NAMES):
            yield folder


def run(command):
    try:
        done = subprocess.run(command, capture_output=True, timeout=120)
        return done.returncode, done.stdout, done.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        return -9, b"", "timed out after 120 s"


def last_error_line(stderr):
    lines = stderr.strip().splitlines()
    line = lines[-1] if lines else ""
    for prefix in ("Error: ", "error: "):
        line = line.removeprefix(prefix)
    return line


def verdict(theirs, ours):
    if theirs[0] == 0 and ours[0] == 0:
        return "same" if theirs[1] == ours[1] else "different"
    if theirs[0] == 0:
        return "only-ours-fails"
    if ours[0] == 0:
        return "only-kustomize-fails"
    return "both-fail" if last_error_line(theirs[2]) in ours[2] else "both-fail-other-words"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root")
    parser.add_argument("out")
    parser.add_argument("--ours", default="target/release/peerpods-build")
    parser.add_argument("--reference", default=os.path.expanduser("~/.cache/peerpods-build-reference/kubectl-1.37.1/bin/kubectl"))
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)

    def both(folder):
        return folder, run([args.reference, "kustomize", folder]), run([args.ours, "build", folder])

    counts = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for folder, theirs, ours in pool.map(both, list(folders(args.root))):
            kind = verdict(theirs, ours)
            counts[kind] = counts.get(kind, 0) + 1
            if kind in ("same", "both-fail"):
                continue
            relative = os.path.relpath(folder, args.root)
            name = os.path.join(args.out, relative.replace(os.sep, "__"))
            with open(name + ".txt", "w") as f:
                f.write(f"{kind} {folder}\n--- kustomize (exit {theirs[0]})\n{theirs[2]}\n--- ours (exit {ours[0]})\n{ours[2]}\n")
            if kind == "different":
                with open(name + ".kustomize.yaml", "wb") as f:
                    f.write(theirs[1])
                with open(name + ".ours.yaml", "wb") as f:
                    f.write(ours[1])
            print(kind, relative, flush=True)
    print(json.dumps(counts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
