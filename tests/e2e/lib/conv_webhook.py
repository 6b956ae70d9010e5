#!/usr/bin/env python3
"""conv_webhook.py - a small HTTPS CRD conversion webhook for tests/e2e/crds.sh.

Usage: conv_webhook.py CERT KEY PORTFILE LOGFILE.  Serves ConversionReview
(apiextensions.k8s.io/v1) on 127.0.0.1, a free port written to PORTFILE,
with the certificate CERT, a thread per connection, connections kept alive
(HTTP/1.1) as a real webhook server keeps them.  It converts Cogs between example.com/v1 and
example.com/v2: v2's spec.replicas is twice v1's.  Objects named fail-*
make it answer Failure, baduid-* a wrong uid, rename-* a changed name.
Each request appends "PATH COUNT DESIRED NAME,NAME..." to LOGFILE.
"""
import json
import ssl
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CERT, KEY, PORTFILE, LOGFILE = sys.argv[1:5]


def convert(obj, desired):
    o = json.loads(json.dumps(obj))
    spec = o.setdefault("spec", {})
    have = o.get("apiVersion", "")
    if "replicas" in spec and have.endswith("/v1") and desired.endswith("/v2"):
        spec["replicas"] = spec["replicas"] * 2
    elif "replicas" in spec and have.endswith("/v2") and desired.endswith("/v1"):
        spec["replicas"] = spec["replicas"] // 2
    o["apiVersion"] = desired
    if o.get("metadata", {}).get("name", "").startswith("rename-"):
        o["metadata"]["name"] = "renamed"
    return o


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keeps the connection, as a real webhook server does

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        review = json.loads(self.rfile.read(n))
        req = review["request"]
        objs = req.get("objects") or []
        names = [o.get("metadata", {}).get("name", "") for o in objs]
        with open(LOGFILE, "a") as f:
            f.write("%s %d %s %s\n" % (self.path, len(objs), req["desiredAPIVersion"], ",".join(names)))
        resp = {"uid": req["uid"], "result": {"status": "Success"},
                "convertedObjects": [convert(o, req["desiredAPIVersion"]) for o in objs]}
        failing = [x for x in names if x.startswith("fail-")]
        if failing:
            resp = {"uid": req["uid"], "result": {"status": "Failure", "message": "cannot convert " + failing[0]}}
        if any(x.startswith("baduid-") for x in names):
            resp["uid"] = "not-" + req["uid"]
        body = json.dumps({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                           "response": resp}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(CERT, KEY)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
import os  # noqa: E402 (the rename makes the port appear at once)
os.rename(PORTFILE + ".tmp", PORTFILE)
srv.serve_forever()
