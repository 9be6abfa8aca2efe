// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A session's CPUs: one struct cpu_stream each, holding the capture
 * stream lent to that CPU's worker and every counter the session keeps
 * per CPU (kernel counters at start and at the last cut, stream totals at
 * the last segment boundary, the flight recorder's ring). Grouping them
 * per CPU keeps one allocation and one owner where there were ten
 * parallel arrays.
 *
 * Owned by one session; main thread only. The streams themselves are
 * read by the workers, through capture.c's atomic counters.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/capture/chunk-ring.h"
#include "daemon/output/segment.h"
#include "daemon/output/stream-set.h"
#include "ftraced/macro.h"

/**
 * stream_set_init() - room for @n_cpus CPUs, none capturing.
 * @set: the set to fill in
 * @n_cpus: CPUs of the capture pool
 *
 * Return: 0 or -ENOMEM.
 */
int stream_set_init(struct stream_set *set, unsigned n_cpus)
{
	*set = (struct stream_set){ .n_cpus = n_cpus };
	set->cpus = calloc(n_cpus, sizeof(*set->cpus));
	return set->cpus ? 0 : -ENOMEM;
}

/**
 * stream_set_done() - free every ring and text; idempotent.
 * @set: set, initialised or zeroed
 *
 * The caller releases the streams first (stream_set_release()); one still
 * inside a worker is the pool's until the pool goes away.
 */
void stream_set_done(struct stream_set *set)
{
	stream_set_release(set, false);
	stream_set_rings_free(set);
	for (unsigned cpu = 0; set->cpus && cpu < set->n_cpus; cpu++)
		free(set->cpus[cpu].cut_text);
	free(set->cpus);
	*set = (struct stream_set){};
}

/**
 * stream_set_open() - one stream per CPU, into @seg's spools or the CPUs' rings.
 * @set: set without streams
 * @inst: the session's instance
 * @p: how to capture
 * @seg: the segment whose spools receive the data, or NULL for the rings
 * @error: receives a message for the client on failure
 * @n_error: its size
 *
 * Return: 0, or -errno with @error set; streams opened so far stay for
 * stream_set_release().
 */
int stream_set_open(struct stream_set *set, struct instance *inst, const struct stream_params *p,
		    struct segment *seg, char *error, size_t n_error)
{
	for (unsigned cpu = 0; cpu < set->n_cpus; cpu++) {
		struct cpu_stream *cs = &set->cpus[cpu];
		struct capture_stream_config c = {
			.cpu = cpu,
			.spool_fd = seg ? segment_spool_fd(seg, cpu) :
				    p->copy_fds ? p->copy_fds[cpu] : -EBADF,
			.ring = seg ? NULL : cs->ring,
			.notify_fd = p->notify_fd,
			.subbuf_size = p->subbuf_size,
			.zstd = p->zstd,
			.level = p->level,
			.notify_bytes = p->notify_bytes,
			.progress = p->progress,
			.drain_only = p->snapshot_raw,
			.rt_priority = p->rt_priority,
			.wake_bytes = p->wake_bytes,
			.spool_region_bytes = p->spool_region_bytes,
			.stats_fd = -EBADF,
			.mirror = { .fd = -EBADF },
			.hold_dir_fd = seg ? p->hold_dir_fd : -EBADF,
			.spool_id = seg ? segment_trace_id(seg) : 0,
		};
		int r;

		if (seg)
			segment_mirror(seg, cpu, &c.mirror);

		r = p->snapshot_raw ? instance_open_cpu_snapshot_raw(inst, cpu, &c.trace_fd) :
			instance_open_cpu_raw(inst, cpu, &c.trace_fd);
		if (r >= 0 && instance_open_cpu_stats(inst, cpu, &c.stats_fd) < 0)
			c.stats_fd = -EBADF; /* recovery then cannot tell; capture goes on */
		if (r >= 0)
			r = capture_stream_new(&c, &cs->stream);
		if (r < 0) {
			snprintf(error, n_error, "cannot open the ring buffer of CPU %u: %s", cpu,
				 strerror(-r));
			return r;
		}
		cs->base_bytes = 0;
		cs->base_chunks = 0;
		cs->clears_seen = 0;
		cs->cleared_seen = 0;
	}
	return 0;
}

/**
 * stream_set_release() - free streams, keeping their totals in cpu_stream.final.
 * @set: set
 * @all: every stream (no worker holds any); false: only those whose final drain is done
 */
void stream_set_release(struct stream_set *set, bool all)
{
	for (unsigned cpu = 0; set->cpus && cpu < set->n_cpus; cpu++) {
		struct cpu_stream *cs = &set->cpus[cpu];
		struct capture_counters c = {};

		if (!cs->stream)
			continue;
		capture_stream_counters(cs->stream, &c);
		/* A stream still inside a worker cannot be freed. */
		if (!all && !c.finished)
			continue;
		cs->final = c;
		cs->stream = capture_stream_free(cs->stream);
	}
}

/**
 * stream_set_read_stats() - read every CPU's kernel counters now.
 * @set: set
 * @inst: the session's instance; NULL once it is retired (or in a unit test)
 * @start: into cpu_stream.start (capture begins); false: into cpu_stream.cut
 * @text: keep the stats texts in cpu_stream.cut_text too
 *
 * Return: 0, -ENODEV without an instance, or the first -errno.
 */
int stream_set_read_stats(struct stream_set *set, struct instance *inst, bool start, bool text)
{
	if (!inst)
		return -ENODEV;
	for (unsigned cpu = 0; cpu < set->n_cpus; cpu++) {
		struct cpu_stream *cs = &set->cpus[cpu];
		int r;

		if (text)
			cs->cut_text = mfree(cs->cut_text);
		r = instance_read_cpu_stats(inst, cpu, start ? &cs->start : &cs->cut,
					    text ? &cs->cut_text : NULL);
		if (r < 0)
			return r;
	}
	return 0;
}

/**
 * stream_set_finished() - has every stream finished its final drain?
 * @set: set (a stream that could not be queued is NULL and counts as finished)
 *
 * Return: true when none is still in a worker.
 */
bool stream_set_finished(const struct stream_set *set)
{
	for (unsigned cpu = 0; cpu < set->n_cpus; cpu++) {
		struct capture_counters c;

		if (!set->cpus[cpu].stream)
			continue;
		capture_stream_counters(set->cpus[cpu].stream, &c);
		if (!c.finished)
			return false;
	}
	return true;
}

/**
 * stream_set_cut_reached() - have all streams completed cut @generation?
 * @set: set with a stream on every CPU
 * @generation: the rotation (or flush) asked for
 *
 * Return: true when every worker has switched.
 */
bool stream_set_cut_reached(const struct stream_set *set, uint32_t generation)
{
	for (unsigned cpu = 0; cpu < set->n_cpus; cpu++) {
		struct capture_cut cut;

		capture_stream_cut(set->cpus[cpu].stream, &cut);
		if (cut.generation < generation)
			return false;
	}
	return true;
}

/**
 * stream_set_segment_bytes() - bytes stored since the current segment began, all CPUs.
 * @set: set with a stream on every CPU
 *
 * Return: the sum.
 */
uint64_t stream_set_segment_bytes(const struct stream_set *set)
{
	uint64_t n = 0;

	for (unsigned cpu = 0; cpu < set->n_cpus; cpu++) {
		struct capture_counters c;

		capture_stream_counters(set->cpus[cpu].stream, &c);
		n += c.bytes_stored - set->cpus[cpu].base_bytes;
	}
	return n;
}

/**
 * stream_set_rings_new() - a chunk ring per CPU (flight recorder).
 * @set: set without rings
 * @budget_per_cpu: each ring's byte budget (UINT64_MAX: unbounded, for a drain)
 *
 * Return: 0 or -ENOMEM (then no ring is left).
 */
int stream_set_rings_new(struct stream_set *set, uint64_t budget_per_cpu)
{
	for (unsigned cpu = 0; cpu < set->n_cpus; cpu++) {
		int r = chunk_ring_new(budget_per_cpu, &set->cpus[cpu].ring);

		if (r < 0) {
			stream_set_rings_free(set);
			return r;
		}
	}
	return 0;
}

/**
 * stream_set_rings_free() - free every CPU's ring; idempotent.
 * @set: set
 */
void stream_set_rings_free(struct stream_set *set)
{
	for (unsigned cpu = 0; set->cpus && cpu < set->n_cpus; cpu++)
		set->cpus[cpu].ring = chunk_ring_free(set->cpus[cpu].ring);
}
