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

/* --- Topology inside a node -------------------------------------------- */

#define MU_MAX_NUMA 8
#define MU_MAX_NICS 32
#define MU_MAX_CPUS 512
#define MU_CPUSET_WORDS (MU_MAX_CPUS / 64)

/* A set of CPU ids 0..MU_MAX_CPUS-1. */
typedef struct mu_cpuset {
	uint64_t w[MU_CPUSET_WORDS];
} mu_cpuset_t;

typedef struct mu_numa_spec {
	mu_cpuset_t cpus;   /* CPU ids of this NUMA node */
	int64_t memory;     /* bytes */
} mu_numa_spec_t;

/* What the node agent reports (NodeResourceTopology): NUMA nodes, and for
 * every GPU and NIC its NUMA node and link group. */
typedef struct mu_node_topo_spec {
	int32_t nnuma;                  /* 0..MU_MAX_NUMA */
	mu_numa_spec_t numa[MU_MAX_NUMA];
	int8_t gpu_numa[MU_MAX_GPUS];   /* -1: unknown */
	int8_t gpu_group[MU_MAX_GPUS];  /* NVLink island or PCIe switch; -1 none */
	int32_t nnics;                  /* 0..MU_MAX_NICS */
	int8_t nic_numa[MU_MAX_NICS];
	const char *nic_names[MU_MAX_NICS];
} mu_node_topo_spec_t;

/* Parses a cpulist ("0-31,64-95") into set; MU_EPARSE or MU_ERANGE. */
int mu_cpuset_parse(const char *s, mu_cpuset_t *set);
/* Writes set as a cpulist into buf (always NUL-terminated). */
void mu_cpuset_format(const mu_cpuset_t *set, char *buf, size_t len);
int mu_cpuset_count(const mu_cpuset_t *set);

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
	const mu_node_topo_spec_t *topo; /* NULL: nothing known inside */
} mu_node_spec_t;

/* --- Topology between nodes --------------------------------------------- */

#define MU_MAX_LEVELS 8

/* Ordered levels of a network or power topology, as node label keys,
 * outermost first: zone > block > rack > (the node itself). */
typedef struct mu_topology_spec {
	const char *name;
	const char **levels;
	size_t nlevels;       /* 1..MU_MAX_LEVELS */
} mu_topology_spec_t;

/* A node pool (docs/policy.md, "Node pools"): the nodes whose labels
 * match every (key, value) of `match` (a label selector's matchLabels).
 * Every node belongs to at most one pool.  Quotas may be given per pool,
 * and a job may name the pools it accepts, in order of preference. */
typedef struct mu_pool_spec {
	const char *name;
	mu_label_t *match;   /* matchLabels */
	size_t nmatch;
	mu_sel_req_t *exprs; /* matchExpressions: In, NotIn, Exists,
	                      * DoesNotExist (a label selector's); together
	                      * with match at least one requirement */
	size_t nexprs;
} mu_pool_spec_t;

/* The resource a per-pool quota is about (GPUs when left 0). */
typedef enum mu_pool_res {
	MU_POOL_GPU = 0,  /* milli-GPU */
	MU_POOL_CPU = 1,  /* millicores */
	MU_POOL_MEM = 2,  /* bytes */
	MU_POOL_PODS = 3, /* pods */
	MU_POOL_NRES = 4,
} mu_pool_res_t;

/* A queue's quota of one resource in one pool (accounting units, as
 * mu_pool_res_t says).  A pool and resource appear at most once. */
typedef struct mu_pool_quota {
	const char *pool;
	int64_t deserved;    /* 0 = no guarantee there */
	int64_t limit;       /* MU_RES_UNLIMITED = none */
	double weight;       /* over-quota weight there; < 0 = the queue's
	                      * weight of that resource */
	mu_pool_res_t res;   /* 0: GPUs */
} mu_pool_quota_t;

/* What a job that waited past its maximum wait gets (docs/policy.md,
 * "Classes of service"). */
typedef enum mu_escalation {
	MU_ESC_DEFAULT = 0, /* a job: its class's, else its queue's; a queue
	                     * or class: boost */
	MU_ESC_BOOST = 1,   /* priority + MU_ESCALATE_BOOST: first in its
	                     * queue, and it may preempt lower priorities */
	MU_ESC_RESERVE = 2, /* a reservation of the nodes it will start on,
	                     * whatever the backfill mode; no priority change */
	MU_ESC_PREEMPT = 3, /* permission to preempt preemptible jobs of its
	                     * own queue whatever their priority (not other
	                     * escalated ones); no priority change */
} mu_escalation_t;

/* The order of jobs inside a leaf queue. */
typedef enum mu_queue_order {
	MU_QORDER_DEFAULT = 0, /* the engine's configured order */
	MU_QORDER_FIFO = 1,    /* priority, then arrival: no attained-service
	                        * levels, so the order never preempts */
} mu_queue_order_t;

typedef struct mu_queue_spec {
	const char *name;
	const char *parent;   /* NULL: a top-level queue */
	int32_t priority;     /* higher is served first among siblings */
	mu_res_t deserved;    /* accounting units; 0 = no guarantee */
	mu_res_t limit;       /* accounting units; MU_RES_UNLIMITED = none */
	double weight[MU_RES_MAX]; /* over-quota weight per resource, >= 0 */
	mu_queue_order_t order; /* job order inside it (leaf queues) */
	const mu_pool_quota_t *pools; /* per-pool quotas (pools must
	                               * exist); pools not named: deserved 0,
	                               * no limit, the GPU weight */
	size_t npools;
	mu_time_t max_wait;   /* class of service: a job of it that waits
	                       * longer is escalated; 0 = none */
	mu_escalation_t escalation; /* how (MU_ESC_DEFAULT: boost) */
	/* Flavor fungibility of its jobs that name pools (Kueue's
	 * ClusterQueue.spec.flavorFungibility; docs/policy.md): */
	bool borrow_try_next;  /* whenCanBorrow: TryNextFlavor: a later pool's
	                        * deserved quota before borrowing in this one
	                        * (default MayStopSearch: borrow here) */
	bool preempt_try_next; /* whenCanPreempt: TryNextFlavor: a later pool
	                        * that fits without preemption before
	                        * preempting within quota in this one (default
	                        * MayStopSearch: reclaim here) */
	/* Set by the CSV trace loaders on a queue they created because the
	 * trace names it and none was loaded (docs/formats.md).  mu_load_buffer()
	 * drops such a queue when a file defines the same name. */
	bool auto_created;
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

typedef enum mu_align {
	MU_ALIGN_NONE = 0,
	MU_ALIGN_NUMA = 1, /* all its GPUs on one NUMA node */
	MU_ALIGN_LINK = 2, /* all its GPUs in one link group (NVLink/PCIe switch) */
} mu_align_t;

/* A gang's placement constraint over a topology's levels. */
typedef struct mu_topo_req {
	const char *topology;    /* NULL: the first topology defined */
	const char *required;    /* level key: the whole gang in one domain */
	const char *preferred;   /* level key: as tight as possible from there */
	int32_t slice_size;      /* >0: consecutive groups of this many pods */
	const char *slice_level; /* ... each within one domain of this level */
} mu_topo_req_t;

/* --- Pod affinity, anti-affinity, topology spread (affinity.c) ---------- */

/* A label selector over pods: its requirements (matchLabels as In with one
 * value, and matchExpressions with In, NotIn, Exists, DoesNotExist) are
 * ANDed; none matches every pod.  `absent` is a missing selector, which
 * matches no pod (as Kubernetes' nil selector). */
typedef struct mu_pod_sel {
	mu_sel_req_t *reqs;
	size_t nreqs;
	bool absent;
} mu_pod_sel_t;

/* One pod affinity or anti-affinity term (kube-scheduler's
 * InterPodAffinity): pods matching sel in the namespaces given (none and
 * not all_namespaces: the pod's own) count in the topology domain of
 * their node, the value of node label topology_key. */
typedef struct mu_pod_term {
	bool anti;                 /* podAntiAffinity */
	int32_t weight;            /* preferred: 1..100; 0: required */
	mu_pod_sel_t sel;
	const char **namespaces;
	size_t nnamespaces;
	bool all_namespaces;       /* namespaceSelector: {} */
	const char *topology_key;
	/* matchLabelKeys / mismatchLabelKeys: the pod's own value of each
	 * key is added to sel as `key In (value)` / `key NotIn (value)`;
	 * keys the pod lacks are ignored. */
	const char **match_keys;
	size_t nmatch_keys;
	const char **mismatch_keys;
	size_t nmismatch_keys;
} mu_pod_term_t;

/* One topology spread constraint (kube-scheduler's PodTopologySpread).
 * Pods of the job's namespace matching sel are counted per domain. */
typedef struct mu_spread_spec {
	int32_t max_skew;          /* >= 1 */
	const char *topology_key;
	bool schedule_anyway;      /* whenUnsatisfiable: ScheduleAnyway
	                            * (a preference); else DoNotSchedule */
	mu_pod_sel_t sel;
	int32_t min_domains;       /* 0: not set (DoNotSchedule only) */
	const char **match_keys;   /* matchLabelKeys */
	size_t nmatch_keys;
	bool affinity_ignore;      /* nodeAffinityPolicy: Ignore (default
	                            * Honor: only nodes matching the pod's
	                            * node selector and affinity count) */
	bool taints_honor;         /* nodeTaintsPolicy: Honor (default
	                            * Ignore) */
} mu_spread_spec_t;

/* A preferred node-affinity term: weight 1..100 when term matches. */
typedef struct mu_pref_term {
	int32_t weight;
	mu_sel_term_t term;
} mu_pref_term_t;

/* A set of identical pods inside a job. */
typedef struct mu_podset_spec {
	const char *name;
	int32_t replicas;       /* >= 1 */
	int32_t min_member;     /* a part's own minimum: the gang starts only
	                         * with at least this many of this set's pods
	                         * (a JobSet's replicated job, a KAI SubGroup,
	                         * a leader and its workers); 0 = none of its
	                         * own, 0..replicas */
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
	int64_t gpu_memory;        /* MiB of one GPU's memory instead of a
	                            * share (KAI's gpu-memory); 0 none.  The
	                            * engine turns it into a share on the
	                            * smallest GPUs that hold it (queue.c) */
	/* Alignment inside the node: */
	mu_align_t align;          /* where the pod's GPUs must sit */
	bool want_nic;             /* a NIC on the GPUs' NUMA node */
	bool pin_cpus;             /* exclusive CPUs (and memory) from that
	                            * NUMA node; needs whole CPUs */
	/* Between pods (affinity.c): the pods' labels, their pod affinity
	 * and anti-affinity terms, spread constraints and preferred node
	 * affinity.  All empty: no cost at all. */
	mu_label_t *labels;
	size_t nlabels;
	mu_pod_term_t *pod_terms;
	size_t npod_terms;
	mu_spread_spec_t *spread;
	size_t nspread;
	mu_pref_term_t *node_pref;
	size_t nnode_pref;
	/* DRA: the pod template's spec.resourceClaims as JSON text, or NULL.
	 * The engine does not read it: the scenario runner allocates the
	 * claims (sim/scn_dra.c) and steers the pods with node labels; the
	 * simulator refuses it. */
	const char *dra_claims;
} mu_podset_spec_t;

typedef struct mu_job_spec {
	const char *name;
	const char *queue;
	const char *namespace; /* for pod affinity and spread; NULL: "default" */
	int32_t priority;      /* higher wins */
	mu_job_type_t type;
	bool preemptible;
	bool never_preempt;    /* preemptionPolicy: Never: it starts without
	                        * evicting anyone (no preemption, reclaim or
	                        * consolidation is tried for it) */
	bool no_move;          /* never moved by consolidation (on Kubernetes:
	                        * a pod that no controller would recreate) */
	int32_t min_member;    /* pods needed to start; 0 = all pods, or when
	                        * a pod set has a minimum of its own, the
	                        * sum over pod sets of that minimum (or of
	                        * all its pods if it has none); never less
	                        * than the sum of the pod sets' minimums */
	mu_podset_spec_t *podsets;
	size_t npodsets;
	mu_topo_req_t topo;    /* gang topology constraint; zeroed = none */
	mu_time_t submit;      /* when the job arrives (simulation, scenarios) */
	mu_time_t duration;    /* run time once started (simulation); 0 = unknown */
	mu_time_t runtime_estimate; /* declared expected run time; 0 = none */
	mu_time_t runtime_limit;    /* declared limit; 0 = none */
	double speedup_exp;    /* simulation: an elastic job with b of its n pods
	                        * runs at (b/n)^exp of full speed; 0 means 1 */
	const char **pools;    /* acceptable node pools, preferred first
	                        * (flavor fallback); none = any node */
	size_t npools;         /* at most MU_MAX_JOB_POOLS */
	mu_time_t max_wait;    /* escalated after waiting this long; 0 = its
	                        * queue's, or the engine's default for its
	                        * type (interactive) */
	mu_escalation_t escalation; /* how; MU_ESC_DEFAULT: its queue's */
} mu_job_spec_t;

#define MU_MAX_JOB_POOLS 16

/* Total pods of a job spec (sum of replicas). */
int32_t mu_job_spec_pods(const mu_job_spec_t *j);

#endif
