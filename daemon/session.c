// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One capture session and its state machine:
 *
 *   CREATED --start--> RUNNING --stop--> STOPPING --all CPUs drained-->
 *   ASSEMBLING --file written--> DONE (or FAILED from any step)
 *
 * A session owns its tracefs instance, its spool, one capture stream per
 * CPU (lent to the capture workers between start and drained), the output
 * fd, and an eventfd on which workers and the assembler thread report back.
 * Requests are checked for meaning here (events exist, sizes within
 * bounds.h, clock and filter accepted by the kernel); nothing is started
 * when a request is invalid, and the instance is destroyed on every
 * failure path by ownership.
 *
 * Main thread only, apart from the assembler thread, which runs while the
 * state is ASSEMBLING and touches nothing but the metadata, the spool fds
 * (read) and the output fd.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "daemon/bounds.h"
#include "daemon/capture.h"
#include "daemon/ctl-proto.h"
#include "daemon/event-list.h"
#include "daemon/instance.h"
#include "daemon/log.h"
#include "daemon/metadata.h"
#include "daemon/session.h"
#include "daemon/spool.h"
#include "daemon/v7-writer.h"

struct session {
	struct session_env env;
	uint32_t id;
	char name[FTRACED_NAME_MAX + 1];
	uid_t owner;
	uint64_t trace_id;
	enum session_state state;

	/* configuration, validated */
	unsigned n_specs;
	char (*specs)[FTRACED_EVENT_SPEC_MAX + 1];
	struct event_list events;
	bool zstd;
	int level;
	uint64_t duration_ms;

	struct instance *instance;
	struct metadata meta;
	struct spool spool;
	unsigned n_cpus;
	struct capture_stream **streams;
	struct capture_counters *final; /* each stream's counters once it was released */
	struct cpu_counters *start;
	struct cpu_counters *end;
	char **cpustat;

	int out_fd;
	int event_fd;
	sd_event_source *event_source;
	sd_event_source *timer_source;

	pthread_t assembler;
	bool assembler_started;
	_Atomic bool assembler_done;
	int assemble_result;
	uint64_t file_bytes;

	uint64_t start_usec;
	uint64_t stop_usec;
	int error;              /* fatal: no file */
	char error_message[256];
	int cut_short;          /* capture stopped early; the file holds what came before */
	char cut_message[256];
};

static const char *const state_names[_SESSION_STATE_MAX] = {
	[SESSION_CREATED] = "created",
	[SESSION_RUNNING] = "running",
	[SESSION_STOPPING] = "stopping",
	[SESSION_ASSEMBLING] = "assembling",
	[SESSION_DONE] = "done",
	[SESSION_FAILED] = "failed",
};

const char *session_state_to_string(enum session_state st)
{
	return st < _SESSION_STATE_MAX ? state_names[st] : "unknown";
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

/**
 * session_free() - release everything; the instance and spool are removed.
 * @s: session or NULL
 *
 * Waits for the assembler thread if one runs (the manager only frees
 * sessions that are done, so this does not block in practice).
 *
 * Return: NULL.
 */
struct session *session_free(struct session *s)
{
	if (!s)
		return NULL;
	if (s->assembler_started)
		pthread_join(s->assembler, NULL);
	sd_event_source_disable_unref(s->timer_source);
	sd_event_source_disable_unref(s->event_source);
	for (unsigned cpu = 0; s->streams && cpu < s->n_cpus; cpu++) {
		struct capture_counters c = {};

		if (s->streams[cpu] && s->state != SESSION_CREATED)
			capture_stream_counters(s->streams[cpu], &c);
		/* A stream still inside a worker cannot be freed; the pool is going away then. */
		if (s->state == SESSION_CREATED || c.finished)
			capture_stream_free(s->streams[cpu]);
	}
	free(s->streams);
	s->instance = instance_free(s->instance);
	spool_remove(&s->spool);
	for (unsigned cpu = 0; s->cpustat && cpu < s->n_cpus; cpu++)
		free(s->cpustat[cpu]);
	free(s->cpustat);
	free(s->start);
	free(s->final);
	free(s->end);
	metadata_done(&s->meta);
	event_list_done(&s->events);
	free(s->specs);
	safe_close(s->out_fd);
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
	r = metadata_read_instance(&s->meta, s->instance);
	if (r < 0) {
		snprintf(error, n_error, "cannot read the instance's header_page: %s", strerror(-r));
		return r;
	}
	return 0;
}

static int on_event_fd(sd_event_source *source, int fd, uint32_t revents, void *userdata);

static int create_streams(struct session *s, char *error, size_t n_error)
{
	int r;

	r = spool_create(&s->spool, s->env.state_dir_fd, s->trace_id, s->n_cpus);
	if (r < 0) {
		snprintf(error, n_error, "cannot create spool files in the state directory: %s",
			 strerror(-r));
		return r;
	}
	for (unsigned cpu = 0; cpu < s->n_cpus; cpu++) {
		struct capture_stream_config c = {
			.cpu = cpu,
			.spool_fd = s->spool.fds[cpu],
			.notify_fd = s->event_fd,
			.subbuf_size = s->meta.subbuf_size,
			.zstd = s->zstd,
			.level = s->level,
		};

		r = instance_open_cpu_raw(s->instance, cpu, &c.trace_fd);
		if (r >= 0)
			r = capture_stream_new(&c, &s->streams[cpu]);
		if (r < 0) {
			snprintf(error, n_error, "cannot open the ring buffer of CPU %u: %s", cpu,
				 strerror(-r));
			return r;
		}
	}
	return 0;
}

/**
 * session_new_record() - validate a RECORD request and prepare its session.
 * @env: event loop, capture pool, state directory and completion callback
 * @id: internal id (names the instance)
 * @owner: uid of the requesting client
 * @req: the parsed request
 * @out_fd: the output file, taken over (closed on failure)
 * @ret: the session, in state CREATED, tracing off
 * @error: receives a message for the client on failure
 * @n_error: its size
 *
 * Return: 0, or -errno with @error set; nothing is left in the kernel.
 */
int session_new_record(const struct session_env *env, uint32_t id, uid_t owner,
		       const struct ctl_request *req, int out_fd, struct session **ret,
		       char *error, size_t n_error)
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
	s->event_fd = -EBADF;
	s->spool.dir_fd = -EBADF;
	s->id = id;
	s->owner = owner;
	s->n_cpus = capture_pool_cpus(env->pool);
	s->zstd = req->compression == FTRACED_COMPRESSION_ZSTD;
	s->level = ctl_request_has(req, FTRACED_ATTR_LEVEL) ? req->level : ZSTD_LEVEL_DEFAULT;
	s->duration_ms = req->duration_ms;
	snprintf(s->name, sizeof(s->name), "record-%" PRIu32, id);
	if (getrandom(&s->trace_id, sizeof(s->trace_id), 0) != sizeof(s->trace_id))
		s->trace_id = ((uint64_t)getpid() << 32) ^ now_usec();

	r = check_request(req, s->n_cpus, error, n_error);
	if (r < 0)
		return r;

	s->specs = calloc(req->n_events, sizeof(*s->specs));
	s->streams = calloc(s->n_cpus, sizeof(*s->streams));
	s->start = calloc(s->n_cpus, sizeof(*s->start));
	s->final = calloc(s->n_cpus, sizeof(*s->final));
	s->end = calloc(s->n_cpus, sizeof(*s->end));
	s->cpustat = calloc(s->n_cpus, sizeof(*s->cpustat));
	if (!s->specs || !s->streams || !s->start || !s->final || !s->end || !s->cpustat) {
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
	r = create_streams(s, error, n_error);
	if (r < 0)
		return r;

	*ret = TAKE_PTR(s);
	return 0;
}

static int on_timer(sd_event_source *source, uint64_t usec, void *userdata)
{
	struct session *s = userdata;

	log_info("Session '%s': duration reached, stopping", s->name);
	session_stop(s);
	return 0;
}

/**
 * session_start() - read start stats, hand the streams to the workers, trace.
 * @s: a CREATED session
 *
 * Return: 0 or -errno (the session is then FAILED and must be freed).
 */
int session_start(struct session *s)
{
	int r;

	if (s->state != SESSION_CREATED)
		return -EBUSY;
	for (unsigned cpu = 0; cpu < s->n_cpus; cpu++) {
		r = instance_read_cpu_stats(s->instance, cpu, &s->start[cpu], NULL);
		if (r < 0)
			return r;
	}
	for (unsigned cpu = 0; cpu < s->n_cpus; cpu++) {
		r = capture_pool_add(s->env.pool, s->streams[cpu]);
		if (r < 0) {
			/* Streams already added are drained and released through the normal stop. */
			set_error(s, r, "cannot start capture on CPU %u", cpu);
			s->state = SESSION_RUNNING;
			session_stop(s);
			return r;
		}
	}
	s->state = SESSION_RUNNING;
	s->start_usec = now_usec();
	r = instance_set_tracing(s->instance, true);
	if (r < 0) {
		set_error(s, r, "cannot turn tracing on: %s", strerror(-r));
		session_stop(s);
		return r;
	}
	if (s->duration_ms > 0) {
		r = sd_event_add_time_relative(s->env.event, &s->timer_source, CLOCK_MONOTONIC,
					       s->duration_ms * 1000, 0, on_timer, s);
		if (r < 0) {
			set_error(s, r, "cannot arm the duration timer: %s", strerror(-r));
			session_stop(s);
			return r;
		}
	}
	log_info("Session '%s' started on instance '%s' (%zu events, %s, sub-buffer %u bytes)",
		 s->name, instance_name(s->instance), s->events.n, s->zstd ? "zstd" : "none",
		 s->meta.subbuf_size);
	return 0;
}

/**
 * session_stop() - turn tracing off and ask every worker for a final drain.
 * @s: session
 *
 * Completion is asynchronous: the session moves on to ASSEMBLING when every
 * CPU is drained, and calls env.on_done when the file is written.
 *
 * Return: 0, or -EALREADY if it is already stopping or stopped.
 */
int session_stop(struct session *s)
{
	int r;

	if (s->state != SESSION_RUNNING)
		return -EALREADY;
	s->state = SESSION_STOPPING;
	s->stop_usec = now_usec();
	s->timer_source = sd_event_source_disable_unref(s->timer_source);
	r = instance_set_tracing(s->instance, false);
	if (r < 0)
		log_warning_errno(r, "Session '%s': turning tracing off failed, draining anyway: %m",
				  s->name);
	for (unsigned cpu = 0; cpu < s->n_cpus; cpu++) {
		r = capture_pool_finish(s->env.pool, s->streams[cpu]);
		if (r < 0)
			return log_error_errno(r, "Session '%s': cannot finish CPU %u: %m", s->name,
					       cpu);
	}
	return 0;
}

static void *assembler_main(void *userdata)
{
	struct session *s = userdata;
	struct v7_cpu_data *data;
	struct v7_file f = {};
	uint64_t one = 1;
	struct stat st;
	int r;

	data = calloc(s->n_cpus, sizeof(*data));
	r = data ? metadata_read_global(&s->meta, &s->events) : -ENOMEM;
	if (r >= 0) {
		metadata_to_v7(&s->meta, &f);
		f.compression = s->zstd ? V7_COMPRESSION_ZSTD : V7_COMPRESSION_NONE;
		f.level = s->level;
		f.version = "ftraced " FTRACED_VERSION;
		f.trace_id = s->trace_id;
		f.n_cpus = s->n_cpus;
		f.cpustat = (const char *const *)s->cpustat;
		for (unsigned cpu = 0; cpu < s->n_cpus; cpu++) {
			data[cpu] = (struct v7_cpu_data){
				.cpu = cpu,
				.fd = s->spool.fds[cpu],
				.size = s->final[cpu].bytes_stored,
				.n_chunks = (uint32_t)s->final[cpu].chunks,
			};
		}
		f.n_data = s->n_cpus;
		f.data = data;
		r = v7_write(s->out_fd, &f, &s->file_bytes);
	}
	/* An fsync error is final: the pages may be gone, so the file is never called complete. */
	if (r >= 0 && fstat(s->out_fd, &st) >= 0 && S_ISREG(st.st_mode) && fsync(s->out_fd) < 0)
		r = negative_errno();
	free(data);
	s->assemble_result = r;
	atomic_store_explicit(&s->assembler_done, true, memory_order_release);
	(void)!write(s->event_fd, &one, sizeof(one));
	return NULL;
}

/* A stream failed while running: stop everything, keep what was captured. */
static void check_streams(struct session *s)
{
	for (unsigned cpu = 0; cpu < s->n_cpus; cpu++) {
		struct capture_counters c;

		capture_stream_counters(s->streams[cpu], &c);
		if (c.error < 0 && s->cut_short == 0) {
			s->cut_short = c.error;
			snprintf(s->cut_message, sizeof(s->cut_message),
				 "capture stopped early: CPU %u: %s (spool in the state directory)",
				 cpu, strerror(-c.error));
		}
	}
	if (s->cut_short < 0 && s->state == SESSION_RUNNING) {
		log_error("Session '%s': %s; finishing the file with what was captured", s->name,
			  s->cut_message);
		session_stop(s);
	}
}

static void finish(struct session *s, int error)
{
	if (error < 0) {
		s->state = SESSION_FAILED;
		set_error(s, error, "%s", strerror(-error));
		log_error_errno(error, "Session '%s' failed: %s", s->name, s->error_message);
	} else {
		s->state = s->error < 0 ? SESSION_FAILED : SESSION_DONE;
	}
	s->env.on_done(s, s->env.userdata);
}

static void all_drained(struct session *s)
{
	int r;

	for (unsigned cpu = 0; cpu < s->n_cpus; cpu++) {
		struct capture_counters *c = &s->final[cpu];

		/* Drained: the trace_pipe_raw fds must close before the instance can go. */
		capture_stream_counters(s->streams[cpu], c);
		r = instance_read_cpu_stats(s->instance, cpu, &s->end[cpu], &s->cpustat[cpu]);
		if (r >= 0) {
			char *t = NULL;

			if (asprintf(&t, "CPU: %u\n%s", cpu, s->cpustat[cpu]) >= 0) {
				free(s->cpustat[cpu]);
				s->cpustat[cpu] = t;
			}
		}
	}
	check_streams(s);
	for (unsigned cpu = 0; cpu < s->n_cpus; cpu++)
		s->streams[cpu] = capture_stream_free(s->streams[cpu]);
	/* The ring buffers are empty now: give the kernel memory back before assembling. */
	s->instance = instance_free(s->instance);
	if (s->error < 0) {
		finish(s, 0);
		return;
	}
	s->state = SESSION_ASSEMBLING;
	r = -pthread_create(&s->assembler, NULL, assembler_main, s);
	if (r < 0) {
		finish(s, r);
		return;
	}
	s->assembler_started = true;
}

static int on_event_fd(sd_event_source *source, int fd, uint32_t revents, void *userdata)
{
	struct session *s = userdata;
	uint64_t v;

	(void)!read(fd, &v, sizeof(v));
	if (s->state == SESSION_RUNNING) {
		check_streams(s);
	} else if (s->state == SESSION_STOPPING) {
		for (unsigned cpu = 0; cpu < s->n_cpus; cpu++) {
			struct capture_counters c;

			capture_stream_counters(s->streams[cpu], &c);
			if (!c.finished)
				return 0;
		}
		all_drained(s);
	} else if (s->state == SESSION_ASSEMBLING &&
		   atomic_load_explicit(&s->assembler_done, memory_order_acquire)) {
		pthread_join(s->assembler, NULL);
		s->assembler_started = false;
		if (s->assemble_result < 0)
			set_error(s, s->assemble_result, "writing the output file failed: %s",
				  strerror(-s->assemble_result));
		else
			log_info("Session '%s': wrote %" PRIu64 " bytes in %.3f s after stop",
				 s->name, s->file_bytes, (double)(now_usec() - s->stop_usec) / 1e6);
		finish(s, 0);
	}
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

enum session_state session_state(const struct session *s)
{
	return s->state;
}

bool session_is_active(const struct session *s)
{
	return s->state != SESSION_DONE && s->state != SESSION_FAILED;
}

/**
 * session_error() - why the session failed.
 * @s: session
 * @ret_message: the message, or NULL
 *
 * Return: 0 or the first -errno.
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

/**
 * session_describe() - append one session record to a reply.
 * @s: session
 * @b: reply being built
 *
 * Kernel counters are deltas since start: live while running, the final
 * values once drained.
 */
void session_describe(struct session *s, struct ctl_builder *b)
{
	uint64_t end = s->state == SESSION_RUNNING || s->state == SESSION_CREATED ? now_usec() :
										    s->stop_usec;

	ctl_put(b, FTRACED_ATTR_SESSION_BEGIN, NULL, 0);
	ctl_put_string(b, FTRACED_ATTR_SESSION, s->name);
	ctl_put_string(b, FTRACED_ATTR_STATE, session_state_to_string(s->state));
	ctl_put_u32(b, FTRACED_ATTR_OWNER_UID, (uint32_t)s->owner);
	ctl_put_u32(b, FTRACED_ATTR_COMPRESSION,
		    s->zstd ? FTRACED_COMPRESSION_ZSTD : FTRACED_COMPRESSION_NONE);
	ctl_put_u32(b, FTRACED_ATTR_SUBBUF_SIZE, s->meta.subbuf_size);
	if (s->instance)
		ctl_put_string(b, FTRACED_ATTR_INSTANCE, instance_name(s->instance));
	for (unsigned k = 0; k < s->n_specs; k++)
		ctl_put_string(b, FTRACED_ATTR_EVENT, s->specs[k]);
	ctl_put_u64(b, FTRACED_ATTR_ELAPSED_MS, s->start_usec ? (end - s->start_usec) / 1000 : 0);
	if (s->state == SESSION_DONE)
		ctl_put_u64(b, FTRACED_ATTR_FILE_BYTES, s->file_bytes);
	for (unsigned cpu = 0; cpu < s->n_cpus; cpu++) {
		struct ftraced_cpu_stats st = { .cpu = cpu };
		struct capture_counters c = {};
		struct cpu_counters now = {};
		bool drained = s->state >= SESSION_ASSEMBLING;

		if (s->streams && s->streams[cpu])
			capture_stream_counters(s->streams[cpu], &c);
		else if (drained)
			c = s->final[cpu];
		if (drained)
			now = s->end[cpu];
		else if (s->instance && s->state != SESSION_CREATED)
			instance_read_cpu_stats(s->instance, cpu, &now, NULL);
		st.bytes_raw = c.bytes_raw;
		st.bytes_stored = c.bytes_stored;
		st.chunks = c.chunks;
		st.entries = now.entries;
		st.overrun = delta(now.overrun, s->start[cpu].overrun);
		st.dropped = delta(now.dropped, s->start[cpu].dropped);
		st.read = delta(now.read, s->start[cpu].read);
		ctl_put_cpu_stats(b, &st);
	}
	if (s->error < 0) {
		ctl_put_u32(b, FTRACED_ATTR_ERRNO, (uint32_t)-s->error);
		ctl_put_string(b, FTRACED_ATTR_MESSAGE, s->error_message);
	} else if (s->cut_short < 0) {
		ctl_put_u32(b, FTRACED_ATTR_ERRNO, (uint32_t)-s->cut_short);
		ctl_put_string(b, FTRACED_ATTR_MESSAGE, s->cut_message);
	}
}
