/*
 * engine_int.h - the engine's private data layout, shared by the files in src/engine.
 *
 * Everything lives in flat arrays indexed by dense int32 ids: nodes, queues,
 * jobs, static classes.  Strings (names, label keys and values) are interned
 * once into hash maps, so filters compare integers.  Pods of identical shape
 * and constraints share a static class that caches which nodes pass the
 * label, taint and model filters; only resources are checked per pod.
 */
#ifndef MUSTER_ENGINE_INT_H
#define MUSTER_ENGINE_INT_H

#include <stdlib.h>
#include <string.h>

#include "muster/engine.h"

/* --- A string -> int32 hash map (open addressing, owned key copies) ----- */

typedef struct mu__strmap {
	char **keys;     /* by slot; NULL = empty */
	int32_t *vals;   /* by slot */
	uint32_t cap;    /* power of two, or 0 */
	uint32_t n;
} mu__strmap_t;

/* --- Shared resource vectors (rvec.c) ------------------------------------ */

/* The engine's table of the distinct resource vectors its pod sets and
 * flavors hold (each entry counted by its holders). */
typedef struct mu__rvtab {
	struct mu__rvec **slot; /* by slot; NULL = empty */
	uint32_t cap;           /* power of two, or 0 */
	uint32_t n;             /* distinct vectors held */
} mu__rvtab_t;

/* The engine's shared copy of *v, held once more by the caller, who lets
 * go with mu__rvec_put and never writes it; NULL when out of memory.
 * O(1) expected (hashes the 16 values). */
const mu_res_t *mu__rvec_get(mu_engine_t *e, const mu_res_t *v);
/* Holds shared vector v (from mu__rvec_get, or NULL) once more; returns
 * v.  O(1). */
const mu_res_t *mu__rvec_ref(const mu_res_t *v);
/* Lets go of shared vector v (NULL: nothing), freed with its last
 * holder.  O(1) expected. */
void mu__rvec_put(mu_engine_t *e, const mu_res_t *v);
/* Frees table t and every vector in it, held or not (mu_engine_free).
 * O(table). */
void mu__rvec_release(mu__rvtab_t *t);

void mu__strmap_release(mu__strmap_t *m);
/* The value of key, or -1. O(1) expected. */
int32_t mu__strmap_get(const mu__strmap_t *m, const char *key);
/* Sets key to val (copying key).  Returns the stored key copy or NULL on
 * OOM. */
const char *mu__strmap_put(mu__strmap_t *m, const char *key, int32_t val);
/* Removes key and frees its copy (backward shift, no tombstones); false
 * when absent.  O(1) expected. */
bool mu__strmap_del(mu__strmap_t *m, const char *key);

/* Interned strings: id <-> string. */
typedef struct mu__strtab {
	mu__strmap_t map;
	const char **strs; /* by id; points at the map's key copies */
	int32_t n, cap;
} mu__strtab_t;

void mu__strtab_release(mu__strtab_t *t);
/* Id of s, interning it when new; -1 on OOM.  NULL interns as -1 too, so
 * callers check s first. */
int32_t mu__intern(mu__strtab_t *t, const char *s);
/* Id of s or -1 when it was never interned. */
int32_t mu__strtab_find(const mu__strtab_t *t, const char *s);

/* --- Nodes ------------------------------------------------------------- */

typedef struct mu__taint {
	int32_t key, val; /* interned; val -1 when empty */
	int effect;
} mu__taint_t;

/* What a node's agent reported inside it, and what is still free there. */
typedef struct mu__ntopo {
	int32_t nnuma;
	mu_cpuset_t numa_cpus[MU_MAX_NUMA];
	int64_t numa_mem[MU_MAX_NUMA];
	int64_t numa_mem_free[MU_MAX_NUMA]; /* for pods pinned there */
	mu_cpuset_t free_cpus;              /* not pinned by any pod */
	int8_t gpu_numa[MU_MAX_GPUS];
	int8_t gpu_group[MU_MAX_GPUS];
	int32_t nnics;
	int8_t nic_numa[MU_MAX_NICS];
	uint32_t free_nics;                 /* bit per NIC */
} mu__ntopo_t;

typedef struct mu__node {
	const char *name;  /* owned by e->node_names */
	uint32_t ver;      /* bumped on every change of what is free */
	int32_t *labels;   /* (key, value) id pairs, sorted by key */
	int32_t nlabels;
	mu__taint_t *taints;
	int32_t ntaints;
	int32_t model;     /* interned GPU model, -1 none */
	const char *model_name; /* its string (e->strs), NULL none */
	bool unschedulable;
	bool removed;
	int ngpu;
	mu_res_t alloc;    /* MU_RES_GPU = devices */
	mu_res_t free;     /* MU_RES_GPU = whole free devices,
	                    * MU_RES_GPU_MILLI = free milli summed */
	int16_t gpu_free[MU_MAX_GPUS];
	int32_t gpu_kinds[MU_MAX_GPUS + 1]; /* bound pods by GPU request, as
	                                     * mu_node_view_t's */
	mu__ntopo_t *topo; /* NULL: nothing known inside */
	/* Reservations of the current cycle (valid when resv_stamp is the
	 * engine's cycle stamp). */
	uint64_t resv_stamp;
	mu_time_t resv_at;  /* earliest reservation due here */
	int32_t resv_job;   /* the job holding it */
	mu_res_t resv_used; /* requests of the pods reserved here */
	mu_res_t slack;     /* what may still be taken without delaying them */
	mu_time_t min_start; /* no job with a pod here started before this
	                      * (a lower bound; gather() makes it exact) */
	int32_t pool;      /* node pool (pools.c), -1 none */
	int32_t sslot;     /* its model's entry in e->supply.models (supply.c) */
	int32_t gslot;     /* its entry in e->gmodels (gpumodels.c) and the */
	int64_t gdevices;  /* devices it adds there (0: none, as cordoned) */
	int32_t gmem;      /* its entry in e->gmem + 1 (gpumodels.c), 0 none */
	uint64_t pgen;     /* stamp of the last change among the pods here:
	                    * a bind, a release, a start or stop of a job
	                    * with a pod here (mu__node_dirty(), vsum.c) */
	int32_t npods;     /* bound pods, listed in refs */
	struct mu__podref *refs;
	int32_t refs_cap;
} mu__node_t;

/* A bound pod, as a node lists it. */
typedef struct mu__podref {
	int32_t job, pod;
} mu__podref_t;

/* --- Static classes: constraints shared by identical pod sets ---------- */

/* Class nodes that fresh fit explanations may check per cycle; beyond it,
 * a job that was explained before keeps its last counts (cycle.c). */
#define MU__EXPL_BUDGET ((int64_t)1 << 21)

/* A node's free resources, compact, for a quick first fit test over many
 * nodes (nodeindex.c keeps it in step with mu__node_t.free). */
typedef struct mu__nfree {
	int64_t cpu, mem;
	int32_t gpu;      /* whole free devices */
	int32_t milli;    /* the largest free share of one device */
	int64_t pods;
} mu__nfree_t;

/* Whether a pod of request req may fit in f (resources only: a true
 * answer still needs mu__node_fit()). */
static inline bool mu__nfree_fits(const mu__nfree_t *f, const mu_res_t *req)
{
	return f->cpu >= req->v[MU_RES_CPU] && f->mem >= req->v[MU_RES_MEM] &&
	       f->gpu >= req->v[MU_RES_GPU] && f->milli >= req->v[MU_RES_GPU_MILLI] &&
	       f->pods >= req->v[MU_RES_PODS];
}

/* The first filter a node whose compact record is f fails for req, in
 * node_fit()'s order (CPU, memory, GPUs, GPU share, pods), or MU_F_COUNT.
 * Exact when no named resource or alignment is involved.  O(1). */
static inline mu_filter_t mu__nfree_filter(const mu__nfree_t *f, const mu_res_t *req)
{
	if (f->cpu < req->v[MU_RES_CPU])
		return MU_F_CPU;
	if (f->mem < req->v[MU_RES_MEM])
		return MU_F_MEM;
	if (req->v[MU_RES_GPU] > f->gpu ||
	    (req->v[MU_RES_GPU_MILLI] > 0 && f->milli < req->v[MU_RES_GPU_MILLI]))
		return MU_F_GPU;
	if (f->pods < req->v[MU_RES_PODS])
		return MU_F_PODS;
	return MU_F_COUNT;
}

/* One node of a score index: its score when its version was ver. */
typedef struct mu__hent {
	double score;
	int32_t node;
	uint32_t ver;
} mu__hent_t;

/* A max-heap of a class's fitting nodes by score for one request shape
 * (nodeindex.c).  Entries whose ver is not the node's are stale. */
typedef struct mu__nindex {
	bool live, built;
	uint8_t align;        /* alignment flags of the request */
	uint64_t key;         /* hash of req and align */
	mu_res_t req;
	uint64_t cls_gen;     /* class node list it was built from */
	uint64_t pos;         /* change-log position read up to */
	uint64_t last_use;
	int32_t uses;         /* lookups answered by the fit tree while not
	                       * built: the heap is built once a shape repeats */
	mu__hent_t *heap;
	int32_t n, cap;
} mu__nindex_t;

#define MU__NOMOVE_SLOTS 8 /* failed consolidation shapes per class */
#define MU__NINDEX_MAX 64 /* indexes per class (request shapes), LRU */

typedef struct mu__selreq {
	int32_t key;
	mu_sel_op_t op;
	int32_t *vals;
	int32_t nvals;
	int64_t num; /* for Gt/Lt */
} mu__selreq_t;

typedef struct mu__selterm {
	mu__selreq_t *reqs;
	int32_t nreqs;
} mu__selterm_t;

typedef struct mu__tol {
	int32_t key; /* -1: any key */
	int32_t val; /* -1: empty */
	mu_tol_op_t op;
	int effect;  /* -1: all */
} mu__tol_t;

typedef struct mu__sclass {
	char *sig;            /* canonical signature (owned) */
	int32_t *sel;         /* nodeSelector (key, value) pairs */
	int32_t nsel;
	mu__selterm_t *terms; /* required affinity, ORed */
	int32_t nterms;
	mu__tol_t *tols;
	int32_t ntols;
	int32_t *models;      /* allowed GPU models */
	int32_t nmodels;
	/* Cache: nodes passing the static filters, valid for node_gen. */
	uint64_t gen;
	int32_t *nodes;
	int32_t nnodes, nodes_cap;
	uint8_t *member;      /* bit per node id: passes the static filters
	                       * (mu__sclass_has()); NULL for a class of at
	                       * most MU__MEMBER_BITS nodes */
	int32_t member_cap;   /* bytes */
	int32_t fail[MU_F_COUNT];
	/* Memos of failures and sums (cycle.c), allocated at first use:
	 * a class that always fits never needs them. */
	struct mu__sclass_memo *memo;
	/* Consolidation found no plan for `pods` pods >= req; valid while
	 * release_gen is gen and before until (when a victim refused for its
	 * minimum runtime turns eligible).  MU__NOMOVE_SLOTS failing shapes,
	 * none covering another (preempt.c), allocated at the first failure:
	 * most classes never consolidate. */
	struct mu__nomove {
		uint64_t gen;
		mu_res_t req;
		int32_t pods;
		mu_time_t until;
	} *nomove;
	uint32_t nomove_next; /* the slot to overwrite next */
	struct mu__ftree *ft; /* fit tree for new request shapes (fittree.c),
	                       * or NULL */
	struct mu__fcount *fc; /* counts of first failing filters for
	                        * explanations (fitcount.c), or NULL */
	struct mu__cdelta *cd; /* net changes of its nodes since a log
	                        * position, for carries (cycle.c), or NULL */
	mu__nindex_t *idx;    /* nidx score indexes (grown on demand up to
	                       * MU__NINDEX_MAX), or NULL */
	int32_t nidx;
} mu__sclass_t;

#define MU__MEMBER_BITS 64 /* classes above this many nodes keep a bitset */

/* What a class remembers between attempts (cycle.c). */
typedef struct mu__sclass_memo {
	/* No node fits a request >= nofit_req (same alignment) until
	 * release_gen moves past nofit_gen: skip the scan, reuse the counts. */
	uint64_t nofit_gen;
	mu_res_t nofit_req;
	uint8_t nofit_align;
	int32_t nofit_fail[MU_F_COUNT];
	/* Free resources summed over its nodes (request units), valid while
	 * alloc_gen and release_gen are fsum_alloc and fsum_release. */
	mu_res_t fsum;
	uint64_t fsum_alloc, fsum_release;
	bool fsum_valid;
} mu__sclass_memo_t;

/* Whether node nid passes class c's static filters (as of c->gen): a bit
 * test, or for a small class (no bitset) a search of its sorted nodes.
 * O(1), or O(log 64). */
static inline bool mu__sclass_has(const mu__sclass_t *c, int32_t nid)
{
	if (c->member)
		return (nid >> 3) < c->member_cap && ((c->member[nid >> 3] >> (nid & 7)) & 1);
	int32_t lo = 0, hi = c->nnodes;
	while (lo < hi) {
		int32_t mid = (lo + hi) / 2;
		if (c->nodes[mid] < nid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->nnodes && c->nodes[lo] == nid;
}

/* --- Topology domains ---------------------------------------------------- */

/* One domain of one level: a rack, a block...  Its free vector is the sum
 * of its nodes' free vectors, kept up to date on every bind and release. */
typedef struct mu__domain {
	int32_t level;
	int32_t anc[MU_MAX_LEVELS]; /* ancestor at each level <= level */
	int32_t *nodes;
	int32_t nnodes, nodes_cap;
	mu_res_t free;
} mu__domain_t;

typedef struct mu__topo {
	char *name;
	int32_t nlevels;
	int32_t keys[MU_MAX_LEVELS];   /* interned label keys */
	mu__domain_t *doms;
	int32_t ndoms, doms_cap;
	int32_t *node_dom;             /* [node * MU_MAX_LEVELS + level], -1 */
	int32_t node_dom_n;            /* nodes it covers */
	uint64_t gen;                  /* node_gen it was built for; 0 never */
} mu__topo_t;

/* --- Queues and jobs ----------------------------------------------------- */

typedef struct mu__queue {
	const char *name;     /* owned by e->queue_names */
	int32_t parent;       /* -1: top level */
	int32_t *children;
	int32_t nchildren, children_cap;
	int depth;
	int32_t priority;
	mu_res_t deserved, limit;
	double weight[MU_RES_MAX];
	mu_queue_order_t order; /* leaf: FIFO, or the engine's order */
	mu_res_t used;        /* accounting units, including descendants */
	mu_res_t used_np;     /* the part used by non-preemptible jobs */
	int32_t *pending;     /* leaf: jobs waiting, in service order */
	int32_t npending, pending_cap;
	int32_t nrunning;     /* running jobs, listed in running */
	int32_t *running;
	int32_t running_cap;
	mu_res_t fair;        /* fair share (accounting), set every cycle */
	mu_res_t demand;      /* used + pending requests, capped by limit */
	mu_time_t last_reclaimed; /* when it last lost a job to reclaim */
	mu_time_t max_wait;   /* class of service for its jobs; 0 none */
	mu_escalation_t esc;  /* and its rule (never MU_ESC_DEFAULT) */
	bool borrow_try_next, preempt_try_next; /* flavor fungibility */
	double decayed[MU_RES_MAX];      /* usage per resource averaged
	                                  * with cfg.usage_half_life
	                                  * (fairshare.c) */
	double decay_factor[MU_RES_MAX]; /* 2^(-usage share / weight
	                                  * share), 1 if off */
	double hist[16];      /* EMA of run times (ms) per job shape */
	double hist_all;      /* ... of all its jobs; 0 = none yet */
	/* Per-cycle scratch. */
	int32_t cursor;       /* leaf: next pending index to try */
	int32_t remaining;    /* untried jobs in this subtree */
	int32_t blocked_at;   /* first job not tried because the head
	                       * starves, or -1 */
	int32_t min_victim_prio; /* lowest priority of its preemptible
	                          * running jobs (exact while mvp_valid) */
	int32_t mvp_count;    /* how many of them have it (cycle.c) */
	bool over_quota;      /* leaf using more than deserved somewhere */
	bool mvp_valid;       /* min_victim_prio is current (cycle.c) */
	bool order_moved;     /* a pending job's eprio moved (order.c) */
	bool ends_retime;     /* history moved: re-time its ends (ends.c) */
	double share;         /* mu__queue_share(), cached while share_at
	                       * is e->share_epoch */
	uint64_t share_at;
	/* Whether a claim of this leaf (n0, n1: its dominant resources) may
	 * reclaim from some other leaf, valid while gen is e->qgen, with
	 * the first refusal for explain (preempt.c). */
	struct mu__rmemo {
		uint64_t gen;
		int64_t n0, n1;
		bool gpu, ok;
		int32_t rq, rres;
		int64_t rused, rfair, rdes;
	} rmemo;
} mu__queue_t;

typedef struct mu__pod {
	int32_t node;    /* -1: not bound */
	int32_t npos;    /* index in the node's refs */
	int16_t milli;   /* share taken, for a GPU-share pod */
	int8_t numa;     /* NUMA node it is aligned to, or -1 */
	int8_t nic;      /* NIC it holds, or -1 */
	uint32_t end_id; /* its entry in e->ends (ends.c), 0 none */
	uint64_t gpus;   /* devices taken */
	mu_cpuset_t cpus; /* CPUs pinned for it (empty: shared pool) */
} mu__pod_t;

typedef struct mu__podset {
	char *name;      /* in the job's pod set array's block (queue.c) */
	int32_t replicas;
	int32_t first;   /* index of its first pod in job->pods */
	int32_t min_member; /* its own minimum (a part of a gang); 0 = none */
	const mu_res_t *req;  /* per pod, request units, ext slots mapped;
	                       * shared, held (rvec.c): never written */
	const mu_res_t *acct; /* per pod, accounting units; shared, held:
	                       * a flavor's when it names pools */
	int32_t sclass;
	mu_align_t align;
	bool want_nic, pin_cpus;
	bool aligned;    /* any of the three: placed by align.c */
	int32_t *labels; /* the pods' labels: sorted (key, value) id pairs */
	int32_t nlabels;
	int32_t ns;      /* interned namespace */
	struct mu__apod *aff; /* pod affinity, spread, preferred node
	                       * affinity (affinity.c); NULL: none */
} mu__podset_t;

/* A job's last fit explanation on committed state when no node fitted
 * (cycle.c): per-filter counts, valid for class generation gen and
 * carried forward from change-log position pos (ok).  With memo instead,
 * the counts are the class failure memo's that last answered for the job:
 * never carried, only shown again when the budget cannot pay for a
 * recount.  due: the counts last shown were such stale ones, to be
 * recounted without a placement search once a cycle's budget allows.
 * Allocated by the first such failure or memo answer, freed with the
 * job's reason (mu__job_last_clear). */
typedef struct mu__expl {
	uint64_t pos, gen;
	int32_t ps;
	int32_t fail[MU_F_COUNT];
	bool ok, memo, due;
} mu__expl_t;

/* The fields are in order of size (8, 4, then 1 byte), so that the
 * record has no holes: the daemon holds one per pod it has seen. */
typedef struct mu__job {
	const char *name; /* owned by e->job_names; NULL once forgotten */
	uint64_t seq;     /* submission order (e->job_seq): ties between jobs
	                   * go to the earlier one by this, not by id, as a
	                   * forgotten job's id goes to a later job */
	double attained;     /* GPU-ms run in finished runs (LAS, JCT) */
	mu_time_t level_until; /* running: its eprio holds until then ... */
	mu_time_t level_start; /* ... for the run that started then (order.c) */
	mu__podset_t *podsets;
	mu__pod_t *pods;
	mu_time_t submit, start;
	int64_t bound_gpu, bound_cpu; /* accounting GPUs and CPU of its bound
	                               * pods (the whole vector: mu__job_acct_bound) */
	int64_t acct_gpu_total;
	mu_reason_t *last;   /* why it last failed or waits (owned, 208
	                      * bytes, only while it has one: NULL reads as
	                      * all zeros; mu__job_last_set/_clear) */
	mu__expl_t *expl;    /* its last fit explanation (cycle.c), or NULL */
	uint64_t fail_gen;   /* e->release_gen when it last failed */
	uint64_t fail_alloc_gen; /* e->alloc_gen when it last failed */
	uint64_t fail_fair_gen;  /* e->fair_gen when it last failed */
	uint64_t fail_commit_gen; /* e->commit_gen when it last failed */
	mu_time_t retry_at;  /* a victim refused for time turns eligible;
	                      * under LAS also when a running job drops a
	                      * level */
	/* Runtime estimates and backfill (backfill.c). */
	mu_time_t declared_est, declared_limit;
	mu_time_t expected_start;  /* valid while reserved (resv_stamp) */
	uint64_t resv_stamp;       /* e->cycle_stamp when it got a
	                            * reservation: reserved this cycle */
	/* Flavor fallback (pools.c): the pools it accepts, in order, and per
	 * pool and pod set the class and accounting to use there; flav is
	 * the one its podsets hold now (-1: it names no pools). */
	int32_t *flav_pool;
	struct mu__flav *flav_ps;    /* [pool * npodsets + podset] */
	mu_reason_t *flav_last;      /* why it failed in each, last try */
	mu_time_t max_wait;          /* class of service; 0 none */
	/* gather() scratch (preempt.c), valid while gather_stamp is the
	 * engine's: victims of this job listed so far on the node. */
	uint64_t gather_stamp;
	int32_t gather_surplus;
	int32_t queue;
	int32_t priority;
	int32_t eprio;       /* effective priority: order and preemption */
	mu_job_type_t type;
	mu_job_state_t state;
	int32_t min_member; /* resolved: 1..npods */
	int32_t disrupt_allowed; /* pods a disruption budget lets go; -1 none */
	int32_t npods, nbound;
	int32_t npodsets;
	int32_t rpos;        /* index in its queue's running list */
	int32_t preemptions;
	/* Topology constraint, resolved at submit; topo -1 = none. */
	int32_t topo, req_level, pref_level, slice_size, slice_level;
	int32_t bucket;            /* job shape for history: by GPUs */
	int32_t owed_pos;          /* its place in e->owed while owed (valid
	                            * when e->owed[owed_pos] is it) */
	int32_t backfill_for;      /* reservation it runs against, or -1 */
	int32_t nbackfilled;       /* running jobs with backfill_for == it */
	int32_t moves;
	int32_t nflav, flav;
	mu_escalation_t esc;         /* its rule (never MU_ESC_DEFAULT) */
	bool forgotten;   /* finished and handed back (mu_engine_job_forget) */
	bool preemptible;
	bool never_preempt;  /* preemptionPolicy: Never */
	bool no_move;        /* never moved by consolidation */
	bool aff;            /* a pod set has affinity terms: a bind of
	                      * any pod may let it fit (cycle.c) */
	bool parts;         /* some pod set has a minimum of its own */
	bool failed;
	bool listed;         /* in its queue's pending list */
	bool flav_tried;
	bool escalated;
	bool gather_whole;
} mu__job_t;

/* A pod set's class and accounting in one pool (pools.c). */
typedef struct mu__flav {
	int32_t sclass;
	const mu_res_t *acct; /* shared, held (rvec.c) */
} mu__flav_t;

/* A node pool (pools.c). */
typedef struct mu__pool {
	char *name;
	char **keys, **vals;  /* matchLabels, owned */
	int32_t *sel;         /* interned (key, value) pairs */
	int32_t nsel;
	mu_sel_req_t *exprs;  /* matchExpressions, owned (for pod sets) */
	int32_t nexprs;
	int32_t *ekey, *eop;  /* per expression: interned key, mu_sel_op_t */
	int32_t *eoff, *eval; /* its interned values: eval[eoff[i]..eoff[i+1]) */
	int32_t slot;         /* its GPU accounting slot */
	int32_t rslot[MU_POOL_NRES]; /* its slot per resource, -1 none yet
	                              * ([MU_POOL_GPU] == slot; the others
	                              * made by the first quota of them) */
	int32_t nodes;
} mu__pool_t;

/* A pod evicted by a preemption attempt, to restore on rollback. */
typedef struct mu__evict {
	int32_t job, pod;
	mu__pod_t was; /* node and devices, restored exactly on rollback */
} mu__evict_t;

struct mu_engine {
	mu_engine_config_t cfg;
	const mu_score_ops_t *score;
	mu__strtab_t strs;          /* label keys and values, models */
	mu__strmap_t node_names, queue_names, job_names;
	mu__rvtab_t rvecs;          /* pod sets' shared vectors (rvec.c) */
	const char *res_names[MU_RES_MAX];
	int32_t nres;               /* slots in use (>= MU_RES_NAMED0) */

	mu__node_t *nodes;
	int32_t nnodes, nodes_cap, nlive;
	mu_supply_t supply;         /* with MU_SCORE_SUPPLY (supply.c) */
	mu_gpu_models_t gmodels;    /* devices per model (gpumodels.c) */
	bool gm_stale;              /* gmodels.press to compute again */
	const void *gm_index;       /* the mix index it was computed for */
	/* The GPU nodes' memory labels (nvidia.com/gpu.memory) and how many
	 * live GPU nodes carry each, cordoned or not (gpumodels.c): what a
	 * GPU-memory request resolves against (queue.c). */
	struct mu__gpumem *gmem;
	int32_t ngmem, gmem_cap;
	uint64_t node_gen;          /* bumped when nodes' static facts change */
	mu_res_t total_alloc;       /* accounting units */
	mu_res_t total_used;

	mu__queue_t *queues;
	int32_t nqueues, queues_cap;

	mu__job_t *jobs;
	int32_t njobs, jobs_cap;
	int32_t *free_jobs;         /* forgotten job ids, reused by submit */
	int32_t nfree_jobs, free_jobs_cap;
	uint64_t job_seq;           /* submissions so far (mu__job_t.seq) */

	mu__sclass_t *classes;
	int32_t nclasses, classes_cap;

	mu__topo_t *topos;
	int32_t ntopos, topos_cap;
	mu__strmap_t class_sigs;

	uint64_t rng;               /* splitmix64 state, from cfg.seed */
	uint64_t release_gen;       /* bumped when capacity may have grown */
	uint64_t alloc_gen;         /* bumped when pods are bound */
	uint64_t commit_gen;        /* like alloc_gen, but a failed attempt
	                             * that undid its binds puts it back
	                             * (job_try_inner): it moves only when
	                             * binds stay (cycle.c) */
	mu__evict_t *evl;           /* pods evicted by the current attempt */
	int32_t nevl, evl_cap;
	int32_t nover_quota;        /* leaves over quota at cycle start */
	uint32_t victim_cursor;     /* where a capped victim search resumes */
	mu_time_t order_next;       /* LAS: when a running job next drops a
	                             * level (cached failures expire then) */
	int32_t *order_fresh;       /* jobs started, stopped or restarted
	                             * since the last order refresh */
	int32_t nfresh, fresh_cap;
	bool order_all;             /* the next refresh walks every queue */
	uint64_t cycle_stamp;       /* tags this cycle's reservations */
	struct mu__end *ends;       /* running pods by expected end, kept
	                             * sorted across cycles (ends.c) */
	int32_t nends, ends_cap;
	bool ends_live;             /* ends is kept up to date */
	uint32_t ends_id;           /* last entry id given */
	uint64_t ends_tie;          /* last entry tie given */
	int32_t ends_stale;         /* entries gone stale since the last
	                             * sweep (a pod with an entry released) */
	int32_t nends_valid;        /* current entries at the last merge */
	bool ends_sweep;            /* a job went pending with pods bound:
	                             * the next merge drops stale entries */
	int32_t *ends_add;          /* (job, pod) bound since the last merge */
	struct mu__end *ends_x, *ends_tmp; /* merge scratch, kept (ends.c) */
	int32_t ends_x_cap, ends_tmp_cap;
	mu_time_t *ends_est;
	int32_t *ends_grp;
	int32_t ends_est_cap, ends_grp_cap;
	int32_t nends_add, ends_add_cap;
	int32_t nends_retime;       /* queues whose history moved */
	int32_t nresv;              /* reservations made this cycle */
	int32_t *owed;              /* blocked jobs whose reservation is made
	                             * only before the next job is tried, or
	                             * by mu_engine_settle() (cycle.c) */
	int32_t nowed, owed_cap;
	uint64_t owed_alloc, owed_release, owed_node; /* state they are for */
	mu_time_t now;              /* time of the current cycle */
	int32_t placing;            /* job being placed, or -1 */
	int64_t move_nodes_left;    /* consolidation's share of this cycle:
	                             * nodes it may still examine (cycle.c
	                             * sets it, preempt.c spends it) */
	struct mu__move *moves;     /* recent moves, for the budget */
	int32_t nmoves, moves_cap;
	int32_t *mvl;               /* (job, pod) pairs re-placed by a move */
	int32_t nmvl, mvl_cap;
	int32_t *relist;            /* victims to put back after the loop */
	int32_t nrelist, relist_cap;
	int32_t *grow;              /* elastic jobs to grow after the loop */
	int32_t ngrow, grow_cap;
	int32_t *txn;               /* pods placed by the current attempt */
	int32_t ntxn, txn_cap;
	/* Score indexes (nodeindex.c): nodes changed, in order; chlog[0] is
	 * change number chlog_base. */
	int32_t *chlog;
	int32_t nchlog, chlog_cap;
	uint64_t chlog_base;
	mu__nfree_t *chlog_prev;    /* by entry: the node's nfree before that
	                             * change (explanations carried forward,
	                             * cycle.c) */
	int32_t chlog_prev_cap;
	uint64_t *expl_seen;        /* by node: stamp of the last carry that
	                             * counted it (cycle.c) */
	int32_t expl_seen_cap;
	uint64_t expl_stamp;
	/* Explanation budget (cycle.c): class nodes that fresh explanations
	 * may still check in this cycle (INT64_MAX outside a cycle), the
	 * budget per cycle (MU__EXPL_BUDGET; tests lower it), the checks made
	 * so far (tests read it).  A job given its last counts again is
	 * marked (j->expl->due) and recounted in a later cycle.
	 * place_searches: node searches for a pod by mu__place_range (tests
	 * read it: jobs known not to fit must not cost one). */
	int64_t expl_left, expl_budget;
	int32_t fcount_min;         /* classes of at least this many nodes are
	                             * explained by fit counts (fitcount.c;
	                             * MU__FCOUNT_MIN, tests lower it) */
	uint64_t expl_checks, place_searches;
	uint64_t carry_reads;       /* changed nodes' records the carries
	                             * applied (cycle.c; tests read it) */
	uint64_t resv_slots;        /* shadow slots the reservations' commit
	                             * visited (backfill.c; tests read it) */
	int32_t nindexes;           /* live indexes over all classes */
	mu__nfree_t *nfree;         /* by node id, kept by mu__node_touch() */
	int32_t nfree_cap;
	bool nfree_off;             /* it could not be kept: do not use it */
	uint64_t idx_clock;         /* LRU clock of the indexes */
	uint64_t share_epoch;       /* bumped when fair shares are set */
	uint64_t fair_gen;          /* bumped when a fair share changed */
	uint64_t qgen;              /* bumped when any queue's usage, running
	                             * jobs, quota, place in the tree or fair
	                             * share moves (memos in preempt.c) */
	bool fair_changed;          /* scratch of mu__fairshare() */
	mu_time_t decay_at;         /* when decayed usage was last updated */
	uint64_t gather_stamp;      /* tags one gather() call (preempt.c) */
	uint64_t pgen_next;         /* last stamp given to a node's pgen */
	struct mu__vsum *vsum;      /* per node: its victim summary (vsum.c) */
	int32_t vsum_cap;
	uint64_t victim_walks;      /* nodes whose pods the victim search
	                             * walked (preempt.c gather()): a count
	                             * that tests read (test_vsum.c) */
	uint64_t work;              /* jobs visited by the walks over a
	                             * queue's running or pending jobs (order,
	                             * victim bounds, demand, ends, gangs'
	                             * victims) and jobs looked up by the
	                             * expected ends' list (ends.c): a count
	                             * of work, not time,
	                             * that tests read (test_work.c) */
	struct mu__affx *aff;       /* pod affinity and spread counts
	                             * (affinity.c); NULL until a job uses
	                             * them: no cost before */
	mu__pool_t *pools;          /* node pools (pools.c) */
	int32_t npools, pools_cap;
	int32_t slot_pool[MU_RES_MAX]; /* pool of a resource slot, -1 */
	int32_t slot_base[MU_RES_MAX]; /* a pool slot's resource (MU_RES_GPU,
	                                * _CPU, _MEM or _PODS) */
	int32_t *escres;            /* escalated jobs of the rule reserve, maybe
	                             * started since (cycle.c prunes them) */
	int32_t nescres, escres_cap;
	int32_t *maxwait;           /* pending jobs with a max wait not yet
	                             * escalated (pools.c) */
	int32_t nmaxwait, maxwait_cap;
};

/* --- Cross-file internals ------------------------------------------------- */

/* Grows an array so that it holds at least need elements. */
int mu__grow(void **v, int32_t *cap, int32_t need, size_t elem);

/* Maps a spec's extended resources onto slots of r; may intern names. */
int mu__map_ext(mu_engine_t *e, const mu_ext_qty_t *ext, size_t n,
		mu_res_t *r);

/* Static classes (cluster.c). */
int mu__sclass_get(mu_engine_t *e, const mu_podset_spec_t *ps, int32_t *id);
/* Makes sure the class's node list is current; O(nodes) when stale. */
int mu__sclass_refresh(mu_engine_t *e, mu__sclass_t *c);

/* Resource fit of one pod of ps on one node: MU_F_COUNT if it fits, else
 * the first failing filter.  O(resources + devices). */
mu_filter_t mu__node_fit(const mu_engine_t *e, const mu__node_t *n,
			 const mu__podset_t *ps);
/* Takes resources and devices for a pod of ps (which must fit) and records
 * them in pod; with exact set, takes exactly the devices already in pod (a
 * rollback restoring it).  give returns them. */
void mu__node_take(mu_engine_t *e, mu__node_t *n, const mu__podset_t *ps,
		   mu__pod_t *pod, bool exact);
void mu__node_give(mu_engine_t *e, mu__node_t *n, const mu__podset_t *ps,
		   mu__pod_t *pod);

/* In-node alignment (align.c). */
/* Builds n->topo from a spec, keeping what bound pods hold. */
int mu__ntopo_set(mu_engine_t *e, mu__node_t *n, const mu_node_topo_spec_t *s);
/* Whether an aligned pod of ps can get its GPUs, NIC, CPUs and memory on
 * one NUMA node (or link group) of n.  O(NUMA nodes x devices). */
bool mu__align_fit(const mu__node_t *n, const mu__podset_t *ps);
/* Chooses the devices (best fit) into pod: gpus, numa, nic, cpus. */
void mu__align_choose(const mu__node_t *n, const mu__podset_t *ps, mu__pod_t *pod);
/* Takes (sign +1) or gives back (-1) pod's NIC, pinned CPUs and NUMA
 * memory; GPUs are handled with the other devices in cluster.c. */
void mu__align_apply(mu__node_t *n, const mu__podset_t *ps, const mu__pod_t *pod,
		     int sign);
void mu__node_view(const mu__node_t *n, mu_node_view_t *v);

/* The share of finished mix m's GPU demand in pods of two or more GPUs
 * (score_frag.c's index), 0 without one.  O(1). */
double mu__mix_multi(const mu_workload_mix_t *m);

/* Cluster-wide GPU supply (supply.c), kept only when the policy reads it
 * (MU_SCORE_SUPPLY).  node_supply adds (sign +1) or takes out (-1) node
 * n's contribution, nothing for a removed or unschedulable node: callers
 * take it out before they change n's devices, model or state and add it
 * back after.  O(devices). */
void mu__supply_apply(mu_engine_t *e, const mu__node_t *n, int sign);
/* Whether e keeps the supply: one flag test, inline, so that the policies
 * that do not read it pay no call. */
static inline bool mu__supply_kept(const mu_engine_t *e)
{
	return e && e->score && (e->score->flags & MU_SCORE_SUPPLY);
}
static inline void mu__supply_node(mu_engine_t *e, const mu__node_t *n, int sign)
{
	if (mu__supply_kept(e))
		mu__supply_apply(e, n, sign);
}
/* Points n->sslot at its model's entry, adding one for a new model; call
 * with n's contribution out.  MU_ENOMEM.  O(models). */
int mu__supply_slot(mu_engine_t *e, mu__node_t *n);
/* The supply a score context carries: NULL unless the policy reads it. */
static inline const mu_supply_t *mu__supply_ctx(const mu_engine_t *e)
{
	return mu__supply_kept(e) ? &e->supply : NULL;
}

/* The devices per model (gpumodels.c), which every engine keeps.
 * mu__gpu_models_node takes node n's devices out (sign -1: callers do it
 * before they change n's devices, model or state) or adds them (+1: after;
 * nothing for a removed or unschedulable node) and marks the pressure
 * stale when a count moved.  MU_ENOMEM for a model not seen before.
 * O(models). */
int mu__gpu_models_node(mu_engine_t *e, mu__node_t *n, int sign);
/* One value of the GPU memory label: interned, as MiB, and the live GPU
 * nodes that carry it. */
typedef struct mu__gpumem {
	const char *label;
	int64_t mib;
	int32_t nodes;
} mu__gpumem_t;
/* (gpumodels.c) Takes node n out of e->gmem (sign < 0) or counts it under
 * its label value `label` (interned, or NULL: none), when it has GPUs and
 * is not removed (sign > 0).  MU_ENOMEM.  O(label values). */
int mu__gpu_mem_node(mu_engine_t *e, mu__node_t *n, const char *label, int sign);
/* (gpumodels.c) The smallest GPU memory (MiB) among the live GPU nodes'
 * label values that holds mib, 0 when none; *label its value (untouched
 * when none).  Equal amounts written two ways: the value seen first.
 * O(label values). */
int64_t mu__gpu_mem_best(const mu_engine_t *e, int64_t mib, const char **label);

/* (score_frag.c) Brings e->gmodels.press up to date with the devices and the policy's
 * mix before the engine scores; when a pressure changed, the scores the
 * engine cached are dropped (mu_engine_rescore).  O(1) when nothing
 * moved, else O(shapes x models). */
void mu__gpu_models_sync(mu_engine_t *e);
/* Finished mix m's pressure per model of g (score_frag.c; g->press, and
 * g->pressed when one is above 0), the devices of a model m names added
 * up as m's.
 * O(shapes x models). */
void mu__mix_press_models(const mu_workload_mix_t *m, mu_gpu_models_t *g);

/* The interned value of label key on node n, or -1. */
int32_t mu__node_label(const mu__node_t *n, int32_t key);
/* Compiles a node-selector term (cluster.c); MU_EINVAL for a bad Gt/Lt
 * value, MU_ENOMEM.  On error ct may hold allocations:
 * mu__selterm_free() frees them. */
int mu__selterm_fill(mu_engine_t *e, mu__selterm_t *ct, const mu_sel_term_t *st);
void mu__selterm_free(mu__selterm_t *ct);
/* Whether node n matches term t (an empty term matches nothing). */
bool mu__selterm_match(const mu_engine_t *e, const mu__selterm_t *t,
		       const mu__node_t *n);
/* Whether n passes c's node selector and required node affinity. */
bool mu__sclass_node_affine(const mu_engine_t *e, const mu__sclass_t *c,
			    const mu__node_t *n);
/* The first static filter (cordon, selector, affinity, taints, model) n
 * fails for class c, or MU_F_COUNT. */
mu_filter_t mu__sclass_node_check(const mu_engine_t *e, const mu__sclass_t *c,
				  const mu__node_t *n);
/* Whether c tolerates n's NoSchedule and NoExecute taints. */
bool mu__sclass_node_tolerates(const mu__sclass_t *c, const mu__node_t *n);


/* Topology (topo.c). */
/* Rebuilds t's domains when nodes' static facts changed.  O(nodes x levels). */
int mu__topo_refresh(mu_engine_t *e, mu__topo_t *t);
/* Adds a node's free-vector change to its domains.  O(topologies x levels). */
void mu__topo_node_delta(mu_engine_t *e, int32_t nid, const mu_res_t *before);
void mu__topo_release(mu__topo_t *t);
/* Resolves a job spec's constraint into j; MU_ENOENT / MU_EINVAL. */
int mu__topo_resolve(mu_engine_t *e, const mu_topo_req_t *rq, mu__job_t *j);

/* Queues (queue.c). */
void mu__queue_add_used(mu_engine_t *e, int32_t q, const mu_res_t *acct,
			int sign, bool preemptible);
int mu__queue_pending_insert(mu_engine_t *e, int32_t job);
/* Fills slot jid of e->jobs (grown by the caller) from spec s: checks it,
 * resolves its queue, pod sets, classes and topology; nothing is listed or
 * named.  On error the slot holds nothing.  O(pod sets + pods). */
int mu__job_build(mu_engine_t *e, int32_t jid, const mu_job_spec_t *s,
		  mu_time_t now);
/* Frees what mu__job_build() allocated in j and lets go of the shared
 * vectors it held in e.  O(pod sets + flavors). */
void mu__job_unbuild(mu_engine_t *e, mu__job_t *j);
/* Job j's last reason, all zeros when it has none.  O(1). */
mu_reason_t mu__job_last(const mu__job_t *j);
/* Sets it to *r (allocated on first use): MU_OK or MU_ENOMEM, and on
 * error it is unchanged.  O(1). */
int mu__job_last_set(mu__job_t *j, const mu_reason_t *r);
/* Drops it (a running job's reason is all zeros), and its fit
 * explanation (j->expl) with it.  O(1). */
void mu__job_last_clear(mu__job_t *j);
void mu__queue_pending_remove(mu_engine_t *e, int32_t job);
/* The queue at its limit if acct were added to q, or -1; fills r. */
int32_t mu__queue_limit_check(const mu_engine_t *e, int32_t q,
			      const mu_res_t *acct, mu_reason_t *r);
/* The queue whose deserved quota non-preemptible usage would pass if acct
 * were added to q, or -1: a non-preemptible job uses in-quota resources
 * only, in its queue and every ancestor (only the resources of acct's
 * dominance slot count).  On a hit fills r's why (MU_WHY_OVER_QUOTA) and
 * limit fields.  O(depth x resources). */
int32_t mu__queue_quota_check(const mu_engine_t *e, int32_t q,
			      const mu_res_t *acct, mu_reason_t *r);
/* Order key of a queue among its siblings: lower is served first. */
double mu__queue_share(const mu_engine_t *e, const mu__queue_t *q);

/* Binds pod of j to node nid.  With was set it takes exactly its devices
 * (a rollback restoring a pod), else it picks them. */
int mu__pod_bind(mu_engine_t *e, mu__job_t *j, int32_t pod, int32_t nid,
		 const mu__pod_t *was);
void mu__pod_release(mu_engine_t *e, mu__job_t *j, int32_t pod,
		     bool capacity_grew);
int32_t mu__pod_podset(const mu__job_t *j, int32_t pod);
/* Running-list bookkeeping on state changes. */
int mu__job_set_running(mu_engine_t *e, int32_t jid, mu_time_t now);
void mu__job_set_pending(mu_engine_t *e, int32_t jid);
/* A set of candidate nodes (a topology domain's); NULL means all. */
typedef struct mu__scope {
	const int32_t *nodes;
	int32_t n;
} mu__scope_t;

/* Pod affinity, anti-affinity, topology spread (affinity.c). */
/* Fills p's labels, namespace and terms from spec ps of job spec s;
 * MU_EINVAL / MU_ERANGE for bad terms.  Sets j->aff when it has terms. */
int mu__aff_podset_build(mu_engine_t *e, mu__job_t *j, mu__podset_t *p,
			 const mu_podset_spec_t *ps, const mu_job_spec_t *s);
void mu__aff_podset_free(mu__podset_t *p);
void mu__aff_free(mu_engine_t *e);
/* Counts pod `pod` of j bound to (sign +1) or released from (-1) node nid
 * in every count that matches it.  O(its labels + counts it matches). */
void mu__aff_pod(mu_engine_t *e, const mu__job_t *j, int32_t pod, int32_t nid,
		 int sign);
/* Whether placing a pod of ps needs affinity.c: it has terms, or a bound
 * pod's terms select it.  O(its labels) when counts exist, else O(1). */
bool mu__aff_involved(mu_engine_t *e, const mu__podset_t *ps);
/* The best node for one pod of ps among class c's nodes (or scope sc's),
 * honouring its terms, as mu__best_node_in(); -1 none; -3 out of memory.
 * With r set, fills r->fail per node instead (explain).  O(nodes). */
int32_t mu__aff_best_node(mu_engine_t *e, mu__sclass_t *c, const mu__podset_t *ps,
			  const mu__scope_t *sc, mu_reason_t *r);
/* Whether one pod of ps may go on nid as its terms stand.  O(terms). */
bool mu__aff_node_ok(mu_engine_t *e, mu__sclass_t *c, const mu__podset_t *ps,
		     int32_t nid);
/* The other nodes, up to max into out, that share with nid a domain of a
 * required anti-affinity term whose topology key is wider than a node (a
 * zone) and hold pods of that term: ps's own terms (the nodes with pods
 * the term selects), and the terms bound pods carry that select ps
 * (symmetry: the nodes of the domain with pods).  Where victims for ps on
 * nid may also be.  O(terms + carried terms), plus O(nodes) for a term
 * whose domain holds such pods on other nodes. */
int32_t mu__aff_anti_peers(mu_engine_t *e, const mu__podset_t *ps, int32_t nid, int32_t *out,
			   int32_t max);

/* Score indexes (nodeindex.c). */
/* Whether node nid surely has no room for req, by e->nfree.  O(1). */
static inline bool mu__nfree_no(const mu_engine_t *e, int32_t nid, const mu_res_t *req)
{
	return !e->nfree_off && nid < e->nfree_cap && !mu__nfree_fits(&e->nfree[nid], req);
}

/* Whether a pod of ps fits on node nid: mu__node_fit() == MU_F_COUNT, from
 * e->nfree alone when no named resource or alignment is involved.  O(1)
 * then, else O(resources + devices). */
static inline bool mu__fits(const mu_engine_t *e, int32_t nid, const mu__podset_t *ps)
{
	if (mu__nfree_no(e, nid, ps->req))
		return false;
	if (!e->nfree_off && nid < e->nfree_cap && !ps->aligned && e->nres <= MU_RES_NAMED0)
		return true;
	return mu__node_fit(e, &e->nodes[nid], ps) == MU_F_COUNT;
}

/* Notes that node nid's free resources changed: bumps its version and logs
 * it for the indexes.  O(1) amortized. */
void mu__node_touch(mu_engine_t *e, int32_t nid);
/* The net changes of a class's nodes over a stretch of the change log
 * (cdelta.c): for each class node whose compact record at log position
 * `from` differs from its record now, both records (v[i].was, v[i].now).
 * A node that changed and changed back (a pod taken and given back) is
 * left out: it moves no count.  Kept per
 * user (a carry, a fit count) and reused while the class, `from` and the
 * log's end are the same. */
typedef struct mu__cpair {
	mu__nfree_t was, now;
} mu__cpair_t;
typedef struct mu__cdelta {
	uint64_t gen, from, to; /* class gen, log stretch [from, to) */
	mu__cpair_t *v;
	int32_t n, cap;
	bool built;
} mu__cdelta_t;
/* Brings d to class c's net changes since log position from (at least
 * e->chlog_base) up to the log's end, rebuilding it unless it is that
 * already.  Returns d, or NULL out of memory (the caller reads the log).
 * O(1) when reused, else O(log entries since from). */
const mu__cdelta_t *mu__cdelta(mu_engine_t *e, const mu__sclass_t *c, mu__cdelta_t *d,
			       uint64_t from);
/* Frees what d holds (not d). */
void mu__cdelta_release(mu__cdelta_t *d);
/* The best node of class c (refreshed) for one pod of ps, from the index
 * of its request shape; -2 when the caller must scan instead (out of
 * memory, or many top nodes held by reservations).  Only for policies
 * without MU_SCORE_RANDOM.  O(changes since last use x log nodes). */
int32_t mu__best_node_indexed(mu_engine_t *e, mu__sclass_t *c,
			      const mu__podset_t *ps);
void mu__sclass_index_release(mu__sclass_t *c);

/* Fit trees (fittree.c), for policies with MU_SCORE_PACKS or _SPREADS. */
typedef struct mu__ftree mu__ftree_t;
/* Whether node nid may take a pod of ps (the caller's fit test). */
typedef bool (*mu__ftree_ok_fn)(mu_engine_t *e, int32_t nid, const mu__podset_t *ps);
/* The best node of class c (refreshed) for one pod of ps among those ok
 * accepts, exactly as a scan would choose it; -2 when the tree cannot be
 * used (out of memory, or more than 32 node capacities in the class).
 * O(log n) per node visited.  fittree.c calls nothing of the engine but
 * ok and the policy, so that it stays outside the core's loop. */
int32_t mu__ftree_best(mu_engine_t *e, mu__sclass_t *c, const mu__podset_t *ps,
		       mu__ftree_ok_fn ok);
/* The change-log position tree f still needs (UINT64_MAX: none). */
uint64_t mu__ftree_pos(const mu__ftree_t *f);
void mu__ftree_free(mu__ftree_t *f);

/* Fit counts (fitcount.c): adds to fail[] the class nodes of c (refreshed)
 * that fail each filter first for req by their compact records
 * (mu__nfree_filter), and sets *fit to those that fail none, exactly as a
 * scan of c's nodes would; a k-d tree snapshot of c, corrected by the
 * change log.  Returns MU_OK, or an error when it cannot answer (no change
 * log, a node without a record, out of memory): the caller scans.  O(nodes
 * near req's boundary + changes since the snapshot), O(n log n) when it
 * rebuilds. */
typedef struct mu__fcount mu__fcount_t;
int mu__fcount(mu_engine_t *e, mu__sclass_t *c, const mu_res_t *req,
	       int32_t fail[MU_F_COUNT], int32_t *fit);
void mu__fcount_free(mu__fcount_t *f);
/* The change-log position of f's snapshot (UINT64_MAX: none). */
uint64_t mu__fcount_pos(const mu__fcount_t *f);
/* Classes of fewer nodes are explained by a scan (cycle.c). */
#define MU__FCOUNT_MIN 512

/* The best node of class c for one pod, or -1.  O(class nodes). */
int32_t mu__best_node(mu_engine_t *e, mu__sclass_t *c,
		      const mu__podset_t *ps);
/* The same among the scope's nodes that are in class c.  O(scope). */
int32_t mu__best_node_in(mu_engine_t *e, mu__sclass_t *c,
			 const mu__podset_t *ps, const mu__scope_t *sc);
/* Places unbound pods [p0, p1) of j within sc, logged in e->txn. */
int32_t mu__place_range(mu_engine_t *e, mu__job_t *j, int32_t p0, int32_t p1,
			const mu__scope_t *sc, mu_reason_t *r);
/* Releases the pods placed after the first `keep` entries of e->txn. */
void mu__txn_truncate(mu_engine_t *e, mu__job_t *j, int32_t keep);
/* Whether every pod set of j with a minimum of its own (a part of the
 * gang) has at least that many pods bound.  When one has not and r is not
 * NULL, names it in r (part, part_needed, part_fit).  O(1) for a job
 * without parts, else O(pods). */
bool mu__parts_ok(const mu_engine_t *e, const mu__job_t *j, mu_reason_t *r);
/* Places j under its topology constraint (topoplace.c). */
int32_t mu__place_topo(mu_engine_t *e, mu__job_t *j, int32_t need,
		       mu_reason_t *r);
/* The next pseudo-random 64 bits of the engine's stream. */
uint64_t mu__random(mu_engine_t *e);
int mu__dec_push(mu_decisions_t *out, const mu_decision_t *d);

/* The resources that decide quota questions for a job: GPUs when it asks
 * for GPUs (GPU-dominant), else CPU and memory. */
static inline bool mu__dom_res(bool gpu_job, int r)
{
	return gpu_job ? r == MU_RES_GPU : (r == MU_RES_CPU || r == MU_RES_MEM);
}

/* The dominant resources of a claim, as a bit mask of slots: the pool's
 * GPU slot for GPUs claimed in a pool (flavor fallback), MU_RES_GPU for
 * other GPUs; for a claim without GPUs its CPU and memory, in the slots of
 * the pool it is claimed in where that pool has them (cluster.c).
 * O(pools). */
int mu__dom_slot(const mu_engine_t *e, const mu_res_t *claim);
/* Whether slot r is one of the dominant resources dom (mu__dom_slot()). */
static inline bool mu__dom_is(int dom, int r)
{
	return r >= 0 && r < 31 && ((unsigned)dom >> r & 1u);
}
/* The base resource of pool resource k (mu_pool_res_t). */
static inline int mu__pool_base(int k)
{
	static const int base[MU_POOL_NRES] = {MU_RES_GPU, MU_RES_CPU, MU_RES_MEM,
					       MU_RES_PODS};
	return base[k];
}
/* A pod's accounting on node nid: its pod set's, plus its GPUs in the
 * slot of the node's pool when the pod set does not name it already. */
mu_res_t mu__pod_acct(const mu_engine_t *e, const mu__podset_t *ps, int32_t nid);
/* The accounting units of job j's bound pods: the sum of mu__pod_acct()
 * over them, what their releases will give back (not kept in the record:
 * 128 bytes a job).  O(pods). */
mu_res_t mu__job_acct_bound(const mu_engine_t *e, const mu__job_t *j);
/* The pool of a node spec's labels (first match), -1 none, or -2 when it
 * matches two.  O(pools x labels). */
int32_t mu__pool_of(const mu_engine_t *e, const mu__node_t *n);
/* Frees pool pl's selector (matchLabels and matchExpressions; cluster.c,
 * so that engine.c and pools.c both call it without a loop). */
void mu__pool_sel_free(mu__pool_t *pl);
/* Moves n into pool np (or none, -1): totals and pool counts follow. */
void mu__pool_move(mu_engine_t *e, mu__node_t *n, int32_t np);
/* Sets job j's pod sets to flavor f (its classes and accounting). */
void mu__flav_set(mu_engine_t *e, mu__job_t *j, int32_t f);
/* Whether j's claim in its current flavor stays within the deserved quota
 * of its pool, in its queue and every ancestor. */
bool mu__flav_within(const mu_engine_t *e, const mu__job_t *j);
/* Builds j's flavors from spec s (queue.c calls it after the pod sets). */
int mu__flav_build(mu_engine_t *e, mu__job_t *j, const mu_job_spec_t *s);
void mu__flav_free(mu_engine_t *e, mu__job_t *j);
/* Escalates the pending jobs whose maximum wait passed by now. */
int mu__maxwait_check(mu_engine_t *e, mu_time_t now);
/* Notes a pending job with a maximum wait (at submit). */
int mu__maxwait_note(mu_engine_t *e, int32_t jid);
/* order.c: raises j's priority by MU_ESCALATE_BOOST and re-sorts its queue. */
void mu__order_escalate(mu_engine_t *e, int32_t jid);

/* Expected ends of running pods (ends.c). */
typedef struct mu__end {
	mu_time_t t;      /* start + estimate (may be before now) */
	mu_time_t start;  /* the job's start (kept by mu__ends_restart) */
	uint64_t tie;     /* order among equal t: given at creation and at
	                   * each re-timing, in list order */
	int32_t job, pod;
	uint32_t id;      /* matches the pod's end_id while current */
	int32_t node;     /* where the pod was bound when the entry was made
	                   * (while current, where it is) */
	int32_t queue;    /* the job's queue and shape bucket, so that a */
	int16_t bucket;   /* re-timing needs no look-up of the job */
	bool fixed;       /* declared estimate or limit: never re-timed */
} mu__end_t;

/* Brings e->ends up to date: sorted by t, every bound pod of a running
 * job listed; may hold stale entries (see mu__end_valid).  O(R + A log A)
 * for A changes, O(R log R) the first time. */
int mu__ends_build(mu_engine_t *e);
bool mu__end_valid(const mu_engine_t *e, const mu__end_t *ev);
/* Queues a bound pod for the list.  O(1). */
void mu__ends_note_bind(mu_engine_t *e, int32_t job, int32_t pod);
/* Notes that queue q's run-time history moved.  O(1). */
void mu__ends_history(mu_engine_t *e, int32_t q);
/* Notes that running job jid restarted (a move): its entries' start
 * follows.  O(entries), rare. */
void mu__ends_restart(mu_engine_t *e, int32_t jid);

/* Runtime estimates and reservations (backfill.c). */
/* Whether j holds a reservation made this cycle. */
static inline bool mu__job_reserved(const mu_engine_t *e, const mu__job_t *j)
{
	return j->resv_stamp == e->cycle_stamp;
}
/* The shape a job's run time is remembered under: log2 of its GPUs. */
int32_t mu__shape_bucket(const mu__job_t *j);
mu_time_t mu__job_estimate(const mu_engine_t *e, const mu__job_t *j,
			   mu_estimate_src_t *src);
/* The estimate of a job of queue q and shape bucket b that declares no run
 * time or limit (history, else the default).  O(1). */
mu_time_t mu__queue_estimate(const mu_engine_t *e, int32_t q, int32_t b,
			     mu_estimate_src_t *src);
void mu__history_add(mu_engine_t *e, const mu__job_t *j, mu_time_t ran);
/* Drops j's link to the reservation it backfilled (it stopped running). */
void mu__backfill_forget(mu_engine_t *e, mu__job_t *j);
/* Whether job j may use node nid without delaying a reservation there;
 * O(1). */
bool mu__resv_allows(const mu_engine_t *e, const mu__job_t *j, int32_t nid,
		     const mu__podset_t *ps);
/* Accounts a bind of a pod of ps of j on nid against the reservation. */
void mu__resv_note_bind(mu_engine_t *e, mu__job_t *j, int32_t nid,
			const mu__podset_t *ps);
/* Makes the reservations owed so far this cycle (cycle.c); callers do it
 * before placing pods or evicting under them. */
int mu__resv_settle(mu_engine_t *e);
/* Reserves for blocked job jid: when and where it should start.
 * O(running pods + class nodes log). */
int mu__resv_make(mu_engine_t *e, int32_t jid);
/* When job j's reservation would be due, node by node (the same replay
 * as mu__resv_make: its class's nodes less this cycle's reservations, as
 * running pods end), without reserving anything: *at, MU_TIME_NONE for
 * never.  For a probe (whatif.c).  MU_ENOMEM.  O(running pods + class
 * nodes). */
int mu__resv_start(mu_engine_t *e, const mu__job_t *j, mu_time_t *at);
/* When a pending job should start: its reservation, else the first
 * expected end after which enough is free in aggregate (reserved jobs go
 * first); MU_TIME_NONE if never.  O((running + pending) log running): for
 * queries, not for every cycle. */
mu_time_t mu__expected_start(const mu_engine_t *e, const mu__job_t *j);

/* Emits the binds logged in e->txn for job jid (cycle.c). */
int mu__job_commit(mu_engine_t *e, int32_t jid, mu_decisions_t *out);

/* Elastic growth in turns (queue.c).  mu__elastic_cap(): the end of the
 * pod range an elastic job places when tried (its first `need` unbound
 * pods; every pod for other jobs).  mu__elastic_note(): after an admitted
 * try, remembers a job that still has pods to grow.  mu__elastic_grow():
 * at the end of the cycle, hands the remembered jobs one pod at a time,
 * always to the one whose queue has the lowest dominant share. */
int32_t mu__elastic_cap(const mu_engine_t *e, const mu__job_t *j, int32_t need);
int mu__elastic_note(mu_engine_t *e, int32_t jid);
int mu__elastic_grow(mu_engine_t *e, mu_decisions_t *out);

/* Consolidation (preempt.c): moves preemptible pods so jid fits. */
int mu__consolidate_try(mu_engine_t *e, int32_t jid, mu_time_t now,
			mu_reason_t *r, mu_decisions_t *out, bool *placed);

/* Job order policies (order.c). */
/* Recomputes effective priorities and re-sorts pending lists when the
 * order is dynamic.  O(active jobs + pending log pending). */
void mu__order_refresh(mu_engine_t *e);
/* The effective priority of j under the configured order. */
int32_t mu__order_eprio(const mu_engine_t *e, const mu__job_t *j);
/* Adds the GPU time of j's current run to its attained service. */
void mu__order_stop(mu_engine_t *e, mu__job_t *j, mu_time_t now);
/* Notes that jid started, stopped or restarted, for the next refresh. */
void mu__order_touch(mu_engine_t *e, int32_t jid);
/* True if job a is served before job b in their queue. */
bool mu__job_before(const mu_engine_t *e, int32_t a, int32_t b);
/* Whether the order lets running job v, of lower effective priority in
 * j's queue, be preempted by j at now: always for a lower priority; for a
 * lower MU_ORDER_JCT level only past its minimum run and preemption cap.
 * Lowers *retry to when a refused v turns eligible.  O(1). */
bool mu__order_victim_ok(const mu_engine_t *e, const mu__job_t *v,
			 const mu__job_t *j, mu_time_t now, mu_time_t *retry);
/* j's attained-service level (0 = least served) under the order of its
 * queue; 0 when the order has no levels.  O(levels). */
int32_t mu__order_level(const mu_engine_t *e, const mu__job_t *j);

/* Fair share (fairshare.c): demand and fair share of every queue, top
 * down.  O(queues log queues + pending jobs). */
int mu__fairshare(mu_engine_t *e, mu_time_t now);

/* Preemption and reclaim (preempt.c): tries to place job jid by evicting
 * victims; on success commits evictions and binds into out and returns
 * MU_OK with *placed set. */
int mu__preempt_try(mu_engine_t *e, int32_t jid, mu_time_t now,
		    mu_reason_t *r, mu_decisions_t *out, bool *placed);
/* Preemption to fit under a limit: jid's queue path would exceed a limit,
 * so lower-priority jobs of its own queue may make room under it (and on
 * a node).  Same contract as mu__preempt_try(). */
int mu__preempt_limit_try(mu_engine_t *e, int32_t jid, mu_time_t now,
			  mu_reason_t *r, mu_decisions_t *out, bool *placed);

/* --- Victim summaries (vsum.c) ------------------------------------------- */

/* What a node's running, preemptible jobs ("candidates": the only jobs
 * any claimant may evict) hold there, independent of the claimant.  It
 * lets the victim search skip a node without walking its pods, when even
 * the best plan the summary allows cannot fit or cannot beat the best
 * plan found so far.  Valid while pgen is the node's pgen. */
typedef struct mu__vsum {
	uint64_t pgen;        /* the node's pgen when computed; 0 never */
	mu_time_t min_start;  /* earliest start of a running job here
	                       * (any), INT64_MAX none: gather()'s */
	mu_time_t max_start;  /* latest start of a candidate */
	int64_t devsum;       /* whole devices all candidates could free */
	int64_t gmin;         /* fewest accounting GPUs one candidate
	                       * eviction (a whole job, or one surplus pod)
	                       * takes */
	int32_t ncand;        /* candidate jobs */
	int32_t maxdev;       /* most devices one candidate could free */
	int32_t minprio;      /* lowest effective priority of a candidate */
	int32_t maxprio;      /* highest priority (as submitted) of one */
	int32_t queue;        /* the candidates' one queue, or -1 (mixed) */
	bool surplus;         /* a candidate may lose single pods (elastic) */
} mu__vsum_t;

/* Marks that the pods on n changed (bind, release, a job's start or
 * stop): its summary is stale. */
static inline void mu__node_dirty(mu_engine_t *e, mu__node_t *n)
{
	n->pgen = ++e->pgen_next;
}
/* Marks stale every node where job j has a bound pod. O(j's pods). */
static inline void mu__vsum_touch_job(mu_engine_t *e, const mu__job_t *j)
{
	for (int32_t p = 0; p < j->npods; p++)
		if (j->pods[p].node >= 0)
			mu__node_dirty(e, &e->nodes[j->pods[p].node]);
}
/* Node nid's summary, recomputed first when stale (O(pods on nid)); NULL
 * when memory ran out (the caller walks the node instead).  The engine
 * owns it; valid until the next change of the engine. */
const mu__vsum_t *mu__vsum_get(mu_engine_t *e, int32_t nid);

#endif
