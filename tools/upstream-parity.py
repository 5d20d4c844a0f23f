#!/usr/bin/env python3
"""Compare complete/<provider> with upstream's Helm chart at the pinned commit.

    tools/upstream-parity.py [--build CMD] [--helm CMD] [--check]

For every provider folder under overlays/, renders the vendored chart
(data/upstream-chart/peerpods, see tools/vendor-upstream-install.py) with its
`providers/<provider>.yaml` values, release `peerpods` in namespace
confidential-containers-system, CRDs included, kata-deploy included, with
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
WRONG = os.path.join(REPO, "docs/upstream-has-wrong.yaml")
REPORT = os.path.join(REPO, "docs/upstream-parity.md")
NAMESPACE = "confidential-containers-system"
SHOWN = 70  # characters of a value shown in the report


def load_vendor_tool():
    spec = importlib.util.spec_from_file_location(
        "vendor_upstream_install", os.path.join(REPO, "tools/vendor-upstream-install.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Providers whose values file the chart names otherwise (it renders CLOUD_PROVIDER from it,
# see "What upstream has wrong" in the report).
CHART_PROVIDER_FILES = {"ibmcloud-powervs": "ibmcloudpowervs"}


def render_chart(helm, provider):
    """The chart's resources for one provider, as `helm template --include-crds` renders them."""
    values = os.path.join(CHART, "providers", f"{CHART_PROVIDER_FILES.get(provider, provider)}.yaml")
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


def source_of_chart():
    """(release tag and commit, adaptor image commit, kata-deploy tag) as
    data/upstream-chart/SOURCE records them."""
    with open(os.path.join(REPO, "data/upstream-chart/SOURCE"), encoding="utf-8") as f:
        release, adaptor, kata = (f.readline().split() for _ in range(3))
    return " ".join(release[1:]), adaptor[-1], kata[1]


def load_wrong():
    with open(WRONG, encoding="utf-8") as f:
        return yaml.safe_load(f) or []


def evidence_errors(items, read_adaptor=None):
    """Evidence whose line does not hold the text recorded for it. `chart` evidence is read from
    the vendored chart; `adaptor` evidence with read_adaptor(path) -> text, when given."""
    errors = []
    for item in items:
        for evidence in item["evidence"]:
            if evidence["in"] == "chart":
                path = os.path.join(CHART, evidence["file"])
                text = open(path, encoding="utf-8").read() if os.path.exists(path) else None
            elif read_adaptor is not None:
                text = read_adaptor(evidence["file"])
            else:
                continue
            lines = (text or "").split("\n")
            line = evidence["line"]
            if text is None or line > len(lines) or lines[line - 1] != evidence["text"]:
                errors.append(f"{evidence['in']} {evidence['file']}:{line} no longer reads "
                              f"{evidence['text']!r} (\"{item['title']}\" in docs/upstream-has-wrong.yaml)")
    return errors


def wrong_section(items):
    tag, adaptor, _ = source_of_chart()
    lines = ["## What upstream has wrong", "",
             "What the release gets wrong and this tree gets right, from `docs/upstream-has-wrong.yaml`;",
             f"`chart` lines are in the chart at {tag}, `adaptor` lines in the adaptor at {adaptor}.", ""]
    for number, item in enumerate(items, 1):
        lines += [f"### {number}. {item['title']}", "", item["body"], "", "Evidence:", ""]
        for evidence in item["evidence"]:
            where = (f"src/cloud-api-adaptor/install/charts/peerpods/{evidence['file']}"
                     if evidence["in"] == "chart" else evidence["file"])
            lines.append(f"- `{where}:{evidence['line']}`: `{evidence['text'].strip()}`")
        lines.append("")
    return lines


def report(rows_by_provider, wrong):
    tag, adaptor, kata = source_of_chart()
    lines = [
        "# Differences from upstream's Helm chart",
        "",
        "Generated by `tools/upstream-parity.py`; do not edit. `complete/<provider>` compared,",
        f"resource by resource and field by field, with upstream's chart `peerpods` at {tag}",
        f"(`data/upstream-chart`; its images pinned at {adaptor}, the commit `base/` pins)",
        "with its subcharts peerpodctrl and webhook, rendered with `providers/<provider>.yaml`",
        "(`ibmcloudpowervs.yaml` for ibmcloud-powervs), release `peerpods` in",
        f"`confidential-containers-system`, CRDs included, its `kata-deploy` dependency ({kata},",
        "from kata-containers) included. Every difference has its reason in",
        "`docs/upstream-parity-reasons.yaml`; `cargo test upstream_parity` fails on a difference",
        "without one. A new release is one command, `tools/bump-upstream` (docs/peerpods.md,",
        "\"Moving to another upstream release\"); read the diff of this file after it.",
        "",
    ]
    lines += wrong_section(wrong)
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
    source = source_of_chart()[0]
    for alias, output in vendor.COMPONENTS.items():
        expected = vendor.component_text(CHART, alias, source)
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
    wrong = load_wrong()
    text = report(rows_by_provider, wrong)
    errors = evidence_errors(wrong)
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
