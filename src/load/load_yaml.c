/*
 * load_yaml.c - mu_load_yaml(): YAML text to specs.
 *
 * libyaml's event parser drives a small tree builder: every document becomes
 * a tree of mu__ynode_t with line and column on each node, built in an arena
 * of its own and freed once the document has been converted.  Aliases are
 * rejected (so nothing can expand into a billion nodes), nesting is limited
 * to MU__Y_MAX_DEPTH and duplicate keys are errors.  Then the document is
 * dispatched on apiVersion and kind to its converter.  The error, field-path
 * and shape helpers the converters share are in load_yaml_get.c.
 * mu_load_json() builds the same tree from a jansson document instead of
 * its text (no YAML scan): what the dispatcher reads each hub Job with.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <yaml.h>

#include "load/load_yaml.h"

/* YAML nodes in one document (about 112 bytes each, so at most ~220 MB);
 * a flow list costs only ~2 input bytes a node. */
#define YB_MAX_TREE 2000000

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
	{"ResourceSlice", "resource.k8s.io/v1beta1", mu__y_dra},
	{"DeviceClass", "resource.k8s.io/v1beta1", mu__y_dra},
	{"ResourceClaim", "resource.k8s.io/v1beta1", mu__y_dra},
	{"ResourceClaimTemplate", "resource.k8s.io/v1beta1", mu__y_dra},
	{"DeviceTaintRule", "resource.k8s.io/v1alpha3", mu__y_dra},
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
			 "NodeResourceTopology (topology.node.k8s.io/v1alpha2), "
			 "ResourceSlice, DeviceClass, ResourceClaim, "
			 "ResourceClaimTemplate (resource.k8s.io/v1beta1), "
			 "DeviceTaintRule (resource.k8s.io/v1alpha3)",
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

/* --- From a JSON tree ----------------------------------------------------- */

#define JB_TEXT 1 /* jb_node: take the text path */

/* The node of JSON value v under parent (NULL: the root), as libyaml's
 * events of v's compact text would build it: strings quoted (not plain),
 * numbers, true, false and null plain, in their json_dumps text.  Lines
 * and columns are 1 (the caller reads messages from the text path).
 * JB_TEXT (a positive code, not an error) when the text path must be
 * taken instead (nesting past MU__Y_MAX_DEPTH, more than YB_MAX_TREE
 * nodes, a NUL in a string): it refuses those with its own message.
 * Nodes in b's arena.  O(v's nodes); recursion at most MU__Y_MAX_DEPTH. */
static int jb_node(ybuild_t *b, const json_t *v, mu__ynode_t *parent, const char *key, int depth,
		   mu__ynode_t **out)
{
	*out = NULL;
	bool box = json_is_object(v) || json_is_array(v);
	if ((box && depth == MU__Y_MAX_DEPTH) || ++b->nodes > YB_MAX_TREE)
		return JB_TEXT;
	mu__ynode_t *n = mu_arena_alloc(b->arena, sizeof *n);
	if (!n)
		return yb_oom(b);
	memset(n, 0, sizeof *n);
	n->line = n->col = 1;
	n->s = "";
	if (json_is_string(v)) {
		size_t len = json_string_length(v);
		if (memchr(json_string_value(v), '\0', len))
			return JB_TEXT;
		if (!(n->s = mu_arena_strndup(b->arena, json_string_value(v), len)))
			return yb_oom(b);
		n->type = MU__Y_SCALAR;
	} else if (!box) {
		char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		n->s = t ? mu_arena_strndup(b->arena, t, strlen(t)) : NULL;
		free(t);
		if (!n->s)
			return yb_oom(b);
		n->type = MU__Y_SCALAR;
		n->plain = true;
	} else {
		n->type = json_is_object(v) ? MU__Y_MAP : MU__Y_SEQ;
	}
	if (parent) {
		n->parent = parent;
		n->idx = parent->type == MU__Y_SEQ ? parent->n : 0;
		if (key && !(n->key = mu_arena_strndup(b->arena, key, strlen(key))))
			return yb_oom(b);
		if (parent->tail)
			parent->tail->next = n;
		else
			parent->head = n;
		parent->tail = n;
		parent->n++;
	}
	*out = n;
	int rc = MU_OK;
	mu__ynode_t *c;
	if (json_is_object(v)) {
		const char *k;
		json_t *x;
		json_object_foreach((json_t *)v, k, x)
			if ((rc = jb_node(b, x, n, k, depth + 1, &c)) != MU_OK)
				return rc;
	} else if (json_is_array(v)) {
		size_t i;
		json_t *x;
		json_array_foreach(v, i, x)
			if ((rc = jb_node(b, x, n, NULL, depth + 1, &c)) != MU_OK)
				return rc;
	}
	return rc;
}

int mu_load_json(const char *name, const struct json_t *doc, mu_specs_t *into, mu_diag_t *diag)
{
	mu__yload_t L = {.file = name ? name : "(json)", .diag = diag, .into = into};
	for (size_t i = 0; i < into->njobs; i++)
		L.pods += mu_job_spec_pods(&into->jobs[i]);
	mu_arena_t arena;
	mu_arena_init(&arena);
	ybuild_t b = {.L = &L, .arena = &arena};
	int rc = jb_node(&b, doc, NULL, NULL, 0, &b.root);
	if (rc == MU_OK)
		rc = convert_doc(&L, b.root);
	mu_arena_release(&arena);
	if (rc != JB_TEXT)
		return rc;
	char *text = json_dumps(doc, JSON_COMPACT);
	rc = text ? mu_load_yaml(name, text, strlen(text), into, diag) :
		    mu__diag(diag, MU_ENOMEM, L.file, 0, 0, "out of memory");
	free(text);
	return rc;
}
