#!/usr/bin/env python3
"""A read-only OCI registry on 127.0.0.1 over TLS, holding one packaged helm chart: the few
distribution endpoints `helm pull oci://...` uses (GET /v2/, manifests by tag or digest, blobs,
tags/list). For the helm tests; stdlib only.

    registry.py CHART.tgz REPOSITORY TAG CERT KEY PORT_FILE

Writes the port it listens on to PORT_FILE, then serves until killed (at most 10 minutes).
"""
import hashlib
import http.server
import json
import os
import ssl
import sys
import tarfile
import threading


def chart_metadata(tgz):
    """Chart.yaml of the packaged chart, as the JSON helm stores as the config blob."""
    with tarfile.open(tgz) as archive:
        for member in archive.getmembers():
            parts = member.name.split("/")
            if len(parts) == 2 and parts[1] == "Chart.yaml":
                text = archive.extractfile(member).read(1 << 20).decode()
                break
        else:
            sys.exit("no Chart.yaml in " + tgz)
    # Chart.yaml's top-level scalars are enough for helm's config (name, version, apiVersion, ...).
    metadata = {}
    for line in text.splitlines():
        if line and not line.startswith((" ", "#", "-")) and ":" in line:
            key, value = line.split(":", 1)
            value = value.strip().strip('"').strip("'")
            if value:
                metadata[key.strip()] = value
    return json.dumps(metadata, separators=(",", ":")).encode()


def main():
    tgz, repository, tag, cert, key, port_file = sys.argv[1:7]
    with open(tgz, "rb") as f:
        layer = f.read(64 << 20)
    config = chart_metadata(tgz)
    digest = lambda data: "sha256:" + hashlib.sha256(data).hexdigest()
    manifest = json.dumps({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.cncf.helm.config.v1+json", "digest": digest(config), "size": len(config)},
        "layers": [{"mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip", "digest": digest(layer), "size": len(layer)}],
    }, separators=(",", ":")).encode()
    blobs = {digest(config): config, digest(layer): layer}
    manifest_digest = digest(manifest)
    prefix = "/v2/%s/" % repository

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def reply(self, status, body=b"", content_type="application/json", extra=()):
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Docker-Distribution-API-Version", "registry/2.0")
            for name, value in extra:
                self.send_header(name, value)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def do_GET(self):
            path = self.path.split("?", 1)[0]
            if path in ("/v2", "/v2/"):
                return self.reply(200, b"{}")
            if path.startswith(prefix + "manifests/"):
                reference = path[len(prefix + "manifests/"):]
                if reference in (tag, manifest_digest):
                    return self.reply(200, manifest, "application/vnd.oci.image.manifest.v1+json", [("Docker-Content-Digest", manifest_digest)])
            elif path.startswith(prefix + "blobs/"):
                blob = blobs.get(path[len(prefix + "blobs/"):])
                if blob is not None:
                    return self.reply(200, blob, "application/octet-stream", [("Docker-Content-Digest", digest(blob))])
            elif path == prefix + "tags/list":
                return self.reply(200, json.dumps({"name": repository, "tags": [tag]}).encode())
            self.reply(404, b'{"errors":[{"code":"NAME_UNKNOWN","message":"not found"}]}')

        do_HEAD = do_GET

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(port_file + ".tmp", port_file)
    threading.Timer(600, server.shutdown).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
