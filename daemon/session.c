// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One capture session and its state machine.
 *
 *   record:      CREATED -start-> RUNNING -stop-> STOPPING -drained->
 *                ASSEMBLING -file written-> DONE (or FAILED)
 *   continuous:  CREATED -start-> RUNNING -stop-> STOPPING -drained->
 *                STOPPED -start-> RUNNING ...; destroy from any state ends
 *                in DONE once every segment is on disk
 *   flight:      as continuous; snapshots are taken while RUNNING (recording
 *                goes on) or STOPPED (the history is kept until destroy)
 *
 * A session owns its tracefs instance, one capture stream per CPU (lent to
 * the capture workers while running), its segments (see segment.c): the
 * open one receiving data and the closed ones being assembled, and an
 * eventfd on which workers and assemblers report back. A record is one
 * segment written into the client's fd. A continuous session rotates to a
 * new segment by size or time without stopping capture: the workers cut
 * each CPU's stream at a chunk boundary, so every event lands in exactly
 * one segment. Closed segments are written to a hidden temporary file,
 * fsynced, renamed into place, the directory fsynced, and retention runs.
 *
 * A flight recorder keeps recent history instead of writing it: with the
 * memory backend the workers push compressed chunks into a ring per CPU
 * (chunk-ring.c) that evicts the oldest; a snapshot asks every worker to
 * flush, then takes references to what the rings hold and writes them as
 * a segment of its own while capture goes on. With the kernel backend the
 * instance's ring runs in overwrite mode and nothing reads it; a snapshot
 * pauses tracing, drains the ring through temporary streams and rings,
 * and resumes (this kernel has no snapshot buffer to swap). Triggers
 * (trigger.c) ask for snapshots by themselves.
 *
 * Requests are checked for meaning here (events exist, sizes within
 * bounds.h, clock and filter accepted by the kernel); nothing is started
 * when a request is invalid, and the instance is destroyed on every
 * failure path by ownership.
 *
 * Main thread only; the only other threads are the workers and the
 * segments' assemblers, which report through the eventfd.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon/bounds.h"
#include "daemon/capture.h"
#include "daemon/chunk-ring.h"
#include "daemon/event-list.h"
#include "daemon/instance.h"
#include "daemon/log.h"
#include "daemon/metadata.h"
#include "daemon/retention.h"
#include "daemon/runner.h"
#include "daemon/segment.h"
#include "daemon/session.h"
#include "daemon/trigger.h"
#include "lib/ctl-proto.h"

#define SESSIONS_DIR "sessions"
#define SNAPSHOTS_DIR "snapshots"
/* sd-event's default accuracy (0) lets a timer fire up to 250 ms late. */
#define TIMER_ACCURACY_USEC 1000

/* "<name>-YYYYmmddTHHMMSSZ-NNNNNN.dat" and ".<that>.tmp" */
#define SEGMENT_NAME_MAX (FTRACED_NAME_MAX + 48)

/* A closed segment or a snapshot on its way to disk (or to the client). */
struct closing {
	struct segment *segment;
	int dir_fd; /* borrowed: where tmp_name and final_name are; -EBADF: the client's fd */
	char tmp_name[SEGMENT_NAME_MAX + 8];
	char final_name[SEGMENT_NAME_MAX];
	bool snapshot;
	void *waiter;                 /* a client waiting for this snapshot, or NULL */
	struct trigger_slot *trigger; /* the trigger that asked for it, or NULL */
};

/* A snapshot asked for, waiting for the workers' flush or the kernel drain. */
struct snapshot_job {
	void *waiter;
	int out_fd;
	bool trim;
	uint32_t flush;               /* served once this flush (or drain) is complete */
	struct trigger_slot *trigger;
};

/* A trigger of a flight session, and its post timer. */
struct trigger_slot {
	struct session *session;
	struct trigger *trigger;
	sd_event_source *post; /* armed between firing and its snapshot */
};

struct session {
	struct session_env env;
	uint32_t id;
	char name[FTRACED_NAME_MAX + 1];
	uid_t owner;
	enum ftraced_mode mode;
	enum session_state state;

	/* configuration, validated */
	unsigned n_specs;
	char (*specs)[FTRACED_EVENT_SPEC_MAX + 1];
	struct event_list events;
	bool zstd;
	int level;
	uint64_t duration_ms;
	uint64_t segment_size;
	uint64_t segment_time_ms;
	struct retention_limits retention;
	char *on_segment;

	struct instance *instance;
	struct instance_meta imeta;
	unsigned n_cpus;
	struct capture_stream **streams;
	struct capture_counters *final; /* each stream's totals when it was released */
	struct cpu_counters *start;   /* kernel counters when capture started */

	struct segment_env segment_env;
	struct segment *current;      /* receiving data */
	struct segment *next;         /* during a rotation: what the workers switch to */
	uint32_t cut_generation;      /* the rotation being waited for, 0 = none */
	struct cpu_counters *cut_stats;
	char **cut_text;
	uint64_t *base_bytes;         /* stream totals when the current segment began */
	uint64_t *base_chunks;
	uint32_t next_seq;
	struct closing *closing;
	size_t n_closing;

	int out_fd;                   /* record: the client's file, until assembly takes it */
	int dir_fd;                   /* continuous: STATE_DIR/sessions/<name> */
	struct retention_usage usage;
	uint64_t file_bytes;

	int event_fd;
	sd_event_source *event_source;
	sd_event_source *timer_source;
	sd_event_source *segment_timer;

	uint64_t start_usec;
	uint64_t stop_usec;
	bool destroy_requested;
	bool stopped_reported;
	int error;                    /* fatal: no file */
	char error_message[256];
	int cut_short;                /* capture stopped early; files hold what came before */
	char cut_message[256];

	/* flight recorder */
	enum ftraced_flight_backend backend;
	uint64_t flight_size;
	struct chunk_ring **rings;    /* memory: the history; kernel: during a drain */
	int snap_dir_fd;              /* STATE_DIR/sessions/<name>/snapshots */
	struct snapshot_job *jobs;
	size_t n_jobs;
	uint32_t flush_requested;     /* flushes (memory) or drains (kernel) begun */
	uint32_t flush_done;          /* kernel: drains complete */
	bool draining;                /* kernel: tracing paused, streams draining the ring */
	bool drain_again;             /* kernel: jobs came in during a drain */
	uint64_t drain_start_usec;
	uint64_t *lost_base;          /* kernel: overrun counters after the last drain */
	struct trigger_slot *triggers;
	unsigned n_triggers;
	uint32_t n_snapshots;         /* written */
	uint32_t next_snapshot_seq;
	char note[256];               /* what the user should know about the backend */
};

static const char *const state_names[_SESSION_STATE_MAX] = {
	[SESSION_CREATED] = "created",
	[SESSION_RUNNING] = "running",
	[SESSION_STOPPING] = "stopping",
	[SESSION_ASSEMBLING] = "assembling",
	[SESSION_STOPPED] = "stopped",
	[SESSION_DONE] = "done",
	[SESSION_FAILED] = "failed",
};

const char *session_state_to_string(enum session_state st)
{
	return st < _SESSION_STATE_MAX ? state_names[st] : "unknown";
}

static int flight_start(struct session *s);
static void flight_stop_triggers(struct session *s);
static void snapshot_failed(struct session *s, struct snapshot_job *job, int error);

/* Has on_event_fd() look at the session from the event loop. */
static void wake(struct session *s)
{
	uint64_t one = 1;

	(void)!write(s->event_fd, &one, sizeof(one));
}

static uint64_t now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void set_error(struct session *s, int error, const char *fmt, ...) _printf_(3, 4);
static void set_error(struct session *s, int error, const char *fmt, ...)
{
	va_list ap;

	if (s->error != 0)
		return;
	s->error = error;
	va_start(ap, fmt);
	vsnprintf(s->error_message, sizeof(s->error_message), fmt, ap);
	va_end(ap);
}

static void free_streams(struct session *s)
{
	for (unsigned cpu = 0; s->streams && cpu < s->n_cpus; cpu++) {
		struct capture_counters c = {};

		if (!s->streams[cpu])
			continue;
		capture_stream_counters(s->streams[cpu], &c);
		/* A stream still inside a worker cannot be freed; the pool is going away then. */
		if (s->state == SESSION_CREATED || s->state == SESSION_STOPPED || c.finished)
			s->streams[cpu] = capture_stream_free(s->streams[cpu]);
	}
}

static void free_rings(struct session *s)
{
	for (unsigned cpu = 0; s->rings && cpu < s->n_cpus; cpu++)
		chunk_ring_free(s->rings[cpu]);
	free(s->rings);
	s->rings = NULL;
}

/**
 * session_free() - release everything; the instance and spools are removed.
 * @s: session or NULL
 *
 * Waits for assembler threads if any run (the manager only frees sessions
 * that are done, so this does not block in practice).
 *
 * Return: NULL.
 */
struct session *session_free(struct session *s)
{
	if (!s)
		return NULL;
	sd_event_source_disable_unref(s->timer_source);
	sd_event_source_disable_unref(s->segment_timer);
	sd_event_source_disable_unref(s->event_source);
	free_streams(s);
	free(s->streams);
	for (unsigned k = 0; s->triggers && k < s->n_triggers; k++) {
		sd_event_source_disable_unref(s->triggers[k].post);
		trigger_free(s->triggers[k].trigger);
	}
	free(s->triggers);
	for (size_t i = 0; i < s->n_jobs; i++)
		safe_close(s->jobs[i].out_fd);
	free(s->jobs);
	free_rings(s);
	free(s->lost_base);
	safe_close(s->snap_dir_fd);
	for (size_t i = 0; i < s->n_closing; i++)
		segment_free(s->closing[i].segment);
	free(s->closing);
	segment_free(s->current);
	segment_free(s->next);
	s->instance = instance_free(s->instance);
	for (unsigned cpu = 0; s->cut_text && cpu < s->n_cpus; cpu++)
		free(s->cut_text[cpu]);
	free(s->cut_text);
	free(s->cut_stats);
	free(s->base_bytes);
	free(s->base_chunks);
	free(s->start);
	free(s->final);
	instance_meta_done(&s->imeta);
	event_list_done(&s->events);
	free(s->specs);
	free(s->on_segment);
	safe_close(s->out_fd);
	safe_close(s->dir_fd);
	safe_close(s->event_fd);
	free(s);
	return NULL;
}

static uint64_t mem_available_kb(void)
{
	_cleanup_free_ char *line = NULL;
	size_t n = 0;
	uint64_t kb = 0;
	FILE *f;

	f = fopen("/proc/meminfo", "re");
	if (!f)
		return 0;
	while (getline(&line, &n, f) > 0)
		if (sscanf(line, "MemAvailable: %" SCNu64 " kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* Semantic checks that need no kernel state. */
static int check_request(const struct ctl_request *req, unsigned n_cpus, char *error,
			 size_t n_error)
{
	uint32_t buffer_kb = req->buffer_kb ?: BUFFER_KB_DEFAULT;
	uint64_t avail = mem_available_kb();

	if (buffer_kb < BUFFER_KB_MIN || buffer_kb > BUFFER_KB_MAX) {
		snprintf(error, n_error, "buffer size %u KiB per CPU is outside %u..%u KiB",
			 buffer_kb, BUFFER_KB_MIN, BUFFER_KB_MAX);
		return -EINVAL;
	}
	if (avail > 0 && (uint64_t)buffer_kb * n_cpus > avail / 100 * BUFFER_MEM_PERCENT_MAX) {
		snprintf(error, n_error,
			 "buffer size %u KiB x %u CPUs exceeds %u%% of available memory (%" PRIu64
			 " KiB)", buffer_kb, n_cpus, BUFFER_MEM_PERCENT_MAX, avail);
		return -ENOMEM;
	}
	if (req->subbuf_kb != 0 &&
	    (req->subbuf_kb < SUBBUF_KB_MIN || req->subbuf_kb > SUBBUF_KB_MAX ||
	     (req->subbuf_kb & (req->subbuf_kb - 1)) != 0)) {
		snprintf(error, n_error,
			 "sub-buffer size %u KiB is not a power of two between %u and %u KiB",
			 req->subbuf_kb, SUBBUF_KB_MIN, SUBBUF_KB_MAX);
		return -EINVAL;
	}
	if (req->subbuf_kb > buffer_kb) {
		snprintf(error, n_error, "sub-buffer size %u KiB is larger than the buffer (%u KiB)",
			 req->subbuf_kb, buffer_kb);
		return -EINVAL;
	}
	if (ctl_request_has(req, FTRACED_ATTR_LEVEL) &&
	    (req->level < ZSTD_LEVEL_MIN || req->level > ZSTD_LEVEL_MAX)) {
		snprintf(error, n_error, "zstd level %d is outside %d..%d", req->level,
			 ZSTD_LEVEL_MIN, ZSTD_LEVEL_MAX);
		return -EINVAL;
	}
	if (ctl_request_has(req, FTRACED_ATTR_DURATION_MS) &&
	    (req->duration_ms == 0 || req->duration_ms > DURATION_MS_MAX)) {
		snprintf(error, n_error, "duration must be between 1 ms and 30 days");
		return -EINVAL;
	}
	if (ctl_request_has(req, FTRACED_ATTR_SEGMENT_SIZE) &&
	    (req->segment_size < SEGMENT_SIZE_MIN || req->segment_size > SEGMENT_SIZE_MAX)) {
		snprintf(error, n_error, "segment size must be between %u KiB and %llu GiB",
			 SEGMENT_SIZE_MIN / 1024, (unsigned long long)(SEGMENT_SIZE_MAX >> 30));
		return -EINVAL;
	}
	if (ctl_request_has(req, FTRACED_ATTR_SEGMENT_TIME_MS) &&
	    (req->segment_time_ms < SEGMENT_TIME_MS_MIN || req->segment_time_ms > DURATION_MS_MAX)) {
		snprintf(error, n_error, "segment time must be between %u ms and 30 days",
			 SEGMENT_TIME_MS_MIN);
		return -EINVAL;
	}
	if (ctl_request_has(req, FTRACED_ATTR_MAX_FILES) && req->max_files == 0) {
		snprintf(error, n_error, "--max-files must be at least 1");
		return -EINVAL;
	}
	if ((ctl_request_has(req, FTRACED_ATTR_MAX_TOTAL) && req->max_total == 0) ||
	    (ctl_request_has(req, FTRACED_ATTR_MAX_AGE_MS) && req->max_age_ms == 0)) {
		snprintf(error, n_error, "--max-total and --max-age must be greater than 0");
		return -EINVAL;
	}
	if (ctl_request_has(req, FTRACED_ATTR_KEEP_FREE_PERCENT) &&
	    (req->keep_free_percent == 0 || req->keep_free_percent > 99)) {
		snprintf(error, n_error, "--keep-free percentage must be between 1 and 99");
		return -EINVAL;
	}
	return 0;
}

/* Sets up the kernel side: instance, buffer, clock, events, filter. */
static int configure_instance(struct session *s, const struct ctl_request *req, char *error,
			      size_t n_error)
{
	uint32_t buffer_kb = req->buffer_kb ?: BUFFER_KB_DEFAULT;
	int r;

	r = instance_new(s->env.instance_tag, s->id, &s->instance);
	if (r < 0) {
		snprintf(error, n_error, "cannot create tracefs instance: %s", strerror(-r));
		return r;
	}
	r = instance_set_buffer(s->instance, buffer_kb, req->subbuf_kb);
	if (r == -EOPNOTSUPP) {
		snprintf(error, n_error, "this kernel cannot change the sub-buffer size");
		return r;
	}
	if (r < 0) {
		snprintf(error, n_error, "cannot set buffer size %u KiB (sub-buffer %u KiB): %s",
			 buffer_kb, req->subbuf_kb, strerror(-r));
		return r;
	}
	if (ctl_request_has(req, FTRACED_ATTR_CLOCK)) {
		r = instance_set_clock(s->instance, req->clock);
		if (r < 0) {
			_cleanup_free_ char *list = NULL;

			instance_read(s->instance, "trace_clock", &list, NULL);
			if (list)
				list[strcspn(list, "\n")] = '\0';
			snprintf(error, n_error, "unknown clock '%s' (available: %s)", req->clock,
				 list ?: "?");
			return r;
		}
	}
	for (size_t k = 0; k < s->events.n; k++) {
		const struct event_id *e = &s->events.events[k];
		_cleanup_free_ char *kernel_error = NULL;
		const char *filter = ctl_request_has(req, FTRACED_ATTR_FILTER) ? req->filter : NULL;

		r = instance_enable_event(s->instance, e, filter, &kernel_error);
		if (r == -EOPNOTSUPP) {
			snprintf(error, n_error, "%s:%s cannot be filtered (ftrace:* events have no "
				 "filter)", e->system, e->event);
			return r;
		}
		if (r < 0 && filter) {
			if (kernel_error) {
				/* error_log lines start with a timestamp: keep what follows. */
				char *msg = strchr(kernel_error, ']');

				msg = msg ? msg + 1 : kernel_error;
				msg += strspn(msg, " ");
				snprintf(error, n_error, "filter rejected by the kernel for %s:%s: %s",
					 e->system, e->event, msg);
			} else {
				snprintf(error, n_error, "filter rejected by the kernel for %s:%s: %s",
					 e->system, e->event, strerror(-r));
			}
			return r;
		}
		if (r < 0) {
			snprintf(error, n_error, "cannot enable %s:%s: %s", e->system, e->event,
				 strerror(-r));
			return r;
		}
	}
	r = instance_meta_read(&s->imeta, s->instance);
	if (r < 0) {
		snprintf(error, n_error, "cannot read the instance's header_page: %s", strerror(-r));
		return r;
	}
	return 0;
}


static int on_event_fd(sd_event_source *source, int fd, uint32_t revents, void *userdata);

/* Opens the session's directory, STATE_DIR/sessions/<name>, creating it. */
static int open_session_dir(struct session *s)
{
	int sessions_fd, r;

	if (mkdirat(s->env.state_dir_fd, SESSIONS_DIR, 0700) < 0 && errno != EEXIST)
		return negative_errno();
	sessions_fd = openat(s->env.state_dir_fd, SESSIONS_DIR,
			     O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (sessions_fd < 0)
		return negative_errno();
	/* The name is [A-Za-z0-9_-]{1,64} (checked by the protocol parser): no path tricks. */
	if (mkdirat(sessions_fd, s->name, 0750) < 0 && errno != EEXIST) {
		r = negative_errno();
		close(sessions_fd);
		return r;
	}
	s->dir_fd = openat(sessions_fd, s->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	r = s->dir_fd < 0 ? negative_errno() : 0;
	close(sessions_fd);
	if (r < 0 || s->mode != FTRACED_MODE_FLIGHT)
		return r;
	if (mkdirat(s->dir_fd, SNAPSHOTS_DIR, 0750) < 0 && errno != EEXIST)
		return negative_errno();
	s->snap_dir_fd = openat(s->dir_fd, SNAPSHOTS_DIR,
				O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	return s->snap_dir_fd < 0 ? negative_errno() : 0;
}

static void run_retention(struct session *s)
{
	char prefix[FTRACED_NAME_MAX + 2];
	int r;

	snprintf(prefix, sizeof(prefix), "%s-", s->name);
	r = retention_apply(s->mode == FTRACED_MODE_FLIGHT ? s->snap_dir_fd : s->dir_fd, prefix,
			    &s->retention, &s->usage);
	if (r < 0)
		log_warning_errno(r, "Session '%s': retention failed, ignoring: %m", s->name);
}

/* Reads every CPU's counters (and, if @text, their stats texts). */
static int read_stats(struct session *s, struct cpu_counters *out, char **text)
{
	for (unsigned cpu = 0; cpu < s->n_cpus; cpu++) {
		int r;

		if (text) {
			free(text[cpu]);
			text[cpu] = NULL;
		}
		r = instance_read_cpu_stats(s->instance, cpu, &out[cpu], text ? &text[cpu] : NULL);
		if (r < 0)
			return r;
	}
	return 0;
}

/* One stream per CPU, into the segment's spools, or into s->rings when @seg is NULL. */
static int create_streams(struct session *s, struct segment *seg, char *error, size_t n_error)
{
	uint64_t step = s->segment_size / s->n_cpus / SEGMENT_SIZE_CHECKS;
	int r;

	for (unsigned cpu = 0; cpu < s->n_cpus; cpu++) {
		struct capture_stream_config c = {
			.cpu = cpu,
			.spool_fd = seg ? segment_spool_fd(seg, cpu) : -EBADF,
			.ring = seg ? NULL : s->rings[cpu],
			.notify_fd = s->event_fd,
			.subbuf_size = s->imeta.subbuf_size,
			.zstd = s->zstd,
			.level = s->level,
			.notify_bytes = s->mode == FTRACED_MODE_CONTINUOUS ? MAX(step, (uint64_t)1) : 0,
		};

		c.stats_fd = -EBADF;
		r = instance_open_cpu_raw(s->instance, cpu, &c.trace_fd);
		if (r >= 0 && instance_open_cpu_stats(s->instance, cpu, &c.stats_fd) < 0)
			c.stats_fd = -EBADF; /* recovery then cannot tell; capture goes on */
		if (r >= 0)
			r = capture_stream_new(&c, &s->streams[cpu]);
		if (r < 0) {
			snprintf(error, n_error, "cannot open the ring buffer of CPU %u: %s", cpu,
				 strerror(-r));
			return r;
		}
		s->base_bytes[cpu] = 0;
		s->base_chunks[cpu] = 0;
	}
	return 0;
}

/* The flight recorder's own options, before anything is set up. */
static int check_flight(struct session *s, const struct ctl_request *req, char *error,
			size_t n_error)
{
	uint64_t avail = mem_available_kb() * 1024;

	s->backend = ctl_request_has(req, FTRACED_ATTR_FLIGHT_BACKEND) ? req->flight_backend :
		FTRACED_FLIGHT_MEMORY;
	if (ctl_request_has(req, FTRACED_ATTR_SEGMENT_SIZE) ||
	    ctl_request_has(req, FTRACED_ATTR_SEGMENT_TIME_MS)) {
		snprintf(error, n_error, "--segment-size and --segment-time are for continuous "
			 "sessions");
		return -EINVAL;
	}
	if (s->backend == FTRACED_FLIGHT_KERNEL) {
		if (ctl_request_has(req, FTRACED_ATTR_FLIGHT_SIZE)) {
			snprintf(error, n_error, "the kernel backend keeps its history in the "
				 "kernel's ring: size it with --buffer-size (per CPU), not "
				 "--flight-size");
			return -EINVAL;
		}
		return 0;
	}
	s->flight_size = ctl_request_has(req, FTRACED_ATTR_FLIGHT_SIZE) ? req->flight_size :
		FLIGHT_SIZE_DEFAULT;
	/* A ring must hold several of its largest chunks, or it keeps next to nothing. */
	if (s->flight_size / s->n_cpus <
	    4 * (uint64_t)MAX(CHUNK_TARGET_BYTES, req->subbuf_kb * 1024u) ||
	    s->flight_size < FLIGHT_SIZE_MIN) {
		snprintf(error, n_error, "--flight-size must be at least %" PRIu64 " KiB (and 4 "
			 "chunks of %u KiB per CPU)", FLIGHT_SIZE_MIN / 1024,
			 MAX(CHUNK_TARGET_BYTES, req->subbuf_kb * 1024u) / 1024);
		return -EINVAL;
	}
	if (avail > 0 && s->flight_size > avail / 100 * FLIGHT_MEM_PERCENT_MAX) {
		snprintf(error, n_error, "--flight-size %" PRIu64 " KiB exceeds %u%% of available "
			 "memory (%" PRIu64 " KiB)", s->flight_size / 1024, FLIGHT_MEM_PERCENT_MAX,
			 avail / 1024);
		return -ENOMEM;
	}
	return 0;
}

static void on_trigger_fire(struct trigger *t, uint64_t ts, void *userdata);

/* The kernel side of a flight recorder: overwrite mode, and its triggers' instances. */
static int setup_flight(struct session *s, const struct ctl_request *req, char *error,
			size_t n_error)
{
	int r;

	if (s->backend == FTRACED_FLIGHT_KERNEL) {
		r = instance_set_overwrite(s->instance, true);
		if (r < 0) {
			snprintf(error, n_error, "cannot set the ring buffer to overwrite mode: %s",
				 strerror(-r));
			return r;
		}
		/* No kernel here has the snapshot buffer (CONFIG_TRACER_SNAPSHOT) swap wired up. */
		snprintf(s->note, sizeof(s->note), "kernel backend: each snapshot pauses tracing "
			 "while the ring is drained (no snapshot buffer swap)");
	}
	s->lost_base = calloc(s->n_cpus, sizeof(*s->lost_base));
	s->triggers = calloc(MAX(req->n_triggers, 1u), sizeof(*s->triggers));
	if (!s->lost_base || !s->triggers) {
		snprintf(error, n_error, "out of memory");
		return -ENOMEM;
	}
	for (unsigned k = 0; k < req->n_triggers; k++) {
		struct trigger_slot *slot = &s->triggers[k];
		struct trigger_env env = {
			.event = s->env.event,
			.instance_tag = s->env.instance_tag,
			/* Apart from every session's own id: bit 40 up. */
			.instance_id = (UINT64_C(1) << 40) | ((uint64_t)s->id << 8) | k,
			.clock = ctl_request_has(req, FTRACED_ATTR_CLOCK) ? req->clock : NULL,
			.n_cpus = s->n_cpus,
			.fire = on_trigger_fire,
			.userdata = slot,
		};

		slot->session = s;
		r = trigger_new(&env, req->triggers[k], &slot->trigger, error, n_error);
		if (r < 0)
			return r;
		s->n_triggers++;
	}
	return 0;
}

/**
 * session_new() - validate a RECORD or CREATE request and prepare its session.
 * @env: event loop, capture pool, state directory and callbacks
 * @id: internal id (names the instance)
 * @name: the session's name (RECORD: made up by the manager)
 * @owner: uid of the requesting client
 * @req: the parsed request
 * @out_fd: RECORD: the output file, taken over (closed on failure); else -EBADF
 * @ret: the session, in state CREATED, tracing off
 * @error: receives a message for the client on failure
 * @n_error: its size
 *
 * Return: 0, or -errno with @error set; nothing is left in the kernel.
 */
int session_new(const struct session_env *env, uint32_t id, const char *name, uid_t owner,
		const struct ctl_request *req, int out_fd, struct session **ret, char *error,
		size_t n_error)
{
	_cleanup_(session_freep) struct session *s = NULL;
	int r;

	s = calloc(1, sizeof(*s));
	if (!s) {
		safe_close(out_fd);
		snprintf(error, n_error, "out of memory");
		return -ENOMEM;
	}
	s->env = *env;
	s->out_fd = out_fd;
	s->dir_fd = -EBADF;
	s->snap_dir_fd = -EBADF;
	s->event_fd = -EBADF;
	s->id = id;
	s->owner = owner;
	s->mode = req->type == FTRACED_MSG_RECORD ? FTRACED_MODE_RECORD : req->mode;
	s->n_cpus = capture_pool_cpus(env->pool);
	s->zstd = req->compression == FTRACED_COMPRESSION_ZSTD;
	s->level = ctl_request_has(req, FTRACED_ATTR_LEVEL) ? req->level : ZSTD_LEVEL_DEFAULT;
	s->duration_ms = req->duration_ms;
	s->next_seq = 1;
	snprintf(s->name, sizeof(s->name), "%s", name);

	r = check_request(req, s->n_cpus, error, n_error);
	if (r < 0)
		return r;
	if (s->mode == FTRACED_MODE_FLIGHT) {
		r = check_flight(s, req, error, n_error);
		if (r < 0)
			return r;
	} else if (req->n_triggers > 0 || ctl_request_has(req, FTRACED_ATTR_FLIGHT_SIZE) ||
		   ctl_request_has(req, FTRACED_ATTR_FLIGHT_BACKEND)) {
		snprintf(error, n_error, "flight recorder options need --mode flight");
		return -EINVAL;
	}
	if (s->mode == FTRACED_MODE_CONTINUOUS || s->mode == FTRACED_MODE_FLIGHT) {
		if (s->mode == FTRACED_MODE_CONTINUOUS)
			s->segment_size = ctl_request_has(req, FTRACED_ATTR_SEGMENT_SIZE) ?
				req->segment_size : ctl_request_has(req, FTRACED_ATTR_SEGMENT_TIME_MS) ?
				0 : SEGMENT_SIZE_DEFAULT;
		s->segment_time_ms = s->mode == FTRACED_MODE_CONTINUOUS ? req->segment_time_ms : 0;
		s->retention = (struct retention_limits){
			.max_total = req->max_total,
			.max_files = req->max_files,
			.max_age_usec = req->max_age_ms * 1000,
			.keep_free = req->keep_free,
			.keep_free_percent = req->keep_free_percent,
		};
		if (ctl_request_has(req, FTRACED_ATTR_ON_SEGMENT)) {
			char *argv[COMMAND_ARGS_MAX + 1];
			char words[FTRACED_COMMAND_MAX + 1];

			/* It runs as the daemon's user: only root may choose it. */
			if (owner != 0) {
				snprintf(error, n_error, "only root may set --on-segment");
				return -EPERM;
			}
			r = command_split(req->on_segment, words, sizeof(words), argv,
					  ELEMENTSOF(argv));
			if (r < 0 || argv[0][0] != '/') {
				snprintf(error, n_error, "--on-segment needs a program with a full "
					 "path, then its arguments (quotes allowed, no shell)");
				return -EINVAL;
			}
			s->on_segment = strdup(req->on_segment);
			if (!s->on_segment) {
				snprintf(error, n_error, "out of memory");
				return -ENOMEM;
			}
		}
	} else if (s->mode != FTRACED_MODE_RECORD) {
		snprintf(error, n_error, "this mode is not supported yet");
		return -EOPNOTSUPP;
	}

	s->specs = calloc(req->n_events, sizeof(*s->specs));
	s->streams = calloc(s->n_cpus, sizeof(*s->streams));
	s->start = calloc(s->n_cpus, sizeof(*s->start));
	s->final = calloc(s->n_cpus, sizeof(*s->final));
	s->cut_stats = calloc(s->n_cpus, sizeof(*s->cut_stats));
	s->cut_text = calloc(s->n_cpus, sizeof(*s->cut_text));
	s->base_bytes = calloc(s->n_cpus, sizeof(*s->base_bytes));
	s->base_chunks = calloc(s->n_cpus, sizeof(*s->base_chunks));
	if (!s->specs || !s->streams || !s->start || !s->final || !s->cut_stats || !s->cut_text ||
	    !s->base_bytes || !s->base_chunks) {
		snprintf(error, n_error, "out of memory");
		return -ENOMEM;
	}
	s->n_specs = req->n_events;
	memcpy(s->specs, req->events, req->n_events * sizeof(*s->specs));
	for (unsigned k = 0; k < req->n_events; k++) {
		r = event_list_expand(&s->events, NULL, req->events[k], EVENTS_PER_SESSION_MAX);
		if (r == -E2BIG) {
			snprintf(error, n_error, "'%s' makes more than %u events", req->events[k],
				 EVENTS_PER_SESSION_MAX);
			return r;
		}
		if (r == -EINVAL) {
			snprintf(error, n_error,
				 "malformed event '%s' (expected SYSTEM:EVENT, SYSTEM:* or SYSTEM)",
				 req->events[k]);
			return r;
		}
		if (r < 0) {
			snprintf(error, n_error, "unknown event '%s'", req->events[k]);
			return -ENOENT;
		}
	}

	s->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->event_fd < 0) {
		snprintf(error, n_error, "eventfd: %s", strerror(errno));
		return negative_errno();
	}
	r = sd_event_add_io(env->event, &s->event_source, s->event_fd, EPOLLIN, on_event_fd, s);
	if (r < 0) {
		snprintf(error, n_error, "event loop: %s", strerror(-r));
		return r;
	}

	r = configure_instance(s, req, error, n_error);
	if (r < 0)
		return r;
	s->segment_env = (struct segment_env){
		.state_dir_fd = env->state_dir_fd,
		.notify_fd = s->event_fd,
		.imeta = &s->imeta,
		.events = &s->events,
		.instance_name = instance_name(s->instance),
		.n_cpus = s->n_cpus,
		.zstd = s->zstd,
		.level = s->level,
	};
	if (s->mode == FTRACED_MODE_CONTINUOUS && s->segment_size > 0) {
		/*
		 * Readers wake when a CPU's buffer is half full: segments could not be
		 * cut finer than that. Wake about every SEGMENT_SIZE_CHECKS-th of a
		 * segment per CPU instead.
		 */
		uint64_t buffer_bytes = (uint64_t)(req->buffer_kb ?: BUFFER_KB_DEFAULT) * 1024;
		uint64_t wake = s->segment_size / s->n_cpus / SEGMENT_SIZE_CHECKS;
		unsigned percent = (unsigned)MIN((uint64_t)50, MAX((uint64_t)1,
							   wake * 100 / buffer_bytes));

		r = instance_set_buffer_percent(s->instance, percent);
		if (r < 0)
			log_warning_errno(r, "Session '%s': cannot set buffer_percent, segments may "
					  "grow past their size: %m", s->name);
	}
	if (s->mode == FTRACED_MODE_FLIGHT) {
		r = setup_flight(s, req, error, n_error);
		if (r < 0)
			return r;
	}
	if (s->mode == FTRACED_MODE_CONTINUOUS || s->mode == FTRACED_MODE_FLIGHT) {
		r = open_session_dir(s);
		if (r < 0) {
			snprintf(error, n_error, "cannot create the session's directory: %s",
				 strerror(-r));
			return r;
		}
		run_retention(s);
	}

	*ret = TAKE_PTR(s);
	return 0;
}

static void rotate(struct session *s);

static int on_timer(sd_event_source *source, uint64_t usec, void *userdata)
{
	struct session *s = userdata;

	if (source == s->segment_timer) {
		rotate(s);
		return 0;
	}
	log_info("Session '%s': duration reached, stopping", s->name);
	session_stop(s);
	return 0;
}

static void arm_segment_timer(struct session *s)
{
	int r;

	s->segment_timer = sd_event_source_disable_unref(s->segment_timer);
	if (s->segment_time_ms == 0)
		return;
	r = sd_event_add_time_relative(s->env.event, &s->segment_timer, CLOCK_MONOTONIC,
				       s->segment_time_ms * 1000, TIMER_ACCURACY_USEC, on_timer, s);
	if (r < 0)
		log_error_errno(r, "Session '%s': cannot arm the segment timer: %m", s->name);
}

/*
 * Opens the next segment, naming its file now (the recipe needs it):
 * continuous: sessions/<name>/<name>-<UTC start, ms>-<seq>.dat, which ls sorts
 * in time order; a record's only goes to recovered/ if the daemon dies.
 */
/* "YYYYmmddTHHMMSS.mmmZ", now: ms, as a restarted daemon starts at seq 1 again. */
static void utc_stamp(char *buf, size_t size)
{
	struct timespec now;
	struct tm tm;
	size_t n;

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	n = strftime(buf, size, "%Y%m%dT%H%M%S", &tm);
	snprintf(buf + n, size - n, ".%03ldZ", now.tv_nsec / 1000000);
}

static int open_segment(struct session *s, struct segment **ret)
{
	char stamp[32], target[SEGMENT_NAME_MAX + sizeof(SESSIONS_DIR) + FTRACED_NAME_MAX + 8];
	uint32_t seq = s->next_seq++;

	utc_stamp(stamp, sizeof(stamp));
	if (s->mode == FTRACED_MODE_CONTINUOUS)
		snprintf(target, sizeof(target), SESSIONS_DIR "/%s/%s-%s-%06" PRIu32 ".dat", s->name,
			 s->name, stamp, seq);
	else
		snprintf(target, sizeof(target), "recovered/%s-%s.dat", s->name, stamp);
	return segment_new(&s->segment_env, seq, target, ret);
}

/* RUNNING: the streams (if any) go to the workers, and tracing goes on. */
static int begin_running(struct session *s)
{
	int r;

	s->error = 0;
	s->cut_short = 0;
	s->stopped_reported = false;
	s->state = SESSION_RUNNING;
	s->start_usec = now_usec();
	for (unsigned cpu = 0; cpu < s->n_cpus && s->streams[cpu]; cpu++) {
		r = capture_pool_add(s->env.pool, s->streams[cpu]);
		if (r < 0) {
			/* Streams already added are drained and released through the normal stop. */
			set_error(s, r, "cannot start capture on CPU %u", cpu);
			session_stop(s);
			return r;
		}
	}
	r = instance_set_tracing(s->instance, true);
	if (r < 0) {
		set_error(s, r, "cannot turn tracing on: %s", strerror(-r));
		session_stop(s);
		return r;
	}
	return 0;
}

/**
 * session_start() - open a segment, hand the streams to the workers, trace.
 * @s: a CREATED or STOPPED session
 *
 * Return: 0, -EBUSY if it is not startable, or -errno (a record session is
 * then FAILED and must be freed).
 */
int session_start(struct session *s)
{
	char error[256];
	int r;

	if (s->state != SESSION_CREATED && s->state != SESSION_STOPPED)
		return -EBUSY;
	if (s->destroy_requested)
		return -ESHUTDOWN;
	if (s->mode == FTRACED_MODE_FLIGHT)
		return flight_start(s);
	r = open_segment(s, &s->current);
	if (r < 0) {
		set_error(s, r, "cannot create spool files in the state directory: %s", strerror(-r));
		return r;
	}
	r = create_streams(s, s->current, error, sizeof(error));
	if (r < 0) {
		set_error(s, r, "%s", error);
		free_streams(s);
		s->current = segment_free(s->current);
		return r;
	}
	r = read_stats(s, s->start, s->cut_text);
	if (r < 0) {
		set_error(s, r, "cannot read the ring buffer statistics: %s", strerror(-r));
		free_streams(s);
		s->current = segment_free(s->current);
		return r;
	}
	for (unsigned cpu = 0; cpu < s->n_cpus; cpu++)
		segment_set_start(s->current, cpu, &s->start[cpu], s->cut_text[cpu]);
	r = begin_running(s);
	if (r < 0)
		return r;
	if (s->duration_ms > 0) {
		r = sd_event_add_time_relative(s->env.event, &s->timer_source, CLOCK_MONOTONIC,
					       s->duration_ms * 1000, TIMER_ACCURACY_USEC, on_timer, s);
		if (r < 0) {
			set_error(s, r, "cannot arm the duration timer: %s", strerror(-r));
			session_stop(s);
			return r;
		}
	}
	arm_segment_timer(s);
	log_info("Session '%s' started on instance '%s' (%zu events, %s, sub-buffer %u bytes)",
		 s->name, instance_name(s->instance), s->events.n, s->zstd ? "zstd" : "none",
		 s->imeta.subbuf_size);
	return 0;
}

/**
 * session_stop() - turn tracing off and ask every worker for a final drain.
 * @s: session
 *
 * Completion is asynchronous: a record moves on to ASSEMBLING and calls
 * env.on_done when its file is written; a continuous session becomes
 * STOPPED and calls env.on_stopped once its last segment is on disk.
 *
 * Return: 0, or -EALREADY if it is not running.
 */
int session_stop(struct session *s)
{
	int r;

	if (s->state != SESSION_RUNNING)
		return -EALREADY;
	s->state = SESSION_STOPPING;
	s->stop_usec = now_usec();
	s->timer_source = sd_event_source_disable_unref(s->timer_source);
	s->segment_timer = sd_event_source_disable_unref(s->segment_timer);
	if (s->mode == FTRACED_MODE_FLIGHT)
		flight_stop_triggers(s);
	r = instance_set_tracing(s->instance, false);
	if (r < 0)
		log_warning_errno(r, "Session '%s': turning tracing off failed, draining anyway: %m",
				  s->name);
	if (s->mode == FTRACED_MODE_FLIGHT && s->backend == FTRACED_FLIGHT_KERNEL) {
		/* The history stays in the kernel's ring; a drain under way ends on its own. */
		if (!s->draining)
			s->state = SESSION_STOPPED;
		wake(s); /* the stop is reported from the event loop */
		return 0;
	}
	for (unsigned cpu = 0; cpu < s->n_cpus; cpu++) {
		r = capture_pool_finish(s->env.pool, s->streams[cpu]);
		if (r < 0)
			return log_error_errno(r, "Session '%s': cannot finish CPU %u: %m", s->name,
					       cpu);
	}
	return 0;
}

static void maybe_done(struct session *s);

/**
 * session_destroy() - stop if needed; env.on_done follows once all files are on disk.
 * @s: session
 */
void session_destroy(struct session *s)
{
	s->destroy_requested = true;
	session_stop(s);
	maybe_done(s);
}

/*
 * Starts writing a closed segment or a snapshot (@job): into the client's
 * fd, or a hidden temporary file in the session's (or snapshots')
 * directory.
 */
static void close_segment(struct session *s, struct segment *seg, struct snapshot_job *job)
{
	struct closing *c, *grown;
	int fd, r;

	grown = realloc(s->closing, (s->n_closing + 1) * sizeof(*grown));
	if (!grown) {
		set_error(s, -ENOMEM, "out of memory");
		segment_free(seg);
		if (job)
			snapshot_failed(s, job, -ENOMEM);
		return;
	}
	s->closing = grown;
	c = &s->closing[s->n_closing];
	*c = (struct closing){ .segment = seg, .dir_fd = -EBADF };
	if (job) {
		c->snapshot = true;
		c->waiter = job->waiter;
		c->trigger = job->trigger;
	}
	if (s->mode == FTRACED_MODE_RECORD) {
		fd = TAKE_FD(s->out_fd);
	} else if (job && job->out_fd >= 0) {
		fd = TAKE_FD(job->out_fd);
	} else {
		const char *target = segment_target(seg), *slash = strrchr(target, '/');

		c->dir_fd = job ? s->snap_dir_fd : s->dir_fd;
		snprintf(c->final_name, sizeof(c->final_name), "%s", slash ? slash + 1 : target);
		snprintf(c->tmp_name, sizeof(c->tmp_name), ".%s.tmp", c->final_name);
		fd = openat(c->dir_fd, c->tmp_name,
			    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0640);
		if (fd < 0) {
			r = negative_errno();
			log_error_errno(r, "Session '%s': cannot create '%s': %m", s->name,
					c->tmp_name);
			segment_keep_spool(seg);
			segment_free(seg);
			if (job) {
				snapshot_failed(s, job, r);
				return;
			}
			set_error(s, r, "cannot create a segment file: %s", strerror(-r));
			return;
		}
	}
	r = segment_assemble(seg, fd);
	if (r < 0) {
		segment_keep_spool(seg);
		segment_free(seg);
		if (job) {
			snapshot_failed(s, job, r);
			return;
		}
		set_error(s, r, "cannot start writing a segment: %s", strerror(-r));
		return;
	}
	s->n_closing++;
}

/* The absolute path of a file in a directory we hold, for the on-segment command. */
static int file_path(int dir_fd, const char *name, char *buf, size_t n)
{
	char link[64];
	ssize_t k;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", dir_fd);
	k = readlink(link, buf, n - 1);
	if (k < 0)
		return negative_errno();
	buf[k] = '\0';
	if ((size_t)snprintf(buf + k, n - (size_t)k, "/%s", name) >= n - (size_t)k)
		return -ENAMETOOLONG;
	return 0;
}

/* Runs the --on-segment command for a file that was just put in place. */
static void run_on_segment(struct session *s, const struct closing *c)
{
	char path[PATH_MAX];
	int r;

	if (!s->on_segment)
		return;
	r = file_path(c->dir_fd, c->final_name, path, sizeof(path));
	if (r >= 0)
		r = runner_spawn(s->env.event, s->on_segment, path, ON_SEGMENT_TIMEOUT_USEC);
	if (r < 0)
		log_warning_errno(r, "Session '%s': cannot run the on-segment command for '%s', "
				  "ignoring: %m", s->name, c->final_name);
}

static void snapshot_written(struct session *s, struct closing *c, int result, uint64_t bytes);

/* A segment is on disk (or failed): put it in place and let retention run. */
static void segment_written(struct session *s, struct closing *c, int result, uint64_t bytes)
{
	if (s->mode == FTRACED_MODE_RECORD) {
		if (result < 0) {
			set_error(s, result, "writing the output file failed: %s", strerror(-result));
		} else {
			segment_complete(c->segment);
			log_info("Session '%s': wrote %" PRIu64 " bytes in %.3f s after stop",
				 s->name, bytes, (double)(now_usec() - s->stop_usec) / 1e6);
		}
		s->file_bytes = bytes;
		s->state = s->error < 0 ? SESSION_FAILED : SESSION_DONE;
		return;
	}
	if (c->snapshot) {
		snapshot_written(s, c, result, bytes);
		return;
	}
	if (result >= 0 && renameat(s->dir_fd, c->tmp_name, s->dir_fd, c->final_name) < 0)
		result = negative_errno();
	if (result >= 0 && fsync(s->dir_fd) < 0)
		result = negative_errno();
	if (result < 0) {
		/* Keep what was captured: the spool stays for recovery. */
		log_error_errno(result, "Session '%s': writing '%s' failed, keeping its spool: %m",
				s->name, c->final_name);
		unlinkat(s->dir_fd, c->tmp_name, 0);
		segment_keep_spool(c->segment);
		if (s->cut_short == 0) {
			s->cut_short = result;
			snprintf(s->cut_message, sizeof(s->cut_message),
				 "writing segment %06" PRIu32 " failed: %s", segment_seq(c->segment),
				 strerror(-result));
		}
		if (s->state == SESSION_RUNNING)
			session_stop(s);
		return;
	}
	segment_complete(c->segment);
	log_info("Session '%s': segment '%s' complete (%" PRIu64 " bytes)", s->name, c->final_name,
		 bytes);
	run_on_segment(s, c);
	run_retention(s);
}

static void poll_closing(struct session *s)
{
	for (size_t i = 0; i < s->n_closing;) {
		struct closing *c = &s->closing[i];
		uint64_t bytes;
		int result;

		if (!segment_assembled(c->segment, &result, &bytes)) {
			i++;
			continue;
		}
		segment_written(s, c, result, bytes);
		segment_free(c->segment);
		memmove(c, c + 1, (s->n_closing - i - 1) * sizeof(*c));
		s->n_closing--;
	}
}

/* A stream failed while running: stop everything, keep what was captured. */
static void check_streams(struct session *s)
{
	for (unsigned cpu = 0; cpu < s->n_cpus; cpu++) {
		struct capture_counters c;

		if (!s->streams[cpu])
			continue;
		capture_stream_counters(s->streams[cpu], &c);
		if (c.error < 0 && s->cut_short == 0) {
			s->cut_short = c.error;
			snprintf(s->cut_message, sizeof(s->cut_message),
				 "capture stopped early: CPU %u: %s (spool in the state directory)",
				 cpu, strerror(-c.error));
		}
	}
	if (s->cut_short < 0 && s->state == SESSION_RUNNING) {
		log_error("Session '%s': %s; finishing with what was captured", s->name,
			  s->cut_message);
		session_stop(s);
	}
}

/* Asks every worker to cut its stream and continue into a new segment. */
static void rotate(struct session *s)
{
	struct capture_cut cut;
	int r;

	if (s->state != SESSION_RUNNING || s->mode != FTRACED_MODE_CONTINUOUS ||
	    s->cut_generation != 0)
		return;
	r = open_segment(s, &s->next);
	if (r < 0) {
		log_error_errno(r, "Session '%s': cannot open the next segment, continuing in the "
				"current one: %m", s->name);
		arm_segment_timer(s);
		return;
	}
	/* The same moment ends the current segment and begins the next one. */
	r = read_stats(s, s->cut_stats, s->cut_text);
	if (r < 0)
		log_warning_errno(r, "Session '%s': reading statistics failed, ignoring: %m",
				  s->name);
	for (unsigned cpu = 0; cpu < s->n_cpus; cpu++)
		segment_set_start(s->next, cpu, &s->cut_stats[cpu], s->cut_text[cpu]);
	capture_stream_cut(s->streams[0], &cut);
	s->cut_generation = cut.generation + 1;
	for (unsigned cpu = 0; cpu < s->n_cpus; cpu++) {
		r = capture_pool_rotate(s->env.pool, s->streams[cpu], segment_spool_fd(s->next, cpu));
		if (r < 0) {
			/* Some CPUs may already write to the next segment: stop cleanly. */
			set_error(s, r, "cannot rotate CPU %u: %s", cpu, strerror(-r));
			session_stop(s);
			return;
		}
	}
}

static bool rotation_complete(struct session *s)
{
	for (unsigned cpu = 0; cpu < s->n_cpus; cpu++) {
		struct capture_cut cut;

		capture_stream_cut(s->streams[cpu], &cut);
		if (cut.generation < s->cut_generation)
			return false;
	}
	return true;
}

static void complete_rotation(struct session *s)
{
	for (unsigned cpu = 0; cpu < s->n_cpus; cpu++) {
		struct capture_cut cut;

		capture_stream_cut(s->streams[cpu], &cut);
		segment_close_cpu(s->current, cpu, cut.bytes_stored - s->base_bytes[cpu],
				  cut.chunks - s->base_chunks[cpu], &s->cut_stats[cpu],
				  TAKE_PTR(s->cut_text[cpu]));
		s->base_bytes[cpu] = cut.bytes_stored;
		s->base_chunks[cpu] = cut.chunks;
	}
	close_segment(s, TAKE_PTR(s->current), NULL);
	s->current = TAKE_PTR(s->next);
	s->cut_generation = 0;
	if (s->state == SESSION_RUNNING)
		arm_segment_timer(s);
}

static uint64_t current_bytes(struct session *s)
{
	uint64_t n = 0;

	for (unsigned cpu = 0; cpu < s->n_cpus; cpu++) {
		struct capture_counters c;

		capture_stream_counters(s->streams[cpu], &c);
		n += c.bytes_stored - s->base_bytes[cpu];
	}
	return n;
}

/* Has every stream finished its final drain? (A stream that could not be queued is NULL.) */
static bool all_finished(struct session *s)
{
	for (unsigned cpu = 0; cpu < s->n_cpus; cpu++) {
		struct capture_counters c;

		if (!s->streams[cpu])
			continue;
		capture_stream_counters(s->streams[cpu], &c);
		if (!c.finished)
			return false;
	}
	return true;
}

static void flight_drained(struct session *s);

/* Every CPU is drained: close the last segment and release the streams. */
static void all_drained(struct session *s)
{
	int r;

	check_streams(s);
	r = read_stats(s, s->cut_stats, s->cut_text);
	if (r < 0)
		log_warning_errno(r, "Session '%s': reading statistics failed, ignoring: %m",
				  s->name);
	if (s->mode == FTRACED_MODE_FLIGHT) {
		flight_drained(s);
		return;
	}
	for (unsigned cpu = 0; cpu < s->n_cpus; cpu++) {
		struct capture_counters c;

		capture_stream_counters(s->streams[cpu], &c);
		s->final[cpu] = c;
		segment_close_cpu(s->current, cpu, c.bytes_stored - s->base_bytes[cpu],
				  c.chunks - s->base_chunks[cpu], &s->cut_stats[cpu],
				  TAKE_PTR(s->cut_text[cpu]));
		/* The trace_pipe_raw fds must close before the instance can go. */
		s->streams[cpu] = capture_stream_free(s->streams[cpu]);
	}
	if (s->mode == FTRACED_MODE_RECORD) {
		/* The ring buffers are empty now: give the kernel memory back before assembling. */
		s->instance = instance_free(s->instance);
		if (s->error < 0) {
			s->current = segment_free(s->current);
			s->state = SESSION_FAILED;
			return;
		}
		s->state = SESSION_ASSEMBLING;
	} else {
		s->state = SESSION_STOPPED;
	}
	close_segment(s, TAKE_PTR(s->current), NULL);
	if (s->mode == FTRACED_MODE_RECORD && s->n_closing == 0)
		s->state = SESSION_FAILED;
}


/*
 * Flight recorder. A snapshot job is served once its data is in the rings:
 * memory backend, after the workers' flush it asked for (or at once when
 * the session is stopped); kernel backend, after the drain that follows
 * the request.
 */
#define FLUSH_AFTER_STOP UINT32_MAX

static int flight_start(struct session *s)
{
	char error[256];
	int r;

	s->flush_requested = s->flush_done = 0;
	s->drain_again = false;
	if (s->backend == FTRACED_FLIGHT_MEMORY) {
		if (!s->rings) {
			s->rings = calloc(s->n_cpus, sizeof(*s->rings));
			for (unsigned cpu = 0; s->rings && cpu < s->n_cpus; cpu++)
				if (chunk_ring_new(s->flight_size / s->n_cpus, &s->rings[cpu]) < 0) {
					free_rings(s);
					break;
				}
			if (!s->rings) {
				set_error(s, -ENOMEM, "out of memory");
				return -ENOMEM;
			}
		}
		/* A new start is a new history: no gap may hide inside it. */
		for (unsigned cpu = 0; cpu < s->n_cpus; cpu++)
			chunk_ring_clear(s->rings[cpu]);
		r = create_streams(s, NULL, error, sizeof(error));
		if (r < 0) {
			set_error(s, r, "%s", error);
			free_streams(s);
			return r;
		}
	}
	r = read_stats(s, s->start, NULL);
	if (r < 0) {
		set_error(s, r, "cannot read the ring buffer statistics: %s", strerror(-r));
		free_streams(s);
		return r;
	}
	for (unsigned cpu = 0; cpu < s->n_cpus; cpu++)
		s->lost_base[cpu] = s->start[cpu].overrun;
	r = begin_running(s);
	if (r < 0)
		return r;
	for (unsigned k = 0; k < s->n_triggers; k++) {
		r = trigger_arm(s->triggers[k].trigger);
		if (r < 0) {
			char result[128];

			snprintf(result, sizeof(result), "not armed: %s", strerror(-r));
			trigger_set_result(s->triggers[k].trigger, result);
			log_warning_errno(r, "Session '%s': cannot arm a trigger, ignoring: %m",
					  s->name);
		}
	}
	log_info("Session '%s' started on instance '%s' (flight recorder, %s backend, %zu events)",
		 s->name, instance_name(s->instance),
		 s->backend == FTRACED_FLIGHT_MEMORY ? "memory" : "kernel", s->events.n);
	return 0;
}

static void snapshot_failed(struct session *s, struct snapshot_job *job, int error)
{
	char result[128];

	log_error_errno(error, "Session '%s': snapshot failed: %m", s->name);
	if (job->trigger) {
		snprintf(result, sizeof(result), "snapshot failed: %s", strerror(-error));
		trigger_set_result(job->trigger->trigger, result);
	}
	if (job->waiter)
		s->env.on_snapshot(s, job->waiter, error, NULL, 0, NULL, s->env.userdata);
}

/* Takes what the rings hold now and starts writing it as a snapshot file. */
static void write_snapshot(struct session *s, struct snapshot_job *job)
{
	char stamp[32], target[SEGMENT_NAME_MAX + sizeof(SESSIONS_DIR) + FTRACED_NAME_MAX + 24];
	struct segment *seg;
	uint32_t seq = ++s->next_snapshot_seq;
	int r;

	utc_stamp(stamp, sizeof(stamp));
	snprintf(target, sizeof(target), SESSIONS_DIR "/%s/" SNAPSHOTS_DIR "/%s-%s-%06" PRIu32
		 ".dat", s->name, s->name, stamp, seq);
	r = segment_new_snapshot(&s->segment_env, seq, target, job->trim, &seg);
	if (r < 0) {
		snapshot_failed(s, job, r);
		return;
	}
	r = read_stats(s, s->cut_stats, s->cut_text);
	if (r < 0)
		log_warning_errno(r, "Session '%s': reading statistics failed, ignoring: %m",
				  s->name);
	for (unsigned cpu = 0; cpu < s->n_cpus; cpu++) {
		struct chunk_list l = {};
		bool older_lost;

		r = chunk_ring_collect(s->rings[cpu], &l);
		if (r < 0) {
			segment_free(seg);
			snapshot_failed(s, job, r);
			return;
		}
		/* Memory: evicted from our ring; kernel: overwritten in the kernel's. */
		older_lost = s->backend == FTRACED_FLIGHT_MEMORY ? l.evicted :
			s->cut_stats[cpu].overrun > s->lost_base[cpu];
		segment_close_cpu(seg, cpu, 0, 0, &s->cut_stats[cpu], TAKE_PTR(s->cut_text[cpu]));
		segment_set_chunks(seg, cpu, &l, older_lost);
	}
	close_segment(s, seg, job);
}

/* Memory backend: is the flush this job waits for done? */
static bool job_ready(struct session *s, const struct snapshot_job *job)
{
	if (s->state == SESSION_STOPPED || s->state == SESSION_CREATED)
		return true;
	if (job->flush == FLUSH_AFTER_STOP)
		return false;
	for (unsigned cpu = 0; cpu < s->n_cpus; cpu++) {
		struct capture_cut cut;

		if (!s->streams[cpu])
			return true;
		capture_stream_cut(s->streams[cpu], &cut);
		if (cut.generation < job->flush)
			return false;
	}
	return true;
}

/* Writes every job whose data is ready; the job leaves the queue first. */
static void serve_jobs(struct session *s)
{
	for (size_t i = 0; i < s->n_jobs;) {
		struct snapshot_job job = s->jobs[i];
		bool ready = s->backend == FTRACED_FLIGHT_MEMORY ? job_ready(s, &job) :
			job.flush <= s->flush_done;

		if (!ready) {
			i++;
			continue;
		}
		memmove(&s->jobs[i], &s->jobs[i + 1], (s->n_jobs - i - 1) * sizeof(job));
		s->n_jobs--;
		write_snapshot(s, &job);
		safe_close(job.out_fd);
	}
}

/* Kernel backend: tracing off, and temporary streams drain the ring into temporary rings. */
static int kernel_drain_begin(struct session *s)
{
	char error[256];
	int r;

	s->rings = calloc(s->n_cpus, sizeof(*s->rings));
	for (unsigned cpu = 0; s->rings && cpu < s->n_cpus; cpu++)
		if (chunk_ring_new(UINT64_MAX, &s->rings[cpu]) < 0) {
			free_rings(s);
			break;
		}
	if (!s->rings)
		return -ENOMEM;
	s->drain_start_usec = now_usec();
	if (s->state == SESSION_RUNNING) {
		r = instance_set_tracing(s->instance, false);
		if (r < 0)
			log_warning_errno(r, "Session '%s': cannot pause tracing, draining anyway: %m",
					  s->name);
	}
	r = create_streams(s, NULL, error, sizeof(error));
	if (r < 0) {
		log_error("Session '%s': %s", s->name, error);
		free_streams(s);
		free_rings(s);
		if (s->state == SESSION_RUNNING)
			instance_set_tracing(s->instance, true);
		return r;
	}
	s->draining = true;
	s->flush_requested++;
	for (unsigned cpu = 0; cpu < s->n_cpus; cpu++) {
		r = capture_pool_add(s->env.pool, s->streams[cpu]);
		if (r >= 0)
			r = capture_pool_finish(s->env.pool, s->streams[cpu]);
		if (r < 0) {
			/* Queued streams finish anyway; the drain ends with what it has. */
			log_error_errno(r, "Session '%s': cannot drain CPU %u: %m", s->name, cpu);
			s->streams[cpu] = capture_stream_free(s->streams[cpu]);
		}
	}
	return 0;
}

/* Kernel backend: the ring is drained; write the snapshots, then resume tracing. */
static void kernel_drain_end(struct session *s)
{
	double paused_ms;
	int r;

	for (unsigned cpu = 0; cpu < s->n_cpus; cpu++)
		s->streams[cpu] = capture_stream_free(s->streams[cpu]);
	s->draining = false;
	s->flush_done = s->flush_requested;
	serve_jobs(s);
	/* The ring is empty now: what was overwritten so far is accounted for. */
	for (unsigned cpu = 0; cpu < s->n_cpus; cpu++)
		s->lost_base[cpu] = s->cut_stats[cpu].overrun;
	free_rings(s);
	if (s->state == SESSION_RUNNING) {
		r = instance_set_tracing(s->instance, true);
		if (r < 0) {
			set_error(s, r, "cannot resume tracing after a snapshot: %s", strerror(-r));
			s->state = SESSION_STOPPED;
		}
	} else if (s->state == SESSION_STOPPING) {
		s->state = SESSION_STOPPED;
	}
	paused_ms = (double)(now_usec() - s->drain_start_usec) / 1000;
	snprintf(s->note, sizeof(s->note), "kernel backend: no snapshot buffer to swap on this "
		 "kernel, so tracing was paused for %.1f ms while the ring was drained", paused_ms);
	log_info("Session '%s': %s", s->name, s->note);
	if (s->drain_again) {
		s->drain_again = false;
		r = kernel_drain_begin(s);
		if (r < 0)
			for (size_t i = 0; i < s->n_jobs; i++)
				s->jobs[i].flush = s->flush_done; /* written empty rather than lost */
		if (r < 0)
			serve_jobs(s);
	}
}

/* Something changed: serve what is ready. */
static void flight_progress(struct session *s)
{
	if (s->backend == FTRACED_FLIGHT_KERNEL) {
		if (s->draining && all_finished(s))
			kernel_drain_end(s);
		return;
	}
	if (s->n_jobs > 0)
		serve_jobs(s);
}

/* Memory backend, every CPU finished at stop: the rings keep the history. */
static void flight_drained(struct session *s)
{
	for (unsigned cpu = 0; cpu < s->n_cpus; cpu++) {
		capture_stream_counters(s->streams[cpu], &s->final[cpu]);
		s->streams[cpu] = capture_stream_free(s->streams[cpu]);
	}
	s->state = SESSION_STOPPED;
	serve_jobs(s);
}

/* Queues a snapshot; @out_fd is taken over. */
static int queue_snapshot(struct session *s, void *waiter, int out_fd, bool trim,
			  struct trigger_slot *trigger)
{
	struct snapshot_job job = { .waiter = waiter, .out_fd = out_fd, .trim = trim,
				    .trigger = trigger };
	struct snapshot_job *grown;
	int r;

	if (s->n_jobs >= SNAPSHOTS_PENDING_MAX) {
		safe_close(out_fd);
		return -EBUSY;
	}
	grown = realloc(s->jobs, (s->n_jobs + 1) * sizeof(*grown));
	if (!grown) {
		safe_close(out_fd);
		return -ENOMEM;
	}
	s->jobs = grown;
	if (s->backend == FTRACED_FLIGHT_KERNEL) {
		if (s->draining) {
			job.flush = s->flush_requested + 1;
			s->drain_again = true;
		} else {
			r = kernel_drain_begin(s);
			if (r < 0) {
				safe_close(out_fd);
				return r;
			}
			job.flush = s->flush_requested;
		}
	} else if (s->state == SESSION_RUNNING) {
		job.flush = ++s->flush_requested;
		for (unsigned cpu = 0; cpu < s->n_cpus; cpu++) {
			r = capture_pool_flush(s->env.pool, s->streams[cpu]);
			if (r < 0) {
				/* Served when the stream's next cut or the stop comes. */
				log_warning_errno(r, "Session '%s': cannot flush CPU %u: %m",
						  s->name, cpu);
				job.flush = FLUSH_AFTER_STOP;
			}
		}
	} else if (s->state == SESSION_STOPPING) {
		/* The final drain is queued already: everything is in the rings after it. */
		job.flush = FLUSH_AFTER_STOP;
	}
	s->jobs[s->n_jobs++] = job;
	wake(s);
	return 0;
}

static void trigger_snapshot(struct trigger_slot *slot)
{
	char result[128];
	int r;

	r = queue_snapshot(slot->session, NULL, -EBADF, false, slot);
	if (r < 0) {
		snprintf(result, sizeof(result), "no snapshot: %s", strerror(-r));
		trigger_set_result(slot->trigger, result);
	}
}

static int on_post_timer(sd_event_source *source, uint64_t usec, void *userdata)
{
	struct trigger_slot *slot = userdata;

	slot->post = sd_event_source_disable_unref(slot->post);
	trigger_snapshot(slot);
	return 0;
}

static void on_trigger_fire(struct trigger *t, uint64_t ts, void *userdata)
{
	struct trigger_slot *slot = userdata;
	uint64_t post = trigger_spec(t)->post_ms;
	int r;

	if (slot->session->state != SESSION_RUNNING || slot->post)
		return;
	if (post > 0) {
		r = sd_event_add_time_relative(slot->session->env.event, &slot->post,
					       CLOCK_MONOTONIC, post * 1000, TIMER_ACCURACY_USEC,
					       on_post_timer, slot);
		if (r >= 0)
			return;
		log_warning_errno(r, "Session '%s': cannot wait before the snapshot, taking it "
				  "now: %m", slot->session->name);
	}
	trigger_snapshot(slot);
}

/* At stop: no more firing; a snapshot still waiting for its post time is taken now. */
static void flight_stop_triggers(struct session *s)
{
	for (unsigned k = 0; k < s->n_triggers; k++) {
		struct trigger_slot *slot = &s->triggers[k];

		trigger_disarm(slot->trigger);
		if (slot->post) {
			slot->post = sd_event_source_disable_unref(slot->post);
			trigger_snapshot(slot);
		}
	}
}

/* A snapshot file is written (or failed): put it in place, tell whoever asked. */
static void snapshot_written(struct session *s, struct closing *c, int result, uint64_t bytes)
{
	char path[PATH_MAX] = "";

	if (c->dir_fd >= 0) {
		if (result >= 0 && renameat(c->dir_fd, c->tmp_name, c->dir_fd, c->final_name) < 0)
			result = negative_errno();
		if (result >= 0 && fsync(c->dir_fd) < 0)
			result = negative_errno();
		if (result < 0)
			unlinkat(c->dir_fd, c->tmp_name, 0);
		else if (file_path(c->dir_fd, c->final_name, path, sizeof(path)) < 0)
			snprintf(path, sizeof(path), "%s", c->final_name);
	}
	if (result < 0) {
		struct snapshot_job job = { .waiter = c->waiter, .trigger = c->trigger };

		snapshot_failed(s, &job, result);
		return;
	}
	s->n_snapshots++;
	log_info("Session '%s': snapshot %s complete (%" PRIu64 " bytes)%s%s", s->name,
		 path[0] ? path : "into the client's file", bytes, c->trigger ? ", for trigger " : "",
		 c->trigger ? trigger_spec(c->trigger->trigger)->event : "");
	if (c->trigger)
		trigger_set_result(c->trigger->trigger, path[0] ? path : "written");
	if (c->waiter)
		s->env.on_snapshot(s, c->waiter, 0, path[0] ? path : NULL, bytes,
				   s->note[0] ? s->note : NULL, s->env.userdata);
	if (c->dir_fd >= 0) {
		run_on_segment(s, c);
		run_retention(s);
	}
}

/**
 * session_snapshot() - write a flight recorder's history into a file; recording goes on.
 * @s: a flight session, running or stopped
 * @waiter: passed back to env.on_snapshot when the file is complete (may be NULL)
 * @out_fd: the client's file, taken over; -EBADF for a file in the snapshots directory
 * @trim: start every CPU at the latest time from which any CPU is complete
 * @error: receives a message for the client on failure
 * @n_error: its size
 *
 * Return: 0 (env.on_snapshot follows), or -errno with @error set.
 */
int session_snapshot(struct session *s, void *waiter, int out_fd, bool trim, char *error,
		     size_t n_error)
{
	int r;

	if (s->mode != FTRACED_MODE_FLIGHT) {
		safe_close(out_fd);
		snprintf(error, n_error, "'%s' is not a flight recorder (create it with --mode "
			 "flight)", s->name);
		return -EINVAL;
	}
	if (s->state == SESSION_CREATED || s->destroy_requested) {
		safe_close(out_fd);
		snprintf(error, n_error, "'%s' has no history: it was %s", s->name,
			 s->destroy_requested ? "destroyed" : "never started");
		return -ENODATA;
	}
	r = queue_snapshot(s, waiter, out_fd, trim, NULL);
	if (r == -EBUSY)
		snprintf(error, n_error, "'%s' has %u snapshots in progress already", s->name,
			 SNAPSHOTS_PENDING_MAX);
	else if (r < 0)
		snprintf(error, n_error, "cannot take a snapshot: %s", strerror(-r));
	return r;
}

/**
 * session_forget_waiter() - a client went away: its snapshots still complete, unreported.
 * @s: session
 * @waiter: what was passed to session_snapshot()
 */
void session_forget_waiter(struct session *s, void *waiter)
{
	for (size_t i = 0; i < s->n_jobs; i++)
		if (s->jobs[i].waiter == waiter)
			s->jobs[i].waiter = NULL;
	for (size_t i = 0; i < s->n_closing; i++)
		if (s->closing[i].waiter == waiter)
			s->closing[i].waiter = NULL;
}

/**
 * session_has_waiter() - is a snapshot of @waiter still in progress?
 * @s: session
 * @waiter: what was passed to session_snapshot()
 *
 * Return: true until its completion was reported.
 */
bool session_has_waiter(const struct session *s, const void *waiter)
{
	for (size_t i = 0; i < s->n_jobs; i++)
		if (s->jobs[i].waiter == waiter)
			return true;
	for (size_t i = 0; i < s->n_closing; i++)
		if (s->closing[i].waiter == waiter)
			return true;
	return false;
}

/* Tells the owner about completions; env.on_done may free the session. */
static void maybe_done(struct session *s)
{
	if (s->mode == FTRACED_MODE_RECORD) {
		if (s->state == SESSION_DONE || s->state == SESSION_FAILED)
			s->env.on_done(s, s->env.userdata);
		return;
	}
	if (s->state != SESSION_CREATED && s->state != SESSION_STOPPED)
		return;
	if (s->n_closing > 0 || s->n_jobs > 0)
		return;
	if (s->destroy_requested) {
		s->state = SESSION_DONE;
		s->env.on_done(s, s->env.userdata);
		return;
	}
	if (s->state == SESSION_STOPPED && !s->stopped_reported) {
		s->stopped_reported = true;
		if (s->env.on_stopped)
			s->env.on_stopped(s, s->env.userdata);
	}
}

static int on_event_fd(sd_event_source *source, int fd, uint32_t revents, void *userdata)
{
	struct session *s = userdata;
	uint64_t v;

	(void)!read(fd, &v, sizeof(v));
	if (s->state == SESSION_RUNNING)
		check_streams(s);
	if (s->cut_generation != 0 && rotation_complete(s))
		complete_rotation(s);
	if (s->state == SESSION_RUNNING && s->segment_size > 0 &&
	    current_bytes(s) >= s->segment_size)
		rotate(s);
	if (s->mode == FTRACED_MODE_FLIGHT)
		flight_progress(s);
	if (s->state == SESSION_STOPPING && s->cut_generation == 0 && !s->draining &&
	    all_finished(s))
		all_drained(s);
	poll_closing(s);
	maybe_done(s);
	return 0;
}

uint32_t session_id(const struct session *s)
{
	return s->id;
}

const char *session_name(const struct session *s)
{
	return s->name;
}

uid_t session_owner(const struct session *s)
{
	return s->owner;
}

enum ftraced_mode session_mode(const struct session *s)
{
	return s->mode;
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

static uint64_t delta(uint64_t now, uint64_t then)
{
	return now >= then ? now - then : 0;
}

/*
 * The flight recorder's part of a session record. The history reaches
 * back to the latest time from which every CPU that lost older data is
 * complete (the oldest data held when none did); clocks are in ns.
 */
static void describe_flight(struct session *s, struct ctl_builder *b)
{
	uint64_t bytes = 0, raw = 0, evicted = 0, newest = 0, oldest = UINT64_MAX, complete = 0;
	char line[FTRACED_MESSAGE_MAX], dir[PATH_MAX];

	ctl_put_u32(b, FTRACED_ATTR_FLIGHT_BACKEND, s->backend);
	if (s->backend == FTRACED_FLIGHT_MEMORY) {
		ctl_put_u64(b, FTRACED_ATTR_FLIGHT_SIZE, s->flight_size);
		for (unsigned cpu = 0; s->rings && cpu < s->n_cpus; cpu++) {
			struct chunk_ring_stats st;

			chunk_ring_stats(s->rings[cpu], &st);
			bytes += st.bytes;
			raw += st.raw_bytes;
			evicted += st.evicted_raw_bytes;
			if (st.chunks == 0)
				continue;
			newest = MAX(newest, st.last_ts);
			oldest = MIN(oldest, st.first_ts);
			if (st.evicted_chunks > 0)
				complete = MAX(complete, st.first_ts);
		}
		if (!complete)
			complete = oldest;
		ctl_put_u64(b, FTRACED_ATTR_HISTORY_BYTES, bytes);
		ctl_put_u64(b, FTRACED_ATTR_HISTORY_RAW_BYTES, raw);
		ctl_put_u64(b, FTRACED_ATTR_EVICTED_RAW_BYTES, evicted);
		if (newest > 0 && complete <= newest)
			ctl_put_u64(b, FTRACED_ATTR_HISTORY_MS, (newest - complete) / 1000000);
	}
	ctl_put_u32(b, FTRACED_ATTR_SNAPSHOTS, s->n_snapshots);
	ctl_put_u32(b, FTRACED_ATTR_SEGMENTS_KEPT, s->usage.n_files);
	ctl_put_u64(b, FTRACED_ATTR_DISK_BYTES, s->usage.bytes);
	if (s->snap_dir_fd >= 0 && file_path(s->snap_dir_fd, "", dir, sizeof(dir)) >= 0)
		ctl_put_string(b, FTRACED_ATTR_DIRECTORY, dir);
	for (unsigned k = 0; k < s->n_triggers; k++) {
		trigger_describe(s->triggers[k].trigger, line, sizeof(line));
		ctl_put_string(b, FTRACED_ATTR_TRIGGER_STATUS, line);
	}
	if (s->note[0])
		ctl_put_string(b, FTRACED_ATTR_NOTE, s->note);
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
	bool running = s->state == SESSION_RUNNING;
	uint64_t end = running ? now_usec() : s->stop_usec;

	ctl_put(b, FTRACED_ATTR_SESSION_BEGIN, NULL, 0);
	ctl_put_string(b, FTRACED_ATTR_SESSION, s->name);
	ctl_put_string(b, FTRACED_ATTR_STATE, session_state_to_string(s->state));
	ctl_put_u32(b, FTRACED_ATTR_MODE, s->mode);
	ctl_put_u32(b, FTRACED_ATTR_OWNER_UID, (uint32_t)s->owner);
	ctl_put_u32(b, FTRACED_ATTR_COMPRESSION,
		    s->zstd ? FTRACED_COMPRESSION_ZSTD : FTRACED_COMPRESSION_NONE);
	ctl_put_u32(b, FTRACED_ATTR_SUBBUF_SIZE, s->imeta.subbuf_size);
	if (s->instance)
		ctl_put_string(b, FTRACED_ATTR_INSTANCE, instance_name(s->instance));
	for (unsigned k = 0; k < s->n_specs; k++)
		ctl_put_string(b, FTRACED_ATTR_EVENT, s->specs[k]);
	ctl_put_u64(b, FTRACED_ATTR_ELAPSED_MS, s->start_usec ? (end - s->start_usec) / 1000 : 0);
	if (s->mode == FTRACED_MODE_RECORD && s->state == SESSION_DONE)
		ctl_put_u64(b, FTRACED_ATTR_FILE_BYTES, s->file_bytes);
	if (s->mode == FTRACED_MODE_CONTINUOUS) {
		if (s->current)
			ctl_put_u32(b, FTRACED_ATTR_SEGMENT_SEQ, segment_seq(s->current));
		ctl_put_u32(b, FTRACED_ATTR_SEGMENTS_KEPT, s->usage.n_files);
		ctl_put_u64(b, FTRACED_ATTR_DISK_BYTES, s->usage.bytes);
		if (s->segment_size)
			ctl_put_u64(b, FTRACED_ATTR_SEGMENT_SIZE, s->segment_size);
		if (s->segment_time_ms)
			ctl_put_u64(b, FTRACED_ATTR_SEGMENT_TIME_MS, s->segment_time_ms);
		if (s->retention.max_total)
			ctl_put_u64(b, FTRACED_ATTR_MAX_TOTAL, s->retention.max_total);
		if (s->retention.max_files)
			ctl_put_u32(b, FTRACED_ATTR_MAX_FILES, s->retention.max_files);
		if (s->retention.max_age_usec)
			ctl_put_u64(b, FTRACED_ATTR_MAX_AGE_MS, s->retention.max_age_usec / 1000);
		if (s->retention.keep_free)
			ctl_put_u64(b, FTRACED_ATTR_KEEP_FREE, s->retention.keep_free);
		if (s->retention.keep_free_percent)
			ctl_put_u32(b, FTRACED_ATTR_KEEP_FREE_PERCENT, s->retention.keep_free_percent);
	}
	for (unsigned cpu = 0; cpu < s->n_cpus; cpu++) {
		struct ftraced_cpu_stats total = { .cpu = cpu }, seg = { .cpu = cpu };
		struct capture_counters c = {};
		struct cpu_counters now = s->cut_stats[cpu];
		const struct cpu_counters *seg_start = s->current && running ?
			segment_start_counters(s->current, cpu) : NULL;

		if (s->streams[cpu])
			capture_stream_counters(s->streams[cpu], &c);
		else
			c = s->final[cpu];
		if (running && s->instance)
			instance_read_cpu_stats(s->instance, cpu, &now, NULL);
		if (s->state != SESSION_CREATED) {
			total = (struct ftraced_cpu_stats){
				.cpu = cpu,
				.bytes_raw = c.bytes_raw,
				.bytes_stored = c.bytes_stored,
				.chunks = c.chunks,
				.entries = now.entries,
				.overrun = delta(now.overrun, s->start[cpu].overrun),
				.dropped = delta(now.dropped, s->start[cpu].dropped),
				.read = delta(now.read, s->start[cpu].read),
			};
		}
		ctl_put_cpu_stats(b, FTRACED_ATTR_CPU, &total);
		if (s->mode != FTRACED_MODE_CONTINUOUS || !seg_start)
			continue;
		seg = (struct ftraced_cpu_stats){
			.cpu = cpu,
			.bytes_stored = c.bytes_stored - s->base_bytes[cpu],
			.chunks = c.chunks - s->base_chunks[cpu],
			.entries = now.entries,
			.overrun = delta(now.overrun, seg_start->overrun),
			.dropped = delta(now.dropped, seg_start->dropped),
			.read = delta(now.read, seg_start->read),
		};
		ctl_put_cpu_stats(b, FTRACED_ATTR_CPU_SEGMENT, &seg);
	}
	if (s->mode == FTRACED_MODE_FLIGHT)
		describe_flight(s, b);
	if (s->error < 0) {
		ctl_put_u32(b, FTRACED_ATTR_ERRNO, (uint32_t)-s->error);
		ctl_put_string(b, FTRACED_ATTR_MESSAGE, s->error_message);
	} else if (s->cut_short < 0) {
		ctl_put_u32(b, FTRACED_ATTR_ERRNO, (uint32_t)-s->cut_short);
		ctl_put_string(b, FTRACED_ATTR_MESSAGE, s->cut_message);
	}
}
