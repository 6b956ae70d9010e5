/*
 * args.c - the argument loop the evaluation commands share: -h/--help
 * prints the usage, flags without a value set a bool, every other argument
 * is an option whose value is the next argument and which the command's own
 * function parses.  An unknown option, a missing value and a bad value are
 * each said on stderr with the command's name, the option and "see --help",
 * in the same words in every command.
 */
#include <string.h>

#include "cli/cli.h"
#include "muster/error.h"

/* The flag named a, or NULL.  O(nflags). */
static const mu_cli_flag_t *find_flag(const mu_cli_flag_t *flags, size_t n, const char *a)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(flags[i].name, a))
			return &flags[i];
	return NULL;
}

int mu_cli_parse(const mu_cli_parser_t *p, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			p->usage(stdout);
			return -1;
		}
		const mu_cli_flag_t *fl = find_flag(p->flags, p->nflags, a);
		if (fl) {
			*fl->set = true;
			continue;
		}
		int rc = i + 1 < argc ? p->option(p->ctx, a, argv[i + 1]) : MU_EINVAL;
		if (rc == MU_EINVAL) {
			fprintf(stderr, "%s: %s option '%s' (see --help)\n", p->cmd,
				i + 1 < argc ? "unknown" : "missing value or unknown", a);
			return MU_EXIT_USAGE;
		}
		if (rc) {
			fprintf(stderr, "%s: bad value for %s: '%s' (see --help)\n", p->cmd, a,
				argv[i + 1]);
			return MU_EXIT_USAGE;
		}
		i++;
	}
	return 0;
}
