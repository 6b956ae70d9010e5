/*
 * kube_int.h - the pieces of the Kubernetes daemon and how they share data.
 *
 *   util.c       JSON paths, times, base64, files, structured logs
 *   kubeconfig.c kubeconfig and in-cluster credentials
 *   client.c     the HTTP client over libcurl: one easy handle per thread,
 *                kept alive; requests and streamed watches
 *   reflector.c  list-then-watch threads, one per resource, feeding a
 *                bounded event queue
 *   watchcache.c kube.h's mu_kube_watch_t for other daemons (the hub's):
 *                one watched collection kept as a map, read by snapshot
 *   objects.c    Kubernetes objects to engine specs (pods through a cache
 *                of pod shapes read by the YAML loader, nodes, queues,
 *                topologies, NodeResourceTopologies, Jobs)
 *   state.c      the daemon's view: pods, groups (the engine's jobs), nodes
 *   jobs.c       batch/v1 Job admission and the PodGroup controller
 *   apply.c      decisions to actions; the work queue and its threads
 *   move.c       consolidation: places held for moved pods' replacements
 *   nsel.c       namespaceSelector terms from the Namespaces' labels
 *   daemon.c     the loop; leader.c the lease; metrics.c /metrics
 *   explain.c    `muster kexplain`
 *
 * The daemon uses the engine only through include/muster/engine.h.
 *
 * There is no file-scope mutable state: everything hangs off one daemon
 * object (mu__kd_t), whose parts are guarded as their comments say.
 */
#ifndef MUSTER_KUBE_INT_H
#define MUSTER_KUBE_INT_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "muster/kube.h"
#include "muster/specs.h"
#include "muster/util.h"

/* --- util.c --------------------------------------------------------------- */

/* The value at a dotted path ("metadata.labels"), or NULL.  Keys that
 * contain dots cannot be reached this way: use json_object_get. */
json_t *mu__kj(const json_t *o, const char *path);
/* The string at path, or NULL when absent or not a string. */
const char *mu__kjs(const json_t *o, const char *path);
/* The integer at path, or def. */
int64_t mu__kji(const json_t *o, const char *path, int64_t def);
/* mfstrip.c: cuts the member "managedFields" out of the metadata of the
 * object of a watch event's text s (n bytes, {"object": {"metadata":
 * {...}}}), or of every item of a list's ({"items": [{"metadata": {...}},
 * ...]}), in place, NUL-terminating it; returns the new length, or n with
 * s untouched when there is none or the text is not understood.  One
 * pass, no allocation: what is kept moves down once, O(n) whatever the
 * number of cuts. */
size_t mu__kstrip_mf(char *s, size_t n);
/* The same cut of what `what` names: MU__KSTRIP_MF the metadata's
 * managedFields; MU__KSTRIP_POD_STATUS the members of the object's status
 * that the daemon never reads of a Pod (conditions, containerStatuses,
 * initContainerStatuses, ephemeralContainerStatuses), only for pods. */
#define MU__KSTRIP_MF 1u
#define MU__KSTRIP_POD_STATUS 2u
size_t mu__kstrip(char *s, size_t n, unsigned what);
/* mfstrip.c: a watch event's frame read without parsing it: the type, the
 * object's text, and its metadata's name, namespace and resourceVersion
 * (each a pointer into s and a length; NULL when absent).  true only for
 * exactly {"type": "WORD", "object": {...}} in that order (WORD of A-Z),
 * nothing after it, an object with "metadata" an object and a "name", and
 * those three plain strings (printable ASCII without escapes); anything
 * else is false, for the parser to judge.  The object's text itself is
 * not checked (its members are skipped by their brackets and quotes, its
 * end found from the text's end): its parse does that.  O(bytes of the
 * object's members up to its end), no allocation. */
typedef struct mu__kevent {
	const char *type, *obj, *name, *ns, *rv;
	size_t type_len, obj_len, name_len, ns_len, rv_len;
} mu__kevent_t;
bool mu__kevent_scan(const char *s, size_t n, mu__kevent_t *ev);
/* JSON text written directly (util.c): a growing text, `bad` once memory
 * ran out or a string was not valid UTF-8 (json_pack and json_dumps refuse
 * those too).  Strings are escaped as jansson's json_dumps escapes them
 * (\" \\ \b \f \n \r \t, other control characters \u00XX, UTF-8 as it
 * is); mu__kjt_str writes NULL as null; mu__kjt_sorted writes v byte for
 * byte as json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS) does, O(size of v
 * with its keys sorted); mu__kjt_done gives the text (owned by the
 * caller, its allocation cut to its size), or NULL (freed) when b is bad. */
typedef struct mu__kjt {
	char *s;
	size_t n, cap;
	bool bad;
} mu__kjt_t;
void mu__kjt_put(mu__kjt_t *b, const char *s, size_t n);
void mu__kjt_raw(mu__kjt_t *b, const char *s);
void mu__kjt_str(mu__kjt_t *b, const char *s);
void mu__kjt_strn(mu__kjt_t *b, const char *s, size_t n);
void mu__kjt_sorted(mu__kjt_t *b, const json_t *v);
char *mu__kjt_done(mu__kjt_t *b);
/* A label or annotation value: map[key] as a string, or NULL. */
const char *mu__kmap(const json_t *o, const char *map_path, const char *key);

int64_t mu__k_now_ms(void);  /* wall clock, ms since the epoch */
int64_t mu__k_mono_ms(void); /* monotonic, ms */

/* A pause that a stop ends at once (nap.c): the reflectors' and watch
 * caches' backoff.  mu__knap waits up to ms, until *stop is set and
 * mu__knap_wake is called (every pause on n ends), and returns the waits
 * it made. */
typedef struct mu__knap {
	pthread_mutex_t mu;
	pthread_cond_t cv;
} mu__knap_t;
int mu__knap_init(mu__knap_t *n);
void mu__knap_destroy(mu__knap_t *n);
int mu__knap(mu__knap_t *n, int ms, const atomic_int *stop);
void mu__knap_wake(mu__knap_t *n);
/* RFC 3339 time stamps and base64 are muster/util.h's. */
/* A whole file, NUL-terminated; NULL on error (errno set). */
char *mu__k_readfile(const char *path, size_t *len);

/* Logs: one line per message, text or JSON ("ts", "level", "msg" and
 * key/value pairs given as "k=v" words of fmt's output after " | "). */
typedef struct mu__klog {
	bool json;
	int level;               /* 0 error, 1 info, 2 debug */
	pthread_mutex_t mu;
} mu__klog_t;

void mu__klog(mu__klog_t *l, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* --- ktls.c --------------------------------------------------------------- */

/* A config's PEM data decoded once (mu_kube_config_t.tls): NULL when it
 * has none to decode (insecure, files only) or none decodes (libcurl then
 * reads and refuses it as before).  Owned by the config. */
mu_kube_tls_t *mu__ktls_new(const mu_kube_config_t *cfg);
void mu__ktls_free(mu_kube_tls_t *t);
bool mu__ktls_has_cas(const mu_kube_tls_t *t);   /* the CA part decoded */
bool mu__ktls_has_cert(const mu_kube_tls_t *t);  /* the client pair decoded */
/* The config's libcurl share of TLS sessions (a CURLSH *, for
 * CURLOPT_SHARE), or NULL: each connection of its clients may resume a
 * session another one got.  Owned by t. */
void *mu__ktls_share(const mu_kube_tls_t *t);
/* libcurl's CURLOPT_SSL_CTX_FUNCTION (arg: the mu_kube_tls_t): references
 * to the decoded objects set on one connection's SSL_CTX; a CURLcode.
 * O(certificates). */
int mu__ktls_ctx_fn(void *curl, void *sslctx, void *arg);

/* --- client.c ------------------------------------------------------------- */

/* Credentials shared by every connection: the token is re-read from its
 * file at most once a minute (service-account tokens rotate). */
typedef struct mu__kauth {
	const mu_kube_config_t *cfg;
	pthread_mutex_t mu;
	char *token;             /* current bearer token, owned */
	int64_t read_ms;         /* when token_file was last read */
} mu__kauth_t;

int mu__kauth_init(mu__kauth_t *a, const mu_kube_config_t *cfg);
void mu__kauth_release(mu__kauth_t *a);

typedef struct mu__kc mu__kc_t; /* one connection; one thread at a time */

typedef struct mu__kresp {
	long status;             /* HTTP status; 0 when no answer came */
	char *body;              /* NUL-terminated, owned */
	size_t len;
} mu__kresp_t;

int mu__kc_new(mu__kauth_t *a, mu__kc_t **out);
void mu__kc_free(mu__kc_t *c);
/* One request; the answer is read whole (at most 512 MiB).  MU_EIO when
 * no answer came (out->status 0, out->body has curl's message). */
int mu__kc_do(mu__kc_t *c, const char *method, const char *path,
	      const char *ctype, const char *body, long timeout_ms,
	      mu__kresp_t *out);
/* The same for a write whose answer matters only when it failed: a 2xx
 * answer's body is not kept (out->body is ""), so that nothing is
 * allocated for it. */
int mu__kc_send(mu__kc_t *c, const char *method, const char *path,
		const char *ctype, const char *body, long timeout_ms,
		mu__kresp_t *out);
void mu__kresp_release(mu__kresp_t *r);
/* The same with a JSON answer: *obj gets the parsed body (or NULL). */
int mu__kc_json(mu__kc_t *c, const char *method, const char *path,
		const char *ctype, const char *body, long timeout_ms,
		long *status, json_t **obj);

/* Called for each line of a streamed answer; a non-zero return stops it. */
typedef int (*mu__kline_fn)(void *arg, char *line, size_t len);
/* Streams path (a watch), calling fn per line until the server ends it,
 * fn or *stop asks to stop (checked at least every second), or timeout_ms
 * passes (a negative timeout_ms: no limit on the whole, but -timeout_ms
 * without a byte ends it).  *status gets the HTTP status. */
int mu__kc_stream(mu__kc_t *c, const char *path, long timeout_ms,
		  mu__kline_fn fn, void *arg, atomic_int *stop, long *status);
/* From now on each mu__kc_stream of c calls fn(arg, HTTP status) once its
 * answer's headers are in, before any line (a watch then knows it was
 * answered, even before its first event); fn NULL: no call.  fn runs on
 * the stream's thread and must not block. */
void mu__kc_on_answer(mu__kc_t *c, void (*fn)(void *arg, long status), void *arg);
/* libcurl's words for the last request that got no answer ("" after one
 * that did), owned by c until its next request.  O(1). */
const char *mu__kc_error(const mu__kc_t *c);

/* --- reflector.c ---------------------------------------------------------- */

typedef enum mu__kres {
	MU__KR_NODES = 0,
	MU__KR_NRTS,
	MU__KR_TOPOS,
	MU__KR_QUEUES,
	MU__KR_MPGS,   /* muster.io PodGroups */
	MU__KR_XPGS,   /* scheduling.x-k8s.io PodGroups */
	MU__KR_JOBS,
	MU__KR_PODS,
	MU__KR_POOLS,  /* muster.io NodePools (node pools) */
	MU__KR_PDBS,   /* policy/v1 PodDisruptionBudgets */
	MU__KR_NSS,    /* v1 Namespaces (their labels, nsel.c) */
	MU__KR_PCS,    /* scheduling.k8s.io/v1 PriorityClasses (classes of
	                * service: muster.io/max-wait, muster.io/escalation) */
	MU__KR_WL0,    /* the workload kinds (kinds.c), in mu__kwkind_t order */
	MU__KR_COUNT = MU__KR_WL0 + 8
} mu__kres_t;

/* The collection path of a resource ("/api/v1/pods"). */
const char *mu__kres_path(mu__kres_t r);
const char *mu__kres_name(mu__kres_t r);

typedef enum mu__kevt {
	MU__KE_ADDED = 0,
	MU__KE_MODIFIED,
	MU__KE_DELETED,
	MU__KE_SYNC_BEGIN,  /* a (re-)list starts: objects not seen again... */
	MU__KE_SYNC_ITEM,   /* ...in its items... */
	MU__KE_SYNC_END,    /* ...by its end are gone */
} mu__kevt_t;

typedef struct mu__kev {
	mu__kres_t res;
	mu__kevt_t type;
	json_t *obj;        /* owned reference; NULL for SYNC_BEGIN/END */
} mu__kev_t;

/* A bounded multi-producer queue of events.  Producers block when it is
 * full (back-pressure on the watches), until stop. */
typedef struct mu__kq {
	pthread_mutex_t mu;
	pthread_cond_t nonempty, nonfull;
	mu__kev_t *v;
	size_t cap, head, n;
} mu__kq_t;

int mu__kq_init(mu__kq_t *q, size_t cap);
void mu__kq_release(mu__kq_t *q);
/* Pushes ev (taking its reference); false when stopped first. */
bool mu__kq_push(mu__kq_t *q, mu__kev_t ev, atomic_int *stop);
/* Waits up to wait_ms for events, then moves up to max of them to out;
 * returns how many. */
size_t mu__kq_pop(mu__kq_t *q, mu__kev_t *out, size_t max, int wait_ms);

typedef struct mu__krefl mu__krefl_t;

typedef struct mu__krefl_opts {
	mu__kauth_t *auth;
	mu__kq_t *q;
	atomic_int *stop;
	mu__klog_t *log;
	const char *pod_field_selector; /* e.g. NULL: all pods */
	int resync_s;                   /* full re-list period; 0 = never */
	int page;                       /* list page size (500) */
	atomic_llong *synced_mask;      /* bit per resource, set after its
	                                 * first list */
} mu__krefl_opts_t;

/* Starts one thread per resource. */
int mu__krefl_start(const mu__krefl_opts_t *o, mu__krefl_t **out);
/* Joins them (after *stop was set) and frees. */
void mu__krefl_stop(mu__krefl_t *r);

/* --- objects.c ------------------------------------------------------------ */

/* What a pod's request and constraints read as, shared by every pod whose
 * scheduling-relevant fields are equal (refcounted; owned by the cache). */
typedef struct mu__kshape {
	char *key;              /* the canonical JSON the shape was read from */
	uint64_t hash;
	int32_t refs;
	int err;                /* MU_OK, or why it cannot be read */
	char *msg;              /* the loader's message when err */
	mu_specs_t specs;       /* one job with one pod set */
	struct mu__kshape *next; /* hash chain */
} mu__kshape_t;

typedef struct mu__kshapes {
	mu__kshape_t **tab;
	size_t cap, n;
} mu__kshapes_t;

void mu__kshapes_release(mu__kshapes_t *c);
/* The shape of pod (a core/v1 Pod object), new or shared; one reference
 * for the caller.  With `bound` (a pod another scheduler bound) only its
 * resources count.  NULL only when out of memory. */
mu__kshape_t *mu__kshape_get(mu__kshapes_t *c, const json_t *pod, bool bound);
/* The shape read from its canonical document key (a mu__kshape_t's key,
 * taken: owned by the cache or freed), new or shared; one reference for
 * the caller.  A document that does not load gives a shape with err set.
 * NULL only when out of memory. */
mu__kshape_t *mu__kshape_of_doc(mu__kshapes_t *c, char *key);
void mu__kshape_put(mu__kshapes_t *c, mu__kshape_t *s);
/* The job spec of a shape (podsets[0] is the pod). */
static inline const mu_job_spec_t *mu__kshape_job(const mu__kshape_t *s)
{
	return s->err ? NULL : &s->specs.jobs[0];
}
/* Whether two pod-set specs are the same shape (requests, selectors,
 * tolerations, models, alignment). */
bool mu__kpodset_equal(const mu_podset_spec_t *a, const mu_podset_spec_t *b);
/* Whether a pod of b may take the place held for a pod of a on the same
 * node and devices, whatever CPU, memory and pod count each asks: the
 * same node selector, affinity and tolerations, the same GPU request and
 * its layout (share, GPU memory, models, alignment, NIC, pinned CPUs),
 * the same extended resources, and no terms between pods on b.  Returns
 * NULL when it may, else what differs (a static string).  O(terms). */
const char *mu__kpodset_place_diff(const mu_podset_spec_t *a, const mu_podset_spec_t *b);

/* The scalar facts of a Pod the daemon keeps. */
typedef struct mu__kpodinfo {
	const char *ns, *name, *uid, *node, *scheduler, *phase;
	const char *group_label;   /* muster.io/pod-group */
	const char *xgroup_label;  /* scheduling.x-k8s.io/pod-group */
	const char *queue;         /* muster.io/queue (or kueue's) label */
	const char *pclass;        /* spec.priorityClassName, or NULL */
	const char *owner_job;     /* a controlling batch/v1 Job, or NULL */
	const char *ctrl_kind;     /* the controlling owner's kind, or NULL */
	const char *ctrl_name;     /* ... and its name */
	bool deleting;             /* deletionTimestamp set */
	bool gated;                /* schedulingGates not empty */
	bool terminal;             /* Succeeded or Failed */
	bool failed;               /* Failed */
	int64_t created_ms;        /* creationTimestamp, 0 if none */
	int64_t started_ms;        /* status.startTime, 0 if none */
} mu__kpodinfo_t;

/* Reads the facts of a Pod; the strings point into obj.  MU_EPARSE when
 * it has no name. */
int mu__kpod_info(const json_t *obj, mu__kpodinfo_t *out);

/* A node spec built from a Node (and its NodeResourceTopology, may be
 * NULL), in arena.  A node that is not Ready counts as unschedulable.
 * MU_EPARSE (msg) when a field cannot be read. */
int mu__knode_spec(const json_t *node, const mu_node_topo_spec_t *topo,
		   mu_arena_t *arena, mu_node_spec_t *out, char *msg,
		   size_t len);
/* The part of a Node that matters for scheduling, as canonical JSON (to
 * skip heartbeats that change nothing); owned. */
char *mu__knode_sig(const json_t *node);
/* The Node annotation that carries a MIG layout (src/kube/mig.c). */
#define MU__KNODE_MIG_ANN "muster.io/mig-layout"
/* A new Node holding only the fields the two above read (name, labels,
 * taints, unschedulable, allocatable, capacity, the Ready condition's type
 * and status) and, when present, the MU__KNODE_MIG_ANN annotation that the
 * MIG planner reads, sharing their values with node; both give the same
 * answers on it.  Falls back to a new reference to node itself on out of
 * memory. */
json_t *mu__knode_slim(const json_t *node);
/* mu__knode_slim(node) as compact JSON text with sorted keys (owned), or
 * NULL when out of memory: what the daemon keeps of a Node, and its
 * signature (equal texts read the same). */
char *mu__knode_text(const json_t *node);
/* A Node kept as mu__knode_text() (or NULL) parsed back: a new reference,
 * NULL when text is NULL or out of memory.  O(text). */
json_t *mu__knode_parse(const char *text);
/* Reads a NodeResourceTopology into *out (nic names in arena). */
int mu__knrt_spec(const json_t *nrt, mu_arena_t *arena,
		  mu_node_topo_spec_t *out, char *msg, size_t len);
/* A node topology as the daemon keeps it (mu__knrt_pack): the NUMA
 * nodes it has, not MU_MAX_NUMA of them, and the NIC names after them in
 * one block (about 320 bytes for two NUMA nodes against the spec's 1 KB). */
typedef struct mu__knrt mu__knrt_t;
/* *t packed in one owned block (free() it), or NULL when out of memory.
 * O(NUMA nodes + NIC names). */
mu__knrt_t *mu__knrt_pack(const mu_node_topo_spec_t *t);
/* The spec packed in k, into *out; out's NIC names point into k.  O(1). */
void mu__knrt_unpack(const mu__knrt_t *k, mu_node_topo_spec_t *out);
/* The bytes of k's block.  O(NIC names). */
size_t mu__knrt_bytes(const mu__knrt_t *k);
/* A muster Queue through the cluster-file loader, into specs. */
int mu__kqueue_spec(const json_t *q, mu_specs_t *specs, char *msg,
		    size_t len);
/* A muster NodePool (a selector of nodes) through the loader, into
 * specs (one pool); a node-making NodePool (spec.count) is refused. */
int mu__kpool_spec(const json_t *p, mu_specs_t *specs, char *msg, size_t len);
/* A muster Topology ({levels: [{nodeLabel: KEY}]}) into arena. */
int mu__ktopo_spec(const json_t *t, mu_arena_t *arena,
		   mu_topology_spec_t *out, char *msg, size_t len);
/* A batch/v1 Job through the cluster-file loader, into specs (one job). */
int mu__kjob_spec(const json_t *job, mu_specs_t *specs, char *msg,
		  size_t len);
/* The devices of a bind as annotations: muster.io/gpus ("0,1"),
 * muster.io/gpu-milli, muster.io/numa, muster.io/nic, muster.io/cpus.
 * Returns a new object (empty when there is nothing to say). */
json_t *mu__kdev_annotations(const mu_decision_t *d);
/* Reads them back from a pod's annotations into d's device fields
 * (gpus, gpu_milli, numa, nic, cpus); absent ones stay empty. */
void mu__kdev_parse(const json_t *pod, mu_decision_t *d);

#endif
