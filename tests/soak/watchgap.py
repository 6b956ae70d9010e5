#!/usr/bin/python3
"""watchgap.py - regression test for the soak's writes-kept false alarm.

The 300 s soak (seed 1) once reported "pod default/g7-1 was created
(acknowledged) and is gone, unexplained" during disk-full and kill -9
faults.  The cause was in the checker, not in muster up (tests/soak/
durable.py shows no acknowledged write lost to a full disk and a kill -9):
its watches were `kubectl get --watch`, which lists again whenever the
server restarts, so a pod evicted in the second after a restart (the
scheduler resends an eviction that got no answer until the server answers,
while its Event write, sent once into the dead server, is lost) was simply
absent from the new list: no DisruptionTarget, no DELETED, no event.  The
soak's watches now resume from the last resourceVersion they saw.

Here that moment is made on purpose: a pod watch (the soak's own Watch and
Checker) follows muster up; the watch is held back while muster up is
killed -9 and restarted, and one pod is evicted (Eviction API) and
another deleted before the watch may reconnect.  The checker must then see
the eviction's DisruptionTarget and both DELETED events.

Usage: tests/soak/watchgap.py MUSTER.  Ends with "watchgap: N passed, N failed".
"""
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("soak", os.path.join(HERE, "soak.py"))
soak = importlib.util.module_from_spec(spec)
spec.loader.exec_module(soak)
P = F = 0


def check(ok, what):
    global P, F
    if ok:
        P += 1
    else:
        F += 1
        print("watchgap: FAILED: %s" % what)


def wait(fn, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if fn():
            return True
        time.sleep(0.1)
    return False


def main():
    muster = sys.argv[1]
    if not os.access(soak.KUBECTL, os.X_OK):
        print("watchgap: skipped (needs %s)" % soak.KUBECTL)
        print("watchgap: 0 passed, 0 failed")
        return 0
    work = tempfile.mkdtemp(prefix="muster-watchgap-")
    data = os.path.join(work, "data")
    port = soak.free_port()
    cluster = os.path.join(work, "cluster.yaml")
    with open(cluster, "w") as f:   # nodes: their heartbeats move the resourceVersion on
        f.write("apiVersion: muster.io/v1alpha1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n"
                "  count: 2\n  namePrefix: gpu-\n  allocatable: {cpu: \"8\", memory: 64Gi}\n")
    argv = [muster, "up", "--cluster", cluster, "--listen", "127.0.0.1:%d" % port, "--data", data, "--quiet"]
    up = soak.Proc("up", argv, work)
    kc = os.path.join(data, "kubeconfig")

    def ready():
        return os.path.exists(kc) and soak.kubectl(kc, "get", "--raw", "/readyz", timeout=5)[0] == 0

    up.start()
    w = None
    try:
        check(wait(ready, 30), "muster up did not start")
        for name in ("evictme", "deleteme"):
            soak.kubectl(kc, "apply", "-f", "-", stdin=soak.pod_yaml(name, 0, "q", 10))
        chk = soak.Checker()
        w = soak.Watch(kc, "pods", chk.pod_event)
        seen = lambda: all(k in chk.by_key for k in ("default/evictme", "default/deleteme"))
        check(wait(seen, 30), "the watch did not list the two pods")
        w.hold = True                 # the watch may not reconnect until told
        time.sleep(2)                 # other writes (node heartbeats) go on,
        soak.kubectl(kc, "create", "configmap", "other")   # and writes of other kinds
        up.kill9()
        check(wait(lambda: w.held, 10), "the watch did not notice the server's end")
        up.start()
        check(wait(ready, 30), "muster up did not start again")
        body = os.path.join(work, "eviction.json")
        with open(body, "w") as f:
            json.dump({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "evictme"}}, f)
        rc, out = soak.kubectl(kc, "create", "--raw", "/api/v1/namespaces/default/pods/evictme/eviction",
                               "-f", body)
        check(rc == 0, "eviction: %s" % out)
        rc, out = soak.kubectl(kc, "delete", "pod", "deleteme", "--grace-period=0", "--force")
        check(rc == 0, "delete: %s" % out)
        rc, out = soak.kubectl(kc, "get", "pods", "-o", "name")
        check(rc == 0 and "evictme" not in out and "deleteme" not in out, "the pods are still there: %s" % out)
        w.hold = False
        check(wait(lambda: "default/evictme" in chk.evicted, 20),
              "the checker did not see the eviction made while its watch was away")
        check(wait(lambda: "default/deleteme" in chk.deleted_rv and "default/evictme" in chk.deleted_rv, 20),
              "the checker did not see the DELETED events made while its watch was away")
        check(w.relists == 1, "the watch listed %d times (once expected)" % w.relists)
    finally:
        if w:
            w.close()
        up.kill9()
    if F == 0:
        shutil.rmtree(work, ignore_errors=True)
    print("watchgap: %d passed, %d failed" % (P, F))
    return 1 if F else 0


if __name__ == "__main__":
    sys.exit(main())
