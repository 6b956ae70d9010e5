/*
 * fuzz_audit_policy.c - libFuzzer target for the audit policy parser of
 * `muster up --audit-policy-file` (src/apiserver/audit.c): the input is
 * read as a Policy (YAML, or JSON when it begins with a brace).  A refused
 * input must say why, naming the file; an accepted policy is asked for
 * the level of a few requests (resource and non-resource, with and without
 * a user), which must be one of kube's four levels with omitted stages
 * among kube's four stages.  Nothing may crash or leak.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/audit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	mu__audit_policy_t *p = NULL;
	char err[600] = "";
	int rc = mu__audit_policy_parse("f.yaml", (const char *)data, size, &p, err, sizeof err);
	if (rc != MU_OK) {
		if (p || strncmp(err, "f.yaml: ", 8) || !err[8])
			abort();
		return 0;
	}
	if (!p)
		abort();
	mu__user_t u;
	memset(&u, 0, sizeof u);
	snprintf(u.name, sizeof u.name, "alice");
	snprintf(u.groups[0], sizeof u.groups[0], "system:authenticated");
	u.ngroups = 1;
	const mu__audit_attrs_t as[] = {
		{&u, "get", true, "", "pods", "log", "default", "p", "/api/v1/namespaces/default/pods/p/log"},
		{&u, "list", true, "apps", "deployments", "", "", "", "/apis/apps/v1/deployments"},
		{NULL, "create", true, "", "secrets", "", "kube-system", "", "/api/v1/namespaces/kube-system/secrets"},
		{&u, "get", false, "", "", "", "", "", "/healthz"},
		{NULL, "post", false, "", "", "", "", "", "/apis"},
	};
	for (size_t i = 0; i < sizeof as / sizeof *as; i++) {
		unsigned omit = 0;
		bool mf = false;
		int lv = mu__audit_level(p, &as[i], &omit, &mf);
		if (lv < MU__AUDIT_NONE || lv > MU__AUDIT_RR || omit > 15)
			abort();
	}
	mu__audit_policy_free(p);
	return 0;
}
