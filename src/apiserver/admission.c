/*
 * admission.c - what kube-apiserver's admission plugins do to an object
 * before it is stored, for the kinds muster serves: the ServiceAccount
 * plugin (saadmit.c, first, as in kube's order) and the Priority plugin.
 * A pod's spec.priorityClassName (or, when it names none, the PriorityClass
 * marked globalDefault) sets spec.priority and spec.preemptionPolicy; a
 * class that does not exist, or a priority the pod set itself that differs,
 * is refused (403 Forbidden, kube-apiserver's words).  Only one
 * PriorityClass may be the global default.  The two system classes
 * (system-node-critical, system-cluster-critical) always exist.
 *
 * Reads go through the store's current versions; bounded by the number of
 * PriorityClasses (one list).
 */
#include <stdio.h>
#include <string.h>

#include "apiserver/api_int.h"

typedef struct pclass {
	char name[254];
	json_int_t value;
	char policy[32];
	bool found;
} pclass_t;

static bool is_default(void *ctx, const mu__obj_t *o)
{
	(void)ctx;
	return strstr(o->json, "\"globalDefault\":true") != NULL;
}

/* The class named name (NULL: the global default with the lowest value, as
 * kube-apiserver picks among several). */
static void find_class(mu_apiserver_t *s, const char *name, pclass_t *pc)
{
	memset(pc, 0, sizeof *pc);
	snprintf(pc->policy, sizeof pc->policy, "PreemptLowerPriority");
	if (name && (!strcmp(name, "system-node-critical") || !strcmp(name, "system-cluster-critical"))) {
		snprintf(pc->name, sizeof pc->name, "%s", name);
		pc->value = name[7] == 'n' ? 2000001000 : 2000000000;
		pc->found = true;
		return;
	}
	mu__page_t pg;
	mu__obj_t *one = NULL;
	if (name) {
		one = mu__store_get(s->store, MU__RT_PRIORITYCLASSES, NULL, name);
		pg.objs = &one;
		pg.n = one ? 1 : 0;
	} else if (mu__store_list(s->store, MU__RT_PRIORITYCLASSES, NULL, NULL, 1000, is_default, NULL, &pg) != MU_OK) {
		return;
	}
	for (size_t i = 0; i < pg.n; i++) {
		json_t *j = mu__obj_parse(pg.objs[i]);
		json_int_t v = json_integer_value(json_object_get(j, "value"));
		if (j && (name || json_is_true(json_object_get(j, "globalDefault"))) && (!pc->found || v < pc->value)) {
			snprintf(pc->name, sizeof pc->name, "%s", pg.objs[i]->name);
			pc->value = v;
			const char *p = mu__jstr(j, "preemptionPolicy");
			snprintf(pc->policy, sizeof pc->policy, "%s", p ? p : "PreemptLowerPriority");
			pc->found = true;
		}
		json_decref(j);
	}
	if (name)
		mu__obj_unref(one);
	else
		mu__page_release(&pg);
}

static int admit_pod(mu_apiserver_t *s, json_t *pod, char *msg, size_t len)
{
	json_t *spec = json_object_get(pod, "spec");
	if (!json_is_object(spec))
		return MU_OK; /* validation answers */
	const char *name = mu__jstr(pod, "spec.priorityClassName");
	if (name && !*name)
		name = NULL;
	pclass_t pc;
	find_class(s, name, &pc);
	if (name && !pc.found) {
		snprintf(msg, len, "no PriorityClass with name %.200s was found", name);
		return MU_ENOENT;
	}
	const json_t *given = json_object_get(spec, "priority");
	json_int_t value = pc.found ? pc.value : 0;
	if (json_is_integer(given) && json_integer_value(given) != value) {
		snprintf(msg, len, "the integer value of priority (%lld) must not be provided in pod spec; priority "
			 "admission controller computed %lld from the given PriorityClass name",
			 (long long)json_integer_value(given), (long long)value);
		return MU_EINVAL;
	}
	const char *gp = mu__jstr(pod, "spec.preemptionPolicy");
	if (pc.found && gp && strcmp(gp, pc.policy)) {
		snprintf(msg, len, "the string value of PreemptionPolicy (%.40s) must not be provided in pod spec; "
			 "priority admission controller computed %s from the given PriorityClass name", gp, pc.policy);
		return MU_EINVAL;
	}
	json_object_set_new(spec, "priority", json_integer(value));
	if (pc.found) {
		json_object_set_new(spec, "priorityClassName", json_string(pc.name));
		json_object_set_new(spec, "preemptionPolicy", json_string(pc.policy));
	}
	return MU_OK;
}

int mu__admit(mu_apiserver_t *s, int rt, json_t *obj, char *msg, size_t len)
{
	if (rt == MU__RT_PODS) {
		/* kube's plugin order: ServiceAccount before Priority */
		int rc = mu__sa_admit(s, obj, msg, len);
		return rc == MU_OK ? admit_pod(s, obj, msg, len) : rc;
	}
	if (rt == MU__RT_PRIORITYCLASSES && json_is_true(json_object_get(obj, "globalDefault"))) {
		pclass_t pc;
		find_class(s, NULL, &pc);
		if (pc.found) {
			snprintf(msg, len, "PriorityClass %s is marked as default. Only one default can exist", pc.name);
			return MU_EEXIST;
		}
	}
	return MU_OK;
}
