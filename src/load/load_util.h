/*
 * load_util.h - helpers shared by the YAML and CSV loaders: default
 * priorities by job type and the device strings of scenario expectations.
 * The strict parsers they use are in muster/util.h, the diagnostics in
 * muster/error.h.
 */
#ifndef MUSTER_LOAD_UTIL_H
#define MUSTER_LOAD_UTIL_H

#include <stdarg.h>

#include "muster/load.h"
#include "muster/util.h"

/* The priority of a job of type t that gives neither a priority nor a
 * priority class: train 0, batch 0, inference 100, interactive 1000. */
int32_t mu__type_priority(mu_job_type_t t);

#endif
