/*
 * selectors.c - Kubernetes label and field selectors.
 *
 * Label selectors: comma-separated requirements `k`, `!k`, `k=v`, `k==v`,
 * `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k>N`, `k<N`, all ANDed.  Field
 * selectors: `f=v`, `f==v`, `f!=v`, with `\` escaping `,`, `=`, `!` and `\`
 * in values.  A parsed selector owns its strings; matching reads an object
 * version's extracted labels and fields (store.c) and allocates nothing.
 * Bounds: 64 requirements, 64 values per set, 4096 bytes of text.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/apiserver_int.h"

enum { OP_EQ, OP_NE, OP_IN, OP_NOTIN, OP_EXISTS, OP_NOTEXISTS, OP_GT, OP_LT };

#define SEL_MAX_REQ 64
#define SEL_MAX_VALS 64

typedef struct req {
	char *key;
	int op;
	char *vals[SEL_MAX_VALS];
	int nvals;
} req_t;

struct mu__sel {
	req_t r[SEL_MAX_REQ];
	int n;
	bool fields;
};

void mu__sel_free(mu__sel_t *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->n; i++) {
		free(s->r[i].key);
		for (int k = 0; k < s->r[i].nvals; k++)
			free(s->r[i].vals[k]);
	}
	free(s);
}

typedef struct lex {
	const char *p;
	char *err;
	size_t errlen;
} lex_t;

static void skip_ws(lex_t *l)
{
	while (*l->p == ' ' || *l->p == '\t')
		l->p++;
}

static bool key_char(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.' || c == '/';
}

/* A label key or value token; NULL (and a message) if empty when required. */
static char *word(lex_t *l, bool allow_empty, const char *what)
{
	skip_ws(l);
	const char *s = l->p;
	while (key_char(*l->p))
		l->p++;
	if (l->p == s && !allow_empty) {
		snprintf(l->err, l->errlen, "expected %s at \"%.32s\"", what, s);
		return NULL;
	}
	char *w = strndup(s, (size_t)(l->p - s));
	if (!w)
		snprintf(l->err, l->errlen, "out of memory");
	return w;
}

/* A field selector value up to an unescaped ','; unescapes it. */
static char *field_value(lex_t *l)
{
	size_t cap = strlen(l->p) + 1, n = 0;
	char *v = malloc(cap);
	if (!v)
		return NULL;
	while (*l->p && *l->p != ',') {
		if (*l->p == '\\' && l->p[1])
			l->p++;
		v[n++] = *l->p++;
	}
	v[n] = '\0';
	/* trailing blanks are not part of the value */
	while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		v[--n] = '\0';
	return v;
}

/* `(a, b, c)` into r's values. */
static int value_set(lex_t *l, req_t *r)
{
	skip_ws(l);
	if (*l->p != '(') {
		snprintf(l->err, l->errlen, "expected '(' after in/notin");
		return MU_EPARSE;
	}
	l->p++;
	for (;;) {
		if (r->nvals == SEL_MAX_VALS) {
			snprintf(l->err, l->errlen, "more than %d values in a set", SEL_MAX_VALS);
			return MU_EPARSE;
		}
		char *v = word(l, true, "a value");
		if (!v)
			return MU_EPARSE;
		r->vals[r->nvals++] = v;
		skip_ws(l);
		if (*l->p == ',') {
			l->p++;
			continue;
		}
		if (*l->p == ')') {
			l->p++;
			return MU_OK;
		}
		snprintf(l->err, l->errlen, "expected ',' or ')' in a value set");
		return MU_EPARSE;
	}
}

/* Parses the operator and value(s) of a label requirement after its key. */
static int label_op(lex_t *l, req_t *r)
{
	skip_ws(l);
	const char *p = l->p;
	if (!strncmp(p, "==", 2) || !strncmp(p, "!=", 2) || *p == '=' || *p == '>' || *p == '<') {
		r->op = *p == '!' ? OP_NE : *p == '>' ? OP_GT : *p == '<' ? OP_LT : OP_EQ;
		l->p += (p[1] == '=' && (*p == '=' || *p == '!')) ? 2 : 1;
		char *v = word(l, r->op == OP_EQ || r->op == OP_NE, "a value");
		if (!v)
			return MU_EPARSE;
		r->vals[r->nvals++] = v;
		if ((r->op == OP_GT || r->op == OP_LT) && strspn(v, "0123456789") != strlen(v)) {
			snprintf(l->err, l->errlen, "%s: expected an integer after > or <", r->key);
			return MU_EPARSE;
		}
		return MU_OK;
	}
	if (!strncmp(p, "in", 2) && (p[2] == ' ' || p[2] == '(')) {
		r->op = OP_IN;
		l->p += 2;
		return value_set(l, r);
	}
	if (!strncmp(p, "notin", 5) && (p[5] == ' ' || p[5] == '(')) {
		r->op = OP_NOTIN;
		l->p += 5;
		return value_set(l, r);
	}
	if (*p == ',' || *p == '\0') {
		r->op = OP_EXISTS;
		return MU_OK;
	}
	snprintf(l->err, l->errlen, "unexpected \"%.16s\" after key %s", p, r->key);
	return MU_EPARSE;
}

/* One field requirement: key, =|==|!=, escaped value. */
static int field_req(lex_t *l, req_t *r)
{
	skip_ws(l);
	const char *s = l->p;
	while (*l->p && *l->p != '=' && *l->p != '!' && *l->p != ',' && *l->p != ' ')
		l->p++;
	if (l->p == s) {
		snprintf(l->err, l->errlen, "expected a field name at \"%.32s\"", s);
		return MU_EPARSE;
	}
	if (!(r->key = strndup(s, (size_t)(l->p - s))))
		return MU_ENOMEM;
	skip_ws(l);
	if (!strncmp(l->p, "!=", 2)) {
		r->op = OP_NE;
		l->p += 2;
	} else if (!strncmp(l->p, "==", 2)) {
		r->op = OP_EQ;
		l->p += 2;
	} else if (*l->p == '=') {
		r->op = OP_EQ;
		l->p++;
	} else {
		snprintf(l->err, l->errlen, "invalid field selector: %s: expected =, == or !=", r->key);
		return MU_EPARSE;
	}
	char *v = field_value(l);
	if (!v)
		return MU_ENOMEM;
	r->vals[r->nvals++] = v;
	return MU_OK;
}

int mu__sel_parse(const char *text, bool fields, mu__sel_t **out, char *err, size_t errlen)
{
	*out = NULL;
	mu__sel_t *s = calloc(1, sizeof *s);
	if (!s)
		return MU_ENOMEM;
	s->fields = fields;
	lex_t l = {text ? text : "", err, errlen};
	if (strlen(l.p) > 4096) {
		snprintf(err, errlen, "selector longer than 4096 bytes");
		mu__sel_free(s);
		return MU_EPARSE;
	}
	skip_ws(&l);
	while (*l.p) {
		if (s->n == SEL_MAX_REQ) {
			snprintf(err, errlen, "more than %d requirements", SEL_MAX_REQ);
			mu__sel_free(s);
			return MU_EPARSE;
		}
		req_t *r = &s->r[s->n++];
		int rc;
		if (fields) {
			rc = field_req(&l, r);
		} else {
			skip_ws(&l);
			bool neg = *l.p == '!';
			l.p += neg;
			r->key = word(&l, false, "a label key");
			rc = r->key ? MU_OK : MU_EPARSE;
			if (rc == MU_OK && neg)
				r->op = OP_NOTEXISTS;
			else if (rc == MU_OK)
				rc = label_op(&l, r);
		}
		skip_ws(&l);
		if (rc == MU_OK && *l.p && *l.p != ',') {
			snprintf(err, errlen, "unexpected \"%.16s\" in selector", l.p);
			rc = MU_EPARSE;
		}
		if (rc != MU_OK) {
			mu__sel_free(s);
			return rc == MU_ENOMEM ? MU_ENOMEM : MU_EPARSE;
		}
		if (*l.p == ',') {
			l.p++;
			skip_ws(&l);
			if (!*l.p) {
				snprintf(err, errlen, "selector ends with ','");
				mu__sel_free(s);
				return MU_EPARSE;
			}
		}
	}
	*out = s;
	return MU_OK;
}

static bool in_set(const req_t *r, const char *v)
{
	for (int i = 0; i < r->nvals; i++)
		if (!strcmp(r->vals[i], v))
			return true;
	return false;
}

/* One label requirement against a value (NULL: label absent). */
static bool req_match(const req_t *r, const char *v)
{
	switch (r->op) {
	case OP_EQ:
	case OP_IN:
		return v && in_set(r, v);
	case OP_NE:
	case OP_NOTIN:
		return !v || !in_set(r, v);
	case OP_EXISTS:
		return v != NULL;
	case OP_NOTEXISTS:
		return v == NULL;
	case OP_GT:
	case OP_LT: {
		if (!v || !*v || strspn(v, "0123456789") != strlen(v) || strlen(v) > 18)
			return false;
		long long a = atoll(v), b = atoll(r->vals[0]);
		return r->op == OP_GT ? a > b : a < b;
	}
	}
	return false;
}

bool mu__sel_match_labels(const mu__sel_t *s, const mu__obj_t *o)
{
	for (int i = 0; s && i < s->n; i++)
		if (!req_match(&s->r[i], mu__obj_label(o, s->r[i].key)))
			return false;
	return true;
}

bool mu__sel_match_json(const mu__sel_t *s, const json_t *labels)
{
	for (int i = 0; s && i < s->n; i++)
		if (!req_match(&s->r[i], json_string_value(json_object_get(labels, s->r[i].key))))
			return false;
	return true;
}

bool mu__sel_match_fields(const mu__sel_t *s, const mu__obj_t *o)
{
	for (int i = 0; s && i < s->n; i++) {
		const char *v = mu__obj_field(o, s->r[i].key);
		bool eq = !strcmp(v ? v : "", s->r[i].vals[0]);
		if (eq != (s->r[i].op == OP_EQ))
			return false;
	}
	return true;
}

int mu__sel_check_fields(const mu__sel_t *s, const mu__rtype_t *t, char *err, size_t errlen)
{
	for (int i = 0; s && i < s->n; i++) {
		const char *k = s->r[i].key;
		bool ok = !strcmp(k, "metadata.name") || (!strcmp(k, "metadata.namespace") && t->namespaced);
		for (int f = 0; !ok && t->fields && t->fields[f]; f++)
			ok = !strcmp(k, t->fields[f]);
		if (!ok) {
			snprintf(err, errlen, "field label not supported: %s", k);
			return MU_EINVAL;
		}
	}
	return MU_OK;
}
