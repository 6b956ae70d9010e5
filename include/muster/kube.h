/*
 * kube.h - muster on Kubernetes: the API client's credentials, the
 * scheduler daemon and `explain` against a live cluster.
 *
 * The daemon (`muster scheduler`) lists and watches nodes, pods, batch/v1
 * Jobs, muster's Queues, PodGroups and Topologies, coscheduling PodGroups
 * and NodeResourceTopologies, feeds the changes into one mu_engine_t, runs
 * mu_engine_cycle() when something changed, and writes the decisions back:
 * bindings (with the devices as annotations), evictions, Job suspend and
 * resume, the PodScheduled condition, events, and Queue and PodGroup
 * status.  Only the holder of a coordination.k8s.io Lease schedules.  See
 * docs/kubernetes.md for the protocol and src/kube/ for the parts.
 */
#ifndef MUSTER_KUBE_H
#define MUSTER_KUBE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "muster/engine.h"
#include "muster/error.h"

typedef struct mu_kube_tls mu_kube_tls_t; /* opaque (src/kube/ktls.c) */

/* Where the API server is and how to authenticate: from a kubeconfig or
 * from a pod's service account.  Every string is owned (malloc'ed). */
typedef struct mu_kube_config {
	char *server;          /* "https://host:port" or "http://..." */
	char *ns;              /* the context's namespace, or "default" */
	char *token;           /* a bearer token, or NULL */
	char *token_file;      /* re-read at most once a minute, or NULL */
	char *ca_file;         /* PEM file, or NULL */
	char *ca_pem;          /* PEM text (certificate-authority-data) */
	char *cert_file, *cert_pem; /* client certificate */
	char *key_file, *key_pem;   /* client key */
	bool insecure;         /* insecure-skip-tls-verify */
	/* the *_pem texts decoded once for all its connections (made by
	 * the loaders below, freed by mu_kube_config_release), or NULL:
	 * each connection has libcurl decode them */
	mu_kube_tls_t *tls;
} mu_kube_config_t;

/* Reads a kubeconfig (YAML or JSON): the context `context` (NULL: the
 * current-context), its cluster and user.  Relative file names are taken
 * from the kubeconfig's directory.  On error returns MU_EIO, MU_EPARSE or
 * MU_ENOENT with a message in err. */
int mu_kube_config_load(const char *path, const char *context,
			mu_kube_config_t *out, char *err, size_t errlen);
/* The same from a kubeconfig's text (a Secret's data); path names it in
 * messages, and relative file names are taken from its directory. */
int mu_kube_config_parse(const char *path, const char *buf, size_t len,
			 const char *context, mu_kube_config_t *out, char *err,
			 size_t errlen);
/* In-cluster credentials: the server from KUBERNETES_SERVICE_HOST and
 * _PORT, token, CA and namespace under dir (NULL: the service account's
 * /var/run/secrets/kubernetes.io/serviceaccount). */
int mu_kube_config_in_cluster(const char *dir, mu_kube_config_t *out,
			      char *err, size_t errlen);
/* What the CLI uses: in_cluster, else kubeconfig, else $KUBECONFIG (its
 * first file), else ~/.kube/config. */
int mu_kube_config_resolve(const char *kubeconfig, const char *context,
			   bool in_cluster, mu_kube_config_t *out, char *err,
			   size_t errlen);
void mu_kube_config_release(mu_kube_config_t *c);

/* --- A plain API client (for the hub daemon, src/dispatch) ------------- */

/* One keep-alive connection to an API server with cfg's credentials (cfg
 * must outlive it); one thread at a time. */
typedef struct mu_kube_client mu_kube_client_t;

int mu_kube_client_new(const mu_kube_config_t *cfg, mu_kube_client_t **out);
void mu_kube_client_free(mu_kube_client_t *c);
/* One request (body and ctype may be NULL); *status gets the HTTP status
 * (0: no answer) and *answer (if not NULL) the body, NUL-terminated, which
 * the caller frees.  MU_EIO when no answer came within timeout_ms (the
 * answer then holds the transport's message). */
int mu_kube_client_do(mu_kube_client_t *c, const char *method, const char *path,
		      const char *ctype, const char *body, long timeout_ms,
		      long *status, char **answer);

/* --- A watched list for other daemons (the hub's, src/dispatch) --------- */

/* A collection kept up to date by a thread of its own (one kept-alive
 * connection): listed, then watched from the list's resourceVersion,
 * resumed from the last version seen when a watch ends or is cut (as
 * client-go's reflector does), re-listed on 410 Gone
 * (src/kube/watchcache.c). */
typedef struct mu_kube_watch mu_kube_watch_t;

/* Starts watching path (a collection, "/api/v1/pods"), with query (extra
 * parameters such as "labelSelector=a%2Fb", or NULL).  cfg must outlive
 * the watch. */
int mu_kube_watch_start(const mu_kube_config_t *cfg, const char *path, const char *query,
			mu_kube_watch_t **out);
/* A snapshot: *list (if not NULL; owned by the caller) gets {"items": [...]}
 * (objects a watch event brought come without metadata.managedFields)
 * whose objects are shared and must not be changed; *seq (if not NULL) the
 * count of changes so far (unchanged: nothing changed).  Returns whether
 * the cache is healthy: listed, and no list or watch failed since (or a
 * watch resumed after the failure was answered).
 * O(objects) with a list, O(1) without. */
struct json_t;
bool mu_kube_watch_items(mu_kube_watch_t *w, struct json_t **list, uint64_t *seq);
/* What changed since change count since (an earlier *seq): *changed
 * (owned by the caller) gets {"ns/name": object, or null when deleted}
 * for each key changed since, objects shared and not to be changed; or
 * NULL when those changes are not all known (a list came between, since
 * is too old, or out of memory): then the caller reads a snapshot.  *seq
 * gets the count now.  Returns whether the cache is healthy, as
 * mu_kube_watch_items.  O(changes since). */
bool mu_kube_watch_changes(mu_kube_watch_t *w, uint64_t since, struct json_t **changed,
			   uint64_t *seq);
/* The object of key "ns/name" (cluster-scoped: "name") as the cache
 * holds it, shared (a reference the caller drops), or NULL.  O(1). */
struct json_t *mu_kube_watch_get(mu_kube_watch_t *w, const char *key);
/* How many times a watch was answered 410 Gone (its resourceVersion had
 * expired) and the collection was listed again.  O(1). */
uint64_t mu_kube_watch_expired(mu_kube_watch_t *w);
/* How many times a watch that failed (cut, not answered, 429 or 500) was
 * resumed from the last version seen, and the server took that version,
 * without a list.  O(1). */
uint64_t mu_kube_watch_resumed(mu_kube_watch_t *w);
/* How many watch events' objects were parsed (not a list's items): an
 * event is parsed when a reader reads the map after it, and only the last
 * of several events of one object between two reads is (round 17).
 * O(1). */
uint64_t mu_kube_watch_parsed(mu_kube_watch_t *w);
/* Why the cache is not healthy ("" when it is), into buf. */
const char *mu_kube_watch_error(mu_kube_watch_t *w, char *buf, size_t len);
/* Asks the thread to stop and returns at once (NULL: nothing).  A caller
 * that stops many caches signals them all first, so that their threads
 * wind down together and the stops that follow wait about a second in
 * all, not a second each.  O(1). */
void mu_kube_watch_signal(mu_kube_watch_t *w);
/* Stops the thread (within about a second) and frees everything. */
void mu_kube_watch_stop(mu_kube_watch_t *w);

/* --- Leader election for other daemons (the hub's, src/dispatch) -------- */

/* A coordination.k8s.io/v1 Lease held as `muster scheduler` holds its own
 * (src/kube/leader.c): renewed by a thread every retry period; lost when
 * no renew succeeds within the renew deadline (2/3 of the duration). */
typedef struct mu_kube_lease mu_kube_lease_t;

typedef struct mu_kube_lease_opts {
	const mu_kube_config_t *cfg;  /* the API (outlives the lease) */
	const char *ns, *name, *id;   /* the Lease and this replica */
	int duration_s, retry_period_s;
	volatile sig_atomic_t *stop;  /* gives up waiting when set */
} mu_kube_lease_opts_t;

/* Blocks until the lease is held (MU_OK, *out set) or *stop (MU_ESTATE). */
int mu_kube_lease_acquire(const mu_kube_lease_opts_t *o, mu_kube_lease_t **out);
/* Whether the holder may still act: not lost, within the renew deadline
 * of its last successful renew.  O(1). */
bool mu_kube_lease_valid(const mu_kube_lease_t *l);
/* The term the holder acts under, "NS/NAME:HOLDER:TRANSITIONS": what
 * writes carry as the annotation muster.io/lease-term so that `muster up`
 * refuses them once another replica took the lease over (fencing,
 * docs/kubernetes.md).  Owned by l.  O(1). */
const char *mu_kube_lease_term(const mu_kube_lease_t *l);
/* Stops renewing and clears the holder (a standby takes over at once). */
void mu_kube_lease_release(mu_kube_lease_t *l);

/* --- The daemon ---------------------------------------------------------- */

typedef struct mu_kube_opts {
	const mu_kube_config_t *cfg;  /* required */
	const char *scheduler_name;   /* pods' spec.schedulerName: "muster" */
	const char *id;               /* this replica's identity (lease holder) */
	const char *lease_namespace;  /* "kube-system" */
	const char *lease_name;       /* "muster-scheduler" */
	int lease_duration_s;         /* 15 */
	int renew_deadline_s;         /* 10 */
	int retry_period_s;           /* 2 */
	bool leader_elect;            /* true */
	const char *metrics_listen;   /* "127.0.0.1:PORT" or NULL: no server;
	                               * an empty host is 127.0.0.1 */
	/* Bearer token that /explain and the UI's /ui/api/ need; NULL: a
	 * random one, logged with the UI's address.  /metrics, /healthz,
	 * /readyz and the UI's static files stay open. */
	const char *token;
	int ui_history_step_ms;       /* the UI's history step: 60000 */
	int cycle_ms;                 /* at most one cycle per this long: 20 */
	int idle_cycle_ms;            /* a cycle at least this often: 5000 */
	int workers;                  /* threads writing binds etc.: 8 */
	const char *default_queue;    /* queue of pods naming none: "default" */
	/* A gang with some but fewer than minMember pods bound, none finished,
	 * is rolled back (its bound pods evicted) after this long; negative:
	 * never.  60000, as KAI-Scheduler's default staleness grace period. */
	int64_t gang_rollback_ms;
	bool log_json;                /* structured logs as JSON lines */
	int log_level;                /* 0 errors, 1 info (default), 2 debug */
	/* Policies.  Consolidation (engine.consolidate) is off unless asked
	 * for; it moves only pods a controller recreates (src/kube/move.c),
	 * within engine.move_ratio, move_pods_per_hour and move_gpus_per_hour
	 * (32 by default here). */
	mu_engine_config_t engine;
	/* --policy muster-horizon: its checkpoints, rollouts and
	 * min_interval (ms of the scheduler's clock between choices; 60000
	 * by default); own_mix is set by the scheduler. */
	mu_horizon_config_t horizon;
	/* Plan MIG layouts for the pending pods and write them on the Nodes
	 * (annotation muster.io/mig-layout, src/kube/mig.c); false. */
	bool mig_layouts;
	/* How long the place planned for a moved pod's replacement is held
	 * for it (300000). */
	int64_t move_hold_ms;
	/* A fault point for tests, or NULL (the CLI reads it from the
	 * environment variable MUSTER_FAULT): "move-stall" leaves the second
	 * write of a consolidation's pair (the place recorded on its node,
	 * then the eviction) unsent, so that a test can kill the scheduler in
	 * between.  Any other value is refused by mu_kube_run(). */
	const char *fault;
	/* Set (by a signal handler) to stop: the daemon finishes its writes
	 * in flight, releases the lease and returns. */
	volatile sig_atomic_t *stop;
} mu_kube_opts_t;

void mu_kube_opts_defaults(mu_kube_opts_t *o);

/* Runs the scheduler until *o->stop is set or the lease is lost.  Returns
 * MU_OK after a stop, MU_ESTATE when leadership was lost, another error
 * (with a message in err) when it could not start. */
int mu_kube_run(const mu_kube_opts_t *o, char *err, size_t errlen);

/* Prints why a pod (NAME, NAMESPACE/NAME, pod/NAME) or a Job (job/NAME,
 * job/NAMESPACE/NAME) is where it is, read through the API: phase, group
 * or queue, node and devices, the scheduler's PodScheduled message (the
 * engine's explanation) and the scheduler's events.  Returns MU_OK,
 * MU_ENOENT when the object does not exist, or MU_EIO. */
int mu_kube_explain(const mu_kube_config_t *cfg, const char *what, FILE *out,
		    char *err, size_t errlen);

/* Asks a running scheduler (its --metrics address, "http://HOST:PORT",
 * IPv4) for the engine's live view of the same pod or Job: its group,
 * queue, state, priority, the pending reason and the expected start (from
 * a reservation or from aggregate capacity).  `what` as for
 * mu_kube_explain(); ns is the namespace when `what` names none; token is
 * the scheduler's bearer token (NULL: none sent). */
int mu_kube_explain_live(const char *scheduler, const char *token, const char *what,
			 const char *ns, FILE *out, char *err, size_t errlen);

/* A Queue's status as muster scheduler writes it (the hub's dispatcher
 * writes the same on hub Queues): fairShare and usage (GPUs as a decimal,
 * CPU in millicores, memory in bytes), pendingJobs and runningJobs; the
 * scheduler adds its node pools.  Owned; NULL on OOM. */
struct json_t *mu_kube_queue_status(const mu_res_t *fair, const mu_res_t *used,
				    int64_t pending, int64_t running);

/* The allowance a PodDisruptionBudget (policy/v1) gives the pods it
 * covers: status.disruptionsAllowed, 0 when the disruption controller has
 * not written it yet or it is negative (as the Eviction API counts it).
 * The scheduler's victim order and the hub's (src/dispatch/pdbs.c) read
 * it here. */
int32_t mu_kube_pdb_allowed(const struct json_t *pdb);

#endif
