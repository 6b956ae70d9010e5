/*
 * bench.h - `muster bench`: the engine's speed and memory at scale.
 *
 * Each benchmark shape builds a cluster and a workload in memory through the
 * public engine API only, times the engine with the thread's CPU clock (the
 * machines are shared: wall time would measure the neighbours) and fills
 * result records: decisions per second, p50 and p99 per decision, peak RSS,
 * plus the shape's own figures.  Shapes (docs/evaluation.md, "Speed and
 * memory"):
 *
 *   basic          5,000 nodes (4 CPU, 32 Gi), 50,000 one-pod jobs of 100m
 *                  and 500 Mi, one cycle per pod
 *   basic-mixed    5,000 openb-shaped nodes, pods sampled from openb until
 *                  their GPU request equals the cluster's GPUs
 *   gang-topology  5,000 8-GPU nodes in racks of 32 and blocks of 512;
 *                  gangs of 8 to 512 pods with a required rack or block
 *                  (one record per gang size)
 *   preempt        runs bench/bench_preempt (its "preempt" shape)
 *   cycle          4,000 nodes, 140,000 pods of which 20,000 pending in 50
 *                  queues: build time, and cycle time when little changed
 *   scale          10,000 nodes and 150,000 pods: peak RSS
 *   scaling        the cycle shape at 1k, 2k, 5k, 10k and 20k nodes (one
 *                  record per size)
 *   fleet          100 clusters of 1,000 8-GPU nodes (src/fleet), 1,000,000
 *                  jobs queued on the hub: dispatch decisions per second in
 *                  the first pass, refill passes after 1% of jobs end, and
 *                  the hub's peak RSS
 *
 * Results travel as JSON lines (mu_bench_json / mu_bench_parse), so that a
 * shape can run in a forked child (its own peak RSS) or in another program.
 */
#ifndef MUSTER_BENCH_H
#define MUSTER_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct mu_bench_opts {
	bool quick;              /* small sizes: seconds, for tests */
	bool isolate;            /* run each shape in a forked child, so
	                          * that peak_rss_mb is the shape's own */
	const char *data_dir;    /* holds openb/...; NULL or missing: the
	                          * built-in openb-like shapes */
	const char *preempt_bin; /* bench_preempt; NULL or missing: the
	                          * preempt shape is reported as skipped */
	uint64_t seed;
} mu_bench_opts_t;

/* Defaults: full sizes, isolated, data in ../shared/data, no
 * bench_preempt, seed 1. */
void mu_bench_opts_defaults(mu_bench_opts_t *o);

/* One measured figure set.  Doubles that do not apply are NaN, integers
 * -1, strings empty; the JSON writer leaves those keys out. */
typedef struct mu_bench_result {
	char shape[24];
	int32_t nodes;
	int64_t pods;            /* pods in the cluster or the stream */
	double decisions_per_s;
	double p50_us, p99_us;   /* per decision (cycle, gang, pod) */
	double peak_rss_mb;
	int64_t decisions;       /* timed decisions */
	int64_t placed;          /* of those, the ones that placed */
	char source[16];         /* basic-mixed: "openb" or "builtin" */
	char level[16];          /* gang-topology: "rack" or "block" */
	char skipped[96];        /* why the shape did not run */
	int32_t gang_pods;       /* gang-topology */
	int32_t queues;          /* cycle, scale, scaling */
	int64_t pending;         /* pods pending after the build */
	int64_t preemptors;      /* preempt */
	int64_t evicted;
	double p50_wall_us;      /* preempt: bench_preempt's wall-clock */
	double p99_wall_us;      /* percentiles (p50_us, p99_us: CPU) */
	double p50_cpu_us;       /* read from bench_preempt, then moved */
	double p99_cpu_us;       /* into p50_us and p99_us */
	double submit_us;        /* mean time to submit one job */
	double build_ms;         /* cycle: the whole state from scratch */
	double build_place_ms;   /* ... of which placing the running pods */
	double cold_cycle_ms;    /* first cycle: every pending job tried */
	double idle_cycle_ms;    /* median cycle with nothing changed */
	double cycle_ms;         /* median cycle after one finish + submit */
	double cycle_p99_ms;
} mu_bench_result_t;

/* A growable list of results, owned by the caller. */
typedef struct mu_bench_results {
	mu_bench_result_t *v;
	size_t n, cap;
} mu_bench_results_t;

void mu_bench_results_init(mu_bench_results_t *rs);
void mu_bench_results_release(mu_bench_results_t *rs);
/* Appends a cleared record (mu_bench_result_clear) named shape; NULL on
 * OOM. */
mu_bench_result_t *mu_bench_results_add(mu_bench_results_t *rs,
					const char *shape);
/* Sets every figure to "does not apply" and the shape name. */
void mu_bench_result_clear(mu_bench_result_t *r, const char *shape);

/* The shape names in running order; *n gets how many. */
const char *const *mu_bench_shapes(size_t *n);
/* Whether name is a shape. */
bool mu_bench_shape_known(const char *name);

/* Runs one shape and appends its records to out (in a child process when
 * o->isolate).  MU_ENOENT for an unknown shape, MU_EIO when a child or
 * bench_preempt failed, MU_ENOMEM.  Work: the shape's (seconds to minutes
 * at full size). */
int mu_bench_run(const char *shape, const mu_bench_opts_t *o,
		 mu_bench_results_t *out);

/* Writes r as one JSON object on one line (with the newline). */
void mu_bench_json(FILE *f, const mu_bench_result_t *r);
/* Parses one line of mu_bench_json or bench_preempt output into r
 * (cleared first; unknown keys are ignored).  MU_EPARSE if it is not a
 * JSON object with a "shape" string. */
int mu_bench_parse(const char *line, mu_bench_result_t *r);

/* A target of the issue a record can be checked against. */
typedef struct mu_bench_check {
	const char *what;    /* "decisions/s", "p99", "cycle", ... */
	double value, target;
	bool at_most;        /* value <= target is met; else >= */
	const char *unit;    /* "/s", "us", "ms", "MiB" */
	const char *versus;  /* the published figure it compares with */
} mu_bench_check_t;

/* The checks that apply to r, at most max, into out; returns how many.
 * Quick runs are checked against the same targets (and miss them). */
size_t mu_bench_checks(const mu_bench_result_t *r, mu_bench_check_t *out,
		       size_t max);
/* Whether a check is met. */
bool mu_bench_check_met(const mu_bench_check_t *c);

/* Writes a self-contained HTML page: every figure with its target and
 * OK / MISSED, and the plot of build and cycle time against nodes from the
 * scaling records.  Returns MU_EIO on a write error. */
int mu_bench_report_html(FILE *f, const mu_bench_results_t *rs, bool quick);

#endif
