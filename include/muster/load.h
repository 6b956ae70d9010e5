/*
 * load.h - loaders for cluster and workload files.
 *
 * Formats (documented in docs/formats.md):
 *   - YAML: Kubernetes-style documents.  core/v1 Node, muster.io/v1alpha1
 *     NodePool, Queue, Workload, Topology and Scenario, batch/v1 Job with
 *     muster's labels and annotations, scheduling.k8s.io/v1 PriorityClass
 *     and topology.node.k8s.io/v1alpha2 NodeResourceTopology.
 *   - CSV: muster's compact trace, the openb node and pod lists, and the
 *     Philly trace, told apart by their header line.
 *
 * Loaders parse buffers and never exit.  On error they return a negative
 * mu_err_t and fill a mu_diag_t with "FILE:LINE[:COL]: what was wrong and
 * what was expected".
 */
#ifndef MUSTER_LOAD_H
#define MUSTER_LOAD_H

#include "muster/error.h"
#include "muster/specs.h"

/* Options that change how traces are turned into jobs. */
typedef struct mu_load_opts {
	/* Philly: GPUs per node when splitting gangs into pods (default 8). */
	int32_t gpus_per_node;
	/* Philly: only rows with submit in [from, to) seconds after the first
	 * row are kept; to <= 0 means no end. */
	int64_t from_s, to_s;
	/* Philly: keep at most this many jobs; 0 = all. */
	int64_t max_jobs;
} mu_load_opts_t;

void mu_load_opts_defaults(mu_load_opts_t *o);

/* Detects the format from the name and content and appends what it finds
 * to `into`.  opts may be NULL. */
int mu_load_buffer(const char *name, const char *buf, size_t len,
		   const mu_load_opts_t *opts, mu_specs_t *into, mu_diag_t *diag);

/* Reads a file and calls mu_load_buffer(). */
int mu_load_file(const char *path, const mu_load_opts_t *opts, mu_specs_t *into,
		 mu_diag_t *diag);

/* The specific loaders behind mu_load_buffer(). */
int mu_load_yaml(const char *name, const char *buf, size_t len,
		 mu_specs_t *into, mu_diag_t *diag);
/* The same as mu_load_yaml() of json_dumps(doc)'s compact text, without
 * writing or scanning it: a document's nodes are built from doc (a
 * jansson json_t) directly.  Errors are the same, but their line and
 * column are not the text's (1:1): read a message from mu_load_yaml()
 * when it matters. */
struct json_t;
int mu_load_json(const char *name, const struct json_t *doc, mu_specs_t *into, mu_diag_t *diag);
int mu_load_csv(const char *name, const char *buf, size_t len,
		const mu_load_opts_t *opts, mu_specs_t *into, mu_diag_t *diag);

/* Settles and checks cross references once everything is loaded: names
 * are unique (nodes, queues, jobs, topologies, priority classes); every
 * job's queue and every queue's parent exist; jobs that name a priority
 * class get its value (and jobs that give no priority the globalDefault
 * class's, when there is one); NodeResourceTopology documents are attached
 * to their nodes; every topology request names a defined topology and its
 * levels; scenario steps name defined jobs and nodes.  Settling is
 * idempotent, so validating again after loading more is fine. */
int mu_specs_validate(mu_specs_t *s, mu_diag_t *diag);

/* --- Device strings of scenario expectations (docs/scenarios.md) --------
 * "NODE:gpus=0-1;numa=0;nic=0;cpus=0-3": a bound pod's node, GPU devices,
 * NUMA node, NIC index and pinned CPUs.  The canonical form lists the
 * fields in that order, leaves out the empty ones (no GPUs, numa or nic
 * -1, no CPUs) and the ':' when none is left, and writes sets as
 * cpulists. */
#define MU__DEVSTR_MAX 4096 /* room for any canonical device string */

/* Writes the canonical string into buf (always NUL-terminated). */
void mu__devstr_format(const char *node, uint64_t gpus, int numa, int nic,
		       const mu_cpuset_t *cpus, char *buf, size_t len);
/* Reads s (fields in any order, each at most once; GPU and CPU sets as
 * cpulists) and writes its canonical form into buf; *node_len gets the
 * length of the node part.  MU_EPARSE or MU_ERANGE with *why naming the
 * problem. */
int mu__devstr_norm(const char *s, char *buf, size_t len, size_t *node_len,
		    const char **why);

#endif
