/*
 * load.c - the front of the loaders: trace options, format dispatch
 * (mu_load_buffer), reading files (mu_load_file), and mu_specs_validate(),
 * the cross-reference checks run once every file is loaded.
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

#include "sim/csv.h"
#include "sim/load_util.h"

#define LOAD_MAX_FILE ((size_t)1 << 30) /* 1 GiB */

void mu_load_opts_defaults(mu_load_opts_t *o)
{
	memset(o, 0, sizeof *o);
	o->gpus_per_node = 8;
}

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
		for (size_t k = 0; rc == MU_OK && k < st->nexpect; k++) {
			const mu_expect_job_t *e = &st->expect[k];
			rc = check_refs(&e->job, 1, jm, i + 1, "expect", "job",
					diag);
			if (rc == MU_OK)
				rc = check_refs(e->nodes, e->nnodes, nm, i + 1,
						"expect nodes", "node", diag);
		}
		if (rc != MU_OK)
			return rc;
	}
	return MU_OK;
}

int mu_specs_validate(const mu_specs_t *s, mu_diag_t *diag)
{
	mu__namemap_t nm, qm, jm;
	mu__namemap_init(&nm);
	mu__namemap_init(&qm);
	mu__namemap_init(&jm);
	int rc = index_names(s->nodes, s->nnodes, sizeof *s->nodes, "node", &nm,
			     diag);
	if (rc == MU_OK)
		rc = index_names(s->queues, s->nqueues, sizeof *s->queues,
				 "queue", &qm, diag);
	if (rc == MU_OK)
		rc = index_names(s->jobs, s->njobs, sizeof *s->jobs, "job", &jm,
				 diag);
	if (rc == MU_OK)
		rc = check_parents(s, &qm, diag);
	if (rc == MU_OK)
		rc = check_job_queues(s, &qm, diag);
	if (rc == MU_OK)
		rc = check_scenario(s->scenario, &nm, &jm, diag);
	mu__namemap_release(&nm);
	mu__namemap_release(&qm);
	mu__namemap_release(&jm);
	return rc;
}
