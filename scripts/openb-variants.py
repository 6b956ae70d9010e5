#!/usr/bin/env python3
"""openb-variants.py - synthetic openb pod lists built from `default`.

The openb variants of the FGD paper (alibaba/clusterdata,
cluster-trace-gpu-v2023/README.md: "sampled from the default one,
emphasizing certain types of workloads"; gpuspec ones "augment tasks with
GPU type requirements") can be told apart by what they keep of `default`
(see docs/evaluation.md, "Synthetic variants"):

  gpushareN  the GPU pods are redrawn so that GPU-sharing pods make N% of
             the GPU request; the number of GPU pods and the CPU-only pods
             stay (gpushare40: 4,001 shares and 3,063 other GPU pods).
  multigpuN  multi-GPU pods are added (drawn from default's) until they make
             N% of the GPU request; everything else stays (multigpu30: 431
             multi-GPU pods instead of 75, 8,508 pods).  N = 100 keeps only
             multi-GPU pods as GPU pods, with default's GPU request.
  gpuspecN   N% of the GPU pods get a GPU-model constraint, drawn from the
             constraints gpuspec10 uses (separately for shares and for
             whole GPUs); the pods are default's.
  cpuNNN     CPU-only pods are redrawn to make NNN/10 % of the pods; the
             GPU pods stay (cpu050: 375 CPU-only pods, 7,439 pods).

Pods are drawn without replacement while the source has enough, then with
replacement; duplicates get a "-dK" suffix.  Python's random.Random(seed)
makes it reproducible.  Standard library only.

Usage: openb-variants.py DEFAULT_CSV OUT_DIR [--seed N] [--only NAME,...]
Writes OUT_DIR/openb_pod_list_<variant>.csv for each variant.
"""
import csv
import os
import random
import sys

# (share?, constraint) -> pods in gpuspec10 (awk over its gpu_spec column).
SPECS = {
    False: [("T4", 192), ("G2", 120), ("V100M16|V100M32", 55),
            ("P100|V100M16|V100M32", 26), ("G3", 17),
            ("G2|P100|T4|V100M16|V100M32", 11),
            ("A10|G2|T4|V100M16|V100M32", 9), ("V100M16|V100M32|V100M32", 6),
            ("P100|V100M16", 6), ("P100|T4|V100M16|V100M32", 5),
            ("V100M32", 4), ("V100M16", 4),
            ("A10|G2|P100|T4|V100M16|V100M32|V100M32", 3), ("P100", 2),
            ("T4|V100M16|V100M32", 1), ("A10|T4", 1)],
    True: [("T4", 163), ("P100", 98), ("G2|P100|T4|V100M16|V100M32", 9)],
}

VARIANTS = (["gpushare%d" % n for n in (20, 40, 60, 80, 100)] +
            ["multigpu%d" % n for n in (20, 30, 40, 50, 100)] +
            ["gpuspec%d" % n for n in (10, 20, 25, 33, 50, 100)] +
            ["cpu%03d" % n for n in (0, 25, 50, 100, 200, 250, 500)])


def gpus(p):
    return int(p["num_gpu"])


def demand(p):
    """GPU request in milli-GPU, as the paper's simulator counts it."""
    g = gpus(p)
    return int(p["gpu_milli"]) if g == 1 else 1000 * g


def is_share(p):
    return gpus(p) == 1 and int(p["gpu_milli"]) < 1000


def draw(rng, pool, n):
    """n pods from pool: a random subset while pool has enough, then all of
    pool plus draws with replacement."""
    if n <= len(pool):
        return rng.sample(pool, n)
    out = list(pool)
    out += [rng.choice(pool) for _ in range(n - len(pool))]
    rng.shuffle(out)
    return out


def gpushare(rng, pods, pct):
    cpu = [p for p in pods if gpus(p) == 0]
    share = [p for p in pods if is_share(p)]
    whole = [p for p in pods if gpus(p) > 0 and not is_share(p)]
    g = len(share) + len(whole)
    ms = sum(map(demand, share)) / len(share)
    mw = sum(map(demand, whole)) / len(whole)
    x = pct / 100.0
    # ns ms / (ns ms + (g - ns) mw) = x
    ns = g if x >= 1 else round(x * g * mw / (ms * (1 - x) + x * mw))
    return cpu + draw(rng, share, ns) + draw(rng, whole, g - ns)


def multigpu(rng, pods, pct):
    multi = [p for p in pods if gpus(p) > 1]
    rest = [p for p in pods if gpus(p) <= 1]
    total = sum(map(demand, pods))
    if pct >= 100:
        out = [p for p in pods if gpus(p) == 0]
        while sum(map(demand, out)) < total:
            out.append(rng.choice(multi))
        return out
    other = sum(map(demand, rest))
    want = pct / 100.0 * other / (1 - pct / 100.0)  # multi-GPU milli wanted
    out = rng.sample(multi, len(multi))
    while sum(map(demand, out)) > want and out:
        out.pop()
    while sum(map(demand, out)) < want:
        out.append(rng.choice(multi))
    return rest + out


def gpuspec(rng, pods, pct):
    out = [dict(p) for p in pods]
    gpu = [p for p in out if gpus(p) > 0]
    for p in rng.sample(gpu, round(pct / 100.0 * len(gpu))):
        table = SPECS[is_share(p)]
        p["gpu_spec"] = rng.choices([s for s, _ in table],
                                    [w for _, w in table])[0]
    return out


def cpuonly(rng, pods, permille):
    cpu = [p for p in pods if gpus(p) == 0]
    gpu = [p for p in pods if gpus(p) > 0]
    x = permille / 1000.0
    return gpu + draw(rng, cpu, round(x * len(gpu) / (1 - x)))


def build(rng, pods, name):
    for prefix, fn in (("gpushare", gpushare), ("multigpu", multigpu),
                       ("gpuspec", gpuspec), ("cpu", cpuonly)):
        if name.startswith(prefix):
            return fn(rng, pods, int(name[len(prefix):]))
    raise ValueError("unknown variant %r (known: %s)" % (name, ", ".join(VARIANTS)))


def write(path, fields, pods):
    seen = {}
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        for p in pods:
            q = dict(p)
            k = seen.get(p["name"], 0)
            seen[p["name"]] = k + 1
            if k:
                q["name"] = "%s-d%d" % (p["name"], k)
            w.writerow(q)


def main(argv):
    args = [a for a in argv[1:]]
    seed, only = 42, None
    if "--seed" in args:
        i = args.index("--seed")
        seed = int(args[i + 1])
        del args[i:i + 2]
    if "--only" in args:
        i = args.index("--only")
        only = args[i + 1].split(",")
        del args[i:i + 2]
    if len(args) != 2:
        sys.stderr.write(__doc__)
        return 2
    src, out = args
    with open(src, newline="") as f:
        r = csv.DictReader(f)
        fields = r.fieldnames
        pods = list(r)
    need = {"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"}
    if not fields or not need.issubset(fields):
        sys.stderr.write("%s: expected the columns %s\n" % (src, ", ".join(sorted(need))))
        return 1
    if "gpu_spec" not in fields:
        fields = list(fields) + ["gpu_spec"]
    os.makedirs(out, exist_ok=True)
    for name in only or VARIANTS:
        try:
            pods_v = build(random.Random("%s/%d" % (name, seed)), pods, name)
        except ValueError as e:
            sys.stderr.write("%s\n" % e)
            return 2
        path = os.path.join(out, "openb_pod_list_%s.csv" % name)
        write(path, fields, pods_v)
        print("%s: %d pods" % (path, len(pods_v)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
