/*
 * test_eval_slurm.c - unit tests of `muster eval slurm` that need no Slurm:
 * the readers of Slurm's output, the slurm.conf text, the figures computed
 * from hand-made records, and muster's side on a small Philly trace (window
 * choice, compression, time limits as estimates, expected starts).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "eval/slurm_int.h"

static void test_parse_time(mu_t_t *t)
{
	int64_t v;
	struct tm tm = {0};
	tm.tm_year = 126;
	tm.tm_mon = 10;
	tm.tm_mday = 25;
	tm.tm_hour = 18;
	tm.tm_min = 30;
	tm.tm_sec = 8;
	tm.tm_isdst = -1;
	time_t want = mktime(&tm);
	const char *s = "2026-11-25T18:30:08";
	CHECK_EQ_INT(t, mu_slurm_parse_time(s, strlen(s), &v), MU_OK);
	CHECK_EQ_INT(t, v, (int64_t)want);
	/* bounded by the length given: the same prefix of a longer string */
	const char *l = "2026-11-25T18:30:08junk";
	CHECK_EQ_INT(t, mu_slurm_parse_time(l, 19, &v), MU_OK);
	CHECK_EQ_INT(t, mu_slurm_parse_time(l, strlen(l), &v), MU_EPARSE);
	CHECK_EQ_INT(t, mu_slurm_parse_time("N/A", 3, &v), MU_EPARSE);
	CHECK_EQ_INT(t, mu_slurm_parse_time("Unknown", 7, &v), MU_EPARSE);
	CHECK_EQ_INT(t, mu_slurm_parse_time("2026-13-25T18:30:08", 19, &v), MU_EPARSE);
	CHECK_EQ_INT(t, mu_slurm_parse_time("2026-11-25 18:30:08", 19, &v), MU_EPARSE);
	CHECK_EQ_INT(t, mu_slurm_parse_time("2026-11-2xT18:30:08", 19, &v), MU_EPARSE);
}

static void test_fields(mu_t_t *t)
{
	const char *line = "JobId=7 TimeLimit=1 StartTime=2026-11-25T18:30:08 "
			   "EndTime=Unknown Scheduler=Backfill JobState=COMPLETED\n"
			   "JobId=8 StartTime=x";
	const char *v;
	size_t n;
	CHECK_EQ_INT(t, mu_slurm_field(line, strlen(line), "Time", &v, &n), MU_ENOENT);
	CHECK_EQ_INT(t, mu_slurm_field(line, strlen(line), "TimeLimit", &v, &n), MU_OK);
	CHECK(t, n == 1 && v[0] == '1');
	/* a field of the next line is not this line's */
	const char *l2 = "JobId=9 EndTime=Unknown\nScheduler=Backfill";
	CHECK_EQ_INT(t, mu_slurm_field(l2, strlen(l2), "Scheduler", &v, &n), MU_ENOENT);
	mu_slurm_line_t x;
	CHECK_EQ_INT(t, mu_slurm_parse_line(line, strlen(line), &x), MU_OK);
	CHECK_EQ_INT(t, x.id, 7);
	CHECK(t, x.start > 0 && x.end == -1 && x.submit == -1);
	CHECK(t, x.backfill && x.completed);
	CHECK_EQ_INT(t, mu_slurm_parse_line("JobId=abc", 9, &x), MU_EPARSE);
	CHECK_EQ_INT(t, mu_slurm_parse_line("Name=wrap", 9, &x), MU_EPARSE);
	CHECK_EQ_INT(t, mu_slurm_parse_line("JobId=", 6, &x), MU_EPARSE);
	/* the length is the bound: "JobId=12" cut to "JobId=1" */
	CHECK_EQ_INT(t, mu_slurm_parse_line("JobId=12", 7, &x), MU_OK);
	CHECK_EQ_INT(t, x.id, 1);
}

static void test_conf_text(mu_t_t *t)
{
	int ports[2] = {40001, 40002};
	mu__slurm_conf_t c = {.dir = "/tmp/m", .user = "root", .ctld_port = 40000,
			      .ports = ports, .nodes = 2, .gpus_per_node = 8,
			      .cpus_per_node = 64, .sched_params = "bf_interval=1"};
	char buf[4096];
	int n = mu__slurm_conf_text(&c, buf, sizeof buf);
	CHECK(t, n > 0 && (size_t)n == strlen(buf));
	const char *want[] = {
		"SchedulerType=sched/backfill\n", "SchedulerParameters=bf_interval=1\n",
		"SelectType=select/cons_tres\n", "PriorityType=priority/basic\n",
		"SlurmctldPort=40000\n", "CommunicationParameters=NoCtldInAddrAny,NoInAddrAny\n",
		"NodeName=n001 NodeHostname=localhost NodeAddr=127.0.0.1 Port=40001 CPUs=64 "
		"RealMemory=524288 Gres=gpu:8", "NodeName=n002", "Port=40002",
		"JobCompType=jobcomp/filetxt\n", "JobCompLoc=/tmp/m/jobcomp.txt\n",
		"SlurmdSpoolDir=/tmp/m/spool/%n\n", "GresTypes=gpu\n",
	};
	for (size_t i = 0; i < sizeof want / sizeof *want; i++)
		if (!strstr(buf, want[i])) {
			fprintf(stderr, "slurm.conf lacks: %s\n", want[i]);
			CHECK(t, 0);
		}
	/* too small a buffer: the length it wanted, a terminated prefix */
	char small[16];
	CHECK_EQ_INT(t, mu__slurm_conf_text(&c, small, sizeof small), n);
	CHECK(t, strlen(small) == sizeof small - 1);
	CHECK_EQ_INT(t, mu__slurm_gres_text(&c, buf, sizeof buf) > 0, 1);
	CHECK(t, strstr(buf, "AutoDetect=off\n") && strstr(buf, "File=/tmp/m/gpu[0-7]"));
}

/* Four jobs on one 8-GPU node, compressed 60 to 1: a 1-GPU job, an 8-GPU
 * job that waits, a 1-GPU job that jumps it, and a 16-GPU gang. */
static void fake_eval(mu_slurm_eval_t *ev, mu_slurm_job_t *jobs)
{
	memset(ev, 0, sizeof *ev);
	mu_slurm_opts_defaults(&ev->opts);
	ev->win.gpus = 16;
	ev->span_s = 10;
	ev->jobs = jobs;
	ev->njobs = 4;
	jobs[0] = (mu_slurm_job_t){"a", 0, 10, 1, 1, 1};
	jobs[1] = (mu_slurm_job_t){"b", 1, 5, 8, 1, 1};
	jobs[2] = (mu_slurm_job_t){"c", 2, 2, 1, 1, 1};
	jobs[3] = (mu_slurm_job_t){"d", 3, 5, 16, 2, 1};
}

static void test_reduce(mu_t_t *t)
{
	mu_slurm_eval_t ev;
	mu_slurm_job_t jobs[4];
	mu_slurm_rec_t recs[4] = {
		{0, 0, 10, -1, false},
		{1, 10, 15, 9, false},  /* estimated 1 s (60 trace s) early */
		{2, 2, 4, -1, true},    /* started while b waited */
		{3, 15, 20, 12, false}, /* estimated 3 s (180 trace s) early */
	};
	fake_eval(&ev, jobs);
	mu_slurm_side_t s = {.is_slurm = true, .recs = recs};
	mu_slurm_reduce(&ev, &s);
	/* GPU-seconds inside [0, 10]: a 1 x 10 + c 1 x 2 = 12 of 160 */
	CHECK(t, fabs(s.util - 12.0 / 160) < 1e-9);
	CHECK_EQ_INT(t, s.out_of_order, 1);
	CHECK_EQ_INT(t, s.by_backfill, 1);
	CHECK_EQ_INT(t, s.completed, 4);
	CHECK_EQ_INT(t, s.cls[0].n, 2);
	CHECK_EQ_INT(t, s.cls[2].n, 1);
	CHECK_EQ_INT(t, s.cls[3].n, 1);
	CHECK(t, fabs(s.cls[2].p99_s - 9 * 60) < 1e-9);  /* b waited 9 s */
	CHECK(t, fabs(s.cls[3].p50_s - 12 * 60) < 1e-9); /* d waited 12 s */
	CHECK_EQ_INT(t, s.est_n, 2);
	CHECK(t, fabs(s.est_bias_s - (-120)) < 1e-9);
	CHECK(t, fabs(s.est_within - 1) < 1e-9);
	CHECK(t, fabs(s.makespan_s - 20 * 60) < 1e-9);
	/* muster's side counts no Scheduler=Backfill */
	mu_slurm_side_t m = {.is_slurm = false, .recs = recs};
	mu_slurm_reduce(&ev, &m);
	CHECK_EQ_INT(t, m.by_backfill, -1);
	CHECK_EQ_INT(t, m.out_of_order, 1);
	/* starting in the same second as the job ahead is not out of order */
	recs[2].start_s = 10;
	recs[2].end_s = 12;
	mu_slurm_reduce(&ev, &m);
	CHECK_EQ_INT(t, m.out_of_order, 0);
	CHECK_EQ_INT(t, mu_slurm_class_of(1), 0);
	CHECK_EQ_INT(t, mu_slurm_class_of(4), 1);
	CHECK_EQ_INT(t, mu_slurm_class_of(8), 2);
	CHECK_EQ_INT(t, mu_slurm_class_of(12), 3);
}

/* A Philly trace of three hours: 1- and 2-GPU jobs every ten minutes and
 * a 16-GPU gang an hour, and a quiet hour before with no gang. */
static char *tiny_trace(size_t *len)
{
	size_t cap = 16384, n = 0;
	char *b = malloc(cap);
	if (!b)
		return NULL;
	n += (size_t)snprintf(b + n, cap - n, "timestamp,duration,num_gpus,gpu_time,cluster\n");
	n += (size_t)snprintf(b + n, cap - n, "2017-10-01 00:00:00,600,1,600,a\n");
	for (int h = 1; h < 4; h++) {
		for (int m = 0; m < 60; m += 10) {
			n += (size_t)snprintf(b + n, cap - n, "2017-10-01 %02d:%02d:00,1800,1,1800,a\n",
					      h, m);
			n += (size_t)snprintf(b + n, cap - n, "2017-10-01 %02d:%02d:30,5400,2,10800,b\n",
					      h, m);
		}
		n += (size_t)snprintf(b + n, cap - n, "2017-10-01 %02d:15:00,3600,16,57600,c\n", h);
	}
	*len = n;
	return b;
}

static void test_muster_side(mu_t_t *t)
{
	size_t len;
	char *csv = tiny_trace(&len);
	CHECK(t, csv != NULL);
	if (!csv)
		return;
	mu_load_opts_t lo;
	mu_load_opts_defaults(&lo);
	mu_specs_t all, sp;
	mu_diag_t d = {{0}};
	mu_specs_init(&all);
	mu_specs_init(&sp);
	CHECK_EQ_INT(t, mu_load_csv("tiny.csv", csv, len, &lo, &all, &d), MU_OK);
	mu_slurm_opts_t o;
	mu_slurm_opts_defaults(&o);
	o.hours = 3;
	mu_slurm_eval_t ev;
	int rc = mu_slurm_eval_init(&ev, &all, &o, &sp, &d);
	CHECK_EQ_INT(t, rc, MU_OK);
	/* the window with the gangs starts at trace hour 1, not at the quiet 0 */
	CHECK_EQ_INT(t, ev.win.from_s, 3600);
	CHECK_EQ_INT(t, (int64_t)ev.njobs, 39);
	bool sorted = true, limits = true;
	for (size_t i = 0; i < ev.njobs; i++) {
		const mu_slurm_job_t *j = &ev.jobs[i];
		sorted = sorted && (i == 0 || ev.jobs[i - 1].submit_s <= j->submit_s);
		/* 1800 trace s -> 30 s -> 1 min; 5400 -> 90 s -> 2 min; 3600 -> 1 */
		int want = j->gpus == 2 ? 2 : 1;
		limits = limits && j->limit_min == want &&
			 sp.jobs[i].runtime_estimate == (mu_time_t)want * 60000;
	}
	CHECK(t, sorted && limits);
	CHECK(t, ev.span_s > 170 && ev.span_s < 190);
	if (rc == MU_OK)
		CHECK_EQ_INT(t, mu_slurm_eval_muster(&ev, &sp, &d), MU_OK);
	CHECK_EQ_INT(t, (int64_t)ev.nsides, 2);
	for (size_t k = 0; k < ev.nsides; k++) {
		CHECK_EQ_INT(t, ev.sides[k].completed, 39);
		CHECK(t, ev.sides[k].util > 0.3 && ev.sides[k].util <= 1);
		CHECK_EQ_INT(t, ev.sides[k].cls[3].n, 3);
	}
	CHECK_EQ_INT(t, ev.sides[1].preemptions + ev.sides[1].moves, 0);
	mu_slurm_eval_release(&ev);
	mu_specs_release(&sp);
	mu_specs_release(&all);
	free(csv);
}

static void test_options(mu_t_t *t)
{
	mu_slurm_opts_t o;
	mu_slurm_opts_defaults(&o);
	CHECK(t, o.nvariants >= 2 && o.compress == 60 && o.hours == 3);
	for (size_t i = 0; i < o.nvariants; i++)
		CHECK(t, strstr(o.variants[i], "bf_interval=1") != NULL);
	mu_specs_t all, sp;
	mu_diag_t d = {{0}};
	mu_slurm_eval_t ev;
	mu_specs_init(&all);
	mu_specs_init(&sp);
	o.compress = 0.5;
	CHECK_EQ_INT(t, mu_slurm_eval_init(&ev, &all, &o, &sp, &d), MU_EINVAL);
	mu_slurm_eval_release(&ev);
	mu_specs_release(&sp);
	mu_specs_release(&all);
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_parse_time);
	MU_RUN(&t, test_fields);
	MU_RUN(&t, test_conf_text);
	MU_RUN(&t, test_reduce);
	MU_RUN(&t, test_muster_side);
	MU_RUN(&t, test_options);
	return mu_t_done(&t);
}
