#!/usr/bin/env python3
"""Vendors small JSON copies of CRD OpenAPI schemas for the GitOps example tests.

usage: tools/vendor-crd-schemas.py OUTDIR CRD.yaml[:unchecked.path,unchecked.path...] ...

For each CustomResourceDefinition it keeps the storage version's openAPIV3Schema, removes
`status` and every `description` (a schema's prose, not a field named so), replaces the
schemas of the listed property paths (dotted, from the root: `spec.generators.items.matrix`)
by "any object" (they stay allowed, unchecked), and writes OUTDIR/<kind>.json as
{"apiVersion", "kind", "schema"}. Record each source in OUTDIR/SOURCE.
"""
import json
import sys

import yaml


def strip_prose(node):
    if isinstance(node, dict):
        node.pop("description", None)
        for prop in node.get("properties", {}).values():
            strip_prose(prop)
        for key in ("items", "additionalProperties", "not"):
            if isinstance(node.get(key), dict):
                strip_prose(node[key])
        for key in ("anyOf", "oneOf", "allOf"):
            for sub in node.get(key, []):
                strip_prose(sub)


def leave_unchecked(schema, dotted):
    *parents, last = dotted.split(".")
    node = schema
    for part in parents:
        node = node["items"] if part == "items" else node["properties"][part]
    node["properties"][last] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


def main(outdir, specs):
    for spec in specs:
        path, _, unchecked = spec.partition(":")
        with open(path) as f:
            crd = yaml.safe_load(f)
        version = next(v for v in crd["spec"]["versions"] if v.get("storage"))
        schema = version["schema"]["openAPIV3Schema"]
        schema["properties"].pop("status", None)
        for dotted in filter(None, unchecked.split(",")):
            leave_unchecked(schema, dotted)
        strip_prose(schema)
        kind = crd["spec"]["names"]["kind"]
        out = {"apiVersion": f"{crd['spec']['group']}/{version['name']}", "kind": kind, "schema": schema}
        with open(f"{outdir}/{kind}.json", "w") as f:
            json.dump(out, f, separators=(",", ":"), sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
