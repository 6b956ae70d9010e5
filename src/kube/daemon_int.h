/*
 * daemon_int.h - the daemon object and the view it keeps of the cluster,
 * shared by kmap.c, state.c, events.c, jobs.c, write.c, apply.c, daemon.c,
 * leader.c and metrics.c.
 *
 * Threads: reflectors (one per resource) only push to d->evq; workers only
 * run HTTP requests from d->work and push outcomes to d->results; the
 * metrics server reads d->m under d->m.mu; the lease thread owns its lease
 * state and sets d->lost.  Everything else (the engine, pods, groups,
 * nodes, queues) belongs to the main loop thread alone.
 */
#ifndef MUSTER_KUBE_DAEMON_INT_H
#define MUSTER_KUBE_DAEMON_INT_H

#include "kube/kube_int.h"

/* --- a string-keyed hash map of pointers (keys owned by the values) ----- */

typedef struct mu__kment {
	const char *key;
	void *val;
	struct mu__kment *next;
} mu__kment_t;

typedef struct mu__kmap {
	mu__kment_t **tab;
	size_t cap, n;
} mu__kmap_t;

void *mu__kmap_get(const mu__kmap_t *m, const char *key);
/* Sets key (which must stay valid while present) to val. */
int mu__kmap_put(mu__kmap_t *m, const char *key, void *val);
void *mu__kmap_del(mu__kmap_t *m, const char *key);
void mu__kmap_release(mu__kmap_t *m);
/* Calls fn on every value; fn must not change the map. */
void mu__kmap_each(const mu__kmap_t *m, void (*fn)(void *arg, void *val), void *arg);

/* --- kinds.c: the workload kinds --------------------------------------------- */

typedef enum mu__wlkind {
	MU__WL_JOBSET = 0,      /* jobset.x-k8s.io/v1alpha2 JobSet */
	MU__WL_LWS,             /* leaderworkerset.x-k8s.io/v1 LeaderWorkerSet */
	MU__WL_PYTORCH,         /* kubeflow.org/v1 PyTorchJob */
	MU__WL_MPI,             /* kubeflow.org/v1 MPIJob */
	MU__WL_RAY,             /* ray.io/v1 RayCluster (a RayJob's too) */
	MU__WL_VOLCANO_PG,      /* scheduling.volcano.sh/v1beta1 PodGroup */
	MU__WL_KAI_PG,          /* scheduling.run.ai/v2alpha2 PodGroup */
	MU__WL_RAYJOB,          /* ray.io/v1 RayJob: its RayCluster's pods */
	MU__WL_COUNT
} mu__wlkind_t;

#define MU__WL_MAX_PARTS 16

/* Which workload, group and part a pod belongs to. */
typedef struct mu__kwpod {
	mu__wlkind_t kind;
	char wl[400];           /* the object: "KIND:NS/NAME" */
	char group[700];        /* the group key: "w:NS/KIND/NAME[/SUB]" */
	char name[300];         /* the group's name (NAME, or SUB) */
	char part[64];          /* lower-cased role or sub-group, "" none */
} mu__kwpod_t;

/* What a workload object says about its gang. */
typedef struct mu__kwinfo {
	int32_t min_member;     /* pods needed (per group for LeaderWorkerSet) */
	char queue[256];        /* "" when it names none */
	int nparts;
	struct { char name[64]; int32_t min; } parts[MU__WL_MAX_PARTS];
} mu__kwinfo_t;

/* The kind's name in keys ("JobSet"). */
const char *mu__kw_kind(mu__wlkind_t k);
/* Whether pod belongs to a workload of a known kind (labels, annotations,
 * owner reference), and which.  O(labels). */
bool mu__kw_pod(const json_t *pod, mu__kwpod_t *out);
/* Reads a workload object of kind k: its parts with their minimums, its
 * minimum (the kind's field, never below the parts' sum) and its queue
 * (label muster.io/queue, then kueue.x-k8s.io/queue-name, then the kind's
 * own field).  MU_EINVAL when it has no parts where it needs some,
 * MU_ELIMIT past MU__WL_MAX_PARTS.  O(parts). */
int mu__kw_read(const json_t *obj, mu__wlkind_t k, mu__kwinfo_t *w);

/* Suspend until admitted (wl.c), as Kueue does it: the kinds that can be
 * created suspended (JobSet and RayJob spec.suspend, PyTorchJob and MPIJob
 * spec.runPolicy.suspend), whether obj is, and the pod templates of its
 * parts (pointing into obj): up to max, returned as the count, MU_ELIMIT
 * past max, MU_EINVAL when a part has no name or template.  O(parts). */
typedef struct mu__kwtmpl {
	const char *part;
	int64_t count;          /* pods of this part */
	const json_t *tmpl;     /* its pod template ({metadata, spec}) */
	bool submitter_default; /* a RayJob's submitter without its own template
	                         * (tmpl NULL): mu__kw_submitter_spec() */
} mu__kwtmpl_t;
/* A RayJob's submitter part (part "submitter", one pod, its gang minimum
 * 0) exists when spec.submissionMode is K8sJobMode (the CRD's default):
 * KubeRay then runs `ray job submit` from a batch/v1 Job named as the
 * RayJob, which Kueue counts in the RayJob's pod sets. */
bool mu__kw_ray_submitter(const json_t *rayjob);
/* KubeRay's default submitter pod spec (requests 500m CPU and 200Mi,
 * limits 1 CPU and 1Gi, restartPolicy Never), as Kueue copies it; a new
 * reference, NULL when out of memory. */
json_t *mu__kw_submitter_spec(void);
/* Points a pod's reference *w to the submitter part of RayJob `job` in
 * ns.  False when the names do not fit. */
bool mu__kw_to_submitter(mu__kwpod_t *w, const char *ns, const char *job);
bool mu__kw_suspendable(mu__wlkind_t k);
bool mu__kw_suspended(const json_t *obj, mu__wlkind_t k);
int mu__kw_templates(const json_t *obj, mu__wlkind_t k, mu__kwtmpl_t *out, int max);
/* The merge patch that lifts the suspension, the API group path and the
 * plural of a suspendable kind. */
const char *mu__kw_unsuspend_patch(mu__wlkind_t k);
const char *mu__kw_collection(mu__wlkind_t k);
const char *mu__kw_plural(mu__wlkind_t k);
/* The RayJob that controls a RayCluster object (its controlling owner
 * reference of kind RayJob), into name; false when none.  O(owners). */
bool mu__kw_rayjob_of(const json_t *raycluster, char *name, size_t len);
/* Rewrites a RayCluster pod's reference *w to the RayJob `job` (same
 * namespace and part).  False when the names do not fit. */
bool mu__kw_to_rayjob(mu__kwpod_t *w, const char *ns, const char *job);

/* --- the view ---------------------------------------------------------------- */


typedef struct mu__kgroup mu__kgroup_t;

/* A pod's devices: the device fields of its bind decision, kept instead of
 * the whole mu_decision_t (whose pending reason alone is 208 bytes) so a
 * pod record stays small when the daemon holds tens of thousands. */
typedef struct mu__kdev {
	uint64_t gpus;          /* device mask */
	mu_cpuset_t *cpus;      /* exclusive CPUs (owned, 64 bytes), NULL when
	                         * not pinned, as most pods are not */
	int32_t gpu_milli;      /* share of the one device in gpus, or 0 */
	int8_t numa, nic;       /* -1 when none */
} mu__kdev_t;

/* Keeps the device fields of decision d in *k (its CPU set allocated
 * only when not empty; on out of memory the set is dropped, as if not
 * pinned).  O(1). */
void mu__kdev_keep(mu__kdev_t *k, const mu_decision_t *d);
/* Writes *k into a zeroed decision *d (a bind of pod set 0, pod 0; the
 * caller sets the rest) for the engine's calls that take one.  O(1). */
void mu__kdev_give(const mu__kdev_t *k, mu_decision_t *d);

/* The flags are last, so that the record has no holes (the daemon holds
 * one per pod). */
typedef struct mu__kpod {
	char *key;              /* "ns/name" */
	char *ns, *name;        /* in key's block (owned by key) */
	char *uid;
	char *node;             /* spec.nodeName, or NULL */
	char *owner_job;        /* controlling batch/v1 Job, or NULL */
	char *ctrl;             /* "KIND/NAME" of a controller that recreates
	                         * it when evicted (move.c), or NULL */
	char *ctrl_idx;         /* ... the index it gives the pod, or NULL */
	char *queue;            /* queue label, or NULL */
	char *pclass;           /* spec.priorityClassName, or NULL */
	char *group_label, *xgroup_label;
	int64_t created_ms, started_ms;
	mu__kshape_t *shape;    /* its request and constraints (refcounted) */
	mu__kgroup_t *g;        /* the group it is a member of */
	int32_t ps, idx;        /* its pod in g's engine job, or -1 */
	char *an_node;          /* a bind decided and in flight, or NULL */
	mu__kdev_t dev;         /* its devices (decided, or read back) */
	char *msg;              /* the PodScheduled message last written */
	json_t *labels;         /* metadata.labels (own ref), or NULL */
	char *wl_group;         /* a workload kind's group key (kinds.c), or NULL */
	char *wl_key, *wl_name; /* ... its object's key and the group's name */
	char *wl_part;          /* ... its part ("" none) */
	int64_t pending_since;  /* mono ms when first seen unbound (metrics) */
	json_t *dra;            /* its namespace and resourceClaims (dra.c), or NULL */
	json_t *nsobj;          /* the pod, when its terms select namespaces by
	                         * label (nsel.c), or NULL */
	char *dra_msg;          /* why its claims cannot be allocated, or NULL */
	uint32_t dra_round;     /* the retry round it was last tried in (state.c) */
	int32_t slot;           /* Job admission: its slot, or -1 */
	bool ours;              /* schedulerName is ours */
	bool deleting, gated, terminal;
	bool failed;            /* terminal, Failed */
	bool evicting;          /* an eviction was sent */
	bool seen;              /* during a re-list */
	bool dra_refused;       /* dra_msg is because something is not
	                         * supported: no retry */
	bool bind_wait;         /* its bind (an_node, dev) waits in d->bwait
	                         * to be written (write.c) */
	/* --policy muster (rechoose.c): the shape counted in d->hz's demand
	 * (not owned: p->shape when counted, which p holds), NULL when not
	 * counted, and its index there. */
	const mu__kshape_t *mix_shape;
	int32_t mix_at;
} mu__kpod_t;

typedef enum mu__kgkind {
	MU__KG_SINGLE = 0,      /* one pod */
	MU__KG_GANG = 1,        /* a muster or coscheduling PodGroup */
	MU__KG_JOB = 2,         /* a queue-labelled batch/v1 Job (admission) */
	MU__KG_EXTERNAL = 3,    /* a pod another scheduler bound */
} mu__kgkind_t;

/* Job admission: one planned pod of the Job. */
typedef struct mu__kslot {
	char *node;             /* planned node, NULL when not placed */
	mu_decision_t dev;
	mu__kpod_t *pod;        /* the pod that took it, or NULL */
} mu__kslot_t;

/* Its fields are in groups as below, each group's flags (and 4-byte
 * fields) after its 8-byte ones, so that the record has no holes: the
 * daemon holds one per single pod. */
struct mu__kgroup {
	char *key;              /* "s:ns/name" "m:ns/G" "x:ns/G" "j:ns/J" "e:ns/name" */
	char *ns, *name;        /* in key's block (owned by key) */
	mu__kpod_t **pods;      /* members (&pod1 while cap is 1) */
	mu__kpod_t *pod1;       /* a one-pod group's member, without a block */
	mu__kgkind_t kind;
	int32_t npods, cap;
	/* GANG */
	int32_t min_member;
	int32_t sub_min;        /* the min_member its engine job has */
	char *pg_queue;
	/* JOB: every batch/v1 Job has a group "j:ns/J" holding its object */
	json_t *job;            /* the latest Job object */
	int64_t spec_gen;       /* metadata.generation submitted */
	mu__kslot_t *slots;
	int32_t nslots;
	int32_t replicas;       /* pods submitted */
	/* the engine */
	mu_id_t ej;             /* current engine job, or -1 */
	int32_t gen;            /* submissions so far (for unique names) */
	mu__kpod_t **epods;     /* SINGLE/GANG: engine pod order -> pod */
	int32_t *ps_first;      /* first index in epods of each pod set */
	mu__kpod_t *epod1;      /* epods and ps_first of one pod in one pod */
	int32_t psf1[2];        /* set: the record's own (state.c) */
	int32_t nepods;
	int32_t nps;
	char *msg;              /* last pending message (Job events, waits) */
	mu_reason_t *last;      /* last pending reason formatted (owned, 208
	                         * bytes: only while pending), or NULL */
	char *status_sig;       /* last PodGroup status written */
	int64_t created_ms;
	int64_t stale_since;    /* mono ms since it is a stale gang, or 0 */
	/* A workload kind's group ("w:..."): its object's key and what it
	 * says (kinds.c), NULL until the object is seen. */
	char *wl_key;
	mu__kwinfo_t *wl;
	/* GANG */
	bool has_pg;            /* the PodGroup object exists */
	bool reshaped;          /* a pod's shape changed (dra.c): submit again */
	/* JOB */
	bool admission;         /* queue-labelled: muster admits it */
	bool gang_job;          /* not queue-labelled, pods ours: a gang */
	bool pg_requested;      /* the PodGroup controller created its group */
	bool admitted;          /* not suspended, with muster.io/admitted */
	/* the engine */
	bool dirty;             /* membership changed: sync before a cycle */
	bool seen;              /* its Job or PodGroup, during a re-list */
	bool listed_dirty;      /* in d->dirty */
	bool keep_on_failure;   /* PodGroup muster.io/on-pod-failure: ignore */
	bool pdb_set;           /* its engine job was given a budget (pdb.c) */
	int16_t dra_replans;    /* JOB: slots re-planned in a row since a claim
	                         * was last allocated (jobs.c; in the padding) */
	int64_t hz_seen;        /* pods counted as seen (rechoose.c) */
	/* Suspend until admitted (wl.c): its object is suspended and names a
	 * queue; a job of its pod templates holds the room once placed; the
	 * unsuspend was sent. */
	bool wl_susp, wl_hold, wl_admitted;
	/* Its object was admitted before a restart: the places recorded in
	 * its annotation muster.io/held-places are to be held again. */
	bool wl_restore;
	/* Admitted and since seen unsuspended: a suspension seen now is its
	 * user's (an older event still shows the suspension muster lifted). */
	bool wl_running;
	/* Its object is inactive (annotation muster.io/active: "false"):
	 * not queued, and suspended again if it runs. */
	bool wl_inactive;
};

typedef struct mu__knode {
	char *name;
	/* The latest Node as the daemon keeps it: mu__knode_text(), the slim
	 * copy as compact JSON text (about 500 bytes, against about 2 KB as
	 * jansson values), parsed again (mu__knode_parse) only when the node is
	 * fed to the engine, counted for DRA or drawn in the UI; NULL until
	 * seen.  Also what the engine has: a Node whose text did not change
	 * (a heartbeat) is not fed again. */
	char *text;
	mu__knrt_t *topo;       /* from its NodeResourceTopology, packed
	                         * (owned; unpacked to feed it), or NULL */
	bool in_engine;
	bool seen;
} mu__knode_t;

/* One HTTP write, run by a worker. */
typedef enum mu__kwkind {
	MU__KW_BIND = 0,
	MU__KW_EVICT,
	MU__KW_WRITE,           /* status, events, patches: outcome logged */
	MU__KW_NOTE,            /* a record that must not be dropped (held
	                         * places): high priority, outcome logged */
} mu__kwkind_t;

typedef struct mu__kwork {
	mu__kwkind_t kind;
	char *method, *path, *ctype, *body;
	char *pod_key;          /* BIND/EVICT: whose outcome goes back */
	char *node;             /* BIND: the node */
	struct mu__kwork *next;
	bool event;             /* WRITE of an Event: queued apart (EV_CAP) */
	int tries;
	long status;            /* outcome */
	char *answer;           /* outcome body (errors only) */
	int64_t not_before;     /* mono ms: retry after a 429 */
	/* Sent by the same worker once this one succeeded (a consolidation's
	 * eviction after its place is recorded); when this one fails, it
	 * goes back unsent as failed with this one's status.  Owned. */
	struct mu__kwork *then;
} mu__kwork_t;

typedef struct mu__kwq {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	mu__kwork_t *hi_head, *hi_tail;  /* binds and evictions */
	mu__kwork_t *lo_head, *lo_tail;  /* status and events */
	size_t nhi, nlo, lo_cap;
	size_t nev, ev_cap;              /* Events among the lo list, and their cap */
	uint64_t ev_dropped;             /* Events dropped at the cap */
	mu__kwork_t *done;               /* outcomes for the main loop */
	int busy;                        /* requests being run */
	bool note_busy;                  /* a NOTE is being run: notes go one
	                                  * at a time, in order (a node's
	                                  * later record never lands first) */
	bool closing;
} mu__kwq_t;

/* --- decs.c: a cycle's decisions, compact ------------------------------------ */

/* One decision without its reason and CPU set, which are kept apart (by
 * index, -1 none) only when there is one: 48 bytes against 320. */
typedef struct mu__kdec {
	uint64_t gpus;
	mu_id_t job, node, by;
	int32_t podset, pod, gpu_milli;
	int32_t reason, cpus;   /* index in r / c, or -1 */
	int8_t kind, numa, nic;
	bool suspend, move;
} mu__kdec_t;

typedef struct mu__kdecs {
	mu__kdec_t *v;
	size_t n, cap;
	mu_reason_t *r;         /* reasons of pending decisions (and any
	                         * other that has one) */
	size_t nr, rcap;
	mu_cpuset_t *c;         /* CPU sets that are not empty */
	size_t nc, ccap;
} mu__kdecs_t;

/* The engine's sink (mu_decisions_t.sink, arg a mu__kdecs_t): appends d.
 * MU_ENOMEM when out of memory.  O(1) amortized. */
int mu__kdecs_sink(void *arg, const mu_decision_t *d);
/* Decision i (< k->n) whole, as the engine made it, in *out; returns out.
 * O(1). */
const mu_decision_t *mu__kdecs_get(const mu__kdecs_t *k, size_t i, mu_decision_t *out);
/* Empties k, keeping its arrays. */
void mu__kdecs_clear(mu__kdecs_t *k);
/* The bytes k's arrays hold (their capacity). */
size_t mu__kdecs_bytes(const mu__kdecs_t *k);
void mu__kdecs_release(mu__kdecs_t *k);

/* Counters and gauges for /metrics, under m.mu. */
typedef struct mu__kmetrics {
	pthread_mutex_t mu;
	uint64_t binds, bind_errors, evictions, cycles, admissions, suspensions;
	uint64_t dra_lists, dra_items;   /* DRA list reads and the objects they returned (dra.c) */
	double cycle_ms_sum, cycle_ms_last;
	uint64_t cycle_hist[12];         /* <=1,2,5,10,20,50,100,200,500,1000,5000,+Inf ms */
	uint64_t e2e_hist[12];           /* pod first seen to bind confirmed */
	double e2e_sum;
	char *queues;                    /* preformatted per-queue lines */
	char *policy;                    /* preformatted muster-horizon lines
	                                  * (rechoose.c), NULL without */
	bool leader, ready;
} mu__kmetrics_t;

/* One /explain question from the HTTP thread to the main loop, which owns
 * the engine: the asker sets key and asked, the loop sets answer. */
typedef struct mu__kexq {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char key[700];          /* "pod NS/NAME" or "job NS/NAME" */
	bool asked;
	char *answer;           /* JSON, owned until the asker takes it */
} mu__kexq_t;

typedef struct mu__kmserver mu__kmserver_t;
typedef struct mu__klease mu__klease_t;

typedef struct mu__kd {
	const mu_kube_opts_t *o;
	mu__klog_t log;
	mu__kauth_t auth;
	atomic_int stop;        /* every thread stops */
	atomic_int lost;        /* the lease was lost */
	/* Until when (mono ms) this replica may schedule and write: the start
	 * of its last successful lease renew plus the renew deadline, which is
	 * shorter than the lease (INT64_MAX without leader election).  Read
	 * by the main loop and the writers; written by the lease thread. */
	_Atomic int64_t lease_until;
	/* The lease term this replica leads in, "NS/NAME:HOLDER:TRANSITIONS"
	 * (set once, before leading; "" without leader election): carried by
	 * binds and evictions as muster.io/lease-term. */
	char lease_term[600];
	mu__kq_t evq;
	mu__krefl_t *refl;
	atomic_llong synced;
	mu_engine_t *e;
	mu__kshapes_t shapes;
	mu__kmap_t pods, groups, nodes;
	mu__kmap_t mpgs, xpgs;  /* "ns/name" -> json_t PodGroup (owned ref) */
	mu__kmap_t pdbs;        /* "ns/name" -> json_t PodDisruptionBudget (pdb.c) */
	mu__kmap_t wls;         /* "KIND:ns/name" -> json_t workload object (kinds.c) */
	mu__kmap_t nss;         /* namespace name -> {metadata: {name, labels}} (nsel.c) */
	uint64_t nss_gen, nss_done; /* namespace label changes, and those the pods saw */
	mu__kgroup_t **ej_group; /* engine job id -> group */
	int32_t ej_cap;
	mu__kgroup_t **dirty;   /* groups to sync before the next cycle */
	int32_t ndirty, dirty_cap;
	json_t *queue_objs;     /* name -> Queue objects waiting for a parent */
	json_t *pclasses;       /* PriorityClass name -> {"maxWait": ms,
	                         * "escalation": mu_escalation_t, "value",
	                         * "globalDefault", "preemptionPolicy"} */
	bool changed;           /* something changed since the last cycle */
	bool wfailed;           /* a bind or eviction failed since the last cycle:
				  * no sync between cycles until the next one */
	bool all_synced;
	int64_t last_cycle;     /* mono ms */
	int64_t last_status;    /* mono ms of the last queue status pass */
	int64_t last_trim;      /* mono ms of the last mu__heap_trim(), 0 none */
	bool dra_seen;          /* a pod with ResourceClaims was seen (dra.c) */
	int64_t dra_retry_ms;   /* mono ms of the last DRA retry pass */
	uint32_t dra_round;     /* the DRA retry round (from 1; pods start at 0) */
	json_t *dra_ext;        /* {node: {muster.io/dra-CLASS: devices}}: the counted
				 * DRA devices each node has (dra.c), or NULL */
	json_t *dra_refeed;     /* names of nodes whose counts changed, to feed to the
				 * engine again (state.c does), or NULL */
	json_t *dra_cache;      /* the DRA lists last read (dra.c: slices, classes,
				 * claims, nodes, rules, tpls), or NULL */
	int64_t dra_cache_ms;   /* mono ms when they were read */
	int64_t last_rollback;  /* mono ms of the last stale-gang pass */
	int64_t last_mig;       /* mono ms of the last MIG layout pass (mig.c) */
	/* rechoose.c: muster-horizon's state (the engine scores with hz.mix),
	 * the choice out on its worker thread, and whether that finished. */
	mu_horizon_t hz;
	bool hz_on;
	/* --policy muster, fgd or muster-supply: the engine scores with
	 * hz.mix, the demand of the pods pending and running
	 * (mu__kd_mix_pod), not with rollouts. */
	bool mix_live;
	mu_horizon_job_t *hz_job;
	pthread_t hz_thread;
	atomic_int hz_done;
	/* the settings placing now, as a Binding's muster.io/policy-setting
	 * says them ("" without muster-horizon; rechoose.c writes it) */
	char hz_setting[256];
	/* release.c: pods leaving their node ("ns/name"), binds held for them */
	char **leaving;
	int32_t nleaving, leaving_cap;
	struct mu__khold *held;
	int32_t nheld, held_cap;
	/* move.c: places held for the replacements of moved pods */
	struct mu__kmove *moves;
	int32_t nmoves, moves_cap;
	uint64_t move_seq;      /* makes placeholder job names unique */
	mu_decisions_t dec;     /* the cycle's output: its sink fills kdec */
	mu__kdecs_t kdec;       /* the cycle's decisions (decs.c) */
	mu__kwq_t wq;
	/* write.c: binds decided but not yet queued for the writers, as the
	 * keys of their pods (owned), oldest first in a ring: at most
	 * MU__KD_BIND_WINDOW rendered requests wait in wq at a time. */
	char **bwait;
	size_t bw_head, bw_n, bw_cap;
	pthread_t *workers;
	int nworkers;
	mu__kmetrics_t m;
	mu__kexq_t ex;
	mu__kmserver_t *ms;
	mu__klease_t *lease;
	char default_queue[256];
	uint64_t evseq;         /* makes event names unique */
	json_t *queue_names;    /* Queue objects seen: name -> last status */
	/* The live UI (ui.c) and the listener's bearer token. */
	struct mu_web *ui;      /* NULL without --metrics */
	char token[256];        /* "" = none */
	int64_t ui_cycle;       /* d->last_cycle at the UI's last tick */
} mu__kd_t;

/* --- events.c: events in, dirty groups synced ------------------------------- */

/* Applies one watch event to the view (and the engine where it is
 * incremental: nodes, queues, topologies); groups it touches are marked
 * dirty.  Takes ev's reference. */
void mu__kd_event(mu__kd_t *d, mu__kev_t *ev);
/* Syncs every dirty group with the engine (submit, re-plan, finish).
 * O(members of the dirty groups). */
void mu__kd_sync(mu__kd_t *d, mu_time_t now);

/* --- state.c: the view ------------------------------------------------------- */

/* --- rechoose.c: muster-horizon in the live scheduler ------------------- */

/* With --policy muster-horizon, starts d->hz (opts->horizon) and makes
 * its mix the engine's score state in *cfg; with --policy muster (or its
 * old name muster-mg), fgd or muster-supply and no state of the caller's,
 * the same mix, kept as the demand of the pods pending and running
 * (d->mix_live; fgd's typical pods); refuses
 * muster-rollout (MU_EINVAL).  Before the engine is made. */
int mu__kd_hz_init(mu__kd_t *d, mu_engine_config_t *cfg);
/* Counts the pods of job spec j, just submitted for group g, as seen:
 * only those beyond the most g has been submitted with (g->hz_seen), so
 * that a gang submitted again as its pods arrive (2, 3, ... of them)
 * counts each pod once, not 2 + 3 + ...  A failure (memory) is logged and
 * leaves the demand short; the submission stands.  O(pod sets x shapes). */
void mu__kd_hz_seen(mu__kd_t *d, mu__kgroup_t *g, const mu_job_spec_t *j);
/* With a live mix (d->mix_live: muster, fgd, muster-supply): counts pod p in the demand the
 * engine scores with, or takes it out, as it is now: one of ours, not
 * ended, not gated, readable (gone: being freed, out).  Called at every
 * pod event and shape change; O(models) when the shape changed, O(1)
 * otherwise.  A pod asking GPU memory counts as the share the engine
 * would give it now; when no node holds it yet, it is tried again at its
 * next event. */
void mu__kd_mix_pod(mu__kd_t *d, mu__kpod_t *p, bool gone);
/* At a cycle's start: with a live mix (d->mix_live), builds the engine's mix again
 * when the demand moved (mu_horizon_live_mix) and drops the scores;
 * with muster-horizon, applies a finished choice (the engine's scores
 * dropped, logged, in /metrics).  After it: starts a due choice on a
 * worker thread from a snapshot.  Never waits for the rollouts. */
void mu__kd_hz_before(mu__kd_t *d);
void mu__kd_hz_after(mu__kd_t *d);
/* Waits for a choice out and frees everything. */
void mu__kd_hz_stop(mu__kd_t *d);

int mu__kd_state_init(mu__kd_t *d);
void mu__kd_state_release(mu__kd_t *d);
void mu__kd_mark_dirty(mu__kd_t *d, mu__kgroup_t *g);
mu__kgroup_t *mu__kd_group(mu__kd_t *d, const char *key, mu__kgkind_t kind,
			   const char *ns, const char *name);
/* Ends g's engine job, if any: finished when its work is done (its run
 * time then feeds the queue's history), else withdrawn to be planned
 * again (mu_engine_job_withdraw). */
void mu__kd_finish(mu__kd_t *d, mu__kgroup_t *g, mu_time_t now, bool done);
/* Drops g when it has no members and nothing keeps it. */
void mu__kd_group_gc(mu__kd_t *d, mu__kgroup_t *g);
/* Records in engine job ej that live pod p (engine pod idx of pod set ps)
 * is bound to node nid: with the devices its annotations name, else (none,
 * or ones the engine refuses as not its own or not free) with devices the
 * engine chooses, which is logged.  Returns mu_engine_pod_bound()'s code.
 * O(devices). */
int mu__kd_pod_bound(mu__kd_t *d, mu_id_t ej, int32_t ps, int32_t idx, mu_id_t nid,
		     const mu__kpod_t *p, mu_time_t now);
/* Records ej as g's engine job. */
int mu__kd_set_ej(mu__kd_t *d, mu__kgroup_t *g, mu_id_t ej);
/* The engine job name of g's next submission ("KEY", then "KEY~GEN"):
 * one the engine has not seen, also when an earlier object of the same
 * name (another UID) used the first ones. */
void mu__kd_ej_name(mu__kd_t *d, mu__kgroup_t *g, char *buf, size_t len);
/* Regroups the pods controlled by Job ns/job (the Job was seen or its
 * kind of group changed).  O(pods). */
void mu__kd_regroup_owned(mu__kd_t *d, const char *ns, const char *job);
/* A RayJob `job` in ns came, changed or went: the pods of its submitter
 * Job (a batch/v1 Job of the same name) join or leave its group.
 * O(pods). */
void mu__kd_regroup_submitter(mu__kd_t *d, const char *ns, const char *job);
/* Regroups the pods whose workload object is `wl_key` (a RayCluster seen
 * or changed: its pods may belong to the RayJob that controls it, and
 * join its group).  O(pods). */
void mu__kd_regroup_wl(mu__kd_t *d, const char *wl_key);
/* A pod's queue: its label, its group's, or the default. */
const char *mu__kd_queue_of(mu__kd_t *d, const mu__kgroup_t *g);

/* One watch event of each kind (deleted: the object is gone). */
void mu__kd_node_event(mu__kd_t *d, json_t *obj, bool deleted);
void mu__kd_nrt_event(mu__kd_t *d, json_t *obj, bool deleted);
void mu__kd_topo_event(mu__kd_t *d, json_t *obj, bool deleted);
void mu__kd_queue_event(mu__kd_t *d, json_t *obj, bool deleted);
/* A NodePool: upserted into the engine; queues that waited for it follow.
 * A deleted pool stays in the engine until the scheduler restarts. */
void mu__kd_pool_event(mu__kd_t *d, json_t *obj, bool deleted);
/* A PriorityClass: its class of service (muster.io/max-wait and
 * muster.io/escalation annotations) for the pods that name it. */
void mu__kd_pc_event(mu__kd_t *d, json_t *obj, bool deleted);
/* A PodGroup: muster's (muster true) or the coscheduling plugin's. */
void mu__kd_pg_event(mu__kd_t *d, json_t *obj, bool deleted, bool muster);
void mu__kd_pod_upsert(mu__kd_t *d, json_t *obj);
/* Forgets the pod with key "ns/name" and marks its group dirty. */
void mu__kd_pod_delete(mu__kd_t *d, const char *key);
/* Brings a group that is not a Job's admission group up to date with the
 * engine (see state.c). */
void mu__kd_group_sync(mu__kd_t *d, mu__kgroup_t *g, mu_time_t now);

/* --- jobs.c ------------------------------------------------------------------ */

/* A batch/v1 Job changed (obj NULL: deleted). */
void mu__kd_job_event(mu__kd_t *d, const char *key, json_t *obj, bool deleted);
/* Syncs a Job admission group with the engine and its pods. */
void mu__kd_job_sync(mu__kd_t *d, mu__kgroup_t *g, mu_time_t now);
/* Engine decisions for a Job admission group. */
void mu__kd_job_bind(mu__kd_t *d, mu__kgroup_t *g, const mu_decision_t *dec);
void mu__kd_job_evict(mu__kd_t *d, mu__kgroup_t *g, const mu_decision_t *dec);
/* After a cycle: un-suspends Jobs whose engine job is now running and
 * hands planned slots to waiting pods. */
void mu__kd_job_after_cycle(mu__kd_t *d, mu__kgroup_t *g);
/* The PodGroup controller: a Job whose pods are ours becomes a gang. */
void mu__kd_pgctl(mu__kd_t *d, const json_t *job);

/* Whether this replica may still act: its lease cannot have passed to
 * another replica yet.  O(1). */
static inline bool mu__kd_may_act(mu__kd_t *d)
{
	return mu__k_mono_ms() < atomic_load(&d->lease_until);
}

/* --- write.c: the write path ------------------------------------------------ */

/* The queue, empty, without workers (mu__kwq_start starts them). */
void mu__kwq_init(mu__kwq_t *q);
int mu__kwq_start(mu__kd_t *d);
/* Stops the workers once the queued binds and evictions are written. */
void mu__kwq_stop(mu__kd_t *d);
/* Queues a request (strings copied).  kind MU__KW_WRITE is dropped when
 * the low-priority queue is full, an Event (w->event, mu__kd_event_write)
 * also when 1,000 Events are queued (counted in wq.ev_dropped). */
void mu__kd_write(mu__kd_t *d, mu__kwkind_t kind, const char *method,
		  const char *path, const char *ctype, json_t *body,
		  const char *pod_key, const char *node);
/* A request not yet queued (strings copied), or NULL when out of memory;
 * mu__kd_queue() queues it (with its `then`), as mu__kd_write() does. */
mu__kwork_t *mu__kwork_new(mu__kwkind_t kind, const char *method, const char *path,
			   const char *ctype, json_t *body, const char *pod_key, const char *node);
void mu__kd_queue(mu__kd_t *d, mu__kwork_t *w);
/* Frees a finished request and everything it owns (its `then` too); NULL
 * is a no-op. */
void mu__kwork_free(mu__kwork_t *w);
/* Binds queued for the writers at a time, rendered (about 420 bytes
 * each); the rest wait as pod keys (about 40) in d->bwait. */
#define MU__KD_BIND_WINDOW 1024
/* Sends the binding of pod to node with the devices of dev: p->an_node
 * and p->dev are set now, and the Binding is queued now while fewer than
 * MU__KD_BIND_WINDOW binds, evictions and notes wait for a writer and
 * none waits in d->bwait; otherwise p's key waits there (p->bind_wait)
 * and mu__kd_bind_flush() queues it later from p->an_node and p->dev.  A
 * cycle that places a 58,000-pod backlog queued them all at once: 24 MB
 * at the daemon's peak (docs/evaluation.md, "Ninth round"). */
void mu__kd_bind(mu__kd_t *d, mu__kpod_t *p, const char *node,
		 const mu_decision_t *dev);
/* Queues the waiting binds, oldest first, until the window is full (all:
 * every one, as the daemon stops).  A pod gone, bound meanwhile or no
 * longer in flight is skipped: its bind is not sent.  O(binds queued);
 * the ring is given back once empty. */
void mu__kd_bind_flush(mu__kd_t *d, bool all);
/* Writes an Event about an object. */
void mu__kd_event_write(mu__kd_t *d, const char *kind, const char *api,
			const char *ns, const char *name, const char *uid,
			const char *type, const char *reason, const char *msg);
/* The JSON text of a Binding of pod ns/name (uid NULL: null) to node
 * with annotations an (an object of strings), and of an Event (ename its
 * name, ts its first and last time); what json_dumps printed of the
 * json_pack trees they were, byte for byte.  Owned by the caller; NULL
 * when out of memory or a string is not valid UTF-8. */
char *mu__kd_binding_text(const char *ns, const char *name, const char *uid, const json_t *an,
			  const char *node);
char *mu__kd_event_text(const char *ename, const char *kind, const char *api, const char *ns,
			const char *name, const char *uid, const char *type, const char *reason,
			const char *msg, const char *ts, const char *component, const char *instance);
/* Sets the PodScheduled=False condition (and a FailedScheduling event)
 * when msg differs from the last one written. */
void mu__kd_pod_pending(mu__kd_t *d, mu__kpod_t *p, const char *msg);
/* Evicts p (policy/v1 Eviction, retried on 429) once, with an event
 * (reason, msg) on the pod; the caller marks p's group dirty. */
void mu__kd_evict(mu__kd_t *d, mu__kpod_t *p, const char *reason, const char *msg);
/* The same, but the eviction is returned unqueued (the caller queues it,
 * alone or after another write); NULL when p is being evicted already or
 * out of memory.  The event is written and p marked evicting at once. */
mu__kwork_t *mu__kd_evict_work(mu__kd_t *d, mu__kpod_t *p, const char *reason, const char *msg);

/* --- apply.c: decisions and outcomes ------------------------------------------ */

/* Applies the outcomes of finished binds and evictions. */
void mu__kd_outcomes(mu__kd_t *d);
/* Turns a cycle's decisions into writes. */
void mu__kd_apply(mu__kd_t *d, const mu__kdecs_t *dec, mu_time_t now);

/* --- daemon.c: the loop's pacing ---------------------------------------------- */

/* What the loop does once its events are in, since ms after the last
 * cycle: a cycle (something changed and cycle_ms passed, or
 * idle_cycle_ms passed), else the sync of the dirty groups between cycles
 * (mu__kd_sync) unless a bind or eviction failed since the last cycle
 * (d->wfailed: the failed bind's group is dirty, and a sync would send it
 * again at once; its retries wait for the cycles, one per cycle_ms), else
 * nothing.  Reads d only; O(1). */
typedef enum mu__kstep { MU__KSTEP_NONE = 0, MU__KSTEP_CYCLE, MU__KSTEP_SYNC } mu__kstep_t;
mu__kstep_t mu__kd_step(const mu__kd_t *d, int64_t since);

/* --- release.c: binds that wait for leaving pods ------------------------------ */

/* A bind held until the pods leaving its node are gone. */
typedef struct mu__khold {
	char *pod_key, *node;
	mu_decision_t dev;
} mu__khold_t;

/* Notes that bound pod p is leaving its node (evicted or deleted). */
void mu__kd_leaving_note(mu__kd_t *d, const mu__kpod_t *p);
/* Binds p to node at once, or, when a pod leaving that node holds one of
 * its devices, holds the bind (p counts as placed) until it is gone. */
void mu__kd_bind_or_hold(mu__kd_t *d, mu__kpod_t *p, const char *node, const mu_decision_t *dev);
/* Writes the held binds whose nodes are free now; drops those whose pods
 * moved on.  O(held x leaving). */
void mu__kd_held_release(mu__kd_t *d);
void mu__kd_release_free(mu__kd_t *d);

/* --- move.c: consolidation through eviction and re-creation ------------------ */

/* Whether the pod of `in` has a controlling owner that makes a new pod
 * when it is evicted (Job, ReplicaSet, StatefulSet, the Kubeflow jobs,
 * RayCluster); if so "KIND/NAME" goes to buf.  O(1). */
bool mu__kd_move_ctrl(const mu__kpodinfo_t *in, char *buf, size_t len);
/* The index a recreating controller gives pod (a Job's completion index,
 * a Kubeflow job's replica type and index, a StatefulSet's ordinal: its
 * label apps.kubernetes.io/pod-index or its name's last number) into buf;
 * false when it gives none.  Its replacement carries the same.  O(1). */
bool mu__kd_move_index(const json_t *pod, const mu__kpodinfo_t *in, char *buf, size_t len);
/* The engine moved pod p (of queue) to node with the devices of dec: a
 * place is held there for the pod its controller makes next.  evict (p's
 * eviction, unsent; taken) is sent only once the place is recorded on
 * the node (the annotation's write succeeded), so that no kill leaves
 * the pod evicted and its place unrecorded; without a place (nothing
 * recreates p, out of memory) it is sent at once. */
void mu__kd_move_plan(mu__kd_t *d, const mu__kpod_t *p, const char *queue, const char *node,
		      const mu_decision_t *dec, mu__kwork_t *evict);
/* Pod p's eviction failed for good (it stays): the places held for its
 * replacement are given up.  O(places). */
void mu__kd_move_forget(mu__kd_t *d, const mu__kpod_t *p, mu_time_t now);
/* Holds the planned places in the engine (a placeholder job bound there)
 * once the moved pods' groups are synced; drops those held longer than
 * --move-hold.  Called at the end of each sync; true when a place was
 * held for the first time (a replacement may be waiting).  O(places). */
bool mu__kd_move_hold(mu__kd_t *d, mu_time_t now);
/* Whether p is an unbound pod of ours that a held place waits for. */
bool mu__kd_move_waiting(const mu__kd_t *d, const mu__kpod_t *p);
/* Pod p (unbound, of a recreating controller) takes a held place of its
 * controller and shape (and index, when the moved pod had one), if there
 * is one: the placeholder goes and p is
 * bound there (or its bind held for the leaving pods).  O(places). */
bool mu__kd_move_claim(mu__kd_t *d, mu__kpod_t *p, mu_time_t now);
/* Holds a place on node (devices dec) for the next pod of controller
 * ctrl ("KIND/NAME") in ns and queue, of shape (a reference taken), that
 * is not yet made: a RayJob's submitter, admitted with its RayJob.
 * Claimed, given up and kept over a restart as a moved pod's place. */
void mu__kd_move_reserve(mu__kd_t *d, const char *ns, const char *ctrl, const char *queue,
			 const char *node, const mu_decision_t *dec, mu__kshape_t *shape);
/* A node seen for the first time: the places its annotation
 * muster.io/held-places records are held again (unless known already).
 * O(places on it x places). */
void mu__kd_move_restore(mu__kd_t *d, const json_t *node);
/* Frees the places (their annotations stay, for the next start). */
void mu__kd_move_free(mu__kd_t *d);

/* --- nsel.c: namespaceSelector in pod affinity terms ------------------------- */

/* Whether pod has a pod affinity term whose namespaceSelector has labels. */
bool mu__kd_nssel_wants(const json_t *pod);
/* A copy of pod (owned) whose such terms list the namespaces their
 * selectors match now, joined to their `namespaces`.  NULL on out of
 * memory.  O(terms x namespaces). */
json_t *mu__kd_nssel_pin(const mu__kd_t *d, const json_t *pod);
/* A Namespace changed (deleted: gone): its labels are kept; d->nss_gen
 * moves when they changed. */
void mu__kd_ns_event(mu__kd_t *d, json_t *obj, bool deleted);
void mu__kd_ns_release(mu__kd_t *d);

/* --- pdb.c: PodDisruptionBudgets and the victim choice ------------------------ */

/* A PodDisruptionBudget changed (deleted: it is gone); the groups of its
 * namespace get their allowance again.  O(groups x their pods). */
void mu__kd_pdb_event(mu__kd_t *d, json_t *obj, bool deleted);
/* A re-list of PDBs starts: forgets them all (the list brings them back). */
void mu__kd_pdb_forget(mu__kd_t *d);
/* ... and ends: every group gets its allowance again.  O(groups x pods
 * x PDBs). */
void mu__kd_pdb_relisted(mu__kd_t *d);
/* Tells the engine how many of g's pods the budgets covering them let go
 * (the least status.disruptionsAllowed among the PDBs whose selector
 * matches one of its pods; -1 when none does).  O(pods x PDBs); nothing
 * without PDBs. */
void mu__kd_pdb_group(mu__kd_t *d, mu__kgroup_t *g);
void mu__kd_pdb_release(mu__kd_t *d);

/* --- wl.c: workload objects in the view ---------------------------------- */

/* A workload object of kind k changed (deleted: gone); its groups take
 * what it says.  O(groups). */
void mu__kd_wl_event(mu__kd_t *d, mu__wlkind_t k, json_t *obj, bool deleted);
/* Gives a workload group (g->wl_key set) what its object says, if it is
 * known (before its sync; events.c). */
void mu__kd_wl_attach(mu__kd_t *d, mu__kgroup_t *g);
void mu__kd_wl_release(mu__kd_t *d);
/* Syncs a group whose object is suspended until muster admits it, or was
 * admitted and waits for its pods: an engine job of the object's pod
 * templates is submitted, and kept (holding its room) until the group has
 * minMember pods.  False when the group is to be synced as any other
 * (mu__kd_group_sync).  O(parts + members). */
bool mu__kd_wl_sync(mu__kd_t *d, mu__kgroup_t *g, mu_time_t now);
/* A pod of g's template job was placed (dec): the place is kept as a
 * slot for a pod of that part. */
void mu__kd_wl_admit(mu__kd_t *d, mu__kgroup_t *g, const mu_decision_t *dec);
/* After a pass over the decisions: g's template job was placed, so its
 * object is unsuspended with an Admitted event, once, in one merge patch
 * that also records its places (annotation muster.io/held-places: part
 * index, node, devices), so that a restarted scheduler holds them again
 * until the pods come.  O(slots). */
void mu__kd_wl_admitted(mu__kd_t *d, mu__kgroup_t *g);
/* Why g's suspended object is not admitted yet, as an event on it when
 * the message changes. */
void mu__kd_wl_pending(mu__kd_t *d, mu__kgroup_t *g, const char *msg);
/* Re-suspension, as Kueue evicts an admitted workload: g's object was
 * admitted by muster and its pods can no longer all run (`why`: preempted,
 * rolled back, a pod failed or its node was lost; `reason`, as Kueue's
 * Evicted condition's: Preempted, PodsReadyTimeout, or muster's
 * GangRestart).  The object is suspended again (merge patch, which also
 * sets the annotation muster.io/evicted to the Evicted condition: type,
 * status, reason, message, lastTransitionTime) with an Evicted event
 * saying why, the
 * group's bound pods are evicted, its engine job goes, and the group waits
 * as a suspended one: its templates are queued again once the watch
 * shows the object suspended and its pods are gone or ended (its
 * controller removes them).  False (nothing
 * done) when g is not such a group.  O(members). */
bool mu__kd_wl_resuspend(mu__kd_t *d, mu__kgroup_t *g, const char *reason, const char *why);

/* --- rollback.c ---------------------------------------------------------------- */

/* Evicts the bound pods of gangs that have stayed below their minMember
 * for --gang-rollback (see rollback.c).  At most one pass a second,
 * O(groups). */
void mu__kd_gang_rollback(mu__kd_t *d);

/* --- leader.c and metrics.c ------------------------------------------------- */

/* Queue and PodGroup status, at most every 2 s. */
void mu__kd_status(mu__kd_t *d);

/* Acquires the lease (blocking until then or stop); starts renewing it in
 * a thread that sets d->lost when it cannot renew in time. */
int mu__klease_acquire(mu__kd_t *d);
/* Stops renewing; releases the lease (holder cleared) when still held. */
void mu__klease_release(mu__kd_t *d);

int mu__kms_start(mu__kd_t *d, const char *listen, char *err, size_t errlen);
void mu__kms_stop(mu__kd_t *d);
/* Records one cycle's time and refreshes the per-queue gauges. */
void mu__kd_metrics_cycle(mu__kd_t *d, double ms);

/* --- mig.c: MIG layouts for the pending demand (--mig-layouts) ------------ */

/* At most once a second, after a cycle: re-plans the MIG layouts of the
 * nodes whose nvidia.com/gpu.product is MIG-capable for the pods still
 * waiting, holding the devices of the pods on them (mu_mig_replan), and
 * writes each changed layout as the node's muster.io/mig-layout
 * annotation.  O(pods + MIG GPUs^2). */
void mu__kd_mig(mu__kd_t *d);
void mu__kd_metrics_hist(uint64_t *h, double ms);
/* Answers a pending /explain question from the engine's view (main loop
 * only).  O(1). */
void mu__kd_explain_serve(mu__kd_t *d);

/* --- ui.c: the live web UI's provider ------------------------------------- */

/* Creates d->ui over the daemon's view (d->token guards its API). */
int mu__kui_start(mu__kd_t *d);
/* On the main loop: lets the UI take a snapshot when one is due;
 * changed: watch events were applied since the last call. */
void mu__kui_tick(mu__kd_t *d, bool changed);

/* --- DRA (dra.c) ---------------------------------------------------------- */

/* Whether the pod asks for ResourceClaims. */
bool mu__kd_dra_wants(const json_t *pod);
/* Allocates the claims of pod (a Pod, or p->dra) on node, or on the first
 * node where all fit when node is NULL (the slices' nodes, or every node
 * when a slice serves several): *node_out (malloc'd) and *plan ([{claim,
 * allocation}], owned).  With node NULL and all given, every node where
 * they fit (at most MU__KD_DRA_NODES) is appended to all.  MU_OK; MU_ENOENT
 * (no node fits), MU_EINVAL (refused), MU_EIO (reading failed) with why in
 * msg.  Synchronous; O(nodes x slices x devices x selectors). */
#define MU__KD_DRA_NODES 256
int mu__kd_dra_allocate(mu__kd_t *d, const json_t *pod, const char *node, json_t *all, char **node_out,
			json_t **plan, char *msg, size_t len);
/* Writes each claim's status.allocation and reservedFor (p) of plan. */
int mu__kd_dra_reserve(mu__kd_t *d, const mu__kpod_t *p, const json_t *plan, char *msg, size_t len);
/* Sets p->dra and p->dra_msg from pod and returns a copy of pod (owned)
 * pinned to the nodes its claims fit on (a node selector for one node, a
 * required node affinity on kubernetes.io/hostname for several: a claim
 * of network-attached devices fits on many), or to none. */
json_t *mu__kd_dra_pin(mu__kd_t *d, mu__kpod_t *p, const json_t *pod);
/* Allocates p's claims on node and writes them before the bind; false
 * (p->dra_msg says why) when that fails. */
bool mu__kd_dra_bind(mu__kd_t *d, mu__kpod_t *p, const char *node);
/* Every 2 s (with the retry pass), when pods with claims were seen: the
 * devices each node has of every counted class (a class that
 * ResourceClaimTemplates ask for and whose devices are all node-local, at
 * most 4), less those held by claims the engine does not count (another
 * scheduler's, a named claim's: round 16), into d->dra_ext; the nodes whose counts changed are added to
 * d->dra_refeed, for state.c to feed to the engine again.
 * O(classes x nodes x slices x devices). */
void mu__kd_dra_counts(mu__kd_t *d);
/* A copy of pod (bound: found so at start-up) asking for the counted
 * devices of its template claims, so that the engine knows evicting it
 * frees them; NULL when it asks for none.  Counts first if never done. */
json_t *mu__kd_dra_counted(mu__kd_t *d, const json_t *pod);
/* Appends node's counted DRA devices (d->dra_ext) to its spec's extended
 * resources (room for MU_RES_MAX - MU_RES_NAMED0 of them). */
void mu__kd_dra_node_ext(const mu__kd_t *d, mu_node_spec_t *s);
/* Every 2 s: pods of ours whose claims could not be allocated (or whose
 * bind found the devices gone) are pinned again from p->dra, at most 32 a
 * pass, in rounds (each waiting pod once a round), since devices free up
 * when claims are deallocated.  O(pods). */
void mu__kd_dra_retry(mu__kd_t *d, int64_t now_ms);

#endif
