#!/usr/bin/env python3
"""Vendor upstream's peer pods Helm chart at a commit, and render the
peerpod-ctrl and webhook components from it.

    tools/vendor-upstream-install.py CAA_GIT_DIR --commit COMMIT

CAA_GIT_DIR is a clone (or a bare mirror) of
confidential-containers/cloud-api-adaptor. At COMMIT (git archive) it:

1. writes the chart `src/cloud-api-adaptor/install/charts/peerpods` to
   `data/upstream-chart/peerpods/`, with its two local subcharts
   (`src/peerpod-ctrl/chart` as `resourceCtrl`, `src/webhook/chart` as
   `webhook`) packaged into its `charts/`, and the `kata-deploy` dependency
   left out of `Chart.yaml` (it comes from an OCI registry and installs kata,
   which the peer pods tree does not ship); `data/upstream-chart/SOURCE`
   records the commit and these two changes. The parity report
   (`tools/upstream-parity.py`) renders this chart per provider.
2. renders the two subcharts (helm-python-sdk, release namespace
   confidential-containers-system, CRDs included) into the components that
   ship them, with their source recorded in a header:

    components/peerpod-ctrl/upstream.yaml
    components/webhook/upstream.yaml

Run it again whenever base/kustomization.yaml pins another adaptor commit;
`docs/upstream-parity.md` then shows what the new chart changes.
Needs the PyPI packages helm-python-sdk and PyYAML.
"""

import argparse
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHART = "src/cloud-api-adaptor/install/charts/peerpods"
SUBCHARTS = ["src/peerpod-ctrl/chart", "src/webhook/chart"]
LEFT_OUT = "kata-deploy"
VENDORED = os.path.join(REPO, "data/upstream-chart")
NAMESPACE = "confidential-containers-system"
# Subchart alias (as the parent chart names it) -> the component its rendering goes to.
COMPONENTS = {
    "resourceCtrl": "components/peerpod-ctrl/upstream.yaml",
    "webhook": "components/webhook/upstream.yaml",
}


def documents(text):
    """The YAML documents of a stream that hold more than comments and blank lines."""
    docs, current = [], []
    for line in text.splitlines(keepends=True):
        if line.rstrip() == "---":
            docs.append(current)
            current = []
        else:
            current.append(line)
    docs.append(current)
    content = lambda line: line.strip() and not line.lstrip().startswith("#")
    return ["".join(d).strip("\n") + "\n" for d in docs if any(content(line) for line in d)]


def export(git_dir, commit, paths, into):
    archive = subprocess.run(["git", "--git-dir", git_dir, "archive", commit, "--", *paths],
                             check=True, capture_output=True).stdout
    tarfile.open(fileobj=io.BytesIO(archive)).extractall(into, filter="data")


def vendor_chart(scratch, commit):
    """Copies the chart into data/upstream-chart/peerpods with its subcharts packaged."""
    import helm_python

    target = os.path.join(VENDORED, "peerpods")
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(os.path.join(scratch, CHART), target)
    os.makedirs(os.path.join(target, "charts"), exist_ok=True)
    packaged = [os.path.basename(helm_python.package(os.path.join(scratch, sub),
                                                     destination=os.path.join(target, "charts")))
                for sub in SUBCHARTS]
    chart_yaml = os.path.join(target, "Chart.yaml")
    with open(chart_yaml, encoding="utf-8") as f:
        lines = f.read().splitlines(keepends=True)
    # Drops the dependency entry `- name: kata-deploy` (up to the next `- name:`), keeping the
    # file's text otherwise as upstream wrote it.
    kept, skipping = [], False
    for line in lines:
        if line.lstrip().startswith("- name:"):
            skipping = line.split(":", 1)[1].strip() == LEFT_OUT
        elif skipping and not line.startswith("    ") and line.strip():
            skipping = False
        if not skipping:
            kept.append(line)
    with open(chart_yaml, "w", encoding="utf-8") as f:
        f.writelines(kept)
    assert LEFT_OUT not in [d["name"] for d in yaml.safe_load("".join(kept))["dependencies"]]
    with open(os.path.join(VENDORED, "SOURCE"), "w", encoding="utf-8") as f:
        f.write(f"confidential-containers/cloud-api-adaptor {commit}\n"
                f"peerpods/: {CHART}, verbatim but for two changes made by\n"
                f"tools/vendor-upstream-install.py:\n"
                f"- peerpods/charts/: {', '.join(packaged)}, packaged from {' and '.join(SUBCHARTS)}\n"
                f"  (Chart.yaml names them as file:// dependencies outside the chart);\n"
                f"- Chart.yaml: the {LEFT_OUT} dependency left out (an OCI chart that installs kata;\n"
                f"  the peer pods tree expects kata from the CoCo operator or kata-deploy itself).\n"
                f"Licence: Apache-2.0.\n")
    return target


def component_text(chart_dir, alias, commit):
    """The rendering of one subchart of the chart in chart_dir, as the component ships it."""
    import helm_python

    chart = helm_python.Chart.load(chart_dir)
    # The subcharts take no value from the provider; the chart's default provider renders.
    with open(os.path.join(chart_dir, "providers/libvirt.yaml"), encoding="utf-8") as f:
        values = yaml.safe_load(f)
    rendered = chart.render(values, name="peerpods", namespace=NAMESPACE, is_install=True)
    prefix = f"peerpods/charts/{alias}/"
    docs = [doc for crd in chart.crds if crd["filename"].startswith(prefix)
            for doc in documents(crd["data"])]
    for path in sorted(p for p in rendered if p.startswith(prefix + "templates/")):
        docs.extend(documents(rendered[path]))
    header = (f"# Rendered from confidential-containers/cloud-api-adaptor {commit},\n"
              f"# the {alias} subchart of {CHART} (data/upstream-chart),\n"
              f"# by tools/vendor-upstream-install.py; do not edit.\n")
    return header + "---\n".join(docs)


def render_components(chart_dir, commit):
    for alias, output in COMPONENTS.items():
        text = component_text(chart_dir, alias, commit)
        with open(os.path.join(REPO, output), "w", encoding="utf-8") as out:
            out.write(text)
        print(f"{output}: {text.count(chr(10) + 'kind: ')} objects", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("git_dir")
    parser.add_argument("--commit", required=True)
    args = parser.parse_args()
    commit = subprocess.run(["git", "--git-dir", args.git_dir, "rev-parse", args.commit + "^{commit}"],
                            check=True, capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory() as scratch:
        export(args.git_dir, commit, [CHART, *SUBCHARTS], scratch)
        chart_dir = vendor_chart(scratch, commit)
        render_components(chart_dir, commit)


if __name__ == "__main__":
    main()
