/*
 * eval_topo.h - `muster eval topology`: does topology-aware gang placement
 * pay off on a real Clos network?
 *
 * The network is Alibaba's Lingjun topology (a CSV of hosts and their DSW
 * core, PSW aggregation and ASW top-of-rack switches); the workload is the
 * multi-GPU jobs of the Philly trace with their real durations and arrivals
 * compressed to a target offered load.  Each policy runs the simulator on
 * the same cluster and jobs; a decision observer records where every gang
 * landed, and a slowdown hook makes a job that spans more switch tiers run
 * longer (the JCT model, mu_etopo_slowdown()).  Protocol and figures are in
 * docs/evaluation.md, "Topology on a real Clos network".
 *
 * Everything is deterministic for a seed and does no I/O except
 * mu_etopo_net_load() and the writers.
 */
#ifndef MUSTER_EVAL_TOPO_H
#define MUSTER_EVAL_TOPO_H

#include <stdio.h>

#include "muster/sim.h"

/* --- The network ----------------------------------------------------------- */

/* What a placement spans, innermost first. */
typedef enum mu_etopo_tier {
	MU_ETOPO_HOST = 0, /* one host */
	MU_ETOPO_TOR = 1,  /* one ToR switch (ASW) */
	MU_ETOPO_PSW = 2,  /* several ToRs under one aggregation group (PSW) */
	MU_ETOPO_DSW = 3,  /* several PSWs under one core (DSW) */
	MU_ETOPO_ANY = 4,  /* several cores */
	MU_ETOPO_NTIERS
} mu_etopo_tier_t;

/* "host", "tor", "psw", "dsw", "any"; "?" out of range. */
const char *mu_etopo_tier_name(mu_etopo_tier_t t);

/* The JCT model: a job whose pods span at most tier t runs this many times
 * its trace duration.  host 1.0, tor 1.0, psw 1.1, dsw 1.25, any 1.5. */
double mu_etopo_slowdown(mu_etopo_tier_t t);

#define MU_ETOPO_LEVELS 3 /* switch levels, outermost first: DSW, PSW, ASW */

/* The node label keys of the three levels, outermost first. */
extern const char *const mu_etopo_label_keys[MU_ETOPO_LEVELS];

typedef struct mu_etopo_host {
	const char *name;                /* the ip column */
	const char *sw[MU_ETOPO_LEVELS]; /* DSW, PSW, ASW names */
	/* Dense domain id per level.  A domain is a value path, as in the
	 * engine: ASW "S1" under PSW "P8" and "S1" under "P10" are two
	 * ToRs. */
	int32_t dom[MU_ETOPO_LEVELS];
} mu_etopo_host_t;

/* A Clos network read from CSV.  Owns its hosts and strings. */
typedef struct mu_etopo_net {
	mu_arena_t arena;
	mu_etopo_host_t *hosts;
	int32_t nhosts;
	int32_t ndoms[MU_ETOPO_LEVELS];     /* domains per level */
	int32_t max_hosts[MU_ETOPO_LEVELS]; /* hosts of the largest one */
	int32_t gpus_per_host;
} mu_etopo_net_t;

#define MU_ETOPO_MAX_HOSTS 1000000

/* Parses a topology CSV: the header "ip,DSW,PSW,ASW", then one host per
 * row with four names (1..253 of A-Z a-z 0-9 . _ -), each host once.
 * Every host gets gpus_per_host (1..64) GPUs.  MU_EPARSE with
 * "FILE:LINE: ..." in diag, MU_ELIMIT past MU_ETOPO_MAX_HOSTS, MU_EINVAL
 * for no hosts or a bad gpus_per_host, MU_ENOMEM.  Release net also after
 * an error.  O(rows). */
int mu_etopo_net_parse(const char *file, const char *buf, size_t len,
		       int32_t gpus_per_host, mu_etopo_net_t *net,
		       mu_diag_t *diag);
/* Reads the file and parses it. */
int mu_etopo_net_load(const char *path, int32_t gpus_per_host,
		      mu_etopo_net_t *net, mu_diag_t *diag);
void mu_etopo_net_release(mu_etopo_net_t *net);

/* The tightest feasible tier of a gang of `gpus` GPUs: the innermost tier
 * whose largest domain has that many GPUs (a host, a ToR, a PSW, a DSW),
 * else MU_ETOPO_ANY.  O(1). */
mu_etopo_tier_t mu_etopo_tightest(const mu_etopo_net_t *net, int64_t gpus);

/* Where a placement sits. */
typedef struct mu_etopo_span {
	int32_t hosts;        /* distinct hosts */
	int32_t tors;         /* distinct ToRs */
	mu_etopo_tier_t tier; /* the innermost tier that holds all of them */
} mu_etopo_span_t;

/* The span of pods on hosts[0..n) (host indices into net; a host may
 * repeat).  No pods: 0 hosts, 0 ToRs, MU_ETOPO_HOST.  MU_EINVAL for an
 * index out of range.  O(n^2): gangs are tens of pods. */
int mu_etopo_span(const mu_etopo_net_t *net, const int32_t *hosts, int32_t n,
		  mu_etopo_span_t *out);

/* --- Cluster and workload ---------------------------------------------------- */

typedef struct mu_etopo_opts {
	double load;         /* offered load on all GPUs (0.8) */
	uint64_t seed;       /* node order and the simulator (1) */
	int32_t min_gpus;    /* jobs asking for at least this many GPUs (2) */
	int64_t max_jobs;    /* the first this many of them; 0 = all (0) */
	int32_t gpus_per_host; /* (8) */
} mu_etopo_opts_t;

void mu_etopo_opts_defaults(mu_etopo_opts_t *o);

/* Appends one node per host of net to sp, in an order shuffled with seed:
 * net's GPUs, 128 CPUs, 1 TiB, 110 pods, and the labels lingjun/dsw,
 * lingjun/psw and lingjun/asw; then the topology "lingjun" with those
 * levels, outermost first.  Strings are copied into sp's arena.
 * O(hosts). */
int mu_etopo_cluster(const mu_etopo_net_t *net, uint64_t seed, mu_specs_t *sp);

typedef struct mu_etopo_workload {
	int64_t trace_jobs;   /* jobs in sp before filtering */
	int64_t jobs;         /* kept */
	int64_t gangs;        /* kept jobs of two pods or more */
	int64_t gang_gpus_max; /* GPUs of the largest job */
	double gpu_s;         /* GPU-seconds of their trace durations */
	double gang_gpu_s;    /* ... of the gangs */
	double trace_span_s;  /* first to last kept submit, trace time */
	double compress;      /* trace time per simulated time */
	double window_s;      /* first to last submit, simulated */
	double load;          /* offered: gpu_s / (GPUs x window_s), the
	                       * arrival rate x mean GPU-work over the GPUs */
	double window_load;   /* the share of the GPUs the jobs would hold on
	                       * average over the window if each started on
	                       * arrival: less, as long jobs run past it */
	double max_duration_s;
} mu_etopo_workload_t;

/* Turns the jobs in sp (the Philly trace as mu_load_file() reads it, pods
 * of gpus_per_host GPUs) into the workload: keeps the jobs of at least
 * o->min_gpus GPUs (the first o->max_jobs of them by submit time), puts
 * them in one queue "philly" (every other queue is dropped), and divides
 * their submit times, from the first kept one, by one factor so that
 * their GPU-seconds over the window of submits are o->load of net's GPUs.
 * Durations are kept.  MU_EINVAL with a message when fewer than two jobs
 * remain or the load is not positive.  O(jobs). */
int mu_etopo_workload(mu_specs_t *sp, const mu_etopo_net_t *net,
		      const mu_etopo_opts_t *o, mu_etopo_workload_t *w,
		      mu_diag_t *diag);

/* --- Policies and their runs ------------------------------------------------ */

typedef enum mu_etopo_policy {
	MU_ETOPO_BLIND_BINPACK = 0, /* no topology, binpack: the baseline */
	MU_ETOPO_BLIND_SPREAD = 1,  /* no topology, spread */
	MU_ETOPO_PREFERRED = 2,     /* binpack, preferred lingjun/asw */
	MU_ETOPO_REQUIRED = 3,      /* ... and gangs required within their
	                             * tightest feasible level */
	MU_ETOPO_NPOLICIES
} mu_etopo_policy_t;

/* "blind-binpack", "blind-spread", "muster-preferred", "muster-required";
 * "?" out of range. */
const char *mu_etopo_policy_name(mu_etopo_policy_t p);

#define MU_ETOPO_HIST 17 /* ToRs per gang: [k] for 1..15, [16] 16 or more */

/* Gang size classes by GPUs: up to 16, 32, 64, and more. */
#define MU_ETOPO_NSIZES 4

/* The class of a gang of `gpus` GPUs, and its name ("<=16", "17-32",
 * "33-64", ">64"; "?" out of range). */
int mu_etopo_size_class(int64_t gpus);
const char *mu_etopo_size_name(int c);

/* The gangs of one size class. */
typedef struct mu_etopo_size {
	int64_t gangs, within;  /* started; within their tightest level */
	double mean_tors;       /* NAN without gangs, as the means below */
	double mean_wait_s, mean_jct_s; /* of those that started, finished */
} mu_etopo_size_t;

typedef struct mu_etopo_result {
	mu_etopo_policy_t policy;
	int64_t jobs, started, completed;
	int64_t gangs;        /* multi-node gangs (two pods or more) started */
	int64_t within;       /* of them, within their tightest feasible tier */
	double within_share;  /* within / gangs; NAN without gangs */
	double mean_tors;     /* ToRs per gang; NAN without gangs */
	double mean_slowdown; /* of the gangs; NAN without gangs */
	int64_t tors_hist[MU_ETOPO_HIST];     /* [0] unused */
	int64_t tier_gangs[MU_ETOPO_NTIERS];  /* gangs by tier spanned */
	mu_etopo_size_t sizes[MU_ETOPO_NSIZES];
	double util;          /* GPU-time held in the window of submits over
	                       * all GPUs x the window */
	double util_useful;   /* ... each job's divided by its slowdown: the
	                       * share of the GPUs doing full-speed work */
	double util_run;      /* the simulator's: to the last event */
	double mean_jct_s, p99_jct_s, mean_wait_s, p99_wait_s; /* all jobs */
	double gang_jct_s, gang_p99_jct_s, gang_wait_s;        /* gangs */
	int64_t cycles;
	int64_t preemptions;  /* pods evicted (reservations falling due) */
	double engine_s;      /* wall time inside the engine */
	double makespan_s;
} mu_etopo_result_t;

/* Sets every job's topology request in sp for policy p (preferred
 * lingjun/asw for every job; with MU_ETOPO_REQUIRED, gangs also require
 * the label of their tightest feasible level), runs the simulator with the
 * engine's defaults but consolidation off (moves would change placements
 * after the fact), and reduces the run to out.  Gang placements are each
 * gang's first, read from the bind decisions; a job that is suspended and
 * restarts runs at the slowdown of its new placement.  sp needs the
 * cluster of mu_etopo_cluster() for net.  O(one simulation). */
int mu_etopo_run(mu_specs_t *sp, const mu_etopo_net_t *net,
		 mu_etopo_policy_t p, uint64_t seed, mu_etopo_result_t *out,
		 mu_diag_t *diag);

/* --- Writers ------------------------------------------------------------------ */

/* Everything an evaluation measured, for the writers. */
typedef struct mu_etopo_report {
	const char *topology_file, *trace_file;
	const mu_etopo_net_t *net;
	const mu_etopo_opts_t *opts;
	const mu_etopo_workload_t *work;
	const mu_etopo_result_t *res;
	size_t nres;
	bool quick;
} mu_etopo_report_t;

/* One JSON object; MU_EIO when writing fails. */
int mu_etopo_write_json(const mu_etopo_report_t *r, FILE *f);
/* A self-contained HTML page (inline CSS and SVG): the protocol, the
 * table, bars per metric and a histogram of ToRs per gang per policy. */
int mu_etopo_write_html(const mu_etopo_report_t *r, FILE *f);

#endif
