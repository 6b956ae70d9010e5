/*
 * request.c - socket-free parsing of what arrives on the wire: request
 * targets (path and query string, percent-decoded) into a route and the
 * query options the API understands, HTTP/1.x heads (start line and
 * headers; the client and the fuzzer use it, libmicrohttpd parses the
 * server's), and the Content-Type and Accept values.
 *
 * Everything is bounded by fixed buffers: a field that does not fit is an
 * error, never truncated silently.  Nothing allocates.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/apiserver_int.h"
#include "apiserver/schema.h"

#define MAX_SEGS 12

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Percent-decodes s[0..n) into out (cap bytes with the NUL); '+' becomes a
 * space when plus is set.  Fails on bad escapes, NUL bytes or overflow. */
static int decode(const char *s, size_t n, bool plus, char *out, size_t cap)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '%') {
			int h, l;
			if (i + 2 >= n)
				return MU_EPARSE;
			h = hexval(s[i + 1]);
			l = hexval(s[i + 2]);
			if (h < 0 || l < 0)
				return MU_EPARSE;
			c = (char)(h * 16 + l);
			i += 2;
		} else if (c == '+' && plus) {
			c = ' ';
		}
		if (c == '\0' || o + 1 >= cap)
			return MU_EPARSE;
		out[o++] = c;
	}
	out[o] = '\0';
	return MU_OK;
}

static bool truthy(const char *v)
{
	return !strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "True");
}

/* A non-negative decimal integer below 10^12. */
static int parse_nonneg(const char *v, int64_t *out)
{
	if (!*v || strlen(v) > 12 || strspn(v, "0123456789") != strlen(v))
		return MU_EPARSE;
	*out = strtoll(v, NULL, 10);
	return MU_OK;
}

/* Copies v into a fixed field, failing when it does not fit. */
#define SETF(field) (snprintf((field), sizeof(field), "%s", v) < (int)sizeof(field) ? MU_OK : MU_EPARSE)

/* Applies one query parameter to q. */
static int query_param(mu__query_t *q, const char *k, const char *v, char *err, size_t errlen)
{
	int rc = MU_OK;
	if (!strcmp(k, "watch"))
		q->watch = truthy(v);
	else if (!strcmp(k, "allowWatchBookmarks"))
		q->bookmarks = truthy(v);
	else if (!strcmp(k, "sendInitialEvents"))
		q->send_initial = truthy(v);
	else if (!strcmp(k, "dryRun"))
		q->dry_run = !strcmp(v, "All");
	else if (!strcmp(k, "limit"))
		rc = parse_nonneg(v, &q->limit), q->has_limit = q->limit > 0;
	else if (!strcmp(k, "timeoutSeconds"))
		rc = parse_nonneg(v, &q->timeout_s);
	else if (!strcmp(k, "gracePeriodSeconds"))
		rc = parse_nonneg(v, &q->grace), q->has_grace = true;
	else if (!strcmp(k, "continue"))
		rc = SETF(q->cont);
	else if (!strcmp(k, "labelSelector"))
		rc = SETF(q->label_sel);
	else if (!strcmp(k, "fieldSelector"))
		rc = SETF(q->field_sel);
	else if (!strcmp(k, "resourceVersion"))
		rc = SETF(q->rv), q->has_rv = *v != '\0';
	else if (!strcmp(k, "resourceVersionMatch"))
		rc = SETF(q->rv_match);
	else if (!strcmp(k, "propagationPolicy"))
		rc = SETF(q->propagation);
	else if (!strcmp(k, "fieldManager"))
		rc = SETF(q->field_manager);
	else if (!strcmp(k, "force"))
		q->force = truthy(v);
	else if (!strcmp(k, "fieldValidation")) {
		if (!strcmp(v, "Strict"))
			q->field_validation = MU__FV_STRICT;
		else if (!strcmp(v, "Ignore"))
			q->field_validation = MU__FV_IGNORE;
		else if (!strcmp(v, "Warn") || !*v)
			q->field_validation = MU__FV_WARN;
		else {
			snprintf(err, errlen, "fieldValidation: Unsupported value: \"%.40s\": supported values: "
				 "\"Ignore\", \"Warn\", \"Strict\"", v);
			return MU_EPARSE;
		}
	}
	else if (!strcmp(k, "includeObject")) {
		if (!strcmp(v, "None"))
			q->include_object = 1;
		else if (!strcmp(v, "Object"))
			q->include_object = 2;
		else if (!strcmp(v, "Metadata") || !*v)
			q->include_object = 0;
		else
			rc = MU_EPARSE;
	}
	if (rc != MU_OK)
		snprintf(err, errlen, "invalid value for query parameter %s", k);
	return rc;
}

static int parse_query(const char *s, mu__query_t *q, char *err, size_t errlen)
{
	char k[64], v[4096];
	while (*s) {
		const char *amp = strchr(s, '&');
		size_t n = amp ? (size_t)(amp - s) : strlen(s);
		const char *eq = memchr(s, '=', n);
		size_t kn = eq ? (size_t)(eq - s) : n;
		if (n > 0) {
			if (decode(s, kn, true, k, sizeof k) != MU_OK) {
				/* an unknown, overlong or odd key: ignored, as kube does */
				k[0] = '\0';
			}
			if (decode(eq ? eq + 1 : s + n, eq ? n - kn - 1 : 0, true, v, sizeof v) != MU_OK) {
				snprintf(err, errlen, "malformed query string");
				return MU_EPARSE;
			}
			if (k[0] && query_param(q, k, v, err, errlen) != MU_OK)
				return MU_EPARSE;
		}
		s += n + (amp != NULL);
	}
	return MU_OK;
}

static int copy_seg(char *dst, size_t cap, const char *src)
{
	if (strlen(src) >= cap)
		return MU_EPARSE;
	memcpy(dst, src, strlen(src) + 1);
	return MU_OK;
}

/* Fills the resource part of a route from the segments after /api/v1 or
 * /apis/G/V. */
static int resource_route(mu__route_t *r, char segs[][256], int n)
{
	int i = 0, rc = MU_OK;
	if (i < n && !strcmp(segs[i], "watch")) {
		r->watch_prefix = true;
		i++;
	}
	n -= i;
	char (*s)[256] = segs + i;
	if (n == 0)
		return MU_EPARSE;
	r->kind = MU__R_RESOURCE;
	if (!strcmp(s[0], "namespaces") && n >= 2) {
		if (n == 2 || (n == 3 && r->core && (!strcmp(s[2], "status") || !strcmp(s[2], "finalize")))) {
			rc |= copy_seg(r->plural, sizeof r->plural, "namespaces");
			rc |= copy_seg(r->name, sizeof r->name, s[1]);
			if (n == 3)
				rc |= copy_seg(r->sub, sizeof r->sub, s[2]);
			return rc ? MU_EPARSE : MU_OK;
		}
		if (n > 5)
			return MU_EPARSE;
		rc |= copy_seg(r->ns, sizeof r->ns, s[1]);
		rc |= copy_seg(r->plural, sizeof r->plural, s[2]);
		if (n > 3)
			rc |= copy_seg(r->name, sizeof r->name, s[3]);
		if (n > 4)
			rc |= copy_seg(r->sub, sizeof r->sub, s[4]);
		return rc ? MU_EPARSE : MU_OK;
	}
	if (n > 3)
		return MU_EPARSE;
	rc |= copy_seg(r->plural, sizeof r->plural, s[0]);
	if (n > 1)
		rc |= copy_seg(r->name, sizeof r->name, s[1]);
	if (n > 2)
		rc |= copy_seg(r->sub, sizeof r->sub, s[2]);
	return rc ? MU_EPARSE : MU_OK;
}

/* Classifies decoded path segments. */
static int classify(mu__route_t *r, char segs[][256], int n)
{
	if (n == 0)
		return MU_OK;
	if (n == 1 && !strcmp(segs[0], "version")) {
		r->kind = MU__R_VERSION;
	} else if (!strcmp(segs[0], "healthz") || !strcmp(segs[0], "readyz") || !strcmp(segs[0], "livez")) {
		r->kind = MU__R_HEALTH;
	} else if (!strcmp(segs[0], "openapi") && n >= 2) {
		if (!strcmp(segs[1], "v2") && n == 2)
			r->kind = MU__R_OPENAPI_V2;
		else if (!strcmp(segs[1], "v3") && n == 2)
			r->kind = MU__R_OPENAPI_V3;
		else if (!strcmp(segs[1], "v3") && n == 4 && !strcmp(segs[2], "api")) {
			r->kind = MU__R_OPENAPI_V3; /* /openapi/v3/api/V */
			r->core = true;
			return copy_seg(r->version, sizeof r->version, segs[3]);
		} else if (!strcmp(segs[1], "v3") && n == 5 && !strcmp(segs[2], "apis")) {
			r->kind = MU__R_OPENAPI_V3; /* /openapi/v3/apis/G/V */
			if (copy_seg(r->group, sizeof r->group, segs[3]) != MU_OK)
				return MU_EPARSE;
			return copy_seg(r->version, sizeof r->version, segs[4]);
		}
	} else if (!strcmp(segs[0], "api")) {
		r->core = true;
		if (n == 1)
			r->kind = MU__R_API;
		else if (copy_seg(r->version, sizeof r->version, segs[1]) != MU_OK)
			return MU_EPARSE;
		else if (n == 2)
			r->kind = MU__R_GV;
		else
			return resource_route(r, segs + 2, n - 2);
	} else if (!strcmp(segs[0], "apis")) {
		if (n == 1) {
			r->kind = MU__R_APIS;
			return MU_OK;
		}
		if (copy_seg(r->group, sizeof r->group, segs[1]) != MU_OK)
			return MU_EPARSE;
		if (n == 2) {
			r->kind = MU__R_GROUP;
			return MU_OK;
		}
		if (copy_seg(r->version, sizeof r->version, segs[2]) != MU_OK)
			return MU_EPARSE;
		if (n == 3)
			r->kind = MU__R_GV;
		else
			return resource_route(r, segs + 3, n - 3);
	}
	return MU_OK;
}

int mu__parse_target(const char *target, mu__route_t *r, mu__query_t *q, char *err, size_t errlen)
{
	memset(r, 0, sizeof *r);
	memset(q, 0, sizeof *q);
	if (target[0] != '/') {
		snprintf(err, errlen, "the request target must start with /");
		return MU_EPARSE;
	}
	const char *qm = strchr(target, '?');
	size_t plen = qm ? (size_t)(qm - target) : strlen(target);
	char segs[MAX_SEGS][256];
	int n = 0;
	size_t i = 1;
	while (i < plen) {
		size_t j = i;
		while (j < plen && target[j] != '/')
			j++;
		if (j > i) {
			if (n == MAX_SEGS || decode(target + i, j - i, false, segs[n], sizeof segs[n]) != MU_OK ||
			    strchr(segs[n], '/')) {
				snprintf(err, errlen, "malformed request path");
				return MU_EPARSE;
			}
			n++;
		}
		i = j + 1;
	}
	if (classify(r, segs, n) != MU_OK) {
		r->kind = MU__R_UNKNOWN;
		snprintf(err, errlen, "malformed request path");
		return MU_EPARSE;
	}
	if (r->kind == MU__R_RESOURCE && r->watch_prefix)
		q->watch = true;
	if (qm && parse_query(qm + 1, q, err, errlen) != MU_OK)
		return MU_EPARSE;
	if (r->watch_prefix)
		q->watch = true;
	return MU_OK;
}

/* --- heads -------------------------------------------------------------- */

static bool token_char(char c)
{
	return isalnum((unsigned char)c) || strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* Splits the start line into at most three parts (the last takes the rest). */
static int start_line(const char *s, size_t n, mu__head_t *h)
{
	int part = 0;
	size_t i = 0;
	while (part < 3) {
		size_t j = i;
		if (part < 2)
			while (j < n && s[j] != ' ')
				j++;
		else
			j = n;
		if (j - i >= sizeof h->start[part] || (part < 2 && j == i))
			return MU_EPARSE;
		memcpy(h->start[part], s + i, j - i);
		h->start[part][j - i] = '\0';
		part++;
		if (j >= n)
			break;
		i = j + 1;
	}
	return part >= 2 ? MU_OK : MU_EPARSE;
}

int mu__parse_head(const char *buf, size_t len, mu__head_t *h)
{
	memset(h, 0, sizeof *h);
	size_t end = 0;
	for (size_t i = 0; i + 1 < len; i++) {
		if (buf[i] == '\n' && buf[i + 1] == '\n') {
			end = i + 2;
			break;
		}
		if (i + 3 < len && !memcmp(buf + i, "\r\n\r\n", 4)) {
			end = i + 4;
			break;
		}
	}
	if (!end)
		return len > 65536 ? MU_EPARSE : 1;
	if (memchr(buf, '\0', end))
		return MU_EPARSE;
	h->head_len = end;
	size_t i = 0;
	bool first = true;
	while (i < end) {
		size_t j = i;
		while (j < end && buf[j] != '\n')
			j++;
		size_t ln = j - i;
		if (ln && buf[i + ln - 1] == '\r')
			ln--;
		if (ln == 0)
			break;
		if (first) {
			if (start_line(buf + i, ln, h) != MU_OK)
				return MU_EPARSE;
			first = false;
		} else {
			const char *l = buf + i;
			size_t c = 0;
			while (c < ln && token_char(l[c]))
				c++;
			if (c == 0 || c >= ln || l[c] != ':' || c >= sizeof h->hdr[0].name ||
			    h->nhdr == (int)(sizeof h->hdr / sizeof *h->hdr))
				return MU_EPARSE;
			size_t v = c + 1, ve = ln;
			while (v < ve && (l[v] == ' ' || l[v] == '\t'))
				v++;
			while (ve > v && (l[ve - 1] == ' ' || l[ve - 1] == '\t'))
				ve--;
			if (ve - v >= sizeof h->hdr[0].value)
				return MU_EPARSE;
			memcpy(h->hdr[h->nhdr].name, l, c);
			h->hdr[h->nhdr].name[c] = '\0';
			memcpy(h->hdr[h->nhdr].value, l + v, ve - v);
			h->hdr[h->nhdr].value[ve - v] = '\0';
			h->nhdr++;
		}
		i = j + 1;
	}
	return first ? MU_EPARSE : MU_OK;
}

static int ci_cmp(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return 1;
	return *a != *b;
}

const char *mu__head_get(const mu__head_t *h, const char *name)
{
	for (int i = 0; i < h->nhdr; i++)
		if (!ci_cmp(h->hdr[i].name, name))
			return h->hdr[i].value;
	return NULL;
}

int mu__content_type(const char *ct)
{
	static const struct { const char *name; int kind; } types[] = {
		{"application/json", MU__CT_JSON},
		{"application/merge-patch+json", MU__CT_MERGE},
		{"application/strategic-merge-patch+json", MU__CT_STRATEGIC},
		{"application/apply-patch+yaml", MU__CT_APPLY},
		{"application/json-patch+json", MU__CT_JSONPATCH},
		{"application/yaml", MU__CT_YAML},
		{"application/vnd.kubernetes.protobuf", MU__CT_PROTOBUF},
	};
	if (!ct || !*ct)
		return MU__CT_JSON;
	char base[64];
	size_t n = strcspn(ct, ";");
	while (n && ct[n - 1] == ' ')
		n--;
	if (n >= sizeof base)
		return MU__CT_OTHER;
	for (size_t i = 0; i < n; i++)
		base[i] = (char)tolower((unsigned char)ct[i]);
	base[n] = '\0';
	for (size_t i = 0; i < sizeof types / sizeof *types; i++)
		if (!strcmp(base, types[i].name))
			return types[i].kind;
	return MU__CT_OTHER;
}

bool mu__accept_table(const char *accept)
{
	return accept && strstr(accept, "as=Table") && strstr(accept, "g=meta.k8s.io");
}
