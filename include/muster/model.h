/*
 * model.h - the specs that describe a cluster and its workload.
 *
 * These plain structs are what loaders produce and what the engine consumes.
 * The engine copies (and interns) everything it keeps, so a spec's memory
 * stays with whoever built it: usually a mu_specs_t and its arena.
 *
 * Times are int64 milliseconds (mu_time_t) on the caller's clock; the engine
 * has no clock of its own.
 */
#ifndef MUSTER_MODEL_H
#define MUSTER_MODEL_H

#include "muster/resource.h"

typedef int64_t mu_time_t; /* milliseconds */
#define MU_TIME_NONE INT64_MIN

typedef struct mu_label {
	const char *key;
	const char *value;
} mu_label_t;

typedef enum mu_taint_effect {
	MU_TAINT_NO_SCHEDULE = 0,
	MU_TAINT_PREFER_NO_SCHEDULE = 1,
	MU_TAINT_NO_EXECUTE = 2,
} mu_taint_effect_t;

typedef struct mu_taint {
	const char *key;
	const char *value; /* may be NULL or "" */
	mu_taint_effect_t effect;
} mu_taint_t;

typedef enum mu_tol_op {
	MU_TOL_EQUAL = 0,  /* key and value must match */
	MU_TOL_EXISTS = 1, /* key must match; a NULL key tolerates everything */
} mu_tol_op_t;

typedef struct mu_toleration {
	const char *key;   /* NULL: any key (only with MU_TOL_EXISTS) */
	const char *value; /* for MU_TOL_EQUAL */
	mu_tol_op_t op;
	int effect;        /* a mu_taint_effect_t, or -1 for all effects */
} mu_toleration_t;

typedef enum mu_sel_op {
	MU_SEL_IN = 0,
	MU_SEL_NOT_IN = 1,
	MU_SEL_EXISTS = 2,
	MU_SEL_DOES_NOT_EXIST = 3,
	MU_SEL_GT = 4, /* one integer value */
	MU_SEL_LT = 5,
} mu_sel_op_t;

/* One node-selector requirement: `key op values`. */
typedef struct mu_sel_req {
	const char *key;
	mu_sel_op_t op;
	const char **values;
	size_t nvalues;
} mu_sel_req_t;

/* A node-selector term: its requirements are ANDed. */
typedef struct mu_sel_term {
	mu_sel_req_t *reqs;
	size_t nreqs;
} mu_sel_term_t;

typedef struct mu_node_spec {
	const char *name;
	mu_label_t *labels;
	size_t nlabels;
	mu_taint_t *taints;
	size_t ntaints;
	mu_res_t alloc;        /* core slots; MU_RES_GPU = device count */
	mu_ext_qty_t *ext;     /* named extended resources */
	size_t next;
	const char *gpu_model; /* NULL when the node has no GPUs or no model */
	bool unschedulable;
} mu_node_spec_t;

typedef struct mu_queue_spec {
	const char *name;
	const char *parent;   /* NULL: a top-level queue */
	int32_t priority;     /* higher is served first among siblings */
	mu_res_t deserved;    /* accounting units; 0 = no guarantee */
	mu_res_t limit;       /* accounting units; MU_RES_UNLIMITED = none */
	double weight[MU_RES_MAX]; /* over-quota weight per resource, >= 0 */
} mu_queue_spec_t;

/* Fills q with defaults: no deserved quota, no limit, weight 1. */
void mu_queue_spec_defaults(mu_queue_spec_t *q);

typedef enum mu_job_type {
	MU_JOB_TRAIN = 0,       /* preemptible gang */
	MU_JOB_INFERENCE = 1,   /* non-preemptible, long-lived */
	MU_JOB_INTERACTIVE = 2, /* non-preemptible, short, high priority */
	MU_JOB_BATCH = 3,       /* anything else */
} mu_job_type_t;

/* The names "train", "inference", "interactive", "batch". */
const char *mu_job_type_name(mu_job_type_t t);

/* A set of identical pods inside a job. */
typedef struct mu_podset_spec {
	const char *name;
	int32_t replicas;       /* >= 1 */
	mu_res_t req;           /* per pod, request units (see resource.h) */
	mu_ext_qty_t *ext;
	size_t next;
	mu_label_t *node_selector; /* all must match */
	size_t nnode_selector;
	mu_sel_term_t *affinity;   /* required node affinity: terms ORed */
	size_t naffinity;
	mu_toleration_t *tolerations;
	size_t ntolerations;
	const char **gpu_models;   /* allowed GPU models; none = any */
	size_t ngpu_models;
} mu_podset_spec_t;

typedef struct mu_job_spec {
	const char *name;
	const char *queue;
	int32_t priority;      /* higher wins */
	mu_job_type_t type;
	bool preemptible;
	int32_t min_member;    /* pods needed to start; 0 = all pods */
	mu_podset_spec_t *podsets;
	size_t npodsets;
	mu_time_t submit;      /* when the job arrives (simulation, scenarios) */
	mu_time_t duration;    /* run time once started (simulation); 0 = unknown */
} mu_job_spec_t;

/* Total pods of a job spec (sum of replicas). */
int32_t mu_job_spec_pods(const mu_job_spec_t *j);

#endif
