// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What a flight recorder says about itself: its part of a session's status
 * record (backend, history held and from when in UTC, snapshots and the
 * last one, the newest recovered file, triggers), the note on its backend
 * and its counters. Reads the flight's state (flight-internal.h), never
 * changes it.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "daemon/capture/chunk-ring.h"
#include "daemon/flight/flight.h"
#include "daemon/flight/flight-internal.h"
#include "daemon/kernel/instance.h"
#include "daemon/output/publish.h"
#include "daemon/output/session-config.h"
#include "daemon/output/stream-set.h"
#include "daemon/flight/trigger.h"
#include "ftraced/macro.h"
#include "lib/ctl/ctl-proto.h"
#include "lib/time-util.h"
#include "lib/wall-clock.h"

/*
 * Raw bytes a memory-backend history holds outside its ring: taken by the
 * workers and not yet in a chunk, or still in the kernel's ring. A snapshot
 * flushes both into the file.
 */
static uint64_t not_yet_in_ring(struct flight *f)
{
	uint64_t sum = 0;

	if (flight_phase(f) != MODE_RUNNING)
		return 0;
	for (unsigned cpu = 0; cpu < f->host.cpus->n_cpus; cpu++) {
		struct cpu_stream *cs = &f->host.cpus->cpus[cpu];
		struct capture_counters c = {};
		struct chunk_ring_stats st = {};
		struct cpu_counters k = {};

		if (cs->stream)
			capture_stream_counters(cs->stream, &c);
		if (cs->ring)
			chunk_ring_stats(cs->ring, &st);
		if (c.bytes_raw > st.raw_bytes + st.evicted_raw_bytes)
			sum += c.bytes_raw - st.raw_bytes - st.evicted_raw_bytes;
		if (f->host.instance && instance_read_cpu_stats(f->host.instance, cpu, &k, NULL) >= 0)
			sum += k.bytes;
	}
	return sum;
}

/**
 * flight_describe() - the flight recorder's part of a session record.
 * @f: flight state
 * @start_usec: when the session started (monotonic)
 * @b: reply being built
 *
 * The history reaches back to the latest time from which every CPU that
 * lost older data is complete, or to the start when none did; clocks are in
 * ns; where the session has a wall-clock anchor, that time is said in UTC
 * too (from the start: the realtime clock's). Its raw bytes count what is
 * still on the way to the ring too.
 */
void flight_describe(struct flight *f, uint64_t start_usec, struct ctl_builder *b)
{
	uint64_t bytes = 0, raw = 0, evicted = 0, newest = 0, complete = 0;
	char line[FTRACED_MESSAGE_MAX], dir[PATH_MAX], from[WALL_TEXT_MAX];

	ctl_put_u32(b, FTRACED_ATTR_FLIGHT_BACKEND, f->host.config->backend);
	if (!flight_kernel_backend(f)) {
		ctl_put_u64(b, FTRACED_ATTR_FLIGHT_SIZE, f->host.config->flight_size);
		for (unsigned cpu = 0; cpu < f->host.cpus->n_cpus; cpu++) {
			struct chunk_ring_stats st;

			if (!f->host.cpus->cpus[cpu].ring)
				continue;
			chunk_ring_stats(f->host.cpus->cpus[cpu].ring, &st);
			bytes += st.bytes;
			raw += st.raw_bytes;
			evicted += st.evicted_raw_bytes;
			if (st.chunks == 0)
				continue;
			newest = MAX(newest, st.last_ts);
			if (st.evicted_chunks > 0)
				complete = MAX(complete, st.first_ts);
		}
		raw += not_yet_in_ring(f);
		ctl_put_u64(b, FTRACED_ATTR_HISTORY_BYTES, bytes);
		ctl_put_u64(b, FTRACED_ATTR_HISTORY_RAW_BYTES, raw);
		ctl_put_u64(b, FTRACED_ATTR_EVICTED_RAW_BYTES, evicted);
		/*
		 * Nothing evicted: everything since the start is held, in the ring,
		 * a worker's batch or the kernel's ring (a slow session's first
		 * chunk may take minutes to fill). Else, what every CPU has whole.
		 */
		if (complete) {
			ctl_put_u64(b, FTRACED_ATTR_HISTORY_MS, newest > complete ?
				    (newest - complete) / 1000000 : 0);
			if (f->has_date) {
				wall_format(f->date_us, complete, from, sizeof(from));
				ctl_put_string(b, FTRACED_ATTR_HISTORY_FROM, from);
			}
		} else if (flight_phase(f) == MODE_RUNNING) {
			uint64_t age = monotonic_usec() - start_usec;

			ctl_put_u64(b, FTRACED_ATTR_HISTORY_MS, age / 1000);
			wall_format((long long)f->start_wall_usec, 0, from, sizeof(from));
			ctl_put_string(b, FTRACED_ATTR_HISTORY_FROM, from);
		}
	}
	ctl_put_u32(b, FTRACED_ATTR_SNAPSHOTS, f->n_snapshots);
	if (f->last_snapshot_us) {
		ctl_put_u64(b, FTRACED_ATTR_LAST_SNAPSHOT_US, f->last_snapshot_us);
		/* None for a client's own file: a string attribute is never empty. */
		if (f->last_snapshot[0])
			ctl_put_string(b, FTRACED_ATTR_LAST_SNAPSHOT, f->last_snapshot);
	}
	ctl_put_u32(b, FTRACED_ATTR_SEGMENTS_KEPT, f->host.publisher->usage.n_files);
	ctl_put_u64(b, FTRACED_ATTR_DISK_BYTES, f->host.publisher->usage.bytes);
	if (f->snap_dir_fd >= 0 && publish_path(f->snap_dir_fd, "", dir, sizeof(dir)) >= 0)
		ctl_put_string(b, FTRACED_ATTR_DIRECTORY, dir);
	if (f->recovered[0])
		ctl_put_string(b, FTRACED_ATTR_RECOVERED, f->recovered);
	for (unsigned k = 0; k < f->n_triggers; k++) {
		trigger_describe(f->triggers[k].trigger, line, sizeof(line));
		ctl_put_string(b, FTRACED_ATTR_TRIGGER_STATUS, line);
	}
}

/**
 * flight_note() - what the user should know about the backend (session-status.c says it).
 * @f: flight state
 *
 * Return: the note, "" if none.
 */
const char *flight_note(const struct flight *f)
{
	return f->note;
}

/* A flight recorder's part of the session's counters: its snapshots and triggers. */
void flight_counters(const struct flight *f, struct ftraced_session_counters *c)
{

	c->files_failed = f->n_failed;
	for (unsigned k = 0; k < f->n_triggers; k++)
		trigger_add_counts(f->triggers[k].trigger, &c->triggers_fired,
				   &c->triggers_suppressed);
}
