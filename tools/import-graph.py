#!/usr/bin/env python3
"""Draws the house: the module graph of src/ from its own imports, and its circles.

Reads every `use crate::...`, `crate::...`, `super::...`, `self::...` (and, in the program's own
files, `peerpods_build::...`) path in src/, resolves each to the module file that holds it, and prints:
  - the rooms (top-level modules) with the rooms each one uses;
  - the circles between rooms, and the circles between the files of one folder (mod.rs, the
    folder's door, is not counted: its files share what it holds).
Usage: tools/import-graph.py [--files] [--mermaid] [SRC]   (default SRC: src/ beside this tool)
  --files    also print every file-level arrow
  --mermaid  print the room graph as a mermaid block (as docs/architecture.md shows it)
Exit status 1 when there is a circle.
The test tests/integration/architecture.rs reads the imports the same way and holds the rules.
"""
import os
import re
import sys


def module_path(rel):
    """src-relative file path -> module path (a tuple); main.rs and lib.rs are the crate roots."""
    parts = rel[:-3].split("/")
    if parts[-1] == "mod":
        parts = parts[:-1]
    if parts in (["lib"], ["main"]):
        return ()
    return tuple(parts)


def strip_comments_and_strings(text):
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'r(#*)"', text[i:])
            end = '"' + m.group(1)
            j = text.find(end, i + len(m.group(0)))
            i = n if j < 0 else j + len(end)
            out.append('""')
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            out.append('""')
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]) or (c == "'" and re.match(r"'\\u\{[0-9a-fA-F]+\}'", text[i:i + 12])):
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", text[i:])
            i += len(m.group(0))
            out.append("' '")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def expand_use_tree(tree):
    """`a::{b, c::{d, e}}` -> [[a, b], [a, c, d], [a, c, e]] (aliases and globs dropped)."""
    tree = re.sub(r"\s+as\s+\w+", "", tree)
    tree = re.sub(r"\s+", "", tree)
    results = []

    def walk(prefix, s):
        depth, start, parts = 0, 0, []
        for k, ch in enumerate(s):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                parts.append(s[start:k])
                start = k + 1
        parts.append(s[start:])
        for part in parts:
            if not part:
                continue
            if "{" in part:
                head, rest = part.split("{", 1)
                segs = [x for x in head.split("::") if x]
                walk(prefix + segs, rest[: rest.rfind("}")])
            else:
                segs = [x for x in part.split("::") if x and x != "*"]
                results.append(prefix + segs)

    walk([], tree)
    return results


USE_RE = re.compile(r"\b(?:pub(?:\([^)]*\))?\s+)?use\s+([^;]+);")
INLINE_RE = re.compile(r"(?<![\w:])([a-z_]\w*)((?:::\w+)+)")


MOD_RE = re.compile(r"\bmod\s+(\w+)\s*(\{|;)")


def inline_modules(text):
    """[(start, end, name)]: the inline `mod name { ... }` blocks of a file, by character range."""
    blocks, stack, depth, opening = [], [], 0, {}
    mods = {m.end() - 1: m.group(1) for m in MOD_RE.finditer(text) if m.group(2) == "{"}
    for k, ch in enumerate(text):
        if ch == "{":
            depth += 1
            if k in mods:
                stack.append((depth, k, mods[k]))
        elif ch == "}":
            if stack and stack[-1][0] == depth:
                _d, start, name = stack.pop()
                blocks.append((start, k, name))
            depth -= 1
    return blocks


def paths_in(text):
    """(path segments, inline module path) for every path that may name a module of ours: from
    `use` items (expanded), and inline paths (a `mod name;` declaration holds a room, it does not use it)."""
    blocks = inline_modules(text)

    def inner(pos):
        return tuple(name for start, end, name in sorted(blocks) if start < pos < end)

    found = []
    for m in USE_RE.finditer(text):
        for segs in expand_use_tree(m.group(1)):
            found.append((segs, inner(m.start())))
    rest = USE_RE.sub(lambda m: " " * len(m.group(0)), text)
    for m in INLINE_RE.finditer(rest):
        found.append(([m.group(1)] + [x for x in m.group(2).split("::") if x], inner(m.start())))
    return found


def resolve(segs, here, inner, modules, is_bin):
    """A path's segments, written in module `here` (inside its inline modules `inner`) -> the
    module (crate, tuple) it lands in, or None when it is not ours."""
    if not segs:
        return None
    if segs[0] == "super" and inner:
        # `super` inside an inline module (`mod tests { use super::*; }`): the file's own module
        return resolve(segs[1:] or ["self"], here, inner[:-1], modules, is_bin) if len(segs) > 1 else ("bin" if is_bin else "lib", here)
    if inner and segs[0] not in ("crate", "peerpods_build", "super"):
        return None  # a path relative to an inline module: its own items
    head = segs[0]
    if head == "crate":
        base, rest, crate = (), segs[1:], "bin" if is_bin else "lib"
    elif head == "peerpods_build":
        base, rest, crate = (), segs[1:], "lib"
    elif head in ("super", "self"):
        base, rest, crate = here, segs, "bin" if is_bin else "lib"
        while rest and rest[0] in ("super", "self"):
            if rest[0] == "super":
                base = base[:-1]
            rest = rest[1:]
    elif (here + (head,)) in modules["bin" if is_bin else "lib"]:
        base, rest, crate = here, segs, "bin" if is_bin else "lib"
    else:
        return None
    known = modules[crate]
    target = tuple(base)
    for seg in rest:
        if target + (seg,) in known:
            target = target + (seg,)
        else:
            break
    return (crate, target)


def load(src):
    files = {}
    for root, _dirs, names in os.walk(src):
        for name in names:
            if name.endswith(".rs"):
                full = os.path.join(root, name)
                rel = os.path.relpath(full, src).replace(os.sep, "/")
                files[rel] = full
    bin_files = {r for r in files if r == "main.rs" or r.startswith("cli/")}
    modules = {"lib": {}, "bin": {}}
    for rel in files:
        crate = "bin" if rel in bin_files else "lib"
        modules[crate][module_path(rel)] = rel
    edges = set()
    for rel, full in sorted(files.items()):
        is_bin = rel in bin_files
        here = module_path(rel)
        src_node = ("bin" if is_bin else "lib", here)
        with open(full, encoding="utf-8") as f:
            text = strip_comments_and_strings(f.read())
        for segs, inner in paths_in(text):
            dst = resolve(segs, here, inner, modules, is_bin)
            if dst and dst != src_node:
                edges.add((src_node, dst))
    return modules, edges


def room(node):
    crate, path = node
    if crate == "bin" and not path:
        return "main"
    return path[0] if path else "lib"


def name(node):
    crate, path = node
    if not path:
        return "main.rs" if crate == "bin" else "lib.rs"
    return "/".join(path)


def circles(nodes, arrows):
    """Strongly connected components with more than one member (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    graph = {n: sorted(b for a, b in arrows if a == n) for n in nodes}

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    src = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    modules, edges = load(src)
    room_edges = {(room(a), room(b)) for a, b in edges if room(a) != room(b)}
    rooms = sorted({room((c, p)) for c in modules for p in modules[c]})
    sibling = set()
    for a, b in edges:
        if a[0] != b[0]:
            continue
        pa, pb = a[1], b[1]
        k = 0
        while k < min(len(pa), len(pb)) and pa[k] == pb[k]:
            k += 1
        if k == 0 or k == len(pa) or k == len(pb):
            continue  # between rooms (counted above), or a file and its folder's door
        sibling.add(((a[0], pa[: k + 1]), (a[0], pb[: k + 1])))
    if "--mermaid" in sys.argv:
        print("```mermaid\ngraph TD")
        for a, b in sorted(room_edges):
            print(f"  {a} --> {b}")
        print("```")
        return 0
    print(f"{len(rooms)} rooms, {len(room_edges)} arrows between rooms")
    for r in rooms:
        uses = sorted(b for a, b in room_edges if a == r)
        print(f"  {r} -> {', '.join(uses) if uses else '(nothing)'}")
    if "--files" in sys.argv:
        print("file arrows:")
        for a, b in sorted(edges):
            print(f"  {name(a)} -> {name(b)}")
    found = 0
    for comp in circles(rooms, room_edges):
        found += 1
        print("circle between rooms: " + " ⇄ ".join(comp))
    nodes = {n for e in sibling for n in e}
    for comp in circles(nodes, sibling):
        found += 1
        print("circle between files: " + " ⇄ ".join(name(n) for n in comp))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
