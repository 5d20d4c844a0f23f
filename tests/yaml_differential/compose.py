"""Reads a JSON list of YAML texts (argv[1]) and writes, for each, what PyYAML's composer (a
port of libyaml's scanner and parser) makes of it (argv[2]): {"ok": false, "error": ...} or
{"ok": true, "docs": [tree, ...]}, a tree being {"map": [[key, value], ...]}, {"seq": [...]} or
{"scalar": text, "plain": bool}. Aliases are expanded."""
import json
import sys

import yaml


def tree(node, depth=0):
    if depth > 100:
        raise ValueError("too deep")
    if isinstance(node, yaml.MappingNode):
        return {"map": [[tree(k, depth + 1), tree(v, depth + 1)] for k, v in node.value]}
    if isinstance(node, yaml.SequenceNode):
        return {"seq": [tree(v, depth + 1) for v in node.value]}
    return {"scalar": node.value, "plain": node.style is None}


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        texts = json.load(f)
    out = []
    for text in texts:
        try:
            docs = [tree(d) for d in yaml.compose_all(text, Loader=yaml.SafeLoader) if d is not None]
            out.append({"ok": True, "docs": docs})
        except Exception as e:  # a YAML error, worded by PyYAML
            out.append({"ok": False, "error": str(e).splitlines()[0] if str(e) else type(e).__name__})
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(out, f)


main()
