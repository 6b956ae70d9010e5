/*
 * load_yaml.h - private to the YAML loader (load_yaml*.c).
 *
 * load_yaml.c turns each YAML document into a small tree of mu__ynode_t
 * (scalars, mappings, sequences, each with its line and column) that lives
 * in a per-document arena, then hands the root to the converter of its kind.
 * The converters (load_yaml_kinds.c for Node, NodePool, Queue and Scenario,
 * load_yaml_pod.c for Workload and batch/v1 Job, load_yaml_topo.c for
 * Topology, PriorityClass and the topology parts of other kinds,
 * load_yaml_nrt.c for NodeResourceTopology) read the tree with the
 * typed getters of load_yaml_get.c, which report every problem as
 * "FILE:LINE:COL: field.path: what was wrong", and append specs to the set.
 */
#ifndef MUSTER_LOAD_YAML_H
#define MUSTER_LOAD_YAML_H

#include "load/load_util.h"

/* Bounds that keep absurd inputs from eating memory or time. */
#define MU__Y_MAX_DEPTH 64          /* nesting of mappings and sequences */
#define MU__Y_MAX_NODES 1000000     /* node specs in one set */
#define MU__Y_MAX_PODS 10000000     /* pods over all jobs in one set */
#define MU__Y_MAX_EXT (MU_RES_MAX - MU_RES_NAMED0) /* extended per spec */

typedef enum mu__ytype {
	MU__Y_SCALAR = 0,
	MU__Y_MAP = 1,
	MU__Y_SEQ = 2,
} mu__ytype_t;

typedef struct mu__ynode mu__ynode_t;
struct mu__ynode {
	mu__ytype_t type;
	bool plain;           /* a scalar written without quotes */
	long line, col;       /* 1-based */
	const char *s;        /* scalar text, NUL-terminated ("" otherwise) */
	const char *key;      /* as a mapping value: its key, else NULL */
	size_t idx;           /* as a sequence item: its index */
	mu__ynode_t *parent;  /* NULL for the document root */
	mu__ynode_t *head, *tail, *next; /* children in order, siblings */
	size_t n;             /* number of children */
};

/* The state of one mu_load_yaml() call. */
typedef struct mu__yload {
	const char *file;   /* for messages */
	mu_diag_t *diag;    /* may be NULL */
	mu_specs_t *into;   /* where specs go; strings in into->arena */
	int64_t pods;       /* pods of all jobs in into, for MU__Y_MAX_PODS */
	int64_t pool_labels; /* label entries NodePools made in this load */
} mu__yload_t;

/* --- Errors and shape (load_yaml.c) -------------------------------------- */

/* Reports "FILE:LINE:COL: PATH: msg" for node n, where PATH is n's field
 * path, extended by `.key` when key is not NULL (for a missing field of the
 * mapping n).  Returns err. */
int mu__y_err(mu__yload_t *L, const mu__ynode_t *n, const char *key, int err,
	      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* "a mapping", "a list", "a string", "null": what n is, for messages. */
const char *mu__y_what(const mu__ynode_t *n);

/* True for a null scalar (empty, ~, null) or a NULL pointer. */
bool mu__y_null(const mu__ynode_t *n);
/* The value of key in mapping m, or NULL if absent or null. */
const mu__ynode_t *mu__y_get(const mu__ynode_t *m, const char *key);
/* Checks that n is a mapping / a list / a scalar; reports otherwise. */
int mu__y_want_map(mu__yload_t *L, const mu__ynode_t *n);
int mu__y_want_seq(mu__yload_t *L, const mu__ynode_t *n);
int mu__y_want_scalar(mu__yload_t *L, const mu__ynode_t *n);
/* Looks key up in mapping m and checks its shape; *out is NULL (and MU_OK
 * is returned) when it is absent, unless required. */
int mu__y_map_at(mu__yload_t *L, const mu__ynode_t *m, const char *key,
		 bool required, const mu__ynode_t **out);
int mu__y_seq_at(mu__yload_t *L, const mu__ynode_t *m, const char *key,
		 bool required, const mu__ynode_t **out);

/* Pod affinity and anti-affinity, preferred node affinity and topology
 * spread constraints of mapping m (a pod spec or a Workload pod set) into
 * ps (load_yaml_aff.c). */
int mu__y_pod_affinity(mu__yload_t *L, const mu__ynode_t *m, mu_podset_spec_t *ps);

/* --- Typed scalars (load_yaml_get.c): each reads the scalar n ---------- */

/* A string copied to into->arena. */
int mu__y_str(mu__yload_t *L, const mu__ynode_t *n, const char **out);
/* A string that mu__valid_name() accepts, copied. */
int mu__y_name(mu__yload_t *L, const mu__ynode_t *n, const char **out);
int mu__y_int(mu__yload_t *L, const mu__ynode_t *n, int64_t min, int64_t max,
	      int64_t *out);
int mu__y_bool(mu__yload_t *L, const mu__ynode_t *n, bool *out);
int mu__y_dur(mu__yload_t *L, const mu__ynode_t *n, mu_time_t *out);
/* A finite number in [min, max]. */
int mu__y_num(mu__yload_t *L, const mu__ynode_t *n, double min, double max,
	      double *out);
/* A Kubernetes quantity times scale (mu_quantity_parse). */
int mu__y_qty(mu__yload_t *L, const mu__ynode_t *n, int64_t scale,
	      int64_t *out);

/* The same, for the value of key in mapping m; *out is left alone when the
 * key is absent, unless required (then it is an error). */
int mu__y_str_at(mu__yload_t *L, const mu__ynode_t *m, const char *key,
		 bool required, const char **out);
int mu__y_name_at(mu__yload_t *L, const mu__ynode_t *m, const char *key,
		  bool required, const char **out);
int mu__y_int_at(mu__yload_t *L, const mu__ynode_t *m, const char *key,
		 int64_t min, int64_t max, int64_t *out);
int mu__y_bool_at(mu__yload_t *L, const mu__ynode_t *m, const char *key,
		  bool *out);
int mu__y_dur_at(mu__yload_t *L, const mu__ynode_t *m, const char *key,
		 mu_time_t *out);
/* A preemptionPolicy (n may be NULL: absent, *never left alone): "Never"
 * sets *never, "PreemptLowerPriority" clears it; anything else is an
 * error naming both. */
int mu__y_preemption_policy(mu__yload_t *L, const mu__ynode_t *n, bool *never);
/* A class of service's escalation rule at key of m: boost, reserve or
 * preempt (absent: *out left alone); anything else is an error naming
 * the three. */
int mu__y_escalation_at(mu__yload_t *L, const mu__ynode_t *m, const char *key,
			mu_escalation_t *out);

/* --- Composite values ---------------------------------------------------- */

/* A list of strings (names when `names`), copied; absent = none. */
int mu__y_strs_at(mu__yload_t *L, const mu__ynode_t *m, const char *key,
		  bool names, const char ***out, size_t *nout);
/* A string-to-string mapping as labels, copied; absent = none. */
/* Reads one matchExpressions entry at e into r (strings are L's): the
 * operators of a node selector (node: In, NotIn, Exists, DoesNotExist, Gt,
 * Lt) or of a pod label selector (the first four), with the values each
 * needs.  O(values). */
int mu__y_sel_req(mu__yload_t *L, const mu__ynode_t *e, bool node, mu_sel_req_t *r);
int mu__y_labels_at(mu__yload_t *L, const mu__ynode_t *m, const char *key,
		    mu_label_t **out, size_t *nout);
/* Taints of a Node or NodePool (key and effect required). */
int mu__y_taints_at(mu__yload_t *L, const mu__ynode_t *m, const char *key,
		    mu_taint_t **out, size_t *nout);
/* Appends a late reference (mu_spec_ref_t) of the given kind, noting n's
 * position for messages.  name is copied. */
int mu__y_ref(mu__yload_t *L, const mu__ynode_t *n, mu_spec_ref_kind_t kind,
	      size_t job, const char *name, const mu_node_topo_spec_t *topo);
/* Allocates n zeroed elements of size sz in into->arena (n may be 0);
 * NULL only when out of memory. */
void *mu__y_alloc(mu__yload_t *L, size_t n, size_t sz);
/* Reports "out of memory" and returns MU_ENOMEM. */
int mu__y_oom(mu__yload_t *L);
/* A taint effect name to its mu_taint_effect_t; -1 if unknown. */
int mu__y_effect(const char *s);

/* --- Converters, one per kind: root is the document's mapping ----------- */

int mu__y_node(mu__yload_t *L, const mu__ynode_t *root);
int mu__y_nodepool(mu__yload_t *L, const mu__ynode_t *root);
int mu__y_queue(mu__yload_t *L, const mu__ynode_t *root);
int mu__y_scenario(mu__yload_t *L, const mu__ynode_t *root);
int mu__y_workload(mu__yload_t *L, const mu__ynode_t *root);
int mu__y_job(mu__yload_t *L, const mu__ynode_t *root);
int mu__y_topology(mu__yload_t *L, const mu__ynode_t *root);
int mu__y_priority_class(mu__yload_t *L, const mu__ynode_t *root);
int mu__y_nrt(mu__yload_t *L, const mu__ynode_t *root);
/* A resource.k8s.io/v1beta1 ResourceSlice, DeviceClass, ResourceClaim or
 * ResourceClaimTemplate, kept as JSON in into->dra (load_yaml_dra.c). */
int mu__y_dra(mu__yload_t *L, const mu__ynode_t *root);
/* A pod spec's resourceClaims (each with a name and exactly one of
 * resourceClaimName and resourceClaimTemplateName) as JSON text in the
 * arena at *out. */
int mu__y_pod_claims(mu__yload_t *L, const mu__ynode_t *claims, const char **out);

/* --- Topology parts of other kinds (load_yaml_topo.c) -------------------- */

/* Reads a NodePool's spec.nodeTopology mapping m (NULL: none) for nodes
 * with `gpus` devices into *out, allocated in the arena. */
int mu__y_node_topo(mu__yload_t *L, const mu__ynode_t *m, int64_t gpus,
		    const mu_node_topo_spec_t **out);
/* Reads a Workload's spec.topology mapping m (NULL: none) into *out. */
int mu__y_topo_req(mu__yload_t *L, const mu__ynode_t *m, mu_topo_req_t *out);
/* Reads the muster.io/topology* annotations of a batch/v1 Job (an: the
 * annotations mapping, may be NULL) into *out. */
int mu__y_topo_req_annotations(mu__yload_t *L, const mu__ynode_t *an,
			       mu_topo_req_t *out);
/* Reads an `align` value (none, numa, link) at n. */
int mu__y_align(mu__yload_t *L, const mu__ynode_t *n, mu_align_t *out);

#endif
