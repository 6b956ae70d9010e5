/*
 * fuzz_yaml.c - libFuzzer target for the YAML loader: the input is loaded
 * as YAML (NUL-terminated copy), the specs it produced are checked against
 * the loader's promises (names set, pod sets non-empty, GPU requests either
 * whole or a share, pinned CPUs whole, pod affinity and spread terms the
 * engine accepts, node topologies in range, a scenario's MIG layouts
 * parseable, diag text terminated), then validated (which attaches NodeResourceTopology
 * documents to their nodes) and checked again, and released; a JSON
 * input is also read as a tree (mu_load_json), which must agree with the
 * text path.  A broken promise aborts, so that the fuzzer reports it like a crash.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "muster/load.h"
#include "muster/mig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Aborts unless a pod set's terms between pods are ones the engine
 * accepts: topology keys set, weights 0..100, skews of 1 or more,
 * minDomains only with DoNotSchedule, at most 16 of each. */
static void check_affinity(const mu_podset_spec_t *ps)
{
	if (ps->npod_terms > 64 || ps->nspread > 16 || ps->nnode_pref > 16)
		abort();
	for (size_t i = 0; i < ps->npod_terms; i++) {
		const mu_pod_term_t *t = &ps->pod_terms[i];
		if (!t->topology_key || !*t->topology_key || t->weight < 0 || t->weight > 100)
			abort();
		for (size_t r = 0; r < t->sel.nreqs; r++)
			if (t->sel.reqs[r].op > MU_SEL_DOES_NOT_EXIST)
				abort();
	}
	for (size_t i = 0; i < ps->nspread; i++) {
		const mu_spread_spec_t *sp = &ps->spread[i];
		if (!sp->topology_key || !*sp->topology_key || sp->max_skew < 1 ||
		    sp->min_domains < 0 || (sp->min_domains && sp->schedule_anyway))
			abort();
	}
	for (size_t i = 0; i < ps->nnode_pref; i++)
		if (ps->node_pref[i].weight < 1 || ps->node_pref[i].weight > 100)
			abort();
}

/* Aborts unless txt (NULL allowed) is JSON text: an array of objects with
 * a name (a pod's resourceClaims) or an object with a kind and a name (a
 * DRA document), which the scenario runner relies on. */
static void check_json(const char *txt, bool claims)
{
	if (!txt)
		return;
	json_t *v = json_loads(txt, JSON_DECODE_ANY, NULL);
	bool ok = v && (claims ? json_is_array(v) : json_is_object(v));
	size_t i;
	json_t *c;
	if (ok && claims)
		json_array_foreach(v, i, c)
			ok &= json_is_string(json_object_get(c, "name"));
	if (ok && !claims)
		ok = json_is_string(json_object_get(v, "kind")) &&
		     json_is_string(json_object_get(json_object_get(v, "metadata"), "name"));
	json_decref(v);
	if (!ok)
		abort();
}

/* Aborts unless every job spec the loader appended keeps its promises. */
static void check_jobs(const mu_specs_t *s)
{
	for (size_t i = 0; i < s->njobs; i++) {
		const mu_job_spec_t *j = &s->jobs[i];
		if (!j->name || !j->queue || j->npodsets == 0 ||
		    j->min_member > mu_job_spec_pods(j))
			abort();
		for (size_t k = 0; k < j->npodsets; k++) {
			const mu_res_t *r = &j->podsets[k].req;
			if (!j->podsets[k].name || j->podsets[k].replicas < 1 ||
			    r->v[MU_RES_GPU_MILLI] < 0 ||
			    r->v[MU_RES_GPU_MILLI] > 999 ||
			    (r->v[MU_RES_GPU] && r->v[MU_RES_GPU_MILLI]) ||
			    r->v[MU_RES_GPU] > MU_MAX_GPUS)
				abort();
			check_affinity(&j->podsets[k]);
			check_json(j->podsets[k].dra_claims, true);
		}
	}
	for (size_t i = 0; i < s->ndra; i++)
		check_json(s->dra[i], false);
}

/* Aborts unless a node's topology is one the engine accepts: ranges,
 * and every GPU and NIC on a NUMA node that exists. */
static void check_node_topo(const mu_node_topo_spec_t *t)
{
	if (t->nnuma < 0 || t->nnuma > MU_MAX_NUMA || t->nnics < 0 ||
	    t->nnics > MU_MAX_NICS)
		abort();
	for (int g = 0; g < MU_MAX_GPUS; g++)
		if (t->gpu_numa[g] < -1 || t->gpu_numa[g] >= t->nnuma ||
		    t->gpu_group[g] < -1 || t->gpu_group[g] >= MU_MAX_GPUS)
			abort();
	for (int i = 0; i < t->nnics; i++)
		if (t->nic_numa[i] < -1 || t->nic_numa[i] >= t->nnuma)
			abort();
}

/* Aborts unless pod sets that pin CPUs ask for whole CPUs, and
 * topologies have 1 to MU_MAX_LEVELS levels. */
static void check_topology(const mu_specs_t *s)
{
	for (size_t i = 0; i < s->njobs; i++)
		for (size_t k = 0; k < s->jobs[i].npodsets; k++) {
			const mu_podset_spec_t *ps = &s->jobs[i].podsets[k];
			int64_t cpu = ps->req.v[MU_RES_CPU];
			if ((ps->pin_cpus && (cpu <= 0 || cpu % 1000 ||
					      cpu / 1000 > MU_MAX_CPUS)) ||
			    ps->align < MU_ALIGN_NONE || ps->align > MU_ALIGN_LINK)
				abort();
		}
	for (size_t i = 0; i < s->ntopologies; i++)
		if (s->topologies[i].nlevels < 1 ||
		    s->topologies[i].nlevels > MU_MAX_LEVELS)
			abort();
	for (size_t i = 0; i < s->nnodes; i++)
		if (s->nodes[i].topo)
			check_node_topo(s->nodes[i].topo);
}

/* Aborts unless node and queue specs keep theirs. */
static void check_nodes_queues(const mu_specs_t *s)
{
	for (size_t i = 0; i < s->nnodes; i++) {
		const mu_node_spec_t *n = &s->nodes[i];
		if (!n->name || n->alloc.v[MU_RES_GPU] < 0 ||
		    n->alloc.v[MU_RES_GPU] > MU_MAX_GPUS ||
		    (n->gpu_model && n->alloc.v[MU_RES_GPU] == 0))
			abort();
		for (size_t k = 0; k < n->nlabels; k++)
			if (!n->labels[k].key || !n->labels[k].value)
				abort();
	}
	for (size_t i = 0; i < s->nqueues; i++)
		for (int r = 0; r < MU_RES_MAX; r++)
			if (s->queues[i].limit.v[r] < s->queues[i].deserved.v[r] ||
			    s->queues[i].weight[r] < 0)
				abort();
}

/* Aborts unless every migLayouts text of the scenario parses for some
 * MIG model with 1 to MU_MAX_GPUS GPUs a node, as the runner relies on. */
static void check_mig_list(const mu_mig_layout_spec_t *l, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!l[i].node || l[i].ngpus < 1 || l[i].ngpus > MU_MAX_GPUS)
			abort();
		for (size_t g = 0; g < l[i].ngpus; g++) {
			mu_mig_gpu_t x;
			char why[160];
			if (mu_mig_parse(NULL, l[i].gpus[g], &x, why, sizeof why) ||
			    !memchr(why, '\0', sizeof why))
				abort();
		}
	}
}

static void check_mig(const mu_specs_t *s)
{
	if (!s->scenario)
		return;
	check_mig_list(s->scenario->mig, s->scenario->nmig);
	for (size_t i = 0; i < s->scenario->nsteps; i++)
		check_mig_list(s->scenario->steps[i].expect_mig,
			       s->scenario->steps[i].nexpect_mig);
}

/* When the input is a JSON document, aborts unless mu_load_json of its
 * tree gives what mu_load_yaml gives of the tree's compact text (the
 * dispatcher's promise): the same code and as many jobs, nodes and
 * queues. */
static void check_tree(const char *buf, size_t size)
{
	json_t *v = json_loadb(buf, size, 0, NULL);
	char *text = v ? json_dumps(v, JSON_COMPACT) : NULL;
	if (!text) {
		json_decref(v);
		return;
	}
	mu_specs_t a, b;
	mu_diag_t da, db;
	mu_specs_init(&a);
	mu_specs_init(&b);
	int ra = mu_load_yaml("fuzz.yaml", text, strlen(text), &a, &da);
	int rb = mu_load_json("fuzz.yaml", v, &b, &db);
	if (ra != rb || a.njobs != b.njobs || a.nnodes != b.nnodes || a.nqueues != b.nqueues)
		abort();
	mu_specs_release(&a);
	mu_specs_release(&b);
	free(text);
	json_decref(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	mu_specs_t s;
	mu_diag_t d;
	memset(&d, 0x55, sizeof d);
	mu_specs_init(&s);
	int rc = mu_load_yaml("fuzz.yaml", buf, size, &s, &d);
	if (rc > 0 || (rc < 0 && !memchr(d.msg, '\0', sizeof d.msg)))
		abort();
	check_jobs(&s);
	check_nodes_queues(&s);
	check_topology(&s);
	if (rc == MU_OK)
		check_mig(&s);
	if (rc == MU_OK && mu_specs_validate(&s, &d) == MU_OK)
		check_topology(&s); /* now with NodeResourceTopology attached */
	mu_specs_release(&s);
	check_tree(buf, size);
	free(buf);
	return 0;
}
