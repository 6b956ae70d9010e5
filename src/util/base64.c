/*
 * base64.c - standard base64 (RFC 4648, with padding), as Kubernetes uses
 * it for Secret data, kubeconfig certificate data and continue tokens.
 * Decoding follows Go's encoding/base64 StdEncoding: line breaks are
 * skipped, anything else outside the alphabet is an error.  Bounded by the
 * length of the input; the caller owns what is returned.
 */
#include <stdlib.h>
#include <string.h>

#include "muster/util.h"

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *mu__b64enc(const void *data, size_t n)
{
	const unsigned char *p = data;
	char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) |
			     (i + 2 < n ? p[i + 2] : 0);
		*o++ = b64[v >> 18 & 63];
		*o++ = b64[v >> 12 & 63];
		*o++ = i + 1 < n ? b64[v >> 6 & 63] : '=';
		*o++ = i + 2 < n ? b64[v & 63] : '=';
	}
	*o = '\0';
	return out;
}

int mu__b64dec(const char *s, char *out, size_t cap, size_t *outlen)
{
	size_t n = 0;
	unsigned acc = 0;
	int bits = 0;
	for (; *s && *s != '='; s++) {
		if (*s == '\n' || *s == '\r')
			continue; /* as Go's encoding/base64 */
		const char *at = strchr(b64, *s);
		if (!at || !*s)
			return MU_EPARSE;
		acc = (acc << 6 | (unsigned)(at - b64)) & 0xffffff;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (n + 1 >= cap)
				return MU_EPARSE;
			out[n++] = (char)(acc >> bits & 0xff);
		}
	}
	while (*s == '=' || *s == '\n' || *s == '\r')
		s++;
	if (*s)
		return MU_EPARSE;
	out[n] = '\0';
	*outlen = n;
	return MU_OK;
}
