/*
 * web.h - the live web UI (src/web): a read-only single page under /ui/
 * and the JSON it reads, served by whoever owns the data: `muster
 * scheduler` today, `muster dispatch` later.
 *
 * The host owns its state on one thread and hands the UI a provider: a
 * table of callbacks that fill a snapshot (queues, jobs, pods with their
 * devices, nodes with per-GPU state, and, on a dispatcher, the fleet).
 * The host calls mu_web_tick() from that thread; when a refresh is due
 * the UI calls provider->snapshot() there, derives events by comparing it
 * with the previous one, samples the 24 h history ring (one point per
 * hist_ms), and publishes it.  HTTP threads only read published,
 * immutable, reference-counted snapshots, so no lock is ever held across
 * the host's data.
 *
 * Endpoints (docs/web.md): /ui/ and its assets (embedded in the binary,
 * open), and /ui/api/{summary,queues,jobs,job,nodes,heatmap,cluster,
 * events,fleet,stream} (JSON and Server-Sent Events), which need the
 * bearer token when one is set.
 */
#ifndef MUSTER_WEB_H
#define MUSTER_WEB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "muster/error.h"

/* Accounting resources the UI shows: GPUs, CPUs (cores), memory (bytes). */
enum { MU_WEB_GPU = 0, MU_WEB_CPU = 1, MU_WEB_MEM = 2, MU_WEB_NRES = 3 };
#define MU_WEB_MAX_GPUS 64

typedef enum mu_web_jstate {
	MU_WEB_PENDING = 0,
	MU_WEB_RUNNING = 1,
	MU_WEB_FINISHED = 2,
} mu_web_jstate_t;

/* What one GPU is doing, as the heat map colours it. */
typedef enum mu_web_gpu {
	MU_WEB_GPU_FREE = 0,
	MU_WEB_GPU_USED = 1,
	MU_WEB_GPU_FRAG = 2,     /* free but stranded on a partly used node,
	                          * or a device shared by fractional pods */
	MU_WEB_GPU_RESERVED = 3, /* free, held for a backfill reservation */
	MU_WEB_GPU_DOWN = 4,     /* its node is cordoned or not ready */
} mu_web_gpu_t;

/* Strings are copied by the mu_web_snap_add_*() calls. */
typedef struct mu_web_queue {
	const char *name;
	const char *parent;      /* NULL for a top-level queue */
	int32_t priority;
	double deserved[MU_WEB_NRES], limit[MU_WEB_NRES]; /* limit < 0: none */
	double fair[MU_WEB_NRES], used[MU_WEB_NRES];
	int32_t pending, running;
} mu_web_queue_t;

/* A node pool's GPUs (queue NULL), or one queue's GPU quota, fair share
 * and use in it (docs/policy.md, "Node pools"). */
typedef struct mu_web_pool {
	const char *pool;
	const char *queue;       /* NULL: the pool's totals */
	int32_t nodes;           /* the pool's live nodes (totals only) */
	double gpus;             /* the pool's GPUs (totals only) */
	double used, deserved, fair, limit; /* GPUs; limit < 0: none */
} mu_web_pool_t;

typedef struct mu_web_job {
	const char *key;         /* unique, as used in URLs ("j:ns/name") */
	const char *name, *ns, *queue;
	const char *type;        /* "train", "inference", ..., "gang", "pod" */
	const char *kind;        /* "pod", "gang", "job" */
	mu_web_jstate_t state;
	int32_t pods, bound, min_member, priority, preemptions;
	bool preemptible;
	double gpus;             /* GPUs of all its pods */
	int64_t submitted_ms, started_ms; /* epoch ms; 0 = not yet */
	int64_t expected_ms;     /* pending: expected start, or 0 */
	const char *expected_from; /* "reservation", "aggregate capacity", or NULL */
	const char *why;         /* pending: the reason's name ("Unschedulable") */
	const char *reason;      /* pending: the engine's full message */
} mu_web_job_t;

typedef struct mu_web_pod {
	const char *job_key;     /* its job's key */
	const char *name, *ns, *node; /* node NULL when unbound */
	const char *phase;       /* "Pending", "Binding", "Running", ... */
	uint64_t gpus;           /* device indices on the node (bit mask) */
	int32_t gpu_milli;       /* share of the one device, 0 = whole */
	int32_t numa, nic;       /* -1 = none */
	const char *cpus;        /* exclusive cpulist, or NULL */
} mu_web_pod_t;

typedef struct mu_web_node {
	const char *name;
	const char *rack;        /* innermost topology domain, or NULL */
	const char *levels;      /* "zone=z1 block=b2 rack=r3", or NULL */
	const char *gpu_model;
	bool ready;              /* schedulable and Ready */
	int32_t ngpu;            /* <= MU_WEB_MAX_GPUS */
	uint8_t gpu[MU_WEB_MAX_GPUS]; /* mu_web_gpu_t of each device */
	double cpu_alloc, cpu_used, mem_alloc, mem_used;
	int32_t pods;
} mu_web_node_t;

/* Fleet (a dispatcher): one member cluster. */
typedef struct mu_web_cluster {
	const char *name;
	const char *state;       /* "ready", "unreachable", "draining" */
	double gpus, gpus_used;
	int32_t pending, running;
} mu_web_cluster_t;

/* Fleet: where one job went. */
typedef struct mu_web_placement {
	const char *job_key, *cluster;
} mu_web_placement_t;

typedef struct mu_web_snap mu_web_snap_t;

/* Appends to a snapshot being filled (copies every string).  MU_ENOMEM. */
int mu_web_snap_add_queue(mu_web_snap_t *s, const mu_web_queue_t *q);
int mu_web_snap_add_pool(mu_web_snap_t *s, const mu_web_pool_t *p);
int mu_web_snap_add_job(mu_web_snap_t *s, const mu_web_job_t *j);
int mu_web_snap_add_pod(mu_web_snap_t *s, const mu_web_pod_t *p);
int mu_web_snap_add_node(mu_web_snap_t *s, const mu_web_node_t *n);
int mu_web_snap_add_cluster(mu_web_snap_t *s, const mu_web_cluster_t *c);
int mu_web_snap_add_placement(mu_web_snap_t *s, const mu_web_placement_t *p);
/* The host's name for itself, shown in the header ("muster scheduler"). */
int mu_web_snap_set_title(mu_web_snap_t *s, const char *title);

/* What the host gives the UI.  Every callback runs on the thread that
 * calls mu_web_tick(). */
typedef struct mu_web_provider {
	void *ctx;
	/* Fills s (empty, owned by the UI) with the current view.  Returns
	 * MU_OK or an error, in which case s is dropped. */
	int (*snapshot)(void *ctx, mu_web_snap_t *s);
	/* Fills the fleet part of s (clusters and placements); NULL on a
	 * host that is not a dispatcher: the Fleet view then says so. */
	int (*fleet)(void *ctx, mu_web_snap_t *s);
} mu_web_provider_t;

typedef struct mu_web_opts {
	const char *token;       /* bearer token for /ui/api/, NULL: none */
	int refresh_ms;          /* snapshot at most this often while a
	                          * client is watching (1000) */
	int idle_ms;             /* ... and this often when not poked (10000) */
	int hist_ms;             /* history step (60000): 1440 points */
	int hist_points;         /* history length (1440 = 24 h) */
} mu_web_opts_t;

void mu_web_opts_defaults(mu_web_opts_t *o);

typedef struct mu_web mu_web_t;

/* A UI over provider p (copied; p->ctx must outlive it).  MU_ENOMEM,
 * MU_EINVAL (no snapshot callback, bad options). */
int mu_web_new(const mu_web_provider_t *p, const mu_web_opts_t *o, mu_web_t **out);
/* Ends every SSE stream (they return at once); call before stopping the
 * HTTP server that serves them. */
void mu_web_shutdown(mu_web_t *w);
/* Frees everything; no request may be running (stop the server first). */
void mu_web_free(mu_web_t *w);
/* On the provider's thread: takes a snapshot when one is due at now_ms
 * (epoch ms), samples the history, wakes the streams.  O(snapshot). */
void mu_web_tick(mu_web_t *w, int64_t now_ms);
/* Asks for a snapshot at the next tick (something changed). */
void mu_web_poke(mu_web_t *w);

/* --- answering requests (any thread) -------------------------------------- */

/* Looks a query argument up; NULL when absent. */
typedef const char *(*mu_web_arg_fn)(void *ctx, const char *key);

typedef struct mu_web_resp {
	int status;              /* HTTP status */
	const char *ctype;       /* static string */
	char *body;              /* malloc'ed unless is_static */
	size_t len;
	bool is_static;          /* body points into the embedded assets */
	bool stream;             /* /ui/api/stream: use mu_web_stream_next() */
} mu_web_resp_t;

/* Answers GET path with the query args given by arg(ctx, key) and the
 * Authorization header value auth (may be NULL).  Never fails: errors
 * are JSON answers ({"error": "..."}) with 400, 401, 404 or 503. */
void mu_web_get(mu_web_t *w, const char *path, mu_web_arg_fn arg, void *ctx,
		const char *auth, mu_web_resp_t *r);
void mu_web_resp_release(mu_web_resp_t *r);

/* Whether the header value auth ("Bearer T") carries token (constant
 * time); true when token is NULL or empty. */
bool mu_web_auth_ok(const char *token, const char *auth);

/* SSE: waits up to timeout_ms for a snapshot newer than *seq and writes
 * the next event ("event: tick\ndata: {...}\n\n", or a ": ping" comment
 * on timeout) into buf.  Returns its length, or -1 once the UI is being
 * freed.  Bounded by timeout_ms. */
int mu_web_stream_next(mu_web_t *w, uint64_t *seq, int timeout_ms, char *buf,
		       size_t len);

/* --- libmicrohttpd ---------------------------------------------------------- */

struct MHD_Connection;
/* Queues the answer to a GET of url (which starts with "/ui") on c:
 * assets, JSON, or an SSE stream (a thread-per-connection server is
 * needed for streams).  Returns libmicrohttpd's MHD_YES or MHD_NO. */
int mu_web_mhd_answer(mu_web_t *w, struct MHD_Connection *c, const char *url);

#endif
