/*
 * load_yaml_get.c - reads of the YAML loader's tree: field paths and errors,
 * shape checks, and typed getters.  Every converter (kinds, pods, topology,
 * NRT) and the dispatcher in load_yaml.c read through these; this file
 * calls none of them.
 *
 * Each getter checks the shape of one node (or of one key of a mapping),
 * parses its text strictly with the parsers of muster/util.h and reports a failure
 * with the node's position and field path.  Strings that specs keep are
 * copied to the spec set's arena; the tree itself is freed after each
 * document.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "load/load_yaml.h"

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

int mu__y_oom(mu__yload_t *L)
{
	return mu__diag(L->diag, MU_ENOMEM, L->file, 0, 0, "out of memory");
}

/* Zeroed room for n elements of size sz (n may be 0); NULL on OOM. */
void *mu__y_alloc(mu__yload_t *L, size_t n, size_t sz)
{
	if (sz && n > SIZE_MAX / sz)
		return NULL;
	return mu_arena_alloc(&L->into->arena, n * sz);
}

/* "got \"text\"" for messages, quoting at most ~60 characters. */
static const char *got(const mu__ynode_t *n, char *buf, size_t len)
{
	return mu__quote(n->s, buf, len);
}

int mu__y_str(mu__yload_t *L, const mu__ynode_t *n, const char **out)
{
	int rc = mu__y_want_scalar(L, n);
	if (rc != MU_OK)
		return rc;
	const char *s = mu_arena_strdup(&L->into->arena,
					mu__y_null(n) ? "" : n->s);
	if (!s)
		return mu__y_oom(L);
	*out = s;
	return MU_OK;
}

int mu__y_name(mu__yload_t *L, const mu__ynode_t *n, const char **out)
{
	int rc = mu__y_want_scalar(L, n);
	if (rc != MU_OK)
		return rc;
	if (mu__y_null(n) || !mu__valid_name(n->s)) {
		char q[80];
		return mu__y_err(L, n, NULL, MU_EINVAL,
				 "expected a name (1 to 253 characters of "
				 "A-Z a-z 0-9 - . _, starting with a letter or "
				 "digit), got %s",
				 mu__y_null(n) ? "nothing" : got(n, q, sizeof q));
	}
	return mu__y_str(L, n, out);
}

int mu__y_int(mu__yload_t *L, const mu__ynode_t *n, int64_t min, int64_t max,
	      int64_t *out)
{
	int rc = mu__y_want_scalar(L, n);
	if (rc != MU_OK)
		return rc;
	if ((rc = mu__parse_int(n->s, min, max, out)) != MU_OK) {
		char q[80];
		return mu__y_err(L, n, NULL, rc,
				 "expected an integer from %lld to %lld, got %s",
				 (long long)min, (long long)max,
				 got(n, q, sizeof q));
	}
	return MU_OK;
}

int mu__y_bool(mu__yload_t *L, const mu__ynode_t *n, bool *out)
{
	int rc = mu__y_want_scalar(L, n);
	if (rc != MU_OK)
		return rc;
	if (mu__parse_bool(n->s, out) != MU_OK) {
		char q[80];
		return mu__y_err(L, n, NULL, MU_EPARSE,
				 "expected true or false, got %s",
				 got(n, q, sizeof q));
	}
	return MU_OK;
}

int mu__y_dur(mu__yload_t *L, const mu__ynode_t *n, mu_time_t *out)
{
	int rc = mu__y_want_scalar(L, n);
	if (rc != MU_OK)
		return rc;
	if ((rc = mu__parse_duration(n->s, out)) != MU_OK) {
		char q[80];
		return mu__y_err(L, n, NULL, rc,
				 "expected a duration such as 90, 1.5, 250ms, "
				 "90s, 5m, 2h, 1d or 1h30m (0 to 100 years), got %s",
				 got(n, q, sizeof q));
	}
	return MU_OK;
}

int mu__y_qty(mu__yload_t *L, const mu__ynode_t *n, int64_t scale,
	      int64_t *out)
{
	int rc = mu__y_want_scalar(L, n);
	if (rc != MU_OK)
		return rc;
	char q[80];
	rc = mu_quantity_parse(n->s, scale, out);
	if (rc == MU_ERANGE)
		return mu__y_err(L, n, NULL, rc,
				 "quantity %s is negative or too large",
				 got(n, q, sizeof q));
	if (rc != MU_OK)
		return mu__y_err(L, n, NULL, MU_EPARSE,
				 "expected a quantity such as 500m, 2, 1.5, "
				 "64Gi or 1e3, got %s", got(n, q, sizeof q));
	return MU_OK;
}

/* The value of key in m, or an error when it is missing and required.
 * *v is NULL when absent. */
static int at(mu__yload_t *L, const mu__ynode_t *m, const char *key,
	      bool required, const mu__ynode_t **v)
{
	*v = mu__y_get(m, key);
	if (!*v && required)
		return mu__y_err(L, m, key, MU_EPARSE,
				 "required field is missing");
	return MU_OK;
}

int mu__y_str_at(mu__yload_t *L, const mu__ynode_t *m, const char *key,
		 bool required, const char **out)
{
	const mu__ynode_t *v;
	int rc = at(L, m, key, required, &v);
	return rc != MU_OK || !v ? rc : mu__y_str(L, v, out);
}

int mu__y_name_at(mu__yload_t *L, const mu__ynode_t *m, const char *key,
		  bool required, const char **out)
{
	const mu__ynode_t *v;
	int rc = at(L, m, key, required, &v);
	return rc != MU_OK || !v ? rc : mu__y_name(L, v, out);
}

int mu__y_int_at(mu__yload_t *L, const mu__ynode_t *m, const char *key,
		 int64_t min, int64_t max, int64_t *out)
{
	const mu__ynode_t *v = mu__y_get(m, key);
	return v ? mu__y_int(L, v, min, max, out) : MU_OK;
}

int mu__y_bool_at(mu__yload_t *L, const mu__ynode_t *m, const char *key,
		  bool *out)
{
	const mu__ynode_t *v = mu__y_get(m, key);
	return v ? mu__y_bool(L, v, out) : MU_OK;
}

int mu__y_dur_at(mu__yload_t *L, const mu__ynode_t *m, const char *key,
		 mu_time_t *out)
{
	const mu__ynode_t *v = mu__y_get(m, key);
	return v ? mu__y_dur(L, v, out) : MU_OK;
}

int mu__y_preemption_policy(mu__yload_t *L, const mu__ynode_t *n, bool *never)
{
	if (!n)
		return MU_OK;
	int rc = mu__y_want_scalar(L, n);
	if (rc)
		return rc;
	if (!strcmp(n->s, "Never") || !strcmp(n->s, "PreemptLowerPriority")) {
		*never = n->s[0] == 'N';
		return MU_OK;
	}
	return mu__y_err(L, n, NULL, MU_EPARSE,
			 "expected Never or PreemptLowerPriority, got \"%.60s\"", n->s);
}

int mu__y_escalation_at(mu__yload_t *L, const mu__ynode_t *m, const char *key,
			mu_escalation_t *out)
{
	const mu__ynode_t *n = mu__y_get(m, key);
	if (!n)
		return MU_OK;
	int rc = mu__y_want_scalar(L, n);
	if (rc)
		return rc;
	static const char *const names[] = {"boost", "reserve", "preempt"};
	for (int i = 0; i < 3; i++)
		if (!strcmp(n->s, names[i])) {
			*out = (mu_escalation_t)(MU_ESC_BOOST + i);
			return MU_OK;
		}
	return mu__y_err(L, n, NULL, MU_EPARSE, "expected boost, reserve or "
			 "preempt (what a job that waited past its maximum wait "
			 "gets), got \"%.60s\"", n->s);
}

/* --- Composite values ---------------------------------------------------- */

/* Linear in the list's length. */
int mu__y_strs_at(mu__yload_t *L, const mu__ynode_t *m, const char *key,
		  bool names, const char ***out, size_t *nout)
{
	const mu__ynode_t *seq;
	int rc = mu__y_seq_at(L, m, key, false, &seq);
	*out = NULL;
	*nout = 0;
	if (rc != MU_OK || !seq)
		return rc;
	const char **v = mu__y_alloc(L, seq->n, sizeof *v);
	if (!v)
		return mu__y_oom(L);
	size_t i = 0;
	for (const mu__ynode_t *c = seq->head; c; c = c->next, i++) {
		rc = names ? mu__y_name(L, c, &v[i]) : mu__y_str(L, c, &v[i]);
		if (rc != MU_OK)
			return rc;
		if (!*v[i])
			return mu__y_err(L, c, NULL, MU_EPARSE,
					 "expected a non-empty string");
	}
	*out = v;
	*nout = seq->n;
	return MU_OK;
}

/* Linear in the mapping's size; keys are unique (checked when built). */
int mu__y_labels_at(mu__yload_t *L, const mu__ynode_t *m, const char *key,
		    mu_label_t **out, size_t *nout)
{
	const mu__ynode_t *map;
	int rc = mu__y_map_at(L, m, key, false, &map);
	*out = NULL;
	*nout = 0;
	if (rc != MU_OK || !map)
		return rc;
	mu_label_t *v = mu__y_alloc(L, map->n, sizeof *v);
	if (!v)
		return mu__y_oom(L);
	size_t i = 0;
	for (const mu__ynode_t *c = map->head; c; c = c->next, i++) {
		if (!*c->key)
			return mu__y_err(L, c, NULL, MU_EPARSE,
					 "a label key must not be empty");
		if ((rc = mu__y_str(L, c, &v[i].value)) != MU_OK)
			return rc;
		if (!(v[i].key = mu_arena_strdup(&L->into->arena, c->key)))
			return mu__y_oom(L);
	}
	*out = v;
	*nout = map->n;
	return MU_OK;
}

/* Parses a taint effect name; -1 if unknown. */
int mu__y_effect(const char *s)
{
	if (!strcmp(s, "NoSchedule"))
		return MU_TAINT_NO_SCHEDULE;
	if (!strcmp(s, "PreferNoSchedule"))
		return MU_TAINT_PREFER_NO_SCHEDULE;
	if (!strcmp(s, "NoExecute"))
		return MU_TAINT_NO_EXECUTE;
	return -1;
}

/* Linear in the number of taints. */
int mu__y_taints_at(mu__yload_t *L, const mu__ynode_t *m, const char *key,
		    mu_taint_t **out, size_t *nout)
{
	const mu__ynode_t *seq;
	int rc = mu__y_seq_at(L, m, key, false, &seq);
	*out = NULL;
	*nout = 0;
	if (rc != MU_OK || !seq)
		return rc;
	mu_taint_t *v = mu__y_alloc(L, seq->n, sizeof *v);
	if (!v)
		return mu__y_oom(L);
	size_t i = 0;
	for (const mu__ynode_t *c = seq->head; c; c = c->next, i++) {
		const mu__ynode_t *e;
		if ((rc = mu__y_want_map(L, c)) != MU_OK ||
		    (rc = mu__y_str_at(L, c, "key", true, &v[i].key)) != MU_OK ||
		    (rc = mu__y_str_at(L, c, "value", false, &v[i].value)) != MU_OK)
			return rc;
		if (!*v[i].key)
			return mu__y_err(L, c, "key", MU_EPARSE,
					 "a taint key must not be empty");
		if (!(e = mu__y_get(c, "effect")))
			return mu__y_err(L, c, "effect", MU_EPARSE,
					 "required field is missing");
		if ((rc = mu__y_want_scalar(L, e)) != MU_OK)
			return rc;
		int eff = mu__y_effect(e->s);
		if (eff < 0) {
			char q[80];
			return mu__y_err(L, e, NULL, MU_EINVAL,
					 "expected NoSchedule, PreferNoSchedule "
					 "or NoExecute, got %s", got(e, q, sizeof q));
		}
		v[i].effect = (mu_taint_effect_t)eff;
	}
	*out = v;
	*nout = seq->n;
	return MU_OK;
}

int mu__y_num(mu__yload_t *L, const mu__ynode_t *n, double min, double max,
	      double *out)
{
	int rc = mu__y_want_scalar(L, n);
	if (rc != MU_OK)
		return rc;
	if ((rc = mu__parse_num(n->s, min, max, out)) != MU_OK) {
		char q[80];
		return mu__y_err(L, n, NULL, rc, "expected a number from %g to "
				 "%g, got %s", min, max, got(n, q, sizeof q));
	}
	return MU_OK;
}

int mu__y_ref(mu__yload_t *L, const mu__ynode_t *n, mu_spec_ref_kind_t kind,
	      size_t job, const char *name, const mu_node_topo_spec_t *topo)
{
	char where[320];
	snprintf(where, sizeof where, "%s:%ld:%ld", L->file, n ? n->line : 0,
		 n ? n->col : 0);
	mu_spec_ref_t *r = mu_specs_add_ref(L->into);
	if (!r)
		return mu__y_oom(L);
	r->kind = kind;
	r->job = job;
	r->topo = topo;
	if ((name && !(r->name = mu_arena_strdup(&L->into->arena, name))) ||
	    !(r->where = mu_arena_strdup(&L->into->arena, where))) {
		L->into->nrefs--;
		return mu__y_oom(L);
	}
	return MU_OK;
}

/* --- matchExpressions (node and pod selectors share one reader) ------------ */

static const char *const sel_ops[] = {"In", "NotIn", "Exists", "DoesNotExist",
				      "Gt", "Lt"};

/* Checks the values of one requirement against its operator. */
static int sel_values(mu__yload_t *L, const mu__ynode_t *e, mu_sel_req_t *r)
{
	const mu__ynode_t *vals = mu__y_get(e, "values");
	int64_t x;
	switch (r->op) {
	case MU_SEL_IN:
	case MU_SEL_NOT_IN:
		if (r->nvalues == 0)
			return mu__y_err(L, e, "values", MU_EINVAL,
					 "%s needs at least one value",
					 sel_ops[r->op]);
		break;
	case MU_SEL_EXISTS:
	case MU_SEL_DOES_NOT_EXIST:
		if (r->nvalues)
			return mu__y_err(L, vals, NULL, MU_EINVAL,
					 "%s takes no values", sel_ops[r->op]);
		break;
	case MU_SEL_GT:
	case MU_SEL_LT:
		if (r->nvalues != 1 ||
		    mu__parse_int(r->values[0], INT64_MIN, INT64_MAX, &x))
			return mu__y_err(L, vals ? vals : e, vals ? NULL : "values",
					 MU_EINVAL, "%s needs exactly one "
					 "integer value", sel_ops[r->op]);
		break;
	}
	return MU_OK;
}

int mu__y_sel_req(mu__yload_t *L, const mu__ynode_t *e, bool node, mu_sel_req_t *r)
{
	const mu__ynode_t *op, *vals;
	int rc;
	if ((rc = mu__y_want_map(L, e)) ||
	    (rc = mu__y_str_at(L, e, "key", true, &r->key)) ||
	    (rc = mu__y_seq_at(L, e, "values", false, &vals)))
		return rc;
	if (!*r->key)
		return mu__y_err(L, e, "key", MU_EPARSE, "must not be empty");
	if (!(op = mu__y_get(e, "operator")))
		return mu__y_err(L, e, "operator", MU_EPARSE,
				 "required field is missing");
	if ((rc = mu__y_want_scalar(L, op)))
		return rc;
	size_t i, nops = node ? sizeof sel_ops / sizeof *sel_ops : 4;
	for (i = 0; i < nops; i++)
		if (!strcmp(op->s, sel_ops[i]))
			break;
	if (i == nops)
		return mu__y_err(L, op, NULL, MU_EINVAL, "expected In, NotIn, Exists%s, got \"%.60s\"",
				 node ? ", DoesNotExist, Gt or Lt" : " or DoesNotExist", op->s);
	r->op = (mu_sel_op_t)i;
	if (vals) {
		if (!(r->values = mu__y_alloc(L, vals->n, sizeof *r->values)))
			return mu__y_oom(L);
		for (const mu__ynode_t *v = vals->head; v; v = v->next)
			if ((rc = mu__y_str(L, v, &r->values[r->nvalues++])))
				return rc;
	}
	return sel_values(L, e, r);
}
