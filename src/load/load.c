/*
 * load.c - the front of the loaders: trace options, format dispatch
 * (mu_load_buffer), reading files (mu_load_file), and mu_specs_validate(),
 * the cross-reference checks run once every file is loaded.  Validation
 * also settles what loaders left as late references (mu_spec_ref_t):
 * priorities from PriorityClass documents and NodeResourceTopology
 * documents attached to their nodes, so documents may come in any order.
 *
 * mu_load_buffer() also merges queues: a CSV trace creates the queues it
 * names implicitly (marked auto_created) when they are missing, and when a
 * file loaded later defines a queue of the same name, the automatic one is
 * dropped here, so the order of --cluster and --workload files does not
 * matter.  Every check is O(n) in the specs with hash maps from csv.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "muster/csv.h"
#include "load/load_util.h"

#define LOAD_MAX_FILE ((size_t)1 << 30) /* 1 GiB */

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	if (n < m)
		return false;
	for (size_t i = 0; i < m; i++) {
		char ch = s[n - m + i];
		if (ch >= 'A' && ch <= 'Z')
			ch = (char)(ch - 'A' + 'a');
		if (ch != suffix[i])
			return false;
	}
	return true;
}

/* Drops every auto_created queue that a non-automatic queue of the same
 * name shadows, keeping the order of the rest.  O(queues). */
static int merge_auto_queues(mu_specs_t *s, const char *name, mu_diag_t *diag)
{
	size_t nauto = 0;
	for (size_t i = 0; i < s->nqueues; i++)
		nauto += s->queues[i].auto_created;
	if (nauto == 0 || nauto == s->nqueues)
		return MU_OK;
	mu__namemap_t m;
	mu__namemap_init(&m);
	for (size_t i = 0; i < s->nqueues; i++) {
		const mu_queue_spec_t *q = &s->queues[i];
		if (!q->auto_created && q->name &&
		    mu__namemap_put(&m, q->name, i, NULL) == MU_ENOMEM) {
			mu__namemap_release(&m);
			return mu__diag(diag, MU_ENOMEM, name, 0, 0, "out of memory");
		}
	}
	size_t o = 0, unused;
	for (size_t i = 0; i < s->nqueues; i++) {
		const mu_queue_spec_t *q = &s->queues[i];
		if (q->auto_created && q->name &&
		    mu__namemap_get(&m, q->name, &unused) == MU_OK)
			continue;
		s->queues[o++] = *q;
	}
	s->nqueues = o;
	mu__namemap_release(&m);
	return MU_OK;
}

static bool only_space(const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] != ' ' && buf[i] != '\t' && buf[i] != '\r' &&
		    buf[i] != '\n')
			return false;
	return true;
}

int mu_load_buffer(const char *name, const char *buf, size_t len,
		   const mu_load_opts_t *opts, mu_specs_t *into, mu_diag_t *diag)
{
	int rc;
	if (ends_with(name, ".yaml") || ends_with(name, ".yml"))
		rc = mu_load_yaml(name, buf, len, into, diag);
	else if (ends_with(name, ".csv") || mu__csv_sniff(buf, len))
		rc = mu_load_csv(name, buf, len, opts, into, diag);
	else if (only_space(buf, len))
		rc = mu__diag(diag, MU_EPARSE, name, 0, 0, "empty file: expected "
			      "a .yaml/.yml file or a CSV with one of the "
			      "headers: %s", mu__csv_headers);
	else
		rc = mu__diag(diag, MU_EPARSE, name, 0, 0, "cannot tell the "
			      "format%s: expected a .yaml/.yml file or a CSV with "
			      "one of the headers: %s",
			      len && memchr(buf, '\0', len < 4096 ? len : 4096) ?
			      " (a binary file)" : "", mu__csv_headers);
	return rc == MU_OK ? merge_auto_queues(into, name, diag) : rc;
}

/* Reads all of fd into a NUL-terminated malloc'ed buffer of at most
 * LOAD_MAX_FILE bytes; the caller frees *out. */
static int read_all(int fd, size_t hint, const char *path, char **out,
		    size_t *len, mu_diag_t *diag)
{
	size_t cap = hint + 1 > 4096 ? hint + 1 : 4096, n = 0;
	char *buf = NULL;
	for (;;) {
		if (!buf || n + 1 >= cap) {
			if (buf)
				cap *= 2;
			char *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				return mu__diag(diag, MU_ENOMEM, path, 0, 0,
						"out of memory");
			}
			buf = nb;
		}
		ssize_t got = read(fd, buf + n, cap - 1 - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			char e[128];
			strerror_r(errno, e, sizeof e);
			free(buf);
			return mu__diag(diag, MU_EIO, path, 0, 0,
					"cannot read: %s", e);
		}
		if (got == 0)
			break;
		n += (size_t)got;
		if (n > LOAD_MAX_FILE) {
			free(buf);
			return mu__diag(diag, MU_ELIMIT, path, 0, 0, "file is "
					"larger than 1 GiB");
		}
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return MU_OK;
}

int mu_load_file(const char *path, const mu_load_opts_t *opts,
		 mu_specs_t *into, mu_diag_t *diag)
{
	char e[128];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;
		strerror_r(err, e, sizeof e);
		return mu__diag(diag, err == ENOENT ? MU_ENOENT : MU_EIO, path,
				0, 0, "cannot open: %s", e);
	}
	struct stat st;
	int rc = MU_OK;
	if (fstat(fd, &st) != 0) {
		strerror_r(errno, e, sizeof e);
		rc = mu__diag(diag, MU_EIO, path, 0, 0, "cannot stat: %s", e);
	} else if (S_ISDIR(st.st_mode)) {
		rc = mu__diag(diag, MU_EINVAL, path, 0, 0,
			      "is a directory: expected a file");
	} else if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > LOAD_MAX_FILE) {
		rc = mu__diag(diag, MU_ELIMIT, path, 0, 0,
			      "file is larger than 1 GiB");
	}
	char *buf = NULL;
	size_t len = 0;
	if (rc == MU_OK)
		rc = read_all(fd, S_ISREG(st.st_mode) ? (size_t)st.st_size : 0,
			      path, &buf, &len, diag);
	close(fd);
	if (rc == MU_OK)
		rc = mu_load_buffer(path, buf, len, opts, into, diag);
	free(buf);
	return rc;
}

/* --- mu_specs_validate ----------------------------------------------------- */

static int vdiag(mu_diag_t *diag, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Fills diag with a message that names objects, not a file. */
static int vdiag(mu_diag_t *diag, int err, const char *fmt, ...)
{
	if (diag) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(diag->msg, sizeof diag->msg, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* "defined queues: a, b, c" (shortened to fit len), or "no queues are
 * defined". */
static const char *queue_list(const mu_specs_t *s, char *buf, size_t len)
{
	if (s->nqueues == 0) {
		snprintf(buf, len, "no queues are defined");
		return buf;
	}
	size_t o = (size_t)snprintf(buf, len, "defined queues: ");
	for (size_t i = 0; i < s->nqueues; i++) {
		const char *n = s->queues[i].name ? s->queues[i].name : "?";
		if (o + strlen(n) + 8 >= len) {
			snprintf(buf + o, len - o, "...");
			break;
		}
		o += (size_t)snprintf(buf + o, len - o, "%s%s", n,
				      i + 1 < s->nqueues ? ", " : "");
	}
	return buf;
}

/* Puts names[i] (stride apart in an array of structs) into m, failing on a
 * missing or repeated name.  O(n). */
static int index_names(const void *base, size_t n, size_t stride,
		       const char *what, mu__namemap_t *m, mu_diag_t *diag)
{
	for (size_t i = 0; i < n; i++) {
		const char *name = *(const char *const *)
			((const char *)base + i * stride);
		if (!name)
			return vdiag(diag, MU_EINVAL, "%s #%zu has no name", what,
				     i + 1);
		int rc = mu__namemap_put(m, name, i, NULL);
		if (rc == MU_ENOMEM)
			return vdiag(diag, rc, "out of memory");
		if (rc == MU_EEXIST)
			return vdiag(diag, rc, "%s \"%s\" is defined twice", what,
				     name);
	}
	return MU_OK;
}

/* Writes "a -> b -> a" for the cycle through queue k into buf. */
static void cycle_text(const mu_specs_t *s, const mu__namemap_t *qm, size_t k,
		       char *buf, size_t len)
{
	size_t o = 0, i = k;
	buf[0] = '\0';
	do {
		int n = snprintf(buf + o, len - o, "%s -> ", s->queues[i].name);
		if (n < 0 || (size_t)n + 4 >= len - o) {
			snprintf(buf + o, len - o, "...");
			return;
		}
		o += (size_t)n;
		if (mu__namemap_get(qm, s->queues[i].parent, &i) != MU_OK)
			return;
	} while (i != k);
	snprintf(buf + o, len - o, "%s", s->queues[k].name);
}

/* Every parent exists and no queue is its own ancestor.  Each queue is
 * walked once (state: 0 new, 1 on the current walk, 2 done): O(queues). */
static int check_parents(const mu_specs_t *s, const mu__namemap_t *qm,
			 mu_diag_t *diag)
{
	char list[600];
	for (size_t i = 0; i < s->nqueues; i++) {
		const mu_queue_spec_t *q = &s->queues[i];
		size_t p;
		if (q->parent && mu__namemap_get(qm, q->parent, &p) != MU_OK)
			return vdiag(diag, MU_ENOENT, "queue \"%s\": parent \"%s\" "
				     "is not defined; %s", q->name, q->parent,
				     queue_list(s, list, sizeof list));
	}
	unsigned char *state = calloc(s->nqueues ? s->nqueues : 1, 1);
	if (!state)
		return vdiag(diag, MU_ENOMEM, "out of memory");
	int rc = MU_OK;
	for (size_t i = 0; i < s->nqueues && rc == MU_OK; i++) {
		size_t k = i;
		while (state[k] == 0) {
			state[k] = 1;
			if (!s->queues[k].parent)
				break;
			mu__namemap_get(qm, s->queues[k].parent, &k);
		}
		if (state[k] == 1 && s->queues[k].parent) {
			cycle_text(s, qm, k, list, sizeof list);
			rc = vdiag(diag, MU_EINVAL, "queue \"%s\": its parents "
				   "form a cycle: %s", s->queues[k].name, list);
		}
		for (k = i; state[k] == 1; ) {
			state[k] = 2;
			if (!s->queues[k].parent)
				break;
			mu__namemap_get(qm, s->queues[k].parent, &k);
		}
	}
	free(state);
	return rc;
}

/* Every job's queue exists. */
static int check_job_queues(const mu_specs_t *s, const mu__namemap_t *qm,
			    mu_diag_t *diag)
{
	char list[600];
	size_t unused;
	for (size_t i = 0; i < s->njobs; i++) {
		const mu_job_spec_t *j = &s->jobs[i];
		if (!j->queue)
			return vdiag(diag, MU_EINVAL, "job \"%s\": no queue", j->name);
		if (mu__namemap_get(qm, j->queue, &unused) != MU_OK)
			return vdiag(diag, MU_ENOENT, "job \"%s\": queue \"%s\" is "
				     "not defined; %s", j->name, j->queue,
				     queue_list(s, list, sizeof list));
	}
	return MU_OK;
}

/* Fails unless every names[i] is in m. */
static int check_refs(const char *const *names, size_t n, const mu__namemap_t *m,
		      size_t step, const char *field, const char *what,
		      mu_diag_t *diag)
{
	size_t unused;
	for (size_t i = 0; i < n; i++)
		if (!names[i] || mu__namemap_get(m, names[i], &unused) != MU_OK)
			return vdiag(diag, MU_ENOENT, "scenario step %zu: %s: %s "
				     "\"%s\" is not defined", step, field, what,
				     names[i] ? names[i] : "");
	return MU_OK;
}

/* Every job and node that a scenario step names exists. */
static int check_scenario(const mu_scenario_spec_t *sc, const mu__namemap_t *nm,
			  const mu__namemap_t *jm, mu_diag_t *diag)
{
	for (size_t i = 0; sc && i < sc->nsteps; i++) {
		const mu_scenario_step_t *st = &sc->steps[i];
		int rc = check_refs(st->finish, st->nfinish, jm, i + 1, "finish",
				    "job", diag);
		if (rc == MU_OK)
			rc = check_refs(st->remove_nodes, st->nremove_nodes, nm,
					i + 1, "removeNodes", "node", diag);
		if (rc == MU_OK)
			rc = check_refs(st->budget_jobs, st->nbudgets, jm, i + 1,
					"disruptionsAllowed", "job", diag);
		for (size_t k = 0; rc == MU_OK && k < st->nexpect; k++) {
			const mu_expect_job_t *e = &st->expect[k];
			rc = check_refs(&e->job, 1, jm, i + 1, "expect", "job",
					diag);
			if (rc == MU_OK)
				rc = check_refs(e->nodes, e->nnodes, nm, i + 1,
						"expect nodes", "node", diag);
			if (rc == MU_OK)
				rc = check_refs(e->devnodes, e->ndevices, nm,
						i + 1, "expect devices", "node",
						diag);
		}
		if (rc != MU_OK)
			return rc;
	}
	return MU_OK;
}

/* --- Late references: priority classes, node topologies ------------------ */

/* "defined WHAT: a, b, c" from names[i] (stride apart), shortened to fit
 * len, or "no WHAT are defined". */
static const char *name_list(const void *base, size_t n, size_t stride,
			     const char *what, char *buf, size_t len)
{
	if (n == 0) {
		snprintf(buf, len, "no %s are defined", what);
		return buf;
	}
	size_t o = (size_t)snprintf(buf, len, "defined %s: ", what);
	for (size_t i = 0; i < n && o < len; i++) {
		const char *nm = *(const char *const *)
			((const char *)base + i * stride);
		if (o + strlen(nm) + 8 >= len) {
			snprintf(buf + o, len - o, "...");
			break;
		}
		o += (size_t)snprintf(buf + o, len - o, "%s%s", nm,
				      i + 1 < n ? ", " : "");
	}
	return buf;
}

/* The globalDefault priority class, or NULL; two of them are an error. */
static int global_default(const mu_specs_t *s,
			  const mu_priority_class_spec_t **out, mu_diag_t *diag)
{
	*out = NULL;
	for (size_t i = 0; i < s->npclasses; i++) {
		if (!s->pclasses[i].global_default)
			continue;
		if (*out)
			return vdiag(diag, MU_EINVAL, "priority classes \"%s\" "
				     "and \"%s\" are both globalDefault; at "
				     "most one may be", (*out)->name,
				     s->pclasses[i].name);
		*out = &s->pclasses[i];
	}
	return MU_OK;
}

/* Sets a job's priority from its reference r. */
static int resolve_priority(mu_specs_t *s, const mu_spec_ref_t *r,
			    const mu__namemap_t *pm,
			    const mu_priority_class_spec_t *def,
			    mu_diag_t *diag)
{
	size_t k;
	char list[600];
	if (r->job >= s->njobs)
		return vdiag(diag, MU_EINVAL, "%s: a priority reference names "
			     "no job", r->where);
	mu_job_spec_t *j = &s->jobs[r->job];
	if (!r->name) {
		if (def) {
			j->priority = def->value;
			j->never_preempt |= def->never_preempt;
			if (!j->max_wait)
				j->max_wait = def->max_wait;
			if (!j->escalation)
				j->escalation = def->escalation;
		}
		return MU_OK;
	}
	if (mu__namemap_get(pm, r->name, &k) != MU_OK)
		return vdiag(diag, MU_ENOENT, "%s: job \"%s\": priority class "
			     "\"%s\" is not defined (kind: PriorityClass, "
			     "apiVersion: scheduling.k8s.io/v1); %s", r->where,
			     j->name, r->name,
			     name_list(s->pclasses, s->npclasses,
				       sizeof *s->pclasses, "priority classes",
				       list, sizeof list));
	j->priority = s->pclasses[k].value;
	j->never_preempt |= s->pclasses[k].never_preempt;
	if (!j->max_wait) /* the class's class of service */
		j->max_wait = s->pclasses[k].max_wait;
	if (!j->escalation)
		j->escalation = s->pclasses[k].escalation;
	return MU_OK;
}

/* Attaches a NodeResourceTopology to its node; seen holds the nodes that
 * already got one in this pass. */
static int resolve_node_topo(mu_specs_t *s, const mu_spec_ref_t *r,
			     const mu__namemap_t *nm, mu__namemap_t *seen,
			     mu_diag_t *diag)
{
	size_t k;
	if (!r->name || !r->topo || mu__namemap_get(nm, r->name, &k) != MU_OK)
		return vdiag(diag, MU_ENOENT, "%s: NodeResourceTopology \"%s\": "
			     "no node of that name is defined (a Node, or a "
			     "node of a NodePool)", r->where,
			     r->name ? r->name : "");
	int rc = mu__namemap_put(seen, r->name, k, NULL);
	if (rc == MU_EEXIST)
		return vdiag(diag, rc, "%s: NodeResourceTopology \"%s\" is "
			     "given twice", r->where, r->name);
	if (rc)
		return vdiag(diag, rc, "out of memory");
	mu_node_spec_t *n = &s->nodes[k];
	int64_t gpus = 0;
	for (int g = 0; g < MU_MAX_GPUS; g++)
		gpus += r->topo->gpu_numa[g] >= 0;
	if (gpus && gpus != n->alloc.v[MU_RES_GPU])
		return vdiag(diag, MU_EINVAL, "%s: NodeResourceTopology \"%s\" "
			     "lists %lld GPUs, but the node has %lld",
			     r->where, r->name, (long long)gpus,
			     (long long)n->alloc.v[MU_RES_GPU]);
	n->topo = r->topo;
	return MU_OK;
}

/* Settles every late reference.  O(refs) with the maps. */
static int resolve_refs(mu_specs_t *s, const mu__namemap_t *nm,
			const mu__namemap_t *pm, mu_diag_t *diag)
{
	const mu_priority_class_spec_t *def;
	mu__namemap_t seen;
	int rc = global_default(s, &def, diag);
	mu__namemap_init(&seen);
	for (size_t i = 0; i < s->nrefs && rc == MU_OK; i++) {
		const mu_spec_ref_t *r = &s->refs[i];
		if (r->kind == MU_REF_PRIORITY)
			rc = resolve_priority(s, r, pm, def, diag);
		else
			rc = resolve_node_topo(s, r, nm, &seen, diag);
	}
	mu__namemap_release(&seen);
	return rc;
}

/* The index of level key in t, or -1. */
static int level_of(const mu_topology_spec_t *t, const char *key)
{
	for (size_t l = 0; key && l < t->nlevels; l++)
		if (!strcmp(t->levels[l], key))
			return (int)l;
	return -1;
}

/* Checks one level key of job j's request against topology t. */
static int check_level(const mu_job_spec_t *j, const mu_topology_spec_t *t,
		       const char *what, const char *key, int *out,
		       mu_diag_t *diag)
{
	char list[600];
	*out = level_of(t, key);
	if (!key || *out >= 0)
		return MU_OK;
	return vdiag(diag, MU_ENOENT, "job \"%s\": topology %s level \"%s\" "
		     "is not a level of topology \"%s\"; %s", j->name,
		     what, key, t->name,
		     name_list(t->levels, t->nlevels, sizeof *t->levels,
			       "levels", list, sizeof list));
}

/* Every job's topology request names a defined topology (the first one
 * when it names none) and levels of it, with slices inside the required
 * level.  O(jobs x levels) with the map. */
static int check_job_topo(const mu_specs_t *s, const mu__namemap_t *tm,
			  mu_diag_t *diag)
{
	char list[600];
	for (size_t i = 0; i < s->njobs; i++) {
		const mu_job_spec_t *j = &s->jobs[i];
		const mu_topo_req_t *q = &j->topo;
		size_t k = 0;
		if (!q->topology && !q->required && !q->preferred &&
		    q->slice_size <= 0)
			continue;
		if (q->topology ? mu__namemap_get(tm, q->topology, &k) != MU_OK :
				  s->ntopologies == 0)
			return vdiag(diag, MU_ENOENT, "job \"%s\": topology "
				     "\"%s\" is not defined (kind: Topology); %s",
				     j->name, q->topology ? q->topology :
				     "(the default, the first one defined)",
				     name_list(s->topologies, s->ntopologies,
					       sizeof *s->topologies,
					       "topologies", list, sizeof list));
		const mu_topology_spec_t *t = &s->topologies[k];
		int req, pref, slice;
		int rc = check_level(j, t, "required", q->required, &req, diag);
		if (rc == MU_OK)
			rc = check_level(j, t, "preferred", q->preferred, &pref,
					 diag);
		if (rc == MU_OK)
			rc = check_level(j, t, "slice", q->slice_level, &slice,
					 diag);
		if (rc == MU_OK && q->slice_level && slice < req)
			rc = vdiag(diag, MU_EINVAL, "job \"%s\": the slice level "
				   "\"%s\" is outside the required level "
				   "\"%s\"; a slice must fit inside the gang's "
				   "domain", j->name, q->slice_level,
				   q->required);
		if (rc != MU_OK)
			return rc;
	}
	return MU_OK;
}

/* The value of node nd's label key, or NULL when it has none. */
static const char *node_label(const mu_node_spec_t *nd, const char *key)
{
	for (size_t l = 0; l < nd->nlabels; l++)
		if (!strcmp(nd->labels[l].key, key))
			return nd->labels[l].value ? nd->labels[l].value : "";
	return NULL;
}

/* Whether pool p's selector (matchLabels and matchExpressions) holds nd,
 * as the engine's membership rule.  O(requirements x labels). */
static bool pool_holds(const mu_pool_spec_t *p, const mu_node_spec_t *nd)
{
	for (size_t m = 0; m < p->nmatch; m++) {
		const char *v = node_label(nd, p->match[m].key);
		if (!v || strcmp(v, p->match[m].value ? p->match[m].value : ""))
			return false;
	}
	for (size_t i = 0; i < p->nexprs; i++) {
		const mu_sel_req_t *r = &p->exprs[i];
		const char *v = node_label(nd, r->key);
		bool in = false;
		for (size_t k = 0; v && k < r->nvalues && !in; k++)
			in = !strcmp(v, r->values[k]);
		bool ok = r->op == MU_SEL_IN ? in : r->op == MU_SEL_NOT_IN ? !in :
			  r->op == MU_SEL_EXISTS ? v != NULL : v == NULL;
		if (!ok)
			return false;
	}
	return true;
}

/* Every pool a queue or a job names is defined (a NodePool with a
 * selector), and every pool name is unique. */
static int check_pools(const mu_specs_t *s, mu_diag_t *diag)
{
	char list[600];
	for (size_t i = 0; i < s->npools; i++)
		for (size_t k = 0; k < i; k++)
			if (!strcmp(s->pools[i].name, s->pools[k].name))
				return vdiag(diag, MU_EEXIST, "pool \"%s\" is "
					     "defined twice", s->pools[i].name);
	for (size_t n = 0; s->npools > 1 && n < s->nnodes; n++) {
		const mu_node_spec_t *nd = &s->nodes[n];
		const char *first = NULL;
		for (size_t p = 0; p < s->npools; p++) {
			if (!pool_holds(&s->pools[p], nd))
				continue;
			if (first)
				return vdiag(diag, MU_EINVAL, "node \"%s\" is in two pools, "
					     "\"%s\" and \"%s\": every node is in at most "
					     "one (make their selectors disjoint)", nd->name,
					     first, s->pools[p].name);
			first = s->pools[p].name;
		}
	}
	for (size_t i = 0; i < s->nqueues + s->njobs; i++) {
		bool isq = i < s->nqueues;
		const mu_queue_spec_t *q = isq ? &s->queues[i] : NULL;
		const mu_job_spec_t *j = isq ? NULL : &s->jobs[i - s->nqueues];
		size_t n = isq ? q->npools : j->npools;
		for (size_t k = 0; k < n; k++) {
			const char *name = isq ? q->pools[k].pool : j->pools[k];
			size_t p = 0;
			while (p < s->npools && strcmp(s->pools[p].name, name))
				p++;
			if (p < s->npools)
				continue;
			return vdiag(diag, MU_ENOENT, "%s \"%s\": pool \"%s\" is "
				     "not defined (kind: NodePool with "
				     "spec.selector); %s", isq ? "queue" : "job",
				     isq ? q->name : j->name, name,
				     name_list(s->pools, s->npools, sizeof *s->pools,
					       "pools", list, sizeof list));
		}
	}
	return MU_OK;
}

int mu_specs_validate(mu_specs_t *s, mu_diag_t *diag)
{
	mu__namemap_t nm, qm, jm, tm, pm;
	mu__namemap_init(&nm);
	mu__namemap_init(&qm);
	mu__namemap_init(&jm);
	mu__namemap_init(&tm);
	mu__namemap_init(&pm);
	int rc = index_names(s->nodes, s->nnodes, sizeof *s->nodes, "node", &nm,
			     diag);
	if (rc == MU_OK)
		rc = index_names(s->queues, s->nqueues, sizeof *s->queues,
				 "queue", &qm, diag);
	if (rc == MU_OK)
		rc = index_names(s->jobs, s->njobs, sizeof *s->jobs, "job", &jm,
				 diag);
	if (rc == MU_OK)
		rc = index_names(s->topologies, s->ntopologies,
				 sizeof *s->topologies, "topology", &tm, diag);
	if (rc == MU_OK)
		rc = index_names(s->pclasses, s->npclasses, sizeof *s->pclasses,
				 "priority class", &pm, diag);
	if (rc == MU_OK)
		rc = resolve_refs(s, &nm, &pm, diag);
	if (rc == MU_OK)
		rc = check_parents(s, &qm, diag);
	if (rc == MU_OK)
		rc = check_job_queues(s, &qm, diag);
	if (rc == MU_OK)
		rc = check_job_topo(s, &tm, diag);
	if (rc == MU_OK)
		rc = check_pools(s, diag);
	if (rc == MU_OK)
		rc = check_scenario(s->scenario, &nm, &jm, diag);
	mu__namemap_release(&nm);
	mu__namemap_release(&qm);
	mu__namemap_release(&jm);
	mu__namemap_release(&tm);
	mu__namemap_release(&pm);
	return rc;
}
