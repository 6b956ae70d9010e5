/*
 * web_int.h - the parts of the live UI and what they share.
 *
 *   snap.c    snapshots: the host's view at one moment, immutable once
 *             published, reference-counted; strings in a pool
 *   web.c     the UI object: ticks, publishing, events derived from two
 *             snapshots, the 24 h history ring, Server-Sent Events
 *   api.c     the JSON endpoints: routing, argument checks, pagination
 *   mhd.c     libmicrohttpd glue for hosts that serve with it
 *   assets    src/web/assets/ (index.html, app.js, app.css), embedded at
 *             build time as mu__web_assets[] (scripts/embed-assets.sh)
 *
 * Locking: w->mu guards w->cur (the published snapshot), the event ring
 * and the history ring; readers copy what they need under it, or take a
 * reference to the snapshot and read it without the lock.
 */
#ifndef MUSTER_WEB_INT_H
#define MUSTER_WEB_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "muster/web.h"

/* --- snap.c ---------------------------------------------------------------- */

typedef struct mu__wpool_block mu__wpool_block_t;

struct mu_web_snap {
	atomic_int refs;
	uint64_t seq;
	int64_t at_ms;
	char *title;
	mu_web_queue_t *q;
	size_t nq, capq;
	mu_web_pool_t *po;      /* node pools, and queues in them */
	size_t npo, cappo;
	mu_web_job_t *j;        /* sorted by key once published */
	size_t nj, capj;
	mu_web_pod_t *p;        /* sorted by job key once published */
	size_t np, capp;
	mu_web_node_t *n;       /* sorted by rack, then name */
	size_t nn, capn;
	mu_web_cluster_t *c;
	size_t nc, capc;
	mu_web_placement_t *pl;
	size_t npl, cappl;
	bool has_fleet;
	mu__wpool_block_t *pool;
	/* Totals, computed by mu__snap_seal(). */
	int64_t gpu_state[5];   /* GPUs in each mu_web_gpu_t state */
	int32_t pending, running;
};

mu_web_snap_t *mu__snap_new(void);
/* Sorts and totals a filled snapshot; after this it is read-only. */
void mu__snap_seal(mu_web_snap_t *s);
void mu__snap_ref(mu_web_snap_t *s);
void mu__snap_unref(mu_web_snap_t *s);
/* Binary search by key; NULL when absent. */
const mu_web_job_t *mu__snap_job(const mu_web_snap_t *s, const char *key);
/* The pods of job key: *first and the count returned. */
size_t mu__snap_pods(const mu_web_snap_t *s, const char *key, size_t *first);

/* --- web.c ----------------------------------------------------------------- */

#define MU__WEV_CAP 4096

typedef struct mu__wevent {
	int64_t at_ms;
	char kind[16];          /* Submitted Scheduled Preempted Waiting Finished */
	char *job_key;
	char *msg;
} mu__wevent_t;

/* One history point. */
typedef struct mu__whist {
	int64_t at_ms;
	float gpu_total, gpu_used, gpu_frag, gpu_reserved;
	int32_t nq;
	int32_t *qid;           /* into w->qnames */
	float (*qused)[MU_WEB_NRES];
} mu__whist_t;

struct mu_web {
	mu_web_provider_t p;
	mu_web_opts_t o;
	pthread_mutex_t mu;
	pthread_cond_t cv;      /* a new snapshot, or closing */
	bool closing;
	mu_web_snap_t *cur;     /* published, or NULL */
	uint64_t seq;
	int64_t last_snap, last_hist;
	int64_t snap_cost;      /* ms the last snapshot took (host thread) */
	atomic_llong last_req;  /* epoch ms of the last API request */
	atomic_int poked;
	mu__wevent_t ev[MU__WEV_CAP];
	uint64_t nev;           /* events ever; ring index nev % CAP */
	mu__whist_t *hist;      /* ring of o.hist_points */
	uint64_t nhist;
	char **qnames;
	int32_t nqnames, capqnames;
};

/* Interns a queue name for the history; -1 on OOM or when full. */
int32_t mu__web_qname(mu_web_t *w, const char *name);

/* --- api.c ----------------------------------------------------------------- */

/* JSON answers; the caller holds a reference to s (may be NULL: 503). */
void mu__api_get(mu_web_t *w, mu_web_snap_t *s, const char *path, mu_web_arg_fn arg,
		 void *ctx, mu_web_resp_t *r);
/* An error answer {"error": msg}. */
void mu__api_error(mu_web_resp_t *r, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* --- the embedded assets ---------------------------------------------------- */

typedef struct mu__web_asset {
	const char *path;       /* "/ui/app.js" */
	const char *ctype;
	const unsigned char *data;
	size_t len;
} mu__web_asset_t;

extern const mu__web_asset_t mu__web_assets[];
extern const size_t mu__web_nassets;

#endif
