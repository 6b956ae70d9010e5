/*
 * fleet_int.h - the fleet's own structures, shared by the files of
 * src/fleet: hubq.c (hub queues, their order, limits and caps) at the
 * bottom, fleet.c (clusters, jobs, their lifecycle) above it, place.c (the
 * dispatch pass and explain) on top; explain.c (explain as text) beside
 * place.c, reading the structures only; reclaim.c (reclaim across
 * clusters) beside place.c, calling its gate and hubq.c; dra.c (the
 * devices of DRA claims, round 14) below place.c and fleet.c.
 */
#ifndef MUSTER_FLEET_FLEET_INT_H
#define MUSTER_FLEET_FLEET_INT_H

#include "muster/fleet.h"

/* The one queue of every cluster model. */
#define MU__FLEET_QUEUE "fleet"
/* Candidate victims looked at per cluster (the engine's PLAN_MAXV), and so
 * a claimant's victims on one cluster at most. */
#define MU__RECLAIM_MAXV 64

/* A cluster: its labels, tier, price, state and model. */
typedef struct mu__cluster {
	char *name;
	mu_label_t *labels; /* owned copies */
	size_t nlabels;
	mu_tier_t tier;
	double cost_gpu_hour;
	mu_cluster_state_t state;
	mu_engine_t *eng;   /* the model: nodes, and the jobs sent here */
	int64_t max_node_gpu, max_node_cpu; /* largest node, for "too big" */
	/* per model node id: what pods the fleet did not send take out of
	 * its allocatable (mu_fleet_node_upsert_used; node units), and their
	 * sum (accounting units), added back for "too big" */
	mu_res_t *taken;
	int32_t taken_cap;
	mu_res_t taken_sum;
	/* the shares of one GPU other pods hold (mu_fleet_node_upsert_shared):
	 * each a one-pod job bound in the model, by node */
	struct mu__share_job {
		mu_id_t node, job;
	} *shares;
	int32_t nshares, shares_cap;
	uint32_t share_seq; /* names them: "~share.N" */
	int32_t running;    /* jobs dispatched here and not finished */
	bool no_shrink;     /* copies here are not shrunk (round 17) */
	int32_t hold_job;   /* a reclaim's claimant this cluster's room is
	                     * held for (no job is placed here that would
	                     * leave it no room once its victims are gone),
	                     * or -1 */
	mu_time_t hold_until; /* when that hold lapses */
	int32_t hold_vic[MU__RECLAIM_MAXV]; /* its victims here (fleet job ids; those no
	                     * longer on their way out are passed over) */
	int32_t hold_nvic;
	/* the hold's nomination (round 22, place.c), as kube-scheduler's
	 * nominated node: per pod of claimant nom_job, the model node its
	 * what-if with its victims gone put it on (-1: none), nnom of them
	 * (owned, room for nom_cap); worked out at most once a pass (nom_pass
	 * is f->pass then) */
	mu_id_t *nom;
	int32_t nnom, nom_cap, nom_job;
	uint64_t nom_pass;
	/* DRA (dra.c, round 14): the worker's objects (owned references, or
	 * NULL), and the claims the fleet allocated for the jobs it sent
	 * here ({"JOB": [claims with status.allocation]}, owned, or NULL) */
	json_t *dra_slices, *dra_classes, *dra_claims, *dra_nodes;
	json_t *dra_mine;
} mu__cluster_t;

/* A per-cluster cap of one hub queue. */
typedef struct mu__cap {
	int32_t cluster;
	mu_res_t cap, used;
	int64_t max_jobs;   /* jobs it may run there at once; -1: no cap */
	int64_t jobs;       /* jobs it runs there */
} mu__cap_t;

/* A queued job's place in line: its order key and id (16 bytes, so a
 * million queued jobs sort without reaching back into the jobs). */
typedef struct mu__qent {
	int32_t prio;
	int32_t job;
	mu_time_t submit;
} mu__qent_t;

typedef struct mu__hubq {
	char *name;
	char *parent_name;  /* NULL: a root */
	int32_t parent;     /* its index, or -1 (a root, or a parent not
	                     * defined yet: then it counts as a root) */
	int32_t priority;
	mu_res_t deserved, limit;
	mu_res_t own;       /* what its own dispatched jobs use */
	mu_res_t used;      /* own plus every descendant's own */
	mu_res_t own_np, used_np; /* the same, non-preemptible jobs only */
	double decayed[MU_RES_MAX];      /* usage_half_life: used, averaged */
	double decay_factor[MU_RES_MAX]; /* on its over-quota weight */
	double weight[MU_RES_MAX];
	mu_res_t pend;      /* what its own queued jobs ask for (the core
	                     * slots, mu__job_acct_core) */
	mu_res_t demand;    /* used + queued, its subtree's, capped by the
	                     * limits (mu__hubq_fair, at the last pass) */
	mu_res_t fair;      /* its fair share of the fleet (the same) */
	mu__qent_t *line;   /* queued jobs (and stale entries until the
	                     * next pass compacts them) */
	int32_t nline, line_cap, cursor;
	bool sorted;
	int32_t queued, running;
	mu__cap_t *caps;
	int32_t ncaps;
	bool reclaimed;     /* it lost a job to reclaim, last at */
	mu_time_t reclaimed_at; /* (cfg.reclaim_cooldown) */
} mu__hubq_t;

typedef struct mu__fjob {
	mu_fleet_job_spec_t spec;
	int32_t queue;
	int8_t state;       /* mu_fleet_job_state_t */
	int8_t why;         /* mu_fleet_why_t */
	bool burst_blocked; /* a public cluster was left out for the wait */
	int32_t cluster;
	int32_t closest;
	uint32_t gen;
	mu_id_t ejob;       /* its id in the cluster's engine */
	mu_time_t submit, dispatched;
	uint64_t fail_epoch;
	int32_t reclaimed_for; /* a reclaim's victim: its claimant; else -1
	                     * (kept: a job is a victim once) */
	bool reclaim_out;   /* a victim not yet taken back */
	bool was_victim;    /* a victim before the caller restarted
	                     * (mu_fleet_job_mark_victim): never again */
	/* a claimant that found no victims: the fleet's epoch, usage and
	 * job count then, and when a victim refused for its runtime turns
	 * eligible; it is not tried again before one of them moves */
	uint64_t rc_epoch, rc_usage;
	int32_t rc_njobs;
	mu_time_t rc_retry;
	int32_t disrupt;    /* pods its worker's disruption budgets let go
	                     * now (mu_fleet_job_disruptions), -1: none */
	int32_t victims;    /* a claimant: victims not yet taken back */
	int32_t hold;       /* a claimant: the cluster held for it, or -1 */
	/* elastic (round 17): pods taken off its copy this dispatch
	 * (mu_fleet_job_shrink), and while off > 0 spec.job is own (its
	 * pod set with that many pods fewer, owned) and orig the caller's;
	 * a victim shrinking (reclaim_out) takes shrink_out pods off (0:
	 * withdrawn whole) */
	int32_t off, shrink_out;
	const mu_job_spec_t *orig;
	mu_job_spec_t *own;
	json_t *dra_why;    /* DRA: {"CLUSTER": why its devices did not fit
	                     * at the last try} (owned), or NULL */
} mu__fjob_t;

struct mu_fleet {
	mu_fleet_config_t cfg;
	mu__cluster_t *clusters;
	int32_t nclusters, clusters_cap;
	mu__hubq_t *queues;
	int32_t nqueues, queues_cap;
	mu__fjob_t *jobs;
	int32_t njobs, jobs_cap;
	uint64_t epoch;     /* bumped whenever room may have appeared */
	uint64_t usage_gen; /* bumped whenever a queue's usage moved */
	uint64_t pass;      /* dispatch passes so far (a hold's nomination
	                     * is worked out once a pass) */
	mu_res_t total;     /* what the ready clusters hold, at the last
	                     * pass (mu__hubq_fair) */
	mu_time_t decay_at; /* when decayed usage was last aged */
	bool any_dra;       /* a job with DRA claims was submitted */
};

/* hubq.c */
/* Ends the hold job j has on a cluster (reclaim.c), if any; jobs that
 * failed are tried again (f->epoch).  O(1). */
void mu__fleet_hold_drop(mu_fleet_t *f, int32_t j);
int mu__fleet_grow(void **v, int32_t *cap, int32_t need, size_t elem);
int32_t mu__hubq_find(const mu_fleet_t *f, const char *name);
/* The accounting vector of a job spec (all pods). */
mu_res_t mu__job_acct(const mu_job_spec_t *j);
/* The same for the core slots only (below MU_RES_NAMED0; the rest 0):
 * what queued jobs add to their queue's demand.  O(pod sets). */
void mu__job_acct_core(const mu_job_spec_t *j, mu_res_t *a);
/* Moves a dispatched job's usage in q (its own and its ancestors', their
 * non-preemptible usage unless preemptible, its cap on c) by sign x d,
 * without counting it queued or running: a shrink (round 17). */
void mu__hubq_usage(mu_fleet_t *f, int32_t q, int32_t c, const mu_res_t *d, int sign,
		    bool preemptible);
/* Elastic (round 17): the pods of dispatched job fj on cluster c that
 * reclaim may take off one at a time (bound in the model above its
 * minMember; 0 when not shrinkable there).  O(1). */
int32_t mu__fjob_surplus(const mu_fleet_t *f, const mu__fjob_t *fj);
/* The accounting vector of one pod of fj's (only) pod set. */
mu_res_t mu__fjob_pod_acct(const mu__fjob_t *fj);
/* Whether q's limit, and every ancestor's, holds acct more. */
bool mu__hubq_within_limit(const mu_fleet_t *f, int32_t q, const mu_res_t *acct);
/* Whether q's cap on cluster c (if any) holds acct more. */
bool mu__hubq_within_cap(const mu__hubq_t *q, int32_t c, const mu_res_t *acct);
/* Adds (sign +1) or takes back (-1) acct in q (its own and its
 * ancestors' usage, and their non-preemptible usage unless preemptible)
 * and its cap on c. */
void mu__hubq_charge(mu_fleet_t *f, int32_t q, int32_t c, const mu_res_t *acct, int sign,
		     bool preemptible);
/* The engine's quota rule for a non-preemptible job: the first queue on
 * q's path up whose non-preemptible usage plus acct would pass its
 * deserved quota (on the claim's dominant resources), or -1.  O(depth). */
int32_t mu__hubq_np_over(const mu_fleet_t *f, int32_t q, const mu_res_t *acct);
/* The children of the lowest common ancestor of queues a and b on each
 * side (the roots when there is none; both the ancestor when one is the
 * other's).  O(depth). */
void mu__hubq_sides(const mu_fleet_t *f, int32_t a, int32_t b, int32_t *sa, int32_t *sb);
/* Queue q's dominant share (usage over fair share), as siblings are
 * served.  O(resources). */
double mu__hubq_share(const mu_fleet_t *f, int32_t q);
/* Resolves every queue's parent by name and recomputes the subtree usage;
 * MU_EINVAL (and nothing changed) when the parents would make a loop. */
int mu__hubq_link(mu_fleet_t *f);
/* Puts job j (queued) in line. */
int mu__hubq_enqueue(mu__hubq_t *q, const mu__fjob_t *fj, int32_t j);
/* Places job j on cluster c's model for real (place.c): submitted as
 * NAME.jID.gGEN (unique whatever the callers' names) and bound by a cycle
 * there (nothing else waits in a model, so the cycle places only it, as
 * the what-if did), then recorded as dispatched with generation gen.
 * With must_run, a job that did not start, or that would leave the
 * claimant c's room is held for (mu__fleet_hold_keeps) no room, is
 * withdrawn and *ok is false; without (adopting a copy that already
 * runs), it is recorded either way. */
int mu__fleet_commit(mu_fleet_t *f, int32_t j, int32_t c, uint32_t gen, mu_time_t now,
		     bool must_run, bool *ok);
/* dra.c */
/* Allocates the DRA claims of job j (spec.dra), placed in cluster c's
 * model as engine job ej, pod by pod on the nodes the model put them on,
 * each pod's devices taken from the next: on success they are recorded as
 * the job's (in use on c until mu__fleet_dra_drop); else *ok is false and
 * the allocator's reason is kept for c (mu__fleet_dra_why).  With
 * must_run false (adopting a copy) a refusal is not one: *ok stays.
 * O(pods x allocator work over c's slices and claims). */
int mu__fleet_dra_take(mu_fleet_t *f, int32_t j, int32_t c, mu_id_t ej, bool must_run, bool *ok);
/* Steers job j's pod sets with claims on cluster c: s (a copy of its
 * spec) gets pod sets of its own whose required node affinity also asks
 * kubernetes.io/hostname In the nodes where one pod's claims can be
 * allocated alone (every term, or one new term), so the model places
 * them only there; with none, the allocator's reason is kept for c.
 * With spread, those pods are also spread over those nodes (a topology
 * spread constraint on kubernetes.io/hostname, maxSkew 1, over a label of
 * the job's own): the second try of a gang whose packed placement put
 * more pods on a node than its devices serve.  *mem owns what s now
 * points to (s->name must outlive it): mu__fleet_dra_unsteer() it after
 * the engine has read s.  MU_ENOMEM.  O(pod sets x nodes x allocator). */
int mu__fleet_dra_steer(mu_fleet_t *f, int32_t j, int32_t c, mu_job_spec_t *s, bool spread,
			void **mem);
void mu__fleet_dra_unsteer(void *mem);
/* Frees what job j's claims hold on cluster c.  O(1). */
void mu__fleet_dra_drop(mu_fleet_t *f, int32_t j, int32_t c);
/* Why job j's claims did not fit on cluster c at its last try, or NULL. */
const char *mu__fleet_dra_why(const mu_fleet_t *f, int32_t j, int32_t c);
/* Releases cluster k's DRA objects. */
void mu__fleet_dra_release(mu__cluster_t *k);

/* Sorts the lines that need it and drops entries no longer queued. */
void mu__hubq_prepare(mu_fleet_t *f);
/* Every queue's demand and fair share of the fleet's total (the ready
 * clusters' allocatable), divided down the tree as the engine divides a
 * cluster (mu_fairshare_divide).  MU_ENOMEM.  O(queues x (parents +
 * depth) + queues x resources x log queues). */
int mu__hubq_fair(mu_fleet_t *f, mu_time_t now);
/* The gate of cluster c for job j at now (place.c): NULL when it is a
 * candidate, else a static word saying why not ("no fit": too full in
 * aggregate).  O(labels + resources). */
const char *mu__fleet_gate(const mu_fleet_t *f, int32_t j, int32_t c, mu_time_t now);
/* The next queue to serve: with jobs left in line, best by priority,
 * then the lower dominant share (usage over fair share, as the engine's
 * mu_fairshare_ratio).  -1 when every line is walked. */
int32_t mu__hubq_pick(const mu_fleet_t *f);

#endif
