#!/usr/bin/env python3
"""Generate src/patch/schema_table.txt from the Kubernetes OpenAPI bundle.

Usage (from the repository root):

    python3 tools/gen-schema-table.py SCHEMA_DIR [OUTPUT]

SCHEMA_DIR holds kubernetes-openapi-v1.21.2.bundle.json.gz (OpenAPI v2
`definitions` plus a `resources` list) and namespaced-kinds.tsv (kustomize's
precomputed namespace table). OUTPUT defaults to src/patch/schema_table.txt.
Only the Python 3 standard library is used.

The table keeps exactly what the strategic merge walker asks of a schema:
for a node, its properties (by field name), whether it is an array and the
node of its items, the node of its additionalProperties (maps), and the
x-kubernetes-patch-strategy / -patch-merge-key / -list-map-keys extensions.
Scalar-typed properties are omitted. A property that is a $ref points straight at the referenced definition (the
walker resolves references and drops the property's own extensions, as kyaml
does). Anonymous property schemas are shared when identical. Node 0 is the
opaque schema: present, but without properties, items or extensions.

Line format (fields separated by single spaces; names never contain spaces):

    N <id> <name|-> [arr] [items=<id>] [add=<id>] [s=<strategy>] [k=<key>] [l=<k1,k2,..>]
    P <field> <id>                 property of the last N line
    G <apiVersion> <kind> <id>     root node of a kind (x-kubernetes-group-version-kind)
    S <apiVersion> <kind> <0|1>    namespaced (1) or cluster scoped (0)
"""
import gzip
import json
import os
import sys

SCALAR_TYPES = ('string', 'integer', 'number', 'boolean')


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    schema_dir = sys.argv[1]
    out_path = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), '..', 'src', 'patch', 'schema_table.txt')
    bundle_name = 'kubernetes-openapi-v1.21.2.bundle.json.gz'
    with gzip.open(os.path.join(schema_dir, bundle_name), 'rt', encoding='utf-8') as f:
        bundle = json.load(f)
    defs = bundle['definitions']

    nodes = []          # list of dicts: name, arr, items, add, s, k, l, props
    def_ids = {}        # definition name -> id
    anon_ids = {}       # canonical key -> id

    def new_node(name):
        nodes.append({'name': name, 'arr': False, 'items': None, 'add': None,
                      's': None, 'k': None, 'l': None, 'props': []})
        return len(nodes) - 1

    new_node('-')  # 0: opaque

    def ref_name(ref):
        prefix = '#/definitions/'
        if not ref.startswith(prefix):
            return None
        return ref[len(prefix):].replace('~1', '/').replace('~0', '~')

    def resolve(schema, depth=0):
        """Follow $ref chains; returns (definition name or None, schema)."""
        name = None
        while isinstance(schema, dict) and '$ref' in schema and depth < 64:
            name = ref_name(schema['$ref'])
            if name is None or name not in defs:
                return None, None
            schema = defs[name]
            depth += 1
        return name, schema

    def shape(schema):
        """The walker-relevant parts of an inline schema, nested nodes translated."""
        n = {'arr': schema.get('type') == 'array' or schema.get('type') == ['array'],
             'items': None, 'add': None, 's': None, 'k': None, 'l': None, 'props': []}
        if isinstance(schema.get('items'), dict):
            n['items'] = translate(schema['items'])
        if isinstance(schema.get('additionalProperties'), dict):
            n['add'] = translate(schema['additionalProperties'])
        s = schema.get('x-kubernetes-patch-strategy')
        if isinstance(s, str) and s:
            n['s'] = s
        k = schema.get('x-kubernetes-patch-merge-key')
        if isinstance(k, str) and k:
            n['k'] = k
        lk = schema.get('x-kubernetes-list-map-keys')
        if isinstance(lk, list) and lk and all(isinstance(x, str) for x in lk):
            n['l'] = lk
        props = schema.get('properties')
        if isinstance(props, dict):
            for f, p in props.items():
                pid = translate(p)
                # A scalar-typed field (no $ref) answers nothing the walker asks
                # for, so it is left out to keep the table small.
                if pid == 0 and isinstance(p, dict) and '$ref' not in p and \
                        p.get('type') in SCALAR_TYPES:
                    continue
                n['props'].append((f, pid))
        return n

    def def_node(name):
        if name in def_ids:
            return def_ids[name]
        nid = new_node(name)
        def_ids[name] = nid
        nodes[nid].update(shape(defs[name]))
        return nid

    def translate(schema):
        if not isinstance(schema, dict):
            return 0
        if '$ref' in schema:
            name, target = resolve(schema)
            if name is None:
                return 0
            return def_node(name)
        n = shape(schema)
        key = json.dumps([n['arr'], n['items'], n['add'], n['s'], n['k'], n['l'], n['props']])
        if key == json.dumps([False, None, None, None, None, None, []]):
            return 0
        if key not in anon_ids:
            nid = new_node('-')
            nodes[nid].update(n)
            anon_ids[key] = nid
        return anon_ids[key]

    kinds = []
    for name in sorted(defs):
        d = defs[name]
        if '$ref' in d:
            continue
        nid = def_node(name)
        for gvk in d.get('x-kubernetes-group-version-kind') or []:
            if not isinstance(gvk, dict):
                continue
            group = gvk.get('group') or ''
            version = gvk.get('version') or ''
            kind = gvk.get('kind') or ''
            api_version = group + '/' + version if group else version
            kinds.append((api_version, kind, nid))

    # Namespace scope: kustomize's precomputed table first, then the scopes the
    # schema reports for served kinds.
    scopes = {}
    with open(os.path.join(schema_dir, 'namespaced-kinds.tsv'), encoding='utf-8') as f:
        for i, line in enumerate(f):
            parts = line.rstrip('\n').split('\t')
            if i == 0 or len(parts) != 3:
                continue
            scopes[(parts[0], parts[1])] = parts[2] == 'true'
    # The list holds these, kustomize's precomputed table (kyaml/openapi, v5.6.0 and v5.8.1)
    # does not, and the v1.21.2 schema predates them: kustomize takes them as namespaced.
    for kind in ('ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'):
        scopes.pop(('admissionregistration.k8s.io/v1', kind), None)
    for r in bundle.get('resources', []):
        scope = r.get('scope')
        key = (r.get('apiVersion', ''), r.get('kind', ''))
        if scope in ('Namespaced', 'Cluster') and key not in scopes:
            scopes[key] = scope == 'Namespaced'

    out = ['# Generated by tools/gen-schema-table.py from %s and namespaced-kinds.tsv. Do not edit.'
           % bundle_name,
           '# N <id> <name|-> [arr] [items=<id>] [add=<id>] [s=<strategy>] [k=<key>] [l=<keys>]',
           '# P <field> <id> | G <apiVersion> <kind> <id> | S <apiVersion> <kind> <0|1>']
    for nid, n in enumerate(nodes):
        parts = ['N', str(nid), n['name']]
        if n['arr']:
            parts.append('arr')
        if n['items'] is not None:
            parts.append('items=%d' % n['items'])
        if n['add'] is not None:
            parts.append('add=%d' % n['add'])
        if n['s']:
            parts.append('s=' + n['s'])
        if n['k']:
            parts.append('k=' + n['k'])
        if n['l']:
            parts.append('l=' + ','.join(n['l']))
        out.append(' '.join(parts))
        for field, pid in n['props']:
            out.append('P %s %d' % (field, pid))
    for api_version, kind, nid in sorted(kinds):
        out.append('G %s %s %d' % (api_version, kind, nid))
    for (api_version, kind), namespaced in sorted(scopes.items()):
        out.append('S %s %s %d' % (api_version, kind, 1 if namespaced else 0))
    for line in out:
        if any(c.isspace() for part in line.split(' ') for c in part):
            sys.exit('unexpected whitespace in a name: %r' % line)
    with open(out_path, 'w', encoding='utf-8') as f:
        f.write('\n'.join(out) + '\n')


if __name__ == '__main__':
    main()
