#!/usr/bin/python3
"""durable.py - no acknowledged write of `muster up` is lost to a full disk
and a kill -9.

Its data directory sits on a small tmpfs.  Four client threads create pods
as fast as the server takes them (each 201 is an acknowledged write) and
delete some of them again (each 200 an acknowledged delete), while the
disk is filled (every write then fails: 500) and freed again, and the
server is killed -9 at a random moment, with the disk full or not, then
restarted on the same data.  After each restart every acknowledged create
that was not deleted must be listed, and no acknowledged delete may come
back (a delete that got no answer, cut by the kill, may have landed or
not: as with any API server, its outcome is unknown; one refused with an
error must not have landed).  Needs root (to mount the tmpfs); prints that it skipped otherwise.

Usage: tests/soak/durable.py MUSTER [--rounds 6] [--seed N]
Last line: "durable: N passed, N failed".
"""
import argparse
import http.client
import json
import os
import random
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time


def conf(kc):
    server = token = None
    with open(kc) as f:
        for line in f:
            line = line.strip()
            if line.startswith("server:"):
                server = line.split(None, 1)[1]
            elif line.startswith("token:"):
                token = line.split(None, 1)[1]
    if token is None:  # the kubeconfig has a client certificate: the admin token file
        with open(os.path.join(os.path.dirname(kc), "token")) as f:
            token = f.read().strip()
    host, port = server.split("://", 1)[1].rsplit(":", 1)
    return host, int(port), token


class Client:
    def __init__(self, host, port, token):
        self.host, self.port, self.token = host, port, token
        self.c = None

    def req(self, method, path, body=None):
        """(status, parsed JSON or None); status 0 when no answer came."""
        try:
            if self.c is None:
                ctx = ssl._create_unverified_context()
                self.c = http.client.HTTPSConnection(self.host, self.port, context=ctx, timeout=10)
            data = json.dumps(body).encode() if body is not None else None
            self.c.request(method, path, body=data, headers={
                "Authorization": "Bearer " + self.token, "Content-Type": "application/json"})
            r = self.c.getresponse()
            text = r.read()
            try:
                return r.status, json.loads(text)
            except ValueError:
                return r.status, None
        except (OSError, http.client.HTTPException):
            if self.c:
                self.c.close()
            self.c = None
            return 0, None


def pod(name):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "annotations": {"pad": "x" * 1500}},
            "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "x"}]}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("muster")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--seed", type=int, default=None)
    a = ap.parse_args()
    if os.geteuid() != 0 or not shutil.which("mount"):
        print("durable: skipped (needs root to mount a tmpfs)")
        print("durable: 0 passed, 0 failed")
        return 0
    seed = a.seed if a.seed is not None else random.SystemRandom().randrange(1 << 30)
    rnd = random.Random(seed)
    work = tempfile.mkdtemp(prefix="muster-durable-")
    data = os.path.join(work, "data")
    os.makedirs(data)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", data], capture_output=True).returncode:
        print("durable: skipped (could not mount a tmpfs)")
        print("durable: 0 passed, 0 failed")
        shutil.rmtree(work, ignore_errors=True)
        return 0
    log = open(os.path.join(work, "up.log"), "ab")
    argv = [a.muster, "up", "--listen", "127.0.0.1:0", "--data", data, "--quiet"]
    proc = [None]
    acked, gone = set(), set()     # acknowledged creates, acknowledged deletes
    unknown = set()                # deletes that got no answer (the kill): either outcome
    refused = [0]                  # writes answered 507 or 5xx (the disk was full)
    lock = threading.Lock()
    passed = failed = 0

    def start():
        kc = os.path.join(data, "kubeconfig")
        if os.path.exists(kc):
            os.unlink(kc)
        proc[0] = subprocess.Popen(argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        for _ in range(300):
            if os.path.exists(kc):
                try:
                    h, p, t = conf(kc)
                    if Client(h, p, t).req("GET", "/readyz")[0] == 200:
                        return h, p, t
                except (OSError, ValueError, AttributeError):
                    pass
            time.sleep(0.1)
        return None

    print("durable: seed %d, %d rounds, data on a 24 MiB tmpfs in %s" % (seed, a.rounds, data))
    try:
        for rnd_i in range(a.rounds):
            ep = start()
            if not ep:
                print("durable: muster up did not start (round %d)" % rnd_i)
                failed += 1
                break
            # every acknowledged create (not deleted) is there, no acknowledged delete came back
            st, lst = Client(*ep).req("GET", "/api/v1/namespaces/default/pods")
            names = {i["metadata"]["name"] for i in (lst or {}).get("items", [])}
            lost = sorted(acked - gone - unknown - names)
            back = sorted(gone & names)
            if st != 200 or lost or back:
                failed += 1
                print("durable: round %d: list %d, %d acknowledged creates lost %s, %d deletes back %s"
                      % (rnd_i, st, len(lost), lost[:5], len(back), back[:5]))
            else:
                passed += 1
            stop = [False]

            def writer(tid):
                c = Client(*ep)
                k = 0
                while not stop[0]:
                    k += 1
                    name = "r%d-t%d-%d" % (rnd_i, tid, k)
                    s, _ = c.req("POST", "/api/v1/namespaces/default/pods", pod(name))
                    if s == 201:
                        with lock:
                            acked.add(name)
                    elif s >= 500:
                        with lock:
                            refused[0] += 1
                    if k % 3 == 0:
                        victim = "r%d-t%d-%d" % (rnd_i, tid, k - 1)
                        s, _ = c.req("DELETE", "/api/v1/namespaces/default/pods/%s?gracePeriodSeconds=0" % victim)
                        if s in (200, 202):
                            with lock:
                                gone.add(victim)
                        elif s == 0:
                            with lock:
                                unknown.add(victim)
            ts = [threading.Thread(target=writer, args=(i,), daemon=True) for i in range(4)]
            for t in ts:
                t.start()
            time.sleep(rnd.uniform(0.3, 1.0))
            filler = os.path.join(data, "filler")
            vfs = os.statvfs(data)
            subprocess.run(["fallocate", "-l", str(vfs.f_bavail * vfs.f_frsize), filler], capture_output=True)
            full_for = rnd.uniform(0.3, 2.0)
            kill_full = rnd.random() < 0.5
            time.sleep(full_for if kill_full else full_for)
            if not kill_full and os.path.exists(filler):
                # fallocate finds nothing to take when the disk is already full
                os.unlink(filler)
                time.sleep(rnd.uniform(0.2, 1.0))
            proc[0].send_signal(signal.SIGKILL)
            proc[0].wait()
            stop[0] = True
            for t in ts:
                t.join()
            if os.path.exists(filler):
                os.unlink(filler)
            print("durable: round %d: %d creates acknowledged so far, %d deletes, %d refused; killed %s"
                  % (rnd_i, len(acked), len(gone), refused[0],
                     "with the disk full" if kill_full else "after it was freed"))
        ep = start()
        if ep:
            st, lst = Client(*ep).req("GET", "/api/v1/namespaces/default/pods")
            names = {i["metadata"]["name"] for i in (lst or {}).get("items", [])}
            lost = sorted(acked - gone - unknown - names)
            if st != 200 or lost or gone & names:
                failed += 1
                print("durable: at the end: %d acknowledged creates lost %s" % (len(lost), lost[:5]))
            else:
                passed += 1
        if not refused[0]:
            failed += 1
            print("durable: no write was refused: the disk never filled")
    finally:
        if proc[0] and proc[0].poll() is None:
            proc[0].kill()
            proc[0].wait()
        subprocess.run(["umount", "-l", data], capture_output=True)
    if failed:
        print("durable: FAILED with seed %d (server log in %s)" % (seed, work))
    else:
        shutil.rmtree(work, ignore_errors=True)
    print("durable: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
