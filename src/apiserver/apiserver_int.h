/*
 * apiserver_int.h - the pieces of the control plane and how they share data.
 *
 *   resources.c  the registry of resource types (group, version, plural,
 *                kind, scope, short names, table columns, selectable fields)
 *   store.c      SQLite storage, the in-memory object index, the global
 *                resourceVersion and the watch ring
 *   selectors.c  label and field selectors
 *   validate.c   per-kind validation and defaults (422 causes)
 *   patch.c      JSON merge patch and strategic merge patch
 *   request.c    socket-free parsing of request targets, queries and heads
 *   http.c       libmicrohttpd glue: bodies, auth, answers, watch streams
 *   api.c        the REST handlers and the dispatch to them; podsub.c pod
 *                subresources (binding, eviction) and deletes; watch.c
 *                watches; discovery.c discovery and OpenAPI
 *   respond.c    answers all of those give (Status, store errors, filters,
 *                tables); helpers.c clocks, RFC 3339, ages, base64, jset.
 *                Both sit below the handlers and call none of them.
 *   nodes_sim.c  simulated kubelets; jobctl.c the batch/v1 Job controller
 *
 * Objects are immutable once built (mu__obj_t): a write makes a new version,
 * and readers hold references, so lists and watches copy nothing under locks
 * but pointers.
 */
#ifndef MUSTER_APISERVER_INT_H
#define MUSTER_APISERVER_INT_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "muster/apiserver.h"
#include "muster/jpath.h"

/* --- resource types (resources.c) --------------------------------------- */

enum {
	MU__SUB_STATUS = 1,
	MU__SUB_BINDING = 2,
	MU__SUB_EVICTION = 4,
};

typedef struct mu__col {
	const char *name, *type, *format, *desc;
	int priority; /* 0 shown by default, 1 with -o wide */
} mu__col_t;

typedef struct mu__verr mu__verr_t;

typedef struct mu__rtype {
	const char *group, *version, *plural, *singular, *kind;
	const char *shortnames[3];  /* NULL-terminated */
	bool namespaced;
	bool builtin;               /* strategic merge patch accepted */
	bool has_spec;              /* metadata.generation follows spec changes */
	unsigned subs;              /* MU__SUB_* */
	const char *const *fields;  /* selectable field paths, NULL-terminated */
	const mu__col_t *cols;
	int ncols;
	/* Appends one cell per column of cols to cells, for obj at time now. */
	void (*row)(const json_t *obj, int64_t now, json_t *cells);
	/* Checks obj (old: the stored version on update, else NULL). */
	void (*validate)(const json_t *obj, const json_t *old, mu__verr_t *e);
	/* Fills defaults on create (NULL = none). */
	void (*defaults)(json_t *obj);
} mu__rtype_t;

/* The registry: *n types, in a fixed order (index = rt). */
const mu__rtype_t *mu__rtypes(int *n);
/* Index of group/version/plural, or -1. */
int mu__rtype_find(const char *group, const char *version, const char *plural);
/* Index of a type by group and kind (any version), or -1. */
int mu__rtype_by_kind(const char *group, const char *kind);
/* "v1" or "group/version". */
void mu__rtype_apiversion(const mu__rtype_t *t, char *buf, size_t len);

/* Index of well-known types (their position in the registry). */
enum {
	MU__RT_NAMESPACES = 0,
	MU__RT_NODES,
	MU__RT_PODS,
	MU__RT_EVENTS,
	MU__RT_LEASES,
	MU__RT_JOBS,
	MU__RT_QUEUES,
	MU__RT_PODGROUPS,
	MU__RT_TOPOLOGIES,
	MU__RT_XPODGROUPS,
	MU__RT_NRTS,
	MU__RT_CLUSTERS, /* the hub's worker clusters (cluster.c) */
	MU__RT_COUNT,
};

/* --- time and small helpers (helpers.c) --------------------------------- */

/* Wall-clock seconds and RFC 3339 text ("2006-01-02T15:04:05Z", or with
 * microseconds when micro is true). */
int64_t mu__now_s(void);
void mu__rfc3339(int64_t secs, long usec, bool micro, char *buf, size_t len);
/* Parses RFC 3339 (fraction and offset accepted) into seconds; -1 if bad. */
int64_t mu__parse_rfc3339(const char *s);
/* kubectl's short age: "45s", "5m", "3h12m", "4d". */
void mu__age(int64_t secs, char *buf, size_t len);
/* Base64: encoding returns a malloc'd string; decoding writes at most cap
 * bytes (NUL-terminated) and fails on bad input (MU_EPARSE). */
char *mu__b64enc(const void *data, size_t n);
int mu__b64dec(const char *s, char *out, size_t cap, size_t *outlen);
/* Sets o.path (creating objects on the way) to v, stealing v. */
int mu__jset(json_t *o, const char *path, json_t *v);

/* --- immutable object versions (store.c) -------------------------------- */

typedef struct mu__obj {
	atomic_int refs;
	int rt;
	int64_t rv;
	char *ns;      /* "" for cluster-scoped */
	char *name;
	char *key;     /* "ns/name" or "name": list order */
	char *json;    /* the serialized object, resourceVersion included */
	size_t len;
	char *kv;      /* labels then fields: "k\0v\0" pairs */
	int nlabels, nfields;
	bool deleting; /* metadata.deletionTimestamp is set */
} mu__obj_t;

/* Builds a version from a JSON object (borrowed): serializes it and
 * extracts labels and the type's fields.  NULL on OOM. */
mu__obj_t *mu__obj_new(int rt, const json_t *o, int64_t rv);
mu__obj_t *mu__obj_ref(mu__obj_t *o);
void mu__obj_unref(mu__obj_t *o);
/* A parsed copy of the object (caller owns), or NULL. */
json_t *mu__obj_parse(const mu__obj_t *o);
/* The value of label / field key, or NULL. */
const char *mu__obj_label(const mu__obj_t *o, const char *key);
const char *mu__obj_field(const mu__obj_t *o, const char *key);

/* --- the store (store.c) ------------------------------------------------ */

typedef struct mu__store mu__store_t;

typedef struct mu__store_opts {
	const char *dir;
	int ring;     /* watch cache size */
	int fsync;
} mu__store_opts_t;

int mu__store_open(const mu__store_opts_t *o, mu__store_t **out, char *err, size_t errlen);
/* Wakes every waiter with MU_ESTATE from now on. */
void mu__store_shutdown(mu__store_t *st);
void mu__store_close(mu__store_t *st);
int64_t mu__store_rv(mu__store_t *st);
/* The oldest version a watch can start from (older is 410). */
int64_t mu__store_oldest(mu__store_t *st);
/* New reference to the current version, or NULL. */
mu__obj_t *mu__store_get(mu__store_t *st, int rt, const char *ns, const char *name);
/* Number of objects of a type. */
size_t mu__store_count(mu__store_t *st, int rt);

typedef bool (*mu__filter_fn_t)(void *ctx, const mu__obj_t *o);

typedef struct mu__page {
	mu__obj_t **objs;  /* references, in key order */
	size_t n;
	int64_t rv;        /* the store's version when listed */
	char *next;        /* key to continue after, NULL when complete */
	size_t remaining;  /* matching items after this page (when next) */
} mu__page_t;

/* Lists objects of rt in ns (NULL = all namespaces) with key > after (NULL =
 * from the start) that pass filter (NULL = all), at most limit (>= 1) of
 * them.  The filter runs under the store lock and must not block. */
int mu__store_list(mu__store_t *st, int rt, const char *ns, const char *after,
		   size_t limit, mu__filter_fn_t filter, void *fctx, mu__page_t *out);
void mu__page_release(mu__page_t *p);

/* Write transactions.  A mutation callback sees the current version (NULL if
 * absent) and answers one of these, setting *out (owned) for MU__MUT_PUT. */
enum { MU__MUT_KEEP = 0, MU__MUT_PUT = 1, MU__MUT_DEL = 2 };
typedef int (*mu__mut_fn_t)(void *ctx, const mu__obj_t *cur, json_t **out);

typedef struct mu__wtx mu__wtx_t;
#define MU__TX_MAX 256 /* writes in one transaction */

/* Takes the writer lock and opens a transaction. */
int mu__store_begin(mu__store_t *st, mu__wtx_t **out);
/* Runs fn on the current version of rt/ns/name and stages its answer with
 * the next resourceVersion.  *res (may be NULL) gets a reference to the new
 * version (for DEL, the tombstone; for KEEP, the current one).  With dry,
 * nothing is staged.  Returns fn's result or a negative error (fn's own, or
 * MU_ELIMIT after MU__TX_MAX writes, or MU_EIO). */
int mu__store_apply(mu__wtx_t *tx, int rt, const char *ns, const char *name,
		    mu__mut_fn_t fn, void *ctx, bool dry, mu__obj_t **res);
/* Commits, publishes the staged versions to readers and watchers, and drops
 * the writer lock.  On a storage error nothing is published (MU_EIO). */
int mu__store_commit(mu__wtx_t *tx);
/* One-write transaction. */
int mu__store_mutate(mu__store_t *st, int rt, const char *ns, const char *name,
		     mu__mut_fn_t fn, void *ctx, bool dry, mu__obj_t **res);

/* Watch events. */
enum { MU__EV_ADDED = 1, MU__EV_MODIFIED = 2, MU__EV_DELETED = 3 };
typedef struct mu__wev {
	int type;
	mu__obj_t *obj;   /* reference */
	mu__obj_t *prev;  /* reference or NULL: the version before */
} mu__wev_t;

/* Copies up to max events after *cursor into evs (references; release with
 * mu__wev_release), advancing *cursor, waiting up to timeout_ms for one.
 * Returns the count (0 on timeout), MU_ERANGE when *cursor is older than
 * the ring (410 Expired), MU_ESTATE when the store shuts down. */
int mu__store_wait(mu__store_t *st, int64_t *cursor, mu__wev_t *evs, int max,
		   int timeout_ms);
void mu__wev_release(mu__wev_t *evs, int n);

/* --- selectors (selectors.c) -------------------------------------------- */

typedef struct mu__sel mu__sel_t;
/* Parses a label (fields = false) or field selector; NULL or "" matches
 * everything.  On error returns MU_EPARSE and a message. */
int mu__sel_parse(const char *text, bool fields, mu__sel_t **out, char *err, size_t errlen);
void mu__sel_free(mu__sel_t *s);
bool mu__sel_match_labels(const mu__sel_t *s, const mu__obj_t *o);
/* Field selectors: metadata.name and metadata.namespace always, and the
 * type's selectable fields.  Unknown fields were rejected by
 * mu__sel_check_fields(). */
bool mu__sel_match_fields(const mu__sel_t *s, const mu__obj_t *o);
int mu__sel_check_fields(const mu__sel_t *s, const mu__rtype_t *t, char *err, size_t errlen);
/* Matches a label map (JSON object) against a label selector. */
bool mu__sel_match_json(const mu__sel_t *s, const json_t *labels);

/* --- validation (validate.c) -------------------------------------------- */

#define MU__VERR_MAX 16
struct mu__verr {
	int n;
	struct {
		char field[128];
		char reason[32];   /* FieldValueRequired, FieldValueInvalid, ... */
		char msg[256];
	} c[MU__VERR_MAX];
};
void mu__verr_add(mu__verr_t *e, const char *field, const char *reason,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Checks the metadata every object has (name, namespace, labels,
 * annotations) and then the kind's own rules. */
void mu__validate(const mu__rtype_t *t, const json_t *obj, const json_t *old, mu__verr_t *e);
bool mu__valid_dns_label(const char *s);
bool mu__valid_dns_subdomain(const char *s);
/* The type checks behind the registry entries. */
void mu__validate_pod(const json_t *obj, const json_t *old, mu__verr_t *e);
void mu__validate_node(const json_t *obj, const json_t *old, mu__verr_t *e);
void mu__validate_namespace(const json_t *obj, const json_t *old, mu__verr_t *e);
void mu__validate_event(const json_t *obj, const json_t *old, mu__verr_t *e);
void mu__validate_lease(const json_t *obj, const json_t *old, mu__verr_t *e);
void mu__validate_job(const json_t *obj, const json_t *old, mu__verr_t *e);
void mu__validate_queue(const json_t *obj, const json_t *old, mu__verr_t *e);
void mu__validate_podgroup(const json_t *obj, const json_t *old, mu__verr_t *e);
void mu__validate_topology(const json_t *obj, const json_t *old, mu__verr_t *e);
void mu__validate_cluster(const json_t *obj, const json_t *old, mu__verr_t *e);
void mu__validate_nrt(const json_t *obj, const json_t *old, mu__verr_t *e);
void mu__defaults_pod(json_t *obj);
void mu__defaults_job(json_t *obj);
void mu__defaults_namespace(json_t *obj);

/* --- patches (patch.c) -------------------------------------------------- */

/* RFC 7386: applies patch to target in place (target must be an object).
 * Bounded by nesting depth (MU_ELIMIT past 64 levels). */
int mu__merge_patch(json_t *target, const json_t *patch);
/* Strategic merge patch for the built-in kinds: lists of objects merge by
 * their key (containers, env, volumes by name, conditions by type, ...),
 * and the $patch, $setElementOrder, $retainKeys and $deleteFromPrimitiveList
 * directives are understood.  Returns MU_OK, MU_EINVAL (bad directive) or
 * MU_ELIMIT (too deep). */
int mu__strategic_patch(json_t *target, const json_t *patch);
/* Parses a JSON body: at most max bytes, an object, no duplicate keys.
 * Returns the object (caller owns) or NULL with a message. */
json_t *mu__json_body(const char *body, size_t len, size_t max, char *err, size_t errlen);

/* --- requests (request.c) ----------------------------------------------- */

enum {
	MU__R_UNKNOWN = 0,
	MU__R_VERSION,
	MU__R_API,       /* /api */
	MU__R_APIS,      /* /apis */
	MU__R_GROUP,     /* /apis/G */
	MU__R_GV,        /* /api/v1, /apis/G/V */
	MU__R_OPENAPI_V2,
	MU__R_OPENAPI_V3,
	MU__R_HEALTH,    /* /healthz, /readyz, /livez */
	MU__R_RESOURCE,
	MU__R_METRICS,
};

typedef struct mu__route {
	int kind;
	bool watch_prefix;   /* /api/v1/watch/... */
	bool core;
	char group[64], version[16], ns[64], plural[64], name[254], sub[32];
} mu__route_t;

typedef struct mu__query {
	bool watch, bookmarks, send_initial, dry_run;
	bool has_limit, has_rv, has_grace;
	int64_t limit, timeout_s, grace;
	int include_object;  /* 0 Metadata (default), 1 None, 2 Object */
	char cont[1024];
	char label_sel[4096], field_sel[4096];
	char rv[32], rv_match[32], propagation[32];
} mu__query_t;

/* Splits a request target ("/api/v1/pods?limit=5") into route and query,
 * percent-decoding both.  Returns MU_OK or MU_EPARSE with a message. */
int mu__parse_target(const char *target, mu__route_t *r, mu__query_t *q,
		     char *err, size_t errlen);

typedef struct mu__head {
	char start[3][256];   /* request: method, target, version; response:
	                       * version, status, reason */
	int nhdr;
	struct { char name[64]; char value[1024]; } hdr[32];
	size_t head_len;      /* bytes up to and including the blank line */
} mu__head_t;
/* Parses an HTTP/1.x start line and headers from buf.  Returns MU_OK, 1
 * when more bytes are needed, or MU_EPARSE. */
int mu__parse_head(const char *buf, size_t len, mu__head_t *h);
const char *mu__head_get(const mu__head_t *h, const char *name);

enum { MU__CT_JSON = 0, MU__CT_MERGE, MU__CT_STRATEGIC, MU__CT_APPLY, MU__CT_JSONPATCH, MU__CT_YAML, MU__CT_OTHER };
int mu__content_type(const char *ct);
/* Whether an Accept header asks for a meta.k8s.io Table. */
bool mu__accept_table(const char *accept);

/* --- the server (http.c, api.c, discovery.c) ---------------------------- */

typedef struct mu__sim mu__sim_t;
typedef struct mu__jobctl mu__jobctl_t;

struct mu_apiserver {
	mu_apiserver_opts_t o;
	char *listen_host;
	int port;
	mu__store_t *store;
	struct MHD_Daemon *mhd;
	char *tls_cert_pem, *tls_key_pem;
	atomic_int watchers;
	atomic_bool stopping;
	pthread_mutex_t rnd_mu;
	uint64_t rnd;
	pthread_t ctl;
	bool ctl_started;
	mu__sim_t *sim;
	mu__jobctl_t *jc;
};

/* A request, as the handlers see it. */
typedef struct mu__req {
	const char *method;
	mu__route_t route;
	mu__query_t q;
	const char *accept, *ctype;
	const char *body;
	size_t body_len;
} mu__req_t;

/* An answer: a body (owned) or a watch to stream. */
typedef struct mu__watch mu__watch_t;
typedef struct mu__resp {
	int code;
	char *body;
	size_t len;
	const char *ctype;
	mu__watch_t *watch;
} mu__resp_t;

void mu__handle(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs);
/* Fills rs with a Status error (reason is the Kubernetes StatusReason). */
void mu__resp_status(mu__resp_t *rs, int code, const char *reason, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Fills rs with a JSON value (stolen) and code (respond.c). */
void mu__resp_json(mu__resp_t *rs, int code, json_t *v);
/* Discovery and OpenAPI answers (discovery.c); false if not such a path. */
bool mu__discovery(mu_apiserver_t *s, const mu__req_t *rq, mu__resp_t *rs);
/* A meta.k8s.io/v1 Table of objs (respond.c). */
json_t *mu__table(const mu__rtype_t *t, mu__obj_t *const *objs, size_t n,
		  int include_object, bool headers);

/* Watch streaming (watch.c): fills up to max bytes of buf; 0 = end. */
ssize_t mu__watch_read(mu__watch_t *w, char *buf, size_t max);
void mu__watch_free(mu__watch_t *w);
void mu__watch_set_conn(mu__watch_t *w, int fd);

/* The HTTP listener (http.c): starts serving s on addr, sets s->port. */
struct sockaddr_in;
int mu__http_start(mu_apiserver_t *s, const struct sockaddr_in *addr, char *err, size_t errlen);
/* Stops listening and joins every connection thread. */
void mu__http_stop(mu_apiserver_t *s);

/* Random UIDs and name suffixes. */
void mu__uid(mu_apiserver_t *s, char out[37]);
void mu__name_suffix(mu_apiserver_t *s, char out[6]);

/* Creating objects from inside the server (controllers): fills uid,
 * creationTimestamp, defaults; validates.  *res may be NULL. */
int mu__create(mu_apiserver_t *s, mu__wtx_t *tx, int rt, json_t *obj, mu__obj_t **res);
/* Sets (or replaces) status condition `type` of o; lastTransitionTime
 * changes only when the status does.  reason and message may be NULL. */
void mu__set_condition(json_t *o, const char *type, const char *status, const char *reason,
		       const char *message);
/* Deleting (immediately) from inside the server. */
int mu__delete_now(mu__wtx_t *tx, int rt, const char *ns, const char *name);

/* --- controllers -------------------------------------------------------- */

int mu__sim_new(mu_apiserver_t *s, const char *cluster_file, mu__sim_t **out,
		char *err, size_t errlen);
void mu__sim_free(mu__sim_t *sim);
/* Reconciles everything (start and after a missed event). */
void mu__sim_resync(mu__sim_t *sim, int64_t now_ms);
void mu__sim_event(mu__sim_t *sim, const mu__wev_t *ev, int64_t now_ms);
/* Runs due timers and heartbeats; returns ms until the next one. */
int64_t mu__sim_tick(mu__sim_t *sim, int64_t now_ms);

int mu__jobctl_new(mu_apiserver_t *s, mu__jobctl_t **out);
void mu__jobctl_free(mu__jobctl_t *jc);
void mu__jobctl_resync(mu__jobctl_t *jc);
void mu__jobctl_event(mu__jobctl_t *jc, const mu__wev_t *ev);
/* Reconciles the jobs marked by events (and all after a resync). */
void mu__jobctl_sync(mu__jobctl_t *jc);

int64_t mu__mono_ms(void);

#endif
