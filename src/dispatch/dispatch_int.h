/*
 * dispatch_int.h - the hub daemon's own structures, shared by the files
 * of src/dispatch: dutil.c (requests, logs, clocks, the copy of a hub
 * Job) at the bottom, served.c (the kinds a server serves, and a watch
 * for each of those only) above it, podcap.c (what a worker's other pods take, per
 * node) above it, hub.c (the hub's Clusters, Queues and Jobs in;
 * annotations, status and events out) above dutil.c and qstatus.c (a
 * hub Queue's condition Active), failcreate.c (a
 * worker's FailedCreate Events) above hub.c, worker.c (a worker's Nodes
 * and copies in; copies created and deleted; pull mode's reports) above
 * both, run.c (the pass: dispatch, exactly once, timeouts, lost
 * clusters) on top; agent.c (`muster dispatch agent`, pull mode) beside
 * run.c, over worker.c's helpers; metrics.c (/metrics, and /ui/ of ui.c)
 * under run.c.
 *
 * One thread owns everything, except while a pass sends many dispatches:
 * then sender threads (run.c) each write only their own jobs, over their
 * own connections, and read the clusters, which nothing changes meanwhile.
 */
#ifndef MUSTER_DISPATCH_INT_H
#define MUSTER_DISPATCH_INT_H

#include <jansson.h>

#include "muster/dispatch.h"
#include "muster/fleet.h"
#include "muster/specs.h"

/* Labels and annotations the hub daemon reads and writes. */
#define MU__D_QUEUE "muster.io/queue"
#define MU__D_SEL "muster.io/cluster-selector"  /* "k=v,k=v" */
#define MU__D_LOC "muster.io/data-locality"     /* "k=v,k=v" */
#define MU__D_CLUSTER "muster.io/cluster"       /* hub Job: where */
#define MU__D_GEN "muster.io/dispatch-generation"
#define MU__D_PHASE "muster.io/dispatch-phase"  /* Queued, Dispatched, ... */
#define MU__D_REASON "muster.io/dispatch-reason"
#define MU__D_MSG "muster.io/dispatch-message"
#define MU__D_PODS "muster.io/dispatch-pods"    /* "bound=N,running=N,..." */
#define MU__D_PREEMPTED "muster.io/dispatch-preempted" /* hub object, a reclaim's
                                                * victim: "REASON\tmessage" */
#define MU__D_PREEMPTED_FOR "muster.io/dispatch-preempted-for" /* and the key
                                                * of the job it leaves for */
#define MU__D_SHRUNK "muster.io/dispatch-shrunk" /* hub object, an elastic
                                                * victim shrunk (round 17):
                                                * "GEN\tPODS\tREASON\tmessage" */
#define MU__D_SHRINKING "muster.io/dispatch-shrinking" /* hub object: that
                                                * shrink not yet confirmed by
                                                * the worker (round 18), "GEN\tTO"
                                                * (the copy's size to reach) */
#define MU__D_SHRINK_TRIES 5  /* reclaim.c (round 19): a restart's shrink
                               * intent whose PATCH the worker refused
                               * this many times (1, 2, 4, 8 s apart) is
                               * given up */
#define MU__D_SHRINKREP "muster.io/agent-shrink" /* hub Job, by a pull agent
                                                * (round 22): its answer to the
                                                * intent MU__D_SHRINKING, "GEN TO
                                                * done|was|refused TRIES HTTP PAR"
                                                * (PAR: the copy's size, its
                                                * parallelism or Worker replicas) */
#define MU__D_HUBUID "muster.io/hub-uid"        /* copy: its hub Job */
#define MU__D_COPY_SEL "labelSelector=muster.io%2Fhub-uid" /* watches of copies */
#define MU__D_SHARE "muster.io/gpu-share"       /* used text: a GPU share */
#define MU__D_HUBJOB "muster.io/hub-job"        /* copy: NS/NAME */
#define MU__D_DRAIN "muster.io/drain"           /* Cluster: "true" */
#define MU__D_AGENT "muster.io/agent-status"    /* hub Job, by an agent:
                                                 * "GEN PHASE bound=N,..." */
#define MU__D_COPYST "muster.io/dispatch-copy-status" /* hub object, by an
                                                 * agent: "GEN {its copy's status}",
                                                 * where the hub's status is the copy's */
#define MU__D_COPYFAIL "muster.io/dispatch-copy-failed" /* hub Job, by a pull
                          * agent: "GEN message" of its worker's FailedCreate
                          * Event on the copy (failcreate.c) */
#define MU__D_COPYREFUSED "muster.io/dispatch-copy-refused" /* hub object,
                          * by a pull agent: "GEN message" when its worker
                          * refuses the copy of a DRA object the copy's pods
                          * name (round 17): NotAdmitted at once */
#define MU__D_HELD "muster.io/dispatch-held" /* hub group (round 20): its late
                          * pods held (worker.c's j->held of the current
                          * generation, without "told"), JSON, so that a
                          * restart keeps them held without a new attempt */
#define MU__D_PODSREFUSED "muster.io/dispatch-pods-refused" /* hub group
                          * (round 21), by a pull agent: its pods whose claims'
                          * copies the worker refuses, JSON {POD: {"gen": N,
                          * "rv": the hub pod's resourceVersion, "msg": why}}:
                          * held (worker.c's mu__dwork_pull_held), not the group */
#define MU__D_NS "muster-system"                /* agents' ConfigMaps */
#define MU__D_TERM "muster.io/lease-term"       /* hub Job: the record's term */
#define MU__D_MANAGER "muster.io/dispatch"      /* spec.managedBy: status is ours */
#define MU__D_CAPS "muster.io/cluster-caps"     /* hub Queue: "CL=gpu:N,CL=pods:N" */
#define MU__D_MODE "muster.io/dispatch-mode"    /* a fleet cluster's label: push, pull */
#define MU__D_MULTIKUEUE "kueue.x-k8s.io/multikueue" /* managedBy the CRDs allow */
#define MU__D_KINDS "kinds.muster.io/"         /* a fleet cluster's label per kind
                                                 * it serves ("kinds.muster.io/JobSet":
                                                 * "true"), found by discovery */
#define MU__D_REDISCOVER_MS 60000               /* the kinds asked again after */
#define MU__D_PROBE_MS 5000                     /* GET /apis, to see a kind's group
                                                 * version appear or go (served.c) */
/* A worker's pods that take room beside the hub's copies (podcap.c):
 * kube-scheduler's informer selector (not ended), bound, not a copy */
#define MU__D_FAIL_QUERY "fieldSelector=reason%3DFailedCreate" /* failcreate.c */
#define MU__D_USED_QUERY "fieldSelector=spec.nodeName%21%3D%2Cstatus.phase%21%3DSucceeded" \
	"%2Cstatus.phase%21%3DFailed&labelSelector=%21muster.io%2Fhub-uid"


/* The kinds a hub dispatches (kinds.c): batch/v1 Jobs and the suspendable
 * kinds of the workload issue (RayClusters too), as MultiKueue dispatches
 * them, and the kinds without suspend: LeaderWorkerSets, Volcano Jobs, and
 * the PodGroups of muster, Volcano, KAI and the coscheduling plugin with
 * their pods. */
typedef enum mu__dkind {
	MU__DK_JOB = 0,
	MU__DK_JOBSET,
	MU__DK_PYTORCH,
	MU__DK_MPI,
	MU__DK_RAYJOB,
	MU__DK_LWS,
	MU__DK_PODGROUP,          /* muster.io/v1alpha1 */
	MU__DK_VOLCANO_PG,        /* scheduling.volcano.sh/v1beta1 */
	MU__DK_KAI_PG,            /* scheduling.run.ai/v2alpha2 */
	MU__DK_COSCHED_PG,        /* scheduling.x-k8s.io/v1alpha1 (coscheduling) */
	MU__DK_VOLCANO_JOB,       /* batch.volcano.sh/v1alpha1: no suspend */
	MU__DK_RAYCLUSTER,        /* ray.io/v1: suspend, runs until deleted */
	MU__DK_COUNT
} mu__dkind_t;

/* Sender threads of a pass (run.c), each with connections of its own. */
#define MU__D_SENDERS 8

/* A worker's DRA kinds the dispatcher watches (wdra.c): resource.k8s.io
 * as `muster up` and Kubernetes 1.32 serve it. */
#define MU__DDRA_API "resource.k8s.io/v1beta1"
enum { MU__DDRA_SLICES = 0, MU__DDRA_CLASSES, MU__DDRA_CLAIMS, MU__DDRA_N };

/* A worker cluster: a Cluster object on the hub. */
typedef struct mu__dcl {
	char *name;
	bool pull;
	mu_tier_t tier;
	char *secret_ns, *secret_name;
	char *secret_rv;          /* the Secret version its config came from */
	mu_kube_config_t *cfg;    /* heap (clients and watches point to it) */
	mu_kube_client_t *kc;     /* NULL without a usable kubeconfig */
	/* the sender threads' connections, made on first use and kept
	 * (keep-alive: no TLS handshake per pass); slot t is thread t's */
	mu_kube_client_t *pool[MU__D_SENDERS];
	/* push mode: its Nodes, copies (one watch per kind; the kinds'
	 * may fail where their CRD is missing) and their pods, watched */
	mu_kube_watch_t *wnodes, *wcopies[MU__DK_COUNT], *wpods;
	uint64_t nodes_seq;       /* the node watch's changes last synced */
	/* its bound, running pods that are not the hub's copies (podcap.c),
	 * watched in push mode; used: node -> their requests summed
	 * ("cpu=Nm,memory=N,nvidia.com/gpu=N,pods=N"), from the watch or
	 * the agent's report, or NULL */
	mu_kube_watch_t *wused;
	uint64_t used_seq;
	json_t *used;
	/* its Events of reason FailedCreate (failcreate.c), push mode;
	 * fails: the copy uid each names -> its message, or NULL */
	mu_kube_watch_t *wfail;
	uint64_t fail_seq;
	json_t *fails;
	/* its PodDisruptionBudgets (pdbs.c, round 14), push mode: the watch's
	 * change count and the pods' last applied; any: some existed then */
	mu_kube_watch_t *wpdbs;
	uint64_t pdbs_seq, pdbs_pods;
	bool pdbs_any;
	bool pdbs_unread;         /* pull: its agent reports no budgets (said once) */
	int32_t fid;              /* its fleet cluster */
	char *err;                /* why it cannot be used, or NULL */
	bool seen;                /* in the last Cluster list */
	bool draining;
	bool reachable;           /* the last poll answered */
	bool lost;                /* its jobs were requeued */
	int64_t last_ok;          /* mono ms of the last answer */
	json_t *nodes;            /* name -> slim Node text it has */
	int64_t gpus;             /* whole GPUs of its nodes */
	int32_t running, waiting; /* copies started / not started */
	char *status_sig;         /* status last written */
	char *spec_sig;           /* labels, mode, tier, price last taken */
	/* the kinds other than Job it serves (discovery of its API groups,
	 * push mode; the agent's report, pull mode): 1 yes, 0 no, -1 not
	 * known yet; as fleet labels MU__D_KINDS<Kind> */
	int8_t serves[MU__DK_COUNT];
	int64_t disc_at;          /* mono ms of the last discovery, 0: due */
	int64_t probe_at;         /* ... of the last probe of /apis (served.c) */
	uint32_t apis;            /* the last /apis answer acted on (served.c) */
	/* pull mode: the agent's heartbeat ConfigMap */
	char *beat_rv;            /* its last resourceVersion seen */
	int64_t beat_at;          /* mono ms when it changed */
	uint64_t beats;           /* changes seen */
	/* push mode, what its watches changed since the last poll
	 * (worker.c): each watch's change count read last, and its pods'
	 * counts kept up to date from their changes; polled: those are
	 * known (else the next poll reads the watches' snapshots) */
	bool polled;
	uint64_t copies_seq[MU__DK_COUNT], pods_seq;
	json_t *pinfo;            /* pod "ns/name" -> ["UID/GEN", b, r, s, f] */
	json_t *pcount;           /* "UID/GEN" -> [bound, running, succeeded,
	                           * failed, all] (mu__dpods_count's form) */
	/* push mode, its DRA objects (wdra.c, round 15): a watch of its
	 * ResourceSlices, DeviceClasses and ResourceClaims while it serves
	 * them (dra_on: 1 yes, 0 no or not known yet), each watch's change
	 * count and the Nodes' names and labels the fleet was last given;
	 * dra_fed: how many times the fleet was given them */
	mu_kube_watch_t *wdra[MU__DDRA_N];
	uint64_t dra_seq[MU__DDRA_N];
	int8_t dra_on;
	json_t *dra_nodes;
	uint32_t dra_fed;
	/* its copies of hub jobs' ResourceClaimTemplates (hdra.c, round 15):
	 * a watch of those labelled with a hub uid while it serves DRA (round
	 * 20: of all its templates, mu__dhdra_held_worker's); the
	 * sweep's change counts (templates, claims) and the labelled objects
	 * it saw last */
	mu_kube_watch_t *wdtpl;
	uint64_t dtpl_seq[2];
	int dcopies;
	uint64_t dheld_seq[2];    /* round 20: those counts when held pods
	                           * were last looked at (mu__dhdra_held_worker) */
	/* pull mode (round 16): a hash of the DRA report (data.dra) the
	 * fleet was last given from its agent's heartbeat, 0 for none */
	uint64_t dra_hash;
} mu__dcl_t;

typedef enum mu__djstate {
	MU__DJ_NEW = 0,           /* not in the fleet (bad spec, unknown queue) */
	MU__DJ_QUEUED,
	MU__DJ_DISPATCHED,
	MU__DJ_WITHDRAWING,       /* its copy's deletion is not confirmed */
	MU__DJ_DONE,
} mu__djstate_t;

/* A hub Job. */
typedef struct mu__djob {
	char *key;                /* "ns/name"; other kinds "KIND:ns/name" */
	mu__dkind_t kind;
	char *ns, *name, *uid;
	json_t *obj;              /* the latest hub object */
	mu_specs_t specs;         /* its job spec (and selector labels) */
	mu_fleet_job_spec_t fs;
	mu_id_t fid;              /* fleet job, or -1 */
	mu__djstate_t state;
	int32_t cl;               /* DISPATCHED/WITHDRAWING/DONE: cluster */
	uint32_t gen;             /* last dispatch generation recorded */
	int64_t dispatched;       /* mono ms */
	int64_t made;             /* mono ms of the last create retried */
	int64_t path_us[3];       /* this dispatch's path (mono us): decided,
	                           * recorded, created; 0: not (yet) */
	int fails;                /* creates that failed in a row (transient) */
	char *refused;            /* a sender's: the worker's permanent refusal */
	char *preempted;          /* reclaim.c: "REASON\tmessage" once it was
	                           * withdrawn for another job */
	char *preempted_for;      /* reclaim.c: that job's key (written with
	                           * it, read back after a restart) */
	char *shrunk;             /* reclaim.c (round 17): its copy shrunk,
	                           * "GEN\tPODS\tREASON\tmessage" (PODS taken
	                           * off in dispatch GEN); read back */
	char *shrinking;          /* reclaim.c (round 18): "GEN\tTO", its
	                           * shrink recorded (the intent, before the
	                           * worker's PATCH) and not yet confirmed */
	int shrink_tries;         /* reclaim.c (round 19): PATCHes of that
	                           * intent the worker refused since the
	                           * restart, and (mono ms) when the next one */
	int64_t shrink_at;        /* may be made */
	bool shrink_live;         /* reclaim.c (round 22): j->shrinking was
	                           * chosen by this daemon on a pull cluster
	                           * and waits for its agent (the fleet not
	                           * told yet): shrink_x the fleet's entry,
	                           * shrink_was the record before it (owned) */
	mu_fleet_reclaim_t shrink_x;
	char *shrink_was;
	char *failed_create;      /* its current copy's pods refused by the
	                           * worker (failcreate.c): why, or NULL */
	json_t *wstatus;          /* its copy's status as last seen (push mode) */
	/* DRA (hdra.c, round 15): fs.dra (per pod set, the fleet's claims)
	 * and the hub objects they came from ("R/NAME" -> {"r": 0 template,
	 * 1 claim, "name", "obj"}), or NULL for a job without claims */
	json_t *dra, *dra_src;
	bool dra_stale;           /* at dispatch, an object of dra_src was gone
	                           * or changed on the hub (round 17) */
	bool dra_fresh;           /* dra_src was read from the hub at this
	                           * dispatch: the copy needs no second GET */
	json_t *dra_keys;         /* round 18: the keys of d->dra_idx it is
	                           * in ("R/NS/NAME"), or NULL */
	bool started;             /* a pod of its copy was bound */
	bool copy_seen;           /* its copy was listed on the worker */
	bool listed;              /* ... in the last poll of its cluster */
	char phase[16];           /* Succeeded, Failed, ... */
	char pods[96];            /* "bound=N,running=N,succeeded=N,failed=N" */
	char *reason, *msg;       /* why it waits (written when changed) */
	char *ann_sig;            /* annotations last written */
	char *status_sig;         /* status (conditions) last written */
	/* round 20 (hub.c, mu__dhub_annotate_due): the inputs of its
	 * annotations (mu__dhub_memo_key) when they were last found to give
	 * ann_sig, followed by that ann_sig; the same for status_sig (a Job
	 * only); NULL when none.  Checked against both, so a write of
	 * ann_sig from anywhere leaves no stale memo. */
	char *ann_memo, *status_memo;
	uint64_t withdraw_beat;   /* pull: the cluster's beats at withdrawal */
	bool delete_again;        /* push: a withdrawal found on a restart,
	                           * its copy deleted (again) once reachable */
	/* a PodGroup (mu__dkind_is_group): its pods on the hub (a JSON array,
	 * this pass's), and those sent to its cluster ("GEN/NAME" -> true) */
	json_t *gpods, *sent;
	size_t gpods_parsed;      /* pods it had when last parsed */
	/* round 19 (worker.c): its late pods not sent because the worker
	 * refused the copy of an object their claims name, name -> {"gen",
	 * "rv" (the hub pod's resourceVersion), "msg", "keys" (the objects
	 * read for that pod alone, "R/NAME"), "told"; round 20: "orv", the
	 * hub objects' resourceVersions when held, "R/NAME" -> rv}; NULL
	 * when none; kept in the annotation MU__D_HELD */
	json_t *held;
	int why;                  /* QUEUED: the fleet's reason explained last */
	bool seen;
	uint8_t marks;            /* 1 << MU__DM_*: on which of the pass's sets */
	struct mu__djob *next[3]; /* the next on each of those sets */
	uint64_t settled;         /* the pass that settled it last */
} mu__djob_t;

/* The pass's sets of jobs (run.c): a pass walks what its watches changed
 * and what it changed itself, and everything only once a second
 * (MU__D_FULL_MS) and at start.  Each set is a list through its jobs
 * (mu__djob_t.next), so that it owns no memory. */
#define MU__DM_DIRTY 0            /* its annotations or status may be due */
#define MU__DM_WDIRTY 1           /* its copies to be looked at on every worker */
#define MU__DM_PEND 2             /* dispatched, not started, or withdrawing:
                                   * timers to check each pass */
#define MU__D_FULL_MS 1000
typedef struct mu__djlist {
	mu__djob_t *head, *tail;
	int32_t n;
} mu__djlist_t;

typedef struct mu__dd {
	const mu_dispatch_opts_t *o;
	mu_kube_client_t *hub;
	mu_kube_client_t *hpool[MU__D_SENDERS]; /* the senders' to the hub, kept */
	mu_kube_lease_t *lease;   /* NULL without leader election */
	mu_fleet_t *fleet;
	mu__dcl_t *cls;
	int32_t ncls, cls_cap;
	mu_kube_watch_t *wjobs[MU__DK_COUNT]; /* the hub's queue-labelled jobs
	                          * (kinds other than Job: served ones only) */
	int8_t hub_serves[MU__DK_COUNT]; /* the hub's kinds: 1, 0, -1 not known */
	int64_t hub_disc_at, hub_probe_at; /* as a cluster's disc_at, probe_at */
	uint32_t hub_apis;        /* ... and apis */
	mu_kube_watch_t *wpods;   /* the hub's pods (PodGroups' members) */
	json_t *groups;           /* this pass: "KIND:NS/NAME" -> [its pods] */
	uint64_t pods_seq;        /* the pods watch's changes in groups */
	bool kind_listed[MU__DK_COUNT]; /* this pass read that kind's list */
	uint64_t expired[MU__DK_COUNT]; /* their 410 re-lists logged */
	uint64_t resumed[MU__DK_COUNT]; /* their resumes after a cut logged */
	mu__djob_t **jobs;
	int32_t njobs, jobs_cap;
	int claims_waiting;       /* jobs waiting for their claims' objects
	                           * on the hub (hdra.c), at the last count */
	int64_t claims_at;        /* mono ms: when they are read again */
	/* round 18 (hdra.c): the hub's ResourceClaimTemplates [0] and
	 * ResourceClaims [1], watched once a job names one (NULL before),
	 * their change counts read, and the index "R/NS/NAME" -> {uid: true}
	 * of the jobs that name each (found or waited for) */
	mu_kube_watch_t *wdhub[2];
	uint64_t dhub_seq[2];
	json_t *dra_idx;
	json_t *by_key, *by_uid;  /* -> json_integer(index into jobs) */
	mu__djob_t **by_fid;      /* fleet job id -> job (NULL once gone) */
	int32_t by_fid_cap;
	bool reclaim_relink;      /* a withdrawal resumed after a restart:
	                           * its claimant to find (reclaim.c) */
	bool shrink_settle;       /* a shrink's intent read back after a
	                           * restart: to reconcile (reclaim.c) */
	json_t *queue_rv;         /* queue name -> what of it was loaded
	                           * (spec, labels, annotations: not its
	                           * status nor its resourceVersion) */
	json_t *queue_st;         /* queue name -> the status last written
	                           * (fairShare, usage, job counts; qstatus.c) */
	int64_t queue_st_at;      /* when they were last looked at (mono ms) */
	uint64_t queues_wseq;     /* the Queue watch's sequence last read */
	/* the hub's Clusters, Queues and the Secrets of muster-system,
	 * watched: a pass reads them again only when they changed */
	mu_kube_watch_t *wclusters, *wqueues, *wsecrets;
	uint64_t clusters_seq, queues_seq, secrets_seq; /* queues_seq:
	                           * moves when a Queue's spec (or caps) moved */
	/* the ConfigMaps of muster-system: the pull-mode agents' heartbeats,
	 * watched (a GET each pass while the watch does not answer) */
	mu_kube_watch_t *wbeats;
	json_t *beats;            /* this pass's snapshot of them, or NULL */
	uint64_t beats_seq;
	int64_t clusters_at;      /* mono ms the Clusters were last read */
	json_t *secrets;          /* this read's Secrets of muster-system, or NULL */
	int32_t caps_ncls;        /* clusters when the queues' caps were set */
	json_t *pcls;             /* PriorityClass name -> value (the hub's) */
	json_t *pcls_default;     /* the globalDefault class's value, or NULL */
	int64_t pcls_at;          /* mono ms of the last list (0: never) */
	int32_t pcls_fails;       /* failed reads of them in a row */
	mu_fleet_decisions_t dec;
	bool jobs_listed;         /* this pass's hub Job list succeeded */
	int64_t t0;               /* mono ms at start: the fleet's clock 0 */
	int64_t last_status;
	uint64_t dispatched, withdrawn, requeued, deleted_stale, created;
	uint64_t passes;
	uint64_t *nreq;           /* -> reqs: requests made, outside watches
	                           * (atomic: sender threads count too) */
	uint64_t reqs;
	int64_t spent[5];         /* ms: hub reads, polls, fleet, sends, writes */
	int64_t send_us[3];       /* round 20: us the senders spent, summed over
	                           * them: in records, in creates, and the
	                           * passes' sends' wall time (run.c) */
	struct mu__dlat *lat;     /* per-job path times (dutil.c), or NULL */
	double pass_ms_sum;
	struct mu__dms *ms;       /* /metrics, or NULL */
	/* the pass's walks: full (everything: at start and each
	 * MU__D_FULL_MS), else only these sets */
	bool full;
	int64_t full_at;          /* mono ms of the last full pass */
	uint64_t pass_no;
	mu__djlist_t dirty, wdirty, pend;
	json_t *gone;             /* hub jobs deleted this pass, for its poll:
	                           * [[kind, "ns/name"], ...] (poll_all drops it) */
	uint64_t jobs_seq[MU__DK_COUNT]; /* the hub jobs' watches' counts read */
	int32_t nfull;            /* kinds read in full this pass (hub.c) */
	char hub_why[192];        /* why the last pass read no hub ("" when it
	                           * did; run.c's hub_wait) */
	int64_t hub_why_at;       /* mono ms that was last logged */
} mu__dd_t;

/* --- dutil.c ---------------------------------------------------------------- */

int64_t mu__d_mono_ms(void);
int64_t mu__d_mono_us(void);
/* The wall clock (CLOCK_REALTIME) in ms since the epoch (round 23: for
 * times written to the hub and read back after a restart). */
int64_t mu__d_wall_ms(void);

/* Per-job dispatch path (round 14): how long each dispatched job took
 * from the pass's decision to its record on the hub, from the record to
 * its copy's create on the worker, from the create to the pass that saw
 * a pod of it bound, and the whole.  Histograms of 0.1 ms steps to
 * 100 ms, then 10 ms steps to 60 s (the last bucket takes the rest), so
 * a daemon's memory for them is fixed (about 112 KB) however many jobs
 * it sends. */
#define MU__DLAT_LEGS 4
#define MU__DLAT_BUCKETS 6900
typedef struct mu__dlat {
	uint32_t n[MU__DLAT_LEGS][MU__DLAT_BUCKETS];
	uint64_t count[MU__DLAT_LEGS];
	int64_t max_us[MU__DLAT_LEGS];
} mu__dlat_t;
/* Adds one job's path (mono us: decided, recorded, created, seen bound;
 * each after the one before, else the job is not counted) to h.  O(1). */
void mu__dlat_add(mu__dlat_t *h, const int64_t t_us[4]);
/* The pct-th percentile (0..100) of leg l, in us (a bucket's lower
 * bound; the max for 100), or -1 when none was added.  O(buckets). */
int64_t mu__dlat_pct(const mu__dlat_t *h, int l, int pct);
/* "N jobs: decided->recorded p50 A p90 B max C ms, ..." into buf.
 * O(legs x buckets). */
void mu__dlat_format(const mu__dlat_t *h, char *buf, size_t len);
/* The fleet's clock: ms since the daemon started. */
mu_time_t mu__d_now(const mu__dd_t *d);
void mu__dlog(const mu__dd_t *d, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* One request with an optional JSON body; returns the HTTP status (0: no
 * answer) and the parsed answer in *out (if not NULL; may be NULL). */
long mu__dreq(const mu__dd_t *d, mu_kube_client_t *c, const char *method,
	      const char *path, const char *ctype, const json_t *body,
	      json_t **out);
/* The same, but *out only for an answer that is not 2xx (its message):
 * a created copy's answer, its whole object, is not read (3% of the
 * dispatcher's samples in bench/dispatch.sh, round 11). */
long mu__dreq_err(const mu__dd_t *d, mu_kube_client_t *c, const char *method, const char *path,
		  const char *ctype, const json_t *body, json_t **out);
/* A label or annotation of o, or NULL. */
const char *mu__dmeta(const json_t *o, const char *map, const char *key);
/* The hub job whose current dispatch a worker object of cluster ci is,
 * from the object's hub uid and generation text gen (a copy's, a group's
 * pod's, a copied claim template's): the job of that uid, dispatched (or
 * further) to ci under that generation; NULL when the object is stale or
 * its job unknown.  The one rule of what a stale copy is.  O(1). */
mu__djob_t *mu__djob_current(const mu__dd_t *d, const char *uid, const char *gen, int32_t ci);
/* Parses "k=v,k=v" into labels in arena (*n of them); MU_EINVAL for a
 * term without "=". */
int mu__dlabels(const char *s, mu_arena_t *a, mu_label_t **out, size_t *n);

/* The copy of a hub Job for a worker (owned): the hub Job's labels,
 * annotations and spec, unsuspended and admitted (muster.io/admitted),
 * labelled with the hub uid and generation g, without what the hub's Job
 * controller added (selector, controller labels) or the hub's own
 * annotations. */
json_t *mu__dcopy(const json_t *hub, mu__dkind_t k, const char *uid, const char *key,
		  uint32_t g);
/* Connects push-mode cluster c through c->cfg (set): its client and the
 * watches of its Nodes, copies and their pods, and (budgets) its
 * PodDisruptionBudgets.  On error nothing stays. */
int mu__dcl_connect(mu__dcl_t *c, bool budgets);
/* Stops c's watches, frees its client and its config (safe when none). */
void mu__dcl_disconnect(mu__dcl_t *c);
/* Asks every watch of c to stop without waiting (mu__dcl_disconnect then
 * waits for all of them together).  O(kinds). */
void mu__dcl_signal(mu__dcl_t *c);
/* A Node cut to what the models read (name, labels, taints, cordon,
 * allocatable, the Ready condition); owned. */
json_t *mu__dnode_min(const json_t *n);

/* --- served.c --------------------------------------------------------------- */

/* Whether the kinds a server serves are to be asked again (served.c):
 * never asked (*at 0), asked MU__D_REDISCOVER_MS ago, or a probe (one GET
 * /apis through kc, at most every MU__D_PROBE_MS, *probe_at its time)
 * shows the group versions of the hub's kinds changed since the answer
 * in *apis (bit k: kind k's group version listed; MU__D_APIS_SEEN: an
 * answer is there; the caller's, 0 at first), which the probe replaces.
 * With no answer in *apis yet: a kind's group version listed while no
 * kind of it is served (on[]), or not listed while one is.  At most one
 * request; none without kc. */
#define MU__D_APIS_SEEN (1u << 31)
bool mu__dserved_due(mu__dd_t *d, mu_kube_client_t *kc, const int8_t on[MU__DK_COUNT],
		     int64_t *at, int64_t *probe_at, uint32_t *apis, int64_t now);
/* Asks kc's server which kinds it serves (GET /apis/GROUP/VERSION, once
 * per group version): out[k] 1 when the kind's resource is listed, 0 when
 * it is not or the answer is 404, -1 for any other answer (not known);
 * out[MU__DK_JOB] is 1.  At most MU__DK_COUNT - 1 requests. */
void mu__dserved_ask(mu__dd_t *d, mu_kube_client_t *kc, int8_t out[MU__DK_COUNT]);
/* Both, as every caller runs them: when mu__dserved_due says so, sets
 * *at to now, asks (out as mu__dserved_ask) and, when some kind got no
 * answer, sets *at so that the kinds are asked again in a second.  false
 * (out untouched) when not due. */
bool mu__dserved_refresh(mu__dd_t *d, mu_kube_client_t *kc, const int8_t known[MU__DK_COUNT],
			 int64_t *at, int64_t *probe_at, uint32_t *apis, int64_t now,
			 int8_t out[MU__DK_COUNT]);
/* Makes w[k] (k > 0; Job's is the caller's) a watch of kind k through cfg
 * (query sel) when on[k] is 1 and it has none, and stops it (waiting up
 * to about a second) when on[k] is 0; -1 leaves it as it is.  seq[k] (if
 * seq) is reset to 0 for each watch started or stopped.  Returns how many
 * changed.  O(kinds). */
int mu__dserved_watch(const mu_kube_config_t *cfg, const char *sel, const int8_t on[MU__DK_COUNT],
		      mu_kube_watch_t *w[MU__DK_COUNT], uint64_t seq[MU__DK_COUNT]);

/* --- kinds.c ---------------------------------------------------------------- */

/* The kind's unique name (keys, fleet labels, agents' reports:
 * "VolcanoPodGroup"); mu__dkind_kind the objects' kind ("PodGroup"). */
const char *mu__dkind_name(mu__dkind_t k);
const char *mu__dkind_kind(mu__dkind_t k);
/* Whether k has a suspend flag (the hub holds the others by not running
 * their controllers, and a group's pods by their scheduling gate). */
bool mu__dkind_suspends(mu__dkind_t k);
/* Whether k is a PodGroup whose pods are separate objects. */
bool mu__dkind_is_group(mu__dkind_t k);
/* Whether k's CRD has the status subresource (else status is written
 * through the object's own path). */
bool mu__dkind_status_sub(mu__dkind_t k);
/* Whether k's status.conditions take a condition of any type (Job,
 * JobSet, LeaderWorkerSet, RayCluster: metav1.Condition or the Job's;
 * muster's PodGroup: its own schema); the others' schemas name their
 * types (Kubeflow's JobCondition, Volcano's and KAI's) or have none
 * (RayJob, the coscheduling PodGroup, a Volcano Job's phases). */
bool mu__dkind_conds(mu__dkind_t k);
/* The name of the group of kind k that pod names (muster's label
 * muster.io/pod-group, Volcano's annotation scheduling.k8s.io/group-name,
 * KAI's annotation pod-group-name, the coscheduling plugin's label
 * scheduling.x-k8s.io/pod-group), or NULL.  Borrowed. */
const char *mu__dkind_pod_group(const json_t *pod, mu__dkind_t k);
/* A group's spec.minMember, or 0 when it gives none (all its pods). */
int64_t mu__dkind_group_min(const json_t *o);
/* Whether group o of kind k must wait for more of its pods (pods: its
 * pods on the hub): fewer than its spec.minMember (or none), or, for a
 * KAI PodGroup, fewer in a sub-group than that sub-group's minMember;
 * then why, into msg.  O(pods + sub-groups^2). */
bool mu__dkind_group_waits(const json_t *o, mu__dkind_t k, const json_t *pods, char *msg,
			   size_t len);
/* What kind k's own admission (webhook, validation) refuses in object o,
 * checked before it is read as a Workload: 0, or MU_EINVAL with the
 * message in msg (Volcano's minAvailable above the replicas, KubeRay's
 * minReplicas above maxReplicas, KAI's sub-group names).  O(parts^2). */
int mu__dkind_check(const json_t *o, mu__dkind_t k, char *msg, size_t len);
/* The coscheduling PodGroup's spec.minResources (cpu, memory,
 * nvidia.com/gpu, pods; other names are not read) in accounting units
 * (GPUs in milli) into out: 1 when it names any above 0, 0 when none (or
 * another kind), MU_EINVAL with the message in msg for a value that is
 * not a quantity.  O(names). */
int mu__dkind_min_resources(const json_t *o, mu__dkind_t k, mu_res_t *out, char *msg, size_t len);
/* A group's end from its copies' pod counts, npods the pods sent:
 * "Succeeded" when every one succeeded, "Failed" when all ended and one
 * failed, else NULL. */
const char *mu__dkind_group_end(int64_t succeeded, int64_t failed, int64_t npods);
/* The copy of a group's pod for a worker (owned): its labels (with the
 * hub uid of its group and generation g), annotations and spec, without
 * nodeName, status, owners or the scheduling gate muster.io/dispatch. */
json_t *mu__dkind_pod_copy(const json_t *pod, const char *uid, const char *key, uint32_t g);
const char *mu__dkind_api(mu__dkind_t k);     /* "batch/v1", ... */
const char *mu__dkind_plural(mu__dkind_t k);  /* "jobs", "jobsets", ... */
/* The kinds other than Job named in "JobSet,PyTorchJob,..." (an agent's
 * report; unknown names ignored) into on.  O(length). */
void mu__dkind_list(const char *s, bool on[MU__DK_COUNT]);
/* The collection of kind k in all namespaces ("/apis/batch/v1/jobs"), or
 * with ns, the object name's path (name NULL: the namespace's
 * collection); suffix ("", "/status") appended.  Into buf. */
/* Whether the hub can shrink the copy of object o of kind k on its
 * worker (round 17: a batch/v1 Job, its spec.parallelism lowered; round
 * 23: a PyTorchJob with spec.elasticPolicy and only a Worker replica
 * type, the Worker's replicas lowered); every other object is taken whole
 * by reclaim (kinds.c's shrink_ops, one entry a kind).  O(o's replica
 * types). */
bool mu__dkind_shrinks(const json_t *o, mu__dkind_t k);
/* The size of shrinkable o (a copy or its hub object) as its controller
 * reads it: a Job's spec.parallelism, an elastic PyTorchJob's Worker
 * replicas (1 when unset); 0 when o is not shrinkable or a Job says
 * none. */
int64_t mu__dkind_size(const json_t *o, mu__dkind_t k);
/* The merge PATCH body that sets shrinkable o's size to `to` (its map
 * members spelt as o spells them), or NULL.  Owned by the caller. */
json_t *mu__dkind_size_patch(const json_t *o, mu__dkind_t k, int32_t to);
/* The fewest pods shrinkable o may be shrunk to as its kind says (an
 * elastic PyTorchJob's elasticPolicy.minReplicas, else maxReplicas, else
 * its replicas: the training operator's defaults); 0 when o's kind has
 * no floor of its own (a Job's is muster.io/min-member, the loader's) or
 * o is not shrinkable. */
int64_t mu__dkind_shrink_floor(const json_t *o, mu__dkind_t k);
const char *mu__dkind_path(mu__dkind_t k, const char *ns, const char *name,
			   const char *suffix, char *buf, size_t len);
/* The kind of an object's apiVersion and kind, or -1. */
int mu__dkind_of(const char *api, const char *kind);
/* The object that holds suspend and managedBy in spec s of kind k
 * ("spec" or "spec.runPolicy"); created when create is set.  Borrowed. */
json_t *mu__dkind_ctl(json_t *spec, mu__dkind_t k, bool create);
/* The value of spec.managedBy (spec.runPolicy.managedBy), or NULL. */
const char *mu__dkind_managed_by(const json_t *obj, mu__dkind_t k);
/* The pod templates of spec (of an object of kind k, not a Job), each
 * with its part name and pod count, at most max; the number, or
 * MU_EINVAL when a part is malformed.  Borrowed. */
typedef struct mu__dtmpl {
	char part[64];
	int64_t count;
	int64_t min;              /* its own minimum in the gang (a Volcano
	                           * task's minAvailable), 0: none */
	json_t *tmpl;
} mu__dtmpl_t;
int mu__dkind_templates(json_t *spec, mu__dkind_t k, mu__dtmpl_t *out, int max);
/* Object o of kind k (not a Job) as a muster Workload the cluster-file
 * loader reads: its queue, its parts as pod sets, its minimum; for a
 * group, pods (a JSON array: its pods on the hub) by part.  Owned. */
json_t *mu__dkind_workload(const json_t *o, mu__dkind_t k, const json_t *pods);
/* A copy's end from its status: "Succeeded", "Failed" or NULL. */
const char *mu__dkind_done(const json_t *copy, mu__dkind_t k);
/* The merge patch that sets o's suspend flag to on; owned. */
json_t *mu__dkind_suspend_patch(mu__dkind_t k, bool on);

/* --- podcap.c --------------------------------------------------------------- */

/* A pod's effective request (Kubernetes' PodRequests: containers and
 * sidecars, or the largest init container with the sidecars before it,
 * plus overhead; requests, else limits): CPU, memory, whole GPUs, one
 * pod.  O(containers). */
void mu__dpod_request(const json_t *pod, mu_res_t *out);
/* Per node, what the pods of list ({"items": [...]}) that are bound, not
 * ended and not the hub's copies (no muster.io/hub-uid) request, summed:
 * node -> "cpu=Nm,memory=N,nvidia.com/gpu=N,pods=N" (GPUs: whole ones,
 * plus each device that pods with a share of one GPU hold), then
 * ",NAME=N" for each named extended resource they ask, sorted.  Owned.
 * O(pods x containers). */
json_t *mu__dpods_used(const json_t *list);
/* Parses one such text; MU_EPARSE when malformed. */
int mu__dused_parse(const char *s, mu_res_t *out);
/* The named extended resources at the end of such a text (",NAME=N"
 * after pods, round 12) taken from node n's (at least 0; names the node
 * lacks are left).  MU_EPARSE when malformed (n may be changed in part).
 * O(names x the node's). */
int mu__dused_ext(const char *s, mu_node_spec_t *n);
/* The shares of one GPU at the end of such a text (round 13: after the
 * named resources, ",muster.io/gpu-share.D=M" for device D, or
 * ",muster.io/gpu-share=M" for a pod that names no device; each is also
 * one of the text's nvidia.com/gpu, so a reader that does not know them
 * counts the device whole) into out[0..max): how many, or MU_EPARSE.
 * O(text). */
int mu__dused_shares(const char *s, mu_fleet_share_t *out, int32_t max);
/* What the hub's model takes from the node for such a text: *used (its
 * core slots, less one GPU and one pod per share) and the shares in
 * sh[0..max); how many shares, or MU_EPARSE.  O(text). */
int mu__dused_model(const char *s, mu_res_t *used, mu_fleet_share_t *sh, int32_t max);
/* Reads c's watch of those pods (c->wused) into c->used when it
 * changed; whether c->used changed.  O(1) when the watch did not move,
 * else O(pods). */
bool mu__dused_poll(mu__dd_t *d, mu__dcl_t *c);

/* --- wdra.c: a push-mode worker's DRA objects into the fleet ---------- */

/* Asks c (one GET of /apis/resource.k8s.io/v1beta1) whether it serves
 * ResourceSlices, DeviceClasses and ResourceClaims, and starts their
 * watches when it does, stops them (and takes the fleet's copy away)
 * when it no longer does; no answer: as it was.  Called where c's kinds
 * are asked (mu__dwork_discover).  One request. */
void mu__ddra_discover(mu__dd_t *d, mu__dcl_t *c);
/* Gives the fleet c's DRA objects (mu_fleet_cluster_dra) when a watch of
 * them changed or its Nodes' names or labels did (nl: its Node list when
 * the nodes' watch changed, else NULL): O(1) when nothing changed, so
 * jobs without claims pay three counter reads per poll of a worker that
 * serves DRA and nothing on one that does not.  Returns whether the
 * fleet was given them.  O(objects) when they changed. */
bool mu__ddra_poll(mu__dd_t *d, mu__dcl_t *c, const json_t *nl);
/* Whether kc serves the DRA kinds the fleet reads (one GET of
 * /apis/resource.k8s.io/v1beta1): 1, 0, or -1 when it did not answer. */
int mu__ddra_serves(mu__dd_t *d, mu_kube_client_t *kc);
/* Pull mode, the agent: the heartbeat's DRA report (data.dra) from the
 * lists of its worker's ResourceSlices, DeviceClasses and ResourceClaims
 * (l, by MU__DDRA_*): {"slices","classes","claims"} cut to what the
 * allocator reads (name and spec; an allocated claim's name, namespace
 * and status.allocation; claims not allocated left out), or
 * {"error": why} when that would pass max bytes.  Owned; NULL on OOM.
 * O(objects). */
#define MU__DDRA_REPORT_MAX (512 * 1024) /* a ConfigMap holds 1 MiB in all */
char *mu__ddra_report(const json_t *const l[MU__DDRA_N], size_t max);
/* Pull mode, the hub: pull cluster c's DRA objects from its agent's
 * report text (data.dra; NULL: none, the fleet's taken away) and its
 * Nodes nl (the heartbeat's data.nodes, or NULL when they did not
 * change) to the fleet (mu_fleet_cluster_dra) when either changed; a
 * report of an error (too large) is logged once and leaves c without
 * DRA.  Whether the fleet was given them.  O(text). */
bool mu__ddra_pull(mu__dd_t *d, mu__dcl_t *c, const char *text, const json_t *nl);

/* --- hdra.c: a hub job's DRA claims, copied to its push worker -------- */

/* Reads the ResourceClaimTemplates and ResourceClaims j's pod sets name
 * (j->specs parsed) from the hub into j->dra and j->dra_src (replacing
 * them): 0 (also for a job without claims, with no request), 1 when one
 * is not there yet (why: WaitingForResourceClaimTemplate or
 * WaitingForResourceClaim, msg naming it), -1 when the job cannot be
 * dispatched (why InvalidJob).  One GET per object named. */
int mu__dhdra_read(mu__dd_t *d, mu__djob_t *j, char *why, size_t wl, char *msg, size_t ml);
/* Frees j->dra, j->dra_src and j->dra_keys (mu__dhdra_forget first
 * keeps d->dra_idx exact). */
void mu__dhdra_clear(mu__djob_t *j);
/* j taken out of d->dra_idx (its job gone, or read again).  O(objects
 * it names). */
void mu__dhdra_forget(mu__dd_t *d, mu__djob_t *j);
/* Round 18: whether the hub's templates and claims are watched and both
 * watches answer (then the jobs waiting for one are read again on its
 * events, not once a second).  O(1). */
bool mu__dhdra_watched(mu__dd_t *d);
/* Round 18, once a pass: each template or claim created, changed or
 * deleted on the hub since the last call (the watches' changes) looked
 * up in d->dra_idx: the jobs it moves (one waiting for it,
 * WaitingForResourceClaimTemplate or ...Claim, when it is there now; a
 * queued one whose copy of it differs in spec, or that is gone) as
 * {uid: true} (owned; NULL when nothing changed), which the caller
 * reads again (hub.c: mu__dhub_claims_back); round 19: a dispatched
 * group whose held late pods (j->held) name it has those released, as
 * {uid: false}, which the caller marks for its copies (the next send
 * tries them again).  No request; O(1) when
 * nothing changed, else O(jobs naming the changed objects); after a
 * re-list of a watch O(objects named). */
json_t *mu__dhdra_watch(mu__dd_t *d);
/* The pod templates of body (j's copy, mu__dcopy) made to name j's
 * copies of its claims' objects (NAME-UID8-GENERATION).  O(claims). */
void mu__dhdra_rename(const mu__djob_t *j, json_t *body);
/* A group's pod (j's, mu__dkind_pod_copy) made to name j's copies of its
 * claims' objects.  O(claims). */
void mu__dhdra_rename_pod(const mu__djob_t *j, json_t *pod);
/* Push mode, a group's pod (j's, mu__dkind_pod_copy) before it is sent
 * through kc (round 17): the objects its claims name that the group's
 * pods did not when it was read (not in j->dra_src: a pod that came
 * after) read from the hub and copied as mu__dhdra_create copies, then
 * the pod made to name its copies.  0 (also with no claims: no request);
 * 1 when one is not read or not made (msg: which; the pod is not sent,
 * tried again by the next poll); -1 when the worker refuses it for good
 * (msg: why).  Round 20: the resourceVersions of the objects read, into
 * rvs ("R/NAME" -> rv) when it is given.  One GET and one POST per such
 * object. */
int mu__dhdra_pod(mu__dd_t *d, mu_kube_client_t *kc, mu__djob_t *j, json_t *pod, char *msg,
		  size_t ml, json_t *rvs);
/* Round 19: the objects group j's pod names that the group's pods did
 * not when it was read (mu__dhdra_pod's late ones), as "R/NAME" (0 a
 * template, 1 a claim); owned, empty when none; j NULL (round 21, the
 * pull agent's): all the objects the pod names.  O(claims). */
json_t *mu__dhdra_pod_keys(const mu__djob_t *j, const json_t *pod);
/* Round 19: job j entered in the watch index (d->dra_idx) under each of
 * keys (mu__dhdra_pod_keys'), so that an event of one of those hub
 * objects tries its held pods again (mu__dhdra_watch); the watches
 * started if they are not.  O(keys). */
void mu__dhdra_held_watch(mu__dd_t *d, mu__djob_t *j, const json_t *keys);
/* Round 20: the resourceVersions of group j's hub objects keys
 * (mu__dhdra_pod_keys') as the hub's watches hold them now, "R/NAME" ->
 * rv (owned; those not in a watch left out; those mu__dhdra_pod read
 * take their read's), kept with a hold so that an
 * event or a re-list that does not change an object (a restart's first
 * list) does not release it.  No request; O(keys). */
json_t *mu__dhdra_held_rvs(mu__dd_t *d, const mu__djob_t *j, const json_t *keys);
/* Round 23, the pull agent's reading of a hold's record: how the hub
 * objects' versions now (the hub's record "orv", "R/NAME" -> rv, "" for
 * one deleted on the hub) stand to those it saw when it held the pod
 * (seen): 0 the same (still held), -1 one is gone (held until it is made
 * again: nothing to copy), 1 changed (tried again).  O(keys). */
int mu__dhdra_orv_moved(const json_t *seen, const json_t *now);
/* Pull mode, the agent (round 16): the ResourceClaimTemplates and
 * ResourceClaims that copy body (of kind k, for hub object hub; a group's
 * pod when pod) names, read from the hub (d->hub) and copied through w
 * as push mode copies them (NAME-UID8-GEN, labelled and annotated alike),
 * then body renamed to name them.  0 (also with no claims: no request);
 * 1 when one is not read or not made (msg says which: tried again);
 * -1 when worker object of a copy's name is not this dispatch's or the
 * worker refuses it for good (msg: why).  One GET and one POST per
 * object named. */
int mu__dhdra_agent_copy(mu__dd_t *d, mu_kube_client_t *w, const char *cluster, mu__dkind_t k,
			 const json_t *hub, json_t *body, bool pod, char *msg, size_t ml);
/* Pull mode, the agent: of lists[0] (its worker's ResourceClaimTemplates
 * labelled with a hub uid) and lists[1] (its ResourceClaims), those whose
 * hub job's kind was listed this pass (listed) and whose uid and
 * generation are not a current dispatch here (current: hub uid ->
 * generation) deleted.  How many were.  O(objects), one DELETE each. */
int mu__dhdra_agent_sweep(mu__dd_t *d, mu_kube_client_t *w, const json_t *const lists[2],
			  const json_t *current, const bool listed[MU__DK_COUNT]);
/* Creates j's copies of its claims' objects on its cluster through kc,
 * before its copy (the caller's order); an existing copy of this
 * dispatch counts as made, another object of that name refuses the job
 * (j->refused).  The HTTP status of the first failure, or 201.  One
 * POST per object (a GET on 409, a namespace POST on 404). */
long mu__dhdra_create(mu__dd_t *d, mu_kube_client_t *kc, mu__djob_t *j);
/* At dispatch, before the record (round 17): each object of j->dra_src
 * read from the hub again through hub.  true (j->dra_stale set) when one
 * is gone or its spec changed since the job was read: the job is not
 * sent, and the hub reads it again (mu__dhub_claims_back); a failure to
 * read is not (the copy's create reads it again).  One GET per object;
 * kept in dra_src for the copy (j->dra_fresh). */
bool mu__dhdra_stale(mu__dd_t *d, mu_kube_client_t *hub, mu__djob_t *j);
/* Deletes c's copied templates and claims whose dispatch is not current
 * (as stale copies are): O(1) when its watches did not move and no job
 * changed, or it has none of the hub's; else O(objects) and one DELETE
 * per stale one. */
void mu__dhdra_sweep(mu__dd_t *d, mu__dcl_t *c);
/* Round 20, push cluster c: when its watches of ResourceClaimTemplates and
 * ResourceClaims moved, each late pod held of a group dispatched there
 * (worker.c's j->held) whose copy's name a worker object that is not this
 * dispatch's was seen to hold ("wseen") is released once no such object
 * is there (the user's object deleted); the groups with pods released
 * are returned as {uid: false} (owned, NULL when none), which the caller
 * marks for the pass (the next send tries them again, as
 * mu__dhdra_watch's).  A pod refused otherwise (a 4xx) is not released:
 * each release follows a deletion on the worker.  No request; O(1) when
 * the watches did not move, else O(jobs + held pods x their keys). */
json_t *mu__dhdra_held_worker(mu__dd_t *d, mu__dcl_t *c);
/* Round 21: whether one of the objects keys names ("R/NAME", as
 * mu__dhdra_pod_keys gives them) has its copy's name for dispatch (uid,
 * gen) held in namespace ns by an object that is not that dispatch's, as
 * worker watches w (templates, claims; NULL: not looked at) show them.
 * mu__dhdra_held_worker's test, and the pull agent's (agent.c).  No
 * request; O(keys). */
bool mu__dhdra_conflict(mu_kube_watch_t *const w[2], const char *uid, uint32_t gen, const char *ns,
			const json_t *keys);

/* --- qstatus.c -------------------------------------------------------------- */

/* Writes hub Queue o's condition Active on its status: False with reason
 * InvalidQueue and message bad, or True "Ready" (bad NULL), when the
 * object does not say so already; rv gets the resourceVersion the write
 * made ("" when none was made).  One PATCH at most. */
void mu__dqueue_cond(mu__dd_t *d, const json_t *o, const char *bad, char *rv, size_t rvlen);
/* Writes each hub Queue's fairShare, usage (GPUs, CPU, memory: the
 * fleet's, as muster's scheduler writes its own), pendingJobs and
 * runningJobs on its status, as muster scheduler does in one cluster: a
 * merge patch of the status subresource, at most once a second, and only
 * for a queue whose values moved since the last write.  The Queues are
 * those loaded (d->queue_rv).  O(queues) plus one PATCH per queue that
 * moved. */
void mu__dqueue_status(mu__dd_t *d);
/* A hub Queue's status as muster's scheduler writes its own:
 * {"fairShare": {...}, "usage": {...}, "pendingJobs": N, "runningJobs":
 * N}, GPUs as a decimal, CPU in millicores, memory in bytes.  Owned. */
json_t *mu__dqueue_status_json(const mu_fleet_queue_info_t *qi);
/* What of hub Queue o the dispatcher loads: its spec, labels and
 * annotations (the caps), as compact text with sorted keys; not its
 * status, resourceVersion or managedFields, which its own status writes
 * move (as controllers compare metadata.generation and the spec).  A
 * Queue whose text is as loaded is not loaded again.  Owned (free()), or
 * NULL without memory.  O(object). */
char *mu__dqueue_sig(const json_t *o);

/* --- failcreate.c ----------------------------------------------------------- */

/* Reads cluster c's FailedCreate Events (when they changed) and marks
 * the hub Jobs whose current copy (in jl, the Job copies c's watch shows)
 * they name, while none of its pods was bound: j->failed_create says
 * why, with a Warning Event on the hub object.  O(1) without such Events,
 * else O(events + copies). */
void mu__dfailed_poll(mu__dd_t *d, mu__dcl_t *c, const json_t *jl);
/* Reads watch wf of FailedCreate Events into *fails (copy uid ->
 * message, owned) when it moved since *seq.  O(1) when it did not, else
 * O(events). */
void mu__dfails_read(mu_kube_watch_t *wf, uint64_t *seq, json_t **fails);
/* Pull mode: the same mark for hub Job j of pull cluster c from its
 * agent's report (MU__D_COPYFAIL, "GEN message", this generation only);
 * and, for hub object j of any kind, the agent's refusal of the copy of a
 * DRA object (MU__D_COPYREFUSED, "GEN message"): j->refused, which ends
 * it NotAdmitted in the same pass (run.c).  O(1). */
void mu__dfailed_pull(mu__dd_t *d, mu__dcl_t *c, mu__djob_t *j);

/* --- ui.c ------------------------------------------------------------------- */

/* The /ui/ page: the clusters and the hub's jobs as HTML (escaped);
 * owned, NULL when out of memory.  O(clusters + jobs shown). */
char *mu__dui_render(const mu__dd_t *d);

/* --- metrics.c -------------------------------------------------------------- */

/* Serves /metrics, /healthz and /readyz on listen (IPv4 HOST:PORT). */
int mu__dms_start(mu__dd_t *d, const char *listen, char *err, size_t errlen);
void mu__dms_stop(mu__dd_t *d);
/* Counts a pass of pass_ms and renders the metrics for the server. */
void mu__dmetrics_pass(mu__dd_t *d, double pass_ms);

/* --- hub.c ------------------------------------------------------------------ */

/* Lists the hub's Clusters into d->cls (and the fleet); loads kubeconfig
 * Secrets that changed. */
int mu__dhub_clusters(mu__dd_t *d);
/* Lists the hub's Queues into the fleet (with their parents, and caps per
 * cluster from the annotation muster.io/cluster-caps). */
int mu__dhub_queues(mu__dd_t *d);
/* Lists the hub's PriorityClasses (at most once a second): the values of
 * the classes hub Jobs name, and the burst class's
 * (--burst-priority-class).  A failed list keeps the last one. */
void mu__dhub_pclasses(mu__dd_t *d);
/* Asks the hub which kinds it serves when due (mu__dserved_due, now its
 * mono ms) and keeps a watch of its queue-labelled objects for each kind
 * it serves only (d->wjobs; the Jobs' is run.c's): a kind whose CRD
 * appeared is watched from then on, one whose CRD went is no longer.
 * Logs each change.  At most MU__DK_COUNT requests. */
void mu__dhub_discover(mu__dd_t *d, int64_t now);
/* Reads the hub's queue-labelled Jobs (from the watch d->wjobs): new ones parsed and submitted (or
 * adopted where their annotations say they were dispatched), gone ones
 * finished.  Sets d->jobs_listed. */
int mu__dhub_jobs(mu__dd_t *d);
/* Writes j's dispatch annotations when they changed; returns the status. */
long mu__dhub_annotate(mu__dd_t *d, mu__djob_t *j);
/* Round 20: the late pods hub group j's annotation MU__D_HELD (j->obj's)
 * records as held for its generation, into j->held as told (a restart's:
 * no new attempt and no second Event until the pod or an object it
 * names changes) and entered in the watch index (mu__dhdra_held_watch).
 * No request; O(held pods x their keys). */
void mu__dhub_held_read(mu__dd_t *d, mu__djob_t *j);
/* Whether j's annotations differ from those last written.  Built and
 * compared only when their inputs moved since they were last found the
 * same (j->ann_memo, set here): else O(the inputs' length). */
bool mu__dhub_annotate_due(const mu__dd_t *d, mu__djob_t *j);
/* The text of j's annotations as they would be written (owned), and of
 * its status without times (NULL for a kind whose status is not ours). */
char *mu__dhub_ann_text(const mu__dd_t *d, const mu__djob_t *j);
char *mu__dhub_status_text(const mu__dd_t *d, const mu__djob_t *j);
/* Whether j's annotations differ from those last written only in their
 * pod counts (muster.io/dispatch-pods) and, perhaps, in the phase going
 * from Dispatched to Running (its copy's first pod bound), and its status
 * is not due: a write-back of pod events that the pass may leave to the
 * next full pass (at most MU__D_FULL_MS later), as kube's Job controller
 * folds a second of pod events into one sync.  O(annotations). */
bool mu__dhub_pod_events_only(const mu__dd_t *d, mu__djob_t *j);
/* The same over connection hub (a sender thread's; j is its alone). */
long mu__dhub_annotate_on(mu__dd_t *d, mu_kube_client_t *hub, mu__djob_t *j);
/* A dispatch's record over connection hub: for a Job whose annotations
 * and status both changed, one strategic merge patch of /status that
 * carries both (kube keeps a Job's metadata changes through /status; the
 * lease term fences it as any record); otherwise mu__dhub_annotate_on.
 * Returns the HTTP status. */
long mu__dhub_record_on(mu__dd_t *d, mu_kube_client_t *hub, mu__djob_t *j);
/* Whether j's status (the condition Dispatched; for a Job whose
 * spec.managedBy is muster.io/dispatch also its copy's counts and end)
 * differs from that last written. */
bool mu__dhub_status_due(const mu__dd_t *d, mu__djob_t *j);
/* Whether the write-back of j is due in this pass: (annotate_due ||
 * status_due) && (d->full || !pod_events_only), with memo_key's text
 * built once for all three (round 21).  Sets the memos as they do. */
bool mu__dhub_write_due(const mu__dd_t *d, mu__djob_t *j);
/* Writes it (strategic merge of /status over connection hub) when it
 * changed; returns the HTTP status. */
long mu__dhub_status_on(mu__dd_t *d, mu_kube_client_t *hub, mu__djob_t *j);
/* j, chosen for a cluster but not sent because its claims' objects
 * changed or went on the hub (mu__dhdra_stale), taken out of the fleet
 * and read again (hub.c's job_parse): it waits
 * WaitingForResourceClaimTemplate (or ...Claim) as a job whose object was
 * never there, or is queued again with the claims read now.  One GET per
 * object it names. */
void mu__dhub_claims_back(mu__dd_t *d, mu__djob_t *j);
/* Round 19: dispatched job j out of the fleet and entered again as a
 * restart enters it (adopted on the cluster its record names, with the
 * pods its record j->shrunk says are off: j->fs.shrunk), so that the
 * fleet counts its copy at the size the record says now.  O(one engine
 * cycle of its cluster's model). */
void mu__dhub_readopt(mu__dd_t *d, mu__djob_t *j);
/* Whether j ended refused by its worker (phase NotAdmitted). */
bool mu__dhub_refused(const mu__djob_t *j);
/* Whether the dispatcher owns j's status (spec.managedBy). */
bool mu__dhub_managed(const mu__djob_t *j);
/* A fenced write before a create that no record preceded (a restarted
 * leader re-creating a missing copy): the lease term patched onto hub Job
 * j; 200 when the hub accepted it (always without leader election). */
long mu__dhub_fence(mu__dd_t *d, mu_kube_client_t *hub, const mu__djob_t *j);
/* Writes every Cluster's status when it changed (at most once a second). */
void mu__dhub_cluster_status(mu__dd_t *d);
/* An Event on hub Job j. */
void mu__dhub_event(mu__dd_t *d, mu__djob_t *j, const char *type,
		    const char *reason, const char *msg);
void mu__dhub_event_on(mu__dd_t *d, mu_kube_client_t *hub, mu__djob_t *j,
		       const char *type, const char *reason, const char *msg);
/* Round 19: an Event on hub pod pod (a group's, as the hub's watch
 * has it) through d->hub.  One request. */
void mu__dhub_pod_event(mu__dd_t *d, const json_t *pod, const char *type, const char *reason,
			const char *msg);
mu__djob_t *mu__dhub_job_by_uid(const mu__dd_t *d, const char *uid);
/* Frees a hub job record and everything it owns. */
void mu__djob_free(mu__djob_t *j);
/* Marks j for this pass's write-back (MU__DM_DIRTY); mu__djob_touch also
 * for a look at its copies on every worker in the next poll (its
 * dispatch, generation or hub object changed).  O(1). */
void mu__djob_dirty(mu__dd_t *d, mu__djob_t *j);
void mu__djob_touch(mu__dd_t *d, mu__djob_t *j);
/* Appends j to set l (set number i, MU__DM_*) unless it is there.  O(1). */
void mu__djlist_add(mu__djlist_t *l, mu__djob_t *j, int i);
/* Empties l.  O(its jobs). */
void mu__djlist_clear(mu__djlist_t *l, int i);
/* Takes j out of l (when there).  O(its jobs). */
void mu__djlist_drop(mu__djlist_t *l, mu__djob_t *j, int i);
int32_t mu__dhub_cluster_by_fid(const mu__dd_t *d, int32_t fid);

/* --- worker.c --------------------------------------------------------------- */

/* Lists cluster c's Nodes into its model and its copies (Jobs and pods
 * labelled with a hub uid): stale copies deleted, the current ones'
 * status read into their hub jobs.  false when the worker did not answer. */
bool mu__dwork_poll(mu__dd_t *d, mu__dcl_t *c);
/* The same for a pull-mode cluster, from what its agent wrote on the hub:
 * the ConfigMap muster-system/muster-cluster-NAME (nodes, heartbeat) and
 * each hub Job's muster.io/agent-status.  false when the heartbeat is
 * older than 3 s. */
bool mu__dpull_poll(mu__dd_t *d, mu__dcl_t *c);
/* Sets whether cluster c serves kind k (on: 1 yes, 0 no) as its fleet
 * label MU__D_KINDS<Kind>, which jobs of that kind select. */
void mu__dcl_serves(mu__dd_t *d, mu__dcl_t *c, mu__dkind_t k, int on);
/* Asks push-mode cluster c which kinds other than Job it serves (a GET
 * of each kind's /apis/GROUP/VERSION: its resource listed, or 404), when
 * due (never asked, or MU__D_REDISCOVER_MS ago, or disc_at reset after a
 * copy's create answered 404, or its probe of /apis saw a kind's group
 * version appear or go: mu__dserved_due), and keeps a watch of its
 * copies for each kind it serves only.  An answer other than 200 or 404
 * keeps what was known.  At most MU__DK_COUNT requests. */
void mu__dwork_discover(mu__dd_t *d, mu__dcl_t *c);
/* Pod counts of a pod list by "UID/GEN" (labels of the copies' pods):
 * [bound, running, succeeded, failed, all]; owned. */
json_t *mu__dpods_count(const json_t *l);
/* The counts of uid/gen as "bound=N,running=N,succeeded=N,failed=N"
 * into buf; returns whether a pod was bound or ended. */
bool mu__dpods_line(const json_t *pods, const char *uid, uint32_t gen, char *buf,
		    size_t len);
/* The counts of uid/gen in pods (mu__dpods_count's) into c. */
void mu__dpods_of(const json_t *pods, const char *uid, uint32_t gen, int64_t c[5]);
/* Creates the pods of group j (its hub pods) not yet sent for its
 * generation on its cluster over connection kc (a 409 for a pod of the
 * same group and generation counts as sent).  Returns 201, or the HTTP
 * status of a create that failed (sent again by a later call).  One
 * request per pod not yet sent. */
long mu__dwork_group_send(mu__dd_t *d, mu_kube_client_t *kc, mu__djob_t *j);
/* Round 19: a late pod whose claims' copy the worker refuses for good
 * (mu__dhdra_pod -1) is not sent and is held in j->held (tried again
 * when the hub pod or an object its claims name changes), the group
 * going on; only when the hub pods not held no longer meet the group's
 * minimum (mu__dkind_group_waits) does j->refused end it NotAdmitted.
 * Then, on the caller's thread (the daemon's, not a sender's): each
 * pod newly held told (a Warning Event ClaimCopyRefused on the hub pod,
 * FailedCreate on the group, a log line) and its objects entered in the
 * watch index (mu__dhdra_held_watch); j marked for the pass when it is
 * refused.  O(held pods) and two Events per pod newly held. */
void mu__dwork_held_tell(mu__dd_t *d, mu__djob_t *j);
/* Round 21, pull cluster c: group j's pods whose claims' copies c's agent
 * reports refused (MU__D_PODSREFUSED on j->obj, agent.c) held in j->held
 * as push mode holds them (counted against the group's minimum; told once
 * by mu__dwork_held_tell; recorded in MU__D_HELD), an entry counting only
 * for the current generation and the hub pod's resourceVersion it names;
 * a hold whose entry the agent dropped is released (the agent creates the
 * pod).  No request but the tellings'; O(entries x the group's pods). */
void mu__dwork_pull_held(mu__dd_t *d, mu__dcl_t *c, mu__djob_t *j);
/* A copy's end from its Job's conditions: "Succeeded", "Failed" or NULL. */
const char *mu__dcopy_done(const json_t *w);
/* Whether a create's HTTP status is a permanent refusal: a 4xx other
 * than 408, 409 and 429 (those, 5xx and no answer are retried, with
 * backoff). */
bool mu__dwork_refused(long st);
/* Creates j's copy on its cluster (a 409 for the same generation counts
 * as created).  Returns the HTTP status; a permanent refusal leaves
 * "cluster NAME refused the copy: HTTP N: the worker's message" in
 * j->refused (owned by j). */
long mu__dwork_create(mu__dd_t *d, mu__djob_t *j);
/* The same over connection kc to j's cluster (a sender thread's). */
long mu__dwork_create_on(mu__dd_t *d, mu_kube_client_t *kc, mu__djob_t *j);
/* run.c: after a create of j's copy answered st (on the daemon's
 * thread): a hub object its claims name gone or changed before it
 * (j->dra_stale, hdra.c): an Event ClaimsChanged and the job read again
 * at once (mu__dhub_claims_back); refused for good (j->refused): the
 * copy deleted when it was made, the job ended NotAdmitted; else, for a
 * transient failure, the next try backed off (1 s doubling to 60 s;
 * settle retries).  Round 19: a group's pods held by the send told first
 * (mu__dwork_held_tell).  O(1) but those, one request at most. */
void mu__drun_created(mu__dd_t *d, mu__djob_t *j, long st);
/* Deletes the copy of kind k on cluster c (background propagation). */
long mu__dwork_delete(mu__dd_t *d, mu__dcl_t *c, mu__dkind_t k, const char *ns,
		      const char *name);
/* reclaim.c: with --reclaim, once a pass after the dispatch, withdraws
 * the victims mu_fleet_reclaim() chooses through the start timeout's
 * path (copy deleted, requeued once its deletion is confirmed), each
 * with the condition Preempted and an Event.  O(fleet reclaim). */
void mu__dreclaim(mu__dd_t *d);
/* reclaim.c: the shrink intents a restart read back (round 18) and
 * those waiting for a pull agent's answer (round 22), each settled
 * (mu__dreclaim_settle), with or without --reclaim; called by the pass
 * after the polls and before the fleet's dispatch, so that a shrink the
 * agent confirmed frees its room for the claimant before the reclaim
 * looks for victims again.  O(jobs) while an intent is left, else O(1). */
void mu__dreclaim_intents(mu__dd_t *d);
/* reclaim.c (round 18): a shrink whose intent j->shrinking a restarted
 * daemon read back (recorded before the worker's PATCH), reconciled with
 * its copy on its push worker: the copy's size read (GET); at or below
 * the intent's, the shrink was done; above it, it is done now (the same
 * merge PATCH) and its Event written; the copy gone, the intent dropped
 * (that copy's own path takes it back).  j->shrinking is cleared (and
 * the record rewritten) once settled; kept when the worker does not
 * answer.  Round 19: a PATCH the worker refuses (answered, not 200) is
 * asked again 1, 2, 4 and 8 s later (nothing sent before then); the
 * MU__D_SHRINK_TRIES-th refusal gives it up: the intent dropped, the
 * record set to the pods the copy really runs without (its
 * parallelism's), the job counted at that size in the fleet again
 * (mu__dhub_readopt), a Warning Event ShrinkFailed and a log line.
 * Round 22: on a pull cluster nothing is asked of the worker: the
 * agent's answer on the hub Job (MU__D_SHRINKREP, of this generation and
 * size) settles it: done or was confirm it (a shrink this daemon chose,
 * j->shrink_live: the fleet told and the Event Shrunk; a restart's:
 * counted so already, the Event when the agent PATCHed after it); the
 * MU__D_SHRINK_TRIES-th refusal withdraws this daemon's whole (push
 * mode's rule for a refused PATCH) or gives a restart's up as above;
 * without an answer false, so that it is looked at each pass (dropped if
 * its dispatch ends first); this daemon's own pull shrinks are looked at
 * so too.  Round 23: the size is the kind's (mu__dkind_size), and an
 * intent on a hub object that no longer has one (an elastic PyTorchJob's
 * elasticPolicy taken out) is dropped without a request.  Returns true
 * when settled.  At most two requests. */
bool mu__dreclaim_settle(mu__dd_t *d, mu__djob_t *j);
/* reclaim.c (round 22): the merge PATCH of the copy ns/name of kind k
 * on the worker kc to `to` pods (its size as mu__dkind_size_patch sets
 * it for o, the copy or its hub object: a Job's spec.parallelism, round
 * 23 an elastic PyTorchJob's Worker replicas), push mode's and the pull
 * agent's; the HTTP status (0: none or no such size).  One request. */
long mu__dreclaim_patch(mu__dd_t *d, mu_kube_client_t *kc, mu__dkind_t k, const json_t *o,
			const char *ns, const char *name, int32_t to);
/* A pull agent's answer to a shrink intent (MU__D_SHRINKREP, "GEN TO
 * done|was|refused TRIES HTTP PAR [AT]"), as the agent writes it and the
 * hub reads it; AT (round 23) the wall time of the agent's last PATCH,
 * RFC 3339, so that a restarted agent keeps a refusal's wait. */
typedef struct mu__dshrinkrep {
	unsigned gen;
	int to, tries, par;
	long st;
	int64_t at_ms; /* AT in ms since the epoch; 0: none (round 22's form) */
	char res[16];  /* "done", "was" or "refused" */
} mu__dshrinkrep_t;
/* The form an agent's answer takes, for the messages that say so. */
#define MU__D_SHRINKREP_FORM "GEN TO done|was|refused TRIES HTTP PAR [TIME]"
/* reclaim.c (round 22): s parsed into *r: 1; 0 when s is NULL (no
 * answer); round 23: -1 when it is not of that form (hand-edited, cut,
 * another version's), with the field that is not and what was expected
 * in why (wl bytes).  O(its length). */
int mu__dshrinkrep_parse(const char *s, mu__dshrinkrep_t *r, char *why, size_t wl);
/* agent.c (round 22, made callable in round 23): the pull agent's
 * answer to the hub's shrink intent on hub Job hub (kind k) whose copy
 * w (generation gen) it runs on worker wk: the PATCH of its parallelism
 * made, or not while a refusal's wait runs, and the answer written to
 * hub (d->hub) in MU__D_SHRINKREP; shrinks (hub uid -> the answer last
 * written) is the agent's memory, empty after a restart.  O(1), or one
 * PATCH on each side. */
void mu__dagent_shrink(mu__dd_t *d, mu_kube_client_t *wk, json_t *shrinks, mu__dkind_t k,
		       const json_t *hub, const json_t *w, const char *gen);
/* reclaim.c (round 23): whether a pull agent still waits before it asks
 * the worker again after refused answer r, at wall time now_ms: the
 * refusal's wait (1, 2, 4, 8 s after the r.tries-th) counted from r's
 * AT.  False for an answer that is not a refusal, has no AT, or whose
 * AT is after now_ms (a clock set back since, or another node's): asked
 * at once then, as round 22 did, never later than the wait.  O(1). */
bool mu__dshrinkrep_waits(const mu__dshrinkrep_t *r, int64_t now_ms);
/* dutil.c (round 18): the records "GEN\tN..." (muster.io/dispatch-shrunk,
 * -shrinking): N when GEN is job j's current dispatch and N (1 to
 * 999,999) is followed by end, else 0 (rec NULL, another dispatch's, or
 * not a number).  O(1). */
int32_t mu__drec_count(const mu__djob_t *j, const char *rec, char end);
/* dutil.c (round 18): record rec's field k (0: its start), the text after
 * its k-th tab, or NULL (rec NULL, or fewer fields).  O(its length). */
const char *mu__drec_field(const char *rec, int k);
/* dutil.c (round 19): a shrink record "GEN\tN\tREASON\tMESSAGE" of job
 * j's dispatch, the reason its first rlen bytes (-1: all); owned, NULL
 * without memory.  O(their lengths). */
char *mu__drec_make(const mu__djob_t *j, int32_t n, const char *reason, int rlen,
		    const char *msg);
/* dutil.c (round 17): the pods taken off job j's current copy by its
 * record j->shrunk, set by reclaim.c (0 when none, or of another
 * dispatch).  O(1). */
int32_t mu__dreclaim_shrunk(const mu__djob_t *j);
/* dutil.c: appends to conditions cs the condition Preempted of a hub Job
 * withdrawn for another's (True until it is dispatched again, on), as
 * Kueue's Workload says it; nothing for one never preempted.  O(1). */
void mu__dreclaim_cond(const mu__djob_t *j, json_t *cs, bool on);
/* pdbs.c: per hub uid (the label muster.io/hub-uid of the copies' pods
 * in list pods), the least status.disruptionsAllowed of the budgets in
 * list pdbs (policy/v1 objects) of the pod's namespace whose selector
 * matches it, as src/kube/pdb.c tells the engine; uids no budget covers
 * are absent.  Owned.  O(pods x budgets). */
json_t *mu__dpdb_allowances(const json_t *pdbs, const json_t *pods);
/* dutil.c: the same condition in status st of a hub object of another
 * kind whose status the hub writes (its copy's, round 14), when the kind's
 * schema takes it (mu__dkind_conds): st's conditions, made if missing,
 * lose any Preempted they had and get this one, with its
 * lastTransitionTime (metav1.Condition requires one) when now is given.
 * Nothing for a kind whose schema names its types: its record is in the
 * annotations (muster.io/dispatch-preempted) and the Event.  O(conditions). */
void mu__dreclaim_kind_cond(const mu__djob_t *j, json_t *st, bool on, const char *now);

#endif
