#!/usr/bin/env python3
"""Derive the table of settings the cloud-api-adaptor reads, per provider.

Reads the adaptor's source (a checkout, or a git directory plus a commit) and
prints a TSV table, one row per (provider, key):

    provider  key  type  default  required  secret  source

- provider: a provider name, or `*` for keys every provider reads.
- type: string, int, uint, float, bool, duration, list (comma separated), or
  exact-true (only the literal `true` switches it on).
- default: what the adaptor uses when the key is absent or empty (Go
  constants resolved where they are plain literals).
- required: `entrypoint` (the entrypoint script exits when it is empty),
  `one-of:A|B` (the entrypoint needs at least one of the group), `flag` (the
  Go flag is declared required), or empty.
- secret: `yes` for keys the Go flag declares secret (they belong in the
  credentials Secret, not in peer-pods-cm).
- source: where the key is read: `flag` (FlagRegistrar in Go), `getenv`
  (os.Getenv in Go), `sdk` (an `Env...` constant of a provider package naming a
  variable its cloud SDK's credential chain reads) or `entrypoint`
  (entrypoint.sh).

Where the keys come from:
- `src/cloud-api-adaptor/cmd/cloud-api-adaptor/main.go`: the flags every
  provider reads (`reg.<Type>WithEnv(&field, "flag", default, "ENV", ...)`);
- `src/cloud-providers/<provider>/manager.go`: each provider's flags
  (`provider.AddCloudProvider("<name>", ...)` names the provider);
- `os.Getenv("KEY")` in the adaptor's Go packages that run in the DaemonSet;
- `src/cloud-api-adaptor/entrypoint.sh`: `test_vars`/`one_of` checks (a
  `test_vars` inside an `if` block holds on one branch only: not required) and
  `${KEY}` uses in each provider's function; a global `KEY=${KEY:-default}`
  counts only when something reads KEY afterwards.

Usage:
    tools/adaptor-settings.py SOURCE [--commit REV] > data/adaptor-settings.tsv

SOURCE is a checkout of cloud-api-adaptor or its git directory; with a git
directory, --commit names the revision (default HEAD).
"""

import argparse
import os
import re
import subprocess
import sys

ADAPTOR = "src/cloud-api-adaptor"
PROVIDERS = "src/cloud-providers"
# Go packages whose os.Getenv reads happen in the adaptor DaemonSet for every
# provider (not the pod VM's forwarder, not tests, not helper commands).
COMMON_GETENV_DIRS = [
    f"{ADAPTOR}/cmd/cloud-api-adaptor",
    f"{ADAPTOR}/pkg/adaptor",
    f"{ADAPTOR}/pkg/probe",
    PROVIDERS,  # its top-level files only (the plugin table, helpers)
]
# Variables the process environment provides, not settings a user writes.
ENVIRONMENT_ONLY = {"NODE_NAME", "POD_NAMESPACE", "NOTIFY_SOCKET", "HOME", "PATH"}

TYPES = {
    "String": "string",
    "Int": "int",
    "Uint": "uint",
    "Float64": "float",
    "Bool": "bool",
    "Duration": "duration",
    "CustomType": "list",
}


class Source:
    """Files of the adaptor source: a work tree, or a git directory at a commit."""

    def __init__(self, path, commit):
        self.path = path
        self.git = commit is not None or not os.path.isdir(os.path.join(path, ADAPTOR))
        self.commit = commit or "HEAD"
        if self.git:
            self.commit = self._git("rev-parse", f"{self.commit}^{{commit}}").strip()
        elif not os.path.exists(os.path.join(path, ".git")):
            self.commit = "unknown (not a git checkout)"
        else:
            try:
                self.commit = subprocess.run(
                    ["git", "-C", path, "rev-parse", "HEAD"],
                    check=True, capture_output=True, text=True).stdout.strip()
            except (OSError, subprocess.CalledProcessError):
                self.commit = "unknown (not a git checkout)"

    def _git(self, *args):
        return subprocess.run(["git", "--git-dir", self.path, *args],
                              check=True, capture_output=True, text=True).stdout

    def files(self, folder):
        """Paths of the files directly in `folder`."""
        if self.git:
            out = self._git("ls-tree", "--name-only", f"{self.commit}:{folder}")
            names = out.split()
            kinds = self._git("ls-tree", f"{self.commit}:{folder}").splitlines()
            blobs = {line.split("\t")[1] for line in kinds if " blob " in line}
            return [f"{folder}/{n}" for n in names if n in blobs]
        full = os.path.join(self.path, folder)
        return [f"{folder}/{n}" for n in sorted(os.listdir(full))
                if os.path.isfile(os.path.join(full, n))]

    def dirs(self, folder):
        if self.git:
            lines = self._git("ls-tree", f"{self.commit}:{folder}").splitlines()
            return sorted(f"{folder}/{l.split(chr(9))[1]}" for l in lines if " tree " in l)
        full = os.path.join(self.path, folder)
        return [f"{folder}/{n}" for n in sorted(os.listdir(full))
                if os.path.isdir(os.path.join(full, n))]

    def go_files(self, folder, recursive=False):
        found = [f for f in self.files(folder) if f.endswith(".go") and not f.endswith("_test.go")]
        if recursive:
            for sub in self.dirs(folder):
                found += self.go_files(sub, recursive=True)
        return found

    def read(self, path):
        if self.git:
            return self._git("show", f"{self.commit}:{path}")
        with open(os.path.join(self.path, path), encoding="utf-8") as f:
            return f.read()


def go_constants(source):
    """Plain literal constants of the adaptor's Go packages, by name."""
    constants = {}
    pattern = re.compile(r'^\s*(?:const\s+)?([A-Za-z_]\w*)\s*=\s*("(?:[^"\\]|\\.)*"|[0-9.]+(?:\s*\*\s*time\.\w+)?)\s*$')
    for folder in [f"{ADAPTOR}/pkg", PROVIDERS]:
        for path in source.go_files(folder, recursive=True):
            for line in source.read(path).splitlines():
                m = pattern.match(line)
                if m:
                    constants.setdefault(m.group(1), m.group(2))
    return constants


def go_default(expression, constants):
    expression = expression.strip()
    name = expression.split(".")[-1]
    value = constants.get(name, expression) if re.fullmatch(r"[\w.]+", expression) else expression
    m = re.fullmatch(r"([0-9.]+)\s*\*\s*time\.(\w+)", value)
    if m:
        unit = {"Minute": "m", "Second": "s", "Hour": "h"}.get(m.group(2))
        if unit:
            return f"{m.group(1)}{unit}"
    if value.startswith('"') and value.endswith('"'):
        return value[1:-1]
    return value


def split_arguments(text):
    """Top-level comma-separated arguments of a Go call's argument list."""
    args, depth, current, quoted = [], 0, "", False
    for i, c in enumerate(text):
        if quoted:
            current += c
            if c == '"' and text[i - 1] != "\\":
                quoted = False
            continue
        if c == '"':
            quoted = True
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            args.append(current.strip())
            current = ""
            continue
        current += c
    if current.strip():
        args.append(current.strip())
    return args


REGISTRAR_CALL = re.compile(r"\breg\.(\w+?)WithEnv\((.*)\)\s*$")


def flag_rows(text, constants):
    rows = []
    for line in text.splitlines():
        m = REGISTRAR_CALL.search(line.strip())
        if not m or m.group(1) not in TYPES:
            continue
        args = split_arguments(m.group(2))
        env = args[3].strip('"')
        if not env:
            continue  # a flag without an environment variable
        options = " ".join(args[5:])
        rows.append({
            "key": env,
            "type": TYPES[m.group(1)],
            "default": go_default(args[2], constants),
            "required": "flag" if "Required()" in options else "",
            "secret": "yes" if "Secret()" in options else "",
            "source": "flag",
        })
    return rows


GETENV = re.compile(r'os\.(?:Getenv|LookupEnv)\(\s*("?)(\w+)\1\s*\)(\s*[!=]=\s*"true")?')


def getenv_rows(text, constants):
    rows = []
    for quote, name, exact in GETENV.findall(text):
        key = name if quote else go_default(name, constants)
        if not re.fullmatch(r"[A-Z][A-Z0-9_]*", key) or key in ENVIRONMENT_ONLY:
            continue
        rows.append({"key": key, "type": "exact-true" if exact else "string", "default": "",
                     "required": "", "secret": "", "source": "getenv"})
    return rows


SDK_CONSTANT = re.compile(r'^\s*Env[A-Z]\w*\s*=\s*"([A-Z][A-Z0-9_]*)"\s*$', re.M)


def sdk_rows(text):
    return [{"key": key, "type": "string", "default": "", "required": "", "secret": "",
             "source": "sdk"} for key in SDK_CONSTANT.findall(text)]


def entrypoint_rows(text):
    """Per provider function: rows; plus the global rows (provider `*`)."""
    functions, current, body = {}, None, []
    for line in text.splitlines():
        m = re.match(r"^(\w+)\(\)\s*\{", line)
        if m:
            current, body = m.group(1), []
            continue
        if current and line.startswith("}"):
            functions[current] = "\n".join(body)
            current = None
            continue
        if current:
            body.append(line)
    dispatch = dict(re.findall(r'"\$CLOUD_PROVIDER" == "([\w-]+)" \]\]; then\s*\n\s*(\w+)', text))
    per_provider = {}
    for provider, function in dispatch.items():
        body = functions.get(function, "")
        rows = {}
        depth = 0  # `if` blocks around the line: their checks hold only on one branch
        for line in body.splitlines():
            words = line.split()
            if words[:1] == ["if"]:
                depth += 1
            elif words[:1] == ["fi"]:
                depth -= 1
            elif words[:1] == ["test_vars"]:
                for key in words[1:]:
                    if depth == 0:
                        rows[key] = "entrypoint"
                    else:
                        rows.setdefault(key, "")
            elif words[:1] == ["one_of"]:
                for key in words[1:]:
                    rows[key] = "one-of:" + "|".join(words[1:])
        for key in re.findall(r"\$\{?([A-Z][A-Z0-9_]*)", body):
            rows.setdefault(key, "")
        per_provider[provider] = [
            {"key": k, "type": "string", "default": "", "required": r, "secret": "",
             "source": "entrypoint"} for k, r in rows.items()]
    # Globals: KEY=${KEY:-default}, kept when something reads KEY afterwards.
    outside = "\n".join(line for line in text.splitlines()
                        if not re.match(r"^[A-Z_]+=\$\{", line))
    common = []
    for key, default in re.findall(r"^([A-Z][A-Z0-9_]*)=\$\{\1:-([^}]*)\}", text, re.M):
        if key == "CLOUD_PROVIDER":
            continue
        used = re.search(r"\$\{?" + key + r"\b", outside) is not None
        common.append({"key": key, "type": "string", "default": default, "required": "",
                       "secret": "", "source": "entrypoint", "used": used})
    return per_provider, common


def merge(rows):
    """One row per key: the first reader's type and default, the strongest requirement."""
    merged = {}
    strength = {"": 0, "flag": 1}
    for row in rows:
        key = row["key"]
        if key not in merged:
            merged[key] = dict(row)
            continue
        have = merged[key]
        if row["source"] not in have["source"].split(","):
            have["source"] += "," + row["source"]
        for field in ("secret", "default"):
            have[field] = have[field] or row[field]
        if have["type"] == "string" and row["source"] != "entrypoint":
            have["type"] = row["type"]
        new, old = row["required"], have["required"]
        if new.startswith("one-of") or new == "entrypoint":
            have["required"] = new if old in ("", "flag") else old
        elif strength.get(new, 0) > strength.get(old, 0):
            have["required"] = new
    return merged


def derive(source):
    constants = go_constants(source)
    main = source.read(f"{ADAPTOR}/cmd/cloud-api-adaptor/main.go")
    common = flag_rows(main, constants)
    for folder in COMMON_GETENV_DIRS:
        for path in source.go_files(folder, recursive=folder != PROVIDERS):
            common += getenv_rows(source.read(path), constants)
    entry_provider, entry_common = entrypoint_rows(source.read(f"{ADAPTOR}/entrypoint.sh"))
    common_keys = {r["key"] for r in common}
    for row in entry_common:
        if row.pop("used") or row["key"] in common_keys:
            common.append(row)
        else:
            print(f"note: entrypoint.sh sets {row['key']} but nothing reads it; left out",
                  file=sys.stderr)
    table = {"*": merge(common)}
    for folder in source.dirs(PROVIDERS):
        manager = f"{folder}/manager.go"
        if manager not in source.files(folder):
            continue
        text = source.read(manager)
        m = re.search(r'AddCloudProvider\("([\w-]+)"', text)
        if not m:
            continue
        provider = m.group(1)
        rows = flag_rows(text, constants)
        for path in source.go_files(folder):
            rows += getenv_rows(source.read(path), constants)
            rows += sdk_rows(source.read(path))
        rows += entry_provider.get(provider, [])
        table[provider] = merge(rows)
    unknown = set(entry_provider) - set(table)
    for provider in sorted(unknown):
        print(f"note: entrypoint.sh handles {provider}, which has no provider package",
              file=sys.stderr)
    return table


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", help="cloud-api-adaptor checkout or git directory")
    parser.add_argument("--commit", help="revision, when SOURCE is a git directory")
    args = parser.parse_args()
    source = Source(args.source, args.commit)
    table = derive(source)
    out = sys.stdout
    out.write("# Settings the cloud-api-adaptor reads, per provider (`*`: every provider).\n")
    out.write(f"# source: confidential-containers/cloud-api-adaptor {source.commit}\n")
    out.write("# generated by tools/adaptor-settings.py; do not edit by hand.\n")
    columns = ["provider", "key", "type", "default", "required", "secret", "source"]
    out.write("\t".join(columns) + "\n")
    for provider in sorted(table, key=lambda p: (p != "*", p)):
        for key in sorted(table[provider]):
            row = table[provider][key]
            values = [provider, key] + [row[c] for c in columns[2:]]
            out.write("\t".join(v.replace("\t", " ") for v in values) + "\n")


if __name__ == "__main__":
    main()
