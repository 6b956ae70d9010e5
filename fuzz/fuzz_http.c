/*
 * fuzz_http.c - libFuzzer target for the request parsers of `muster up`:
 * the input is an HTTP/1.x head (start line and headers) parsed by
 * mu__parse_head; its request target goes through mu__parse_target (path
 * segments, percent-decoding, query options), the selectors it carries
 * through mu__sel_parse and mu__sel_check_fields, and the Content-Type and
 * Accept headers through their classifiers.  The whole input is also tried
 * as a bare target.  Broken invariants abort.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/apiserver_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Parses a target and its selectors; aborts on broken promises. */
static void target(const char *t)
{
	mu__route_t r;
	mu__query_t q;
	char err[256];
	memset(err, 0x55, sizeof err);
	int rc = mu__parse_target(t, &r, &q, err, sizeof err);
	if (rc != MU_OK) {
		if (!memchr(err, '\0', sizeof err))
			abort();
		return;
	}
	if (!memchr(r.name, '\0', sizeof r.name) || !memchr(q.label_sel, '\0', sizeof q.label_sel) ||
	    strchr(r.name, '/') || strchr(r.ns, '/') || q.limit < 0)
		abort();
	mu__sel_t *ls = NULL, *fs = NULL;
	if (mu__sel_parse(q.label_sel, false, &ls, err, sizeof err) == MU_OK && !ls)
		abort();
	if (mu__sel_parse(q.field_sel, true, &fs, err, sizeof err) == MU_OK) {
		int n;
		int rt = r.kind == MU__R_RESOURCE ? mu__rtype_find(r.core ? "" : r.group, r.version, r.plural) : -1;
		if (rt >= 0)
			mu__sel_check_fields(fs, &mu__rtypes(&n)[rt], err, sizeof err);
	}
	mu__sel_free(ls);
	mu__sel_free(fs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	mu__head_t h;
	int rc = mu__parse_head(buf, size, &h);
	if (rc == MU_OK) {
		if (h.head_len > size || h.nhdr < 0 || h.nhdr > 32)
			abort();
		if (h.start[1][0] == '/')
			target(h.start[1]);
		mu__content_type(mu__head_get(&h, "Content-Type"));
		mu__accept_table(mu__head_get(&h, "Accept"));
	} else if (rc != 1 && rc != MU_EPARSE) {
		abort();
	}
	if (buf[0] == '/' && strlen(buf) < 65536)
		target(buf);
	free(buf);
	return 0;
}
