/*
 * mig.c - MIG profiles of the MIG-capable GPU models, layout validity and
 * the layout planner (include/muster/mig.h).
 *
 * The profiles and their placements are those of NVIDIA's MIG user guide
 * ("Supported MIG profiles", and `nvidia-smi mig -lgipp`): memory slices
 * 0..7, a profile's instance starting only where its table allows.  The
 * "+me" (media extension) and "-c" (compute instance) variants are not
 * listed: a layout that asks for them is refused as unknown.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muster/error.h"
#include "muster/mig.h"

/* Starts as bit masks. */
#define S_ANY1 0x7f  /* 0..6 */
#define S_EVEN 0x55  /* 0,2,4,6 */
#define S_024 0x15   /* 0,2,4 */
#define S_04 0x11    /* 0,4 */
#define S_0 0x01

static const mu_mig_profile_t a100_40[] = {
	{"1g.5gb", 1, 1, S_ANY1}, {"1g.10gb", 1, 2, S_EVEN},
	{"2g.10gb", 2, 2, S_024}, {"3g.20gb", 3, 4, S_04},
	{"4g.20gb", 4, 4, S_0},   {"7g.40gb", 7, 8, S_0},
};
static const mu_mig_profile_t a100_80[] = {
	{"1g.10gb", 1, 1, S_ANY1}, {"1g.20gb", 1, 2, S_EVEN},
	{"2g.20gb", 2, 2, S_024},  {"3g.40gb", 3, 4, S_04},
	{"4g.40gb", 4, 4, S_0},    {"7g.80gb", 7, 8, S_0},
};

static const mu_mig_model_t models[] = {
	{"A100-40GB", a100_40, 6},
	{"A100-80GB", a100_80, 6},
	{"H100-80GB", a100_80, 6}, /* H100 80GB: the same profiles and places */
};

/* Whether hay contains needle, ignoring case. */
static bool has_ci(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	for (; *hay; hay++) {
		size_t i = 0;
		while (i < n && hay[i] &&
		       tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
			i++;
		if (i == n)
			return true;
	}
	return false;
}

const mu_mig_model_t *mu_mig_model(const char *name)
{
	if (!name)
		return NULL;
	bool gb80 = has_ci(name, "80GB") || has_ci(name, "80G");
	if (has_ci(name, "H100"))
		return gb80 || !has_ci(name, "GB") ? &models[2] : NULL;
	if (has_ci(name, "A100"))
		return gb80 ? &models[1] : has_ci(name, "40GB") ||
		       !has_ci(name, "GB") ? &models[0] : NULL;
	return NULL;
}

int mu_mig_profile_index(const mu_mig_model_t *m, const char *name)
{
	if (!m || !name)
		return -1;
	if (!strncmp(name, "mig-", 4))
		name += 4;
	for (int i = 0; i < m->nprofiles; i++)
		if (!strcmp(m->profiles[i].name, name))
			return i;
	return -1;
}

/* The memory slices taken by g as a mask, or -1 when two overlap or one is
 * out of place; *compute gets the compute slices used. */
static int used_slots(const mu_mig_model_t *m, const mu_mig_gpu_t *g, int *compute)
{
	int mask = 0;
	*compute = 0;
	for (int i = 0; i < g->n; i++) {
		if (g->prof[i] < 0 || g->prof[i] >= m->nprofiles)
			return -1;
		const mu_mig_profile_t *p = &m->profiles[g->prof[i]];
		int s = g->start[i];
		if (s < 0 || s >= MU_MIG_SLOTS || !(p->starts >> s & 1) ||
		    s + p->size > MU_MIG_SLOTS)
			return -1;
		int bits = ((1 << p->size) - 1) << s;
		if (mask & bits)
			return -1;
		mask |= bits;
		*compute += p->compute;
	}
	return mask;
}

bool mu_mig_valid(const mu_mig_model_t *m, const mu_mig_gpu_t *g)
{
	int c;
	if (!m || !g || g->n < 0 || g->n > MU_MIG_MAX_INST || (!g->enabled && g->n))
		return false;
	return used_slots(m, g, &c) >= 0 && c <= MU_MIG_COMPUTE;
}

/* Adds one instance of profile p to g at the highest free start; false
 * when it does not fit. */
static bool gpu_add(const mu_mig_model_t *m, mu_mig_gpu_t *g, int p)
{
	int c, mask = used_slots(m, g, &c);
	const mu_mig_profile_t *pr = &m->profiles[p];
	if (mask < 0 || g->n >= MU_MIG_MAX_INST || c + pr->compute > MU_MIG_COMPUTE)
		return false;
	for (int s = MU_MIG_SLOTS - 1; s >= 0; s--) {
		int bits = ((1 << pr->size) - 1) << s;
		if (!(pr->starts >> s & 1) || s + pr->size > MU_MIG_SLOTS || (mask & bits))
			continue;
		g->prof[g->n] = (int8_t)p;
		g->start[g->n++] = (int8_t)s;
		return true;
	}
	return false;
}

/* How many GPUs to keep whole first: all that whole pods ask for when the
 * demand fits, else their share of the demand's compute (rounded up). */
static int plan_keep(const mu_mig_model_t *m, int ngpu, int whole,
		     const int32_t *demand)
{
	if (whole <= 0)
		return 0;
	double mig = 0, w = (double)whole * MU_MIG_COMPUTE;
	for (int p = 0; p < m->nprofiles; p++)
		mig += (double)demand[p] * m->profiles[p].compute;
	int keep = whole < ngpu ? whole : ngpu;
	if (w + mig > (double)ngpu * MU_MIG_COMPUTE) {
		int share = (int)((double)ngpu * w / (w + mig) + 0.999999);
		keep = share < keep ? share : keep;
	}
	return keep;
}

void mu_mig_plan(const mu_mig_model_t *m, int ngpu, int whole,
		 const int32_t *demand, mu_mig_gpu_t *out, int32_t *served,
		 int *whole_served)
{
	int keep = plan_keep(m, ngpu, whole, demand);
	for (int i = 0; i < ngpu; i++)
		out[i] = (mu_mig_gpu_t){.enabled = false};
	int opened = keep; /* GPUs keep..opened-1 have MIG on */
	for (int p = m->nprofiles - 1; p >= 0; p--) {
		int32_t got = 0;
		for (int32_t k = 0; k < demand[p]; k++) {
			bool ok = false;
			for (int g = keep; g < opened && !ok; g++)
				ok = gpu_add(m, &out[g], p);
			if (!ok && opened < ngpu) {
				out[opened].enabled = true;
				ok = gpu_add(m, &out[opened++], p);
			}
			if (!ok)
				break; /* no GPU holds one more of this size */
			got++;
		}
		if (served)
			served[p] = got;
	}
	/* GPUs no instance needed serve more whole pods */
	int left = ngpu - opened;
	if (whole_served)
		*whole_served = keep + (whole - keep < left ? whole - keep : left);
}

void mu_mig_count(const mu_mig_model_t *m, const mu_mig_gpu_t *g,
		  int32_t *count)
{
	for (int i = 0; i < g->n; i++)
		if (g->prof[i] >= 0 && g->prof[i] < m->nprofiles)
			count[g->prof[i]]++;
}

const mu_mig_model_t *mu_mig_node_model(const mu_node_spec_t *n)
{
	const mu_mig_model_t *m = mu_mig_model(n->gpu_model);
	for (size_t i = 0; !m && i < n->nlabels; i++)
		if (!strcmp(n->labels[i].key, "nvidia.com/gpu.product"))
			m = mu_mig_model(n->labels[i].value);
	return m;
}

/* The node's physical GPUs: nvidia.com/gpu.count, else its devices. */
static int node_gpus(const mu_node_spec_t *n)
{
	for (size_t i = 0; i < n->nlabels; i++) {
		if (strcmp(n->labels[i].key, "nvidia.com/gpu.count"))
			continue;
		int v = 0;
		for (const char *p = n->labels[i].value; p && *p >= '0' && *p <= '9' && v <= MU_MAX_GPUS; p++)
			v = v * 10 + (*p - '0');
		if (v > 0 && v <= MU_MAX_GPUS)
			return v;
	}
	return (int)n->alloc.v[MU_RES_GPU];
}

/* Adds the jobs' demand for model m's profiles into demand (nprofiles)
 * and whole GPUs into *whole.  O(pod sets x extended resources). */
static void job_demand(const mu_mig_model_t *m, const mu_job_spec_t *jobs,
		       size_t njobs, int32_t *demand, int64_t *whole)
{
	for (size_t j = 0; j < njobs; j++) {
		for (size_t p = 0; p < jobs[j].npodsets; p++) {
			const mu_podset_spec_t *ps = &jobs[j].podsets[p];
			*whole += ps->req.v[MU_RES_GPU] * ps->replicas;
			for (size_t e = 0; e < ps->next; e++) {
				const char *nm = ps->ext[e].name;
				if (strncmp(nm, "nvidia.com/mig-", 15))
					continue;
				int k = mu_mig_profile_index(m, nm + 11);
				int64_t add = ps->ext[e].qty * ps->replicas; /* both bounded by the loader */
				if (k >= 0)
					demand[k] = add > INT32_MAX - demand[k] ? INT32_MAX
						    : demand[k] + (int32_t)add;
			}
		}
	}
}

int mu_mig_plan_nodes(const mu_node_spec_t *nodes, size_t nnodes,
		      const mu_job_spec_t *jobs, size_t njobs,
		      mu_mig_node_plan_t *out, int cap)
{
	int n = 0;
	for (size_t i = 0; i < nnodes; i++) {
		const mu_mig_model_t *m = mu_mig_node_model(&nodes[i]);
		int g = node_gpus(&nodes[i]);
		if (!m || g <= 0)
			continue;
		if (n == cap)
			return MU_ELIMIT;
		out[n++] = (mu_mig_node_plan_t){.node = nodes[i].name, .model = m, .ngpu = g};
	}
	int64_t whole_left = -1;
	for (size_t k = 0; k < sizeof models / sizeof *models; k++) {
		const mu_mig_model_t *m = &models[k];
		int32_t demand[MU_MIG_MAX_PROFILES] = {0};
		int64_t whole = 0;
		int pool = 0;
		for (int i = 0; i < n; i++)
			pool += out[i].model == m ? out[i].ngpu : 0;
		if (!pool)
			continue;
		job_demand(m, jobs, njobs, demand, &whole);
		if (whole_left < 0)
			whole_left = whole;
		mu_mig_gpu_t *all = calloc((size_t)pool, sizeof *all);
		if (!all)
			return MU_ENOMEM;
		int ws = 0;
		mu_mig_plan(m, pool, whole_left > INT32_MAX ? INT32_MAX : (int)whole_left,
			    demand, all, NULL, &ws);
		whole_left -= ws;
		for (int i = 0, at = 0; i < n; i++) {
			if (out[i].model != m)
				continue;
			memcpy(out[i].gpus, all + at, (size_t)out[i].ngpu * sizeof *all);
			at += out[i].ngpu;
		}
		free(all);
	}
	return n;
}

bool mu_mig_same(const mu_mig_gpu_t *a, const mu_mig_gpu_t *b)
{
	if (a->enabled != b->enabled || a->n != b->n)
		return false;
	for (int i = 0; i < a->n; i++) {
		bool found = false;
		for (int k = 0; k < b->n && !found; k++)
			found = a->prof[i] == b->prof[k] && a->start[i] == b->start[k];
		if (!found)
			return false;
	}
	return true;
}

/* Takes what the free devices of g[0..ngpu-1] (held masks h, NULL when
 * nothing is held) serve off *whole and dem[].  O(ngpu x instances). */
static void serve_free(const mu_mig_gpu_t *g, const uint8_t *h, int ngpu,
		       int *whole, int32_t *dem)
{
	for (int i = 0; i < ngpu; i++) {
		uint8_t mask = h ? h[i] : 0;
		if (!g[i].enabled) {
			if (!mask && *whole > 0)
				(*whole)--;
			continue;
		}
		for (int k = 0; k < g[i].n; k++)
			if (!(mask >> k & 1) && dem[g[i].prof[k]] > 0)
				dem[g[i].prof[k]]--;
	}
}

/* Writes what layouts g serve of the demand into served and *whole_served
 * (either may be NULL). */
static void report_served(const mu_mig_model_t *m, const mu_mig_gpu_t *g,
			  const uint8_t *h, int ngpu, int whole,
			  const int32_t *demand, int32_t *served, int *whole_served)
{
	int32_t dem[MU_MIG_MAX_PROFILES];
	int w = whole;
	memcpy(dem, demand, (size_t)m->nprofiles * sizeof *dem);
	serve_free(g, h, ngpu, &w, dem);
	for (int p = 0; served && p < m->nprofiles; p++)
		served[p] = demand[p] - dem[p];
	if (whole_served)
		*whole_served = whole - w;
}

int mu_mig_replan(const mu_mig_model_t *m, int ngpu, const mu_mig_gpu_t *cur,
		  const uint8_t *held, int whole, const int32_t *demand,
		  mu_mig_gpu_t *out, int32_t *served, int *whole_served)
{
	if (!m || ngpu < 0 || whole < 0 || !cur || !held || !demand || !out)
		return MU_EINVAL;
	for (int g = 0; g < ngpu; g++)
		if (!mu_mig_valid(m, &cur[g]) || (cur[g].enabled && (held[g] >> cur[g].n)))
			return MU_EINVAL;
	int32_t dem[MU_MIG_MAX_PROFILES];
	int w = whole;
	bool all = true;
	for (int p = 0; p < m->nprofiles; p++)
		if (demand[p] < 0)
			return MU_EINVAL;
	memcpy(dem, demand, (size_t)m->nprofiles * sizeof *dem);
	serve_free(cur, held, ngpu, &w, dem);
	for (int p = 0; p < m->nprofiles; p++)
		all = all && dem[p] == 0;
	if (all && w == 0) { /* 1. the layouts as they are serve it all */
		memcpy(out, cur, (size_t)ngpu * sizeof *out);
		report_served(m, out, held, ngpu, whole, demand, served, whole_served);
		return 0;
	}
	/* 2. GPUs with a held device keep it; the rest are planned anew */
	memcpy(dem, demand, (size_t)m->nprofiles * sizeof *dem);
	int *idle = malloc((size_t)(ngpu ? ngpu : 1) * sizeof *idle), nidle = 0;
	if (!idle)
		return MU_ENOMEM;
	for (int g = 0; g < ngpu; g++) {
		if (!held[g]) {
			idle[nidle++] = g;
			continue;
		}
		out[g] = cur[g];
		if (!cur[g].enabled)
			continue; /* a whole GPU in use */
		out[g].n = 0;
		for (int k = 0; k < cur[g].n; k++) { /* held, then wanted */
			int p = cur[g].prof[k];
			bool keep = held[g] >> k & 1;
			if (!keep && dem[p] > 0) {
				dem[p]--;
				keep = true;
			}
			if (keep) {
				out[g].prof[out[g].n] = cur[g].prof[k];
				out[g].start[out[g].n++] = cur[g].start[k];
			}
		}
	}
	for (int p = m->nprofiles - 1; p >= 0; p--) /* more on those GPUs */
		for (int g = 0; g < ngpu && dem[p] > 0; g++)
			while (held[g] && out[g].enabled && dem[p] > 0 && gpu_add(m, &out[g], p))
				dem[p]--;
	mu_mig_gpu_t *fresh = calloc((size_t)(nidle ? nidle : 1), sizeof *fresh);
	bool *taken = calloc((size_t)(nidle ? nidle : 1), sizeof *taken);
	if (!fresh || !taken) {
		free(idle);
		free(fresh);
		free(taken);
		return MU_ENOMEM;
	}
	mu_mig_plan(m, nidle, whole, dem, fresh, NULL, NULL);
	/* a fresh layout goes to an idle GPU that has it already, if any */
	bool *placed = calloc((size_t)(nidle ? nidle : 1), sizeof *placed);
	if (!placed) {
		free(idle);
		free(fresh);
		free(taken);
		return MU_ENOMEM;
	}
	for (int f = 0; f < nidle; f++)
		for (int i = 0; i < nidle && !placed[f]; i++)
			if (!taken[i] && mu_mig_same(&fresh[f], &cur[idle[i]])) {
				out[idle[i]] = fresh[f];
				taken[i] = placed[f] = true;
			}
	for (int f = 0, i = 0; f < nidle; f++) {
		if (placed[f])
			continue;
		while (taken[i])
			i++;
		out[idle[i]] = fresh[f];
		taken[i] = true;
	}
	free(placed);
	free(fresh);
	free(taken);
	free(idle);
	report_served(m, out, held, ngpu, whole, demand, served, whole_served);
	int changed = 0;
	for (int g = 0; g < ngpu; g++)
		changed += !mu_mig_same(&out[g], &cur[g]);
	return changed;
}

/* Parses s for model m into *out; see mu_mig_parse(). */
static int parse_one(const mu_mig_model_t *m, const char *s, mu_mig_gpu_t *out,
		     char *why, size_t len)
{
	*out = (mu_mig_gpu_t){.enabled = true};
	if (!strcmp(s, "whole")) {
		out->enabled = false;
		return MU_OK;
	}
	if (!strcmp(s, "empty"))
		return MU_OK;
	for (const char *p = s; ; ) {
		const char *end = strchr(p, '+');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char tok[32], name[32];
		if (n == 0 || n >= sizeof tok) {
			snprintf(why, len, "expected \"whole\", \"empty\" or PROFILE@START "
				 "joined by '+', got '%.40s'", s);
			return MU_EINVAL;
		}
		memcpy(tok, p, n);
		tok[n] = '\0';
		char *at = strchr(tok, '@');
		int start = -1;
		if (at) {
			char *e;
			long v = strtol(at + 1, &e, 10);
			if (e == at + 1 || *e || v < 0 || v >= MU_MIG_SLOTS) {
				snprintf(why, len, "'%s': the start must be a memory slice 0 to 7", tok);
				return MU_EINVAL;
			}
			start = (int)v;
			*at = '\0';
		}
		snprintf(name, sizeof name, "%s", tok);
		int k = mu_mig_profile_index(m, name);
		if (k < 0) {
			snprintf(why, len, "unknown MIG profile '%s' for %s", name, m->name);
			return MU_EINVAL;
		}
		if (out->n >= MU_MIG_MAX_INST) {
			snprintf(why, len, "more than %d instances on one GPU", MU_MIG_MAX_INST);
			return MU_EINVAL;
		}
		if (start < 0) {
			if (!gpu_add(m, out, k)) {
				snprintf(why, len, "'%s' does not fit beside the instances before it", name);
				return MU_EINVAL;
			}
		} else {
			out->prof[out->n] = (int8_t)k;
			out->start[out->n++] = (int8_t)start;
			int c;
			if (used_slots(m, out, &c) < 0) {
				snprintf(why, len, "'%s@%d': %s may not start at slice %d or "
					 "overlaps an instance before it", name, start, name, start);
				return MU_EINVAL;
			}
			if (c > MU_MIG_COMPUTE) {
				snprintf(why, len, "'%s@%d': more than 7 compute slices", name, start);
				return MU_EINVAL;
			}
		}
		if (!end)
			return MU_OK;
		p = end + 1;
	}
}

int mu_mig_parse(const mu_mig_model_t *m, const char *s, mu_mig_gpu_t *out,
		 char *why, size_t len)
{
	if (!s || !out)
		return MU_EINVAL;
	if (m)
		return parse_one(m, s, out, why, len);
	int rc = MU_EINVAL;
	for (size_t k = 0; k < sizeof models / sizeof *models && rc; k++)
		rc = parse_one(&models[k], s, out, why, len);
	if (rc)
		rc = parse_one(&models[1], s, out, why, len); /* A100-80GB's words */
	return rc;
}

size_t mu_mig_format(const mu_mig_model_t *m, const mu_mig_gpu_t *g, char *buf,
		     size_t len)
{
	size_t at = 0;
	char tmp[32];
	if (len)
		buf[0] = '\0';
	if (!g->enabled || !g->n) {
		const char *w = g->enabled ? "empty" : "whole";
		if (len)
			snprintf(buf, len, "%s", w);
		return strlen(w);
	}
	for (int s = 0; s < MU_MIG_SLOTS; s++)
		for (int i = 0; i < g->n; i++) {
			if (g->start[i] != s || g->prof[i] < 0 || g->prof[i] >= m->nprofiles)
				continue;
			int n = snprintf(tmp, sizeof tmp, "%s%s@%d", at ? "+" : "",
					 m->profiles[g->prof[i]].name, s);
			if (n > 0 && at + (size_t)n < len)
				memcpy(buf + at, tmp, (size_t)n + 1);
			else if (len)
				buf[at < len ? at : len - 1] = '\0';
			at += n > 0 ? (size_t)n : 0;
		}
	return at;
}

int mu_mig_parse_node(const mu_mig_model_t *m, const char *s, mu_mig_gpu_t *out,
		      int cap, char *why, size_t len)
{
	int n = 0;
	if (!s || !out || cap < 0)
		return MU_EINVAL;
	for (const char *p = s; ; ) {
		const char *end = strchr(p, ';');
		size_t k = end ? (size_t)(end - p) : strlen(p);
		char one[200];
		if (n == cap) {
			snprintf(why, len, "more than %d GPUs", cap);
			return MU_ELIMIT;
		}
		if (k >= sizeof one) {
			snprintf(why, len, "GPU %d: longer than %zu characters", n, sizeof one - 1);
			return MU_EINVAL;
		}
		memcpy(one, p, k);
		one[k] = '\0';
		char w[160] = "";
		if (mu_mig_parse(m, one, &out[n], w, sizeof w)) {
			snprintf(why, len, "GPU %d: %s", n, w);
			return MU_EINVAL;
		}
		n++;
		if (!end)
			return n;
		p = end + 1;
	}
}

size_t mu_mig_format_node(const mu_mig_model_t *m, const mu_mig_gpu_t *g, int n,
			  char *buf, size_t len)
{
	size_t at = 0;
	char one[160];
	if (len)
		buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		size_t k = mu_mig_format(m, &g[i], one, sizeof one);
		if (k >= sizeof one)
			k = sizeof one - 1;
		if (at + (i > 0) + k < len) {
			if (i)
				buf[at] = ';';
			memcpy(buf + at + (i > 0), one, k + 1);
		}
		at += (i > 0) + k;
	}
	return at;
}
