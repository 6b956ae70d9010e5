/*
 * test_dispatch_podcap.c - capacity from pods, round 12: the named
 * extended resources of a worker's pods that the hub did not send
 * (summed per node as Kubernetes' PodRequests sums a pod's request, in
 * the agent's and the watch's text after the core slots) are taken from
 * the node's named resources in the hub's model, and a hub job asking for
 * them then fits only where they are left.  Round 13: a pod's share of
 * one GPU takes only its share of its device in the model, so a hub job
 * asking a share fits on the room left (test_shares).
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "dispatch/dispatch_int.h"
#include "muster/fleet.h"

static json_t *J(const char *text)
{
	json_error_t e;
	json_t *o = json_loads(text, 0, &e);
	if (!o)
		fprintf(stderr, "bad test JSON: %s\n", e.text);
	return o;
}

/* On n1: a pod with 2 FPGAs in a container, an init container of 3 and,
 * after it, a sidecar of 1 (max(2 + 1, 3) = 3), and a pod with 1 FPGA
 * and 2 of another name; a hub copy's 8 are not counted; GPU shares
 * (muster.io/...) and kubernetes.io names are not named. */
static void test_named_sums(mu_t_t *t)
{
	json_t *l = J("{\"items\":["
		      "{\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"resources\":{\"limits\":{\"example.com/fpga\":\"2\"}}}],"
		      "\"initContainers\":[{\"resources\":{\"requests\":{\"example.com/fpga\":\"3\"}}},"
		      "{\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"example.com/fpga\":\"1\"}}}]}},"
		      "{\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"resources\":{\"requests\":{\"example.com/fpga\":1,"
		      "\"acme.io/nic\":\"2\",\"muster.io/gpu-milli\":\"500\",\"kubernetes.io/x\":\"1\"}}}]}},"
		      "{\"metadata\":{\"labels\":{\"muster.io/hub-uid\":\"u1\"}},"
		      "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"resources\":{\"limits\":{\"example.com/fpga\":\"8\"}}}]}}]}");
	json_t *u = mu__dpods_used(l);
	const char *s = json_string_value(json_object_get(u, "n1"));
	/* pod 1: 3; pod 2: 1; in all 4 FPGAs and 2 NICs; muster.io's share
	 * is a GPU device of its own */
	CHECK_STR(t, s, "cpu=0m,memory=0,nvidia.com/gpu=1,pods=2,acme.io/nic=2,example.com/fpga=4,"
		  "muster.io/gpu-share=500");
	mu_res_t r;
	CHECK_EQ_INT(t, mu__dused_parse(s, &r), MU_OK); /* the core slots read as before */
	CHECK_EQ_INT(t, r.v[MU_RES_PODS], 2);
	mu_ext_qty_t ext[2] = {{"example.com/fpga", 8}, {"other.io/x", 3}};
	mu_node_spec_t n;
	memset(&n, 0, sizeof n);
	n.ext = ext;
	n.next = 2;
	CHECK_EQ_INT(t, mu__dused_ext(s, &n), MU_OK);
	CHECK_EQ_INT(t, ext[0].qty, 4);
	CHECK_EQ_INT(t, ext[1].qty, 3);
	CHECK_EQ_INT(t, mu__dused_ext("cpu=0m,memory=0,nvidia.com/gpu=0,pods=1,example.com/fpga=9", &n), MU_OK);
	CHECK_EQ_INT(t, ext[0].qty, 0); /* at least 0 */
	CHECK_EQ_INT(t, mu__dused_ext("cpu=0m,memory=0,nvidia.com/gpu=0,pods=1,bad", &n), MU_EPARSE);
	CHECK_EQ_INT(t, mu__dused_ext("cpu=0m,memory=0,nvidia.com/gpu=0,pods=1", &n), MU_OK);
	json_decref(u);
	json_decref(l);
}

/* The hub's model with the FPGAs others use taken: a job of 4 FPGAs does
 * not fit on a node of 8 where 5 are used, and fits once they are not. */
static void test_named_in_model(mu_t_t *t)
{
	mu_fleet_t *f;
	CHECK_EQ_INT(t, mu_fleet_new(NULL, &f), MU_OK);
	mu_cluster_spec_t cs = {.name = "w", .tier = MU_TIER_PRIVATE};
	int32_t c;
	CHECK_EQ_INT(t, mu_fleet_cluster_add(f, &cs, &c), MU_OK);
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "team";
	CHECK_EQ_INT(t, mu_fleet_queue_upsert(f, &q), MU_OK);
	mu_ext_qty_t ext[1] = {{"example.com/fpga", 8}};
	mu_node_spec_t n;
	memset(&n, 0, sizeof n);
	n.name = "n1";
	n.alloc.v[MU_RES_CPU] = 64000;
	n.alloc.v[MU_RES_MEM] = 1LL << 36;
	n.alloc.v[MU_RES_PODS] = 110;
	n.ext = ext;
	n.next = 1;
	const char *used = "cpu=0m,memory=0,nvidia.com/gpu=0,pods=2,example.com/fpga=5";
	mu_res_t u;
	CHECK_EQ_INT(t, mu__dused_parse(used, &u), MU_OK);
	CHECK_EQ_INT(t, mu__dused_ext(used, &n), MU_OK);
	CHECK_EQ_INT(t, mu_fleet_node_upsert_used(f, c, &n, &u), MU_OK);
	mu_ext_qty_t want[1] = {{"example.com/fpga", 4}};
	mu_podset_spec_t ps;
	memset(&ps, 0, sizeof ps);
	ps.name = "main";
	ps.replicas = 1;
	ps.req.v[MU_RES_CPU] = 1000;
	ps.ext = want;
	ps.next = 1;
	mu_job_spec_t j;
	memset(&j, 0, sizeof j);
	j.name = "fpga";
	j.queue = "team";
	j.podsets = &ps;
	j.npodsets = 1;
	j.submit = MU_TIME_NONE;
	j.preemptible = true;
	mu_fleet_job_spec_t fs = {.job = &j};
	mu_id_t id;
	CHECK_EQ_INT(t, mu_fleet_job_submit(f, &fs, 0, &id), MU_OK);
	mu_fleet_decisions_t d;
	mu_fleet_decisions_init(&d);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 0, &d), MU_OK);
	CHECK_EQ_INT(t, d.n, 0);
	/* the pods gone: the node as it is, and the job goes */
	ext[0].qty = 8;
	mu_res_t none = {{0}};
	CHECK_EQ_INT(t, mu_fleet_node_upsert_used(f, c, &n, &none), MU_OK);
	CHECK_EQ_INT(t, mu_fleet_dispatch(f, 1000, &d), MU_OK);
	CHECK_EQ_INT(t, d.n, 1);
	mu_fleet_decisions_release(&d);
	mu_fleet_free(f);
}

/* On n1 (8 GPUs): device 2 holds two share pods (0.5 recorded by
 * muster's bind, 0.25 as KAI's gpu-fraction), device 3 a gpu-memory pod
 * whose share is not known (whole), a pod 2 whole GPUs, and a pod of
 * gpu-fraction 0.5 names no device.  The text counts 5 GPUs as before
 * and the two known shares after; the model takes 3 whole GPUs and the
 * shares' milli-GPU: a gang of 7 x 0.5 GPU fits (3 free devices and the
 * half left of one), a 0.25 GPU pod then fits on device 2's room, and
 * one more does not.  Counted whole (round 12), the gang did not fit. */
static void test_shares(mu_t_t *t)
{
	json_t *l = J("{\"items\":["
		      "{\"metadata\":{\"name\":\"a\",\"annotations\":{\"gpu-fraction\":\"0.5\",\"muster.io/gpus\":\"2\","
		      "\"muster.io/gpu-milli\":\"500\"}},\"spec\":{\"nodeName\":\"n1\",\"containers\":[{}]}},"
		      "{\"metadata\":{\"name\":\"b\",\"annotations\":{\"gpu-fraction\":\"0.25\",\"muster.io/gpus\":\"2\"}},"
		      "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{}]}},"
		      "{\"metadata\":{\"name\":\"c\",\"annotations\":{\"gpu-memory\":\"4000\",\"muster.io/gpus\":\"3\"}},"
		      "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{}]}},"
		      "{\"metadata\":{\"name\":\"d\"},\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"resources\":"
		      "{\"limits\":{\"nvidia.com/gpu\":\"2\"}}}]}},"
		      "{\"metadata\":{\"name\":\"e\",\"namespace\":\"x\",\"annotations\":{\"gpu-fraction\":\"0.5\"}},"
		      "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{}]}}]}");
	json_t *u = mu__dpods_used(l);
	const char *s = json_string_value(json_object_get(u, "n1"));
	CHECK_STR(t, s, "cpu=0m,memory=0,nvidia.com/gpu=5,pods=5,muster.io/gpu-share.2=750,"
		  "muster.io/gpu-share=500");
	mu_res_t r;
	CHECK_EQ_INT(t, mu__dused_parse(s, &r), MU_OK); /* a reader of round 12: 5 whole */
	CHECK_EQ_INT(t, r.v[MU_RES_GPU], 5);
	mu_fleet_share_t sh[4];
	CHECK_EQ_INT(t, mu__dused_model(s, &r, sh, 4), 2);
	CHECK_EQ_INT(t, r.v[MU_RES_GPU], 3);
	CHECK_EQ_INT(t, r.v[MU_RES_PODS], 3);
	CHECK_EQ_INT(t, sh[0].device, 2);
	CHECK_EQ_INT(t, sh[0].milli, 750);
	CHECK_EQ_INT(t, sh[1].device, -1);
	CHECK_EQ_INT(t, sh[1].milli, 500);
	CHECK_EQ_INT(t, mu__dused_shares("cpu=0m,memory=0,nvidia.com/gpu=1,pods=1,muster.io/gpu-share.2=1000",
					 sh, 4), MU_EPARSE);
	CHECK_EQ_INT(t, mu__dused_shares("cpu=0m,memory=0,nvidia.com/gpu=1,pods=1,muster.io/gpu-share.x=5",
					 sh, 4), MU_EPARSE);
	mu_fleet_share_t sh2[4];
	CHECK_EQ_INT(t, mu__dused_model(s, &r, sh2, 4), 2);

	mu_fleet_t *f;
	CHECK_EQ_INT(t, mu_fleet_new(NULL, &f), MU_OK);
	mu_cluster_spec_t cs = {.name = "w", .tier = MU_TIER_PRIVATE};
	int32_t c;
	CHECK_EQ_INT(t, mu_fleet_cluster_add(f, &cs, &c), MU_OK);
	mu_queue_spec_t q;
	mu_queue_spec_defaults(&q);
	q.name = "team";
	CHECK_EQ_INT(t, mu_fleet_queue_upsert(f, &q), MU_OK);
	mu_node_spec_t n;
	memset(&n, 0, sizeof n);
	n.name = "n1";
	n.alloc.v[MU_RES_CPU] = 64000;
	n.alloc.v[MU_RES_MEM] = 1LL << 36;
	n.alloc.v[MU_RES_GPU] = 8;
	n.alloc.v[MU_RES_PODS] = 110;
	CHECK_EQ_INT(t, mu_fleet_node_upsert_shared(f, c, &n, &r, sh2, 2, 0), MU_OK);
	mu_res_t alloc, used;
	mu_engine_totals(mu_fleet_cluster_engine(f, c), &alloc, &used);
	CHECK_EQ_INT(t, alloc.v[MU_RES_GPU], 5000);
	CHECK_EQ_INT(t, used.v[MU_RES_GPU], 1250);
	CHECK_EQ_INT(t, used.v[MU_RES_PODS], 2);
	/* again: the node's shares are replaced, not added */
	CHECK_EQ_INT(t, mu_fleet_node_upsert_shared(f, c, &n, &r, sh2, 2, 0), MU_OK);
	mu_engine_totals(mu_fleet_cluster_engine(f, c), &alloc, &used);
	CHECK_EQ_INT(t, used.v[MU_RES_GPU], 1250);
	mu_fleet_share_t bad = {1, 1000};
	CHECK_EQ_INT(t, mu_fleet_node_upsert_shared(f, c, &n, &r, &bad, 1, 0), MU_EINVAL);

	mu_podset_spec_t ps[3];
	mu_job_spec_t j[3];
	mu_fleet_job_spec_t fs[3];
	static const char *const names[3] = {"gang", "quarter", "quarter2"};
	static const int32_t reps[3] = {7, 1, 1};
	static const int64_t milli[3] = {500, 250, 250};
	mu_fleet_decisions_t d;
	mu_fleet_decisions_init(&d);
	for (int i = 0; i < 3; i++) {
		memset(&ps[i], 0, sizeof ps[i]);
		ps[i].name = "main";
		ps[i].replicas = reps[i];
		ps[i].req.v[MU_RES_CPU] = 100;
		ps[i].req.v[MU_RES_GPU_MILLI] = milli[i];
		memset(&j[i], 0, sizeof j[i]);
		j[i].name = names[i];
		j[i].queue = "team";
		j[i].podsets = &ps[i];
		j[i].npodsets = 1;
		j[i].submit = MU_TIME_NONE;
		j[i].preemptible = true;
		fs[i] = (mu_fleet_job_spec_t){.job = &j[i]};
		mu_id_t id;
		CHECK_EQ_INT(t, mu_fleet_job_submit(f, &fs[i], 1000 * i, &id), MU_OK);
		size_t had = d.n;
		CHECK_EQ_INT(t, mu_fleet_dispatch(f, 1000 * i, &d), MU_OK);
		CHECK_EQ_INT(t, (int)(d.n - had), i < 2 ? 1 : 0);
	}
	mu_fleet_job_info_t ji;
	CHECK_EQ_INT(t, mu_fleet_job_info(f, 2, &ji), MU_OK);
	CHECK_EQ_INT(t, ji.why, MU_FW_NO_FIT);
	/* the node gone and back without the shares: its GPUs as the jobs left them */
	CHECK_EQ_INT(t, mu_fleet_node_remove(f, c, "n1", 5000), MU_OK);
	mu_engine_totals(mu_fleet_cluster_engine(f, c), &alloc, &used);
	CHECK_EQ_INT(t, used.v[MU_RES_GPU], 0);
	mu_fleet_decisions_release(&d);
	mu_fleet_free(f);
	json_decref(u);
	json_decref(l);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_named_sums);
	MU_RUN(&t, test_named_in_model);
	MU_RUN(&t, test_shares);
	return mu_t_done(&t);
}
