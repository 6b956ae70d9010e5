/*
 * eval_philly.h - two evaluations of muster's job ordering and backfill on
 * the Microsoft Philly trace (docs/evaluation.md, "Philly: backfill and
 * JCT").
 *
 * The protocol: from the whole trace, the window of `days` days (starting
 * on a whole hour) whose arrivals carry the most GPU-time, with every
 * duration capped at `cap`; its jobs, all in one queue; a cluster of
 * 8-GPU nodes sized so that the offered load, sum(GPUs x duration) over
 * (window x cluster GPUs), is `load`; the arrival times then scaled by one
 * factor (within a percent or so of 1) so that the load is exact despite
 * whole nodes.  Each policy runs that workload in the simulator to the end
 * of the last job.
 *
 * Experiment 1 (backfill and large jobs): FIFO, priority order without
 * reservations, EASY backfill and muster's default, each with runtime
 * estimates from history and with jobs declaring their true duration.
 * Experiment 2 (JCT): FIFO, shortest job first with known durations (a
 * bound), Tiresias-style least attained service, muster's default and
 * muster with arrival order in the queue (its default before issue 21);
 * and the trade-off curve of muster's JCT levels.
 *
 * Everything here is deterministic for a seed and does no I/O except the
 * writers.
 */
#ifndef MUSTER_EVAL_PHILLY_H
#define MUSTER_EVAL_PHILLY_H

#include <stdio.h>

#include "muster/sim.h"

#define MU_PHILLY_LARGE_GPUS 16 /* a "large" job asks for at least this */
#define MU_PHILLY_NRUNS 11      /* runs of one evaluation */
#define MU_PHILLY_NSWEEP 6      /* runs of the JCT trade-off curve */

/* The curve's knob: muster's default with its JCT levels starting at these
 * GPU-hours (jct_base_gpu_hours), from JCT-first to arrival order. */
extern const double mu_philly_sweep_bases[MU_PHILLY_NSWEEP];

/* The policies compared, and how each one maps to an engine config. */
typedef enum mu_philly_policy {
	MU_PHILLY_FIFO = 0,     /* strict arrival order (backfill none) */
	MU_PHILLY_GREEDY = 1,   /* priority order, anything that fits starts */
	MU_PHILLY_EASY = 2,     /* EASY: one reservation, no consolidation */
	MU_PHILLY_MUSTER = 3,   /* mu_engine_config_defaults() */
	MU_PHILLY_SJF = 4,      /* shortest estimate first, greedy */
	MU_PHILLY_TIRESIAS = 5, /* least attained service, preempting, greedy */
	MU_PHILLY_ARRIVAL = 6,  /* muster's default before issue 21: arrival
	                         * order in the queue (order priority) */
	MU_PHILLY_NPOLICIES
} mu_philly_policy_t;

/* "fifo", "greedy", "easy", "muster", "sjf", "tiresias",
 * "muster-arrival"; NULL if out of range. */
const char *mu_philly_policy_name(mu_philly_policy_t p);
/* For tables: "FIFO", "priority, no reservations", ...; NULL if out of
 * range. */
const char *mu_philly_policy_label(mu_philly_policy_t p);
/* The engine config of policy p: the defaults with the policy's changes
 * (see eval_philly.c).  MU_EINVAL for an unknown policy. */
int mu_philly_policy_config(mu_philly_policy_t p, mu_engine_config_t *cfg);

typedef struct mu_philly_opts {
	double days;              /* window length in days (7) */
	double load;              /* target offered load (0.9) */
	mu_time_t cap;            /* durations capped at this, ms (48 h);
	                           * 0 = no cap */
	mu_time_t step;           /* window starts are multiples of this (1 h) */
	int64_t from_s;           /* a fixed window start, seconds after the
	                           * trace's first row; -1 = the busiest (-1) */
	mu_time_t checkpoint_cost; /* work a suspended or moved job loses (30 s) */
	int32_t gpus_per_node;    /* GPUs per node; the trace is loaded with
	                           * the same split (8) */
	uint64_t seed;            /* simulation seed (1) */
	/* Called now and then: run i of n (label) is frac done; may be NULL. */
	void (*progress)(void *ctx, size_t i, size_t n, const char *label,
			 double frac);
	void *progress_ctx;
} mu_philly_opts_t;

void mu_philly_opts_defaults(mu_philly_opts_t *o);
/* The --quick protocol: a 6-hour window with durations capped at 6 hours. */
void mu_philly_opts_quick(mu_philly_opts_t *o);

/* --- Window and cluster ---------------------------------------------------- */

/* The window's start: the multiple of step, from 0 to the last submit
 * minus span (0 when the trace is shorter), whose jobs submitted in
 * [start, start + span) have the most GPU-ms, each job's duration capped
 * at cap (0: none).  The earliest such start wins ties.  Jobs are those of
 * a Philly load (submit in ms after the trace's first row), in any order.
 * *work gets that window's GPU-ms.  MU_EINVAL for span or step <= 0,
 * MU_ENOMEM.  O(jobs log jobs + trace length / step). */
int mu_philly_pick(const mu_specs_t *all, mu_time_t span, mu_time_t step,
		   mu_time_t cap, mu_time_t *start, int64_t *work);

/* Sizing: the nodes of gpn GPUs that bring work (GPU-ms) offered over span
 * (ms) closest to `load` (at least min_nodes and 1), and the factor by which
 * arrival times must be multiplied so that the load is exactly `load`:
 * work / (span x factor x nodes x gpn) = load.  With no work the factor
 * is 1.  Pure arithmetic. */
void mu_philly_size(int64_t work, mu_time_t span, double load, int32_t gpn,
		    int32_t min_nodes, int32_t *nodes, double *scale);

/* What the protocol chose. */
typedef struct mu_philly_window {
	int64_t from_s, to_s;     /* trace seconds after its first row */
	int64_t jobs;             /* submitted in the window */
	int64_t capped;           /* of which durations were capped */
	int64_t large_jobs;       /* >= MU_PHILLY_LARGE_GPUS GPUs */
	int64_t one_gpu_jobs;
	int32_t max_gpus;         /* the largest job */
	int64_t work;             /* GPU-ms, capped durations */
	int64_t raw_work;         /* GPU-ms, durations as in the trace */
	int32_t nodes;
	int64_t gpus;             /* nodes x gpus_per_node */
	double offered_raw;       /* work / (window x gpus), before scaling */
	double scale;             /* the arrival-time factor applied */
	double offered;           /* after scaling: the target load */
	mu_time_t span;           /* the window after scaling, ms */
} mu_philly_window_t;

/* Builds the evaluation's specs into out (initialised by the caller) from
 * a whole Philly load `all`: the window (mu_philly_pick, or opts->from_s),
 * its jobs copied with submit times counted from the window's start and
 * scaled, durations capped, all in the queue "philly"; and the nodes
 * "gpu-NNN" (gpus_per_node GPUs, 8 CPUs and 64 GiB per GPU).  Fills w.
 * The jobs' names and pod sets stay in all's memory: all must outlive
 * out.
 * MU_EINVAL with a message when the window holds no job; MU_ENOMEM.
 * O(jobs). */
int mu_philly_build(const mu_specs_t *all, const mu_philly_opts_t *o,
		    mu_specs_t *out, mu_philly_window_t *w, mu_diag_t *diag);

/* --- Runs ------------------------------------------------------------------ */

/* The waits of one class of jobs. */
typedef struct mu_philly_class {
	int64_t n, started;       /* jobs; of them, started */
	double mean_s, p50_s, p99_s; /* waits of started jobs */
	double *waits;            /* started jobs' waits, ascending; owned */
	int64_t completed;
	double jct_mean_s;        /* over completed jobs */
} mu_philly_class_t;

typedef struct mu_philly_run {
	mu_philly_policy_t policy;
	bool declared;            /* jobs declared their duration as estimate */
	double util_window;       /* mean GPU utilization while jobs arrive */
	double util_run;          /* over the whole run (to the last end) */
	double makespan_s;
	int64_t jobs, completed;
	double wait_mean_s, wait_p99_s;
	double jct_mean_s, jct_p50_s, jct_p99_s;
	mu_philly_class_t large;  /* >= MU_PHILLY_LARGE_GPUS GPUs */
	mu_philly_class_t one;    /* 1 GPU */
	int64_t preemptions;      /* pods evicted */
	int64_t moves;            /* pods moved by consolidation */
	int64_t jobs_preempted;   /* jobs suspended at least once */
	int64_t cycles;
	double jct_base_gpu_hours; /* the engine's JCT levels (muster) */
	double engine_s;          /* wall time inside the engine */
	double wall_s;            /* wall time of the run */
} mu_philly_run_t;

/* Runs policy p on sp (built by mu_philly_build) after setting every job's
 * runtime_estimate to its duration (declared) or to none.  The caller
 * releases out with mu_philly_run_release(), also on error.
 * O(the simulation). */
int mu_philly_run(mu_specs_t *sp, const mu_philly_window_t *w,
		  const mu_philly_opts_t *o, mu_philly_policy_t p,
		  bool declared, mu_philly_run_t *out, mu_diag_t *diag);
void mu_philly_run_release(mu_philly_run_t *r);

/* --- The whole evaluation ---------------------------------------------------- */

/* Every run: FIFO, greedy, EASY and muster with history estimates, the
 * same four with declared durations, SJF (declared), Tiresias, and muster
 * with arrival order (its default before issue 21); then the trade-off
 * curve: muster at each base of mu_philly_sweep_bases. */
typedef struct mu_philly_eval {
	mu_philly_opts_t opts;
	const char *trace;        /* for the reports; the caller's */
	mu_philly_window_t win;
	mu_philly_run_t runs[MU_PHILLY_NRUNS];
	size_t nruns;             /* done so far */
	mu_philly_run_t sweep[MU_PHILLY_NSWEEP]; /* muster, history estimates,
	                           * at each of mu_philly_sweep_bases */
	size_t nsweep;
	double wall_s;
} mu_philly_eval_t;

/* Builds the workload from `all` and runs every policy.  The caller
 * releases ev with mu_philly_eval_release(), also on error. */
int mu_philly_eval(const mu_specs_t *all, const mu_philly_opts_t *o,
		   mu_philly_eval_t *ev, mu_diag_t *diag);
/* The same in two steps, so that the window can be shown before the runs:
 * init clears ev and builds the workload into sp (initialised by the
 * caller, released by it after the runs; `all` must outlive it); runs
 * does every run on it. */
int mu_philly_eval_init(mu_philly_eval_t *ev, const mu_specs_t *all,
			const mu_philly_opts_t *o, mu_specs_t *sp, mu_diag_t *diag);
int mu_philly_eval_runs(mu_philly_eval_t *ev, mu_specs_t *sp, mu_diag_t *diag);
void mu_philly_eval_release(mu_philly_eval_t *ev);

/* The run of (p, declared), or NULL when it was not run. */
const mu_philly_run_t *mu_philly_find(const mu_philly_eval_t *ev,
				      mu_philly_policy_t p, bool declared);

/* The rows of each experiment's table, as indices into ev->runs: the
 * backfill experiment (history estimates, then declared) and the JCT
 * experiment (FIFO, SJF, Tiresias, muster with arrival order, muster,
 * muster with declared durations).  Return the count. */
size_t mu_philly_backfill_rows(const mu_philly_eval_t *ev, size_t *rows,
			       size_t max);
size_t mu_philly_jct_rows(const mu_philly_eval_t *ev, size_t *rows, size_t max);

/* Writers: every figure as one JSON object, and a self-contained HTML page
 * (tables, a bar chart per metric, wait-time CDFs of large and 1-GPU
 * jobs).  MU_EIO when writing fails. */
int mu_philly_write_json(const mu_philly_eval_t *ev, FILE *f);
int mu_philly_write_html(const mu_philly_eval_t *ev, FILE *f);

#endif
