/*
 * user.c - the record of who a request comes from (mu__user_t): its
 * groups and its extra (kube's user.Info), and that record as kube's
 * UserInfo JSON (SelfSubjectReview, a CertificateSigningRequest's spec).
 * The bottom of the authentication files: it calls none of them, so that
 * csr.c and the authenticators can share it without a loop.  Each call is
 * bounded by the record's fixed size.
 */
#include <string.h>

#include <jansson.h>

#include "apiserver/auth.h"

void mu__user_add_group(mu__user_t *u, const char *g)
{
	if (u->ngroups >= MU__USER_GROUPS)
		return;
	size_t l = strlen(g);
	if (l >= sizeof u->groups[0])
		l = sizeof u->groups[0] - 1; /* cut, as no group name is this long */
	memcpy(u->groups[u->ngroups], g, l);
	u->groups[u->ngroups++][l] = '\0';
}

bool mu__user_add_extra(mu__user_t *u, const char *k, const char *v)
{
	size_t kl = strlen(k), vl = strlen(v), at = (size_t)u->extra_len;
	if (!kl || at + kl + vl + 2 > sizeof u->extra)
		return false;
	memcpy(u->extra + at, k, kl + 1);
	memcpy(u->extra + at + kl + 1, v, vl + 1);
	u->extra_len = (int)(at + kl + vl + 2);
	u->nextra++;
	return true;
}

json_t *mu__user_extra_json(const mu__user_t *u)
{
	json_t *o = json_object();
	const char *p = u->extra;
	for (int i = 0; i < u->nextra; i++) {
		const char *k = p, *v = p + strlen(p) + 1;
		json_t *a = json_object_get(o, k);
		if (!a)
			json_object_set_new(o, k, a = json_array());
		json_array_append_new(a, json_string(v));
		p = v + strlen(v) + 1;
	}
	return o;
}

json_t *mu__user_info_json(const mu__user_t *u)
{
	json_t *o = json_pack("{s:s}", "username", u->name);
	if (u->uid[0])
		json_object_set_new(o, "uid", json_string(u->uid));
	json_t *groups = json_array();
	for (int i = 0; i < u->ngroups; i++)
		json_array_append_new(groups, json_string(u->groups[i]));
	json_object_set_new(o, "groups", groups);
	if (u->nextra)
		json_object_set_new(o, "extra", mu__user_extra_json(u));
	return o;
}
