/*
 * specs.h - a set of specs (nodes, queues, jobs, scenario) and their memory.
 *
 * Loaders fill a mu_specs_t.  All strings and nested arrays that its specs
 * point to live in its arena and are freed together by mu_specs_release().
 * The top-level arrays grow with realloc; pointers into them are only
 * stable once loading is done.
 */
#ifndef MUSTER_SPECS_H
#define MUSTER_SPECS_H

#include "muster/model.h"

/* A bump allocator: many small allocations, one free. */
typedef struct mu_arena_block mu_arena_block_t;
typedef struct mu_arena {
	mu_arena_block_t *head;
	size_t used, size; /* of head */
} mu_arena_t;

void mu_arena_init(mu_arena_t *a);
void mu_arena_release(mu_arena_t *a);
/* Zeroed, 16-byte aligned memory that lives until release; NULL on OOM. */
void *mu_arena_alloc(mu_arena_t *a, size_t size);
char *mu_arena_strdup(mu_arena_t *a, const char *s);
char *mu_arena_strndup(mu_arena_t *a, const char *s, size_t n);
/* The bytes of a's blocks (what it holds of the heap, headers aside).
 * O(blocks). */
size_t mu_arena_bytes(const mu_arena_t *a);

/* --- Scenario expectations (see docs/scenarios.md) ----------------------- */

typedef struct mu_expect_job {
	const char *job;
	int32_t bound;        /* pods bound after the step; -1 = not checked */
	const char **nodes;   /* multiset of nodes of bound pods; NULL = any */
	size_t nnodes;
	bool check_nodes;     /* true when `nodes` was given (even empty) */
	/* Multiset of the bound pods' node and devices, each in the canonical
	 * form "NODE:gpus=0-1;numa=0;nic=0;cpus=0-3" (fields that are empty
	 * left out; see docs/scenarios.md).  devnodes[i] is the node part of
	 * devices[i]. */
	const char **devices;
	const char **devnodes;
	size_t ndevices;
	bool check_devices;   /* true when `devices` was given (even empty) */
	/* Multiset of "NODE:DRIVER/POOL/DEVICE": the DRA devices allocated
	 * to the claims of the job's bound pods (a claim shared by several
	 * of its pods counted once). */
	const char **dra_devices;
	size_t ndra_devices;
	bool check_dra;       /* true when `draDevices` was given (even empty) */
	const char *pending;  /* expected mu_why_name(), "" = must not be
	                       * pending, NULL = not checked */
	const char *message;  /* substring of the explain message, or NULL */
	int32_t evicted;      /* pods evicted in the step; -1 = not checked */
	const char *pool;     /* the pool it runs in (or, pending, is
	                       * preferred), NULL = not checked */
	int8_t escalated;     /* 1 / 0: it was escalated or not; -1 = not
	                       * checked */
} mu_expect_job_t;

/* A node's MIG layout in a scenario (migLayouts): one text per physical
 * GPU as mu_mig_parse() reads it ("whole", "3g.40gb@4+2g.20gb@0"). */
typedef struct mu_mig_layout_spec {
	const char *node;
	const char **gpus;
	size_t ngpus;
} mu_mig_layout_spec_t;

typedef struct mu_scenario_step {
	mu_time_t at;          /* the time of this step's cycles */
	const char **finish;   /* jobs that finish just before the cycle */
	size_t nfinish;
	const char **remove_nodes; /* nodes removed just before the cycle */
	size_t nremove_nodes;
	/* disruptionsAllowed: per job, how many of its pods a disruption
	 * budget lets go from this step on (-1: no budget), set before the
	 * cycle (mu_engine_job_disruptions). */
	const char **budget_jobs;
	int32_t *budget_allowed;
	size_t nbudgets;
	int32_t cycles;        /* cycles to run (>= 1); expectations hold after each */
	mu_expect_job_t *expect;
	size_t nexpect;
	/* migLayouts: the layouts expected of the re-plan after the step's
	 * cycles (scn_mig.c), for the nodes named; none = not checked. */
	mu_mig_layout_spec_t *expect_mig;
	size_t nexpect_mig;
	/* expectHorizon (policy muster-horizon): choices made and choices
	 * that changed the settings so far (-1: not checked), and text the
	 * settings now contain (NULL: not checked). */
	int32_t expect_choices, expect_changes;
	const char *expect_settings;
} mu_scenario_step_t;

typedef struct mu_scenario_spec {
	const char *name;
	const char *description;
	const char *policy;   /* scoring policy name, NULL = default */
	mu_time_t usage_half_life; /* the engine's usage_half_life; 0 off */
	/* migLayouts: the MIG layouts the named nodes start with; the runner
	 * then re-plans them after every step and applies the re-plan before
	 * the next (src/sim/scn_mig.c).  None: MIG layouts are not modelled. */
	mu_mig_layout_spec_t *mig;
	size_t nmig;
	/* horizon: muster-horizon's options (0: the defaults). */
	double horizon_from, horizon_every;
	mu_time_t horizon_min_interval;
	int32_t horizon_rollouts;
	bool has_horizon;
	mu_scenario_step_t *steps;
	size_t nsteps;
} mu_scenario_spec_t;

/* --- Priority classes and late references -------------------------------- */

/* A scheduling.k8s.io/v1 PriorityClass. */
typedef struct mu_priority_class_spec {
	const char *name;
	int32_t value;
	bool global_default;  /* the priority of jobs that name no class */
	bool never_preempt;   /* preemptionPolicy: Never (for its jobs) */
	mu_time_t max_wait;   /* class of service for its jobs that give none
	                       * (annotation muster.io/max-wait); 0 = none */
	mu_escalation_t escalation; /* for its jobs that give none (annotation
	                             * muster.io/escalation); 0 = the queue's */
} mu_priority_class_spec_t;

typedef enum mu_spec_ref_kind {
	/* jobs[job].priority comes from the PriorityClass `name`; with name
	 * NULL (no priority and no class given) from the globalDefault class
	 * when there is one, else it keeps its job type's default. */
	MU_REF_PRIORITY = 0,
	/* The node called `name` gets `topo` (a NodeResourceTopology). */
	MU_REF_NODE_TOPO = 1,
} mu_spec_ref_kind_t;

/* Something a loader read that names an object of another document or
 * file.  mu_specs_validate() settles them once everything is loaded, so
 * documents may come in any order. */
typedef struct mu_spec_ref {
	mu_spec_ref_kind_t kind;
	size_t job;                      /* MU_REF_PRIORITY: index in jobs */
	const char *name;
	const mu_node_topo_spec_t *topo; /* MU_REF_NODE_TOPO, in the arena */
	const char *where;               /* "FILE:LINE:COL" for messages */
} mu_spec_ref_t;

/* --- The set ------------------------------------------------------------- */

typedef struct mu_specs {
	mu_arena_t arena;
	mu_node_spec_t *nodes;
	size_t nnodes, nodes_cap;
	mu_queue_spec_t *queues;
	size_t nqueues, queues_cap;
	mu_job_spec_t *jobs;
	size_t njobs, jobs_cap;
	mu_topology_spec_t *topologies;
	size_t ntopologies, topologies_cap;
	mu_priority_class_spec_t *pclasses;
	size_t npclasses, pclasses_cap;
	mu_pool_spec_t *pools;        /* node pools (NodePool selector) */
	size_t npools, pools_cap;
	mu_spec_ref_t *refs;          /* settled by mu_specs_validate() */
	size_t nrefs, refs_cap;
	mu_scenario_spec_t *scenario; /* NULL unless a Scenario was loaded */
	/* DRA objects (resource.k8s.io/v1beta1 ResourceSlice, DeviceClass,
	 * ResourceClaim, ResourceClaimTemplate) as JSON text in the arena,
	 * in file order; only the scenario runner uses them. */
	const char **dra;
	size_t ndra, dra_cap;
} mu_specs_t;

void mu_specs_init(mu_specs_t *s);
void mu_specs_release(mu_specs_t *s);
/* Append a zeroed spec and return it (NULL on OOM).  Queues come back with
 * mu_queue_spec_defaults() applied. */
mu_node_spec_t *mu_specs_add_node(mu_specs_t *s);
mu_queue_spec_t *mu_specs_add_queue(mu_specs_t *s);
mu_job_spec_t *mu_specs_add_job(mu_specs_t *s);
mu_topology_spec_t *mu_specs_add_topology(mu_specs_t *s);
mu_priority_class_spec_t *mu_specs_add_priority_class(mu_specs_t *s);
mu_spec_ref_t *mu_specs_add_ref(mu_specs_t *s);
mu_pool_spec_t *mu_specs_add_pool(mu_specs_t *s);
/* A NULL slot at the end of s->dra (the caller sets it), NULL on OOM. */
const char **mu_specs_add_dra(mu_specs_t *s);
/* Looks up by name (linear); NULL if absent. */
const mu_queue_spec_t *mu_specs_find_queue(const mu_specs_t *s, const char *name);

#endif
