#!/usr/bin/python3
"""python_client.py - drives `muster up` with the official Python client
(Debian's python3-kubernetes) as ordinary user code would, and checks the
outcomes kube-apiserver documents.  Called by tests/e2e/clients.sh with the
kubeconfig as its argument; prints one line per failed check and ends with
"python client: N passed, N failed".  With --bench N it also creates N pods
and prints the create rate.
"""
import sys
import time

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

passed = failed = 0


def check(name, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL %s %s" % (name, detail))


def status_of(fn, *args, **kw):
    try:
        fn(*args, **kw)
        return 200
    except ApiException as e:
        return e.status


def main():
    config.load_kube_config(config_file=sys.argv[1])
    core = client.CoreV1Api()
    batch = client.BatchV1Api()
    ns = "default"

    # nodes: every NodeSystemInfo field is required by the model
    nodes = core.list_node()
    check("list_node", len(nodes.items) > 0)
    info = nodes.items[0].status.node_info
    check("node_info", bool(info.boot_id and info.system_uuid and info.machine_id), str(info))

    # a create from a dict without kind/apiVersion (kube-apiserver fills them in)
    pod = {"metadata": {"name": "py-pod", "labels": {"app": "py"}},
           "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    created = core.create_namespaced_pod(ns, pod)
    check("create_from_dict", created.metadata.name == "py-pod" and created.kind == "Pod")

    # typed objects, list with a selector, patch (strategic merge by default)
    body = client.V1Pod(metadata=client.V1ObjectMeta(generate_name="py-gen-"),
                        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="x")]))
    gen = core.create_namespaced_pod(ns, body)
    check("generate_name", gen.metadata.name.startswith("py-gen-") and len(gen.metadata.name) == 12)
    pods = core.list_namespaced_pod(ns, label_selector="app=py")
    check("list_selector", [p.metadata.name for p in pods.items] == ["py-pod"])
    core.patch_namespaced_pod("py-pod", ns, {"metadata": {"labels": {"extra": "1"}}})
    check("patch", core.read_namespaced_pod("py-pod", ns).metadata.labels.get("extra") == "1")

    # 422 with field causes, 409, 404
    try:
        core.create_namespaced_pod(ns, {"metadata": {"name": "Bad_Name"},
                                        "spec": {"containers": [{"name": "c", "image": "x"}]}})
        check("invalid_422", False, "created")
    except ApiException as e:
        check("invalid_422", e.status == 422 and '"field":"metadata.name"' in e.body, e.body)
    check("exists_409", status_of(core.create_namespaced_pod, ns, pod) == 409)
    check("missing_404", status_of(core.read_namespaced_pod, "nope", ns) == 404)

    # a deep object is refused, and lists stay readable
    deep = {}
    cur = deep
    for _ in range(300):
        cur["x"] = {}
        cur = cur["x"]
    custom = client.CustomObjectsApi()
    check("deep_400", status_of(custom.create_cluster_custom_object, "muster.io", "v1alpha1", "topologies",
                                {"apiVersion": "muster.io/v1alpha1", "kind": "Topology",
                                 "metadata": {"name": "deep"}, "spec": deep}) == 400)
    check("list_after_deep", len(core.list_namespaced_pod(ns).items) >= 2)

    # a long pod name (a DNS subdomain of up to 253 characters)
    long_name = "p" * 200
    core.create_namespaced_pod(ns, {"metadata": {"name": long_name},
                                    "spec": {"containers": [{"name": "c", "image": "x"}]}})
    check("long_name", core.read_namespaced_pod(long_name, ns).metadata.name == long_name)

    # Jobs and their pods
    job = {"metadata": {"name": "py-job"},
           "spec": {"template": {"spec": {"restartPolicy": "Never",
                                          "containers": [{"name": "c", "image": "x"}]}}}}
    batch.create_namespaced_job(ns, job)
    ok = False
    for _ in range(50):
        if core.list_namespaced_pod(ns, label_selector="job-name=py-job").items:
            ok = True
            break
        time.sleep(0.1)
    check("job_pods", ok)
    batch.delete_namespaced_job("py-job", ns, propagation_policy="Background")

    # watch: the created pod shows up, then a deletion
    w = watch.Watch()
    seen = set()
    for ev in w.stream(core.list_namespaced_pod, ns, timeout_seconds=2):
        seen.add((ev["type"], ev["object"].metadata.name))
        if ("ADDED", "py-pod") in seen:
            w.stop()
    check("watch", ("ADDED", "py-pod") in seen, str(seen))

    core.delete_namespaced_pod("py-pod", ns)
    check("deleted", status_of(core.read_namespaced_pod, "py-pod", ns) == 404)

    # a CustomResourceDefinition makes a served type: defaults, 422, selectors, watch
    ext = client.ApiextensionsV1Api()
    custom = client.CustomObjectsApi()
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "gadgets.py.example.com"},
           "spec": {"group": "py.example.com", "scope": "Namespaced",
                    "names": {"plural": "gadgets", "kind": "Gadget"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                      "spec": {"type": "object", "properties": {
                                          "size": {"type": "integer", "default": 3, "maximum": 10}}}}}}}]}}
    made = ext.create_custom_resource_definition(crd)
    conds = {c.type: c.status for c in (made.status.conditions or [])}
    check("crd_established", conds.get("Established") == "True", str(conds))
    g = custom.create_namespaced_custom_object("py.example.com", "v1", ns, "gadgets",
                                               {"apiVersion": "py.example.com/v1", "kind": "Gadget",
                                                "metadata": {"name": "g1", "labels": {"k": "v"}}, "spec": {}})
    check("crd_default", g["spec"].get("size") == 3, str(g))
    check("crd_invalid", status_of(custom.create_namespaced_custom_object, "py.example.com", "v1", ns, "gadgets",
                                   {"apiVersion": "py.example.com/v1", "kind": "Gadget",
                                    "metadata": {"name": "g2"}, "spec": {"size": 11}}) == 422)
    lst = custom.list_namespaced_custom_object("py.example.com", "v1", ns, "gadgets", label_selector="k=v")
    check("crd_list", [i["metadata"]["name"] for i in lst["items"]] == ["g1"], str(lst))
    seen = set()
    for ev in w.stream(custom.list_namespaced_custom_object, "py.example.com", "v1", ns, "gadgets",
                       timeout_seconds=2):
        seen.add((ev["type"], ev["object"]["metadata"]["name"]))
        if ("ADDED", "g1") in seen:
            w.stop()
    check("crd_watch", ("ADDED", "g1") in seen, str(seen))
    ext.delete_custom_resource_definition("gadgets.py.example.com")
    check("crd_deleted", status_of(custom.get_namespaced_custom_object, "py.example.com", "v1", ns, "gadgets",
                                   "g1") == 404)

    # SelfSubjectAccessReview: the kubeconfig's user may do everything
    authz = client.AuthorizationV1Api()
    rev = authz.create_self_subject_access_review(client.V1SelfSubjectAccessReview(
        spec=client.V1SelfSubjectAccessReviewSpec(resource_attributes=client.V1ResourceAttributes(
            verb="delete", resource="nodes"))))
    check("ssar", rev.status.allowed is True, str(rev.status))

    if len(sys.argv) > 3 and sys.argv[2] == "--bench":
        n = int(sys.argv[3])
        t0 = time.monotonic()
        for i in range(n):
            core.create_namespaced_pod(ns, {"metadata": {"name": "bench-%d" % i},
                                            "spec": {"containers": [{"name": "c", "image": "x"}]}})
        dt = time.monotonic() - t0
        print("python client: %d pod creates in %.2f s: %.0f creates/s" % (n, dt, n / dt))

    print("python client: %d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
