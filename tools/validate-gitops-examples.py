#!/usr/bin/env python3
"""Checks the GitOps examples against their projects' schemas, offline.

    tools/validate-gitops-examples.py SCHEMA_DIR FILE.yaml...

Every document of every file must be of a kind with a schema in SCHEMA_DIR (the
<Kind>.json files vendored by tools/vendor-crd-schemas.py, keyed by apiVersion and kind)
and valid against it, strictly: a field the schema does not know is an error, as with
`kubectl apply --validate=strict` (the API server would drop it silently).

Exit status: 0 all valid, 1 some document invalid, 2 usage or YAML error,
3 PyYAML or jsonschema is not installed (python3 -m pip install pyyaml jsonschema).
"""
import copy
import glob
import json
import os
import sys

MISSING_DEPENDENCY = 3

try:
    import jsonschema
    import yaml
except ImportError as err:  # the caller decides whether that is fatal
    print(f"validate-gitops-examples: {err}; install it with "
          "`python3 -m pip install pyyaml jsonschema`", file=sys.stderr)
    sys.exit(MISSING_DEPENDENCY)

# What every object's metadata must be; the CRD schemas only say "an object".
OBJECT_META = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "namespace": {"type": "string"},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
    },
}


def strict(node):
    """The structural schema as JSON Schema: unknown fields refused, `nullable` honoured."""
    if not isinstance(node, dict):
        return node
    node = {k: v for k, v in node.items() if not k.startswith("x-kubernetes-validations")}
    if "properties" in node:
        node["properties"] = {k: strict(v) for k, v in node["properties"].items()}
        if "additionalProperties" not in node and not node.get("x-kubernetes-preserve-unknown-fields"):
            node["additionalProperties"] = False
    for key in ("items", "additionalProperties", "not"):
        if isinstance(node.get(key), dict):
            node[key] = strict(node[key])
    for key in ("anyOf", "oneOf", "allOf"):
        if key in node:
            node[key] = [strict(sub) for sub in node[key]]
    if node.pop("nullable", False) and isinstance(node.get("type"), str):
        node["type"] = [node["type"], "null"]
    return node


def load_schemas(schema_dir):
    schemas = {}
    for path in sorted(glob.glob(os.path.join(schema_dir, "*.json"))):
        with open(path) as f:
            entry = json.load(f)
        schema = strict(copy.deepcopy(entry["schema"]))
        schema.setdefault("properties", {})["metadata"] = OBJECT_META
        schema["required"] = sorted(set(schema.get("required", [])) | {"apiVersion", "kind", "metadata"})
        schemas[(entry["apiVersion"], entry["kind"])] = jsonschema.Draft7Validator(schema)
    return schemas


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    schemas = load_schemas(argv[1])
    failures = 0
    for path in argv[2:]:
        try:
            with open(path) as f:
                documents = [d for d in yaml.safe_load_all(f) if d is not None]
        except (OSError, yaml.YAMLError) as err:
            print(f"{path}: {err}")
            return 2
        for index, doc in enumerate(documents):
            where = f"{path} (document {index + 1})"
            key = (doc.get("apiVersion"), doc.get("kind")) if isinstance(doc, dict) else None
            validator = schemas.get(key)
            if validator is None:
                print(f"{where}: no schema for apiVersion {key and key[0]!r}, kind {key and key[1]!r}")
                failures += 1
                continue
            for error in sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path)):
                field = ".".join(str(p) for p in error.absolute_path) or "(document)"
                print(f"{where}: {doc['kind']} {field}: {error.message}")
                failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
