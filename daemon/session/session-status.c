// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A session's status record, as `ftracectl status` and `list` show it:
 * its configuration, where it is in its lifecycle, and per CPU what the
 * workers stored and what the kernel counted (read, overrun, dropped) since
 * capture started and since the open segment began. The flight recorder
 * adds its own part (flight.c). Reads the session; changes nothing.
 * Main thread only.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>

#include "daemon/capture/chunk-ring.h"
#include "daemon/flight/flight.h"
#include "daemon/session/session-internal.h"
#include "lib/ctl/ctl-proto.h"
#include "lib/time-util.h"

static uint64_t delta(uint64_t now, uint64_t then)
{
	return now >= then ? now - then : 0;
}

/* A continuous session's segment, size and budget. */
static void describe_continuous(struct session *s, struct ctl_builder *b)
{
	const struct session_config *c = &s->config;
	char dir[PATH_MAX];

	if (s->current)
		ctl_put_u32(b, FTRACED_ATTR_SEGMENT_SEQ, segment_seq(s->current));
	ctl_put_u32(b, FTRACED_ATTR_SEGMENTS_KEPT, s->publisher.usage.n_files);
	ctl_put_u64(b, FTRACED_ATTR_DISK_BYTES, s->publisher.usage.bytes);
	/* Where its segments are: extract finds them here, whatever the daemon's --state-dir. */
	if (s->dir_fd >= 0 && publish_path(s->dir_fd, "", dir, sizeof(dir)) >= 0)
		ctl_put_string(b, FTRACED_ATTR_DIRECTORY, dir);
	if (c->segment_size)
		ctl_put_u64(b, FTRACED_ATTR_SEGMENT_SIZE, c->segment_size);
	if (c->segment_time_ms)
		ctl_put_u64(b, FTRACED_ATTR_SEGMENT_TIME_MS, c->segment_time_ms);
	if (c->retention.max_total)
		ctl_put_u64(b, FTRACED_ATTR_MAX_TOTAL, c->retention.max_total);
	if (c->retention.max_files)
		ctl_put_u32(b, FTRACED_ATTR_MAX_FILES, c->retention.max_files);
	if (c->retention.max_age_usec)
		ctl_put_u64(b, FTRACED_ATTR_MAX_AGE_MS, c->retention.max_age_usec / 1000);
	if (c->retention.keep_free)
		ctl_put_u64(b, FTRACED_ATTR_KEEP_FREE, c->retention.keep_free);
	if (c->retention.keep_free_percent)
		ctl_put_u32(b, FTRACED_ATTR_KEEP_FREE_PERCENT, c->retention.keep_free_percent);
}

/* One CPU's counters: since capture started, and since the open segment began. */
static void describe_cpu(struct session *s, unsigned cpu, struct ctl_builder *b)
{
	bool running = s->state == SESSION_RUNNING;
	struct cpu_stream *cs = &s->cpus.cpus[cpu];
	struct ftraced_cpu_stats total = { .cpu = cpu }, seg;
	struct capture_counters c = cs->final;
	struct cpu_counters now = cs->cut;
	const struct cpu_counters *seg_start = s->current && running ?
		segment_start_counters(s->current, cpu) : NULL;

	if (cs->stream)
		capture_stream_counters(cs->stream, &c);
	if (running && s->instance)
		instance_read_cpu_stats(s->instance, cpu, &now, NULL);
	if (s->state != SESSION_CREATED && s->state != SESSION_ALLOCATING) {
		total = (struct ftraced_cpu_stats){
			.cpu = cpu,
			.bytes_raw = c.bytes_raw,
			.bytes_stored = c.bytes_stored,
			.chunks = c.chunks,
			.entries = now.entries,
			.overrun = delta(now.overrun, cs->start.overrun),
			.dropped = delta(now.dropped, cs->start.dropped),
			.read = delta(now.read, cs->start.read),
		};
	}
	ctl_put_cpu_stats(b, FTRACED_ATTR_CPU, &total);
	if (s->config.mode != FTRACED_MODE_CONTINUOUS || !seg_start)
		return;
	seg = (struct ftraced_cpu_stats){
		.cpu = cpu,
		.bytes_stored = c.bytes_stored - cs->base_bytes,
		.chunks = c.chunks - cs->base_chunks,
		.entries = now.entries,
		.overrun = delta(now.overrun, seg_start->overrun),
		.dropped = delta(now.dropped, seg_start->dropped),
		.read = delta(now.read, seg_start->read),
	};
	ctl_put_cpu_stats(b, FTRACED_ATTR_CPU_SEGMENT, &seg);
}

/*
 * record -m: what its rings hold and have dropped (the flight recorder's
 * attributes); once they are collected at the stop, what the file keeps.
 */
static void describe_keep(const struct session *s, struct ctl_builder *b)
{
	uint64_t raw = s->kept_raw, bytes = s->kept_bytes, evicted = s->evicted_raw;

	if (!s->config.keep_size)
		return;
	for (unsigned cpu = 0; cpu < s->cpus.n_cpus; cpu++) {
		struct chunk_ring_stats st;

		if (!s->cpus.cpus[cpu].ring)
			continue;
		chunk_ring_stats(s->cpus.cpus[cpu].ring, &st);
		raw += st.raw_bytes;
		bytes += st.bytes;
		evicted += st.evicted_raw_bytes;
	}
	ctl_put_u64(b, FTRACED_ATTR_KEEP_KB, s->config.keep_size / 1024);
	ctl_put_u64(b, FTRACED_ATTR_HISTORY_RAW_BYTES, raw);
	ctl_put_u64(b, FTRACED_ATTR_HISTORY_BYTES, bytes);
	ctl_put_u64(b, FTRACED_ATTR_EVICTED_RAW_BYTES, evicted);
}

/* What the session did with files and triggers since it was created. */
static void describe_counters(const struct session *s, struct ctl_builder *b)
{
	struct ftraced_session_counters c = {
		.files_written = s->publisher.files_written,
		.files_deleted = s->publisher.files_deleted,
		.bytes_deleted = s->publisher.bytes_deleted,
		.files_failed = s->publisher.files_failed,
		.retention_failures = s->publisher.retention_failures,
	};

	if (s->flight)
		flight_counters(s->flight, &c);
	ctl_put_session_counters(b, &c);
}

/**
 * session_describe() - append one session record to a reply.
 * @s: session
 * @b: reply being built
 *
 * Kernel counters are deltas since capture started (ATTR_CPU) and since
 * the open segment began (ATTR_CPU_SEGMENT, continuous sessions).
 */
void session_describe(struct session *s, struct ctl_builder *b)
{
	uint64_t end = s->state == SESSION_RUNNING ? monotonic_usec() : s->stop_usec;
	uint64_t discarded = 0;

	ctl_put(b, FTRACED_ATTR_SESSION_BEGIN, NULL, 0);
	ctl_put_string(b, FTRACED_ATTR_SESSION, s->name);
	ctl_put_string(b, FTRACED_ATTR_STATE, session_state_to_string(s->state));
	ctl_put_u32(b, FTRACED_ATTR_MODE, s->config.mode);
	ctl_put_u32(b, FTRACED_ATTR_OWNER_UID, (uint32_t)s->owner);
	ctl_put_u32(b, FTRACED_ATTR_COMPRESSION,
		    s->config.zstd ? FTRACED_COMPRESSION_ZSTD : FTRACED_COMPRESSION_NONE);
	ctl_put_u32(b, FTRACED_ATTR_SUBBUF_SIZE, s->imeta.subbuf_size);
	ctl_put_u32(b, FTRACED_ATTR_BUFFER_KB, s->config.buffer_kb);
	if (s->config.rt_priority)
		ctl_put_u32(b, FTRACED_ATTR_RT_PRIORITY, s->config.rt_priority);
	if (s->instance)
		ctl_put_string(b, FTRACED_ATTR_INSTANCE, instance_name(s->instance));
	/* Inline if short, else in the reply's memfd: a session may name every event. */
	for (unsigned k = 0; k < s->config.n_events; k++)
		ctl_put_event(b, FTRACED_ATTR_EVENT, s->config.events[k]);
	for (unsigned k = 0; s->skipped && k < s->config.n_events; k++)
		if (s->skipped[k])
			ctl_put_event(b, FTRACED_ATTR_SKIPPED_EVENT, s->config.events[k]);
	ctl_put_events_end(b);
	ctl_put_u64(b, FTRACED_ATTR_ELAPSED_MS, s->start_usec ? (end - s->start_usec) / 1000 : 0);
	/* The start in wall-clock time, for people: now less how long ago it was. */
	if (s->start_usec)
		ctl_put_u64(b, FTRACED_ATTR_STARTED_US,
			    realtime_usec() - (monotonic_usec() - s->start_usec));
	if (s->config.mode == FTRACED_MODE_RECORD && s->state == SESSION_DONE)
		ctl_put_u64(b, FTRACED_ATTR_FILE_BYTES, s->file_bytes);
	if (s->config.mode == FTRACED_MODE_CONTINUOUS)
		describe_continuous(s, b);
	for (unsigned cpu = 0; cpu < s->cpus.n_cpus; cpu++)
		describe_cpu(s, cpu, b);
	if (s->flight)
		flight_describe(s->flight, s->start_usec, b);
	describe_keep(s, b);
	describe_counters(s, b);
	for (unsigned cpu = 0; cpu < s->cpus.n_cpus; cpu++) {
		const struct cpu_stream *cs = &s->cpus.cpus[cpu];
		struct capture_counters c = {};

		if (cs->stream)
			capture_stream_counters(cs->stream, &c);
		discarded += cs->stream ? c.discarded : cs->discarded;
	}
	if (discarded > 0)
		ctl_put_u64(b, FTRACED_ATTR_EVENTS_DISCARDED, discarded);
	{
		char retention[512], warning[sizeof(s->warning) + sizeof(retention) + 2];

		publisher_warning(&s->publisher, retention, sizeof(retention));
		snprintf(warning, sizeof(warning), "%s%s%s", s->warning,
			 s->warning[0] && retention[0] ? "; " : "", retention);
		if (warning[0])
			ctl_put_string(b, FTRACED_ATTR_WARNING, warning);
	}
	{
		const char *f = s->flight ? flight_note(s->flight) : "";
		char note[sizeof(s->note) + 512];

		snprintf(note, sizeof(note), "%s%s%s", f, f[0] && s->note[0] ? "; " : "", s->note);
		if (note[0])
			ctl_put_string(b, FTRACED_ATTR_NOTE, note);
	}
	if (s->gap[0])
		ctl_put_string(b, FTRACED_ATTR_GAP, s->gap);
	if (s->error < 0) {
		ctl_put_u32(b, FTRACED_ATTR_ERRNO, (uint32_t)-s->error);
		ctl_put_string(b, FTRACED_ATTR_MESSAGE, s->error_message);
	} else if (s->cut_short < 0) {
		char message[sizeof(s->cut_message) + 256];
		bool full = s->cut_short == -ENOSPC || s->cut_short == -EDQUOT;

		/*
		 * A full file system stops a continuous session rather than have
		 * it lose events in a loop: whoever frees the room starts it
		 * again, and its next file says the gap.
		 */
		snprintf(message, sizeof(message), "%s%s", s->cut_message,
			 full && s->config.mode == FTRACED_MODE_CONTINUOUS ?
			 "; the session stopped: start it again (ftracectl start) once its file "
			 "system has room (what it could not store is counted as lost; a spool it "
			 "kept becomes a file when ftraced starts)" : "");
		ctl_put_u32(b, FTRACED_ATTR_ERRNO, (uint32_t)-s->cut_short);
		ctl_put_string(b, FTRACED_ATTR_MESSAGE, message);
	}
}

uint32_t session_id(const struct session *s)
{
	return s->id;
}

/* Bytes its rings and history take (what memory-limit counts). */
uint64_t session_memory(const struct session *s)
{
	return session_config_memory(&s->config, s->cpus.n_cpus);
}

const char *session_name(const struct session *s)
{
	return s->name;
}

/**
 * session_instance_name() - the session's tracefs instance.
 * @s: session
 *
 * Return: its name, or NULL once the session released it (a record, at assembly).
 */
const char *session_instance_name(const struct session *s)
{
	return s->instance ? instance_name(s->instance) : NULL;
}

uid_t session_owner(const struct session *s)
{
	return s->owner;
}

enum ftraced_mode session_mode(const struct session *s)
{
	return s->config.mode;
}

enum session_state session_state(const struct session *s)
{
	return s->state;
}

/**
 * session_error() - why the session failed, or was cut short.
 * @s: session
 * @ret_message: the message, or NULL
 *
 * Return: 0, or the first -errno that failed the session (a record whose
 * capture was merely cut short still has its file, and returns 0).
 */
int session_error(const struct session *s, const char **ret_message)
{
	if (ret_message)
		*ret_message = s->error_message;
	return s->error;
}
