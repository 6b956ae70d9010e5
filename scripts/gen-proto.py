#!/usr/bin/env python3
"""gen-proto.py - writes src/apiserver/proto_gen.c, the protobuf field tables of
the kinds `muster up` serves, so that it can read the protobuf bodies that
kubectl's generators send (`kubectl create namespace|job|configmap|...`).

Source of facts: the client itself.  Every Go binary built with
k8s.io/api registers the FileDescriptorProtos of its generated.proto files,
gzip-compressed; this script finds them in the kubectl binary, decodes them
(a small protobuf reader below: no protobuf library needed) and keeps the
messages reachable from ROOTS.

Usage: python3 scripts/gen-proto.py /usr/bin/kubectl > src/apiserver/proto_gen.c
"""
import os
import re
import sys
import zlib

ROOTS = [
    ("", "v1", "Namespace", ".k8s.io.api.core.v1.Namespace"),
    ("", "v1", "Pod", ".k8s.io.api.core.v1.Pod"),
    ("", "v1", "Node", ".k8s.io.api.core.v1.Node"),
    ("", "v1", "Event", ".k8s.io.api.core.v1.Event"),
    ("", "v1", "ConfigMap", ".k8s.io.api.core.v1.ConfigMap"),
    ("", "v1", "Secret", ".k8s.io.api.core.v1.Secret"),
    ("", "v1", "ServiceAccount", ".k8s.io.api.core.v1.ServiceAccount"),
    ("", "v1", "Binding", ".k8s.io.api.core.v1.Binding"),
    ("batch", "v1", "Job", ".k8s.io.api.batch.v1.Job"),
    ("coordination.k8s.io", "v1", "Lease", ".k8s.io.api.coordination.v1.Lease"),
    ("scheduling.k8s.io", "v1", "PriorityClass", ".k8s.io.api.scheduling.v1.PriorityClass"),
    ("policy", "v1", "PodDisruptionBudget", ".k8s.io.api.policy.v1.PodDisruptionBudget"),
    ("policy", "v1", "Eviction", ".k8s.io.api.policy.v1.Eviction"),
    ("rbac.authorization.k8s.io", "v1", "Role", ".k8s.io.api.rbac.v1.Role"),
    ("rbac.authorization.k8s.io", "v1", "ClusterRole", ".k8s.io.api.rbac.v1.ClusterRole"),
    ("rbac.authorization.k8s.io", "v1", "RoleBinding", ".k8s.io.api.rbac.v1.RoleBinding"),
    ("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", ".k8s.io.api.rbac.v1.ClusterRoleBinding"),
    ("authorization.k8s.io", "v1", "SelfSubjectAccessReview", ".k8s.io.api.authorization.v1.SelfSubjectAccessReview"),
    ("authorization.k8s.io", "v1", "SelfSubjectRulesReview", ".k8s.io.api.authorization.v1.SelfSubjectRulesReview"),
    ("certificates.k8s.io", "v1", "CertificateSigningRequest",
     ".k8s.io.api.certificates.v1.CertificateSigningRequest"),
    ("apps", "v1", "Deployment", ".k8s.io.api.apps.v1.Deployment"),
    ("apps", "v1", "ReplicaSet", ".k8s.io.api.apps.v1.ReplicaSet"),
    ("apps", "v1", "StatefulSet", ".k8s.io.api.apps.v1.StatefulSet"),
    ("autoscaling", "v1", "Scale", ".k8s.io.api.autoscaling.v1.Scale"),
]

SPECIAL = {
    ".k8s.io.apimachinery.pkg.apis.meta.v1.Time": "MU__PS_TIME",
    ".k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime": "MU__PS_MICROTIME",
    ".k8s.io.apimachinery.pkg.api.resource.Quantity": "MU__PS_QUANTITY",
    ".k8s.io.apimachinery.pkg.util.intstr.IntOrString": "MU__PS_INTORSTRING",
    ".k8s.io.apimachinery.pkg.runtime.RawExtension": "MU__PS_RAW",
    ".k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1": "MU__PS_RAW",
    ".k8s.io.apimachinery.pkg.apis.meta.v1.Duration": "MU__PS_DURATION",
}

# FieldDescriptorProto.Type -> table type
TYPES = {1: "MU__PT_DOUBLE", 2: "MU__PT_FLOAT", 3: "MU__PT_INT", 4: "MU__PT_INT", 5: "MU__PT_INT",
         6: "MU__PT_FIXED64", 7: "MU__PT_FIXED32", 8: "MU__PT_BOOL", 9: "MU__PT_STRING", 11: "MU__PT_MSG",
         12: "MU__PT_BYTES", 13: "MU__PT_INT", 14: "MU__PT_INT", 15: "MU__PT_FIXED32", 16: "MU__PT_FIXED64",
         17: "MU__PT_SINT", 18: "MU__PT_SINT"}


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << s
        s += 7
        if c < 0x80:
            return v, i


def fields(b):
    """Yields (number, wiretype, value) of a serialized message."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % wt)
        yield num, wt, v


def message(b, prefix, out):
    """DescriptorProto -> out[full name] = {fields: [...], map_entry}."""
    name, flds, nested, map_entry = "", [], [], False
    for num, _, v in fields(b):
        if num == 1:
            name = v.decode()
        elif num == 2:
            f = {"label": 1, "type_name": ""}
            for n2, _, v2 in fields(v):
                if n2 == 1:
                    f["name"] = v2.decode()
                elif n2 == 3:
                    f["number"] = v2
                elif n2 == 4:
                    f["label"] = v2
                elif n2 == 5:
                    f["type"] = v2
                elif n2 == 6:
                    f["type_name"] = v2.decode()
                elif n2 == 10:
                    f["json"] = v2.decode()
            flds.append(f)
        elif num == 3:
            nested.append(v)
        elif num == 7:
            for n2, _, v2 in fields(v):
                if n2 == 7:
                    map_entry = bool(v2)
    full = prefix + "." + name
    out[full] = {"fields": flds, "map_entry": map_entry}
    for n in nested:
        message(n, full, out)


def load(path):
    data = open(path, "rb").read()
    msgs, seen = {}, set()
    for m in re.finditer(b"\x1f\x8b\x08\x00\x00\x00\x00\x00", data):
        try:
            d = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data[m.start():m.start() + 4000000])
        except zlib.error:
            continue
        if d[:1] != b"\n" or b".proto" not in d[:200]:
            continue
        try:
            top = list(fields(d))
        except (ValueError, IndexError):
            continue
        fname = next((v.decode() for n, _, v in top if n == 1), "")
        if not fname.startswith("k8s.io/") or fname in seen:
            continue
        seen.add(fname)
        pkg = next((v.decode() for n, _, v in top if n == 2), "")
        for n, _, v in top:
            if n == 4:
                message(v, "." + pkg, msgs)
    return msgs


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gen-proto.py KUBECTL_BINARY")
    msgs = load(sys.argv[1])
    order, index = [], {}

    def visit(name):
        if name in index:
            return index[name]
        if name not in msgs:
            sys.exit("gen-proto: no message %s in %s" % (name, sys.argv[1]))
        index[name] = len(order)
        order.append(name)
        if name not in SPECIAL:
            for f in msgs[name]["fields"]:
                if f.get("type") == 11:
                    visit(f["type_name"])
        return index[name]

    for r in ROOTS:
        visit(r[3])
    out = ["/*",
           " * proto_gen.c - GENERATED by scripts/gen-proto.py from the protobuf descriptors",
           " * registered in %s; do not edit.  Field tables of the" % os.path.basename(sys.argv[1]),
           " * messages reachable from the kinds muster serves; proto.c reads them.",
           " */",
           '#include "apiserver/proto.h"',
           "",
           "const mu__pfield_t mu__pfields[] = {"]
    starts, nf = [], 0
    for name in order:
        fl = [] if name in SPECIAL else sorted(msgs[name]["fields"], key=lambda f: f["number"])
        starts.append((nf, len(fl)))
        out.append("\t/* %s */" % name)
        for f in fl:
            t = TYPES.get(f.get("type"), "MU__PT_BYTES")
            sub = index[f["type_name"]] if f.get("type") == 11 else -1
            json_name = f.get("json") or f["name"]
            out.append('\t{%d, "%s", %s, %d, %d},' % (f["number"], json_name, t, 1 if f["label"] == 3 else 0, sub))
            nf += 1
    out.append("\t{0, NULL, 0, 0, -1},")
    out.append("};")
    out.append("")
    out.append("const mu__pmsg_t mu__pmsgs[] = {")
    for i, name in enumerate(order):
        special = SPECIAL.get(name, "MU__PS_NONE")
        entry = 1 if msgs[name]["map_entry"] else 0
        out.append('\t{"%s", %d, %d, %s, %d},' % (name, starts[i][0], starts[i][1], special, entry))
    out.append("};")
    out.append("const int mu__npmsgs = %d;" % len(order))
    out.append("")
    out.append("const mu__proot_t mu__proots[] = {")
    for g, v, k, name in ROOTS:
        out.append('\t{"%s", "%s", "%s", %d},' % (g, v, k, index[name]))
    out.append("};")
    out.append("const int mu__nproots = %d;" % len(ROOTS))
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
