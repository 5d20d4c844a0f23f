#!/usr/bin/env python3
"""Compare complete/<provider> with upstream's Helm chart at the pinned commit.

    tools/upstream-parity.py [--build CMD] [--helm CMD] [--check]

For every provider folder under overlays/, renders the vendored chart
(data/upstream-chart/peerpods, see tools/vendor-upstream-install.py) with its
`providers/<provider>.yaml` values, release `peerpods` in namespace
confidential-containers-system, CRDs included, kata-deploy left out, with
`helm template` (default: tools/helm-standin/helm, run under this Python); builds
`complete/<provider>` with CMD (default: target/debug/peerpods-build build);
and lists every difference, resource by resource and field by field: a
resource only one side renders, or a field whose value differs.

Each difference must be explained by an entry of docs/upstream-parity-reasons.yaml
(`match`: `PROVIDER CHANGE RESOURCE FIELD`, where `*` matches anything; `reason`:
why it exists). Without --check, writes docs/upstream-parity.md. With --check,
writes nothing and exits 1 when a difference has no reason, a reason matches
no difference, the report is not the one the tree gives, or the vendored
components (components/peerpod-ctrl, components/webhook) are not the vendored
chart's rendering. Exit 3: helm-python-sdk or PyYAML is missing.

Needs the PyPI packages helm-python-sdk and PyYAML.
"""

import argparse
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys

try:
    import helm_python  # noqa: F401 (the helm stand-in and the vendoring tool need it)
    import yaml
except ImportError as missing:
    print(f"upstream-parity: {missing} (python3 -m pip install helm-python-sdk pyyaml)", file=sys.stderr)
    sys.exit(3)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHART = os.path.join(REPO, "data/upstream-chart/peerpods")
REASONS = os.path.join(REPO, "docs/upstream-parity-reasons.yaml")
REPORT = os.path.join(REPO, "docs/upstream-parity.md")
NAMESPACE = "confidential-containers-system"
SHOWN = 70  # characters of a value shown in the report


def load_vendor_tool():
    spec = importlib.util.spec_from_file_location(
        "vendor_upstream_install", os.path.join(REPO, "tools/vendor-upstream-install.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def render_chart(helm, provider):
    """The chart's resources for one provider, as `helm template --include-crds` renders them."""
    values = os.path.join(CHART, "providers", f"{provider}.yaml")
    env = dict(os.environ, PEERPODS_HELM_PYTHON=sys.executable)
    run = subprocess.run(shlex.split(helm) + ["template", "peerpods", CHART, "--namespace", NAMESPACE,
                                              "-f", values, "--include-crds"],
                         capture_output=True, text=True, env=env)
    if run.returncode != 0:
        sys.exit(f"upstream-parity: helm template for {provider} failed:\n{run.stderr}")
    return [doc for doc in yaml.safe_load_all(run.stdout) if doc]


def build_ours(build, provider):
    run = subprocess.run(shlex.split(build) + [os.path.join(REPO, "complete", provider)],
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"upstream-parity: complete/{provider} does not build:\n{run.stderr}")
    return [doc for doc in yaml.safe_load_all(run.stdout) if doc]


def resource_id(doc):
    metadata = doc.get("metadata") or {}
    namespace = metadata.get("namespace")
    name = metadata.get("name", "")
    return f"{doc.get('kind')}/{namespace}/{name}" if namespace else f"{doc.get('kind')}/{name}"


def by_id(docs):
    return {resource_id(doc): doc for doc in docs}


def show(value):
    text = value if isinstance(value, str) and value else json.dumps(value, sort_keys=True)
    # The settings hash changes with every setting; the report shows that it is there.
    text = re.sub(r"peer-pods-settings-[a-z0-9]{10}\b", "peer-pods-settings-<hash>", text)
    text = text.replace("|", "\\|").replace("\n", "\\n")
    return text if len(text) <= SHOWN else text[:SHOWN - 3] + "..."


def keyed(items):
    """List items by name when every item has a distinct one, else by index."""
    names = [item.get("name") if isinstance(item, dict) else None for item in items]
    if items and all(isinstance(n, str) for n in names) and len(set(names)) == len(names):
        return {f"[name={n}]": item for n, item in zip(names, items)}
    return {f"[{i}]": item for i, item in enumerate(items)}


def field_differences(upstream, ours, path=""):
    """(field, upstream value, our value) for every leaf that differs; None: absent."""
    if isinstance(upstream, dict) and isinstance(ours, dict):
        out = []
        for key in sorted(set(upstream) | set(ours)):
            out += field_differences(upstream.get(key), ours.get(key), f"{path}.{key}" if path else key)
        return out
    if isinstance(upstream, list) and isinstance(ours, list):
        left, right = keyed(upstream), keyed(ours)
        if any(k.startswith("[name=") for k in left) or any(k.startswith("[name=") for k in right):
            out = []
            for key in list(left) + [k for k in right if k not in left]:
                out += field_differences(left.get(key), right.get(key), path + key)
            return out
    return [] if upstream == ours else [(path, upstream, ours)]


def differences(provider, upstream, ours):
    """Every difference of one provider: (change, resource, field, upstream, ours). The change
    is only-upstream or only-ours for a resource; added (only ours has the field), removed
    (only the chart has it) or changed for a field."""
    found = []
    for rid in sorted(set(upstream) | set(ours)):
        if rid not in ours:
            found.append(("only-upstream", rid, "", "", ""))
        elif rid not in upstream:
            found.append(("only-ours", rid, "", "", ""))
        else:
            for field, theirs, mine in field_differences(upstream[rid], ours[rid]):
                change = "added" if theirs is None else "removed" if mine is None else "changed"
                found.append((change, rid, field, "" if theirs is None else show(theirs),
                              "" if mine is None else show(mine)))
    return found


def pattern(text):
    return re.compile("^" + ".*".join(re.escape(part) for part in text.split("*")) + "$")


def load_reasons():
    with open(REASONS, encoding="utf-8") as f:
        entries = yaml.safe_load(f) or []
    return [(entry["match"], pattern(entry["match"]), entry["reason"]) for entry in entries]


def explain(provider, difference, reasons, used):
    change, rid, field = difference[:3]
    key = f"{provider} {change} {rid} {field}".rstrip()
    for index, (_, regex, reason) in enumerate(reasons):
        if regex.match(key):
            used.add(index)
            return reason
    return None


def commit_of_chart():
    with open(os.path.join(REPO, "data/upstream-chart/SOURCE"), encoding="utf-8") as f:
        return f.readline().split()[-1]


def report(rows_by_provider):
    lines = [
        "# Differences from upstream's Helm chart",
        "",
        "Generated by `tools/upstream-parity.py`; do not edit. `complete/<provider>` compared,",
        f"resource by resource and field by field, with upstream's chart at {commit_of_chart()}",
        "(`data/upstream-chart`, the commit `base/` pins) rendered with `providers/<provider>.yaml`,",
        "release `peerpods` in `confidential-containers-system`, CRDs included. The chart's",
        "`kata-deploy` dependency is left out (it installs kata, which this tree expects from the",
        "CoCo operator). Every difference has its reason in `docs/upstream-parity-reasons.yaml`;",
        "`cargo test upstream_parity` fails on a difference without one. After a change, or a new",
        "pin (`base/` and `tools/vendor-upstream-install.py` together), regenerate with",
        "`tools/upstream-parity.py` and read the diff of this file.",
        "",
    ]
    for provider, rows in rows_by_provider.items():
        lines += [f"## {provider}", "",
                  f"{len(rows)} differences.", "",
                  "| change | resource | field | chart | ours | reason |",
                  "|---|---|---|---|---|---|"]
        for (change, rid, field, theirs, mine), reason in rows:
            cells = [change, f"`{rid}`", f"`{field}`" if field else "", f"`{theirs}`" if theirs else "",
                     f"`{mine}`" if mine else "", reason]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def vendored_components_are_current(chart_errors):
    vendor = load_vendor_tool()
    commit = commit_of_chart()
    for alias, output in vendor.COMPONENTS.items():
        expected = vendor.component_text(CHART, alias, commit)
        with open(os.path.join(REPO, output), encoding="utf-8") as f:
            if f.read() != expected:
                chart_errors.append(f"{output} is not the vendored chart's {alias} subchart: "
                                    "rerun tools/vendor-upstream-install.py")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(REPO, "target/debug/peerpods-build") + " build")
    parser.add_argument("--helm", default=os.path.join(REPO, "tools/helm-standin/helm"))
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    reasons = load_reasons()
    used = set()
    unexplained = []
    rows_by_provider = {}
    for provider in sorted(os.listdir(os.path.join(REPO, "overlays"))):
        upstream = by_id(render_chart(args.helm, provider))
        ours = by_id(build_ours(args.build, provider))
        rows = []
        for difference in differences(provider, upstream, ours):
            reason = explain(provider, difference, reasons, used)
            if reason is None:
                unexplained.append(f"{provider} {' '.join(d for d in difference[:3] if d)}"
                                   f" (chart: {difference[3] or '-'}, ours: {difference[4] or '-'})")
                reason = "**unexplained**"
            rows.append((difference, reason))
        rows_by_provider[provider] = rows
    text = report(rows_by_provider)
    errors = []
    if unexplained:
        errors.append("differences from upstream's chart without a reason in "
                      "docs/upstream-parity-reasons.yaml:\n  " + "\n  ".join(unexplained))
    stale = [match for index, (match, _, _) in enumerate(reasons) if index not in used]
    if stale:
        errors.append("reasons in docs/upstream-parity-reasons.yaml that explain no difference (remove them):\n  "
                      + "\n  ".join(stale))
    if args.check:
        vendored_components_are_current(errors)
        current = open(REPORT, encoding="utf-8").read() if os.path.exists(REPORT) else ""
        if current != text:
            errors.append("docs/upstream-parity.md is not current: run tools/upstream-parity.py")
    else:
        with open(REPORT, "w", encoding="utf-8") as f:
            f.write(text)
    if errors:
        print("\n".join(errors), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
