/*
 * cmd_scenario.c - `muster scenario [-v] FILE...`: runs scenario files.
 *
 * Each file is loaded on its own into a fresh spec set and run on a fresh
 * engine (mu_scenario_run).  A file passes when every check in it passed.
 * Output: "ok   FILE (N checks)" or "FAIL FILE" followed by its failure
 * lines, then "scenarios: N passed, N failed" counting files.  Load errors
 * go to stderr and count as failed files.  Exit 0 when all passed, 1 when a
 * check failed, 2 on bad usage or a file that could not be loaded or run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "muster/load.h"
#include "muster/scenario.h"

static void scenario_usage(FILE *f)
{
	fputs("usage: muster scenario [-v] FILE...\n"
	      "\n"
	      "Runs scenario files (docs/scenarios.md): each file holds a cluster,\n"
	      "queues, jobs and one Scenario document with steps and expectations.\n"
	      "\n"
	      "  -v, --verbose  also print each scenario's description and counts\n"
	      "  -h, --help     print this help\n"
	      "\n"
	      "Exit status: 0 all passed, 1 a check failed, 2 bad usage or input.\n",
	      f);
}

/* The outcome of one file. */
enum { SCN_PASS, SCN_FAIL, SCN_ERROR };

/* Loads and checks one file into s.  Returns MU_OK or an error with diag. */
static int scenario_load(const char *path, mu_specs_t *s, mu_diag_t *diag)
{
	int rc = mu_load_file(path, NULL, s, diag);
	if (rc == MU_OK)
		rc = mu_specs_validate(s, diag);
	if (rc == MU_OK && !s->scenario) {
		snprintf(diag->msg, sizeof diag->msg,
			 "%s: no Scenario document (kind: Scenario) in the file",
			 path);
		rc = MU_EINVAL;
	}
	return rc;
}

/* Prints text (a description, maybe folded with trailing newlines) as one
 * indented line. */
static void scenario_print_text(const char *indent, const char *text)
{
	size_t n = strlen(text);
	while (n && (text[n - 1] == '\n' || text[n - 1] == ' '))
		n--;
	printf("%s%.*s\n", indent, (int)n, text);
}

/* Prints a load or run error to stderr, naming the file when the message
 * does not already start with it. */
static void scenario_print_diag(const char *path, const mu_diag_t *diag, int rc)
{
	const char *msg = diag->msg[0] ? diag->msg : mu_strerror(rc);
	if (strncmp(msg, path, strlen(path)) == 0)
		fprintf(stderr, "muster scenario: %s\n", msg);
	else
		fprintf(stderr, "muster scenario: %s: %s\n", path, msg);
}

/* Runs one file and prints its result.  The failure lines are gathered in
 * a memory stream so that they follow the "FAIL" line; the stream is
 * closed here. */
static int scenario_file(const char *path, bool verbose)
{
	mu_specs_t s;
	mu_diag_t diag;
	diag.msg[0] = '\0';
	mu_specs_init(&s);
	char *lines = NULL;
	size_t len = 0;
	int passed = 0, failed = 0;
	int rc = scenario_load(path, &s, &diag);
	if (rc == MU_OK) {
		FILE *mem = open_memstream(&lines, &len);
		if (!mem) {
			snprintf(diag.msg, sizeof diag.msg, "%s: out of memory", path);
			rc = MU_ENOMEM;
		} else {
			rc = mu_scenario_run(&s, path, mem, &passed, &failed, &diag);
			fclose(mem);
		}
	}
	int res = rc != MU_OK ? SCN_ERROR : failed ? SCN_FAIL : SCN_PASS;
	if (res == SCN_PASS)
		printf("ok   %s (%d checks)\n", path, passed);
	else
		printf("FAIL %s\n", path);
	if (verbose && s.scenario && s.scenario->description)
		scenario_print_text("     ", s.scenario->description);
	if (lines && len)
		fputs(lines, stdout);
	if (verbose && res != SCN_ERROR)
		printf("     %d checks passed, %d failed\n", passed, failed);
	fflush(stdout);
	if (res == SCN_ERROR)
		scenario_print_diag(path, &diag, rc);
	free(lines);
	mu_specs_release(&s);
	return res;
}

int mu_cmd_scenario(int argc, char **argv)
{
	bool verbose = false;
	int i = 1;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")) {
			verbose = true;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			scenario_usage(stdout);
			return MU_EXIT_OK;
		} else if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else {
			fprintf(stderr, "muster scenario: unknown option \"%s\"\n", argv[i]);
			scenario_usage(stderr);
			return MU_EXIT_USAGE;
		}
	}
	if (i >= argc) {
		fprintf(stderr, "muster scenario: no scenario file given\n");
		scenario_usage(stderr);
		return MU_EXIT_USAGE;
	}
	int npass = 0, nfail = 0, nerr = 0;
	for (; i < argc; i++) {
		int res = scenario_file(argv[i], verbose);
		npass += res == SCN_PASS;
		nfail += res != SCN_PASS;
		nerr += res == SCN_ERROR;
	}
	printf("scenarios: %d passed, %d failed\n", npass, nfail);
	return nerr ? MU_EXIT_USAGE : nfail ? MU_EXIT_FAIL : MU_EXIT_OK;
}
