/*
 * load_yaml.c - mu_load_yaml(): YAML text to specs.
 *
 * libyaml's event parser drives a small tree builder: every document becomes
 * a tree of mu__ynode_t with line and column on each node, built in an arena
 * of its own and freed once the document has been converted.  Aliases are
 * rejected (so nothing can expand into a billion nodes), nesting is limited
 * to MU__Y_MAX_DEPTH and duplicate keys are errors.  Then the document is
 * dispatched on apiVersion and kind to its converter.  This file also holds
 * the error and field-path helpers the converters share.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "load/load_yaml.h"

/* YAML nodes in one document (about 112 bytes each, so at most ~220 MB);
 * a flow list costs only ~2 input bytes a node. */
#define YB_MAX_TREE 2000000

/* --- Field paths and errors ---------------------------------------------- */

/* Appends printf output to buf[*o..len), truncating safely. */
static void path_app(char *buf, size_t len, size_t *o, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void path_app(char *buf, size_t len, size_t *o, const char *fmt, ...)
{
	if (*o >= len - 1)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *o, len - *o, fmt, ap);
	va_end(ap);
	if (n > 0)
		*o = *o + (size_t)n < len - 1 ? *o + (size_t)n : len - 1;
}

/* Appends one key: ".key", or "[key]" when it has characters other than
 * letters, digits, '-' and '_' (as Kubernetes field paths do). */
static void path_key(char *buf, size_t len, size_t *o, const char *key)
{
	char q[72];
	size_t k = 0;
	bool plain = *key != '\0';
	for (const char *p = key; *p && k < 64; p++) {
		unsigned char c = (unsigned char)*p;
		if (!(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') &&
		    !(c >= '0' && c <= '9') && c != '-' && c != '_')
			plain = false;
		q[k++] = c >= 32 && c < 127 ? (char)c : '?';
	}
	if (key[k] != '\0') {
		q[k++] = '.';
		q[k++] = '.';
	}
	q[k] = '\0';
	if (plain)
		path_app(buf, len, o, "%s%s", *o ? "." : "", q);
	else
		path_app(buf, len, o, "[%s]", q);
}

/* Writes n's path from the document root; recursion depth is the tree
 * depth, at most MU__Y_MAX_DEPTH. */
static void path_of(const mu__ynode_t *n, char *buf, size_t len, size_t *o)
{
	if (!n || !n->parent)
		return;
	path_of(n->parent, buf, len, o);
	if (n->key)
		path_key(buf, len, o, n->key);
	else
		path_app(buf, len, o, "[%zu]", n->idx);
}

int mu__y_err(mu__yload_t *L, const mu__ynode_t *n, const char *key, int err,
	      const char *fmt, ...)
{
	char path[384], msg[640];
	size_t o = 0;
	path[0] = '\0';
	path_of(n, path, sizeof path, &o);
	if (key)
		path_key(path, sizeof path, &o, key);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	long line = n ? n->line : 0, col = n ? n->col : 0;
	if (o == 0)
		return mu__diag(L->diag, err, L->file, line, col, "%s", msg);
	return mu__diag(L->diag, err, L->file, line, col, "%s: %s", path, msg);
}

const char *mu__y_what(const mu__ynode_t *n)
{
	if (mu__y_null(n))
		return "nothing";
	switch (n->type) {
	case MU__Y_MAP: return "a mapping";
	case MU__Y_SEQ: return "a list";
	case MU__Y_SCALAR: break;
	}
	return "a string";
}

/* --- Shape --------------------------------------------------------------- */

bool mu__y_null(const mu__ynode_t *n)
{
	if (!n)
		return true;
	if (n->type != MU__Y_SCALAR || !n->plain)
		return false;
	return !*n->s || !strcmp(n->s, "~") || !strcmp(n->s, "null") ||
	       !strcmp(n->s, "Null") || !strcmp(n->s, "NULL");
}

/* Linear in the mapping's size; keys are unique (checked when built). */
const mu__ynode_t *mu__y_get(const mu__ynode_t *m, const char *key)
{
	if (!m || m->type != MU__Y_MAP)
		return NULL;
	for (const mu__ynode_t *c = m->head; c; c = c->next)
		if (strcmp(c->key, key) == 0)
			return mu__y_null(c) ? NULL : c;
	return NULL;
}

/* Reports "expected WHAT, got ..." for n, quoting a scalar's text. */
static int want_err(mu__yload_t *L, const mu__ynode_t *n, const char *what)
{
	char q[80];
	if (n && n->type == MU__Y_SCALAR && !mu__y_null(n))
		return mu__y_err(L, n, NULL, MU_EPARSE, "expected %s, got %s",
				 what, mu__quote(n->s, q, sizeof q));
	return mu__y_err(L, n, NULL, MU_EPARSE, "expected %s, got %s", what,
			 mu__y_what(n));
}

int mu__y_want_map(mu__yload_t *L, const mu__ynode_t *n)
{
	return n && n->type == MU__Y_MAP ? MU_OK : want_err(L, n, "a mapping");
}

int mu__y_want_seq(mu__yload_t *L, const mu__ynode_t *n)
{
	return n && n->type == MU__Y_SEQ ? MU_OK : want_err(L, n, "a list");
}

int mu__y_want_scalar(mu__yload_t *L, const mu__ynode_t *n)
{
	return n && n->type == MU__Y_SCALAR ? MU_OK : want_err(L, n, "a string");
}

/* Shared by mu__y_map_at and mu__y_seq_at. */
static int typed_at(mu__yload_t *L, const mu__ynode_t *m, const char *key,
		    bool required, mu__ytype_t type, const mu__ynode_t **out)
{
	const mu__ynode_t *v = mu__y_get(m, key);
	*out = NULL;
	if (!v) {
		if (!required)
			return MU_OK;
		return mu__y_err(L, m, key, MU_EPARSE,
				 "required field is missing");
	}
	int rc = type == MU__Y_MAP ? mu__y_want_map(L, v) : mu__y_want_seq(L, v);
	if (rc == MU_OK)
		*out = v;
	return rc;
}

int mu__y_map_at(mu__yload_t *L, const mu__ynode_t *m, const char *key,
		 bool required, const mu__ynode_t **out)
{
	return typed_at(L, m, key, required, MU__Y_MAP, out);
}

int mu__y_seq_at(mu__yload_t *L, const mu__ynode_t *m, const char *key,
		 bool required, const mu__ynode_t **out)
{
	return typed_at(L, m, key, required, MU__Y_SEQ, out);
}

/* --- Tree building ------------------------------------------------------- */

/* The builder's state for one document: the open containers and, for
 * each open mapping, the key waiting for its value. */
typedef struct ybuild {
	mu__yload_t *L;
	mu_arena_t *arena;
	mu__ynode_t *stack[MU__Y_MAX_DEPTH];
	const char *key[MU__Y_MAX_DEPTH]; /* NULL: the next scalar is a key */
	int depth;
	size_t nodes;
	mu__ynode_t *root;
} ybuild_t;

static int yb_oom(ybuild_t *b)
{
	return mu__diag(b->L->diag, MU_ENOMEM, b->L->file, 0, 0, "out of memory");
}

/* Orders mapping entries by key, then by position. */
static int yb_cmp(const void *a, const void *b)
{
	const mu__ynode_t *x = *(const mu__ynode_t *const *)a;
	const mu__ynode_t *y = *(const mu__ynode_t *const *)b;
	int c = strcmp(x->key, y->key);
	if (c)
		return c;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->col < y->col ? -1 : x->col > y->col;
}

/* Checks that no key of mapping m appears twice: sorts pointers to its
 * entries in a temporary array, O(n log n). */
static int yb_check_dups(ybuild_t *b, const mu__ynode_t *m)
{
	if (m->n < 2)
		return MU_OK;
	const mu__ynode_t **v = malloc(m->n * sizeof *v);
	if (!v)
		return yb_oom(b);
	size_t n = 0;
	for (const mu__ynode_t *c = m->head; c; c = c->next)
		v[n++] = c;
	qsort(v, n, sizeof *v, yb_cmp);
	int rc = MU_OK;
	for (size_t i = 1; i < n && rc == MU_OK; i++)
		if (strcmp(v[i - 1]->key, v[i]->key) == 0)
			rc = mu__y_err(b->L, v[i], NULL, MU_EPARSE,
				       "duplicate key (first given at line %ld)",
				       v[i - 1]->line);
	free(v);
	return rc;
}

/* Makes a node for the event and attaches it to the open container (or
 * makes it the root).  A scalar in a mapping that waits for a key becomes
 * that key instead: *out is then NULL. */
static int yb_add(ybuild_t *b, const yaml_event_t *ev, mu__ytype_t type,
		  mu__ynode_t **out)
{
	*out = NULL;
	mu__ynode_t *top = b->depth ? b->stack[b->depth - 1] : NULL;
	const char *s = "";
	if (type == MU__Y_SCALAR) {
		const char *v = (const char *)ev->data.scalar.value;
		size_t len = ev->data.scalar.length;
		if (memchr(v, '\0', len))
			return mu__diag(b->L->diag, MU_EPARSE, b->L->file,
					(long)ev->start_mark.line + 1,
					(long)ev->start_mark.column + 1,
					"a string contains a NUL character");
		if (!(s = mu_arena_strndup(b->arena, v, len)))
			return yb_oom(b);
		if (top && top->type == MU__Y_MAP && !b->key[b->depth - 1]) {
			b->key[b->depth - 1] = s;
			return MU_OK;
		}
	} else if (top && top->type == MU__Y_MAP && !b->key[b->depth - 1]) {
		return mu__diag(b->L->diag, MU_EPARSE, b->L->file,
				(long)ev->start_mark.line + 1,
				(long)ev->start_mark.column + 1,
				"a mapping key must be a string, not %s",
				type == MU__Y_MAP ? "a mapping" : "a list");
	}
	if (++b->nodes > YB_MAX_TREE)
		return mu__diag(b->L->diag, MU_ELIMIT, b->L->file,
				(long)ev->start_mark.line + 1, 0,
				"document too large: more than %d YAML nodes",
				YB_MAX_TREE);
	mu__ynode_t *n = mu_arena_alloc(b->arena, sizeof *n);
	if (!n)
		return yb_oom(b);
	n->type = type;
	n->s = s;
	n->plain = type == MU__Y_SCALAR &&
		   ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	n->line = (long)ev->start_mark.line + 1;
	n->col = (long)ev->start_mark.column + 1;
	if (!top) {
		b->root = n;
	} else {
		n->parent = top;
		if (top->type == MU__Y_MAP) {
			n->key = b->key[b->depth - 1];
			b->key[b->depth - 1] = NULL;
		} else {
			n->idx = top->n;
		}
		if (top->tail)
			top->tail->next = n;
		else
			top->head = n;
		top->tail = n;
		top->n++;
	}
	*out = n;
	return MU_OK;
}

/* Handles one event of a document's body.  Sets *done at the document's
 * end. */
static int yb_event(ybuild_t *b, const yaml_event_t *ev, bool *done)
{
	mu__ynode_t *n;
	int rc;
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		return yb_add(b, ev, MU__Y_SCALAR, &n);
	case YAML_MAPPING_START_EVENT:
	case YAML_SEQUENCE_START_EVENT:
		if (b->depth == MU__Y_MAX_DEPTH)
			return mu__diag(b->L->diag, MU_ELIMIT, b->L->file,
					(long)ev->start_mark.line + 1,
					(long)ev->start_mark.column + 1,
					"nesting deeper than %d levels",
					MU__Y_MAX_DEPTH);
		rc = yb_add(b, ev, ev->type == YAML_MAPPING_START_EVENT ?
			    MU__Y_MAP : MU__Y_SEQ, &n);
		if (rc != MU_OK)
			return rc;
		b->key[b->depth] = NULL;
		b->stack[b->depth++] = n;
		return MU_OK;
	case YAML_MAPPING_END_EVENT:
	case YAML_SEQUENCE_END_EVENT:
		if (b->depth == 0)
			return MU_OK;
		n = b->stack[--b->depth];
		return n->type == MU__Y_MAP ? yb_check_dups(b, n) : MU_OK;
	case YAML_ALIAS_EVENT:
		return mu__diag(b->L->diag, MU_EPARSE, b->L->file,
				(long)ev->start_mark.line + 1,
				(long)ev->start_mark.column + 1,
				"YAML aliases (*name) are not supported; "
				"write the value out");
	case YAML_DOCUMENT_END_EVENT:
		*done = true;
		return MU_OK;
	default:
		return MU_OK;
	}
}

/* --- Parsing and dispatch ------------------------------------------------ */

/* Reports libyaml's error with its position. */
static int yaml_error(mu__yload_t *L, const yaml_parser_t *p, const char *buf,
		      size_t len)
{
	if (p->error == YAML_MEMORY_ERROR)
		return mu__diag(L->diag, MU_ENOMEM, L->file, 0, 0, "out of memory");
	const char *problem = p->problem ? p->problem : "unknown problem";
	if (p->error == YAML_READER_ERROR) {
		/* the reader gives a byte offset, not a line */
		long line = 1, col = 1;
		size_t end = p->problem_offset < len ? p->problem_offset : len;
		for (size_t i = 0; i < end; i++, col++)
			if (buf[i] == '\n') {
				line++;
				col = 0;
			}
		return mu__diag(L->diag, MU_EPARSE, L->file, line, col,
				"invalid YAML text: %s", problem);
	}
	long line = (long)p->problem_mark.line + 1;
	long col = (long)p->problem_mark.column + 1;
	if (p->context)
		return mu__diag(L->diag, MU_EPARSE, L->file, line, col,
				"YAML syntax error: %s (%s at line %ld)", problem,
				p->context, (long)p->context_mark.line + 1);
	return mu__diag(L->diag, MU_EPARSE, L->file, line, col,
			"YAML syntax error: %s", problem);
}

typedef struct ykind {
	const char *kind, *api;
	int (*conv)(mu__yload_t *L, const mu__ynode_t *root);
} ykind_t;

static const ykind_t ykinds[] = {
	{"Node", "v1", mu__y_node},
	{"NodePool", "muster.io/v1alpha1", mu__y_nodepool},
	{"Queue", "muster.io/v1alpha1", mu__y_queue},
	{"Workload", "muster.io/v1alpha1", mu__y_workload},
	{"Job", "batch/v1", mu__y_job},
	{"Scenario", "muster.io/v1alpha1", mu__y_scenario},
	{"Topology", "muster.io/v1alpha1", mu__y_topology},
	{"PriorityClass", "scheduling.k8s.io/v1", mu__y_priority_class},
	{"NodeResourceTopology", "topology.node.k8s.io/v1alpha2", mu__y_nrt},
};

/* Converts one document's tree: skips an empty document, checks the
 * shape of the root, then calls the converter of its kind. */
static int convert_doc(mu__yload_t *L, const mu__ynode_t *root)
{
	if (mu__y_null(root))
		return MU_OK;
	if (root->type != MU__Y_MAP)
		return mu__y_err(L, root, NULL, MU_EPARSE,
				 "a document must be a mapping with apiVersion, "
				 "kind, metadata and spec, not %s",
				 mu__y_what(root));
	const mu__ynode_t *kind = mu__y_get(root, "kind");
	const mu__ynode_t *api = mu__y_get(root, "apiVersion");
	if (!kind)
		return mu__y_err(L, root, NULL, MU_EPARSE,
				 "the document has no kind");
	int rc = mu__y_want_scalar(L, kind);
	if (rc == MU_OK && api)
		rc = mu__y_want_scalar(L, api);
	if (rc != MU_OK)
		return rc;
	const char *av = api ? api->s : "";
	for (size_t i = 0; i < sizeof ykinds / sizeof *ykinds; i++)
		if (!strcmp(kind->s, ykinds[i].kind) && !strcmp(av, ykinds[i].api))
			return ykinds[i].conv(L, root);
	char qk[80], qa[80];
	return mu__diag(L->diag, MU_EINVAL, L->file, kind->line, kind->col,
			 "unknown kind %s (apiVersion %s); expected one of: Node, "
			 "NodePool, Queue, Workload, Job (batch/v1), Scenario, "
			 "Topology, PriorityClass (scheduling.k8s.io/v1), "
			 "NodeResourceTopology (topology.node.k8s.io/v1alpha2)",
			 mu__quote(kind->s, qk, sizeof qk),
			 mu__quote(av, qa, sizeof qa));
}

/* Runs the event loop: builds each document in its own arena, converts
 * it, frees it.  Returns at the first error. */
static int parse_stream(mu__yload_t *L, yaml_parser_t *p, const char *buf,
			size_t len)
{
	for (;;) {
		yaml_event_t ev;
		if (!yaml_parser_parse(p, &ev))
			return yaml_error(L, p, buf, len);
		yaml_event_type_t type = ev.type;
		yaml_event_delete(&ev);
		if (type == YAML_STREAM_END_EVENT)
			return MU_OK;
		if (type != YAML_DOCUMENT_START_EVENT)
			continue;
		mu_arena_t arena;
		mu_arena_init(&arena);
		ybuild_t b = {.L = L, .arena = &arena};
		int rc = MU_OK;
		for (bool done = false; !done && rc == MU_OK;) {
			if (!yaml_parser_parse(p, &ev)) {
				rc = yaml_error(L, p, buf, len);
				break;
			}
			rc = yb_event(&b, &ev, &done);
			yaml_event_delete(&ev);
		}
		if (rc == MU_OK)
			rc = convert_doc(L, b.root);
		mu_arena_release(&arena);
		if (rc != MU_OK)
			return rc;
	}
}

int mu_load_yaml(const char *name, const char *buf, size_t len,
		 mu_specs_t *into, mu_diag_t *diag)
{
	mu__yload_t L = {.file = name ? name : "(yaml)", .diag = diag,
			 .into = into};
	if (!buf && len)
		return mu__diag(diag, MU_EINVAL, L.file, 0, 0, "no buffer");
	for (size_t i = 0; i < into->njobs; i++)
		L.pods += mu_job_spec_pods(&into->jobs[i]);
	yaml_parser_t p;
	if (!yaml_parser_initialize(&p))
		return mu__diag(diag, MU_ENOMEM, L.file, 0, 0, "out of memory");
	yaml_parser_set_input_string(&p, (const unsigned char *)(buf ? buf : ""),
				     len);
	int rc = parse_stream(&L, &p, buf, len);
	yaml_parser_delete(&p);
	return rc;
}
