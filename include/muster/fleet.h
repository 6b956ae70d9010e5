/*
 * fleet.h - the second level: a fleet of clusters, hub queues across
 * them, and the decision of when and where each job goes.
 *
 * A fleet holds clusters; each cluster is a domain modelled by its own
 * mu_engine_t (nodes, GPU models, topology), told about the jobs the fleet
 * sent there.  Jobs are submitted to the hub and wait in hub queues with
 * muster's semantics (deserved quota, over-quota weight, limits,
 * priorities) applied to the fleet's total usage, with optional caps per
 * cluster.  mu_fleet_dispatch() walks the hub queues in fair-share order
 * and sends a job only to a cluster where its gang fits now, node by node
 * (mu_engine_job_whatif()); a job that fits nowhere stays queued holding no
 * quota, with a reason.  Candidate clusters are ranked, in order, by the
 * job's cluster selector (a filter) and data-locality labels (preferred),
 * private before edge before public (public only after the burst wait, or
 * for a priority class), then the tightest fit.
 *
 * Like the engine, the fleet does no I/O and reads no clock: `now` is an
 * argument.  The daemon (`muster dispatch`), the evaluation and the bench
 * drive it with events.  Hub queues keep non-preemptible jobs within
 * deserved and decay usage as the engine does, and mu_fleet_reclaim()
 * takes room back across clusters by the engine's reclaim rules.  A
 * job whose pods claim DRA devices goes only where load's allocator
 * (dra.h) gives every pod its devices on the node the model chose
 * (mu_fleet_cluster_dra()).
 * (src/fleet: fleet.c, hubq.c, place.c, reclaim.c, explain.c, dra.c)
 */
#ifndef MUSTER_FLEET_H
#define MUSTER_FLEET_H

#include <jansson.h>

#include "muster/engine.h"

typedef struct mu_fleet mu_fleet_t;

typedef enum mu_tier {
	MU_TIER_PRIVATE = 0,
	MU_TIER_EDGE = 1,
	MU_TIER_PUBLIC = 2,
} mu_tier_t;

/* "private", "edge", "public"; parse: MU_EINVAL for anything else. */
const char *mu_tier_name(mu_tier_t t);
int mu_tier_parse(const char *s, mu_tier_t *out);

typedef enum mu_cluster_state {
	MU_CLUSTER_READY = 0,
	MU_CLUSTER_UNREACHABLE = 1, /* no new jobs; its jobs stay, for now */
	MU_CLUSTER_DRAINING = 2,    /* no new jobs; its jobs run out */
} mu_cluster_state_t;

const char *mu_cluster_state_name(mu_cluster_state_t s);

typedef struct mu_cluster_spec {
	const char *name;
	mu_label_t *labels;     /* region, provider, data sets... (copied) */
	size_t nlabels;
	mu_tier_t tier;
	double cost_gpu_hour;   /* price of one GPU-hour, >= 0 */
	bool no_shrink;         /* the caller cannot take pods off its copies
	                         * there (a pull-mode worker, round 17):
	                         * mu_fleet_reclaim() takes its jobs whole */
} mu_cluster_spec_t;

typedef struct mu_fleet_config {
	mu_time_t burst_after;  /* a job may go to a public cluster once it
	                         * has waited this long (default 10 min) */
	int32_t burst_priority; /* ... or at once from this priority on
	                         * (default INT32_MAX: never at once) */
	const mu_score_ops_t *score; /* each cluster's placement (binpack) */
	int32_t max_tries;      /* what-ifs per job per pass (0: all) */
	mu_time_t usage_half_life; /* time-decayed fairness, as the engine's
	                         * usage_half_life: every hub queue's usage
	                         * averaged with this half-life lowers its
	                         * over-quota weight by the engine's factor;
	                         * 0 = off (the default) */
	mu_time_t min_runtime;  /* mu_fleet_reclaim(): a job runs this long
	                         * before it can be a victim (the engine's
	                         * default, 60 s) */
	mu_time_t reclaim_hold; /* mu_fleet_reclaim(): the cluster a claimant
	                         * took room on is held for it (no other job
	                         * of its priority or lower is placed there:
	                         * kube-scheduler's nominated pods) until it
	                         * is placed, is
	                         * finished, no longer fits once its victims
	                         * are gone, or this long has passed (default
	                         * 5 min, the dispatcher's --start-timeout);
	                         * 0: not held */
	mu_time_t reclaim_cooldown; /* mu_fleet_reclaim(): a hub queue loses
	                         * jobs to reclaim at most once per this long
	                         * (the engine's reclaim_cooldown; default 0);
	                         * not for preemption inside a queue */
} mu_fleet_config_t;

void mu_fleet_config_defaults(mu_fleet_config_t *cfg);

/* Creates an empty fleet; cfg may be NULL.  The caller frees it. */
int mu_fleet_new(const mu_fleet_config_t *cfg, mu_fleet_t **out);
void mu_fleet_free(mu_fleet_t *f);
/* Changes the priority from which jobs may go to public clusters at once
 * (cfg.burst_priority; the daemon sets it from a PriorityClass read on the
 * hub).  Jobs that failed are tried again.  O(1). */
void mu_fleet_set_burst_priority(mu_fleet_t *f, int32_t p);

/* --- Clusters and their nodes ------------------------------------------- */

/* Adds a cluster (MU_EEXIST for a name in use, MU_EINVAL for a bad spec,
 * MU_ELIMIT past MU_FLEET_MAX_CLUSTERS); *id is its index. */
#define MU_FLEET_MAX_CLUSTERS 4096
int mu_fleet_cluster_add(mu_fleet_t *f, const mu_cluster_spec_t *c, int32_t *id);
/* Replaces cluster id's labels, tier and price with c's (c->name is not
 * read; the model and the jobs on it stay).  MU_ENOENT, MU_EINVAL for a
 * bad spec (nothing changed), MU_ENOMEM.  O(labels). */
int mu_fleet_cluster_update(mu_fleet_t *f, int32_t id, const mu_cluster_spec_t *c);
int32_t mu_fleet_cluster_find(const mu_fleet_t *f, const char *name);
int32_t mu_fleet_nclusters(const mu_fleet_t *f);
/* Ready, unreachable or draining; only ready clusters get new jobs. */
int mu_fleet_cluster_set_state(mu_fleet_t *f, int32_t c, mu_cluster_state_t s);
/* Sets cluster c's label key to value (a copy), or removes it (value
 * NULL), for selectors read after it (e.g. the kinds a worker serves, found
 * by discovery); jobs it kept out are tried again.  O(labels). */
int mu_fleet_cluster_set_label(mu_fleet_t *f, int32_t c, const char *key, const char *value);
/* The cluster's model, to feed nodes and topologies into (through
 * mu_fleet_node_upsert() so the fleet sees capacity change) and to read. */
const mu_engine_t *mu_fleet_cluster_engine(const mu_fleet_t *f, int32_t c);

int mu_fleet_node_upsert(mu_fleet_t *f, int32_t c, const mu_node_spec_t *n);
/* The same for a node where pods the fleet did not send already run (made
 * on the worker directly, or by another hub): used (pod requests summed,
 * whole GPUs; NULL or zero: none) is taken from n's allocatable slot by
 * slot, at least 0, so the model sees only the room left.  "Too big" still
 * reads n's whole allocatable.  The GPU count cannot drop below a device
 * the fleet's own jobs hold in the model; it drops as far as it can (the
 * rest is counted once they end and the node is upserted again).
 * O(one node upsert x GPUs at worst). */
int mu_fleet_node_upsert_used(mu_fleet_t *f, int32_t c, const mu_node_spec_t *n,
			      const mu_res_t *used);
/* A share of one GPU that pods the fleet did not send hold on a node
 * (round 13): KAI's gpu-fraction, a muster.io/gpu-milli request, or the
 * share muster's scheduler recorded at the bind. */
typedef struct mu_fleet_share {
	int32_t device;         /* the device it is on (muster.io/gpus), or
	                         * -1: not named (the model picks one) */
	int32_t milli;          /* milli-GPU taken there, 1..999 */
} mu_fleet_share_t;
/* mu_fleet_node_upsert_used() plus the shares held on n's devices: used
 * counts whole GPUs only (and every pod, shares included, less one per
 * share: each share is one pod in the model), and each share takes only
 * its milli-GPU of its device in the model, by the engine's own device
 * accounting (mu_engine_pod_bound(): the named device when it has the
 * room, else the device the engine's cycle would choose, none when no
 * device has it), so a job asking a share fits on the room left, as the
 * worker's scheduler places it.  The node's earlier shares are replaced.
 * MU_EINVAL for a share out of range (nothing changed).  O(upsert +
 * shares of the cluster + shares x GPUs). */
int mu_fleet_node_upsert_shared(mu_fleet_t *f, int32_t c, const mu_node_spec_t *n,
				const mu_res_t *used, const mu_fleet_share_t *shares,
				int32_t nshares, mu_time_t now);
int mu_fleet_node_remove(mu_fleet_t *f, int32_t c, const char *name,
			 mu_time_t now);
int mu_fleet_topology_upsert(mu_fleet_t *f, int32_t c,
			     const mu_topology_spec_t *t);
/* Cluster c's DRA objects (resource.k8s.io, round 14): its ResourceSlices,
 * DeviceClasses, ResourceClaims (the devices their status.allocation names
 * are in use) and Nodes (metadata.name and labels, matched by slices' node
 * selectors), each a JSON array or NULL (none); a reference to each is
 * taken and the earlier ones dropped.  A job with claims (the spec's dra)
 * goes to c only where the load allocator (dra.h) gives every pod's claims
 * devices on the node the model puts the pod on.  Jobs that failed are
 * tried again.  MU_ENOENT.  O(1). */
int mu_fleet_cluster_dra(mu_fleet_t *f, int32_t c, json_t *slices, json_t *classes,
			 json_t *claims, json_t *nodes);

/* --- Hub queues ---------------------------------------------------------- */

/* Adds or changes a hub queue.  Deserved quota and limit are fleet-wide,
 * in accounting units.  q->parent names its parent (NULL: a root; a
 * parent not defined yet counts as a root until it is): a queue's usage
 * includes its descendants', a job must fit its queue's limit and every
 * ancestor's, and siblings are served by priority, then dominant share
 * (usage over fair share, as in one cluster's engine).
 * MU_EINVAL for a parent that is itself or would close a loop (or make
 * the tree deeper than 16). */
int mu_fleet_queue_upsert(mu_fleet_t *f, const mu_queue_spec_t *q);
/* Caps what queue may use on cluster c (accounting units;
 * MU_RES_UNLIMITED slots: no cap).  MU_ENOENT for an unknown queue. */
int mu_fleet_queue_cap(mu_fleet_t *f, const char *queue, int32_t c,
		       const mu_res_t *cap);
/* Caps the jobs queue may run on cluster c at once (max_jobs; -1: no
 * cap), beside its resource caps there.  MU_ENOENT for an unknown queue
 * or cluster, MU_EINVAL for a max_jobs below -1. */
int mu_fleet_queue_cap_jobs(mu_fleet_t *f, const char *queue, int32_t c, int64_t max_jobs);

typedef struct mu_fleet_queue_info {
	const char *name;
	int32_t priority;
	mu_res_t deserved, limit, used; /* used: fleet-wide */
	mu_res_t fair;          /* its fair share of the ready clusters'
	                         * total (CPU, memory, GPUs), at the last
	                         * mu_fleet_dispatch() */
	mu_res_t demand;        /* used + queued, its subtree's, capped by
	                         * the limits, at the same pass */
	mu_res_t used_np;       /* what its subtree's non-preemptible jobs
	                         * use (kept within deserved) */
	double decayed[MU_RES_MAX];      /* usage_half_life: its usage
	                         * averaged with it, at the last pass */
	double decay_factor[MU_RES_MAX]; /* the factor on its over-quota
	                         * weight (1 when decay is off) */
	int32_t queued, running;
} mu_fleet_queue_info_t;

int32_t mu_fleet_nqueues(const mu_fleet_t *f);
int mu_fleet_queue_info(const mu_fleet_t *f, int32_t q, mu_fleet_queue_info_t *out);

/* --- Jobs ---------------------------------------------------------------- */

typedef struct mu_fleet_job_spec {
	/* The job as one cluster would take it; its queue is a hub queue.
	 * Kept by pointer: the caller keeps it (and the labels below) alive
	 * until the job finishes. */
	const mu_job_spec_t *job;
	const mu_label_t *cluster_selector; /* clusters with all these labels */
	size_t ncluster_selector;
	const mu_label_t *locality;  /* clusters with all these go first */
	size_t nlocality;
	/* The group's minimum resources in aggregate (the coscheduling
	 * PodGroup's spec.minResources, accounting units: GPUs in milli), or
	 * NULL: a cluster whose free capacity summed over its nodes does not
	 * hold them is not chosen, as the coscheduling plugin's PreFilter
	 * refuses them.  Kept by pointer, as job is. */
	const mu_res_t *min_resources;
	/* DRA claims (round 14), or NULL: an array with one entry per pod
	 * set of job (in order; null or [] for a set without claims), each
	 * an array of the claims every pod of the set needs, as objects
	 * {"name": the pod's claim name, "claim": a ResourceClaim (its
	 * metadata.name and spec), "shared": true for a named claim (one
	 * allocation every pod of the job uses), absent or false for one
	 * made from a template per pod}.  Kept by pointer, as job is. */
	const json_t *dra;
	/* Elastic (round 17): the caller can take pods off the job's copy on
	 * a worker (a batch/v1 Job's parallelism lowered).  A job with one pod
	 * set, no DRA claims and a minMember below its pods (job->min_member;
	 * 0 means all pods) then offers mu_fleet_reclaim() its pods above
	 * minMember one at a time, before whole jobs
	 * (mu_fleet_reclaim_t.pods), as the engine's preemption offers an
	 * elastic job's surplus pods. */
	bool shrinkable;
	/* Pods already taken off its copy (a restarted caller's record of a
	 * confirmed shrink): mu_fleet_job_adopt() places the others only.
	 * 0 otherwise; ignored unless shrinkable and at most its surplus. */
	int32_t shrunk;
} mu_fleet_job_spec_t;

typedef enum mu_fleet_job_state {
	MU_FJ_QUEUED = 0,     /* on the hub, holding no quota */
	MU_FJ_DISPATCHED = 1, /* sent to one cluster, counted there */
	MU_FJ_FINISHED = 2,
} mu_fleet_job_state_t;

/* Why a queued job is still on the hub. */
typedef enum mu_fleet_why {
	MU_FW_NONE = 0,
	MU_FW_NEW = 1,          /* not tried yet */
	MU_FW_NO_CLUSTER = 2,   /* its cluster selector matches no cluster */
	MU_FW_NOT_READY = 3,    /* the clusters it may use are not ready */
	MU_FW_QUEUE_LIMIT = 4,  /* its hub queue would pass its limit */
	MU_FW_CAP = 5,          /* every cluster that could take it is at its
	                         * queue's cap there */
	MU_FW_NO_FIT = 6,       /* fits on no cluster now */
	MU_FW_TOO_BIG = 7,      /* larger than any cluster it may use, even
	                         * empty */
	MU_FW_BURST_WAIT = 8,   /* only public clusters could take it, and it
	                         * has not waited the burst time */
	MU_FW_MIN_RESOURCES = 9, /* its minResources are above the free
	                         * capacity in aggregate of every cluster that
	                         * could take it otherwise */
	MU_FW_OVER_QUOTA = 10,  /* non-preemptible, and its queue's (or an
	                         * ancestor's) non-preemptible jobs would pass
	                         * its deserved quota: the engine's OverQuota */
	MU_FW_COUNT
} mu_fleet_why_t;

/* "New", "NoMatchingCluster", ...: condition reasons. */
const char *mu_fleet_why_name(mu_fleet_why_t w);

/* Submits a job to the hub (MU_ENOENT: unknown hub queue; MU_EINVAL: a
 * spec a cluster engine would refuse, or a dra that is not an array of at
 * most one entry per pod set).  *id is dense and not reused. */
int mu_fleet_job_submit(mu_fleet_t *f, const mu_fleet_job_spec_t *s,
			mu_time_t now, mu_id_t *id);

typedef struct mu_fleet_job_info {
	const char *name;
	mu_fleet_job_state_t state;
	int32_t queue;
	int32_t cluster;        /* DISPATCHED: where; else -1 */
	uint32_t generation;    /* dispatches so far (the current one's) */
	mu_time_t submit, dispatched;
	int64_t gpu_milli;      /* accounting GPUs of the job */
	mu_fleet_why_t why;     /* QUEUED: why */
	int32_t closest;        /* NO_FIT: the cluster that held most of
	                         * its pods when last tried, or -1 */
	mu_id_t reclaimed_for;  /* a victim of mu_fleet_reclaim(): the job it
	                         * was (or is being) withdrawn for; else -1 */
	int32_t victims;        /* a claimant: its victims not yet taken
	                         * back (requeued or finished) */
	int32_t held;           /* a claimant: the cluster whose room is held
	                         * for it (cfg.reclaim_hold), or -1 */
	int32_t shrunk;         /* DISPATCHED: pods taken off its copy
	                         * (mu_fleet_job_shrink), else 0 */
	int32_t shrinking;      /* a victim on its way: pods to take off (0:
	                         * withdrawn whole, or none) */
} mu_fleet_job_info_t;

int32_t mu_fleet_njobs(const mu_fleet_t *f);
int mu_fleet_job_info(const mu_fleet_t *f, mu_id_t job, mu_fleet_job_info_t *out);
/* Job j was a victim of mu_fleet_reclaim() before (what a restarted
 * caller read back from its record): it is never a victim again, as if
 * this fleet had withdrawn it.  MU_ENOENT.  O(1). */
int mu_fleet_job_mark_victim(mu_fleet_t *f, mu_id_t j);
/* How many of dispatched job j's pods the disruption budgets on its
 * worker let go now (the least status.disruptionsAllowed of the
 * PodDisruptionBudgets whose selector matches one of its copy's pods), or
 * -1 for none (the default), as mu_engine_job_disruptions() tells the
 * engine.  mu_fleet_reclaim() then takes victims within their budgets
 * first and prefers the cluster whose set breaks the fewest, as the
 * engine and kube-scheduler do; the eviction (the copy's deletion) is
 * not refused by it.  The caller sets it again when the budgets or the
 * job's copy change.  MU_ENOENT.  O(1). */
int mu_fleet_job_disruptions(mu_fleet_t *f, mu_id_t j, int32_t allowed);
/* The same, for a victim still on its way out for queued job claimant
 * (what a restarted caller read back from the victim's record while its
 * withdrawal goes on): the victim counts as leaving for the claimant, as
 * if this fleet had chosen it (the claimant claims nothing more until it
 * is taken back, mu_fleet_job_requeue()), and the claimant's room on the
 * victim's cluster is held for it again (cfg.reclaim_hold from now).
 * MU_ENOENT; MU_ESTATE (only marked a former victim) when the victim is
 * not dispatched, the claimant not queued, either is linked already, or
 * the cluster is held for another job.  O(1). */
int mu_fleet_job_mark_victim_for(mu_fleet_t *f, mu_id_t j, mu_id_t claimant, mu_time_t now);

/* Confirms that dispatched job j's copy now runs `pods` fewer pods (a
 * reclaim's shrink done on its worker, mu_fleet_reclaim_t.pods, or one
 * the caller made itself): the job's model keeps its first pods where
 * they are bound and drops the rest (they are not placed again), its
 * queue's usage drops by theirs, and, when it was a victim shrinking for
 * a claimant, that claimant's victim count drops (it may be placed once
 * all its victims are back) and the job may be a victim again.  The pods
 * stay off until the job is requeued or finishes (its next dispatch is
 * whole again).  MU_ENOENT; MU_ESTATE unless dispatched; MU_EINVAL when
 * pods < 1, or the job is not shrinkable or would go below its minMember.
 * O(its pods + one engine submit). */
int mu_fleet_job_shrink(mu_fleet_t *f, mu_id_t j, int32_t pods, mu_time_t now);

/* A pod of dispatched job j's copy is bound on its cluster (round 20).
 * For a job with DRA claims, the worker's scheduler has allocated them
 * (kube-scheduler writes a claim's allocation before the bind), so the
 * cluster's ResourceClaims (mu_fleet_cluster_dra) count its devices from
 * now on, and the fleet's own allocation for it, which stood in until
 * then, is dropped: the devices count once, not twice (the worker may
 * have picked others).  Nothing for a job without claims; calling it
 * again is harmless.  MU_ENOENT; MU_ESTATE unless dispatched.  O(1). */
int mu_fleet_job_started(mu_fleet_t *f, mu_id_t j);

/* Its pods all finished (or it was deleted): its quota and its cluster's
 * resources are freed.  MU_ESTATE if finished already. */
int mu_fleet_job_finish(mu_fleet_t *f, mu_id_t job, mu_time_t now);
/* Takes a dispatched job back to the hub (it did not start in time, or
 * its cluster was lost): freed there, queued again; the next dispatch
 * has a new generation.  MU_ESTATE unless dispatched. */
int mu_fleet_job_requeue(mu_fleet_t *f, mu_id_t job, mu_time_t now);
/* Records that queued job j already runs on cluster c with dispatch
 * generation gen (a daemon's record from before a restart): it is placed
 * in c's model (pending there when it does not fit as the model stands)
 * and counted against its queue, without a decision.  MU_ESTATE unless
 * queued.  O(one engine cycle of c's model). */
int mu_fleet_job_adopt(mu_fleet_t *f, mu_id_t job, int32_t c, uint32_t gen,
		       mu_time_t now);
/* Requeues every job dispatched to cluster c and marks it unreachable.
 * Returns the number requeued, or an error. */
int mu_fleet_cluster_lost(mu_fleet_t *f, int32_t c, mu_time_t now);

/* --- Dispatching --------------------------------------------------------- */

typedef struct mu_fleet_decision {
	mu_id_t job;
	int32_t cluster;
	uint32_t generation;
} mu_fleet_decision_t;

typedef struct mu_fleet_decisions {
	mu_fleet_decision_t *v;
	size_t n, cap;
} mu_fleet_decisions_t;

void mu_fleet_decisions_init(mu_fleet_decisions_t *d);
void mu_fleet_decisions_release(mu_fleet_decisions_t *d);

/*
 * One pass at now: hub queues in order (priority, then the lower
 * dominant share: usage over fair share, re-evaluated after every
 * dispatch; the fair shares divided once a pass by the engine's own
 * mu_fairshare_divide(), over the ready clusters' total), jobs inside a
 * queue by priority, submit time and arrival.
 * Each job goes to the first candidate cluster (in policy order) where its
 * gang fits now; the job then runs in that cluster's model and counts
 * against its queue.  Appends one decision per dispatch to out (which it
 * does not clear).  A job that failed is not tried again until capacity
 * was released somewhere, its burst wait ran out or a limit rose.  Work
 * is bounded by (queued jobs) + (jobs tried) x (candidate clusters) x
 * (pods x class nodes).
 */
int mu_fleet_dispatch(mu_fleet_t *f, mu_time_t now, mu_fleet_decisions_t *out);

/* --- Reclaim across clusters ------------------------------------------- */

typedef struct mu_fleet_reclaim {
	mu_id_t victim;         /* a dispatched job to withdraw */
	mu_id_t for_job;        /* the queued job it makes room for */
	int32_t cluster;        /* where both are (to be) */
	uint32_t generation;    /* the victim's current dispatch */
	bool fair_sharing;      /* by the fair-share strategy (Kueue's reason
	                         * InCohortFairSharing); else by deserved
	                         * quota (InCohortReclamation) */
	bool in_queue;          /* a lower priority of the job's own hub
	                         * queue (preemption, Kueue's InClusterQueue) */
	int32_t pods;           /* > 0: take only this many of the victim's
	                         * pods off (an elastic job's surplus: shrink
	                         * its copy, then mu_fleet_job_shrink(); it
	                         * stays dispatched); 0: withdraw it whole */
} mu_fleet_reclaim_t;

typedef struct mu_fleet_reclaims {
	mu_fleet_reclaim_t *v;
	size_t n, cap;
} mu_fleet_reclaims_t;

void mu_fleet_reclaims_release(mu_fleet_reclaims_t *r);

/*
 * Reclaim and preemption across clusters, at now, after mu_fleet_dispatch()
 * at the same now (its fair shares and lines).  A queued job that fits on
 * no cluster (NoFit) takes back room by the engine's rules:
 *  - from other queues' running jobs (reclaim), when its queue would stay
 *    within its deserved quota (strategy D) or its fair share (F) with the
 *    job (mu_reclaim_within), and the victim's queue is above its deserved
 *    quota (F: and its fair share) before it leaves (mu_reclaim_not_above),
 *    judged where the two queues' paths from the roots part, and has not
 *    lost a job to reclaim within cfg.reclaim_cooldown;
 *  - from its own queue's running jobs of a strictly lower priority
 *    (preemption; no quota is judged, no cool-down applies).
 * A victim is preemptible, has run cfg.min_runtime, and was never a victim
 * before (nor marked one, mu_fleet_job_mark_victim()).  Victims are taken
 * in the engine's order (within their disruption budgets first, other
 * queues' first, then an elastic job's surplus pods one at a time before
 * whole jobs (round 17: shrinkable jobs on clusters without no_shrink,
 * never below minMember), then lower priority, fewer GPUs, the youngest)
 * until the job fits on ONE cluster (mu_engine_job_whatif_without_pods()
 * on its model), the set is then made minimal, and the cluster breaking
 * the fewest budgets, needing the fewest victims of the job's own queue,
 * then the fewest whole jobs, surplus pods, then GPUs, wins.  Appends one
 * entry per victim to out (a job's surplus pods in one entry, .pods; a
 * surplus pod whose whole job is taken too counts once, with the job);
 * the victims stay dispatched until the caller has withdrawn them
 * (mu_fleet_job_requeue() once each copy's deletion is confirmed) or
 * shrunk them (mu_fleet_job_shrink()), and the job is not a claimant
 * again meanwhile.  The winning
 * cluster is held for the job (cfg.reclaim_hold): mu_fleet_dispatch()
 * places no other job of its priority or lower there where it would take
 * the job's room, and tries the job first once its victims are
 * back, until it is placed, finished, fits no more, or the hold lapses.
 * Every queued job may claim: queues by priority, then lowest dominant
 * share, each line in its order (priority, submit time), at most 32
 * searches a pass; a job that found no victims is not searched again
 * until room, usage or the jobs change, or a victim refused for its
 * runtime or cool-down turns eligible.  Work: O(queues log queues + queued
 * jobs) with no claimant, else O(jobs + 32 x clusters x (their running
 * jobs + 128 what-ifs)).
 */
int mu_fleet_reclaim(mu_fleet_t *f, mu_time_t now, mu_fleet_reclaims_t *out);

/* Per-cluster answer for one job, for explain. */
typedef struct mu_fleet_explain {
	int32_t cluster;
	bool eligible;          /* selector, state and burst allow it */
	const char *why;        /* static: "selector", "not ready", "burst
	                         * wait", "cap", "fits", "no fit", "too big",
	                         * "min resources not free", "no devices",
	                         * "held" */
	mu_id_t held_for;       /* "held" (it fits only in the room held for
	                         * a reclaim's claimant): that claimant; else
	                         * -1 */
	const char *devices;    /* "no devices": the allocator's reason at
	                         * the job's last try there (borrowed from
	                         * the fleet, valid until the next pass) */
	mu_whatif_t whatif;     /* when eligible: the dry run, with its
	                         * expected start (reason: mu_reason_format()
	                         * on mu_fleet_cluster_engine()) */
} mu_fleet_explain_t;

/* Fills out[0..nclusters) for a job at now: why each cluster does or does
 * not take it and, where it does not fit, when it is expected to.  out has
 * room for mu_fleet_nclusters().  O(clusters x (whatif + running jobs)). */
int mu_fleet_job_explain(mu_fleet_t *f, mu_id_t job, mu_time_t now,
			 mu_fleet_explain_t *out);

/* Writes x (from mu_fleet_job_explain() at now) as one line into buf
 * (always NUL-terminated): "small: too big; big: no fit (0/8 nodes are
 * available: 8 insufficient nvidia.com/gpu; expected to fit in 58m); ...".
 * Returns the length it wanted, as snprintf does.  O(clusters). */
int mu_fleet_explain_format(const mu_fleet_t *f, const mu_fleet_explain_t *x,
			    mu_time_t now, char *buf, size_t len);

#endif
