/*
 * load_util.c - helpers of the loaders: default priorities by job type and
 * scenario device strings (canonical form and normalisation).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/load_util.h"

int32_t mu__type_priority(mu_job_type_t t)
{
	switch (t) {
	case MU_JOB_INFERENCE: return 100;
	case MU_JOB_INTERACTIVE: return 1000;
	case MU_JOB_TRAIN:
	case MU_JOB_BATCH: break;
	}
	return 0;
}

/* --- Device strings ------------------------------------------------------ */

void mu__devstr_format(const char *node, uint64_t gpus, int numa, int nic,
		       const mu_cpuset_t *cpus, char *buf, size_t len)
{
	char set[MU__DEVSTR_MAX];
	size_t o = 0;
	const char *sep = ":";
	if (!len)
		return;
	buf[0] = '\0';
#define DEV_PUT(...)                                                        \
	do {                                                                \
		int n_ = snprintf(buf + o, len - o, __VA_ARGS__);           \
		if (n_ > 0)                                                 \
			o = o + (size_t)n_ < len ? o + (size_t)n_ : len - 1; \
	} while (0)
	DEV_PUT("%s", node);
	if (gpus) {
		mu_cpuset_t g;
		memset(&g, 0, sizeof g);
		g.w[0] = gpus;
		mu_cpuset_format(&g, set, sizeof set);
		DEV_PUT("%sgpus=%s", sep, set);
		sep = ";";
	}
	if (numa >= 0) {
		DEV_PUT("%snuma=%d", sep, numa);
		sep = ";";
	}
	if (nic >= 0) {
		DEV_PUT("%snic=%d", sep, nic);
		sep = ";";
	}
	if (cpus && mu_cpuset_count(cpus) > 0) {
		mu_cpuset_format(cpus, set, sizeof set);
		DEV_PUT("%scpus=%s", sep, set);
	}
#undef DEV_PUT
}

/* Reads one "key=value" field of a device string into the parts; the
 * field is [f, end).  Returns MU_OK or an error with *why set. */
static int devstr_field(const char *f, const char *end, uint64_t *gpus,
			int *numa, int *nic, mu_cpuset_t *cpus, unsigned *seen,
			const char **why)
{
	static const char *const keys[] = {"gpus", "numa", "nic", "cpus"};
	const char *eq = memchr(f, '=', (size_t)(end - f));
	char v[MU__DEVSTR_MAX];
	size_t k, vl;
	if (!eq || (vl = (size_t)(end - eq - 1)) == 0 || vl >= sizeof v) {
		*why = "expected key=value fields separated by ';'";
		return MU_EPARSE;
	}
	for (k = 0; k < 4; k++)
		if (strlen(keys[k]) == (size_t)(eq - f) &&
		    !strncmp(f, keys[k], (size_t)(eq - f)))
			break;
	if (k == 4) {
		*why = "unknown field; expected gpus, numa, nic or cpus";
		return MU_EPARSE;
	}
	if (*seen & (1u << k)) {
		*why = "a field is given twice";
		return MU_EPARSE;
	}
	*seen |= 1u << k;
	memcpy(v, eq + 1, vl);
	v[vl] = '\0';
	int64_t x;
	mu_cpuset_t set;
	switch (k) {
	case 0:
		if (mu_cpuset_parse(v, &set) != MU_OK || v[vl - 1] == '\n' ||
		    mu_cpuset_count(&set) != __builtin_popcountll(set.w[0]))
			break; /* a device above 63 */
		*gpus = set.w[0];
		return MU_OK;
	case 1:
	case 2:
		if (mu__parse_int(v, 0, k == 1 ? MU_MAX_NUMA - 1 : MU_MAX_NICS - 1,
				  &x) != MU_OK)
			break;
		*(k == 1 ? numa : nic) = (int)x;
		return MU_OK;
	default:
		if (mu_cpuset_parse(v, cpus) != MU_OK || v[vl - 1] == '\n')
			break;
		return MU_OK;
	}
	*why = k == 0 ? "gpus: expected device indices 0 to 63 as a list such as 0,1 or 0-3" :
	       k == 1 ? "numa: expected an integer from 0 to 7" :
	       k == 2 ? "nic: expected an integer from 0 to 31" :
			"cpus: expected a cpulist such as 0-3,8 of CPUs 0 to 511";
	return MU_EPARSE;
}

/* Linear in the length of s. */
int mu__devstr_norm(const char *s, char *buf, size_t len, size_t *node_len,
		    const char **why)
{
	const char *colon = strchr(s, ':');
	size_t nl = colon ? (size_t)(colon - s) : strlen(s);
	char node[256];
	uint64_t gpus = 0;
	int numa = -1, nic = -1;
	unsigned seen = 0;
	mu_cpuset_t cpus;
	memset(&cpus, 0, sizeof cpus);
	if (nl == 0 || nl >= sizeof node) {
		*why = "expected NODE or NODE:field=value;... with a node name first";
		return MU_EPARSE;
	}
	memcpy(node, s, nl);
	node[nl] = '\0';
	if (!mu__valid_name(node)) {
		*why = "the part before ':' must be a node name";
		return MU_EPARSE;
	}
	for (const char *f = colon ? colon + 1 : NULL; f;) {
		const char *end = strchr(f, ';');
		if (!end)
			end = f + strlen(f);
		int rc = devstr_field(f, end, &gpus, &numa, &nic, &cpus, &seen, why);
		if (rc != MU_OK)
			return rc;
		f = *end ? end + 1 : NULL;
	}
	mu__devstr_format(node, gpus, numa, nic, &cpus, buf, len);
	*node_len = nl;
	return MU_OK;
}
