/*
 * grow.c - the engine's one way to grow an array: capacity doubled from 8
 * up to what is needed.  The bottom file of the room: it calls no other
 * engine file, so any file may use it without joining the cycle's loop
 * (scripts/check-loops.sh).
 */
#include <stdlib.h>

#include "engine/engine_int.h"

int mu__grow(void **v, int32_t *cap, int32_t need, size_t elem)
{
	if (need <= *cap)
		return MU_OK;
	if (need > INT32_MAX / 2)
		return MU_ELIMIT;
	int32_t ncap = *cap ? *cap : 8;
	while (ncap < need)
		ncap *= 2;
	void *nv = realloc(*v, (size_t)ncap * elem);
	if (!nv)
		return MU_ENOMEM;
	*v = nv;
	*cap = ncap;
	return MU_OK;
}
