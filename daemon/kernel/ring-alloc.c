// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A new session's ring buffer, allocated on a thread of its own.
 *
 * Writing buffer_size_kb makes the kernel allocate every CPU's ring
 * before the write returns: seconds for a large ring, during which the
 * event loop would answer nobody (a `list` waited 6 s behind a 1 GiB
 * ring). The thread does that one write, then wakes the session's
 * eventfd; the session owns the instance again once ring_alloc_finished()
 * says so, and touches nothing of it meanwhile.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "daemon/kernel/instance.h"
#include "daemon/kernel/ring-alloc.h"
#include "ftraced/macro.h"

struct ring_alloc {
	struct instance *instance; /* borrowed; the thread's alone until done */
	uint32_t buffer_kb;
	bool snapshot;             /* allocate the snapshot buffer too */
	int notify_fd;             /* borrowed eventfd */
	pthread_t thread;
	int result;                /* written by the thread before done */
	_Atomic bool done;
};

static void *alloc_thread(void *userdata)
{
	struct ring_alloc *a = userdata;
	uint64_t one = 1;

	/* 0: the ring is the kernel's as it is (a boot-mapped one), nothing to size. */
	a->result = a->buffer_kb ? instance_set_buffer_size(a->instance, a->buffer_kb) : 0;
	/* A swap allocates the snapshot buffer, as large as the ring; clearing it keeps it. */
	if (a->result >= 0 && a->snapshot)
		a->result = instance_snapshot_swap(a->instance);
	if (a->result >= 0 && a->snapshot)
		a->result = instance_snapshot_clear(a->instance);
	atomic_store_explicit(&a->done, true, memory_order_release);
	(void)!write(a->notify_fd, &one, sizeof(one));
	return NULL;
}

/**
 * ring_alloc_start() - size the instance's per-CPU ring on a thread.
 * @i: a new instance, tracing off; left alone by the caller until done
 * @buffer_kb: per-CPU size, checked against bounds.h; 0 keeps the ring as it is
 * @snapshot: allocate the snapshot buffer too (a kernel-backend flight recorder)
 * @notify_fd: an eventfd written once the allocation is over
 * @ret: the allocation under way
 *
 * Return: 0 or -errno (nothing was started).
 */
int ring_alloc_start(struct instance *i, uint32_t buffer_kb, bool snapshot, int notify_fd,
		     struct ring_alloc **ret)
{
	struct ring_alloc *a;
	int r;

	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	*a = (struct ring_alloc){ .instance = i, .buffer_kb = buffer_kb, .snapshot = snapshot,
				  .notify_fd = notify_fd };
	r = pthread_create(&a->thread, NULL, alloc_thread, a);
	if (r != 0) {
		free(a);
		return -r;
	}
	*ret = a;
	return 0;
}

/**
 * ring_alloc_finished() - is the allocation over, and how did it go?
 * @a: allocation
 * @ret_result: 0 or the kernel's -errno, once done
 *
 * Return: true once the thread has finished with the instance.
 */
bool ring_alloc_finished(struct ring_alloc *a, int *ret_result)
{
	if (!atomic_load_explicit(&a->done, memory_order_acquire))
		return false;
	*ret_result = a->result;
	return true;
}

/**
 * ring_alloc_free() - wait for the thread (if still at work) and free.
 * @a: allocation or NULL
 *
 * Return: NULL.
 */
struct ring_alloc *ring_alloc_free(struct ring_alloc *a)
{
	if (!a)
		return NULL;
	pthread_join(a->thread, NULL);
	free(a);
	return NULL;
}
