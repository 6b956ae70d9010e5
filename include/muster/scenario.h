/*
 * scenario.h - runs data-driven scenario files (docs/scenarios.md).
 *
 * A scenario is a cluster, queues, jobs and a Scenario document listing
 * steps: at each step some jobs arrive or finish, the engine runs one or more
 * cycles, and the step's expectations about binds and pending reasons are
 * checked after every cycle.
 */
#ifndef MUSTER_SCENARIO_H
#define MUSTER_SCENARIO_H

#include <stdio.h>

#include "muster/load.h"

/*
 * Runs the scenario in s (s->scenario must be set) on a fresh engine.
 * `file` names the source in messages.  Writes one line per failed
 * expectation to out and adds to *passed / *failed (counts of expectations
 * checked).  Returns MU_OK when it could run, or a negative mu_err_t with
 * diag filled (for example an expectation naming an unknown job).
 */
int mu_scenario_run(const mu_specs_t *s, const char *file, FILE *out,
		    int *passed, int *failed, mu_diag_t *diag);

#endif
