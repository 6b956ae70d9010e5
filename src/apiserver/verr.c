/*
 * verr.c - the building blocks of validation: the list of causes a 422
 * carries (mu__verr_add) and kube's DNS-1123 label and subdomain rules.
 * A bottom file of the room (it calls no other apiserver file), so that
 * validate.c and podspec.c, which call each other's checks one way, both
 * stand on it (scripts/check-loops.sh).  Each call is bounded by the
 * length of its string.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "apiserver/apiserver_int.h"

void mu__pathf(mu__path_t out, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(out, sizeof(mu__path_t), fmt, ap);
	va_end(ap);
}

void mu__verr_add(mu__verr_t *e, const char *field, const char *reason, const char *fmt, ...)
{
	if (e->n >= MU__VERR_MAX)
		return;
	snprintf(e->c[e->n].field, sizeof e->c[e->n].field, "%s", field);
	snprintf(e->c[e->n].reason, sizeof e->c[e->n].reason, "%s", reason);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->c[e->n].msg, sizeof e->c[e->n].msg, fmt, ap);
	va_end(ap);
	e->n++;
}

bool mu__valid_dns_label(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || n > 63 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-'))
			return false;
	return true;
}

/* IsDNS1123Subdomain: at most 253 characters of dot-separated parts, each
 * [a-z0-9]([-a-z0-9]*[a-z0-9])?.  Unlike a label, a part has no length
 * limit of its own (kube-apiserver's regex has none), so pod names of 64 to
 * 253 characters without dots are valid. */
bool mu__valid_dns_subdomain(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || n > 253)
		return false;
	for (size_t i = 0; i < n; i++) {
		bool alnum = islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]);
		bool edge = i == 0 || i == n - 1 || s[i - 1] == '.' || s[i + 1] == '.';
		if (s[i] == '.' ? edge : !alnum && (s[i] != '-' || edge))
			return false;
	}
	return true;
}
