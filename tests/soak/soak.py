#!/usr/bin/python3
"""soak.py - a randomized chaos soak of muster up and muster scheduler.

It starts `muster up` (with fsync) and two `muster scheduler` replicas that
elect a leader, drives a steady churn through the real kubectl (single pods
and gangs of mixed sizes, same-name recreates, deletes, cordons, node
failures), and injects faults at random times drawn from a seed:

  kill9-sched    kill -9 a scheduler replica, restart it 0-3 s later
  kill9-api      kill -9 muster up, restart it on the same data 1 s later
  stop-leader    SIGSTOP the replica holding the lease for longer than the
                 lease, then SIGCONT it
  proxy-drop     close every connection between the schedulers and the API
                 server (the schedulers reach it through a small proxy here)
  proxy-stall    stop forwarding between them for a few seconds
  disk-full      fill the API server's data directory (a small tmpfs) for a
                 few seconds (only as root, when a tmpfs can be mounted)

  clock-jump     step the wall clock (CLOCK_REALTIME) of muster up or of a
                 scheduler by -120 s to +1 h, or back to true time, as an NTP
                 step would; with libfaketime (Debian package faketime)
                 preloaded into every process, monotonic clocks untouched.
                 Without libfaketime the kind is left out, and the run says so.

With --dispatch N it also runs the multi-cluster dispatcher: a hub `muster
up`, N worker `muster up`s each with its own scheduler, and two `muster
dispatch` replicas electing a leader on the hub; the churn also submits
queue-labelled Jobs to the hub, and the faults include

  kill9-dispatch kill -9 a dispatcher replica, restart it 0-2 s later
  stop-dispatch  SIGSTOP a dispatcher replica for 2-8 s (past its lease)
  kill9-wsched   kill -9 a worker's scheduler, restart it 0-3 s later
  stop-wsched    SIGSTOP a worker's scheduler for 3-20 s (its jobs may pass
                 the dispatcher's --start-timeout and be withdrawn)
  kill9-worker   kill -9 a worker's API server, restart it 0.5-2 s later
  lose-worker    kill -9 a worker's API server for longer than the
                 dispatcher's --cluster-lost-after (its jobs are requeued
                 elsewhere; its stale copies deleted once it is back)

Invariants, checked continuously from kubectl's own watches (pods, leases,
events) and at the end:
  bound-once      no pod (UID) is ever bound to a second node
  gpu-once        no GPU index of a node is held by two live pods at once,
                  and no node holds more GPUs than it has
  gang-min        no gang stays with 0 < bound < minMember (none of its pods
                  finished, nothing deleted by the churn) for longer than the
                  scheduler's --gang-rollback plus slack
  one-leader      every Scheduled event comes from the replica that held the
                  lease at that second (with one second of slack)
  writes-kept     every pod the churn created (acknowledged by the server)
                  is still there, or was deleted by the churn or evicted by
                  the scheduler (an event says so, or the Eviction API's
                  DisruptionTarget condition was seen on it)
  converges       after the faults stop, no pod waits while a schedulable
                  node has the GPUs it asks for, and every queue with
                  single pods waiting holds at least its deserved GPUs less
                  one pod (gangs may wait for whole nodes that only
                  consolidation, off on Kubernetes, would free)
  read-only       muster up started on its data directory remounted
                  read-only (the read-only fault) refuses with a clear
                  error, never crashes nor serves
  bounded         peak RSS and open fds of every process stay under limits,
                  and RSS does not keep growing in the second half: judged
                  within each run of a process (a restart starts small and
                  fills up again), after its first minute; every sample is
                  written to rss.csv
and with --dispatch, from each worker's own pod watch (not the dispatcher's
word):
  one-cluster     no hub Job has Running pods on two workers at once, and
                  no Job has copies on two workers at the end; the one
                  overlap allowed is a job the hub requeued from a cluster it
                  had lost (no answer for --cluster-lost-after, a slow
                  restart too: the dispatcher logs ClusterLost), whose stale
                  copy runs until the dispatcher can delete it, as with
                  MultiKueue
  every-job-runs  every hub Job the churn created ran on a worker (pods
                  Running or Succeeded there) and the hub says Succeeded

A failing run prints its seed, and the fault schedule and event history are
written to --out, so that the run can be replayed (--seed N): the faults draw
from their own generator, so a seed gives the same faults (kinds, victims,
gaps between them) however the churn's timing went; the churn, which waits
for kubectl, interleaves with them differently.  The last
line is "soak: N passed, N failed" (one per invariant check class).

Usage: tests/soak/soak.py MUSTER [--seconds 300] [--seed N] [--out DIR]
                           [--dispatch N] [--faults KIND,KIND]
"""
import argparse
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

KUBECTL = os.environ.get("KC", "/usr/bin/kubectl")
NODES = 16
GPUS = 8
QUEUES = ["team-a", "team-b", "team-c"]
# Events expire (kube-apiserver's --event-ttl, 1h by default) within the
# run, so that the expiry is exercised under the faults and an hour-long
# run sees a server whose Events have reached their steady number.
EVENT_TTL = "10m"
LEASE = 4          # --lease-duration of the schedulers (s)
ROLLBACK = 10      # --gang-rollback of the schedulers (s)


LOGF = []


def log(msg):
    line = "%7.1f %s\n" % (time.monotonic() - T0, msg)
    sys.stdout.write(line)
    sys.stdout.flush()
    for f in LOGF:
        f.write(line)
        f.flush()


T0 = time.monotonic()


# --- processes ---------------------------------------------------------------

class Proc:
    """A long-lived child (muster up or a scheduler) that can be killed,
    stopped and restarted; its output goes to a log file in the run's dir."""

    def __init__(self, name, argv, logdir, clock=None):
        self.name, self.argv, self.logdir = name, argv, logdir
        self.clock = clock     # a Clock, or None
        self.p = None
        self.starts = 0
        self.peak_rss = 0
        self.peak_fds = 0
        self.rss = []          # (t, kB, incarnation)

    def start(self):
        self.starts += 1
        out = open(os.path.join(self.logdir, "%s.log" % self.name), "ab")
        self.log_off = out.tell()   # where this run's output begins
        env = self.clock.env() if self.clock else None
        self.p = subprocess.Popen(self.argv, stdout=out, stderr=out, stdin=subprocess.DEVNULL, env=env)
        out.close()

    def alive(self):
        return self.p is not None and self.p.poll() is None

    def lost_lease(self):
        """Whether the last run's log ends with the scheduler's own "lost
        the lease: stopping" (a designed exit, as kube-scheduler's)."""
        # this run's whole output: a LeakSanitizer report after the line
        # can be longer than any fixed tail
        return "lost the lease: stopping" in self.run_text()

    def run_text(self):
        """This run's output (from where it began in the log), or ""."""
        try:
            with open(os.path.join(self.logdir, "%s.log" % self.name), "rb") as f:
                f.seek(getattr(self, "log_off", 0))
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def why_exited(self):
        """What this run's output says of its end: a sanitizer's summary, or
        its last line (so that a violation can be judged from the soak's log)."""
        lines = [l for l in self.run_text().splitlines() if l.strip()]
        summary = next((l for l in lines if "SUMMARY: " in l and "Sanitizer" in l), None)
        if summary:
            return summary.strip()  # an ASan, UBSan or leak report
        return lines[-1][-200:] if lines else "no output"

    def leak_report(self):
        """The summary line of a LeakSanitizer report in this run's output
        (an ASan build reports what was never freed when it exits), or
        None."""
        try:
            with open(os.path.join(self.logdir, "%s.log" % self.name), "rb") as f:
                f.seek(self.log_off)
                text = f.read().decode("utf-8", "replace")
        except (OSError, AttributeError):
            return None
        if "LeakSanitizer" not in text:
            return None
        return next((l for l in text.splitlines() if "SUMMARY: AddressSanitizer" in l), "LeakSanitizer report")

    def kill9(self):
        if self.alive():
            self.p.send_signal(signal.SIGKILL)
            self.p.wait()

    def sample(self):
        if not self.alive():
            return
        pid = self.p.pid
        try:
            with open("/proc/%d/status" % pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        kb = int(line.split()[1])
                        self.peak_rss = max(self.peak_rss, kb)
                        self.rss.append((time.monotonic(), kb, self.starts))
            fds = len(os.listdir("/proc/%d/fd" % pid))
            self.peak_fds = max(self.peak_fds, fds)
        except OSError:
            pass


def read_only(up, data, chk, rnd):
    """The read-only fault: muster up is killed, its data directory (a
    tmpfs) remounted read-only, and muster up started on it, which must
    refuse with a clear error rather than crash or serve what it cannot
    write (Linux cannot remount a file system read-only while the server
    holds its database open for writing, so this is the moment a read-only
    directory can be met).  Then the directory is made writable again and
    muster up restarted.  Its verdicts go to the read-only class."""
    up.kill9()
    if subprocess.run(["mount", "-o", "remount,ro", data], capture_output=True).returncode != 0:
        up.start()
        return
    up.start()
    try:
        code = up.p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        code = None
    chk.count("read-only")
    with open(os.path.join(up.logdir, "up.log"), "rb") as f:
        f.seek(up.log_off)
        text = f.read().decode("utf-8", "replace")
    if code is None:
        up.kill9()
        chk.bad("read-only", "muster up kept running on a read-only data directory")
    elif code < 0 or "Sanitizer" in text or "muster up:" not in text:
        chk.bad("read-only", "muster up on a read-only data directory ended with status %s and no clear error: %s" % (
            code, text.strip()[-300:]))
    time.sleep(rnd.uniform(0, 2))
    subprocess.run(["mount", "-o", "remount,rw", data], capture_output=True)
    up.start()


def terminate(procs, chk):
    """bounded, at the end: stops every process with SIGTERM (30 s at most
    in all, then kill -9), so that an ASan build's LeakSanitizer reports
    what each never freed; a report is a violation.  A process that does
    not stop in time is only logged."""
    for p in procs:
        if p.alive():
            p.p.send_signal(signal.SIGCONT)
            p.p.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 30
    for p in procs:
        if p.p is None:
            continue
        try:
            p.p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            log("%s did not stop on SIGTERM within 30 s: killed" % p.name)
            p.kill9()
            continue
        chk.count("bounded")
        leak = p.leak_report()
        if leak:
            chk.bad("bounded", "%s leaked at exit: %s (see %s.log)" % (p.name, leak.strip(), p.name))


def rss_growth(samples, half_t, warm=60, span=120):
    """bounded: whether one incarnation of a process kept growing in the
    second half (from half_t on).  samples are (t, kB, incarnation).  A
    restarted process starts small and fills up again as it lists its
    cluster, so growth is judged within an incarnation, from samples
    taken after it has run warm seconds, over at least span seconds:
    returns (first kB, last kB) when the last is over 1.5 times the first
    plus 64 MiB (a leak that began with the run has doubled by the end of
    its second half), else None.  (Comparing the first and last samples of the
    second half across a restart flagged a worker that had restarted at
    83 MiB and filled up again to its usual size.)"""
    born = {}
    for t, kb, inc in samples:
        born.setdefault(inc, t)
    runs = {}
    for t, kb, inc in samples:
        if t >= half_t and t - born[inc] >= warm:
            runs.setdefault(inc, []).append((t, kb))
    for run in runs.values():
        if len(run) > 4 and run[-1][0] - run[0][0] >= span and run[-1][1] > 1.5 * run[0][1] + 64 * 1024:
            return run[0][1], run[-1][1]
    return None


def selftest():
    """The bounded rule on made-up curves: a process restarted in the second
    half that fills up again and stays flat passes; one that keeps growing
    within a run fails.  Returns the number of wrong answers."""
    flat = [(t, 400 * 1024, 1) for t in range(0, 600, 2)]
    restart = flat[:200] + [(t, (83 + min(t - 400, 40) * 8) * 1024, 2) for t in range(400, 1200, 2)]
    leak = [(t, (20 + t // 2) * 1024, 1) for t in range(0, 1200, 2)]
    bad = 0
    for name, samples, half, want in (("flat", flat, 300, False), ("restart", restart, 300, False),
                                      ("leak", leak, 600, True)):
        got = rss_growth(samples, half) is not None
        print("selftest %s: %s" % (name, "flagged" if got else "passed"))
        bad += got != want
    return bad


def rss_curve(samples, half_t):
    """The RSS curve of a process for the log: the median and largest
    sample (MiB) of the first half and of the second."""
    out = []
    for part in ([kb for t, kb, _ in samples if t < half_t], [kb for t, kb, _ in samples if t >= half_t]):
        part = sorted(part)
        out.append("median %d max %d" % (part[len(part) // 2] // 1024, part[-1] // 1024) if part else "-")
    return "first half %s, second half %s" % tuple(out)


class Clock:
    """A process's wall clock, offset through libfaketime's timestamp file
    (re-read on every call: FAKETIME_NO_CACHE).  Monotonic clocks are left
    alone (DONT_FAKE_MONOTONIC), as an NTP step leaves them."""

    LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"

    def __init__(self, path):
        self.path, self.offset = path, 0
        self.set(0)

    @classmethod
    def available(cls):
        return os.path.exists(cls.LIB)

    def set(self, offset):
        self.offset = offset
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            f.write("%+d\n" % offset)
        os.replace(tmp, self.path)

    def env(self):
        e = dict(os.environ)
        e["LD_PRELOAD"] = self.LIB
        e["FAKETIME_TIMESTAMP_FILE"] = self.path
        e["FAKETIME_NO_CACHE"] = "1"
        e["DONT_FAKE_MONOTONIC"] = "1"
        # the sanitizers' runtime must come first unless told otherwise
        e["ASAN_OPTIONS"] = (e.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0").lstrip(":")
        return e


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# --- a small TCP proxy between the schedulers and the API server -------------

class Proxy:
    """Forwards 127.0.0.1:listen to 127.0.0.1:target; drop() closes every
    connection, stall(s) stops forwarding for s seconds."""

    def __init__(self, listen, target):
        self.target = target
        self.lock = threading.Lock()
        self.conns = []
        self.stall_until = 0.0
        self.srv = socket.socket()
        self.srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.srv.bind(("127.0.0.1", listen))
        self.srv.listen(256)
        self.stop = False
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while not self.stop:
            try:
                c, _ = self.srv.accept()
            except OSError:
                return
            try:
                u = socket.create_connection(("127.0.0.1", self.target), timeout=5)
                u.settimeout(None)
            except OSError:
                c.close()
                continue
            with self.lock:
                self.conns.append((c, u))
            threading.Thread(target=self.pipe, args=(c, u), daemon=True).start()
            threading.Thread(target=self.pipe, args=(u, c), daemon=True).start()

    def pipe(self, a, b):
        try:
            while True:
                data = a.recv(65536)
                if not data:
                    break
                while time.monotonic() < self.stall_until:
                    time.sleep(0.05)
                b.sendall(data)
        except OSError:
            pass
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def drop(self):
        with self.lock:
            conns, self.conns = self.conns, []
        for c, u in conns:
            for s in (c, u):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def stall(self, seconds):
        self.stall_until = time.monotonic() + seconds

    def close(self):
        self.stop = True
        self.drop()
        self.srv.close()


# --- watching through kubectl ------------------------------------------------

class Watch:
    """Follows one resource through the API server's own history: lists it
    (`kubectl get --raw PATH`: every object comes as ADDED, after a
    RELIST), then watches from the list's resourceVersion (`kubectl get
    --raw PATH?watch=1&resourceVersion=RV`, streamed), and when the watch
    ends (the server restarted, or the connection dropped) watches again
    from the last resourceVersion it saw, so that a change made while it
    was away (an eviction in the first second after a restart) still comes
    as its own event.  Only when the server no longer has that version (410
    Expired: it lost undelivered history to a kill -9) does it list again.
    Hands every event to fn(type, object)."""

    PATHS = {"pods": "/api/v1/pods", "leases": "/apis/coordination.k8s.io/v1/leases",
             "events": "/api/v1/events"}

    def __init__(self, kubeconfig, resource, fn):
        self.kc, self.resource, self.fn = kubeconfig, resource, fn
        self.stop = False
        self.p = None
        self.rv = None
        self.relists = 0
        self.hold = False      # a test holds the watch back between connections
        self.held = False
        threading.Thread(target=self.run, daemon=True).start()

    def relist(self):
        rc, text = kubectl(self.kc, "get", "--raw", self.PATHS[self.resource], timeout=30)
        if rc:
            return False
        try:
            lst = json.loads(text)
            items, rv = lst["items"], lst["metadata"]["resourceVersion"]
        except (ValueError, KeyError):
            return False
        self.relists += 1
        self.fn("RELIST", None)   # what follows lists everything again
        for o in items:
            self.fn("ADDED", o)
        self.rv = rv
        return True

    def run(self):
        dec = json.JSONDecoder()
        while not self.stop:
            while self.hold and not self.stop:
                self.held = True
                time.sleep(0.05)
            self.held = False
            if self.rv is None and not self.relist():
                time.sleep(0.3)
                continue
            self.p = subprocess.Popen([KUBECTL, "--kubeconfig", self.kc, "get", "--raw",
                                       "%s?watch=1&allowWatchBookmarks=true&resourceVersion=%s"
                                       % (self.PATHS[self.resource], self.rv), "--request-timeout=0"],
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
            buf = ""
            while True:
                chunk = self.p.stdout.read1(65536)
                if not chunk:
                    break
                buf += chunk.decode("utf-8", "replace")
                while True:
                    s = buf.lstrip()
                    if not s:
                        buf = ""
                        break
                    try:
                        obj, end = dec.raw_decode(s)
                    except ValueError:
                        buf = s
                        break
                    buf = s[end:]
                    if not isinstance(obj, dict) or "type" not in obj:
                        continue
                    o = obj.get("object") or {}
                    if obj["type"] == "ERROR":
                        self.rv = None     # 410 Expired, or another error: list again
                        continue
                    rv = (o.get("metadata") or {}).get("resourceVersion")
                    if rv:
                        self.rv = rv
                    if obj["type"] != "BOOKMARK":
                        self.fn(obj["type"], o)
            self.p.wait()
            if not self.stop:
                time.sleep(0.2)

    def close(self):
        self.stop = True
        if self.p and self.p.poll() is None:
            self.p.kill()


# --- the invariants ----------------------------------------------------------

class Checker:
    def __init__(self):
        self.lock = threading.Lock()
        self.violations = {}      # class -> [messages]
        self.checks = {}          # class -> count of checks made
        self.first_node = {}      # uid -> node
        self.pods = {}            # uid -> state dict
        self.by_key = {}          # "ns/name" -> uid
        self.gone = {}            # uid -> "ns/name" of pods deleted (DELETED seen)
        self.deleted_rv = {}      # "ns/name" -> resourceVersion of its last DELETED
        self.holders = []         # (t, holder) lease history
        self.sched_events = []    # (t_wall, instance, pod)
        self.evicted = set()      # "ns/name" the scheduler evicted (events)
        self.history = []         # every event, for the replay file
        self.gang_low = {}        # gang -> monotonic time since it is low
        self.gangs = {}           # gang name -> minMember
        self.disturbed = set()    # gangs the churn touched
        self.epoch = 0            # pods watch (re)starts: a pod not listed
                                  # again since is gone (its DELETED was missed)

    def count(self, cls, n=1):
        self.checks[cls] = self.checks.get(cls, 0) + n

    def bad(self, cls, msg):
        lst = self.violations.setdefault(cls, [])
        if len(lst) < 20:
            lst.append(msg)
            log("VIOLATION %s: %s" % (cls, msg))

    def pod_event(self, typ, o):
        if typ == "RELIST":
            with self.lock:
                self.epoch += 1
            return
        md, spec, st = o.get("metadata", {}), o.get("spec", {}), o.get("status", {})
        uid = md.get("uid")
        key = "%s/%s" % (md.get("namespace"), md.get("name"))
        if not uid:
            return
        node = spec.get("nodeName") or ""
        gpus = (md.get("annotations") or {}).get("muster.io/gpus", "")
        with self.lock:
            self.history.append((round(time.monotonic() - T0, 2), "pod", typ, key, uid, node,
                                 st.get("phase"), gpus, md.get("resourceVersion")))
            # the Eviction API marks its pods before it deletes them: an
            # eviction whose event was lost still explains the pod's end
            if any(c.get("type") == "DisruptionTarget" and c.get("status") == "True"
                   for c in st.get("conditions") or []):
                self.evicted.add(key)
            if typ == "DELETED":
                self.pods.pop(uid, None)
                self.gone[uid] = key
                self.deleted_rv[key] = md.get("resourceVersion")
                return
            if node:
                self.count("bound-once")
                first = self.first_node.setdefault(uid, node)
                if first != node:
                    self.bad("bound-once", "pod %s (uid %s) bound to %s, then to %s" % (key, uid, first, node))
            self.by_key[key] = uid
            self.pods[uid] = {
                "epoch": self.epoch, "key": key, "node": node, "phase": st.get("phase") or "Pending",
                "deleting": bool(md.get("deletionTimestamp")),
                "gpus": [int(x) for x in gpus.split(",") if x.strip().isdigit()],
                "want": int(((spec.get("containers") or [{}])[0].get("resources", {}).get("limits", {})
                             .get("nvidia.com/gpu", "0")) or 0),
                "queue": (md.get("labels") or {}).get("muster.io/queue"),
                "gang": (md.get("labels") or {}).get("muster.io/pod-group"),
            }
            if node:
                self.check_node(node)

    def holding(self, p):
        return (p["node"] and p["phase"] not in ("Succeeded", "Failed")
                and p["epoch"] == self.epoch)

    def check_node(self, node):
        seen, total = {}, 0
        for p in self.pods.values():
            if p["node"] != node or not self.holding(p):
                continue
            total += p["want"]
            for g in p["gpus"]:
                if g in seen and seen[g] != p["key"]:
                    self.bad("gpu-once", "GPU %d of %s held by %s and %s" % (g, node, seen[g], p["key"]))
                seen[g] = p["key"]
        self.count("gpu-once")
        if total > GPUS:
            self.bad("gpu-once", "%s holds %d GPUs of %d" % (node, total, GPUS))

    def lease_event(self, typ, o):
        if typ == "RELIST" or o.get("metadata", {}).get("name") != "muster-scheduler":
            return
        holder = o.get("spec", {}).get("holderIdentity") or ""
        with self.lock:
            if not self.holders or self.holders[-1][1] != holder:
                self.holders.append((time.time(), holder))
                self.history.append((round(time.monotonic() - T0, 2), "lease", typ, holder))

    def event_event(self, typ, o):
        if typ != "ADDED" or o is None:
            return
        reason = o.get("reason")
        inv = o.get("involvedObject", {})
        key = "%s/%s" % (inv.get("namespace"), inv.get("name"))
        with self.lock:
            if reason in ("Preempted", "GangRolledBack", "GangRestart"):
                self.evicted.add(key)
            if reason == "Scheduled" and o.get("reportingInstance"):
                self.sched_events.append((time.time(), o["reportingInstance"], key))

    def gangs_tick(self, now):
        """gang-min: a gang low for longer than the rollback time (+ slack)."""
        with self.lock:
            for g, mm in self.gangs.items():
                pods = [p for p in self.pods.values() if p["gang"] == g and p["epoch"] == self.epoch]
                if g in self.disturbed or any(p["phase"] in ("Succeeded", "Failed") for p in pods):
                    self.gang_low.pop(g, None)
                    continue
                active = sum(1 for p in pods if p["node"] and not p["deleting"])
                if 0 < active < mm:
                    since = self.gang_low.setdefault(g, now)
                    if now - since > ROLLBACK + 15:
                        self.bad("gang-min", "gang %s has %d of %d pods bound for %.0f s" % (g, active, mm, now - since))
                        self.gang_low[g] = now
                else:
                    self.gang_low.pop(g, None)
                self.count("gang-min")


# --- the multi-cluster part (--dispatch) -------------------------------------

class Fleet:
    """A hub `muster up`, worker `muster up`s each with its own scheduler,
    and two `muster dispatch` replicas electing a leader on the hub.  The
    churn submits queue-labelled Jobs to the hub; the faults kill and stop
    the dispatchers, the workers' schedulers and the workers' API servers
    (briefly, or for longer than --cluster-lost-after).  Each worker's pods
    are watched on the worker itself, so that "no job runs on two clusters"
    is judged from the workers' own histories, not from the dispatcher's."""

    WNODES = 2          # nodes of 8 GPUs per worker
    LOST_AFTER = 5      # --cluster-lost-after (s)
    START_TIMEOUT = 15  # --start-timeout (s)

    def __init__(self, muster, work, out, nworkers, chk):
        self.muster, self.work, self.out, self.chk = muster, work, out, chk
        self.workers = ["w%d" % (i + 1) for i in range(nworkers)]
        self.ports = {}
        self.ups = {}
        self.scheds = {}
        self.dispatchers = []
        self.down = {}          # Proc -> monotonic time to start it again
        self.jobs = {}          # hub job name -> gpus (acknowledged creates)
        self.deleted = set()    # hub jobs the churn deleted
        self.lock = threading.Lock()
        self.epoch = {}         # worker -> watch (re)starts
        self.wpods = {}         # (worker, uid) -> (job, running, epoch)
        self.ran = {}           # job -> set of workers where a pod of it ran
        self.watches = []
        self.lease_exits = 0
        self.overlaps = []      # (wall time, job, workers) seen running at once

    def kc(self, name):
        return os.path.join(self.work, name, "kubeconfig")

    def up(self, name, cluster_text):
        path = os.path.join(self.work, name + ".yaml")
        with open(path, "w") as f:
            f.write(cluster_text)
        os.makedirs(os.path.join(self.work, name), exist_ok=True)
        self.ports[name] = free_port()
        p = Proc(name, [self.muster, "up", "--cluster", path, "--listen", "127.0.0.1:%d" % self.ports[name],
                        "--data", os.path.join(self.work, name), "--no-fsync", "--quiet",
                        "--event-ttl", EVENT_TTL], self.out)
        p.start()
        return p

    def ready(self, name):
        for _ in range(300):
            if os.path.exists(self.kc(name)) and kubectl(self.kc(name), "get", "--raw", "/readyz", timeout=5)[0] == 0:
                return True
            time.sleep(0.1)
        return False

    def start(self):
        queues = "".join("---\napiVersion: muster.io/v1alpha1\nkind: Queue\nmetadata: {name: %s}\n"
                         "spec: {resources: {gpu: {deserved: %d}}}\n" % (q, self.WNODES * 8) for q in QUEUES)
        self.hub = self.up("hub", queues)
        for w in self.workers:
            self.ups[w] = self.up(w, "apiVersion: muster.io/v1alpha1\nkind: NodePool\nmetadata: {name: gpu}\n"
                                  "spec:\n  count: %d\n  namePrefix: %s-\n  gpuModel: A100\n"
                                  "  allocatable: {cpu: \"64\", memory: 512Gi, nvidia.com/gpu: \"8\"}\n%s"
                                  % (self.WNODES, w, queues))
        for name in ["hub"] + self.workers:
            if not self.ready(name):
                return "muster up %s did not start (see %s/%s.log)" % (name, self.out, name)
        hkc = self.kc("hub")
        kubectl(hkc, "create", "namespace", "muster-system")
        docs = []
        for w in self.workers:
            rc, msg = kubectl(hkc, "-n", "muster-system", "create", "secret", "generic", w + "-kc",
                              "--from-file=kubeconfig=" + self.kc(w))
            if rc:
                return "secret for %s: %s" % (w, msg)
            docs.append("apiVersion: muster.io/v1alpha1\nkind: Cluster\nmetadata: {name: %s}\n"
                        "spec: {tier: private, kubeconfigSecret: {name: %s-kc}}\n" % (w, w))
        rc, msg = kubectl(hkc, "apply", "-f", "-", stdin="---\n".join(docs))
        if rc:
            return "clusters: %s" % msg
        for w in self.workers:
            s = Proc(w + "-sched", [self.muster, "scheduler", "--kubeconfig", self.kc(w), "--no-leader-elect",
                                    "--min-runtime", "0"], self.out)
            s.start()
            self.scheds[w] = s
        for i in (1, 2):
            d = Proc("dispatch%d" % i, [self.muster, "dispatch", "--kubeconfig", hkc, "--id", "d%d" % i,
                                        "--interval", "200ms", "--start-timeout", "%ds" % self.START_TIMEOUT,
                                        "--cluster-lost-after", "%ds" % self.LOST_AFTER, "--request-timeout", "2s",
                                        "--lease-namespace", "muster-system", "--lease-duration", "4s",
                                        "--retry-period", "1s"], self.out)
            d.start()
            self.dispatchers.append(d)
        for w in self.workers:
            self.epoch[w] = 0
            self.watches.append(Watch(self.kc(w), "pods", lambda typ, o, w=w: self.pod_event(w, typ, o)))
        return None

    def procs(self):
        return [self.hub] + [self.ups[w] for w in self.workers] + [self.scheds[w] for w in self.workers] + \
            self.dispatchers

    # --- the workers' own history ------------------------------------------

    def pod_event(self, w, typ, o):
        with self.lock:
            if typ == "RELIST":
                self.epoch[w] += 1
                return
            md, st = o.get("metadata", {}), o.get("status", {})
            labels = md.get("labels") or {}
            job = labels.get("batch.kubernetes.io/job-name") or labels.get("job-name")
            uid = md.get("uid")
            if not job or not uid:
                return
            self.chk.history.append((round(time.monotonic() - T0, 2), "wpod", w, typ, job, md.get("name"), uid,
                                     (o.get("spec") or {}).get("nodeName"), st.get("phase"),
                                     md.get("resourceVersion")))
            if typ == "DELETED":
                self.wpods.pop((w, uid), None)
                return
            phase = st.get("phase")
            running = phase == "Running" and not md.get("deletionTimestamp")
            if phase in ("Running", "Succeeded"):
                self.ran.setdefault(job, set()).add(w)
            self.wpods[(w, uid)] = (job, running, self.epoch[w])
            if running:
                self.check_job(job)

    def check_job(self, job):
        """multi-cluster: job runs on at most one cluster at a time.  An
        overlap is noted here and judged at the end (final): it is allowed
        only after the hub requeued the job from a cluster it had lost (no
        answer for --cluster-lost-after: a slow restart counts too), whose
        copy may run until the dispatcher can delete it, as MultiKueue's."""
        where = {w for (w, _), (j, run, ep) in self.wpods.items() if j == job and run and ep == self.epoch[w]}
        self.chk.count("one-cluster")
        if len(where) > 1:
            self.overlaps.append((time.time(), job, sorted(where)))

    def requeued(self):
        """job -> wall times (s) of the dispatchers' "back to the hub
        (ClusterLost)" lines."""
        out = {}
        for d in self.dispatchers:
            try:
                with open(os.path.join(self.out, d.name + ".log")) as f:
                    for line in f:
                        if "back to the hub (ClusterLost)" not in line:
                            continue
                        hms, rest = line.split(" ", 1)
                        job = rest.split("job default/", 1)[1].split(":", 1)[0]
                        h, m, sec = hms.split(":")
                        out.setdefault(job, []).append(int(h) * 3600 + int(m) * 60 + float(sec))
            except (OSError, ValueError, IndexError):
                continue
        return out

    # --- churn and faults ----------------------------------------------------

    def submit(self, n, rnd):
        name = "d%d" % n
        pods, gpus = rnd.choice([1, 1, 2]), rnd.choice([1, 2, 4, 8])
        q = rnd.choice(QUEUES)
        y = ("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: %s\n  labels: {muster.io/queue: %s}\n"
             "  annotations: {muster.io/duration: \"%ds\"}\nspec:\n  suspend: true\n  parallelism: %d\n"
             "  completions: %d\n  template:\n    spec:\n      schedulerName: muster\n      restartPolicy: Never\n"
             "      containers:\n      - {name: c, image: x, resources: {limits: {nvidia.com/gpu: \"%d\"}}}\n"
             % (name, q, rnd.randint(3, 15), pods, pods, gpus))
        rc, _ = kubectl(self.kc("hub"), "apply", "-f", "-", stdin=y)
        if rc == 0:
            self.jobs[name] = pods * gpus

    KINDS = ["kill9-dispatch", "stop-dispatch", "kill9-worker", "lose-worker", "kill9-wsched", "stop-wsched"]

    def fault(self, k, rnd, now):
        """Injects fault k; returns its description."""
        if k == "kill9-dispatch":
            d = rnd.choice(self.dispatchers)
            d.kill9()
            self.down[d] = now + rnd.uniform(0, 2)
            return "%s %s" % (k, d.name)
        if k == "stop-dispatch":
            d = rnd.choice([x for x in self.dispatchers if x.alive()] or self.dispatchers)
            if d.alive():
                d.p.send_signal(signal.SIGSTOP)
                self.down[d] = now + rnd.uniform(2, 8)
            return "%s %s" % (k, d.name)
        w = rnd.choice(self.workers)
        if k in ("kill9-worker", "lose-worker"):
            p = self.ups[w]
            if p in self.down:
                return "%s %s (already down)" % (k, w)
            p.kill9()
            back = now + (rnd.uniform(0.5, 2) if k == "kill9-worker" else self.LOST_AFTER + rnd.uniform(3, 8))
            self.down[p] = back
            return "%s %s" % (k, w)
        s = self.scheds[w]
        if s in self.down:
            return "%s %s (already down)" % (k, w)
        if k == "kill9-wsched":
            s.kill9()
            self.down[s] = now + rnd.uniform(0, 3)
        else:
            s.p.send_signal(signal.SIGSTOP)
            self.down[s] = now + rnd.uniform(3, self.START_TIMEOUT + 5)
        return "%s %s" % (k, w)

    def tick(self, now):
        """Restarts or continues what a fault took down once its time has
        come; a process that died by itself is a finding, and restarted."""
        for p, when in list(self.down.items()):
            if now < when:
                continue
            del self.down[p]
            if p.alive():
                p.p.send_signal(signal.SIGCONT)
            else:
                p.start()
        for p in self.procs():
            if p in self.down or p.alive():
                continue
            code = p.p.returncode if p.p else None
            if p in self.dispatchers and code == 1 and p.lost_lease():
                self.lease_exits += 1
            elif code != -9:
                self.chk.bad("bounded", "%s exited by itself (status %s): %s" % (p.name, code, p.why_exited()))
            p.start()

    def settle(self):
        """The faults stop: everything runs again."""
        for p in list(self.down):
            if p.alive():
                p.p.send_signal(signal.SIGCONT)
            else:
                p.start()
        self.down.clear()

    # --- at the end ----------------------------------------------------------

    def final(self):
        """every-job-runs: every hub Job the churn created (and did not
        delete) ran on a worker (its pods Running or Succeeded there, from
        the worker's own history) and the hub says Succeeded; and no job
        has a copy on two workers at the end."""
        rc, text = kubectl(self.kc("hub"), "get", "jobs", "-o", "json", timeout=60)
        try:
            hub = {j["metadata"]["name"]: j for j in json.loads(text)["items"]}
        except (ValueError, KeyError):
            self.chk.bad("every-job-runs", "could not list the hub's Jobs: %s" % text[:200])
            hub = {}
        done = 0
        for name in sorted(self.jobs):
            self.chk.count("every-job-runs")
            if name not in hub:
                self.chk.bad("every-job-runs", "hub job %s was created (acknowledged) and is gone" % name)
                continue
            ann = hub[name]["metadata"].get("annotations") or {}
            phase = ann.get("muster.io/dispatch-phase", "")
            with self.lock:
                ran = sorted(self.ran.get(name, ()))
            if not ran:
                self.chk.bad("every-job-runs", "hub job %s never ran on a worker (phase %s, %s)"
                             % (name, phase or "-", ann.get("muster.io/dispatch-reason", "")))
            elif phase != "Succeeded":
                self.chk.bad("every-job-runs", "hub job %s ran on %s but the hub says %s" % (name, ran, phase or "-"))
            else:
                done += 1
        lost = self.requeued()
        excused = 0
        for tw, job, where in self.overlaps:
            sod = tw % 86400
            if any(0 <= (sod - t) % 86400 <= 600 for t in lost.get(job, [])):
                excused += 1
            else:
                self.chk.bad("one-cluster", "job %s runs on %s at once" % (job, ", ".join(where)))
        log("one-cluster: %d overlaps, %d of them after the hub requeued the job from a lost cluster"
            % (len(self.overlaps), excused))
        copies = {}
        for w in self.workers:
            rc, text = kubectl(self.kc(w), "get", "jobs", "-o", "json", timeout=60)
            try:
                for j in json.loads(text)["items"]:
                    copies.setdefault(j["metadata"]["name"], []).append(w)
            except (ValueError, KeyError):
                self.chk.bad("one-cluster", "could not list %s's Jobs: %s" % (w, text[:200]))
        for name, ws in sorted(copies.items()):
            self.chk.count("one-cluster")
            if len(ws) > 1:
                self.chk.bad("one-cluster", "job %s has copies on %s at the end" % (name, ", ".join(ws)))
        return done

    def close(self):
        for wt in self.watches:
            wt.close()
        for p in self.procs():
            if p.alive():
                p.p.send_signal(signal.SIGCONT)
            p.kill9()


# --- the run -----------------------------------------------------------------

def kubectl(kc, *args, stdin=None, timeout=20):
    try:
        r = subprocess.run([KUBECTL, "--kubeconfig", kc] + list(args), input=stdin, capture_output=True,
                           text=True, timeout=timeout)
        return r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired:
        return 124, "timeout"


def pod_yaml(name, gpus, queue, dur, gang=None, prio=0):
    labels = "{muster.io/queue: %s, soak: \"1\"%s}" % (queue, ", muster.io/pod-group: %s" % gang if gang else "")
    return ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  labels: %s\n"
            "  annotations: {muster.io/duration: \"%ds\", muster.io/priority: \"%d\"}\n"
            "spec:\n  schedulerName: muster\n  containers:\n"
            "  - {name: main, image: busybox, resources: {limits: {nvidia.com/gpu: \"%d\"}}}\n"
            % (name, labels, dur, prio, gpus))


def asan_quarantine():
    """bounded judges RSS, and under ASan a freed block waits in a
    quarantine (256 MiB by default) before it is reused: a process that
    frees as much as it allocates then reads as growing by up to 256 MiB
    within a run.  Every process the soak starts inherits this setting,
    so keep the quarantine small (16 MiB) unless the caller chose a size.
    (An hour run started without it, outside soak.sh, flagged nine
    processes that each jumped by about 250 MiB and then stayed flat.)"""
    opts = os.environ.get("ASAN_OPTIONS", "")
    if "quarantine_size_mb" not in opts:
        os.environ["ASAN_OPTIONS"] = (opts + ":quarantine_size_mb=16").lstrip(":")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("muster")
    ap.add_argument("--seconds", type=int, default=300)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--out", default=None)
    ap.add_argument("--dispatch", type=int, default=0, metavar="N",
                    help="also run the multi-cluster dispatcher with N worker clusters")
    ap.add_argument("--faults", default=None, metavar="KIND,KIND",
                    help="inject only these kinds of fault (default: every kind available)")
    ap.add_argument("--selftest", action="store_true", help="check the bounded rule on made-up curves and exit")
    a = ap.parse_args()
    if a.selftest:
        return 1 if selftest() else 0
    asan_quarantine()
    seed = a.seed if a.seed is not None else random.SystemRandom().randrange(1 << 30)
    rnd = random.Random(seed)
    # The faults draw from their own generator, so that a seed gives the
    # same faults (kinds, victims, gaps) whatever the churn's timing did.
    frnd = random.Random(seed * 7919 + 1)
    work = tempfile.mkdtemp(prefix="muster-soak-")
    out = a.out or os.path.join(work, "out")
    os.makedirs(out, exist_ok=True)
    LOGF.append(open(os.path.join(out, "soak.log"), "a"))
    log("soak: seed %d, %d s, output in %s" % (seed, a.seconds, out))
    log("soak: %s, ASAN_OPTIONS=%s" % (a.muster, os.environ.get("ASAN_OPTIONS", "")))
    if not os.access(KUBECTL, os.X_OK):
        print("soak: needs %s (scripts/install-deps.sh installs it)" % KUBECTL)
        print("soak: 0 passed, 1 failed")
        return 1

    data = os.path.join(work, "data")
    os.makedirs(data)
    tmpfs = False
    if os.geteuid() == 0 and shutil.which("mount"):
        tmpfs = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256m", "tmpfs", data],
                               capture_output=True).returncode == 0
    cluster = os.path.join(work, "cluster.yaml")
    with open(cluster, "w") as f:
        f.write("apiVersion: muster.io/v1alpha1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n"
                "  count: %d\n  namePrefix: gpu-\n  gpuModel: A100\n"
                "  allocatable: {cpu: \"64\", memory: 512Gi, nvidia.com/gpu: \"%d\"}\n" % (NODES, GPUS))
        for q in QUEUES:
            f.write("---\napiVersion: muster.io/v1alpha1\nkind: Queue\nmetadata: {name: %s}\n"
                    "spec: {resources: {gpu: {deserved: %d}}}\n" % (q, NODES * GPUS // len(QUEUES)))
    api_port, proxy_port = free_port(), free_port()
    clocks = Clock.available()
    if not clocks:
        log("soak: no libfaketime (%s): clock jumps are not injected" % Clock.LIB)
    def clock(name):
        return Clock(os.path.join(work, "clock-" + name)) if clocks else None
    up = Proc("up", [a.muster, "up", "--cluster", cluster, "--listen", "127.0.0.1:%d" % api_port,
                     "--data", data, "--quiet", "--event-ttl", EVENT_TTL], out, clock("up"))
    up.start()
    kc = os.path.join(data, "kubeconfig")
    for _ in range(200):
        if os.path.exists(kc) and kubectl(kc, "get", "--raw", "/readyz", timeout=5)[0] == 0:
            break
        time.sleep(0.1)
    else:
        print("soak: muster up did not start (see %s/up.log)" % out)
        print("soak: 0 passed, 1 failed")
        return 1
    # The schedulers reach the server through the proxy.
    with open(kc) as f:
        skc_text = f.read().replace("127.0.0.1:%d" % api_port, "127.0.0.1:%d" % proxy_port)
    skc = os.path.join(work, "sched-kubeconfig")
    with open(skc, "w") as f:
        f.write(skc_text)
    proxy = Proxy(proxy_port, api_port)
    scheds = []
    for i in (1, 2):
        s = Proc("sched%d" % i, [a.muster, "scheduler", "--kubeconfig", skc, "--id", "sched%d" % i,
                                 "--lease-namespace", "default", "--min-runtime", "0",
                                 "--lease-duration", str(LEASE), "--retry-period", "1",
                                 "--gang-rollback", "%ds" % ROLLBACK], out, clock("sched%d" % i))
        s.start()
        scheds.append(s)
    procs = [up] + scheds
    chk = Checker()
    fleet = None
    if a.dispatch:
        fleet = Fleet(a.muster, work, out, a.dispatch, chk)
        err = fleet.start()
        if err:
            log("soak: the fleet did not start: %s" % err)
            fleet.close()
            for p in procs:
                p.kill9()
            proxy.close()
            print("soak: 0 passed, 1 failed")
            return 1
        log("soak: a hub, %d workers and two dispatchers" % a.dispatch)
    watches = [Watch(kc, "pods", chk.pod_event), Watch(kc, "leases", chk.lease_event),
               Watch(kc, "events", chk.event_event)]

    created, deleted = {}, set()      # "ns/name" -> uid at create time
    lease_exits = [0]
    faults = []
    quiet_at = a.seconds - min(60, a.seconds // 3)
    next_fault = 8 + frnd.uniform(0, 6)
    stopped = None
    n = 0
    t_start = time.monotonic()
    last_sample = 0.0
    while True:
        t = time.monotonic() - t_start
        if t >= a.seconds:
            break
        if t - last_sample >= 2:
            for p in procs + (fleet.procs() if fleet else []):
                p.sample()
            chk.gangs_tick(time.monotonic())
            last_sample = t
        # --- faults ---------------------------------------------------------
        if stopped and time.monotonic() >= stopped[1]:
            stopped[0].p.send_signal(signal.SIGCONT)
            stopped = None
        if t < quiet_at and t >= next_fault and not stopped:
            kinds = ["kill9-sched", "kill9-api", "stop-leader", "proxy-drop", "proxy-stall"]
            if tmpfs:
                kinds += ["disk-full", "read-only"]
            if clocks:
                kinds.append("clock-jump")
            if fleet:
                kinds += Fleet.KINDS
            if a.faults:
                kinds = [x for x in kinds if x in a.faults.split(",")] or ["none"]
            k = frnd.choice(kinds)
            if k in Fleet.KINDS:
                k = fleet.fault(k, frnd, time.monotonic())
            if k == "clock-jump":
                victim = frnd.choice(procs)
                off = frnd.choice([0, frnd.randint(-120, -5), frnd.randint(5, 120), 3600])
                victim.clock.set(off)
                k = "clock-jump %s %+ds" % (victim.name, off)
            faults.append((round(t, 1), k))
            log("fault: %s" % k)
            if k == "kill9-sched":
                s = frnd.choice(scheds)
                s.kill9()
                time.sleep(frnd.uniform(0, 3))
                s.start()
            elif k == "kill9-api":
                up.kill9()
                time.sleep(1)
                up.start()
            elif k == "stop-leader":
                holder = chk.holders[-1][1] if chk.holders else ""
                s = next((x for x in scheds if x.name == holder and x.alive()), None)
                if s:
                    s.p.send_signal(signal.SIGSTOP)
                    stopped = (s, time.monotonic() + LEASE + 3)
            elif k == "proxy-drop":
                proxy.drop()
            elif k == "proxy-stall":
                proxy.stall(frnd.uniform(2, 6))
            elif k == "read-only":
                read_only(up, data, chk, frnd)
            elif k == "disk-full":
                filler = os.path.join(data, "filler")
                subprocess.run(["fallocate", "-l", "250M", filler], capture_output=True)
                time.sleep(frnd.uniform(2, 5))
                try:
                    os.unlink(filler)
                except OSError:
                    pass
            next_fault = t + frnd.uniform(5, 15)
        for p in procs:   # a process that died by itself is a finding, and is restarted
            if not p.alive() and not (stopped and stopped[0] is p):
                code = p.p.returncode if p.p else None
                if p in scheds and code == 1 and p.lost_lease():
                    lease_exits[0] += 1   # as kube-scheduler: it leaves when it loses the lease
                elif p.p is not None and code not in (-9,):
                    chk.bad("bounded", "%s exited by itself (status %s): %s" % (p.name, code, p.why_exited()))
                p.start()
        if fleet:
            fleet.tick(time.monotonic())
        # --- churn ----------------------------------------------------------
        if t < quiet_at:
            n += 1
            if fleet and rnd.random() < 0.25:
                fleet.submit(n, rnd)
            r = rnd.random()
            q = rnd.choice(QUEUES)
            if r < 0.45:
                name = "p%d" % n
                rc, _ = kubectl(kc, "apply", "-f", "-", stdin=pod_yaml(name, rnd.choice([1, 1, 2, 4, 8]), q,
                                                                         rnd.randint(5, 40), prio=rnd.randint(0, 2)))
                if rc == 0:
                    created["default/" + name] = True
            elif r < 0.65:
                g = "g%d" % n
                size = rnd.choice([2, 3, 4])
                docs = ["apiVersion: muster.io/v1alpha1\nkind: PodGroup\nmetadata: {name: %s}\n"
                        "spec: {minMember: %d, queue: %s}\n" % (g, size, q)]
                dur = rnd.randint(10, 40)
                gp = rnd.choice([4, 8])
                for i in range(size):
                    docs.append(pod_yaml("%s-%d" % (g, i), gp, q, dur, gang=g))
                rc, _ = kubectl(kc, "apply", "-f", "-", stdin="---\n".join(docs))
                if rc == 0:
                    with chk.lock:
                        chk.gangs[g] = size
                    for i in range(size):
                        created["default/%s-%d" % (g, i)] = True
            elif r < 0.75 and created:
                key = rnd.choice(sorted(created))
                name = key.split("/", 1)[1]
                with chk.lock:
                    gang = next((p["gang"] for p in chk.pods.values() if p["key"] == key), None)
                    if gang:
                        chk.disturbed.add(gang)
                rc, _ = kubectl(kc, "delete", "pod", name, "--wait=false")
                if rc == 0:
                    deleted.add(key)
                    created.pop(key, None)
                    if rnd.random() < 0.5 and not gang:   # a same-name recreate
                        rc2, _ = kubectl(kc, "create", "-f", "-", stdin=pod_yaml(name, 1, q, 10))
                        if rc2 == 0:
                            deleted.discard(key)
                            created[key] = True
            elif r < 0.85:
                node = "gpu-%02d" % rnd.randrange(NODES)
                kubectl(kc, "cordon" if rnd.random() < 0.5 else "uncordon", node)
            elif r < 0.9:
                node = "gpu-%02d" % rnd.randrange(NODES)
                subprocess.run([a.muster, "node", "fail", node, "--kubeconfig", kc],
                               capture_output=True)
                faults.append((round(t, 1), "node-fail " + node))
            else:
                for i in range(NODES):
                    subprocess.run([a.muster, "node", "recover", "gpu-%02d" % i, "--kubeconfig", kc],
                                   capture_output=True)
                kubectl(kc, "uncordon", *["gpu-%02d" % i for i in range(NODES)])
        elif t < quiet_at + 1:
            # Faults and churn stop: every node recovers and is schedulable,
            # and the clocks are set right, as NTP would in the end.
            for p in procs:
                if p.clock and p.clock.offset:
                    p.clock.set(0)
            for i in range(NODES):
                subprocess.run([a.muster, "node", "recover", "gpu-%02d" % i, "--kubeconfig", kc],
                               capture_output=True)
            kubectl(kc, "uncordon", *["gpu-%02d" % i for i in range(NODES)])
            if fleet:
                fleet.settle()
            time.sleep(1)
        time.sleep(rnd.uniform(0.05, 0.4))
    if stopped:
        stopped[0].p.send_signal(signal.SIGCONT)

    final = kubectl(kc, "get", "pods", "-A", "-o", "json", timeout=60)
    final_nodes = kubectl(kc, "get", "nodes", "-o", "json", timeout=60)
    for w in watches:
        w.close()
    jobs_done = fleet.final() if fleet else 0
    log("watches listed again (410 Expired, after a kill -9 lost history): %s" % ", ".join(
        "%s %d" % (w.resource, w.relists - 1) for w in watches))
    # --- end checks -----------------------------------------------------------
    try:
        pods = json.loads(final[1])["items"]
        nodes = json.loads(final_nodes[1])["items"]
    except (ValueError, KeyError):
        chk.bad("converges", "could not list pods and nodes at the end: %s" % final[1][:200])
        pods, nodes = [], []
    with open(os.path.join(out, "final-pods.json"), "w") as f:
        f.write(final[1])
    present = {"%s/%s" % (p["metadata"]["namespace"], p["metadata"]["name"]) for p in pods}
    for key in created:
        chk.count("writes-kept")
        if key not in present and key not in chk.evicted:
            rv = chk.deleted_rv.get(key)
            chk.bad("writes-kept", "pod %s was created (acknowledged) and is gone, unexplained (%s)" % (
                key, "the watch saw it DELETED at resourceVersion %s, never evicted" % rv if rv
                else "no DELETED event for it"))
    free = {}
    for nd in nodes:
        ready = any(c.get("type") == "Ready" and c.get("status") == "True"
                    for c in nd.get("status", {}).get("conditions", []))
        if ready and not nd.get("spec", {}).get("unschedulable"):
            free[nd["metadata"]["name"]] = GPUS
    held = {q: 0 for q in QUEUES}
    waiting = {q: 0 for q in QUEUES}
    pending = []
    for p in pods:
        spec, st, md = p.get("spec", {}), p.get("status", {}), p["metadata"]
        want = int(spec.get("containers", [{}])[0].get("resources", {}).get("limits", {}).get("nvidia.com/gpu", "0") or 0)
        q = (md.get("labels") or {}).get("muster.io/queue")
        if st.get("phase") in ("Succeeded", "Failed"):
            continue
        if spec.get("nodeName"):
            if spec["nodeName"] in free:
                free[spec["nodeName"]] -= want
            if q in held:
                held[q] += want
        elif not md.get("deletionTimestamp"):
            gang = (md.get("labels") or {}).get("muster.io/pod-group")
            pending.append((md["name"], want, gang))
            # Fair shares are judged on single pods: a gang may wait for
            # whole nodes that only consolidation (off on Kubernetes) frees.
            if q in waiting and not gang:
                waiting[q] += want
    for name, want, gang in pending:
        if gang:
            continue
        chk.count("converges")
        room = [n for n, f in free.items() if f >= want]
        if room:
            chk.bad("converges", "pod %s (%d GPUs) waits while %s has room" % (name, want, room[0]))
    deserved = NODES * GPUS // len(QUEUES)
    log("at the end: GPUs held %s, waiting %s, free per node %s" % (held, waiting, sorted(free.values())))
    for q in QUEUES:
        chk.count("converges")
        if waiting[q] > 0 and held[q] < deserved - GPUS:
            chk.bad("converges", "queue %s holds %d GPUs (deserved %d) while %d wait" % (q, held[q], deserved, waiting[q]))
    # one-leader: every Scheduled event from the lease holder of that second
    for tw, inst, key in chk.sched_events:
        chk.count("one-leader")
        holder = None
        ok = False
        for th, h in chk.holders:
            if th <= tw + 1.0:
                holder = h
                if h == inst:
                    ok = True
            if th > tw + 1.0:
                break
        # the instance held the lease at some point within a second before
        if not ok and holder != inst:
            prev = [h for th, h in chk.holders if tw - 1.0 <= th <= tw + 1.0]
            if inst not in prev:
                chk.bad("one-leader", "%s bound %s while %s held the lease" % (inst, key, holder))
    allprocs = procs + (fleet.procs() if fleet else [])
    for p in allprocs:
        chk.count("bounded")
        if p.peak_fds > 2000:
            chk.bad("bounded", "%s had %d open fds" % (p.name, p.peak_fds))
        if p.peak_rss > 1024 * 1024:
            chk.bad("bounded", "%s peaked at %d MiB" % (p.name, p.peak_rss // 1024))
        grew = rss_growth(p.rss, t_start + a.seconds / 2)
        if grew:
            chk.bad("bounded", "%s RSS grew from %d to %d MiB in the second half, within one run of it" % (
                p.name, grew[0] // 1024, grew[1] // 1024))
    # --- tear down and report ---------------------------------------------------
    terminate(allprocs, chk)
    for p in procs:
        p.kill9()
    if fleet:
        fleet.close()
    proxy.close()
    with open(os.path.join(out, "faults.json"), "w") as f:
        json.dump({"seed": seed, "seconds": a.seconds, "faults": faults}, f, indent=1)
    with open(os.path.join(out, "rss.csv"), "w") as f:
        f.write("seconds,process,incarnation,rss_kib\n")
        for p in allprocs:
            for tt, kb, inc in p.rss:
                f.write("%.1f,%s,%d,%d\n" % (tt - t_start, p.name, inc, kb))
    with open(os.path.join(out, "history.jsonl"), "w") as f:
        for h in chk.history:
            f.write(json.dumps(h) + "\n")
    if tmpfs:
        subprocess.run(["umount", "-l", data], capture_output=True)
    kinds = {}
    for _, k in faults:
        k = k.split()[0]
        kinds[k] = kinds.get(k, 0) + 1
    log("faults by kind: %s" % json.dumps(kinds, sort_keys=True))
    log("pods created %d, present at the end %d, restarts: %s; exits on a lost lease %d" % (
        len(created), len(present), ", ".join("%s %d" % (p.name, p.starts - 1) for p in allprocs),
        lease_exits[0] + (fleet.lease_exits if fleet else 0)))
    if fleet:
        log("hub jobs created %d, completed (Succeeded on the hub, ran on a worker) %d" % (len(fleet.jobs), jobs_done))
    for p in allprocs:
        log("%s: peak RSS %d MiB, peak fds %d; RSS %s" % (p.name, p.peak_rss // 1024, p.peak_fds,
                                                         rss_curve(p.rss, t_start + a.seconds / 2)))
    passed = failed = 0
    classes = ["bound-once", "gpu-once", "gang-min", "one-leader", "writes-kept", "converges", "bounded", "read-only"]
    if fleet:
        classes += ["one-cluster", "every-job-runs"]
    for cls in classes:
        v = chk.violations.get(cls, [])
        log("%-12s %6d checks, %d violations" % (cls, chk.checks.get(cls, 0), len(v)))
        if v:
            failed += 1
        else:
            passed += 1
    if failed:
        log("FAILED: replay with --seed %d (fault schedule and history in %s)" % (seed, out))
    else:
        shutil.rmtree(work, ignore_errors=True) if not a.out else None
    print("soak: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
