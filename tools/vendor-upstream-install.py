#!/usr/bin/env python3
"""Vendor upstream's peer pods Helm chart at a release, and render the
peerpod-ctrl, webhook and kata components from it.

    tools/vendor-upstream-install.py CAA_GIT_DIR --tag TAG --kata-git-dir KATA_GIT_DIR

CAA_GIT_DIR is a clone (or a bare mirror) of
confidential-containers/cloud-api-adaptor. At the release TAG (git archive;
a commit id works too) it:

1. writes the chart `src/cloud-api-adaptor/install/charts/peerpods` to
   `data/upstream-chart/peerpods/`, with its subcharts packaged into its
   `charts/`: the two local ones (`src/peerpod-ctrl/chart` as `resourceCtrl`,
   `src/webhook/chart` as `webhook`) and `kata-deploy`, from
   kata-containers' own chart at the version the chart depends on (KATA_GIT_DIR,
   a clone or mirror of kata-containers/kata-containers); `data/upstream-chart/SOURCE`
   records the tag, its commit, the adaptor commit the chart pins its images
   at (`image.tag` of values.yaml) and kata-deploy's tag and commit. The parity report
   (`tools/upstream-parity.py`) renders this chart per provider.
2. renders the three subcharts with the chart's values (helm-python-sdk,
   release namespace confidential-containers-system, CRDs included, helm hooks
   left out) into the components that ship them, with their source recorded
   in a header:

    components/peerpod-ctrl/upstream.yaml
    components/webhook/upstream.yaml
    components/kata/upstream.yaml     kata-deploy as the chart configures it for peer pods

The adaptor commit is the one base/kustomization.yaml pins; tools/bump-upstream
runs this script as its first step.
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
KATA_DEPLOY = "kata-deploy"
KATA_CHART = "tools/packaging/kata-deploy/helm-chart/kata-deploy"
VENDORED = os.path.join(REPO, "data/upstream-chart")
NAMESPACE = "confidential-containers-system"
# Subchart alias (as the parent chart names it) -> the component its rendering goes to.
COMPONENTS = {
    "resourceCtrl": "components/peerpod-ctrl/upstream.yaml",
    "webhook": "components/webhook/upstream.yaml",
    "kata-deploy": "components/kata/upstream.yaml",
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


def pinned_adaptor_commit(chart_dir):
    """The adaptor commit the chart's values pin the image at (a release pins all three images
    of the install at it)."""
    with open(os.path.join(chart_dir, "values.yaml"), encoding="utf-8") as f:
        return str(yaml.safe_load(f)["image"]["tag"])


def kata_deploy_version(chart_dir):
    """The kata-deploy version the chart's Chart.yaml depends on (kata-containers tags it)."""
    with open(os.path.join(chart_dir, "Chart.yaml"), encoding="utf-8") as f:
        for dependency in yaml.safe_load(f)["dependencies"]:
            if dependency["name"] == KATA_DEPLOY:
                return str(dependency["version"])
    sys.exit(f"vendor-upstream-install: the chart has no {KATA_DEPLOY} dependency")


def vendor_chart(scratch, source, kata_git_dir):
    """Copies the chart into data/upstream-chart/peerpods with its subcharts packaged: the two
    local ones, and kata-deploy from kata-containers at the tag the chart depends on."""
    import helm_python

    target = os.path.join(VENDORED, "peerpods")
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(os.path.join(scratch, CHART), target)
    os.makedirs(os.path.join(target, "charts"), exist_ok=True)
    packaged = [os.path.basename(helm_python.package(os.path.join(scratch, sub),
                                                     destination=os.path.join(target, "charts")))
                for sub in SUBCHARTS]
    kata_tag = kata_deploy_version(target)
    kata_commit = subprocess.run(["git", "--git-dir", kata_git_dir, "rev-parse", kata_tag + "^{commit}"],
                                 check=True, capture_output=True, text=True).stdout.strip()
    export(kata_git_dir, kata_commit, [KATA_CHART], scratch)
    # Unpacked: `helm package` insists on kata-deploy's own optional dependency
    # (node-feature-discovery, off by default), `helm template` does not.
    kata = KATA_DEPLOY + "/"
    shutil.copytree(os.path.join(scratch, KATA_CHART), os.path.join(target, "charts", KATA_DEPLOY))
    with open(os.path.join(VENDORED, "SOURCE"), "w", encoding="utf-8") as f:
        f.write(f"confidential-containers/cloud-api-adaptor {source}\n"
                f"adaptor image commit: {pinned_adaptor_commit(target)}\n"
                f"kata-containers/kata-containers {kata_tag} {kata_commit}\n"
                f"peerpods/: {CHART}, verbatim but for its charts/, added by\n"
                f"tools/vendor-upstream-install.py (helm dependency build would fetch them):\n"
                f"- {', '.join(packaged)}: packaged from {' and '.join(SUBCHARTS)}\n"
                f"  (Chart.yaml names them as file:// dependencies outside the chart);\n"
                f"- {kata}: kata-containers' {KATA_CHART} at {kata_tag}, unpacked\n"
                f"  (Chart.yaml names it as an OCI dependency).\n"
                f"Licence: Apache-2.0 (both).\n")
    return target


def is_hook(doc):
    metadata = (yaml.safe_load(doc) or {}).get("metadata") or {}
    return "helm.sh/hook" in (metadata.get("annotations") or {})


def component_text(chart_dir, alias, source):
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
        # Helm hooks (kata-deploy's post-delete cleanup Job) run only under helm: left out.
        docs.extend(doc for doc in documents(rendered[path]) if not is_hook(doc))
    header = (f"# Rendered from confidential-containers/cloud-api-adaptor {source},\n"
              f"# the {alias} subchart of {CHART} (data/upstream-chart),\n"
              f"# by tools/vendor-upstream-install.py; do not edit.\n")
    return header + "---\n".join(docs)


def render_components(chart_dir, source):
    for alias, output in COMPONENTS.items():
        text = component_text(chart_dir, alias, source)
        with open(os.path.join(REPO, output), "w", encoding="utf-8") as out:
            out.write(text)
        print(f"{output}: {text.count(chr(10) + 'kind: ')} objects", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("git_dir")
    parser.add_argument("--tag", required=True)
    parser.add_argument("--kata-git-dir", required=True,
                        help="a clone or mirror of kata-containers/kata-containers (its kata-deploy chart)")
    args = parser.parse_args()
    commit = subprocess.run(["git", "--git-dir", args.git_dir, "rev-parse", args.tag + "^{commit}"],
                            check=True, capture_output=True, text=True).stdout.strip()
    # "TAG COMMIT" (the commit alone when given one): the first line of SOURCE and the
    # components' headers.
    source = commit if commit.startswith(args.tag) else f"{args.tag} {commit}"
    with tempfile.TemporaryDirectory() as scratch:
        export(args.git_dir, commit, [CHART, *SUBCHARTS], scratch)
        chart_dir = vendor_chart(scratch, source, args.kata_git_dir)
        render_components(chart_dir, source)


if __name__ == "__main__":
    main()
