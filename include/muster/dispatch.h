/*
 * dispatch.h - the second level's daemon: `muster dispatch` runs against a
 * hub's Kubernetes API (muster up, or a real cluster), which is its only
 * store.  It reads the hub's Cluster objects (clusters.muster.io) and
 * their kubeconfig Secrets, lists each worker's Nodes into a model per
 * cluster (src/fleet), queues the hub's queue-labelled batch/v1 Jobs
 * (held suspended) in the hub's Queues, and sends each job to exactly one
 * worker where its gang fits now: the dispatch is recorded on the hub Job
 * (cluster and generation) before the copy is created on the worker, and
 * copies that are not the current dispatch are deleted.  Status flows
 * back to the hub Job's annotations and the Cluster's status.  See
 * docs/dispatch.md.  (src/dispatch: run.c, hub.c, worker.c, agent.c,
 * dutil.c)
 */
#ifndef MUSTER_DISPATCH_H
#define MUSTER_DISPATCH_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "muster/kube.h"

typedef struct mu_dispatch_opts {
	const mu_kube_config_t *hub;  /* required: the hub's API */
	const char *id;               /* this replica's identity */
	int interval_ms;              /* one pass at least this often: 100 */
	int64_t start_timeout_ms;     /* a copy with no pod bound after this
	                               * long is withdrawn: 300000 */
	int64_t cluster_lost_ms;      /* a worker unreachable this long has
	                               * its jobs requeued: 60000 */
	int64_t burst_after_ms;       /* public clusters after this wait: 600000 */
	int32_t burst_priority;       /* ... or from this priority (INT32_MAX) */
	const char *burst_priority_class; /* ... or from this hub PriorityClass's
	                               * value (the lower of the two), or NULL */
	int request_timeout_ms;       /* one API request: 5000 */
	bool quiet;                   /* errors only */
	const char *metrics_listen;   /* "HOST:PORT" for /metrics, or NULL */
	const char *token;            /* bearer token of /ui/ there, or NULL
	                               * (then a random one, logged) */
	bool leader_elect;            /* only the Lease's holder acts: true */
	const char *lease_namespace;  /* "kube-system" */
	const char *lease_name;       /* "muster-dispatch" */
	int lease_duration_s;         /* 15 (renew deadline 2/3 of it) */
	int retry_period_s;           /* 2 */
	volatile sig_atomic_t *stop;  /* set to stop */
	int64_t usage_half_life_ms;   /* time-decayed fair share of the hub
	                               * queues (the engine's usage_half_life):
	                               * 0 = off */
	bool reclaim;                 /* withdraw other queues' jobs above
	                               * their share, and lower priorities of
	                               * its own queue, for a job that fits
	                               * nowhere (mu_fleet_reclaim): false */
	int64_t min_runtime_ms;       /* ... only jobs that ran this long:
	                               * 60000 */
	int64_t reclaim_cooldown_ms;  /* ... a queue loses jobs to reclaim
	                               * at most once per this long: 0 */
} mu_dispatch_opts_t;

void mu_dispatch_opts_defaults(mu_dispatch_opts_t *o);

/* Runs the hub daemon until *o->stop is set: with leader election, only
 * once it holds the Lease, and only while it may act.  Returns MU_OK after
 * a stop, MU_ESTATE when the lease was lost, another error (with a message
 * in err) when it could not start. */
int mu_dispatch_run(const mu_dispatch_opts_t *o, char *err, size_t errlen);

/* --- Pull mode: the agent in a worker ------------------------------------- */

typedef struct mu_dispatch_agent_opts {
	const mu_kube_config_t *hub;     /* required: the hub's API */
	const mu_kube_config_t *worker;  /* required: this cluster's API */
	const char *cluster;             /* its Cluster's name on the hub */
	int interval_ms;                 /* one pass at least this often: 200 */
	int request_timeout_ms;          /* 5000 */
	/* watch the worker's PodDisruptionBudgets and report each copy's
	 * allowance (heartbeat data.pdbs), for a hub that runs with
	 * --reclaim, the only reader; false: no such watch, and data.pdbs
	 * absent, which such a hub logs (`--budgets`) */
	bool budgets;
	bool quiet;
	volatile sig_atomic_t *stop;
} mu_dispatch_agent_opts_t;

void mu_dispatch_agent_opts_defaults(mu_dispatch_agent_opts_t *o);

/* Runs `muster dispatch agent` until *o->stop: every pass it writes the
 * worker's Nodes and a heartbeat to the hub (ConfigMap
 * muster-system/muster-cluster-NAME), creates the copies of the hub Jobs
 * labelled muster.io/cluster=NAME, deletes copies that are not the
 * current dispatch, and reports each copy's phase and pods on its hub Job
 * (muster.io/agent-status).  The hub needs no credentials for the worker.
 * Returns MU_OK after a stop. */
int mu_dispatch_agent_run(const mu_dispatch_agent_opts_t *o, char *err, size_t errlen);

#endif
