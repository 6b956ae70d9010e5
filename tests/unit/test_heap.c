/*
 * test_heap.c - the heap shim (src/util/heap.c): mu__heap_stats sees what
 * the program allocates and frees, whichever allocator the build runs on
 * (the sanitizers' here; jemalloc in the release builds, where glibc's
 * mallinfo2 reports zeroes, as it does under the sanitizers), and
 * mu__heap_trim can be called at any time.
 */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "muster/util.h"

#define BLOCKS 4096
#define BLOCK 1024

/* 4 MiB in 1-KiB blocks shows in the bytes in use, and leaves them when
 * freed; what the heap holds is at least what is in use. */
static void test_stats_follow(mu_t_t *t)
{
	size_t before, held0, during, held1, after, held2;
	mu__heap_stats(&before, &held0);
	void **p = malloc(BLOCKS * sizeof *p);
	CHECK(t, p != NULL);
	if (!p)
		return;
	for (int i = 0; i < BLOCKS; i++)
		p[i] = malloc(BLOCK);
	mu__heap_stats(&during, &held1);
	for (int i = 0; i < BLOCKS; i++)
		free(p[i]);
	free(p);
	mu__heap_trim();
	mu__heap_stats(&after, &held2);
	CHECK(t, during >= before + (size_t)BLOCKS * BLOCK);
	CHECK(t, held1 >= during);
	CHECK(t, after + (size_t)BLOCKS * BLOCK / 2 <= during);
	if (t->cur_failed)
		printf("  in use %zu -> %zu -> %zu, held %zu -> %zu -> %zu\n", before, during, after, held0,
		       held1, held2);
}

/* A sanitizer build is not a jemalloc one; trimming an idle heap is safe. */
static void test_allocator(mu_t_t *t)
{
	CHECK(t, !mu__heap_is_jemalloc());
	mu__heap_trim();
	mu__heap_trim();
}

int main(void)
{
	mu_t_t t = MU_T_INIT;
	MU_RUN(&t, test_stats_follow);
	MU_RUN(&t, test_allocator);
	return mu_t_done(&t);
}
