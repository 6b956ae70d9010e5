/*
 * heap.c - giving the heap's free pages back to the system, and how much
 * the heap holds, with whichever allocator the process runs on.
 *
 * The release builds link jemalloc (Makefile, REL_LIBS): on the bind path
 * glibc's malloc and free were the largest single user-space cost of both
 * the server and the scheduler (docs/evaluation.md, "The bind path, round
 * 11").  The sanitizer and fuzz builds keep glibc's, which the sanitizers
 * replace.  glibc's malloc_trim and mallinfo2 only see glibc's own arenas,
 * so under jemalloc they would free nothing and report nothing (and under
 * the sanitizers mallinfo2 reports zeroes too).  jemalloc's mallctl and the
 * sanitizers' allocator statistics are therefore declared weak: when the
 * process has one (linked or preloaded) these functions use it, otherwise
 * glibc's calls.
 */
#define _GNU_SOURCE /* malloc_trim, mallinfo2 */
#include <malloc.h>
#include <stdint.h>
#include <stddef.h>

#include "muster/util.h"

/* jemalloc's options, read once at its start (the release builds only;
 * elsewhere nothing reads this).  One arena, as the scheduler asks glibc
 * for one (M_ARENA_MAX, cmd_scheduler.c): its reflectors parse lists on
 * their own threads and its loop frees what they parsed, and with
 * jemalloc's default of four arenas per CPU the scheduler peaked at 145 MB
 * at 5,000 nodes and 58,000 pods, against 129 MB with one (and 117-119 MB
 * on glibc).  The server's CPU per bind was not worse with one (three
 * pairs, docs/evaluation.md "The bind path, round 11").  jemalloc declares
 * it `const char *`; nothing writes it. */
const char *const malloc_conf = "narenas:1";

/* jemalloc's control entry point (jemalloc/jemalloc.h); NULL when the
 * process runs on glibc's malloc. */
extern int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen)
	__attribute__((weak));
/* The sanitizers' allocator statistics (sanitizer/allocator_interface.h);
 * NULL outside an ASan build. */
extern size_t __sanitizer_get_current_allocated_bytes(void) __attribute__((weak));
extern size_t __sanitizer_get_heap_size(void) __attribute__((weak));

bool mu__heap_is_jemalloc(void)
{
	return mallctl != NULL;
}

/* jemalloc: purges every arena's unused dirty pages at once ("arena.4096"
 * is MALLCTL_ARENAS_ALL), which would otherwise go back over its decay
 * time (10 s).  glibc: malloc_trim(0).  Either walks the free extents or
 * chunks once; no allocation. */
void mu__heap_trim(void)
{
	if (mallctl) {
		mallctl("arena.4096.purge", NULL, NULL, NULL, 0);
		return;
	}
	malloc_trim(0);
}

/* jemalloc: "stats.allocated" and "stats.resident" after flushing the
 * calling thread's cache (its blocks would count as allocated) and
 * refreshing the "epoch" (the statistics are a snapshot).  The sanitizers:
 * their allocated bytes and heap size.  glibc: mallinfo2's blocks in use
 * and the arena plus mmapped blocks.  Zeroes when none answers. */
void mu__heap_stats(size_t *in_use, size_t *held)
{
	*in_use = *held = 0;
	if (mallctl) {
		uint64_t epoch = 1;
		size_t sz = sizeof epoch;
		mallctl("thread.tcache.flush", NULL, NULL, NULL, 0);
		mallctl("epoch", &epoch, &sz, &epoch, sz);
		sz = sizeof *in_use;
		if (mallctl("stats.allocated", in_use, &sz, NULL, 0))
			*in_use = 0;
		sz = sizeof *held;
		if (mallctl("stats.resident", held, &sz, NULL, 0))
			*held = 0;
		return;
	}
	if (__sanitizer_get_current_allocated_bytes && __sanitizer_get_heap_size) {
		*in_use = __sanitizer_get_current_allocated_bytes();
		*held = __sanitizer_get_heap_size();
		return;
	}
	struct mallinfo2 mi = mallinfo2();
	*in_use = mi.uordblks + mi.hblkhd;
	*held = mi.arena + mi.hblkhd;
}
