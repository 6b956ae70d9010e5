#!/usr/bin/python3
"""fence.py - regression test for the split brain the chaos soak found.

The soak caught two scheduler replicas binding pods onto the same GPUs:
the leader's lease renew hung on a slow API server while its other
connections worked, so it kept scheduling past its renew deadline after
the standby had taken the lease over.  Here that moment is made on
purpose, with a proxy in front of each replica:

  - replica A leads; its proxy holds every request on its lease connection
    (its binds and watches still flow), so A cannot renew;
  - replica B waits; its proxy delays everything it sends by 100 ms, so
    that a replica A that still acted would win any race;
  - once B holds the lease, a blocker pod is deleted, which frees room for
    a waiting pod.

The waiting pod must be bound by B (its Scheduled event names B), and A
must have written nothing since B took over.  Before the fix, A bound it.

Usage: tests/soak/fence.py MUSTER.  Ends with "fence: N passed, N failed".
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

KUBECTL = os.environ.get("KC", "/usr/bin/kubectl")
P = F = 0


def check(ok, what):
    global P, F
    if ok:
        P += 1
    else:
        F += 1
        print("FAIL " + what)


class Proxy:
    """Forwards to the API server.  hold_leases: requests on a connection
    whose first request is for a Lease are never forwarded.  delay: each
    chunk from the client waits this long."""

    def __init__(self, target, hold_leases=False, delay=0.0):
        self.target, self.hold, self.delay = target, hold_leases, delay
        self.holding = False
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(64)
        self.port = self.srv.getsockname()[1]
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                c, _ = self.srv.accept()
            except OSError:
                return
            try:
                u = socket.create_connection(("127.0.0.1", self.target))
            except OSError:
                c.close()
                continue
            state = {"lease": None}
            threading.Thread(target=self.up, args=(c, u, state), daemon=True).start()
            threading.Thread(target=self.down, args=(u, c), daemon=True).start()

    def up(self, c, u, state):
        try:
            while True:
                data = c.recv(65536)
                if not data:
                    break
                if state["lease"] is None:
                    state["lease"] = b"coordination.k8s.io" in data.split(b"\r\n", 1)[0]
                while state["lease"] and self.hold and self.holding:
                    time.sleep(0.05)
                if self.delay:
                    time.sleep(self.delay)
                u.sendall(data)
        except OSError:
            pass
        for s in (c, u):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def down(self, u, c):
        try:
            while True:
                data = u.recv(65536)
                if not data:
                    break
                c.sendall(data)
        except OSError:
            pass


def kc(kcfg, *args, stdin=None):
    r = subprocess.run([KUBECTL, "--kubeconfig", kcfg] + list(args), input=stdin, capture_output=True,
                       text=True, timeout=30)
    return r.returncode, r.stdout


def holder(kcfg):
    rc, out = kc(kcfg, "get", "lease", "muster-scheduler", "-o", "jsonpath={.spec.holderIdentity}")
    return out.strip() if rc == 0 else ""


def wait(fn, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if fn():
            return True
        time.sleep(0.2)
    return False


def main():
    muster = sys.argv[1] if len(sys.argv) > 1 else "build/muster"
    if not os.access(KUBECTL, os.X_OK):
        print("fence: needs %s" % KUBECTL)
        print("fence: 0 passed, 1 failed")
        return 1
    work = tempfile.mkdtemp(prefix="muster-fence-")
    procs = []
    try:
        with open(os.path.join(work, "cluster.yaml"), "w") as f:
            f.write("apiVersion: muster.io/v1alpha1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n"
                    "  count: 1\n  namePrefix: gpu-\n  gpuModel: A100\n"
                    "  allocatable: {cpu: \"64\", memory: 512Gi, nvidia.com/gpu: \"8\"}\n---\n"
                    "apiVersion: muster.io/v1alpha1\nkind: Queue\nmetadata: {name: q}\n"
                    "spec: {resources: {gpu: {deserved: 8}}}\n")
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        data = os.path.join(work, "data")
        log = open(os.path.join(work, "up.log"), "w")
        procs.append(subprocess.Popen([muster, "up", "--cluster", os.path.join(work, "cluster.yaml"),
                                       "--listen", "127.0.0.1:%d" % port, "--data", data, "--no-fsync",
                                       "--quiet"], stdout=log, stderr=log))
        kcfg = os.path.join(data, "kubeconfig")
        check(wait(lambda: os.path.exists(kcfg) and kc(kcfg, "get", "--raw", "/readyz")[0] == 0, 20),
              "muster up starts")
        text = open(kcfg).read()
        pa, pb = Proxy(port, hold_leases=True), Proxy(port, delay=0.1)

        def sched(name, proxy):
            cfg = os.path.join(work, "kc-" + name)
            with open(cfg, "w") as f:
                f.write(text.replace("127.0.0.1:%d" % port, "127.0.0.1:%d" % proxy.port))
            lf = open(os.path.join(work, name + ".log"), "w")
            procs.append(subprocess.Popen([muster, "scheduler", "--kubeconfig", cfg, "--id", name,
                                           "--lease-namespace", "default", "--lease-duration", "4",
                                           "--retry-period", "1", "--min-runtime", "0"],
                                          stdout=lf, stderr=lf))

        sched("A", pa)
        check(wait(lambda: holder(kcfg) == "A", 20), "A takes the lease")
        sched("B", pb)
        pod = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  labels: {muster.io/queue: q}\n"
               "  annotations: {muster.io/preemptible: \"false\", muster.io/priority: \"%d\"}\n"
               "spec:\n  schedulerName: muster\n  containers:\n"
               "  - {name: c, image: x, resources: {limits: {nvidia.com/gpu: \"8\"}}}\n")
        kc(kcfg, "apply", "-f", "-", stdin=pod % ("blocker", 100))
        check(wait(lambda: kc(kcfg, "get", "pod", "blocker", "-o", "jsonpath={.spec.nodeName}")[1] != "", 20),
              "the blocker is bound")
        kc(kcfg, "apply", "-f", "-", stdin=pod % ("waiting", 0))
        time.sleep(1)
        pa.holding = True          # A can no longer renew, but still sees and writes
        check(wait(lambda: holder(kcfg) == "B", 30), "B takes the lease over")
        kc(kcfg, "delete", "pod", "blocker", "--wait=false")
        check(wait(lambda: kc(kcfg, "get", "pod", "waiting", "-o", "jsonpath={.spec.nodeName}")[1] != "", 30),
              "the waiting pod is bound")
        time.sleep(1)
        rc, out = kc(kcfg, "get", "events", "-o", "json")
        evs = json.loads(out)["items"] if rc == 0 else []
        by = [e.get("reportingInstance") for e in evs
              if e.get("reason") == "Scheduled" and e.get("involvedObject", {}).get("name") == "waiting"]
        check(by == ["B"], "the waiting pod was bound by B only, got %s" % by)
        a_log = open(os.path.join(work, "A.log")).read()
        check("renew deadline" in a_log or "lost the lease" in a_log, "A says it stopped")
    finally:
        for p in procs:
            p.kill()
            p.wait()
        if F:
            print("fence: logs kept in %s" % work)
        else:
            subprocess.run(["rm", "-rf", work])
    print("fence: %d passed, %d failed" % (P, F))
    return 1 if F else 0


if __name__ == "__main__":
    sys.exit(main())
