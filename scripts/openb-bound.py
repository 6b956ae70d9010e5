#!/usr/bin/env python3
"""openb-bound.py - a proven upper bound on what ANY policy can allocate in
`muster eval openb` at the end of a run (so also at x = 130).

`muster eval openb` (src/eval/eval_openb.c) shuffles the pod list per seed
and extends it to TUNE x the cluster's GPUs; pods arrive one at a time,
never leave, and a pod is placed whenever *some* node can take it (a policy
only chooses where).  This script rebuilds the same arrival order
(mu_eval_arrivals(): splitmix64, Fisher-Yates, draws with replacement) and
bounds the GPU capacity every policy must leave unused:

1. A pod is *certainly placed* if, whatever the earlier pods did, some node
   can still take it.  Earlier pods j < k have touched at most D = sum of
   their devices (num_gpu, 1 for a share), used C cores, M memory and k
   pods.  A node the pod could use when empty (GPU model allowed, enough
   CPU and memory) is out only if all its G devices are touched (a touched
   device counts as full, the worst case), or more than cpu - c cores, more
   than mem - m memory or all 1,024 pod slots are used.  With D the earlier
   pods can put out at most the q cheapest nodes whose G sum to <= D; the
   same for C, M and the pods.  If these four counts add up to fewer than
   the nodes the pod could use, one is left, and the pod is placed.
2. A share s > 500 milli-GPU sits alone among the shares > 500 on its
   device, so each certainly placed one leaves a gap 1000 - s that only
   shares smaller than the gap can fill.  For every h, the gaps smaller
   than h can be filled by no more than all arrived shares smaller than h;
   so at least  max_h [ sum of gaps < h  -  sum of arrived shares < h ]
   milli-GPU stay free.
3. Allocation never falls (pods never leave), so the figure at x = 130 (the
   mean of the records near the end) is at most the final one:
   bound = 100 x (GPUs x 1000 - waste) / (GPUs x 1000).

Each step only ever over-states what a policy could use, so the bound is
loose: it says how much room above FGD there can be, not that a policy can
reach it.  Standard library only; the nodes and pods are the openb CSVs
that `muster eval openb --nodes/--pods` read (docs/evaluation.md).

Usage: openb-bound.py NODES_CSV PODS_CSV [--seeds A-B | --seed N] [--tune X]
Prints one line per seed ("seed N: bound B% (...; K arrivals)", K as
`muster eval openb --json` counts them in pods.arrived) and the mean.
"""
import bisect
import csv
import math
import sys

POD_SLOTS = 1024  # pods per openb node (LC_NODE_PODS in src/load/load_csv.c)
MASK = (1 << 64) - 1


class InputError(Exception):
    pass


def read_rows(path, need):
    """Rows of an openb CSV as dicts; InputError naming the file and
    column for a missing column or a bad number."""
    try:
        f = open(path, newline="")
    except OSError as e:
        raise InputError("%s: %s" % (path, e.strerror))
    with f:
        r = csv.DictReader(f)
        miss = [c for c in need if c not in (r.fieldnames or [])]
        if miss:
            raise InputError("%s: no column \"%s\"" % (path, miss[0]))
        rows = []
        for i, row in enumerate(r, 2):
            for c in need:
                if c in ("model", "gpu_spec"):
                    continue
                try:
                    v = int(row[c])
                except (TypeError, ValueError):
                    raise InputError("%s line %d: column \"%s\": expected "
                                     "an integer, got %r" %
                                     (path, i, c, row[c]))
                if v < 0:
                    raise InputError("%s line %d: column \"%s\": negative"
                                     % (path, i, c))
                row[c] = v
            rows.append(row)
    return rows


def load(nodes_csv, pods_csv):
    nodes = [(n["cpu_milli"], n["memory_mib"], n["gpu"], n["model"] or "")
             for n in read_rows(nodes_csv,
                                ("cpu_milli", "memory_mib", "gpu", "model"))]
    pods = []
    for p in read_rows(pods_csv, ("cpu_milli", "memory_mib", "num_gpu",
                                  "gpu_milli")):
        g, milli = p["num_gpu"], p["gpu_milli"]
        if milli > 1000:
            raise InputError("%s: column \"gpu_milli\": above 1000" % pods_csv)
        share = milli if g == 1 and milli < 1000 else 0
        demand = share if share else 1000 * g
        touch = 1 if share else g
        spec = frozenset(m for m in (p.get("gpu_spec") or "").split("|") if m)
        pods.append((p["cpu_milli"], p["memory_mib"], touch, share, demand,
                     spec))
    gpus = sum(n[2] for n in nodes)
    if gpus <= 0:
        raise InputError("%s: the cluster has no GPUs" % nodes_csv)
    if not any(p[4] for p in pods):
        raise InputError("%s: no pod asks for a GPU" % pods_csv)
    return nodes, pods, gpus


def arrivals(npods, gpus, demands, seed, tune):
    """mu_eval_arrivals(): the pod indices in arrival order."""
    state = [seed & MASK]

    def below(n):
        state[0] = (state[0] + 0x9e3779b97f4a7c15) & MASK
        z = state[0]
        z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & MASK
        z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & MASK
        z ^= z >> 31
        i = int(float(z >> 11) * 2.0 ** -53 * n)
        return i if i < n else n - 1

    v = list(range(npods))
    for i in range(npods - 1, 0, -1):
        j = below(i + 1)
        v[i], v[j] = v[j], v[i]
    target = math.ceil(tune * gpus * 1000.0 - 1e-6)
    out, total = [], 0
    while total < target:
        k = v[len(out)] if len(out) < npods else below(npods)
        out.append(k)
        total += demands[k]
    return out


class Shape:
    """The certificate of step 1 for the pods of one shape (CPU, memory,
    allowed models).  Put-out costs of a node it could use when empty, per
    resource r: G devices, cpu - c + 1 cores, mem - m + 1 MiB, 1,024 pods.
    Say the earlier pods are split into groups P_r, a node put out by r
    getting pods of P_r only (a node's pods sit on it alone, so a pod helps
    put out one node by one resource).  With B_r the use of r by P_r, at
    most K_r(B_r) nodes are out by r, K_r the count of the cheapest nodes
    whose costs sum to <= B_r, which lies under its concave hull.  For any
    prices l_r >= 0:
        out <= sum_r sup_B (K_r(B) - l_r B) + sum_j max_r l_r use(j, r)
    (the first term is q - l_r x (sum of the q costs below 1/l_r)).  If
    some l makes this less than the nodes the pod could use, one is left.
    Any l is a proof; placed() searches l coordinate by coordinate."""

    def __init__(self, nodes, cpu, mem, spec):
        use = [n for n in nodes if n[2] > 0 and n[0] >= cpu and n[1] >= mem
               and (not spec or n[3] in spec)]
        self.n = len(use)
        self.costs, self.sums = [], []
        for cost in ([n[2] for n in use], [n[0] - cpu + 1 for n in use],
                     [n[1] - mem + 1 for n in use], [POD_SLOTS] * len(use)):
            cost.sort()
            acc, s = 0, [0]
            for c in cost:
                acc += c
                s.append(acc)
            self.costs.append(cost)
            self.sums.append(s)
        self.lam = [1.0 / c[len(c) // 2] if c else 1.0 for c in self.costs]

    def hull(self, r, lam):
        q = bisect.bisect_left(self.costs[r], 1.0 / lam)
        return q - lam * self.sums[r][q]

    def f(self, lam, classes):
        out = sum(self.hull(r, l) for r, l in enumerate(lam))
        for use, cnt in classes:
            out += cnt * max(l * u for l, u in zip(lam, use))
        return out

    def placed(self, classes):
        """True if the pods of classes [((devices, cpu, mem, 1), count)]
        cannot have put out every node this shape could use.  O(classes x
        120)."""
        if self.n == 0:
            return False
        lam = list(self.lam)
        best = self.f(lam, classes)
        for _ in range(3):
            for r in range(4):
                lo, hi = math.log(lam[r]) - 6.0, math.log(lam[r]) + 6.0
                for _ in range(24):  # golden section on log l_r
                    a = hi - 0.618 * (hi - lo)
                    b = lo + 0.618 * (hi - lo)
                    lam[r] = math.exp(a)
                    fa = self.f(lam, classes)
                    lam[r] = math.exp(b)
                    fb = self.f(lam, classes)
                    if fa < fb:
                        hi = b
                    else:
                        lo = a
                lam[r] = math.exp((lo + hi) / 2)
                v = self.f(lam, classes)
                if v < best:
                    best = v
                if best < self.n:
                    self.lam = lam
                    return True
        return False


def bound(nodes, pods, gpus, seed, tune):
    """(bound %, waste milli, certain big shares, big shares arrived,
    arrivals)."""
    order = arrivals(len(pods), gpus, [p[4] for p in pods], seed, tune)
    # per shape of big share: arrivals, and the last certainly placed one
    # (a binary search: more earlier pods never make a proof easier)
    where = {}
    for k, i in enumerate(order):
        c, m, _, share, _, spec = pods[i]
        if share > 500:
            where.setdefault((c, m, spec, share), []).append(k)
    use = [(p[2], p[0], p[1], 1) for p in pods]

    def classes(k):
        cnt = {}
        for i in order[:k]:
            cnt[use[i]] = cnt.get(use[i], 0) + 1
        return list(cnt.items())

    gaps = []
    for key, ks in where.items():
        sh = Shape(nodes, *key[:3])
        lo, hi = 0, len(ks)  # the first lo arrivals of the shape are proved
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if sh.placed(classes(ks[mid - 1])):
                lo = mid
            else:
                hi = mid - 1
        gaps += [1000 - key[3]] * lo
    small = [pods[i][3] for i in order if 0 < pods[i][3] <= 500]
    big = sum(len(ks) for ks in where.values())
    waste = 0
    for h in sorted(set(g + 1 for g in gaps)):
        w = sum(g for g in gaps if g < h) - sum(t for t in small if t < h)
        waste = max(waste, w)
    cap = gpus * 1000
    return 100.0 * (cap - waste) / cap, waste, len(gaps), big, len(order)


def parse_seeds(arg):
    try:
        if "-" in arg:
            a, b = arg.split("-", 1)
            a, b = int(a), int(b)
        else:
            a = b = int(arg)
    except ValueError:
        raise InputError("--seeds: expected N or A-B, got %r" % arg)
    if a < 0 or b < a:
        raise InputError("--seeds: expected 0 <= A <= B, got %r" % arg)
    return range(a, b + 1)


def main(argv):
    args, seeds, tune = [], range(42, 43), 1.3
    it = iter(argv)
    try:
        for a in it:
            if a in ("--seeds", "--seed"):
                seeds = parse_seeds(next(it))
            elif a == "--tune":
                try:
                    tune = float(next(it))
                except ValueError:
                    raise InputError("--tune: expected a number")
                if not 0 < tune <= 100:
                    raise InputError("--tune: expected 0 < X <= 100")
            elif a in ("-h", "--help"):
                print(__doc__.strip())
                return 0
            elif a.startswith("-"):
                raise InputError("unknown option %s" % a)
            else:
                args.append(a)
    except StopIteration:
        print("openb-bound.py: %s needs a value" % a, file=sys.stderr)
        return 2
    except InputError as e:
        print("openb-bound.py: %s" % e, file=sys.stderr)
        return 2
    if len(args) != 2:
        print("usage: openb-bound.py NODES_CSV PODS_CSV [--seeds A-B] "
              "[--tune X]", file=sys.stderr)
        return 2
    try:
        nodes, pods, gpus = load(*args)
    except InputError as e:
        print("openb-bound.py: %s" % e, file=sys.stderr)
        return 2
    got = []
    for s in seeds:
        b, waste, cert, big, n = bound(nodes, pods, gpus, s, tune)
        got.append(b)
        print("seed %d: bound %.2f%% (at least %.1f GPUs free: %d of %d "
              "shares > 500 milli-GPU certainly placed; %d arrivals)" %
              (s, b, waste / 1000.0, cert, big, n))
    print("mean: bound %.2f%% over %d seed(s)" % (sum(got) / len(got),
                                                  len(got)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
