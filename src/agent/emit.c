/*
 * emit.c - growable strings and a small document tree (maps, lists, strings,
 * integers) written as JSON or as block YAML, so that both formats of the
 * NodeResourceTopology come from one builder and always hold the same data.
 *
 * Strings are escaped the same way in both: '"', '\\' and control bytes as
 * JSON escapes (which YAML double-quoted scalars share), and bytes >= 0x7f as
 * \u00XX, so the output is plain ASCII whatever a recorded tree held.  The
 * agent only puts validated ASCII in, so the last case is a safety net.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "agent/sysfs.h"

void mu__sbuf_release(mu__sbuf_t *b)
{
	free(b->s);
	memset(b, 0, sizeof *b);
}

void mu__sbuf_printf(mu__sbuf_t *b, const char *fmt, ...)
{
	if (b->err)
		return;
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (k < 0) {
		b->err = MU_EINVAL;
		return;
	}
	if (b->n + (size_t)k + 1 > b->cap) {
		size_t ncap = b->cap ? b->cap : 64;
		while (ncap < b->n + (size_t)k + 1)
			ncap *= 2;
		char *ns = realloc(b->s, ncap);
		if (!ns) {
			b->err = MU_ENOMEM;
			return;
		}
		b->s = ns;
		b->cap = ncap;
	}
	va_start(ap, fmt);
	vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
	va_end(ap);
	b->n += (size_t)k;
}

void mu__sbuf_reset(mu__sbuf_t *b)
{
	b->n = 0;
	if (b->s)
		b->s[0] = '\0';
}

const char *mu__sbuf_str(const mu__sbuf_t *b)
{
	return b->s ? b->s : "";
}

static void doc_free(mu__doc_t *d)
{
	while (d) {
		mu__doc_t *next = d->next;
		doc_free(d->head);
		free(d->str);
		free(d);
		d = next;
	}
}

/* Appends a new node of kind under parent; NULL (err set) on failure. */
static mu__doc_t *doc_new(mu__docb_t *b, mu__doc_t *parent, const char *key,
			  mu__doc_kind_t kind)
{
	if (!parent || b->err)
		return NULL;
	mu__doc_t *d = calloc(1, sizeof *d);
	if (!d) {
		b->err = MU_ENOMEM;
		return NULL;
	}
	d->kind = kind;
	d->key = parent->kind == MU__DOC_MAP ? key : NULL;
	if (parent->tail)
		parent->tail->next = d;
	else
		parent->head = d;
	parent->tail = d;
	return d;
}

int mu__docb_init(mu__docb_t *b)
{
	b->err = MU_OK;
	b->root = calloc(1, sizeof *b->root);
	return b->root ? MU_OK : MU_ENOMEM;
}

void mu__docb_release(mu__docb_t *b)
{
	doc_free(b->root);
	b->root = NULL;
}

mu__doc_t *mu__doc_add(mu__docb_t *b, mu__doc_t *parent, const char *key,
		       mu__doc_kind_t kind)
{
	return doc_new(b, parent, key, kind);
}

void mu__doc_str(mu__docb_t *b, mu__doc_t *parent, const char *key,
		 const char *s)
{
	mu__doc_t *d = doc_new(b, parent, key, MU__DOC_STR);
	if (!d)
		return;
	size_t n = strlen(s);
	d->str = malloc(n + 1);
	if (!d->str)
		b->err = MU_ENOMEM;
	else
		memcpy(d->str, s, n + 1);
}

void mu__doc_int(mu__docb_t *b, mu__doc_t *parent, const char *key, int64_t v)
{
	mu__doc_t *d = doc_new(b, parent, key, MU__DOC_INT);
	if (d)
		d->i = v;
}

static void put_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void put_scalar(FILE *f, const mu__doc_t *d)
{
	if (d->kind == MU__DOC_STR)
		put_str(f, d->str);
	else
		fprintf(f, "%lld", (long long)d->i);
}

static bool is_scalar(const mu__doc_t *d)
{
	return d->kind == MU__DOC_STR || d->kind == MU__DOC_INT;
}

/* True when d is a map or list whose children are all scalars. */
static bool is_flat(const mu__doc_t *d)
{
	for (const mu__doc_t *c = d->head; c; c = c->next)
		if (!is_scalar(c))
			return false;
	return true;
}

/* Writes d (not a scalar) as JSON at indent; recursion depth is the tree's
 * (at most 5 for a NodeResourceTopology). */
static void json_node(FILE *f, const mu__doc_t *d, int indent)
{
	bool map = d->kind == MU__DOC_MAP, flat = is_flat(d);
	fputc(map ? '{' : '[', f);
	for (const mu__doc_t *c = d->head; c; c = c->next) {
		if (flat)
			fputs(c == d->head ? "" : ", ", f);
		else
			fprintf(f, "%s\n%*s", c == d->head ? "" : ",", indent + 2, "");
		if (map) {
			put_str(f, c->key);
			fputs(": ", f);
		}
		if (is_scalar(c))
			put_scalar(f, c);
		else
			json_node(f, c, indent + 2);
	}
	if (!flat && d->head)
		fprintf(f, "\n%*s", indent, "");
	fputc(map ? '}' : ']', f);
}

int mu__doc_write_json(const mu__doc_t *d, FILE *f)
{
	json_node(f, d, 0);
	fputc('\n', f);
	return ferror(f) ? MU_EIO : MU_OK;
}

static void yaml_block(FILE *f, const mu__doc_t *d, int indent, bool inline1);

/* Writes the value of child c after "key:" or "-". */
static void yaml_value(FILE *f, const mu__doc_t *c, int indent, bool in_list)
{
	if (is_scalar(c)) {
		fputc(' ', f);
		put_scalar(f, c);
		fputc('\n', f);
	} else if (!c->head) {
		fputs(c->kind == MU__DOC_MAP ? " {}\n" : " []\n", f);
	} else if (in_list && c->kind == MU__DOC_MAP) {
		fputc(' ', f);
		yaml_block(f, c, indent + 2, true);
	} else {
		fputc('\n', f);
		yaml_block(f, c, indent + 2, false);
	}
}

/* Writes the children of d (a non-empty map or list) at indent; inline1:
 * the first line's indent is already written (a map item of a list). */
static void yaml_block(FILE *f, const mu__doc_t *d, int indent, bool inline1)
{
	for (const mu__doc_t *c = d->head; c; c = c->next) {
		if (!(inline1 && c == d->head))
			fprintf(f, "%*s", indent, "");
		if (d->kind == MU__DOC_MAP) {
			fprintf(f, "%s:", c->key);
			yaml_value(f, c, indent, false);
		} else {
			fputc('-', f);
			yaml_value(f, c, indent, true);
		}
	}
}

int mu__doc_write_yaml(const mu__doc_t *d, FILE *f)
{
	if (d->head)
		yaml_block(f, d, 0, false);
	else
		fputs("{}\n", f);
	return ferror(f) ? MU_EIO : MU_OK;
}
