/*
 * eval_slurm.h - muster against Slurm, side by side (docs/evaluation.md,
 * "Slurm: the same jobs through both backfills").
 *
 * The workload is the Philly protocol's (eval_philly.h) on a short window:
 * the `hours` (whole-hour start) with the most multi-node gangs, ties to
 * the most jobs; durations capped, a cluster of 8-GPU nodes sized for the
 * offered load, arrival times scaled to make it exact.
 * Time is then compressed: `compress` trace seconds become one real second
 * (60: one trace minute per second).  Each job becomes `sbatch --wrap
 * "sleep T"` with its nodes and GPUs and a time limit of T rounded up to
 * whole minutes (Slurm keeps limits in minutes); muster's simulator runs the
 * same jobs on the same compressed clock with that limit as each job's
 * declared runtime estimate.
 *
 * A real Slurm runs on loopback in a temporary directory this code owns
 * (slurm_cluster.c): one slurmctld, one slurmd per node (`slurmd -N`), GPUs
 * as GRES on stand-in device files, sched/backfill with select/cons_tres
 * and priority/basic (first come, first served, as muster's one queue).
 * Every Slurm process is stopped on success, error and interrupt.
 *
 * The figures are computed the same way from both sides' per-job records
 * (submit, start, end, first estimated start), in trace time.
 */
#ifndef MUSTER_EVAL_SLURM_H
#define MUSTER_EVAL_SLURM_H

#include <stdio.h>

#include "muster/eval_philly.h"

#define MU_SLURM_NCLASSES 4  /* gang sizes: 1, 2-4, 5-8, more than 8 GPUs */
#define MU_SLURM_MAX_VARIANTS 6
#define MU_SLURM_MAX_NODES 64 /* slurmd processes this will start */

/* "1 GPU", "2-4 GPUs", "5-8 GPUs", ">8 GPUs (multi-node)"; NULL if out of
 * range. */
const char *mu_slurm_class_label(int c);
/* The class of a job of g GPUs. */
int mu_slurm_class_of(int64_t gpus);

typedef struct mu_slurm_opts {
	double hours;             /* trace window, hours (3) */
	double load;              /* offered load (0.9) */
	mu_time_t cap;            /* durations capped, trace ms (2 h) */
	int64_t from_s;           /* fixed window start, trace s; -1: the one
	                           * with the most multi-node gangs */
	double compress;          /* trace seconds per real second (60) */
	int32_t gpus_per_node;    /* 8 */
	mu_time_t checkpoint_cost; /* muster: work lost per move, trace ms (30 s) */
	/* SchedulerParameters of each Slurm run (bf_* variants); each string
	 * is the caller's. */
	const char *variants[MU_SLURM_MAX_VARIANTS];
	size_t nvariants;
	double poll_s;            /* squeue --start period, real s (1) */
	double timeout_s;         /* a Slurm run's hard limit, real s; 0 =
	                           * 3 x the expected span + 120 */
	const char *tmp_parent;   /* where the temporary directory goes
	                           * ($TMPDIR or /tmp when NULL) */
	bool keep;                /* keep the directory (logs) after the run */
	bool skip_slurm;          /* muster's side only */
	/* Progress: a line of text, rewritten in place on a terminal; may be
	 * NULL. */
	void (*progress)(void *ctx, const char *line, bool final);
	void *progress_ctx;
} mu_slurm_opts_t;

/* The defaults above, and 2 bf_* variants (bf_resolution 60 and 1, each
 * with bf_interval=1). */
void mu_slurm_opts_defaults(mu_slurm_opts_t *o);

/* One job as both schedulers get it, on the compressed clock. */
typedef struct mu_slurm_job {
	const char *name;         /* in the specs' memory */
	double submit_s;          /* real seconds after the run's start */
	double dur_s;             /* the sleep */
	int32_t gpus, nodes;
	int32_t limit_min;        /* Slurm time limit, whole minutes, >= 1 */
} mu_slurm_job_t;

/* One job's outcome under one scheduler, real seconds after the start;
 * -1 when unknown. */
typedef struct mu_slurm_rec {
	double submit_s, start_s, end_s;
	double est_s;             /* first expected start seen while pending */
	bool by_backfill;         /* Slurm said Scheduler=Backfill */
} mu_slurm_rec_t;

typedef struct mu_slurm_class {
	int64_t n, started;
	double mean_s, p50_s, p99_s;  /* waits, trace seconds */
} mu_slurm_class_t;

/* One scheduler's run, reduced.  Durations are trace seconds. */
typedef struct mu_slurm_side {
	char label[96];
	char params[160];         /* SchedulerParameters, or muster's settings */
	bool is_slurm;
	mu_slurm_rec_t *recs;     /* njobs, owned */
	int64_t completed;
	double util;              /* GPU utilization while jobs arrive */
	double util_run;          /* to the last end */
	double makespan_s;
	mu_slurm_class_t cls[MU_SLURM_NCLASSES], all;
	double jct_mean_s, jct_p50_s, jct_p99_s;
	int64_t out_of_order;     /* started while an earlier job waited */
	int64_t by_backfill;      /* Slurm's Scheduler=Backfill; -1 muster */
	int64_t est_n;            /* waiting jobs with an estimate */
	double est_p50_s, est_p90_s; /* |estimate - start| */
	double est_bias_s;        /* mean of estimate - start */
	double est_within;        /* share within 10 trace minutes */
	int64_t preemptions, moves;
	double wall_s;
} mu_slurm_side_t;

typedef struct mu_slurm_eval {
	mu_slurm_opts_t opts;
	const char *trace;        /* the caller's */
	mu_philly_window_t win;
	mu_slurm_job_t *jobs;     /* owned */
	size_t njobs;
	double span_s;            /* the arrival window, real s */
	char slurm_version[64];
	char slurm_conf[4096];    /* the last slurm.conf, for the report */
	mu_slurm_side_t sides[MU_SLURM_MAX_VARIANTS + 2];
	size_t nsides;
	int best_slurm;           /* index of the best Slurm side, or -1 */
	double wall_s;
} mu_slurm_eval_t;

/* Builds the workload from a whole Philly load (all must outlive ev's use
 * of sp) into sp (initialised by the caller, released by it) and ev->jobs.
 * MU_EINVAL with a message for an empty window, too many nodes or a bad
 * option; MU_ENOMEM. */
int mu_slurm_eval_init(mu_slurm_eval_t *ev, const mu_specs_t *all,
		       const mu_slurm_opts_t *o, mu_specs_t *sp, mu_diag_t *diag);
/* muster's two runs (default; and no preemption or moves) on sp. */
int mu_slurm_eval_muster(mu_slurm_eval_t *ev, mu_specs_t *sp, mu_diag_t *diag);
/* Every Slurm variant, one cluster each.  MU_ENOENT when a Slurm program
 * is missing, MU_ESTATE when Slurm failed or the run was interrupted (the
 * message says which); the processes are gone either way. */
int mu_slurm_eval_slurm(mu_slurm_eval_t *ev, mu_diag_t *diag);
void mu_slurm_eval_release(mu_slurm_eval_t *ev);

/* Reduces recs (njobs, in ev->jobs order) into side's figures; side->recs
 * must already be set.  Pure. */
void mu_slurm_reduce(const mu_slurm_eval_t *ev, mu_slurm_side_t *side);

/* Whether Slurm's programs are on PATH: NULL when they are, else the
 * first one missing (a static string). */
const char *mu_slurm_missing(void);

/* Writers: the protocol as text (before the runs), the tables as text,
 * and a self-contained HTML page.  MU_EIO when writing fails. */
int mu_slurm_write_text_protocol(const mu_slurm_eval_t *ev, FILE *f);
int mu_slurm_write_text_tables(const mu_slurm_eval_t *ev, FILE *f);
int mu_slurm_write_html(const mu_slurm_eval_t *ev, FILE *f);

/* --- Parsing Slurm's output (slurm_parse.c), for the run and the fuzzer - */

/* "2026-11-25T18:30:08" as local time, into *t (epoch seconds).
 * MU_EPARSE for anything else ("N/A", "Unknown"). */
int mu_slurm_parse_time(const char *s, size_t n, int64_t *t);
/* The value of KEY= in a line of space-separated KEY=VALUE fields (the job
 * completion log and `scontrol -o show job`): *v and *n point into line.
 * MU_ENOENT when absent. */
int mu_slurm_field(const char *line, size_t len, const char *key,
		   const char **v, size_t *n);
/* One job record line: its id, submit, start and end (epoch s, -1 when
 * not set), and whether Scheduler=Backfill.  MU_EPARSE without a JobId. */
typedef struct mu_slurm_line {
	int64_t id;
	int64_t submit, start, end;
	bool backfill;
	bool completed;           /* JobState=COMPLETED */
} mu_slurm_line_t;
int mu_slurm_parse_line(const char *line, size_t len, mu_slurm_line_t *out);

#endif
