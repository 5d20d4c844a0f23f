#!/usr/bin/env python3
"""Offline Kubernetes schema check of rendered manifests.

Validates every document of the given multi-document YAML files ("-" for
standard input) against the OpenAPI schemas bundled with the PyPI package
kubernetes-validate, in strict mode (unknown fields are errors). No cluster
is needed. Used by tests/integration/peerpods.rs on each rendered overlay:

    peerpods-build overlays/aws | tools/validate-manifests.py -

Custom resources are checked against the openAPIV3Schema of a
CustomResourceDefinition in the same files, or against a schema in
data/crd-schemas/<group>_<version>_<Kind>.json (small subsets vendored with
their source named in them, for CRDs a cluster installs beforehand, such as
cert-manager's); a custom resource with neither is an error.

Exit status: 0 all valid, 1 some document invalid, 2 usage or YAML error,
3 kubernetes-validate (or PyYAML) is not installed:
    python3 -m pip install kubernetes-validate
"""

import argparse
import json
import os
import sys

MISSING_DEPENDENCY = 3

try:
    import yaml
    import kubernetes_validate
except ImportError as err:  # the caller decides whether that is fatal
    print(f"validate-manifests: {err}; install it with "
          "`python3 -m pip install kubernetes-validate`", file=sys.stderr)
    sys.exit(MISSING_DEPENDENCY)

# The Kubernetes minor the reference kustomize ships with (kubectl 1.33).
DEFAULT_VERSION = "1.33.0"


def cache_schema_files():
    """kubernetes-validate parses its schema files, the large
    _definitions.json included, on every call; parse each once instead
    (about ten times faster on a rendered overlay). Without the helper in a
    future version of the package, validation only stays slower."""
    import functools
    import kubernetes_validate.utils as utils

    loader = getattr(utils, "schema_contents", None)
    if callable(loader):
        utils.schema_contents = functools.lru_cache(maxsize=None)(loader)


def describe(doc):
    meta = doc.get("metadata") or {}
    name = meta.get("name", "?")
    if meta.get("namespace"):
        name = f"{meta['namespace']}/{name}"
    return f"{doc.get('kind', '?')}/{name}"


def first_line(err):
    text = getattr(err, "message", None) or str(err)
    return text.strip().splitlines()[0] if text.strip() else type(err).__name__


CRD_SCHEMA_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                              "data", "crd-schemas")


def crd_schemas(docs):
    """(group/version, kind) -> openAPIV3Schema of the CRDs among docs."""
    schemas = {}
    for doc in docs:
        if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
            continue
        spec = doc.get("spec") or {}
        kind = (spec.get("names") or {}).get("kind")
        for version in spec.get("versions") or []:
            schema = (version.get("schema") or {}).get("openAPIV3Schema")
            if schema:
                schemas[(f"{spec.get('group')}/{version.get('name')}", kind)] = schema
    return schemas


def custom_resource_schema(doc, in_stream):
    api_version, kind = doc.get("apiVersion", ""), doc.get("kind", "")
    if (api_version, kind) in in_stream:
        return in_stream[(api_version, kind)]
    group, _, version = api_version.partition("/")
    path = os.path.join(CRD_SCHEMA_DIR, f"{group}_{version}_{kind}.json")
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    return None


def validate_custom_resource(doc, schema):
    import jsonschema
    errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(doc), key=lambda e: list(e.path))
    return [f"{'/'.join(str(p) for p in e.path) or '(root)'}: {e.message}" for e in errors]


def validate_stream(label, stream, version):
    """Returns (number of documents checked, list of error strings)."""
    errors = []
    count = 0
    try:
        docs = list(yaml.safe_load_all(stream))
    except yaml.YAMLError as err:
        return 0, [f"{label}: not valid YAML: {err}"]
    in_stream = crd_schemas(docs)
    for doc in docs:
        if doc is None:
            continue
        count += 1
        if not isinstance(doc, dict):
            errors.append(f"{label}: document {count} is not a mapping")
            continue
        try:
            kubernetes_validate.validate(doc, version, strict=True)
        except kubernetes_validate.ValidationError as err:
            path = "/".join(str(p) for p in getattr(err, "path", []) or [])
            at = f" at {path}" if path else ""
            errors.append(f"{label}: {describe(doc)}{at}: {first_line(err)}")
        except kubernetes_validate.SchemaNotFoundError as err:
            schema = custom_resource_schema(doc, in_stream)
            if schema is None:
                errors.append(f"{label}: {describe(doc)}: {first_line(err)}")
                continue
            errors.extend(f"{label}: {describe(doc)} at {problem}"
                          for problem in validate_custom_resource(doc, schema))
        except kubernetes_validate.InvalidSchemaError as err:
            errors.append(f"{label}: {describe(doc)}: {first_line(err)}")
    return count, errors


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="multi-document YAML file, - for stdin")
    parser.add_argument("-k", "--kubernetes-version", default=DEFAULT_VERSION,
                        help=f"schema version (default {DEFAULT_VERSION})")
    args = parser.parse_args(argv)
    cache_schema_files()

    total = 0
    errors = []
    for name in args.files:
        if name == "-":
            count, errs = validate_stream("<stdin>", sys.stdin, args.kubernetes_version)
        else:
            try:
                with open(name, encoding="utf-8") as stream:
                    count, errs = validate_stream(name, stream, args.kubernetes_version)
            except OSError as err:
                print(f"validate-manifests: {err}", file=sys.stderr)
                return 2
        if count == 0 and not errs:
            errs = [f"{name}: no Kubernetes documents"]
        total += count
        errors.extend(errs)

    for line in errors:
        print(line, file=sys.stderr)
    if errors:
        print(f"validate-manifests: {len(errors)} invalid of {total} documents "
              f"(Kubernetes {args.kubernetes_version})", file=sys.stderr)
        return 1
    print(f"validate-manifests: {total} documents valid "
          f"(Kubernetes {args.kubernetes_version}, strict)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
