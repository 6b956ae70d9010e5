/*
 * rng.c - the one pseudo-random stream muster's simulations, evaluations
 * and rollouts draw from: splitmix64 (Steele, Lea and Flood, "Fast
 * splittable pseudorandom number generators", OOPSLA 2014), whose state is
 * a single 64-bit word the caller owns and seeds.  No state here: the same
 * seed gives the same stream everywhere, which is what makes every run of
 * `muster simulate`, `muster eval` and a rollout repeatable.
 */
#include "muster/util.h"

uint64_t mu__splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t mu__rand_below(uint64_t *s, uint64_t n)
{
	double u = (double)(mu__splitmix64(s) >> 11) * 0x1p-53;
	uint64_t i = (uint64_t)(u * (double)n);
	return i < n ? i : n - 1;
}
