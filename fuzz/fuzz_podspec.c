/*
 * fuzz_podspec.c - libFuzzer target for kube's pod spec defaults and checks
 * (src/apiserver/podspec.c).  The input is JSON: a pod spec, or an object
 * {"spec": SPEC, "old": OLD_SPEC, "want": TEXT, "clean": true}.  The spec
 * is defaulted (and the disabled gates' fields dropped unless "old" has
 * them, as the create and update strategies do), then checked as a Pod's
 * and as a template's, and (with
 * "old", taken as stored, without today's defaults, or against itself) as
 * an update.  Invariants: defaulting twice changes nothing more;
 * every cause is NUL-terminated and at most MU__VERR_MAX are kept; a spec
 * updated to itself has no cause; and when "want" is given (the corpus
 * entries, one per check), some cause's "FIELD: MESSAGE" contains it, so
 * that replaying the corpus tests each check; with "clean" there is none.
 * Those two hold for the corpus as written, not for libFuzzer's mutations
 * of it: the fuzzing build (-DMU_FUZZING, make fuzz) leaves them out.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/apiserver_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool causes_ok(const mu__verr_t *e)
{
	if (e->n < 0 || e->n > MU__VERR_MAX)
		return false;
	for (int i = 0; i < e->n; i++)
		if (!memchr(e->c[i].field, '\0', sizeof e->c[i].field) || !memchr(e->c[i].msg, '\0', sizeof e->c[i].msg))
			return false;
	return true;
}

static bool has_cause(const mu__verr_t *e, const char *want)
{
	for (int i = 0; i < e->n; i++) {
		char line[sizeof e->c[i].field + sizeof e->c[i].msg + 2];
		memcpy(line, e->c[i].field, strlen(e->c[i].field));
		size_t l = strlen(e->c[i].field);
		line[l++] = ':';
		line[l++] = ' ';
		memcpy(line + l, e->c[i].msg, strlen(e->c[i].msg) + 1);
		if (strstr(line, want))
			return true;
	}
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *in = json_loadb((const char *)data, size, 0, NULL);
	if (!json_is_object(in)) {
		json_decref(in);
		return 0;
	}
	const char *want = json_string_value(json_object_get(in, "want"));
	json_t *spec = json_object_get(in, "spec") ? json_object_get(in, "spec") : in;
	const json_t *old = json_object_get(in, "old");
	json_t *a = json_deep_copy(spec);
	mu__defaults_pod_spec(a);
	mu__defaults_pod_only(a);
	/* the strategies' drop of the disabled gates' fields, against the
	 * stored spec on update (api.c calls it beside the defaults) */
	mu__drop_gated_pod_fields(a, old);
	json_t *b = json_deep_copy(a);
	mu__defaults_pod_spec(b);
	mu__defaults_pod_only(b);
	if (!json_equal(a, b))
		abort();
	mu__verr_t e = {0}, t = {0}, self = {0}, u = {0};
	mu__check_pod_spec(a, "spec", false, &e);
	mu__check_pod_spec(a, "spec.template.spec", true, &t);
	mu__check_pod_update(a, a, &self);
	if (old)
		mu__check_pod_update(a, old, &u);
	if (!causes_ok(&e) || !causes_ok(&t) || !causes_ok(&u) || self.n != 0)
		abort();
#ifndef MU_FUZZING
	/* the corpus entries' own checks, for the replay: an input libFuzzer
	 * mutated keeps its "want" while its spec no longer breaks that rule
	 * (make fuzz builds with MU_FUZZING) */
	if (want && !has_cause(old ? &u : &e, want))
		abort();
	if (json_is_true(json_object_get(in, "clean")) && (old ? u.n : e.n))
		abort();
#else
	(void)has_cause;
	(void)want;
#endif
	json_decref(a);
	json_decref(b);
	json_decref(in);
	return 0;
}
