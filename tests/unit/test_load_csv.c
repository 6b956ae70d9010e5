/*
 * test_load_csv.c - the CSV reader, the four CSV formats, format dispatch,
 * automatic queues, mu_load_file() and mu_specs_validate(); then, when
 * ../shared/data is there, the real openb and Philly files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "muster/load.h"
#include "muster/csv.h"

#define GIB ((int64_t)1 << 30)
#define MIB ((int64_t)1 << 20)

static int load(const char *text, const mu_load_opts_t *o, mu_specs_t *s,
		mu_diag_t *d)
{
	d->msg[0] = '\0';
	return mu_load_csv("t.csv", text, strlen(text), o, s, d);
}

/* Loads text into a set that already holds one job, and checks that the
 * load fails with a message containing want and leaves the set as it was. */
static void bad(mu_t_t *t, int line, const char *text, const char *want)
{
	mu_specs_t s;
	mu_diag_t d;
	mu_specs_init(&s);
	mu_specs_add_job(&s)->name = "keep";
	int rc = load(text, NULL, &s, &d);
	if (rc >= 0 || !strstr(d.msg, want) || s.njobs != 1 || s.nqueues ||
	    s.nnodes) {
		fprintf(stderr, "%s:%d: rc %d, message \"%s\", want \"%s\"\n",
			__FILE__, line, rc, d.msg, want);
		t->cur_failed++;
	}
	mu_specs_release(&s);
}
#define BAD(t, text, want) bad(t, __LINE__, text, want)

/* --- the reader ----------------------------------------------------------- */

static int read_all_rows(const char *text, char out[][8][32], size_t *nrows,
			 long *lines, mu_diag_t *d)
{
	mu__csv_t c;
	int rc = mu__csv_open(&c, "r.csv", text, strlen(text), d);
	if (rc != MU_OK)
		return rc;
	*nrows = 0;
	while ((rc = mu__csv_next(&c, d)) == 1) {
		for (size_t i = 0; i < c.nf && i < 8; i++)
			snprintf(out[*nrows][i], 32, "%s", c.f[i]);
		lines[*nrows] = c.row_line;
		(*nrows)++;
	}
	mu__csv_release(&c);
	return rc;
}

static void test_reader_fields(mu_t_t *t)
{
	char f[8][8][32] = {{{0}}};
	long lines[8] = {0};
	size_t n = 0;
	mu_diag_t d;
	const char *text = "\xEF\xBB\xBF" "a,b,c\r\n"
		"\r\n"
		"# a comment, with \"quotes\n"
		"  x , \"y,1\",\"say \"\"hi\"\"\"\r\n"
		"\n"
		"\"multi\nline\",,\"\"\n"
		"   # indented comment\n"
		"last,row,end";
	CHECK_EQ_INT(t, read_all_rows(text, f, &n, lines, &d), 0);
	CHECK_EQ_INT(t, n, 4);
	CHECK_STR(t, f[0][0], "a");
	CHECK_STR(t, f[0][2], "c");
	CHECK_EQ_INT(t, lines[0], 1);
	CHECK_STR(t, f[1][0], "x");
	CHECK_STR(t, f[1][1], "y,1");
	CHECK_STR(t, f[1][2], "say \"hi\"");
	CHECK_EQ_INT(t, lines[1], 4);
	CHECK_STR(t, f[2][0], "multi\nline");
	CHECK_STR(t, f[2][1], "");
	CHECK_STR(t, f[2][2], "");
	CHECK_EQ_INT(t, lines[2], 6);
	CHECK_STR(t, f[3][2], "end");
	CHECK_EQ_INT(t, lines[3], 9);
}

static void reader_bad(mu_t_t *t, int line, const char *text, size_t len,
		       const char *want)
{
	mu__csv_t c;
	mu_diag_t d = {{0}};
	int rc = mu__csv_open(&c, "r.csv", text, len, &d);
	if (rc == MU_OK) {
		while ((rc = mu__csv_next(&c, &d)) == 1)
			;
		mu__csv_release(&c);
	}
	if (rc >= 0 || !strstr(d.msg, want)) {
		fprintf(stderr, "%s:%d: rc %d, message \"%s\", want \"%s\"\n",
			__FILE__, line, rc, d.msg, want);
		t->cur_failed++;
	}
}

static void test_reader_errors(mu_t_t *t)
{
	char big[5000], many[300];
	reader_bad(t, __LINE__, "a,b\n1,2\n3\n", 10,
		   "r.csv:3: expected 2 fields as in the header, got 1");
	reader_bad(t, __LINE__, "a,b\n1,2,3\n", 10, "r.csv:2: expected 2 fields");
	reader_bad(t, __LINE__, "a,b\n\n1,\"2\n\n", 11,
		   "r.csv:3: unterminated quoted field");
	reader_bad(t, __LINE__, "a,b\n1,2\n3,\0\n", 12, "r.csv:3: NUL byte");
	reader_bad(t, __LINE__, "a,b\n1,x\"y\n", 10, "r.csv:2: field 2: a quote "
		   "inside an unquoted field");
	reader_bad(t, __LINE__, "a,b\n1,\"x\"y\n", 11, "r.csv:2: field 2: "
		   "unexpected text after the closing quote");
	reader_bad(t, __LINE__, "a,b\n1,x\ry\n", 10, "carriage return");
	memset(big, 'x', sizeof big);
	memcpy(big, "a\n", 2);
	reader_bad(t, __LINE__, big, sizeof big, "r.csv:2: field 1 is longer "
		   "than 4096 bytes");
	big[2] = '"';
	reader_bad(t, __LINE__, big, sizeof big, "longer than 4096 bytes");
	for (size_t i = 0; i < sizeof many; i++)
		many[i] = i % 2 ? ',' : 'a';
	reader_bad(t, __LINE__, many, sizeof many, "r.csv:1: more than 64 fields");
}

static void test_sniff(mu_t_t *t)
{
	const char *yes[] = {
		"a,b\n", "\n  \n# c\nname,queue,submit_s,pods\r\n",
		"\"a b\",c", "\xEF\xBB\xBFsn,cpu_milli",
	};
	const char *no[] = {
		"", "\n\n", "apiVersion: v1\n", "abc\n", "a,{b}\n",
		"# only,a,comment\n", "a,\x01\n", "kind: Node, x\n",
	};
	for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
		CHECK(t, mu__csv_sniff(yes[i], strlen(yes[i])));
	for (size_t i = 0; i < sizeof no / sizeof *no; i++)
		CHECK(t, !mu__csv_sniff(no[i], strlen(no[i])));
}

static void test_parse_utc(mu_t_t *t)
{
	int64_t v = 0;
	CHECK_EQ_INT(t, mu__parse_utc("2017-10-09 07:01:55", &v), 0);
	CHECK_EQ_INT(t, v, 1507532515);
	CHECK_EQ_INT(t, mu__parse_utc("1970-01-01 00:00:00", &v), 0);
	CHECK_EQ_INT(t, v, 0);
	CHECK_EQ_INT(t, mu__parse_utc("1969-12-31 23:59:59", &v), 0);
	CHECK_EQ_INT(t, v, -1);
	CHECK_EQ_INT(t, mu__parse_utc("2000-02-29 23:59:59", &v), 0);
	CHECK_EQ_INT(t, v, 951868799);
	CHECK_EQ_INT(t, mu__parse_utc("2016-12-31 23:59:59", &v), 0);
	CHECK_EQ_INT(t, v, 1483228799);
	const char *bad_ts[] = {
		"2017-02-29 00:00:00", "1900-02-29 00:00:00", "2017-13-01 00:00:00",
		"2017-00-10 00:00:00", "2017-04-31 00:00:00", "2017-01-01 24:00:00",
		"2017-01-01 00:60:00", "2017-01-01T00:00:00", "2017-1-01 00:00:00",
		"2017-01-01 00:00:00Z", "", "0000-01-01 00:00:00", "20x7-01-01 00:00:00",
	};
	for (size_t i = 0; i < sizeof bad_ts / sizeof *bad_ts; i++)
		CHECK_EQ_INT(t, mu__parse_utc(bad_ts[i], &v), MU_EPARSE);
}

static void test_namemap(mu_t_t *t)
{
	static char names[3000][12];
	mu__namemap_t m;
	mu__namemap_init(&m);
	size_t v = 0;
	CHECK_EQ_INT(t, mu__namemap_get(&m, "x", &v), MU_ENOENT);
	CHECK(t, mu__namemap_key(&m, "x") == NULL);
	for (size_t i = 0; i < 3000; i++) {
		snprintf(names[i], sizeof names[i], "n%zu", i);
		CHECK_EQ_INT(t, mu__namemap_put(&m, names[i], i, NULL), MU_OK);
	}
	CHECK_EQ_INT(t, mu__namemap_put(&m, "n17", 5, &v), MU_EEXIST);
	CHECK_EQ_INT(t, v, 17);
	for (size_t i = 0; i < 3000; i += 7) {
		CHECK_EQ_INT(t, mu__namemap_get(&m, names[i], &v), MU_OK);
		CHECK_EQ_INT(t, v, i);
	}
	CHECK(t, mu__namemap_key(&m, "n2999") == names[2999]);
	CHECK_EQ_INT(t, mu__namemap_get(&m, "n3000", &v), MU_ENOENT);
	CHECK_EQ_INT(t, m.n, 3000);
	mu__namemap_release(&m);
}

/* --- muster compact trace -------------------------------------------------- */

static void test_compact_all_columns(mu_t_t *t)
{
	mu_specs_t s;
	mu_diag_t d;
	mu_specs_init(&s);
	const char *text =
		"gpu_models,preemptible,type,priority,gpu_milli,gpu,memory_mib,"
		"cpu_milli,min_member,duration_s,pods,submit_s,queue,name\n"
		"A100|H100|A100,false,train,-5,0,8,262144,32000,2,7200,4,1.5,"
		"team-a,pretrain-1\n"
		",true,interactive,1000,250,0,16384,4000,0,0.0004,1,60,team-c,nb.7\n";
	CHECK_EQ_INT(t, load(text, NULL, &s, &d), 0);
	CHECK_EQ_INT(t, s.njobs, 2);
	CHECK_EQ_INT(t, s.nqueues, 0);
	mu_job_spec_t *j = &s.jobs[0];
	CHECK_STR(t, j->name, "pretrain-1");
	CHECK_STR(t, j->queue, "team-a");
	CHECK_EQ_INT(t, j->submit, 1500);
	CHECK_EQ_INT(t, j->duration, 7200000);
	CHECK_EQ_INT(t, j->priority, -5);
	CHECK_EQ_INT(t, j->type, MU_JOB_TRAIN);
	CHECK(t, !j->preemptible);
	CHECK_EQ_INT(t, j->min_member, 2);
	CHECK_EQ_INT(t, j->npodsets, 1);
	mu_podset_spec_t *p = &j->podsets[0];
	CHECK_STR(t, p->name, "main");
	CHECK_EQ_INT(t, p->replicas, 4);
	CHECK_EQ_INT(t, p->req.v[MU_RES_CPU], 32000);
	CHECK_EQ_INT(t, p->req.v[MU_RES_MEM], 256 * GIB);
	CHECK_EQ_INT(t, p->req.v[MU_RES_GPU], 8);
	CHECK_EQ_INT(t, p->req.v[MU_RES_GPU_MILLI], 0);
	CHECK_EQ_INT(t, p->req.v[MU_RES_PODS], 1);
	CHECK_EQ_INT(t, p->ngpu_models, 2);
	if (p->ngpu_models == 2) {
		CHECK_STR(t, p->gpu_models[0], "A100");
		CHECK_STR(t, p->gpu_models[1], "H100");
	}
	j = &s.jobs[1];
	CHECK_STR(t, j->name, "nb.7");
	CHECK_EQ_INT(t, j->submit, 60000);
	CHECK_EQ_INT(t, j->duration, 0);
	CHECK_EQ_INT(t, j->type, MU_JOB_INTERACTIVE);
	CHECK(t, j->preemptible);
	CHECK_EQ_INT(t, j->priority, 1000);
	CHECK_EQ_INT(t, j->podsets[0].req.v[MU_RES_GPU], 0);
	CHECK_EQ_INT(t, j->podsets[0].req.v[MU_RES_GPU_MILLI], 250);
	CHECK_EQ_INT(t, j->podsets[0].ngpu_models, 0);
	mu_specs_release(&s);
}

static void test_compact_defaults(mu_t_t *t)
{
	mu_specs_t s;
	mu_diag_t d;
	mu_specs_init(&s);
	CHECK_EQ_INT(t, load("name,queue,submit_s,pods\n"
			     "a,q,0,3\n", NULL, &s, &d), 0);
	/* empty optional fields take their defaults */
	CHECK_EQ_INT(t, load("name,queue,submit_s,pods,duration_s,min_member,"
			     "cpu_milli,memory_mib,gpu,gpu_milli,priority,type,"
			     "preemptible,gpu_models\n"
			     "b,q,2,1,,,,,,,,,,\n"
			     "c,q,2,1,,,,,,,,inference,,\n"
			     "d,q,2,1,,,,,,,,batch,,\n"
			     "e,q,2,1,,,,,,,,inference,yes,\n"
			     "f,q,2,1,,,,,,,,interactive,,\n", NULL, &s, &d), 0);
	CHECK_EQ_INT(t, s.njobs, 6);
	for (size_t i = 0; i < 2 && i < s.njobs; i++) {
		const mu_job_spec_t *j = &s.jobs[i];
		CHECK_EQ_INT(t, j->type, MU_JOB_TRAIN);
		CHECK(t, j->preemptible);
		CHECK_EQ_INT(t, j->priority, 0);
		CHECK_EQ_INT(t, j->min_member, 0);
		CHECK_EQ_INT(t, j->duration, 0);
		CHECK_EQ_INT(t, j->podsets[0].req.v[MU_RES_CPU], 0);
		CHECK_EQ_INT(t, j->podsets[0].req.v[MU_RES_MEM], 0);
		CHECK_EQ_INT(t, j->podsets[0].req.v[MU_RES_GPU], 0);
		CHECK_EQ_INT(t, j->podsets[0].req.v[MU_RES_PODS], 1);
		CHECK_EQ_INT(t, j->podsets[0].ngpu_models, 0);
	}
	CHECK_EQ_INT(t, s.jobs[0].podsets[0].replicas, 3);
	CHECK(t, !s.jobs[2].preemptible);
	CHECK_EQ_INT(t, s.jobs[2].priority, 100); /* inference */
	CHECK(t, s.jobs[3].preemptible);
	CHECK_EQ_INT(t, s.jobs[3].priority, 0);
	CHECK_EQ_INT(t, s.jobs[3].type, MU_JOB_BATCH);
	CHECK(t, s.jobs[4].preemptible);
	CHECK_EQ_INT(t, s.jobs[5].priority, 1000); /* interactive */
	CHECK(t, !s.jobs[5].preemptible);
	mu_specs_release(&s);
}

#define HDR "name,queue,submit_s,pods,duration_s,min_member,cpu_milli," \
	"memory_mib,gpu,gpu_milli,priority,type,preemptible,gpu_models\n"
#define OK_ROW "ok,q,0,2,0,0,0,0,0,0,0,train,true,\n"

static void test_compact_errors(mu_t_t *t)
{
	BAD(t, "name,queue,submit_s,pods,color\n", "t.csv:1: unknown column "
	    "\"color\" in a muster trace; columns are name, queue");
	BAD(t, "name,queue,submit_s,pods,gpu,gpu\n", "t.csv:1: column \"gpu\" "
	    "appears twice");
	BAD(t, "name,queue,submit_s\n", "t.csv:1: missing column \"pods\"");
	BAD(t, "queue,pods,submit_s\n", "missing column \"name\"");
	BAD(t, HDR OK_ROW "x,q,0,1,0,0,0,0,x,0,0,train,true,\n",
	    "t.csv:3: column \"gpu\": expected an integer from 0 to 64, got \"x\"");
	BAD(t, HDR "x,q,0,1,0,0,0,0,65,0,0,train,true,\n",
	    "t.csv:2: column \"gpu\": expected an integer from 0 to 64, got \"65\"");
	BAD(t, HDR "x,q,0,0,0,0,0,0,0,0,0,train,true,\n",
	    "column \"pods\": expected an integer from 1 to 1000000, got \"0\"");
	BAD(t, HDR "x,q,0,1000001,0,0,0,0,0,0,0,train,true,\n",
	    "column \"pods\": expected an integer from 1 to 1000000");
	BAD(t, HDR "x,q,0,-3,0,0,0,0,0,0,0,train,true,\n", "got \"-3\"");
	BAD(t, HDR "x,q,0,2,0,3,0,0,0,0,0,train,true,\n",
	    "column \"min_member\": expected an integer from 0 to 2, got \"3\"");
	BAD(t, HDR "x,q,0,1,0,0,-1,0,0,0,0,train,true,\n",
	    "column \"cpu_milli\": expected an integer from 0 to 1000000000");
	BAD(t, HDR "x,q,0,1,0,0,0,17179869185,0,0,0,train,true,\n",
	    "column \"memory_mib\": expected an integer from 0 to 17179869184");
	BAD(t, HDR "x,q,0,1,0,0,0,0,0,1000,0,train,true,\n",
	    "column \"gpu_milli\": expected an integer from 0 to 999");
	BAD(t, HDR "x,q,0,1,0,0,0,0,2,500,0,train,true,\n",
	    "column \"gpu_milli\": a share of one GPU needs gpu = 0");
	BAD(t, HDR "x,q,0,1,0,0,0,0,0,0,2147483648,train,true,\n",
	    "column \"priority\": expected an integer from -2147483648 to "
	    "2147483647");
	BAD(t, HDR "x,q,-1,1,0,0,0,0,0,0,0,train,true,\n",
	    "column \"submit_s\": expected a number of seconds from 0 to "
	    "3153600000, got \"-1\"");
	BAD(t, HDR "x,q,1e400,1,0,0,0,0,0,0,0,train,true,\n", "got \"1e400\"");
	BAD(t, HDR "x,q,nan,1,0,0,0,0,0,0,0,train,true,\n", "column \"submit_s\"");
	BAD(t, HDR "x,q,0,1,3153600001,0,0,0,0,0,0,train,true,\n",
	    "column \"duration_s\"");
	BAD(t, HDR "x,q,1s,1,0,0,0,0,0,0,0,train,true,\n", "got \"1s\"");
	BAD(t, HDR "-x,q,0,1,0,0,0,0,0,0,0,train,true,\n",
	    "column \"name\": expected a name of 1 to 253 characters");
	BAD(t, HDR ",q,0,1,0,0,0,0,0,0,0,train,true,\n", "column \"name\"");
	BAD(t, HDR "x,a b,0,1,0,0,0,0,0,0,0,train,true,\n",
	    "column \"queue\": expected a name");
	BAD(t, HDR "x,q,0,1,0,0,0,0,0,0,0,serve,true,\n", "column \"type\": "
	    "expected train, inference, interactive or batch, got \"serve\"");
	BAD(t, HDR "x,q,0,1,0,0,0,0,0,0,0,train,maybe,\n",
	    "column \"preemptible\": expected true or false, got \"maybe\"");
	BAD(t, HDR "x,q,0,1,0,0,0,0,0,0,0,train,true,A100||H100\n",
	    "column \"gpu_models\": expected a name");
	BAD(t, HDR "x,q,0,1,0,0,0,0,0,0,0,train,true,a|b|c|d|e|f|g|h|i|j|k|l|"
	    "m|n|o|p|q|r|s|t|u|v|w|x|y|z|0|1|2|3|4|5|6|7|8|9|aa|bb|cc|dd|ee|ff|"
	    "gg|hh|ii|jj|kk|ll|mm|nn|oo|pp|qq|rr|ss|tt|uu|vv|ww|xx|yy|zz|00|11|"
	    "22|33|44\n", "more than 64 GPU models");
	BAD(t, HDR OK_ROW "x,q,0,1\n", "t.csv:3: expected 14 fields as in the "
	    "header, got 4");
	BAD(t, HDR OK_ROW "\"x,q,0,1\n", "t.csv:3: unterminated quoted field");
}

/* --- openb ----------------------------------------------------------------- */

static void test_openb_nodes(mu_t_t *t)
{
	mu_specs_t s;
	mu_diag_t d;
	mu_specs_init(&s);
	CHECK_EQ_INT(t, load("sn,cpu_milli,memory_mib,gpu,model\n"
			     "openb-node-0000,64000,262144,2,P100\n"
			     "cpu-1,32000,1024,0,\n"
			     "cpu-2,32000,1024,0,T4\n", NULL, &s, &d), 0);
	CHECK_EQ_INT(t, s.nnodes, 3);
	CHECK_EQ_INT(t, s.njobs + s.nqueues, 0);
	const mu_node_spec_t *n = &s.nodes[0];
	CHECK_STR(t, n->name, "openb-node-0000");
	CHECK_EQ_INT(t, n->alloc.v[MU_RES_CPU], 64000);
	CHECK_EQ_INT(t, n->alloc.v[MU_RES_MEM], 256 * GIB);
	CHECK_EQ_INT(t, n->alloc.v[MU_RES_GPU], 2);
	CHECK_EQ_INT(t, n->alloc.v[MU_RES_GPU_MILLI], 0);
	CHECK_EQ_INT(t, n->alloc.v[MU_RES_PODS], 1024);
	CHECK_STR(t, n->gpu_model, "P100");
	CHECK_EQ_INT(t, n->nlabels, 2); /* the model and its GPU memory */
	if (n->nlabels == 2) {
		CHECK_STR(t, n->labels[0].key, "nvidia.com/gpu.product");
		CHECK_STR(t, n->labels[0].value, "P100");
		CHECK_STR(t, n->labels[1].key, "nvidia.com/gpu.memory");
		CHECK_STR(t, n->labels[1].value, "16280");
	}
	CHECK(t, !n->unschedulable);
	for (int i = 1; i < 3; i++) {
		CHECK(t, s.nodes[i].gpu_model == NULL);
		CHECK_EQ_INT(t, s.nodes[i].nlabels, 0);
		CHECK_EQ_INT(t, s.nodes[i].alloc.v[MU_RES_MEM], 1024 * MIB);
	}
	mu_specs_release(&s);
	BAD(t, "sn,cpu_milli,memory_mib,gpu,model\nn1,1,1,65,A\n",
	    "t.csv:2: column \"gpu\": expected an integer from 0 to 64, got \"65\"");
	BAD(t, "sn,cpu_milli,memory_mib,gpu,model\nn1,1,1,1,A 100\n",
	    "t.csv:2: column \"model\": expected a name");
	BAD(t, "sn,cpu_milli,memory_mib,gpu,model\nn1,1.5,1,1,A\n",
	    "column \"cpu_milli\": expected an integer");
	BAD(t, "sn,cpu_milli,memory_mib,gpu,model\nn/1,1,1,1,A\n",
	    "column \"sn\": expected a name");
}

#define PODS11 "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos," \
	"pod_phase,creation_time,deletion_time,scheduled_time\n"

static void test_openb_pods(mu_t_t *t)
{
	mu_specs_t s;
	mu_diag_t d;
	mu_specs_init(&s);
	CHECK_EQ_INT(t, load(PODS11
			     "p0,12000,16384,1,1000,,LS,Running,0,12537496,0\n"
			     "p1,6000,12288,1,460,V100M32|V100M32|T4,LS,Running,"
			     "427061,12902960,427061\n"
			     "p2,8000,30517,0,0,,BE,Failed,100,50,\n"
			     "p3,1000,1024,8,1000,G2,BE,Pending,200,,\n",
			     NULL, &s, &d), 0);
	CHECK_EQ_INT(t, s.njobs, 4);
	CHECK_EQ_INT(t, s.nqueues, 1);
	CHECK_STR(t, s.queues[0].name, "default");
	CHECK(t, s.queues[0].auto_created);
	CHECK(t, s.queues[0].parent == NULL);
	CHECK_EQ_INT(t, s.queues[0].limit.v[MU_RES_GPU], MU_RES_UNLIMITED);
	for (size_t i = 0; i < s.njobs; i++) {
		const mu_job_spec_t *j = &s.jobs[i];
		CHECK_STR(t, j->queue, "default");
		CHECK_EQ_INT(t, j->type, MU_JOB_BATCH);
		CHECK(t, j->preemptible);
		CHECK_EQ_INT(t, j->priority, 0);
		CHECK_EQ_INT(t, j->npodsets, 1);
		CHECK_EQ_INT(t, j->podsets[0].replicas, 1);
		CHECK_EQ_INT(t, j->podsets[0].req.v[MU_RES_PODS], 1);
	}
	const mu_res_t *r = &s.jobs[0].podsets[0].req;
	CHECK_STR(t, s.jobs[0].name, "p0");
	CHECK_EQ_INT(t, r->v[MU_RES_GPU], 1);
	CHECK_EQ_INT(t, r->v[MU_RES_GPU_MILLI], 0);
	CHECK_EQ_INT(t, r->v[MU_RES_CPU], 12000);
	CHECK_EQ_INT(t, r->v[MU_RES_MEM], 16 * GIB);
	CHECK_EQ_INT(t, s.jobs[0].submit, 0);
	CHECK_EQ_INT(t, s.jobs[0].duration, 12537496000LL);
	r = &s.jobs[1].podsets[0].req;
	CHECK_EQ_INT(t, r->v[MU_RES_GPU], 0);
	CHECK_EQ_INT(t, r->v[MU_RES_GPU_MILLI], 460);
	CHECK_EQ_INT(t, s.jobs[1].submit, 427061000LL);
	CHECK_EQ_INT(t, s.jobs[1].duration, (12902960LL - 427061) * 1000);
	CHECK_EQ_INT(t, s.jobs[1].podsets[0].ngpu_models, 2);
	r = &s.jobs[2].podsets[0].req;
	CHECK_EQ_INT(t, r->v[MU_RES_GPU] + r->v[MU_RES_GPU_MILLI], 0);
	CHECK_EQ_INT(t, s.jobs[2].submit, 100000);
	CHECK_EQ_INT(t, s.jobs[2].duration, 0); /* deleted before created */
	r = &s.jobs[3].podsets[0].req;
	CHECK_EQ_INT(t, r->v[MU_RES_GPU], 8);
	CHECK_EQ_INT(t, s.jobs[3].duration, 0); /* no deletion time */
	CHECK_STR(t, s.jobs[3].podsets[0].gpu_models[0], "G2");
	mu_specs_release(&s);
}

static void test_openb_pods5(mu_t_t *t)
{
	mu_specs_t s;
	mu_diag_t d;
	mu_specs_init(&s);
	CHECK_EQ_INT(t, load("name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
			     "a,1000,1024,1,250\nb,1000,1024,4,1000\n"
			     "c,1000,1024,0,0\n", NULL, &s, &d), 0);
	CHECK_EQ_INT(t, s.njobs, 3);
	CHECK_EQ_INT(t, s.nqueues, 1);
	CHECK_EQ_INT(t, s.jobs[0].podsets[0].req.v[MU_RES_GPU_MILLI], 250);
	CHECK_EQ_INT(t, s.jobs[1].podsets[0].req.v[MU_RES_GPU], 4);
	for (size_t i = 0; i < s.njobs; i++) {
		CHECK_EQ_INT(t, s.jobs[i].submit, 0);
		CHECK_EQ_INT(t, s.jobs[i].duration, 0);
	}
	mu_specs_release(&s);
	BAD(t, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1,1,1,0\n",
	    "t.csv:2: column \"gpu_milli\": expected 1 to 1000 (the share of the "
	    "GPU) when num_gpu is 1, got 0");
	BAD(t, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1,1,1,1001\n",
	    "column \"gpu_milli\": expected an integer from 0 to 1000");
	BAD(t, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1,1,x,1\n",
	    "column \"num_gpu\"");
	BAD(t, PODS11 "a,1,1,1,500,,LS,Running,-4,,\n",
	    "t.csv:2: column \"creation_time\": expected a number of seconds");
	BAD(t, PODS11 "a,1,1,1,500,,LS,Running,1,x,\n", "column \"deletion_time\"");
	BAD(t, PODS11 "a,1,1,1,500,,LS,Running,1,2,x\n", "column \"scheduled_time\"");
	BAD(t, PODS11 "a,1,1,1,500,V100|,LS,Running,1,2,\n", "column \"gpu_spec\"");
}

/* --- Philly ------------------------------------------------------------------ */

static const char philly_text[] =
	"timestamp,duration,num_gpus,gpu_time,cluster\n"
	"2017-10-09 07:01:55,66.0,1,66.0,11cb48\n"
	"2017-10-09 06:13:03,2951.0,16,2951.0,6214e9\n"
	"2017-10-09 06:13:03,1.0004,12,1,6214e9\n"
	"2017-10-08 23:59:59,10,0,0,11cb48\n"
	"\n"
	"2017-10-10 00:00:00,1.0006,8,8,11cb48\n";

static const mu_job_spec_t *job(const mu_specs_t *s, const char *name)
{
	for (size_t i = 0; i < s->njobs; i++)
		if (strcmp(s->jobs[i].name, name) == 0)
			return &s->jobs[i];
	return NULL;
}

static void check_podset(mu_t_t *t, int line, const mu_podset_spec_t *p,
			 int replicas, int gpus)
{
	if (p->replicas != replicas || p->req.v[MU_RES_GPU] != gpus ||
	    p->req.v[MU_RES_CPU] != 4000 * gpus ||
	    p->req.v[MU_RES_MEM] != gpus * 24 * GIB ||
	    p->req.v[MU_RES_PODS] != 1 || p->req.v[MU_RES_GPU_MILLI] != 0) {
		fprintf(stderr, "%s:%d: podset %s: %d x %lld GPUs, want %d x %d\n",
			__FILE__, line, p->name, p->replicas,
			(long long)p->req.v[MU_RES_GPU], replicas, gpus);
		t->cur_failed++;
	}
}

static void test_philly(mu_t_t *t)
{
	mu_specs_t s;
	mu_diag_t d;
	mu_specs_init(&s);
	CHECK_EQ_INT(t, load(philly_text, NULL, &s, &d), 0);
	CHECK_EQ_INT(t, s.njobs, 4);
	if (s.njobs != 4) {
		mu_specs_release(&s);
		return;
	}
	/* sorted by submit time, ties in file order */
	CHECK_STR(t, s.jobs[0].name, "philly-2");
	CHECK_STR(t, s.jobs[1].name, "philly-3");
	CHECK_STR(t, s.jobs[2].name, "philly-1");
	CHECK_STR(t, s.jobs[3].name, "philly-5");
	/* relative to the earliest row, which has no GPUs */
	CHECK_EQ_INT(t, s.jobs[0].submit, (6 * 3600 + 13 * 60 + 4) * 1000LL);
	CHECK_EQ_INT(t, s.jobs[1].submit, s.jobs[0].submit);
	CHECK_EQ_INT(t, s.jobs[2].submit, (7 * 3600 + 60 + 56) * 1000LL);
	CHECK_EQ_INT(t, s.jobs[3].submit, 86401000LL);
	CHECK_EQ_INT(t, s.jobs[0].duration, 2951000);
	CHECK_EQ_INT(t, s.jobs[1].duration, 1000);
	CHECK_EQ_INT(t, s.jobs[3].duration, 1001);
	for (size_t i = 0; i < s.njobs; i++) {
		CHECK_EQ_INT(t, s.jobs[i].type, MU_JOB_TRAIN);
		CHECK(t, s.jobs[i].preemptible);
		CHECK_EQ_INT(t, s.jobs[i].min_member, 0);
	}
	CHECK_STR(t, s.jobs[0].queue, "vc-6214e9");
	CHECK_STR(t, s.jobs[2].queue, "vc-11cb48");
	CHECK_EQ_INT(t, s.nqueues, 2);
	CHECK_STR(t, s.queues[0].name, "vc-6214e9");
	CHECK(t, s.queues[0].auto_created && s.queues[1].auto_created);
	/* gangs: 16 = 2 x 8; 12 = 8 + 4; 1 and 8 are single pods */
	CHECK_EQ_INT(t, s.jobs[0].npodsets, 1);
	check_podset(t, __LINE__, &s.jobs[0].podsets[0], 2, 8);
	CHECK_EQ_INT(t, s.jobs[1].npodsets, 2);
	check_podset(t, __LINE__, &s.jobs[1].podsets[0], 1, 8);
	if (s.jobs[1].npodsets == 2) {
		check_podset(t, __LINE__, &s.jobs[1].podsets[1], 1, 4);
		CHECK_STR(t, s.jobs[1].podsets[1].name, "rest");
	}
	CHECK_STR(t, s.jobs[1].podsets[0].name, "main");
	check_podset(t, __LINE__, &s.jobs[2].podsets[0], 1, 1);
	check_podset(t, __LINE__, &s.jobs[3].podsets[0], 1, 8);
	CHECK_EQ_INT(t, mu_job_spec_pods(&s.jobs[1]), 2);
	mu_specs_release(&s);
}

static void test_philly_options(mu_t_t *t)
{
	mu_specs_t s;
	mu_diag_t d;
	mu_load_opts_t o;
	mu_load_opts_defaults(&o);
	CHECK_EQ_INT(t, o.gpus_per_node, 8);
	CHECK_EQ_INT(t, o.from_s + o.to_s + o.max_jobs, 0);
	o.gpus_per_node = 4;
	mu_specs_init(&s);
	CHECK_EQ_INT(t, load(philly_text, &o, &s, &d), 0);
	CHECK_EQ_INT(t, s.njobs, 4);
	check_podset(t, __LINE__, &job(&s, "philly-2")->podsets[0], 4, 4);
	check_podset(t, __LINE__, &job(&s, "philly-3")->podsets[0], 3, 4);
	CHECK_EQ_INT(t, job(&s, "philly-3")->npodsets, 1);
	check_podset(t, __LINE__, &job(&s, "philly-5")->podsets[0], 2, 4);
	mu_specs_release(&s);

	/* the window [from, to) keeps rows 2, 3 and 1, shifted to start at 0 */
	mu_load_opts_defaults(&o);
	o.from_s = 22384;
	o.to_s = 25317;
	mu_specs_init(&s);
	CHECK_EQ_INT(t, load(philly_text, &o, &s, &d), 0);
	CHECK_EQ_INT(t, s.njobs, 3);
	if (s.njobs == 3) {
		CHECK_EQ_INT(t, s.jobs[0].submit, 0);
		CHECK_EQ_INT(t, s.jobs[2].submit, 2932000);
		CHECK_STR(t, s.jobs[2].name, "philly-1");
	}
	CHECK_EQ_INT(t, s.nqueues, 2);
	mu_specs_release(&s);
	o.to_s = 25316; /* the end is excluded */
	o.max_jobs = 1;
	mu_specs_init(&s);
	CHECK_EQ_INT(t, load(philly_text, &o, &s, &d), 0);
	CHECK_EQ_INT(t, s.njobs, 1);
	CHECK_STR(t, s.jobs[0].name, "philly-2");
	CHECK_EQ_INT(t, s.nqueues, 1); /* vc-11cb48 is not needed */
	mu_specs_release(&s);
	o.from_s = 90000;
	o.to_s = 0;
	o.max_jobs = 0;
	mu_specs_init(&s);
	CHECK_EQ_INT(t, load(philly_text, &o, &s, &d), 0);
	CHECK_EQ_INT(t, s.njobs + s.nqueues, 0);
	o.from_s = 0;
	o.gpus_per_node = 0;
	CHECK_EQ_INT(t, load(philly_text, &o, &s, &d), MU_EINVAL);
	CHECK(t, strstr(d.msg, "t.csv: bad trace options: gpus_per_node") != NULL);
	o.gpus_per_node = 65;
	CHECK_EQ_INT(t, load(philly_text, &o, &s, &d), MU_EINVAL);
	mu_specs_release(&s);
}

#define PH "timestamp,duration,num_gpus,gpu_time,cluster\n"

static void test_philly_errors(mu_t_t *t)
{
	BAD(t, PH "2017-10-09 07:01:55,66.0,1,66.0,x\n"
	    "2017-13-01 00:00:00,1,1,1,x\n", "t.csv:3: column \"timestamp\": "
	    "expected \"YYYY-MM-DD HH:MM:SS\", got \"2017-13-01 00:00:00\"");
	BAD(t, PH "2017-10-09,1,1,1,x\n", "column \"timestamp\"");
	BAD(t, PH "2017-10-09 07:01:55,-1,1,1,x\n",
	    "column \"duration\": expected a number of seconds");
	BAD(t, PH "2017-10-09 07:01:55,1,-1,1,x\n",
	    "column \"num_gpus\": expected an integer from 0 to 1000000");
	BAD(t, PH "2017-10-09 07:01:55,1,1.5,1,x\n", "column \"num_gpus\"");
	BAD(t, PH "2017-10-09 07:01:55,1,1,abc,x\n", "column \"gpu_time\"");
	BAD(t, PH "2017-10-09 07:01:55,1,1,1,\n", "column \"cluster\"");
	BAD(t, PH "2017-10-09 07:01:55,1,1,1,a/b\n", "column \"cluster\"");
	BAD(t, PH "1900-01-01 00:00:00,1,1,1,x\n2017-10-09 07:01:55,1,1,1,x\n",
	    "t.csv:3: column \"timestamp\": more than 100 years after the "
	    "earliest row");
}

/* --- headers, dispatch, automatic queues ------------------------------------ */

static void test_headers(mu_t_t *t)
{
	BAD(t, "a,b,c\n1,2,3\n", "t.csv:1: unknown CSV header \"a,b,c\"; "
	    "expected one of: a muster trace");
	BAD(t, "sn,cpu_milli,memory_mib,gpu\n", "\"timestamp,duration,num_gpus,"
	    "gpu_time,cluster\" (Philly)");
	BAD(t, "", "t.csv: empty file: expected a CSV header line");
	BAD(t, "\n# nothing\n\n", "empty file");
	mu_specs_t s;
	mu_diag_t d;
	mu_specs_init(&s);
	/* a header and no rows is fine; spaces around fields are trimmed */
	CHECK_EQ_INT(t, load(" name , queue ,submit_s,pods\r\n", NULL, &s, &d), 0);
	CHECK_EQ_INT(t, load("\"sn\",cpu_milli,memory_mib,gpu,model\n", NULL, &s,
			     &d), 0);
	CHECK_EQ_INT(t, s.njobs + s.nnodes, 0);
	mu_specs_release(&s);
}

static int buffer(const char *name, const char *text, mu_specs_t *s,
		  mu_diag_t *d)
{
	d->msg[0] = '\0';
	return mu_load_buffer(name, text, strlen(text), NULL, s, d);
}

static void test_dispatch(mu_t_t *t)
{
	mu_specs_t s;
	mu_diag_t d, d2;
	mu_specs_init(&s);
	CHECK_EQ_INT(t, buffer("jobs.txt", "name,queue,submit_s,pods\na,q,0,1\n",
			       &s, &d), 0);
	CHECK_EQ_INT(t, s.njobs, 1);
	CHECK_EQ_INT(t, buffer("c.txt", "apiVersion: v1\nkind: Node\n", &s, &d),
		     MU_EPARSE);
	CHECK(t, strstr(d.msg, "c.txt: cannot tell the format: expected a "
			".yaml/.yml file or a CSV with one of the headers: "
			"a muster trace") != NULL);
	CHECK_EQ_INT(t, mu_load_buffer("x.bin", "\x7f" "ELF\0\0\1", 7, NULL, &s,
				       &d), MU_EPARSE);
	CHECK(t, strstr(d.msg, "x.bin: cannot tell the format (a binary file)"));
	CHECK_EQ_INT(t, buffer("e.dat", " \n\n", &s, &d), MU_EPARSE);
	CHECK(t, strstr(d.msg, "e.dat: empty file: expected a .yaml/.yml file"));
	CHECK_EQ_INT(t, buffer("e.csv", "", &s, &d), MU_EPARSE);
	CHECK(t, strstr(d.msg, "e.csv: empty file: expected a CSV header line"));
	CHECK_EQ_INT(t, mu_load_buffer("b.CSV", "a,b\n\0", 5, NULL, &s, &d),
		     MU_EPARSE);
	CHECK(t, strstr(d.msg, "b.CSV:2: NUL byte"));
	/* .yaml and .yml (any case) go to the YAML loader */
	const char *y = "kind: [\n";
	int rc = mu_load_yaml("X.YAML", y, strlen(y), &s, &d2);
	CHECK_EQ_INT(t, buffer("X.YAML", y, &s, &d), rc);
	CHECK_STR(t, d.msg, d2.msg);
	rc = mu_load_yaml("x.yml", y, strlen(y), &s, &d2);
	CHECK_EQ_INT(t, buffer("x.yml", y, &s, &d), rc);
	CHECK_STR(t, d.msg, d2.msg);
	CHECK_EQ_INT(t, s.njobs, 1);
	mu_specs_release(&s);
}

#define OPENB5 "name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1,1,0,0\n"
#define OPENB5_B "name,cpu_milli,memory_mib,num_gpu,gpu_milli\nb,1,1,0,0\n"
#define QUEUE_YAML "apiVersion: muster.io/v1alpha1\nkind: Queue\n" \
	"metadata:\n  name: default\nspec:\n  priority: 7\n"

/* One queue "default", explicit (priority 7), and jobs that use it. */
static void check_one_default(mu_t_t *t, int line, mu_specs_t *s)
{
	mu_diag_t d;
	int fails = t->cur_failed;
	CHECK_EQ_INT(t, s->nqueues, 1);
	CHECK_STR(t, s->queues[0].name, "default");
	CHECK(t, !s->queues[0].auto_created);
	CHECK_EQ_INT(t, s->queues[0].priority, 7);
	CHECK(t, s->njobs > 0);
	CHECK_EQ_INT(t, mu_specs_validate(s, &d), 0);
	if (t->cur_failed != fails)
		fprintf(stderr, "%s:%d: (called from here)\n", __FILE__, line);
}

static void test_auto_queues(mu_t_t *t)
{
	mu_specs_t s;
	mu_diag_t d;
	/* the queue first, the trace second: nothing is created */
	mu_specs_init(&s);
	mu_queue_spec_t *q = mu_specs_add_queue(&s);
	q->name = "default";
	q->priority = 7;
	CHECK_EQ_INT(t, buffer("p.csv", OPENB5, &s, &d), 0);
	check_one_default(t, __LINE__, &s);
	mu_specs_release(&s);
	/* the trace first: an automatic queue, dropped when a later load
	 * brings an explicit one; loading traces twice makes one queue */
	mu_specs_init(&s);
	CHECK_EQ_INT(t, buffer("p.csv", OPENB5, &s, &d), 0);
	CHECK_EQ_INT(t, buffer("p2.csv", OPENB5_B, &s, &d), 0);
	CHECK_EQ_INT(t, s.nqueues, 1);
	CHECK(t, s.queues[0].auto_created);
	CHECK_EQ_INT(t, mu_specs_validate(&s, &d), 0);
	q = mu_specs_add_queue(&s);
	q->name = "default";
	q->priority = 7;
	CHECK_EQ_INT(t, mu_specs_validate(&s, &d), MU_EEXIST);
	CHECK_STR(t, d.msg, "queue \"default\" is defined twice");
	CHECK_EQ_INT(t, buffer("j.csv", "name,queue,submit_s,pods\n", &s, &d), 0);
	check_one_default(t, __LINE__, &s);
	CHECK_EQ_INT(t, s.njobs, 2);
	mu_specs_release(&s);
	/* both orders with a YAML file, as `muster simulate` loads them */
	mu_specs_init(&s);
	CHECK_EQ_INT(t, buffer("c.yaml", QUEUE_YAML, &s, &d), 0);
	CHECK_EQ_INT(t, buffer("p.csv", OPENB5, &s, &d), 0);
	check_one_default(t, __LINE__, &s);
	mu_specs_release(&s);
	mu_specs_init(&s);
	CHECK_EQ_INT(t, buffer("p.csv", OPENB5, &s, &d), 0);
	CHECK_EQ_INT(t, buffer("c.yaml", QUEUE_YAML, &s, &d), 0);
	check_one_default(t, __LINE__, &s);
	mu_specs_release(&s);
}

/* --- mu_specs_validate ------------------------------------------------------ */

static mu_queue_spec_t *queue(mu_specs_t *s, const char *name,
			      const char *parent)
{
	mu_queue_spec_t *q = mu_specs_add_queue(s);
	q->name = name;
	q->parent = parent;
	return q;
}

static mu_job_spec_t *add_job(mu_specs_t *s, const char *name, const char *q)
{
	mu_job_spec_t *j = mu_specs_add_job(s);
	j->name = name;
	j->queue = q;
	return j;
}

static void expect_invalid(mu_t_t *t, int line, mu_specs_t *s, int err,
			   const char *want)
{
	mu_diag_t d = {{0}};
	int rc = mu_specs_validate(s, &d);
	if (rc != err || strcmp(d.msg, want) != 0) {
		fprintf(stderr, "%s:%d: rc %d \"%s\", want %d \"%s\"\n", __FILE__,
			line, rc, d.msg, err, want);
		t->cur_failed++;
	}
	mu_specs_release(s);
	mu_specs_init(s);
}
#define INVALID(t, s, err, want) expect_invalid(t, __LINE__, s, err, want)

static void test_validate(mu_t_t *t)
{
	mu_specs_t s;
	mu_diag_t d;
	mu_specs_init(&s);
	CHECK_EQ_INT(t, mu_specs_validate(&s, &d), 0);
	mu_specs_add_node(&s)->name = "n1";
	mu_specs_add_node(&s)->name = "n2";
	queue(&s, "c", "b");
	queue(&s, "b", "a");
	queue(&s, "a", NULL);
	add_job(&s, "j1", "c");
	add_job(&s, "j2", "a");
	CHECK_EQ_INT(t, mu_specs_validate(&s, &d), 0);
	mu_specs_add_node(&s)->name = "n1";
	INVALID(t, &s, MU_EEXIST, "node \"n1\" is defined twice");
	queue(&s, "a", NULL);
	queue(&s, "a", NULL);
	INVALID(t, &s, MU_EEXIST, "queue \"a\" is defined twice");
	queue(&s, "a", NULL);
	add_job(&s, "j", "a");
	add_job(&s, "j", "a");
	INVALID(t, &s, MU_EEXIST, "job \"j\" is defined twice");
	queue(&s, "a", NULL);
	queue(&s, "b", "zz");
	INVALID(t, &s, MU_ENOENT, "queue \"b\": parent \"zz\" is not defined; "
		"defined queues: a, b");
	queue(&s, "x", NULL);
	queue(&s, "a", "b");
	queue(&s, "b", "a");
	queue(&s, "c", "a");
	INVALID(t, &s, MU_EINVAL, "queue \"a\": its parents form a cycle: "
		"a -> b -> a");
	queue(&s, "s", "s");
	INVALID(t, &s, MU_EINVAL, "queue \"s\": its parents form a cycle: s -> s");
	queue(&s, "a", NULL);
	queue(&s, "b", NULL);
	add_job(&s, "x", "team-z");
	INVALID(t, &s, MU_ENOENT, "job \"x\": queue \"team-z\" is not defined; "
		"defined queues: a, b");
	add_job(&s, "x", "q");
	INVALID(t, &s, MU_ENOENT, "job \"x\": queue \"q\" is not defined; no "
		"queues are defined");
	mu_specs_release(&s);
}

static void test_validate_long(mu_t_t *t)
{
	static char names[2000][8];
	mu_specs_t s;
	mu_diag_t d;
	mu_specs_init(&s);
	/* a chain 2000 deep is fine, and walked once */
	for (int i = 0; i < 2000; i++) {
		snprintf(names[i], sizeof names[i], "q%d", i);
		queue(&s, names[i], i ? names[i - 1] : NULL);
	}
	CHECK_EQ_INT(t, mu_specs_validate(&s, &d), 0);
	s.queues[0].parent = names[1999];
	CHECK_EQ_INT(t, mu_specs_validate(&s, &d), MU_EINVAL);
	CHECK(t, strstr(d.msg, "its parents form a cycle: q0 -> q1999 -> q1998"));
	s.queues[0].parent = NULL;
	add_job(&s, "j", "nope");
	CHECK_EQ_INT(t, mu_specs_validate(&s, &d), MU_ENOENT);
	CHECK(t, strstr(d.msg, "defined queues: q0, q1, q2,"));
	CHECK(t, strstr(d.msg, ", ...") && strlen(d.msg) < 700);
	mu_specs_release(&s);
}

static void test_validate_scenario(mu_t_t *t)
{
	mu_specs_t s;
	mu_specs_init(&s);
	for (int k = 0; k < 5; k++) {
		static const char *jobs[] = {"j1"}, *nodes[] = {"n1"};
		static const char *nojob[] = {"j9"}, *nonode[] = {"n9"};
		mu_specs_add_node(&s)->name = "n1";
		queue(&s, "q", NULL);
		add_job(&s, "j1", "q");
		mu_scenario_spec_t *sc = mu_arena_alloc(&s.arena, sizeof *sc);
		mu_scenario_step_t *st = mu_arena_alloc(&s.arena, 2 * sizeof *st);
		mu_expect_job_t *e = mu_arena_alloc(&s.arena, sizeof *e);
		sc->steps = st;
		sc->nsteps = 2;
		s.scenario = sc;
		st[1].finish = k == 1 ? nojob : jobs;
		st[1].nfinish = 1;
		st[1].remove_nodes = k == 2 ? nonode : nodes;
		st[1].nremove_nodes = 1;
		st[1].expect = e;
		st[1].nexpect = 1;
		e->job = k == 3 ? "j9" : "j1";
		e->nodes = k == 4 ? nonode : nodes;
		e->nnodes = 1;
		switch (k) {
		case 0:
			INVALID(t, &s, MU_OK, "");
			break;
		case 1:
			INVALID(t, &s, MU_ENOENT, "scenario step 2: finish: job "
				"\"j9\" is not defined");
			break;
		case 2:
			INVALID(t, &s, MU_ENOENT, "scenario step 2: removeNodes: "
				"node \"n9\" is not defined");
			break;
		case 3:
			INVALID(t, &s, MU_ENOENT, "scenario step 2: expect: job "
				"\"j9\" is not defined");
			break;
		case 4:
			INVALID(t, &s, MU_ENOENT, "scenario step 2: expect nodes: "
				"node \"n9\" is not defined");
			break;
		}
	}
	mu_specs_release(&s);
}

/* --- files ---------------------------------------------------------------- */

static void test_load_file(mu_t_t *t)
{
	mu_specs_t s;
	mu_diag_t d;
	mu_specs_init(&s);
	CHECK_EQ_INT(t, mu_load_file("/nonexistent/x.csv", NULL, &s, &d),
		     MU_ENOENT);
	CHECK_STR(t, d.msg, "/nonexistent/x.csv: cannot open: No such file or "
		  "directory");
	CHECK_EQ_INT(t, mu_load_file(".", NULL, &s, &d), MU_EINVAL);
	CHECK_STR(t, d.msg, ".: is a directory: expected a file");
	char path[] = "/tmp/muster-test-XXXXXX";
	int fd = mkstemp(path);
	CHECK(t, fd >= 0);
	if (fd >= 0) {
		static const char text[] = "name,queue,submit_s,pods\na,q,1,2\n";
		CHECK(t, write(fd, text, sizeof text - 1) == sizeof text - 1);
		close(fd);
		CHECK_EQ_INT(t, mu_load_file(path, NULL, &s, &d), 0);
		CHECK_EQ_INT(t, s.njobs, 1);
		unlink(path);
	}
	mu_specs_release(&s);
}

/* --- the real traces in ../shared/data -------------------------------------- */

#define DATA "../shared/data"

static int load_real(mu_t_t *t, const char *path, const mu_load_opts_t *o,
		     mu_specs_t *s)
{
	mu_diag_t d;
	mu_specs_init(s);
	int rc = mu_load_file(path, o, s, &d);
	if (rc != MU_OK) {
		fprintf(stderr, "%s: %s\n", path, d.msg);
		t->cur_failed++;
	}
	if (rc == MU_OK && mu_specs_validate(s, &d) != MU_OK) {
		fprintf(stderr, "%s: %s\n", path, d.msg);
		t->cur_failed++;
	}
	return rc;
}

static void test_real_openb(mu_t_t *t)
{
	mu_specs_t s;
	int64_t gpus = 0, cpu_only = 0, share = 0, whole = 0;
	load_real(t, DATA "/openb/openb_node_list_gpu_node.csv", NULL, &s);
	CHECK_EQ_INT(t, s.nnodes, 1213);
	for (size_t i = 0; i < s.nnodes; i++)
		gpus += s.nodes[i].alloc.v[MU_RES_GPU];
	CHECK_EQ_INT(t, gpus, 6212);
	mu_specs_release(&s);
	load_real(t, DATA "/openb/openb_node_list_all_node.csv", NULL, &s);
	CHECK_EQ_INT(t, s.nnodes, 1523);
	for (size_t i = 0; i < s.nnodes; i++)
		cpu_only += s.nodes[i].gpu_model == NULL;
	CHECK_EQ_INT(t, cpu_only, 310);
	mu_specs_release(&s);
	load_real(t, DATA "/openb/openb_pod_list_default.csv", NULL, &s);
	CHECK_EQ_INT(t, s.njobs, 8152);
	CHECK_EQ_INT(t, s.nqueues, 1);
	for (size_t i = 0; i < s.njobs; i++) {
		const mu_res_t *r = &s.jobs[i].podsets[0].req;
		share += r->v[MU_RES_GPU_MILLI] > 0;
		whole += r->v[MU_RES_GPU] > 0;
	}
	CHECK_EQ_INT(t, share, 3078);
	CHECK_EQ_INT(t, whole, 3911 + 16 + 15 + 44);
	mu_specs_release(&s);
	load_real(t, DATA "/openb/openb_pod_list_multigpu30.csv", NULL, &s);
	CHECK_EQ_INT(t, s.njobs, 8508);
	mu_specs_release(&s);
	load_real(t, DATA "/openb/openb_pod_list_gpuspec10.csv", NULL, &s);
	size_t spec = 0;
	for (size_t i = 0; i < s.njobs; i++)
		spec += s.jobs[i].podsets[0].ngpu_models > 0;
	CHECK_EQ_INT(t, spec, 8152 - 7420);
	mu_specs_release(&s);
}

/* Jobs by their total GPUs, against the README's gang sizes (which leave
 * out 7 jobs of 12 GPUs and 7 of 24). */
static void test_real_philly(mu_t_t *t)
{
	static const int64_t size[] = {1, 2, 4, 8, 12, 16, 24, 32, 64, 128};
	static const int64_t want[] = {76627, 1818, 1870, 1643, 7, 199, 7, 67, 6, 3};
	int64_t got[10] = {0}, total = 0;
	mu_specs_t s;
	load_real(t, DATA "/philly/philly.csv", NULL, &s);
	CHECK_EQ_INT(t, s.njobs, 82247);
	CHECK_EQ_INT(t, s.nqueues, 15);
	for (size_t i = 0; i < s.njobs; i++) {
		const mu_job_spec_t *j = &s.jobs[i];
		int64_t g = 0;
		for (size_t k = 0; k < j->npodsets; k++)
			g += j->podsets[k].replicas * j->podsets[k].req.v[MU_RES_GPU];
		total += g;
		for (int k = 0; k < 10; k++)
			got[k] += g == size[k];
		if (i > 0 && j->submit < j[-1].submit)
			t->cur_failed++;
	}
	for (int k = 0; k < 10; k++)
		CHECK_EQ_INT(t, got[k], want[k]);
	CHECK_EQ_INT(t, total, 107235);
	CHECK_EQ_INT(t, s.jobs[0].submit, 0);
	/* 2017-09-04 10:30:41 to 2017-12-22 08:02:11 */
	CHECK_EQ_INT(t, s.jobs[s.njobs - 1].submit, 9408690000LL);
	mu_specs_release(&s);

	/* day 30: rows from 2017-10-04 10:30:41, the first at 10:31:55 */
	mu_load_opts_t o;
	mu_load_opts_defaults(&o);
	o.from_s = 30 * 86400;
	o.to_s = 31 * 86400;
	load_real(t, DATA "/philly/philly.csv", &o, &s);
	CHECK_EQ_INT(t, s.njobs, 3618);
	CHECK_EQ_INT(t, s.jobs[0].submit, 74000);
	mu_specs_release(&s);
	o.max_jobs = 100;
	load_real(t, DATA "/philly/philly.csv", &o, &s);
	CHECK_EQ_INT(t, s.njobs, 100);
	mu_specs_release(&s);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_reader_fields);
	MU_RUN(&t, test_reader_errors);
	MU_RUN(&t, test_sniff);
	MU_RUN(&t, test_parse_utc);
	MU_RUN(&t, test_namemap);
	MU_RUN(&t, test_compact_all_columns);
	MU_RUN(&t, test_compact_defaults);
	MU_RUN(&t, test_compact_errors);
	MU_RUN(&t, test_openb_nodes);
	MU_RUN(&t, test_openb_pods);
	MU_RUN(&t, test_openb_pods5);
	MU_RUN(&t, test_philly);
	MU_RUN(&t, test_philly_options);
	MU_RUN(&t, test_philly_errors);
	MU_RUN(&t, test_headers);
	MU_RUN(&t, test_dispatch);
	MU_RUN(&t, test_auto_queues);
	MU_RUN(&t, test_validate);
	MU_RUN(&t, test_validate_long);
	MU_RUN(&t, test_validate_scenario);
	MU_RUN(&t, test_load_file);
	struct stat st;
	if (stat(DATA, &st) == 0 && S_ISDIR(st.st_mode)) {
		MU_RUN(&t, test_real_openb);
		MU_RUN(&t, test_real_philly);
	} else {
		printf("skipped: " DATA " not found\n");
	}
	return mu_t_done(&t);
}
