#!/usr/bin/env python3
"""derive_demo.py - derive examples/demo/jobs.csv from the Philly trace.

Usage:
    python3 tools/derive_demo.py PHILLY_CSV [--out examples/demo/jobs.csv]
        [--seed 20171005] [--target-load 0.9] [--max-jobs 2500]

Input: the Microsoft Philly trace (2017) as prepared by the Pollux (OSDI'21)
artifact, columns timestamp,duration,num_gpus,gpu_time,cluster (see
/work/shared/data/README.md).  Output: muster's compact trace (see
docs/formats.md) for the demo cluster of 64 nodes x 8 GPUs = 512 GPUs.

What it does, deterministically (python3 standard library only; the only
randomness is random.Random(seed)):

1. Window.  Runs are capped at 36 h.  Every 24-hour window starting on a
   whole hour is scored by the GPU-hours of work that falls inside it
   (runs clipped to the window, including jobs submitted before it and
   still running into it); the busiest window with at least 1,000
   submissions is kept.  Jobs submitted in it keep their real offsets
   from the window start; jobs still running into it arrive at 0 with the
   rest of their capped run (so the cluster starts warm, as it was).
2. Teams.  Philly's virtual clusters are mapped onto the demo's three
   queues: by GPU-hours in the window, largest first, each virtual cluster
   goes to the queue furthest below its deserved share (research 256,
   product 160, interns 96 of 512 GPUs).
3. Types.  A job with more than one GPU, or running 4 h or more, is train
   (preemptible, priority 50), except that 40% of the 1-GPU jobs running
   8 h or more become inference (non-preemptible, priority 100).  Half of
   the 1-GPU jobs shorter than 1 h submitted in business hours (09:00 to
   18:00 on the trace's clock) become interactive (non-preemptible,
   priority 1000).  The remaining 1-GPU jobs are train as well.
4. Shapes.  A job of up to 8 GPUs is one pod; a larger one is a gang of
   ceil(gpus / 8) pods with an equal share of its GPUs (all pods must
   start together).  Per GPU, a pod asks for 12 CPUs and 128 GiB (train),
   8 CPUs and 96 GiB (inference) or 6 CPUs and 64 GiB (interactive), so
   any mix fits a 96-CPU, 1 TiB, 8-GPU node.
5. Load.  If there are more than --max-jobs jobs, short 1-GPU jobs (the
   bulk of the count, little of the load) are thinned at random.  Then, in
   a seeded random order, train jobs are dropped while the offered load
   exceeds --target-load x 512 GPUs x 24 h.  The offered load is the
   GPU-hours of work inside the day (runs clipped to it, as if every job
   started on arrival); the script prints it against that capacity, with
   the work that runs past the day and the peak GPU demand.
"""

import argparse
import csv
import datetime
import math
import random
import sys

GPUS = 512
DAY = 86400
CAP_S = 36 * 3600  # longest run kept, seconds
TEAMS = [("research", 256), ("product", 160), ("interns", 96)]
# per GPU: (cpu millicores, memory MiB)
PER_GPU = {
    "train": (12000, 128 * 1024),
    "inference": (8000, 96 * 1024),
    "interactive": (6000, 64 * 1024),
}
PRIORITY = {"train": 50, "inference": 100, "interactive": 1000}
PREEMPTIBLE = {"train": "true", "inference": "false", "interactive": "false"}


def read_philly(path):
    """Returns [(submit_epoch_s, duration_s, gpus, vc)] with 0-GPU rows and
    rows without a positive duration left out."""
    jobs = []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            t = datetime.datetime.strptime(row["timestamp"], "%Y-%m-%d %H:%M:%S")
            t = t.replace(tzinfo=datetime.timezone.utc)
            gpus = int(row["num_gpus"])
            dur = float(row["duration"])
            if gpus <= 0 or not dur > 0:
                continue
            jobs.append((t.timestamp(), dur, gpus, row["cluster"]))
    jobs.sort()
    return jobs


def busiest_window(jobs):
    """The start (epoch s, a whole hour) of the 24 h window with the most
    GPU-hours of work in it (jobs running into it from before included)
    among windows with at least 1,000 submissions.  O(jobs x 25 + hours)."""
    t0 = math.floor(jobs[0][0] / 3600) * 3600
    nh = int((jobs[-1][0] - t0) // 3600) + 2 + CAP_S // 3600
    work = [0.0] * nh
    subs = [0] * nh
    for submit, dur, gpus, _ in jobs:
        subs[int((submit - t0) // 3600)] += 1
        a, b = submit, submit + min(dur, CAP_S)
        while a < b:
            h = int((a - t0) // 3600)
            step = max(min(b, t0 + (h + 1) * 3600) - a, 1e-3)
            work[h] += gpus * step / 3600.0
            a += step
    best, best_h = -1.0, 0
    for h in range(0, nh - 24):
        load = sum(work[h:h + 24])
        if sum(subs[h:h + 24]) >= 1000 and load > best:
            best, best_h = load, h
    return t0 + best_h * 3600


def map_teams(window, start):
    """Virtual cluster -> queue, balancing GPU-hours in the window against
    deserved shares (largest virtual cluster first, ties by name)."""
    by_vc = {}
    for submit, dur, gpus, vc in window:
        a, b = max(submit, start), min(submit + min(dur, CAP_S), start + DAY)
        by_vc[vc] = by_vc.get(vc, 0.0) + gpus * max(0.0, b - a) / 3600.0
    total = sum(by_vc.values()) or 1.0
    got = {name: 0.0 for name, _ in TEAMS}
    mapping = {}
    for vc, load in sorted(by_vc.items(), key=lambda kv: (-kv[1], kv[0])):
        team = max(TEAMS, key=lambda t: t[1] / GPUS - got[t[0]] / total)[0]
        mapping[vc] = team
        got[team] += load
    return mapping, by_vc


def classify(rng, submit_epoch, dur, gpus):
    """train, inference or interactive, as described at the top."""
    hour = datetime.datetime.fromtimestamp(submit_epoch, datetime.timezone.utc).hour
    if gpus == 1 and dur >= 8 * 3600 and rng.random() < 0.4:
        return "inference"
    if gpus > 1 or dur >= 4 * 3600:
        return "train"
    if dur < 3600 and 9 <= hour < 18 and rng.random() < 0.5:
        return "interactive"
    return "train"


def shape(kind, gpus):
    """(pods, gpus per pod, cpu_milli, memory_mib) per pod."""
    pods = max(1, math.ceil(gpus / 8))
    per = math.ceil(gpus / pods)
    cpu, mem = PER_GPU[kind]
    return pods, per, cpu * per, mem * per


def job_load(j):
    """GPU-hours of j's run that fall within the day."""
    end = min(j["submit_s"] + j["duration_s"], DAY)
    return j["gpus_total"] * max(0.0, end - j["submit_s"]) / 3600.0


def offered(jobs):
    """GPU-hours of work offered to the day (runs clipped to it)."""
    return sum(job_load(j) for j in jobs)


def thin(rng, jobs, max_jobs, target_gpuh):
    """Drops short 1-GPU jobs submitted in the window down to max_jobs,
    then train jobs (in a seeded random order) while the load is above
    target."""
    small = [j for j in jobs if j["gpus_total"] == 1 and
             j["duration_s"] < 3600 and not j["carried"]]
    excess = len(jobs) - max_jobs
    if excess > 0:
        drop = set(id(j) for j in rng.sample(small, min(excess, len(small))))
        jobs = [j for j in jobs if id(j) not in drop]
    load = offered(jobs)
    order = [j for j in jobs if j["type"] == "train"]
    rng.shuffle(order)
    drop = set()
    for j in order:
        if load <= target_gpuh:
            break
        drop.add(id(j))
        load -= job_load(j)
    return [j for j in jobs if id(j) not in drop]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("philly")
    ap.add_argument("--out", default="examples/demo/jobs.csv")
    ap.add_argument("--seed", type=int, default=20171005)
    ap.add_argument("--target-load", type=float, default=0.9)
    ap.add_argument("--max-jobs", type=int, default=2500)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)

    trace = read_philly(args.philly)
    start = busiest_window(trace)
    # jobs submitted in the window, and jobs still running into it from
    # before, which arrive at 0 with the rest of their (capped) run
    window = [j for j in trace
              if start <= j[0] < start + DAY or
              (j[0] < start < j[0] + min(j[1], CAP_S))]
    mapping, by_vc = map_teams(window, start)

    jobs = []
    for n, (t, dur, gpus, vc) in enumerate(window):
        kind = classify(rng, t, dur, gpus)
        carried = t < start
        jobs.append({"n": n, "vc": vc, "carried": carried,
                     "submit_s": max(0.0, t - start),
                     "duration_s": min(dur, CAP_S) - max(0.0, start - t),
                     "gpus_total": gpus, "type": kind, "queue": mapping[vc]})
    capacity = GPUS * DAY / 3600.0
    before = (len(jobs), offered(jobs))
    jobs = thin(rng, jobs, args.max_jobs, args.target_load * capacity)
    write_csv(args.out, jobs)
    report(start, window, before, jobs, mapping, by_vc, capacity)
    return 0


def write_csv(path, jobs):
    cols = ["name", "queue", "submit_s", "duration_s", "pods", "min_member",
            "cpu_milli", "memory_mib", "gpu", "gpu_milli", "priority", "type",
            "preemptible"]
    with open(path, "w", newline="") as f:
        f.write("# Derived from the Microsoft Philly trace (2017), as prepared by "
                "the Pollux artifact,\n# by tools/derive_demo.py; see "
                "examples/demo/README.md.\n")
        w = csv.writer(f, lineterminator="\n")
        w.writerow(cols)
        for j in jobs:
            pods, per, cpu, mem = shape(j["type"], j["gpus_total"])
            name = "%s-%s-%05d" % (j["type"], j["vc"], j["n"])
            # at least 1 s: a duration of 0 would mean "runs to the end"
            w.writerow([name, j["queue"], "%.0f" % j["submit_s"],
                        "%.0f" % max(1, j["duration_s"]), pods, 0, cpu, mem, per, 0,
                        PRIORITY[j["type"]], j["type"], PREEMPTIBLE[j["type"]]])


def report(start, window, before, jobs, mapping, by_vc, capacity):
    day = datetime.datetime.fromtimestamp(start, datetime.timezone.utc)
    print("window: %s UTC + 24 h, %d Philly jobs, %.0f GPU-hours offered"
          % (day.strftime("%Y-%m-%d %H:%M"), len(window), before[1]))
    for vc in sorted(by_vc, key=lambda v: -by_vc[v]):
        print("  vc %s -> %-8s %8.0f GPU-h" % (vc, mapping[vc], by_vc[vc]))
    load = offered(jobs)
    print("kept %d of %d jobs; offered %.0f GPU-hours vs capacity %.0f "
          "(512 GPUs x 24 h): %.1f%%"
          % (len(jobs), before[0], load, capacity, 100 * load / capacity))
    for kind in ("train", "inference", "interactive"):
        sel = [j for j in jobs if j["type"] == kind]
        print("  %-11s %5d jobs %8.0f GPU-h" % (kind, len(sel), offered(sel)))
    for team, _ in TEAMS:
        sel = [j for j in jobs if j["queue"] == team]
        print("  %-11s %5d jobs %8.0f GPU-h" % (team, len(sel), offered(sel)))
    carried = sum(1 for j in jobs if j["carried"])
    tail = sum(j["gpus_total"] * j["duration_s"] for j in jobs) / 3600.0
    peak = max(sum(j["gpus_total"] for j in jobs
                   if j["submit_s"] <= t < j["submit_s"] + j["duration_s"])
               for t in range(0, DAY, 900))
    print("  %d jobs already running at 0; %.0f GPU-hours including work "
          "past the day; peak demand %d GPUs" % (carried, tail, peak))
    gangs = sum(1 for j in jobs if j["gpus_total"] > 8)
    print("  gangs over 8 GPUs: %d, largest %d GPUs"
          % (gangs, max(j["gpus_total"] for j in jobs)))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
