/*
 * cel.c - the CEL subset of DRA device selectors and of CRD validation
 * rules (include/muster/cel.h): one recursive-descent pass that checks and
 * evaluates at once.  The body of a rule's all() or exists() is re-read
 * once per element, with its variable bound; an unneeded body (an empty
 * list, check mode) is read once without evaluating.
 *
 * With no device (mu_cel_check) attribute values have an unknown type and
 * only the shape is checked; with a device (mu_cel_eval) every value is
 * computed.  A run-time error (a missing attribute, mismatched types) is a
 * value of its own that `&&` and `||` absorb when the other side decides,
 * as CEL's commutative logical operators do.  The text is read once, left
 * to right: O(length) steps, each attribute lookup O(attributes).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muster/cel.h"
#include "muster/error.h"
#include "muster/resource.h"

enum {
	V_ERR = 0,    /* a run-time error (why in p->rmsg) */
	V_INT = MU_CEL_INT,
	V_BOOL = MU_CEL_BOOL,
	V_STR = MU_CEL_STRING,
	V_VER = MU_CEL_VERSION,
	V_QTY = MU_CEL_QUANTITY,
	V_DYN,        /* check mode: an attribute of unknown type */
	V_DEVICE,     /* `device` */
	V_ATTRS,      /* device.attributes */
	V_CAPS,       /* device.capacity */
	V_ATTRDOM,    /* device.attributes["DOMAIN"]: s is the domain */
	V_CAPDOM,
	V_NODE,       /* a rule's list or map: n is the document's node */
};

typedef struct val {
	int t;
	int64_t i;
	bool b;
	const char *s; /* NUL-terminated: the device's, the document's or the pool's */
	const void *n; /* V_NODE */
} val_t;

typedef struct cel {
	const char *start, *p;
	const mu_cel_device_t *dev; /* device selectors; NULL: check only */
	const mu_cel_doc_t *doc;    /* validation rules: self is read through it */
	const void *self;
	const void *old;             /* oldSelf, or NULL */
	bool used_old;               /* the rule names oldSelf (a transition rule) */
	struct { char name[64]; val_t v; } vars[MU_CEL_MAX_VARS]; /* macro variables */
	int nvars;
	long visits;                 /* elements all()/exists() visited */
	bool rule;                   /* a validation rule (self), not a selector */
	bool eval;                   /* evaluating (a device or a document), not checking */
	int depth;
	int err;                     /* MU_EPARSE / MU_EINVAL once refused */
	char *msg;
	size_t msglen;
	char rmsg[200];              /* the first run-time error */
	char pool[MU_CEL_MAX_LEN + 1]; /* decoded string literals */
	size_t pooln;
} cel_t;

static void refuse(cel_t *c, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Records the first refusal, with the offset where it happened. */
static void refuse(cel_t *c, int err, const char *fmt, ...)
{
	if (c->err)
		return;
	c->err = err;
	char m[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m, sizeof m, fmt, ap);
	va_end(ap);
	if (c->msg && c->msglen)
		snprintf(c->msg, c->msglen, "CEL at offset %d: %s", (int)(c->p - c->start), m);
}

/* A run-time error value (why kept if it is the first). */
static val_t rerr(cel_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static val_t rerr(cel_t *c, const char *fmt, ...)
{
	if (!c->rmsg[0]) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(c->rmsg, sizeof c->rmsg, fmt, ap);
		va_end(ap);
	}
	return (val_t){.t = V_ERR};
}

static void skip(cel_t *c)
{
	while (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')
		c->p++;
}

/* Consumes the token tok when it comes next. */
static bool eat(cel_t *c, const char *tok)
{
	skip(c);
	size_t n = strlen(tok);
	if (strncmp(c->p, tok, n))
		return false;
	c->p += n;
	return true;
}

static bool is_id(char ch, bool first)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' ||
	       (!first && ch >= '0' && ch <= '9');
}

/* Reads an identifier into buf (at most len - 1 bytes); false if none. */
static bool ident(cel_t *c, char *buf, size_t len)
{
	skip(c);
	size_t n = 0;
	if (!is_id(*c->p, true))
		return false;
	while (is_id(*c->p, false)) {
		if (n + 1 >= len) {
			refuse(c, MU_EPARSE, "identifier longer than %zu bytes", len - 1);
			return false;
		}
		buf[n++] = *c->p++;
	}
	buf[n] = '\0';
	return true;
}

/* Reads a string literal ("..." or '...', escapes \\ \" \' only) into the
 * pool; NULL when refused. */
static const char *string_lit(cel_t *c)
{
	skip(c);
	char q = *c->p;
	if (q != '"' && q != '\'')
		return NULL;
	c->p++;
	char *out = c->pool + c->pooln;
	while (*c->p && *c->p != q) {
		char ch = *c->p++;
		if (ch == '\\') {
			ch = *c->p++;
			if (ch != '\\' && ch != '"' && ch != '\'') {
				c->p--;
				refuse(c, MU_EINVAL, "only the escapes \\\\, \\\" and \\' are supported");
				return NULL;
			}
		}
		c->pool[c->pooln++] = ch; /* the pool is as long as any text */
	}
	if (*c->p != q) {
		refuse(c, MU_EPARSE, "unterminated string");
		return NULL;
	}
	c->p++;
	c->pool[c->pooln++] = '\0';
	return out;
}

static val_t expr(cel_t *c);
static val_t macro(cel_t *c, val_t recv, bool all);

/* Whether s is a version "MAJOR.MINOR.PATCH" (digits), into v[3]. */
static bool semver_parse(const char *s, int64_t v[3])
{
	for (int k = 0; k < 3; k++) {
		if (*s < '0' || *s > '9')
			return false;
		v[k] = 0;
		while (*s >= '0' && *s <= '9') {
			if (v[k] > INT64_MAX / 10 - 10)
				return false;
			v[k] = v[k] * 10 + (*s++ - '0');
		}
		if (k < 2 && *s++ != '.')
			return false;
	}
	return *s == '\0' || *s == '-' || *s == '+';
}

/* quantity("...") or semver("..."): the call's argument, already opened. */
static val_t conv_call(cel_t *c, bool qty)
{
	const char *s = string_lit(c);
	if (!s) {
		refuse(c, MU_EINVAL, "%s() takes one string literal", qty ? "quantity" : "semver");
		return (val_t){.t = V_ERR};
	}
	if (!eat(c, ")")) {
		refuse(c, MU_EPARSE, "expected ')'");
		return (val_t){.t = V_ERR};
	}
	if (qty) {
		int64_t v;
		if (mu_quantity_parse(s, 1000, &v) != MU_OK) {
			refuse(c, MU_EINVAL, "quantity(\"%.40s\"): not a quantity", s);
			return (val_t){.t = V_ERR};
		}
		return (val_t){.t = V_QTY, .i = v};
	}
	int64_t v[3];
	if (!semver_parse(s, v)) {
		refuse(c, MU_EINVAL, "semver(\"%.40s\"): not MAJOR.MINOR.PATCH", s);
		return (val_t){.t = V_ERR};
	}
	return (val_t){.t = V_VER, .s = s};
}

/* A number literal (decimal integers only). */
static val_t int_lit(cel_t *c)
{
	int64_t v = 0;
	bool neg = *c->p == '-';
	if (neg)
		c->p++;
	if (*c->p < '0' || *c->p > '9') {
		refuse(c, MU_EPARSE, "expected a number");
		return (val_t){.t = V_ERR};
	}
	while (*c->p >= '0' && *c->p <= '9') {
		if (v > (INT64_MAX - 9) / 10) {
			refuse(c, MU_EINVAL, "integer out of range");
			return (val_t){.t = V_ERR};
		}
		v = v * 10 + (*c->p++ - '0');
	}
	if (*c->p == '.' || *c->p == 'e' || *c->p == 'E' || *c->p == 'u' || *c->p == 'x') {
		refuse(c, MU_EINVAL, "only decimal integers are supported (no doubles, "
		       "unsigned or hex literals)");
		return (val_t){.t = V_ERR};
	}
	return (val_t){.t = V_INT, .i = neg ? -v : v};
}

/* --- validation rules: self ------------------------------------------- */

/* The value of document node n. */
static val_t node_val(cel_t *c, const void *n)
{
	int64_t i = 0;
	bool b = false;
	const char *str = NULL;
	switch (c->doc->kind(n, &i, &b, &str)) {
	case MU_CEL_NODE_INT: return (val_t){.t = V_INT, .i = i};
	case MU_CEL_NODE_BOOL: return (val_t){.t = V_BOOL, .b = b};
	case MU_CEL_NODE_STRING: return (val_t){.t = V_STR, .s = str ? str : ""};
	case MU_CEL_NODE_LIST:
	case MU_CEL_NODE_MAP: return (val_t){.t = V_NODE, .n = n};
	case MU_CEL_NODE_DOUBLE: return rerr(c, "double values are not supported");
	default: return rerr(c, "a null value");
	}
}

/* v.name: a field of a map (a run-time error when absent, as in CEL). */
static val_t node_field(cel_t *c, val_t v, const char *name)
{
	if (!c->eval || v.t == V_ERR)
		return v.t == V_ERR ? v : (val_t){.t = V_DYN};
	if (v.t != V_NODE || c->doc->kind(v.n, &(int64_t){0}, &(bool){0}, &(const char *){0}) != MU_CEL_NODE_MAP)
		return rerr(c, "no such key: %s (not an object)", name);
	const void *f = c->doc->field(v.n, name);
	return f ? node_val(c, f) : rerr(c, "no such key: %s", name);
}

/* The number of UTF-8 code points of s (CEL counts those). */
static int64_t utf8_count(const char *s)
{
	int64_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* size(v) and v.size(): of a string, list or map. */
static val_t size_of(cel_t *c, val_t v)
{
	if (v.t == V_ERR)
		return v;
	if (!c->eval) {
		if (v.t != V_DYN && v.t != V_STR)
			refuse(c, MU_EINVAL, "size() takes a string, list or map");
		return (val_t){.t = V_INT};
	}
	if (v.t == V_STR)
		return (val_t){.t = V_INT, .i = utf8_count(v.s)};
	if (v.t == V_NODE)
		return (val_t){.t = V_INT, .i = (int64_t)c->doc->size(v.n)};
	return rerr(c, "no such overload: size");
}

/* has(self.a.b...): whether the last field is present (the call opened). */
static val_t var_or_self(cel_t *c, const char *id, bool *found);

static val_t has_call(cel_t *c)
{
	char id[64], last[64];
	bool found = false;
	val_t v = ident(c, id, sizeof id) ? var_or_self(c, id, &found) : (val_t){.t = V_ERR};
	if (!found) {
		refuse(c, MU_EINVAL, "has() takes a field of self, as in has(self.field)");
		return (val_t){.t = V_ERR};
	}
	bool any = false;
	while (!c->err && eat(c, ".")) {
		if (any)
			v = node_field(c, v, last);
		if (!ident(c, last, sizeof last))
			refuse(c, MU_EPARSE, "expected a name after '.'");
		any = true;
	}
	if (!c->err && !any)
		refuse(c, MU_EINVAL, "has() takes a field of self, as in has(self.field)");
	if (!c->err && !eat(c, ")"))
		refuse(c, MU_EPARSE, "expected ')'");
	if (c->err || v.t == V_ERR)
		return (val_t){.t = V_ERR};
	if (!c->eval)
		return (val_t){.t = V_BOOL};
	if (v.t != V_NODE)
		return rerr(c, "has(): .%s of a value that is not an object", last);
	return (val_t){.t = V_BOOL, .b = c->doc->field(v.n, last) != NULL};
}

/* The value of identifier id when it is self, oldSelf or a macro's
 * variable (*found); oldSelf without an old value is a run-time error. */
static val_t var_or_self(cel_t *c, const char *id, bool *found)
{
	*found = true;
	for (int k = c->nvars; k-- > 0;)
		if (!strcmp(c->vars[k].name, id))
			return c->vars[k].v;
	if (!strcmp(id, "self"))
		return c->eval ? node_val(c, c->self) : (val_t){.t = V_DYN};
	if (!strcmp(id, "oldSelf")) {
		c->used_old = true;
		if (!c->eval)
			return (val_t){.t = V_DYN};
		return c->old ? node_val(c, c->old) : rerr(c, "no oldSelf: the object is not an update");
	}
	*found = false;
	return (val_t){.t = V_ERR};
}

/* The identifiers of a validation rule: self, oldSelf, the variables of
 * all() and exists(), has(), size(). */
static val_t rule_ident(cel_t *c, const char *id, const char *at)
{
	bool found;
	val_t v = var_or_self(c, id, &found);
	if (found)
		return v;
	if (!strcmp(id, "has") && eat(c, "("))
		return has_call(c);
	if (!strcmp(id, "size") && eat(c, "(")) {
		val_t a = expr(c);
		if (!c->err && !eat(c, ")"))
			refuse(c, MU_EPARSE, "expected ')'");
		return c->err ? a : size_of(c, a);
	}
	c->p = at;
	refuse(c, MU_EINVAL, "'%s' is not supported (the subset knows self, oldSelf, their fields, has(), "
	       "size(), all(), exists(), in, literals, comparisons, &&, || and !)", id);
	return (val_t){.t = V_ERR};
}

static val_t primary(cel_t *c)
{
	char id[64];
	skip(c);
	if (eat(c, "(")) {
		val_t v = expr(c);
		if (!c->err && !eat(c, ")"))
			refuse(c, MU_EPARSE, "expected ')'");
		return v;
	}
	if (*c->p == '"' || *c->p == '\'') {
		const char *s = string_lit(c);
		return s ? (val_t){.t = V_STR, .s = s} : (val_t){.t = V_ERR};
	}
	if ((*c->p >= '0' && *c->p <= '9') || (*c->p == '-' && c->p[1] >= '0' && c->p[1] <= '9'))
		return int_lit(c);
	const char *at = c->p;
	if (!ident(c, id, sizeof id)) {
		if (!c->err && *c->p)
			refuse(c, MU_EPARSE, "unexpected '%c'", *c->p);
		else if (!c->err)
			refuse(c, MU_EPARSE, "unexpected end of the expression");
		return (val_t){.t = V_ERR};
	}
	if (!strcmp(id, "true") || !strcmp(id, "false"))
		return (val_t){.t = V_BOOL, .b = id[0] == 't'};
	if (c->rule)
		return rule_ident(c, id, at);
	if (!strcmp(id, "device"))
		return (val_t){.t = V_DEVICE};
	if ((!strcmp(id, "quantity") || !strcmp(id, "semver")) && eat(c, "("))
		return conv_call(c, id[0] == 'q');
	c->p = at;
	refuse(c, MU_EINVAL, "'%s' is not supported (the subset knows device, quantity(), "
	       "semver(), literals, comparisons, &&, || and !)", id);
	return (val_t){.t = V_ERR};
}

/* The attribute or capacity DOMAIN/NAME of the device as a value. */
static val_t lookup(cel_t *c, bool cap, const char *dom, const char *name)
{
	if (!c->dev)
		return (val_t){.t = cap ? V_QTY : V_DYN};
	const mu_cel_attr_t *a = cap ? c->dev->caps : c->dev->attrs;
	size_t n = cap ? c->dev->ncaps : c->dev->nattrs, dl = strlen(dom);
	for (size_t k = 0; k < n; k++) {
		const char *q = a[k].name;
		if (q && !strncmp(q, dom, dl) && q[dl] == '/' && !strcmp(q + dl + 1, name)) {
			if (cap)
				return (val_t){.t = V_QTY, .i = a[k].i};
			return (val_t){.t = (int)a[k].type, .i = a[k].i, .b = a[k].b, .s = a[k].s};
		}
	}
	return rerr(c, "device has no %s \"%s/%s\"", cap ? "capacity" : "attribute", dom, name);
}

/* Compares quantities or versions a and b: -1, 0, 1; 2 when they cannot be
 * compared (types differ, or unknown in check mode). */
static int cmp3(const val_t *a, const val_t *b)
{
	if (a->t != b->t)
		return 2;
	if (a->t == V_QTY || a->t == V_INT)
		return (a->i > b->i) - (a->i < b->i);
	if (a->t == V_VER) {
		int64_t x[3], y[3];
		if (!semver_parse(a->s, x) || !semver_parse(b->s, y))
			return 2;
		for (int k = 0; k < 3; k++)
			if (x[k] != y[k])
				return x[k] < y[k] ? -1 : 1;
		return 0;
	}
	return 2;
}

/* recv.NAME(arg): compareTo, isGreaterThan, isLessThan. */
static val_t method(cel_t *c, val_t recv, const char *name)
{
	int kind = !strcmp(name, "compareTo") ? 0 : !strcmp(name, "isGreaterThan") ? 1
		 : !strcmp(name, "isLessThan") ? 2 : -1;
	if (kind < 0) {
		refuse(c, MU_EINVAL, "method %s() is not supported (compareTo, isGreaterThan, "
		       "isLessThan are)", name);
		return (val_t){.t = V_ERR};
	}
	val_t arg = expr(c);
	if (!c->err && !eat(c, ")"))
		refuse(c, MU_EPARSE, "expected ')'");
	if (c->err)
		return (val_t){.t = V_ERR};
	int rt = kind ? V_BOOL : V_INT;
	if (recv.t == V_ERR || arg.t == V_ERR)
		return (val_t){.t = V_ERR};
	if (!c->eval)
		return (val_t){.t = rt};
	int r = cmp3(&recv, &arg);
	if (r == 2)
		return rerr(c, "no such overload: %s() needs two quantities or two versions", name);
	if (!kind)
		return (val_t){.t = V_INT, .i = r};
	return (val_t){.t = V_BOOL, .b = kind == 1 ? r > 0 : r < 0};
}

/* The body of a macro (at c->p) once, without evaluating it: it is
 * checked and skipped. */
static val_t skip_body(cel_t *c)
{
	bool ev = c->eval;
	c->eval = false;
	val_t r = expr(c);
	c->eval = ev;
	return r;
}

/* list.all(x, body) (all) or list.exists(x, body), the call opened: the
 * body runs once per element with x bound to it, re-reading its text.
 * CEL's logic: all() is false if any element is false, else an error if
 * any is one; exists() the other way round.  Over a map (its keys) it is a
 * run-time error here.  O(elements x body); a rule visits at most
 * MU_CEL_MAX_VISITS elements in all. */
static val_t macro(cel_t *c, val_t recv, bool all)
{
	char var[64];
	if (!ident(c, var, sizeof var) || !eat(c, ",")) {
		refuse(c, MU_EPARSE, "%s() takes a variable and an expression", all ? "all" : "exists");
		return (val_t){.t = V_ERR};
	}
	if (c->nvars >= MU_CEL_MAX_VARS) {
		refuse(c, MU_ELIMIT, "macros nested deeper than %d", MU_CEL_MAX_VARS);
		return (val_t){.t = V_ERR};
	}
	int slot = c->nvars++;
	snprintf(c->vars[slot].name, sizeof c->vars[slot].name, "%s", var);
	c->vars[slot].v = (val_t){.t = V_DYN};
	const char *body = c->p;
	val_t out = {.t = V_BOOL, .b = all};
	bool list = c->eval && recv.t == V_NODE &&
		    c->doc->kind(recv.n, &(int64_t){0}, &(bool){0}, &(const char *){0}) == MU_CEL_NODE_LIST;
	size_t n = list && c->doc->elem ? c->doc->size(recv.n) : 0;
	if (!c->eval) {
		out = skip_body(c);
		out = out.t == V_ERR ? out : (val_t){.t = V_BOOL};
	} else if (recv.t == V_ERR || !list || !c->doc->elem || n == 0) {
		skip_body(c);
		if (recv.t == V_ERR)
			out = recv;
		else if (!list || !c->doc->elem)
			out = rerr(c, "no such overload: %s() here takes a list", all ? "all" : "exists");
	} else {
		bool err = false;
		const char *end = body;
		for (size_t i = 0; i < n && !c->err; i++) {
			if (++c->visits > MU_CEL_MAX_VISITS) {
				/* kube refuses such a rule by its estimated cost */
				rerr(c, "the rule visits more than %d elements", MU_CEL_MAX_VISITS);
				err = true;
				c->p = body;
				skip_body(c);
				end = c->p;
				break;
			}
			c->p = body;
			c->vars[slot].v = node_val(c, c->doc->elem(recv.n, i));
			val_t r = expr(c);
			end = c->p;
			if (r.t == V_BOOL && r.b != all) { /* decides: the body's text is read */
				out = (val_t){.t = V_BOOL, .b = !all};
				err = false;
				break;
			}
			if (r.t != V_BOOL) {
				if (r.t != V_ERR)
					rerr(c, "no such overload: the %s() body must be a bool", all ? "all" : "exists");
				err = true;
			}
		}
		c->p = end;
		if (err)
			out = (val_t){.t = V_ERR};
	}
	c->nvars--;
	if (!c->err && !eat(c, ")"))
		refuse(c, MU_EPARSE, "expected ')'");
	return c->err ? (val_t){.t = V_ERR} : out;
}

/* One step after a value: .field, .method(...), ["key"]. */
static bool member_step(cel_t *c, val_t *v)
{
	char id[64];
	if (c->rule && eat(c, "[")) {
		refuse(c, MU_EINVAL, "indexing is not supported (select fields with .name)");
		return false;
	}
	if (eat(c, "[")) {
		const char *key = string_lit(c);
		if (!key || !eat(c, "]")) {
			refuse(c, MU_EINVAL, "an index must be a string literal in [\"...\"]");
			return false;
		}
		if (v->t == V_ATTRS || v->t == V_CAPS) {
			*v = (val_t){.t = v->t == V_ATTRS ? V_ATTRDOM : V_CAPDOM, .s = key};
		} else if (v->t == V_ATTRDOM || v->t == V_CAPDOM) {
			*v = lookup(c, v->t == V_CAPDOM, v->s, key);
		} else {
			refuse(c, MU_EINVAL, "only device.attributes and device.capacity can be indexed");
			return false;
		}
		return true;
	}
	if (!eat(c, "."))
		return false;
	if (!ident(c, id, sizeof id)) {
		refuse(c, MU_EPARSE, "expected a name after '.'");
		return false;
	}
	if (c->rule && !strcmp(id, "size") && eat(c, "(")) {
		if (!eat(c, ")"))
			refuse(c, MU_EPARSE, "expected ')'");
		*v = size_of(c, *v);
		return !c->err;
	}
	if (c->rule && (!strcmp(id, "all") || !strcmp(id, "exists")) && eat(c, "(")) {
		*v = macro(c, *v, id[0] == 'a');
		return !c->err;
	}
	if (eat(c, "(")) {
		*v = method(c, *v, id);
		return !c->err;
	}
	if (c->rule) {
		*v = node_field(c, *v, id);
	} else if (v->t == V_DEVICE) {
		if (!strcmp(id, "driver"))
			*v = c->dev ? (val_t){.t = V_STR, .s = c->dev->driver ? c->dev->driver : ""}
				    : (val_t){.t = V_STR};
		else if (!strcmp(id, "attributes") || !strcmp(id, "capacity"))
			*v = (val_t){.t = id[0] == 'a' ? V_ATTRS : V_CAPS};
		else
			refuse(c, MU_EINVAL, "device.%s is not supported (driver, attributes, "
			       "capacity are)", id);
	} else if (v->t == V_ATTRDOM || v->t == V_CAPDOM) {
		*v = lookup(c, v->t == V_CAPDOM, v->s, id);
	} else if (v->t != V_ERR) {
		refuse(c, MU_EINVAL, "field .%s is not supported here", id);
	}
	return !c->err;
}

static val_t member(cel_t *c)
{
	val_t v = primary(c);
	while (!c->err && member_step(c, &v))
		;
	if (!c->err && v.t >= V_DEVICE && v.t != V_NODE)
		refuse(c, MU_EINVAL, "device, device.attributes and device.capacity must be "
		       "followed by a domain and a name");
	return v;
}

static val_t unary(cel_t *c)
{
	if (eat(c, "!")) {
		if (++c->depth > MU_CEL_MAX_DEPTH) {
			refuse(c, MU_ELIMIT, "nested deeper than %d", MU_CEL_MAX_DEPTH);
			return (val_t){.t = V_ERR};
		}
		val_t v = unary(c);
		c->depth--;
		if (c->err || v.t == V_ERR || v.t == V_DYN)
			return v.t == V_DYN ? (val_t){.t = V_BOOL} : v;
		if (v.t != V_BOOL)
			return c->eval ? rerr(c, "no such overload: !") :
			       (refuse(c, MU_EINVAL, "! needs a bool"), v);
		return (val_t){.t = V_BOOL, .b = !v.b};
	}
	return member(c);
}

/* The relation op of a and b. */
static val_t relate(cel_t *c, const char *op, val_t a, val_t b)
{
	if (a.t == V_ERR || b.t == V_ERR)
		return (val_t){.t = V_ERR};
	if (a.t == V_QTY || a.t == V_VER || b.t == V_QTY || b.t == V_VER) {
		refuse(c, MU_EINVAL, "compare quantities and versions with compareTo(), "
		       "isGreaterThan() or isLessThan(), not %s", op);
		return (val_t){.t = V_ERR};
	}
	if (a.t == V_DYN || b.t == V_DYN || !c->eval)
		return (val_t){.t = V_BOOL};
	if (a.t == V_NODE && b.t == V_NODE && (op[0] == '=' || op[0] == '!') && c->doc->equal) {
		bool same = c->doc->equal(a.n, b.n);
		return (val_t){.t = V_BOOL, .b = op[0] == '=' ? same : !same};
	}
	if (a.t == V_NODE || b.t == V_NODE)
		return rerr(c, "no such overload: %s between lists or maps", op);
	bool eq = op[0] == '=' || op[0] == '!';
	if (a.t != b.t || (!eq && a.t == V_BOOL))
		return rerr(c, "no such overload: %s between these types", op);
	int r = a.t == V_STR ? strcmp(a.s ? a.s : "", b.s ? b.s : "")
	      : a.t == V_BOOL ? (a.b != b.b) : (a.i > b.i) - (a.i < b.i);
	r = (r > 0) - (r < 0);
	bool out = !strcmp(op, "==") ? r == 0 : !strcmp(op, "!=") ? r != 0
		 : !strcmp(op, "<") ? r < 0 : !strcmp(op, "<=") ? r <= 0
		 : !strcmp(op, ">") ? r > 0 : r >= 0;
	return (val_t){.t = V_BOOL, .b = out};
}

/* a in [x, y, ...]: membership in a list literal (the `in` eaten).  A
 * list read from the object is refused.  O(elements). */
static val_t in_list(cel_t *c, val_t a)
{
	if (!eat(c, "[")) {
		refuse(c, MU_EINVAL, "`in` takes a list literal, as in x in ['a', 'b']");
		return (val_t){.t = V_ERR};
	}
	bool found = false, err = false, first = true;
	while (!c->err && !eat(c, "]")) {
		if (!first && !eat(c, ",")) {
			refuse(c, MU_EPARSE, "expected ',' or ']'");
			break;
		}
		first = false;
		val_t x = unary(c);
		if (c->err)
			break;
		val_t r = relate(c, "==", a, x);
		if (r.t == V_BOOL && r.b)
			found = true;
		else if (r.t == V_ERR)
			err = true;
	}
	if (c->err)
		return (val_t){.t = V_ERR};
	if (!c->eval || a.t == V_DYN)
		return (val_t){.t = V_BOOL};
	if (found)
		return (val_t){.t = V_BOOL, .b = true};
	return err ? (val_t){.t = V_ERR} : (val_t){.t = V_BOOL, .b = false};
}

static val_t relation(cel_t *c)
{
	static const char *const ops[] = {"==", "!=", "<=", ">=", "<", ">"};
	val_t a = unary(c);
	if (c->err)
		return a;
	skip(c);
	for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {
		if (!eat(c, ops[k]))
			continue;
		val_t b = unary(c);
		return c->err ? b : relate(c, ops[k], a, b);
	}
	if (c->rule && eat(c, "in") && !is_id(*c->p, false))
		return in_list(c, a);
	if (eat(c, "in ") || eat(c, "+") || eat(c, "-") || eat(c, "*") || eat(c, "/") ||
	    eat(c, "%") || eat(c, "?"))
		refuse(c, MU_EINVAL, "operators other than comparisons, &&, || and ! are not "
		       "supported");
	return a;
}

/* Logic of && (and) or || (!and) over CEL's error absorption. */
static val_t logic(cel_t *c, bool and, val_t a, val_t b)
{
	int at = a.t == V_DYN ? V_BOOL : a.t, bt = b.t == V_DYN ? V_BOOL : b.t;
	if ((at != V_BOOL && at != V_ERR) || (bt != V_BOOL && bt != V_ERR)) {
		if (!c->eval)
			refuse(c, MU_EINVAL, "%s needs bools", and ? "&&" : "||");
		return c->eval ? rerr(c, "no such overload: %s", and ? "&&" : "||") : (val_t){.t = V_ERR};
	}
	if (!c->eval)
		return (val_t){.t = V_BOOL};
	bool decides = !and; /* the value that decides alone */
	if ((at == V_BOOL && a.b == decides) || (bt == V_BOOL && b.b == decides))
		return (val_t){.t = V_BOOL, .b = decides};
	if (at == V_ERR || bt == V_ERR)
		return (val_t){.t = V_ERR};
	return (val_t){.t = V_BOOL, .b = !decides};
}

static val_t and_expr(cel_t *c)
{
	val_t a = relation(c);
	while (!c->err && eat(c, "&&"))
		a = logic(c, true, a, relation(c));
	return a;
}

static val_t expr(cel_t *c)
{
	if (++c->depth > MU_CEL_MAX_DEPTH) {
		refuse(c, MU_ELIMIT, "nested deeper than %d", MU_CEL_MAX_DEPTH);
		return (val_t){.t = V_ERR};
	}
	val_t a = and_expr(c);
	while (!c->err && eat(c, "||"))
		a = logic(c, false, a, and_expr(c));
	c->depth--;
	return a;
}

/* What one run reads: a device, a rule's document, or nothing (check). */
typedef struct input {
	const mu_cel_device_t *dev;
	const mu_cel_doc_t *doc;
	const void *self, *old;
	bool rule;
} input_t;

/* Runs the whole text on in. */
static int run(const char *text, const input_t *in, val_t *out, bool *used_old, char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
	if (!text || strlen(text) > MU_CEL_MAX_LEN) {
		if (err && errlen)
			snprintf(err, errlen, "CEL: expected an expression of at most %d bytes",
				 MU_CEL_MAX_LEN);
		return MU_EINVAL;
	}
	cel_t *c = calloc(1, sizeof *c);
	if (!c)
		return MU_ENOMEM;
	c->start = c->p = text;
	c->dev = in->dev;
	c->doc = in->doc;
	c->self = in->self;
	c->old = in->old;
	c->rule = in->rule;
	c->eval = in->dev || in->doc;
	c->msg = err;
	c->msglen = errlen;
	*out = expr(c);
	skip(c);
	if (!c->err && *c->p && (strchr("?+-*/%[", *c->p) || !strncmp(c->p, "in ", 3)))
		refuse(c, MU_EINVAL, "operator '%.2s' is not supported (comparisons, &&, || "
		       "and ! are)", c->p);
	else if (!c->err && *c->p)
		refuse(c, MU_EPARSE, "unexpected '%c'", *c->p);
	if (!c->err && out->t != V_BOOL && out->t != V_DYN && out->t != V_ERR)
		refuse(c, MU_EINVAL, "the expression must yield a bool");
	int rc = c->err;
	if (used_old)
		*used_old = c->used_old;
	if (!rc && out->t == V_DYN && c->eval)
		rc = MU_EINVAL;
	if (!rc && out->t == V_ERR) {
		rc = strstr(c->rmsg, "has no") || strstr(c->rmsg, "no such key") ? MU_ENOENT : MU_EINVAL;
		if (err && errlen)
			snprintf(err, errlen, "CEL: %s", c->rmsg);
	}
	free(c);
	return rc;
}

int mu_cel_check(const char *expr_text, char *err, size_t errlen)
{
	val_t v;
	input_t in = {0};
	return run(expr_text, &in, &v, NULL, err, errlen);
}

int mu_cel_eval(const char *expr_text, const mu_cel_device_t *dev, bool *match,
		char *err, size_t errlen)
{
	val_t v;
	static const mu_cel_device_t none = {0};
	input_t in = {.dev = dev ? dev : &none};
	int rc = run(expr_text, &in, &v, NULL, err, errlen);
	*match = rc == MU_OK && v.t == V_BOOL && v.b;
	return rc;
}

int mu_cel_rule_check(const char *expr_text, char *err, size_t errlen)
{
	return mu_cel_rule_compile(expr_text, NULL, err, errlen);
}

int mu_cel_rule_compile(const char *expr_text, bool *transition, char *err, size_t errlen)
{
	val_t v;
	input_t in = {.rule = true};
	bool used = false;
	int rc = run(expr_text, &in, &v, &used, err, errlen);
	if (transition)
		*transition = rc == MU_OK && used;
	return rc;
}

int mu_cel_rule_eval(const char *expr_text, const mu_cel_doc_t *doc, const void *self, bool *ok,
		     char *err, size_t errlen)
{
	return mu_cel_rule_eval_old(expr_text, doc, self, NULL, ok, err, errlen);
}

int mu_cel_rule_eval_old(const char *expr_text, const mu_cel_doc_t *doc, const void *self, const void *old,
			 bool *ok, char *err, size_t errlen)
{
	val_t v;
	input_t in = {.doc = doc, .self = self, .old = old, .rule = true};
	int rc = doc && self ? run(expr_text, &in, &v, NULL, err, errlen) : MU_EINVAL;
	*ok = rc == MU_OK && v.t == V_BOOL && v.b;
	return rc;
}
