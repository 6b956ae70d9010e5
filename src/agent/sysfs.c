/*
 * sysfs.c - parsers for the contents of the sysfs files the node agent
 * reads: cpulists, nodeN/meminfo, nodeN/distance, PCI class, vendor and
 * numa_node values, PCI addresses and muster's nvlink_peers lists.
 *
 * The input is untrusted and not NUL-terminated: every parser walks
 * [buf, buf + len) once, caps the numbers it accepts, and allocates only in
 * mu_cpulist_parse() (one array bounded by the number of commas).
 */
#include <stdlib.h>
#include <string.h>

#include "agent/sysfs.h"

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int hex_val(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The length of buf without trailing blanks. */
static size_t trim_len(const char *buf, size_t len)
{
	while (len && is_blank(buf[len - 1]))
		len--;
	return len;
}

/* Reads decimal digits at *p (before end) into *v, failing above max.
 * Advances *p past them.  MU_EPARSE when there is no digit. */
static int take_dec(const char **p, const char *end, int64_t max, int64_t *v)
{
	const char *s = *p;
	int64_t x = 0;
	if (s == end || !is_digit(*s))
		return MU_EPARSE;
	for (; s < end && is_digit(*s); s++) {
		x = x * 10 + (*s - '0');
		if (x > max)
			return MU_ERANGE;
	}
	*p = s;
	*v = x;
	return MU_OK;
}

/* Finds the next blank-separated token in [*p, end); false at the end. */
static bool next_token(const char **p, const char *end, const char **tok,
		       size_t *toklen)
{
	const char *s = *p;
	while (s < end && is_blank(*s))
		s++;
	if (s == end) {
		*p = s;
		return false;
	}
	const char *t = s;
	while (s < end && !is_blank(*s))
		s++;
	*tok = t;
	*toklen = (size_t)(s - t);
	*p = s;
	return true;
}

static bool tok_is(const char *tok, size_t len, const char *word)
{
	return strlen(word) == len && memcmp(tok, word, len) == 0;
}

int mu__sysfs_int(const char *buf, size_t len, int64_t min, int64_t max,
		  int64_t *out)
{
	const char *p = buf, *end = buf + trim_len(buf, len);
	bool neg = p < end && *p == '-';
	if (neg)
		p++;
	int64_t v;
	/* The magnitude is capped by the bound on its side (min is above
	 * INT64_MIN), so nothing overflows. */
	int64_t cap = neg ? (min < 0 ? -min : 0) : (max > 0 ? max : 0);
	int rc = take_dec(&p, end, cap, &v);
	if (rc != MU_OK)
		return rc;
	if (p != end)
		return MU_EPARSE;
	v = neg ? -v : v;
	if (v < min || v > max)
		return MU_ERANGE;
	*out = v;
	return MU_OK;
}

int mu__sysfs_hex(const char *buf, size_t len, uint32_t max, uint32_t *out)
{
	size_t n = trim_len(buf, len);
	if (n < 3 || buf[0] != '0' || (buf[1] != 'x' && buf[1] != 'X'))
		return MU_EPARSE;
	if (n - 2 > 8)
		return MU_ERANGE;
	uint32_t v = 0;
	for (size_t i = 2; i < n; i++) {
		int h = hex_val(buf[i]);
		if (h < 0)
			return MU_EPARSE;
		v = v << 4 | (uint32_t)h;
	}
	if (v > max)
		return MU_ERANGE;
	*out = v;
	return MU_OK;
}

/* Parses one meminfo line [p, end): 1 when it is node's MemTotal line
 * (sets *kb), 0 when it is another line, or an error. */
static int meminfo_line(const char *p, const char *end, int32_t node,
			int64_t *kb)
{
	const char *t[6];
	size_t tl[6];
	int n = 0;
	while (n < 6 && next_token(&p, end, &t[n], &tl[n]))
		n++;
	if (n < 3 || !tok_is(t[0], tl[0], "Node") ||
	    !tok_is(t[2], tl[2], "MemTotal:"))
		return 0;
	if (n != 5 || !tok_is(t[4], tl[4], "kB"))
		return MU_EPARSE;
	int64_t id, v;
	const char *q = t[1];
	int rc = take_dec(&q, t[1] + tl[1], MU_TOPO_MAX_NODE, &id);
	if (rc != MU_OK || q != t[1] + tl[1])
		return rc != MU_OK ? rc : MU_EPARSE;
	if (id != node)
		return MU_EPARSE;
	q = t[3];
	rc = take_dec(&q, t[3] + tl[3], INT64_MAX / 1024, &v);
	if (rc != MU_OK || q != t[3] + tl[3])
		return rc != MU_OK ? rc : MU_EPARSE;
	*kb = v;
	return 1;
}

int mu__sysfs_meminfo(const char *buf, size_t len, int32_t node,
		      int64_t *bytes)
{
	const char *p = buf, *end = buf + len;
	int64_t kb = -1;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		if (memchr(p, '\0', (size_t)(le - p)))
			return MU_EPARSE;
		int64_t v;
		int rc = meminfo_line(p, le, node, &v);
		if (rc < 0)
			return rc;
		if (rc == 1) {
			if (kb >= 0)
				return MU_EPARSE; /* two MemTotal lines */
			kb = v;
		}
		p = nl ? nl + 1 : end;
	}
	if (kb < 0)
		return MU_EPARSE;
	*bytes = kb * 1024;
	return MU_OK;
}

int mu__sysfs_distance(const char *buf, size_t len, int32_t *out, int32_t max,
		       int32_t *n)
{
	const char *p = buf, *end = buf + len, *tok;
	size_t tl;
	int32_t k = 0;
	while (next_token(&p, end, &tok, &tl)) {
		if (k == max)
			return MU_ERANGE;
		int64_t v;
		const char *q = tok;
		int rc = take_dec(&q, tok + tl, 255, &v);
		if (rc != MU_OK)
			return rc;
		if (q != tok + tl)
			return MU_EPARSE;
		out[k++] = (int32_t)v;
	}
	if (k == 0)
		return MU_EPARSE;
	*n = k;
	return MU_OK;
}

/* Reads 1..maxd hex digits at *p into *v; advances *p. */
static int take_hex(const char **p, const char *end, int maxd, uint32_t *v)
{
	const char *s = *p;
	uint32_t x = 0;
	int d = 0;
	for (; s < end && hex_val(*s) >= 0; s++, d++) {
		if (d == maxd)
			return MU_EPARSE;
		x = x << 4 | (uint32_t)hex_val(*s);
	}
	if (!d)
		return MU_EPARSE;
	*p = s;
	*v = x;
	return MU_OK;
}

int mu__pci_addr(const char *s, size_t len, char out[MU_PCI_ADDR_LEN])
{
	const char *p = s, *end = s + len;
	uint32_t dom, bus, slot, fn;
	if (take_hex(&p, end, 8, &dom) || p == end || *p++ != ':' ||
	    take_hex(&p, end, 2, &bus) || p == end || *p++ != ':' ||
	    take_hex(&p, end, 2, &slot) || p == end || *p++ != '.' ||
	    take_hex(&p, end, 1, &fn) || p != end)
		return MU_EPARSE;
	if (slot > 0x1f || fn > 7)
		return MU_ERANGE;
	snprintf(out, MU_PCI_ADDR_LEN, "%04x:%02x:%02x.%x", (unsigned)dom,
		 (unsigned)bus, (unsigned)slot, (unsigned)fn);
	return MU_OK;
}

int mu__sysfs_peers(const char *buf, size_t len, char (*out)[MU_PCI_ADDR_LEN],
		    int32_t max, int32_t *n)
{
	const char *p = buf, *end = buf + len, *tok;
	size_t tl;
	int32_t k = 0;
	while (next_token(&p, end, &tok, &tl)) {
		if (k == max)
			return MU_ERANGE;
		int rc = mu__pci_addr(tok, tl, out[k]);
		if (rc != MU_OK)
			return rc;
		k++;
	}
	*n = k;
	return MU_OK;
}

bool mu__ifname_ok(const char *s)
{
	size_t n = 0;
	for (; s[n]; n++) {
		char c = s[n];
		if (!(is_digit(c) || (c >= 'a' && c <= 'z') ||
		      (c >= 'A' && c <= 'Z') || c == '_' || c == '.' || c == '-'))
			return false;
		if (n == MU_IFNAME_LEN - 1)
			return false;
	}
	return n > 0;
}

/* --- CPU lists --- */

void mu_cpulist_init(mu_cpulist_t *l)
{
	memset(l, 0, sizeof *l);
}

void mu_cpulist_release(mu_cpulist_t *l)
{
	free(l->r);
	mu_cpulist_init(l);
}

static int range_cmp(const void *a, const void *b)
{
	const mu_cpu_range_t *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Sorts r[0..n) and merges overlapping and adjacent ranges; returns the
 * new count.  O(n log n). */
static int32_t ranges_normalize(mu_cpu_range_t *r, int32_t n)
{
	if (n < 2)
		return n;
	qsort(r, (size_t)n, sizeof *r, range_cmp);
	int32_t k = 0;
	for (int32_t i = 1; i < n; i++) {
		if (r[i].lo <= r[k].hi + 1) {
			if (r[i].hi > r[k].hi)
				r[k].hi = r[i].hi;
		} else {
			r[++k] = r[i];
		}
	}
	return k + 1;
}

/* Parses "A" or "A-B" at *p into *r. */
static int cpulist_item(const char **p, const char *end, mu_cpu_range_t *r)
{
	int64_t lo, hi;
	int rc = take_dec(p, end, MU_TOPO_MAX_CPU, &lo);
	if (rc != MU_OK)
		return rc;
	hi = lo;
	if (*p < end && **p == '-') {
		(*p)++;
		rc = take_dec(p, end, MU_TOPO_MAX_CPU, &hi);
		if (rc != MU_OK)
			return rc;
		if (hi < lo)
			return MU_ERANGE;
	}
	r->lo = (int32_t)lo;
	r->hi = (int32_t)hi;
	return MU_OK;
}

int mu_cpulist_parse(const char *buf, size_t len, mu_cpulist_t *out)
{
	const char *p = buf, *end = buf + trim_len(buf, len);
	if (p == end) {
		mu_cpulist_release(out);
		return MU_OK;
	}
	size_t items = 1;
	for (const char *s = p; s < end; s++)
		items += *s == ',';
	if (items > (size_t)(end - p) / 2 + 1)
		return MU_EPARSE; /* more commas than numbers can fill */
	mu_cpu_range_t *r = malloc(items * sizeof *r);
	if (!r)
		return MU_ENOMEM;
	int32_t n = 0;
	for (;;) {
		int rc = cpulist_item(&p, end, &r[n]);
		if (rc != MU_OK) {
			free(r);
			return rc;
		}
		n++;
		if (p == end)
			break;
		if (*p != ',' || (size_t)n == items) {
			free(r);
			return MU_EPARSE;
		}
		p++;
	}
	free(out->r);
	out->r = r;
	out->n = ranges_normalize(r, n);
	out->cap = (int32_t)items;
	return MU_OK;
}

int32_t mu_cpulist_count(const mu_cpulist_t *l)
{
	int32_t c = 0;
	for (int32_t i = 0; i < l->n; i++)
		c += l->r[i].hi - l->r[i].lo + 1;
	return c;
}

bool mu_cpulist_has(const mu_cpulist_t *l, int32_t cpu)
{
	int32_t a = 0, b = l->n;
	while (a < b) {
		int32_t m = a + (b - a) / 2;
		if (cpu < l->r[m].lo)
			b = m;
		else if (cpu > l->r[m].hi)
			a = m + 1;
		else
			return true;
	}
	return false;
}

size_t mu_cpulist_format(const mu_cpulist_t *l, char *buf, size_t len)
{
	size_t need = 0;
	if (len)
		buf[0] = '\0';
	for (int32_t i = 0; i < l->n; i++) {
		char item[32];
		int k;
		if (l->r[i].lo == l->r[i].hi)
			k = snprintf(item, sizeof item, "%s%d", i ? "," : "",
				     (int)l->r[i].lo);
		else
			k = snprintf(item, sizeof item, "%s%d-%d", i ? "," : "",
				     (int)l->r[i].lo, (int)l->r[i].hi);
		if (need + (size_t)k < len)
			memcpy(buf + need, item, (size_t)k + 1);
		else if (need < len)
			buf[need] = '\0';
		need += (size_t)k;
	}
	return need;
}
