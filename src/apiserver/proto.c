/*
 * proto.c - protobuf request bodies to JSON, table-driven (proto_gen.c).
 *
 * The wire format: each field is a varint key (number << 3 | wire type)
 * then a varint (0), 8 bytes (1), a length-delimited run (2) or 4 bytes
 * (5).  A message field is a nested run; a repeated field repeats its key
 * (or packs scalars in one run); a map is a repeated entry message with key
 * 1 and value 2.  Kubernetes' own types with a JSON form of their own (Time,
 * Quantity, IntOrString, RawExtension) are turned into that form.  Fields
 * the table does not know are skipped, as a protobuf reader does.
 *
 * Every read checks the remaining length; recursion is bounded by
 * MU__MAX_DEPTH.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/apiserver_int.h"
#include "apiserver/proto.h"

typedef struct rd {
	const uint8_t *p, *end;
} rd_t;

static int rvarint(rd_t *r, uint64_t *v)
{
	*v = 0;
	for (int s = 0; s < 64; s += 7) {
		if (r->p >= r->end)
			return MU_EPARSE;
		uint8_t c = *r->p++;
		*v |= (uint64_t)(c & 0x7f) << s;
		if (c < 0x80)
			return MU_OK;
	}
	return MU_EPARSE;
}

/* Reads one field's key and value: a varint/fixed value in *v, or a run
 * in *run and *runlen. */
static int rfield(rd_t *r, unsigned *num, int *wt, uint64_t *v, const uint8_t **run, size_t *runlen)
{
	uint64_t key;
	if (rvarint(r, &key) != MU_OK || (key >> 3) == 0 || (key >> 3) > 0x1fffffff)
		return MU_EPARSE;
	*num = (unsigned)(key >> 3);
	*wt = (int)(key & 7);
	*v = 0;
	switch (*wt) {
	case 0:
		return rvarint(r, v);
	case 1:
	case 5: {
		size_t n = *wt == 1 ? 8 : 4;
		if ((size_t)(r->end - r->p) < n)
			return MU_EPARSE;
		for (size_t i = 0; i < n; i++)
			*v |= (uint64_t)r->p[i] << (8 * i);
		r->p += n;
		return MU_OK;
	}
	case 2: {
		uint64_t n;
		if (rvarint(r, &n) != MU_OK || n > (uint64_t)(r->end - r->p))
			return MU_EPARSE;
		*run = r->p;
		*runlen = (size_t)n;
		r->p += n;
		return MU_OK;
	}
	default:
		return MU_EPARSE;
	}
}

static json_t *decode_msg(const uint8_t *b, size_t n, int msg, int depth);

/* A scalar from a varint or fixed value. */
static json_t *scalar(int type, uint64_t v)
{
	switch (type) {
	case MU__PT_BOOL:
		return json_boolean(v != 0);
	case MU__PT_SINT:
		return json_integer((json_int_t)((v >> 1) ^ (~(v & 1) + 1)));
	case MU__PT_DOUBLE: {
		double d;
		memcpy(&d, &v, sizeof d);
		return json_real(d);
	}
	case MU__PT_FLOAT: {
		uint32_t u = (uint32_t)v;
		float f;
		memcpy(&f, &u, sizeof f);
		return json_real(f);
	}
	default:
		return json_integer((json_int_t)v);
	}
}

/* A value of field f from a run (strings, bytes, messages, packed). */
static json_t *run_value(const mu__pfield_t *f, const uint8_t *run, size_t len, int depth)
{
	if (f->type == MU__PT_STRING)
		return json_stringn((const char *)run, len);
	if (f->type == MU__PT_BYTES) {
		char *b = mu__b64enc(run, len);
		json_t *j = b ? json_string(b) : NULL;
		free(b);
		return j;
	}
	if (f->type == MU__PT_MSG)
		return decode_msg(run, len, f->msg, depth + 1);
	return NULL;
}

/* Special messages: Time, Quantity, IntOrString, raw JSON, Duration. */
static json_t *special(const uint8_t *b, size_t n, int kind)
{
	rd_t r = {b, b + n};
	uint64_t ints[4] = {0};
	const uint8_t *runs[4] = {NULL};
	size_t lens[4] = {0};
	while (r.p < r.end) {
		unsigned num;
		int wt;
		uint64_t v;
		const uint8_t *run = NULL;
		size_t rl = 0;
		if (rfield(&r, &num, &wt, &v, &run, &rl) != MU_OK)
			return NULL;
		if (num < 4) {
			ints[num] = v;
			runs[num] = run;
			lens[num] = rl;
		}
	}
	char buf[64];
	switch (kind) {
	case MU__PS_TIME:
	case MU__PS_MICROTIME:
		if (!ints[1] && !ints[2])
			return json_null(); /* a zero Time: JSON omits it */
		mu__rfc3339_format((int64_t)ints[1] * 1000000 + (int64_t)(ints[2] / 1000), kind == MU__PS_MICROTIME, buf,
				   sizeof buf);
		return json_string(buf);
	case MU__PS_QUANTITY:
		return runs[1] ? json_stringn((const char *)runs[1], lens[1]) : json_string("0");
	case MU__PS_INTORSTRING:
		if (ints[1] == 1)
			return runs[3] ? json_stringn((const char *)runs[3], lens[3]) : json_string("");
		return json_integer((json_int_t)(int32_t)ints[2]);
	case MU__PS_RAW:
		return runs[1] ? json_loadb((const char *)runs[1], lens[1], JSON_REJECT_DUPLICATES, NULL) : json_object();
	case MU__PS_DURATION:
		snprintf(buf, sizeof buf, "%llds", (long long)((int64_t)ints[1] / 1000000000));
		return json_string(buf);
	default:
		return NULL;
	}
}

static const mu__pfield_t *find(const mu__pmsg_t *m, unsigned num)
{
	for (int i = 0; i < m->n; i++)
		if (mu__pfields[m->first + i].num == num)
			return &mu__pfields[m->first + i];
	return NULL;
}

/* Adds value v (stolen) of field f to o: set, appended, or a map entry. */
static int add(json_t *o, const mu__pfield_t *f, json_t *v)
{
	if (!v)
		return MU_EPARSE;
	if (!f->repeated && (json_is_null(v) || (json_is_string(v) && !json_string_length(v)))) {
		/* Go's protobuf code writes every non-pointer field; its JSON
		 * omits empty strings and zero times (omitempty) */
		json_decref(v);
		return MU_OK;
	}
	if (!f->repeated)
		return json_object_set_new(o, f->json, v) ? MU_ENOMEM : MU_OK;
	json_t *c = json_object_get(o, f->json);
	if (f->type == MU__PT_MSG && f->msg >= 0 && mu__pmsgs[f->msg].map_entry) {
		if (!c) {
			c = json_object();
			json_object_set_new(o, f->json, c);
		}
		const char *k = json_string_value(json_object_get(v, "key"));
		json_t *val = json_object_get(v, "value");
		int rc = k ? json_object_set_new(c, k, val ? json_incref(val) : json_string("")) : MU_EPARSE;
		json_decref(v);
		return rc ? MU_EPARSE : MU_OK;
	}
	if (!c) {
		c = json_array();
		json_object_set_new(o, f->json, c);
	}
	return json_array_append_new(c, v) ? MU_ENOMEM : MU_OK;
}

static json_t *decode_msg(const uint8_t *b, size_t n, int msg, int depth)
{
	if (depth > MU__MAX_DEPTH || msg < 0 || msg >= mu__npmsgs)
		return NULL;
	const mu__pmsg_t *m = &mu__pmsgs[msg];
	if (m->special)
		return special(b, n, m->special);
	json_t *o = json_object();
	rd_t r = {b, b + n};
	while (o && r.p < r.end) {
		unsigned num;
		int wt;
		uint64_t v;
		const uint8_t *run = NULL;
		size_t rl = 0;
		if (rfield(&r, &num, &wt, &v, &run, &rl) != MU_OK)
			goto bad;
		const mu__pfield_t *f = find(m, num);
		if (!f)
			continue;
		bool is_run = f->type == MU__PT_STRING || f->type == MU__PT_BYTES || f->type == MU__PT_MSG;
		if (is_run != (wt == 2) && !(wt == 2 && f->repeated))
			goto bad;
		if (is_run) {
			if (add(o, f, run_value(f, run, rl, depth)) != MU_OK)
				goto bad;
		} else if (wt == 2) { /* packed scalars */
			rd_t pr = {run, run + rl};
			while (pr.p < pr.end) {
				uint64_t pv = 0;
				if (f->type == MU__PT_FIXED64 || f->type == MU__PT_DOUBLE ||
				    f->type == MU__PT_FIXED32 || f->type == MU__PT_FLOAT) {
					size_t w = f->type == MU__PT_FIXED32 || f->type == MU__PT_FLOAT ? 4 : 8;
					if ((size_t)(pr.end - pr.p) < w)
						goto bad;
					for (size_t i = 0; i < w; i++)
						pv |= (uint64_t)pr.p[i] << (8 * i);
					pr.p += w;
				} else if (rvarint(&pr, &pv) != MU_OK) {
					goto bad;
				}
				if (add(o, f, scalar(f->type, pv)) != MU_OK)
					goto bad;
			}
		} else if (add(o, f, scalar(f->type, v)) != MU_OK) {
			goto bad;
		}
	}
	return o;
bad:
	json_decref(o);
	return NULL;
}

json_t *mu__proto_decode(const void *body, size_t len, char *err, size_t errlen)
{
	const uint8_t *b = body;
	if (len < 4 || memcmp(b, "k8s\0", 4)) {
		snprintf(err, errlen, "the protobuf body does not start with the Kubernetes magic number");
		return NULL;
	}
	rd_t r = {b + 4, b + len};
	char av[128] = "", kind[128] = "";
	const uint8_t *raw = NULL;
	size_t rawlen = 0;
	while (r.p < r.end) {
		unsigned num;
		int wt;
		uint64_t v;
		const uint8_t *run = NULL;
		size_t rl = 0;
		if (rfield(&r, &num, &wt, &v, &run, &rl) != MU_OK || (wt != 2 && num <= 4)) {
			snprintf(err, errlen, "the protobuf body is malformed");
			return NULL;
		}
		if (num == 1) { /* TypeMeta */
			rd_t t = {run, run + rl};
			while (t.p < t.end) {
				unsigned n2;
				int w2;
				uint64_t v2;
				const uint8_t *r2 = NULL;
				size_t l2 = 0;
				if (rfield(&t, &n2, &w2, &v2, &r2, &l2) != MU_OK) {
					snprintf(err, errlen, "the protobuf body is malformed");
					return NULL;
				}
				if ((n2 == 1 || n2 == 2) && w2 == 2)
					snprintf(n2 == 1 ? av : kind, sizeof av, "%.*s", (int)(l2 < 127 ? l2 : 127), (const char *)r2);
			}
		} else if (num == 2) {
			raw = run;
			rawlen = rl;
		} else if (num == 3 && rl) {
			snprintf(err, errlen, "protobuf bodies with a content encoding are not supported");
			return NULL;
		}
	}
	for (int i = 0; i < mu__nproots; i++) {
		const mu__proot_t *p = &mu__proots[i];
		char want[128];
		snprintf(want, sizeof want, "%s%s%s", p->group, *p->group ? "/" : "", p->version);
		if (strcmp(want, av) || strcmp(p->kind, kind))
			continue;
		json_t *o = decode_msg(raw ? raw : (const uint8_t *)"", rawlen, p->msg, 0);
		if (!o) {
			snprintf(err, errlen, "the protobuf %s %s is malformed", av, kind);
			return NULL;
		}
		json_object_set_new(o, "apiVersion", json_string(av));
		json_object_set_new(o, "kind", json_string(kind));
		return o;
	}
	snprintf(err, errlen, "protobuf bodies of %s %s are not supported: send JSON", av, kind);
	return NULL;
}
