/*
 * fuzz_kinds.c - libFuzzer target for what `muster scheduler` reads of
 * workload objects, pods and PodDisruptionBudgets from the API server
 * (src/kube/kinds.c, util/jpath.c).  The input is JSON; it is read as a
 * pod (which workload, group and part), as an object of every workload
 * kind (minimums, parts, queue; the pod templates of the kinds muster
 * admits suspended; a RayCluster's RayJob), and as a label selector matched against
 * its own labels.  Broken invariants abort.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/daemon_int.h"
#include "muster/jpath.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *o = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
	if (!o)
		return 0;
	mu__kwpod_t wp;
	if (mu__kw_pod(o, &wp)) {
		if (wp.kind >= MU__WL_COUNT || strncmp(wp.group, "w:", 2) || !strchr(wp.wl, ':') ||
		    !memchr(wp.part, '\0', sizeof wp.part))
			abort();
	}
	for (int k = 0; k < MU__WL_COUNT; k++) {
		mu__kwinfo_t w;
		if (mu__kw_read(o, (mu__wlkind_t)k, &w) != MU_OK)
			continue;
		int64_t sum = 0;
		for (int i = 0; i < w.nparts; i++) {
			if (w.parts[i].min < 0)
				abort();
			sum += w.parts[i].min;
		}
		if (w.min_member < 1 || w.nparts > MU__WL_MAX_PARTS ||
		    (sum <= 1000000 && w.min_member < sum) || !memchr(w.queue, '\0', sizeof w.queue))
			abort();
	}
	for (int k = 0; k < MU__WL_COUNT; k++) { /* suspend until admitted: the templates */
		mu__kwtmpl_t tm[MU__WL_MAX_PARTS];
		int n = mu__kw_suspendable((mu__wlkind_t)k) ?
			mu__kw_templates(o, (mu__wlkind_t)k, tm, MU__WL_MAX_PARTS) : 0;
		for (int i = 0; i < n; i++)
			if (!tm[i].part || tm[i].count < 0 || tm[i].count > 1000000 ||
			    (!json_is_object(tm[i].tmpl) && !tm[i].submitter_default))
				abort();
	}
	char rj[64];
	if (mu__kw_rayjob_of(o, rj, sizeof rj) && !memchr(rj, '\0', sizeof rj))
		abort();
	(void)mu_label_selector_match(mu__jget(o, "spec.selector"), mu__jget(o, "metadata.labels"));
	(void)mu_label_selector_match(o, o);
	json_decref(o);
	return 0;
}
