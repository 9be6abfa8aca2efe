// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A session's configuration from a parsed request: the one place that
 * knows which attributes a request may carry for each mode, what each
 * defaults to, and which values bounds.h allows. The request's syntax was
 * checked by the protocol parser; this checks meaning that needs no kernel
 * state (whether events exist, clocks and filters are accepted, is for the
 * session to find out from tracefs).
 *
 * Pure: no I/O, no logging; memory available is passed in, so it is unit
 * tested with any machine in mind. Main thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/base/bounds.h"
#include "daemon/capture/capture.h"
#include "daemon/output/runner.h"
#include "daemon/output/session-config.h"
#include "ftraced/macro.h"
#include "lib/ctl/ctl-proto.h"

/**
 * default_buffer_kb() - the ring per CPU a session gets without -b.
 * @n_cpus: CPUs it captures
 * @avail_kb: MemAvailable; 0: unknown
 *
 * Return: BUFFER_KB_DEFAULT, or less on a machine where that many CPUs'
 * rings would take more than BUFFER_MEM_PERCENT_MAX of its memory: the
 * largest power of two that fits, not below BUFFER_KB_DEFAULT_MIN.
 */
uint32_t default_buffer_kb(unsigned n_cpus, uint64_t avail_kb)
{
	uint32_t kb = BUFFER_KB_DEFAULT;

	while (kb > BUFFER_KB_DEFAULT_MIN && avail_kb > 0 &&
	       (uint64_t)kb * n_cpus > avail_kb / 100 * BUFFER_MEM_PERCENT_MAX)
		kb /= 2;
	return kb;
}

/* Sizes, levels and times: the checks that apply to every mode. */
static int check_common(const struct ctl_request *req, unsigned n_cpus, uint64_t avail_kb,
			char *error, size_t n_error)
{
	uint32_t buffer_kb = req->buffer_kb ?: default_buffer_kb(n_cpus, avail_kb);

	if (buffer_kb < BUFFER_KB_MIN || buffer_kb > BUFFER_KB_MAX) {
		snprintf(error, n_error, "buffer size %u KiB per CPU is outside %u..%u KiB",
			 buffer_kb, BUFFER_KB_MIN, BUFFER_KB_MAX);
		return -EINVAL;
	}
	if (avail_kb > 0 && (uint64_t)buffer_kb * n_cpus > avail_kb / 100 * BUFFER_MEM_PERCENT_MAX) {
		snprintf(error, n_error,
			 "buffer size %u KiB x %u CPUs exceeds %u%% of available memory (%" PRIu64
			 " KiB)", buffer_kb, n_cpus, BUFFER_MEM_PERCENT_MAX, avail_kb);
		return -ENOMEM;
	}
	if (req->subbuf_kb != 0 && (req->subbuf_kb & (req->subbuf_kb - 1)) != 0) {
		snprintf(error, n_error, "sub-buffer size %u KiB is not a power of two",
			 req->subbuf_kb);
		return -EINVAL;
	}
	if (req->subbuf_kb != 0 &&
	    (req->subbuf_kb < SUBBUF_KB_MIN || req->subbuf_kb > SUBBUF_KB_MAX)) {
		snprintf(error, n_error, "sub-buffer size %u KiB is outside %u..%u KiB (the "
			 "kernel's largest sub-buffer is %u KiB)", req->subbuf_kb, SUBBUF_KB_MIN,
			 SUBBUF_KB_MAX, SUBBUF_KB_MAX);
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

/* The flight recorder's own options. */
static int flight_options(const struct ctl_request *req, unsigned n_cpus, uint64_t avail_kb,
			  struct session_config *c, char *error, size_t n_error)
{
	uint64_t avail = avail_kb * 1024, chunk_max;

	c->backend = ctl_request_has(req, FTRACED_ATTR_FLIGHT_BACKEND) ? req->flight_backend :
		FTRACED_FLIGHT_MEMORY;
	if (ctl_request_has(req, FTRACED_ATTR_SEGMENT_SIZE) ||
	    ctl_request_has(req, FTRACED_ATTR_SEGMENT_TIME_MS)) {
		snprintf(error, n_error, "--segment-size and --segment-time are for continuous "
			 "sessions");
		return -EINVAL;
	}
	if (c->backend == FTRACED_FLIGHT_PERSISTENT) {
		/* The kernel sized and placed that ring at boot; resizing it would unmap it. */
		if (ctl_request_has(req, FTRACED_ATTR_FLIGHT_SIZE) || req->buffer_kb ||
		    req->subbuf_kb) {
			snprintf(error, n_error, "the persistent backend's history is the ring "
				 "the kernel mapped at boot onto the memory reserve_mem= set "
				 "aside: size it there, on the kernel command line, not with "
				 "--buffer-size, --subbuf-size or --flight-size");
			return -EINVAL;
		}
		snprintf(c->boot_instance, sizeof(c->boot_instance), "%s",
			 ctl_request_has(req, FTRACED_ATTR_INSTANCE) ? req->boot_instance :
			 BOOT_INSTANCE_DEFAULT);
		return 0;
	}
	if (ctl_request_has(req, FTRACED_ATTR_INSTANCE)) {
		snprintf(error, n_error, "--boot-instance is for --flight-backend persistent");
		return -EINVAL;
	}
	if (c->backend == FTRACED_FLIGHT_KERNEL) {
		if (ctl_request_has(req, FTRACED_ATTR_FLIGHT_SIZE)) {
			snprintf(error, n_error, "the kernel backend keeps its history in the "
				 "kernel's ring: size it with --buffer-size (per CPU), not "
				 "--flight-size");
			return -EINVAL;
		}
		return 0;
	}
	c->flight_size = ctl_request_has(req, FTRACED_ATTR_FLIGHT_SIZE) ? req->flight_size :
		FLIGHT_SIZE_DEFAULT;
	/*
	 * A ring must hold several of its largest chunks, or it keeps next to
	 * nothing: they shrink with it, down to one sub-buffer.
	 */
	chunk_max = MAX((uint64_t)capture_ring_chunk_target(c->flight_size / n_cpus),
			req->subbuf_kb * UINT64_C(1024));
	if (c->flight_size / n_cpus < 4 * chunk_max || c->flight_size < FLIGHT_SIZE_MIN) {
		snprintf(error, n_error, "--flight-size must be at least %" PRIu64 " KiB (and 4 "
			 "chunks of %" PRIu64 " KiB per CPU)", FLIGHT_SIZE_MIN / 1024,
			 chunk_max / 1024);
		return -EINVAL;
	}
	if (avail > 0 && c->flight_size > avail / 100 * FLIGHT_MEM_PERCENT_MAX) {
		snprintf(error, n_error, "--flight-size %" PRIu64 " KiB exceeds %u%% of available "
			 "memory (%" PRIu64 " KiB)", c->flight_size / 1024, FLIGHT_MEM_PERCENT_MAX,
			 avail / 1024);
		return -ENOMEM;
	}
	return 0;
}

/*
 * A budget that cannot keep one closed segment deletes every segment as it
 * closes: a session that writes and deletes, and keeps nothing.
 */
static int check_budget(const struct session_config *c, char *error, size_t n_error)
{
	uint64_t segment = c->segment_size ?: SEGMENT_SIZE_MIN;
	uint64_t age_min_ms = MAX(c->segment_time_ms, (uint64_t)RETENTION_AGE_MS_MIN);

	if (c->retention.max_total && c->retention.max_total < segment) {
		snprintf(error, n_error, "--max-total %" PRIu64 " bytes cannot hold one segment "
			 "(%" PRIu64 " bytes): every segment would be deleted as it closes",
			 c->retention.max_total, segment);
		return -EINVAL;
	}
	if (c->retention.max_age_usec && c->retention.max_age_usec < age_min_ms * 1000) {
		snprintf(error, n_error, "--max-age must be at least %" PRIu64 " ms (%s), or "
			 "every segment is deleted as soon as the next one closes", age_min_ms,
			 c->segment_time_ms > RETENTION_AGE_MS_MIN ? "the segment time" :
			 "one second");
		return -EINVAL;
	}
	if (c->retention.keep_free_percent > KEEP_FREE_PERCENT_MAX) {
		snprintf(error, n_error, "--keep-free %u%% leaves at most %u%% of the file system "
			 "for segments; at most %u%% may be kept free", c->retention.keep_free_percent,
			 100 - c->retention.keep_free_percent, KEEP_FREE_PERCENT_MAX);
		return -EINVAL;
	}
	return 0;
}

/* What continuous sessions and flight recorders share: files in the state directory. */
static int file_options(const struct ctl_request *req, uid_t owner, struct session_config *c,
			char *error, size_t n_error)
{
	int r;

	if (c->mode == FTRACED_MODE_CONTINUOUS) {
		c->segment_size = ctl_request_has(req, FTRACED_ATTR_SEGMENT_SIZE) ?
			req->segment_size : ctl_request_has(req, FTRACED_ATTR_SEGMENT_TIME_MS) ?
			0 : SEGMENT_SIZE_DEFAULT;
		c->segment_time_ms = req->segment_time_ms;
	}
	c->retention = (struct retention_limits){
		.max_total = req->max_total,
		.max_files = req->max_files,
		.max_age_usec = req->max_age_ms * 1000,
		.keep_free = req->keep_free,
		.keep_free_percent = req->keep_free_percent,
	};
	if (c->mode == FTRACED_MODE_CONTINUOUS) {
		r = check_budget(c, error, n_error);
		if (r < 0)
			return r;
	}
	if (ctl_request_has(req, FTRACED_ATTR_ON_SEGMENT)) {
		char *argv[COMMAND_ARGS_MAX + 1];
		char words[FTRACED_COMMAND_MAX + 1];

		/* It runs as the daemon's user: only root may choose it. */
		if (owner != 0) {
			snprintf(error, n_error, "only root may set --on-segment");
			return -EPERM;
		}
		r = command_split(req->on_segment, words, sizeof(words), argv, ELEMENTSOF(argv));
		if (r < 0 || argv[0][0] != '/') {
			snprintf(error, n_error, "--on-segment needs a program with a full path, then "
				 "its arguments (quotes allowed, no shell)");
			return -EINVAL;
		}
		c->on_segment = strdup(req->on_segment);
		if (!c->on_segment) {
			snprintf(error, n_error, "out of memory");
			return -ENOMEM;
		}
	}
	return 0;
}

/* A NULL-terminated copy of @n strings at @offsets into @text; NULL for none or out of memory. */
static char **copy_text_strings(const char *text, const uint32_t *offsets, unsigned n)
{
	char **v = calloc(n + 1, sizeof(*v));

	for (unsigned k = 0; v && k < n; k++) {
		v[k] = strdup(text + offsets[k]);
		if (!v[k]) {
			strv_free(v);
			return NULL;
		}
	}
	return v;
}

/*
 * -p and what only a tracer uses, by trace-cmd's rules: -l and -n limit a
 * tracer, -g, --max-graph-depth are function_graph's, --func-stack is
 * function's. Whether this kernel runs it in an instance is for tracefs
 * to say.
 */
static int tracer_options(const struct ctl_request *req, struct tracer_config *t, char *error,
			  size_t n_error)
{
	uint32_t off[3][FTRACED_FUNCTIONS_PER_REQUEST_MAX];
	unsigned n[3] = {};
	bool graph;

	if (ctl_request_has(req, FTRACED_ATTR_TRACER) && strcmp(req->tracer, "nop") != 0) {
		if (strcmp(req->tracer, "function") != 0 &&
		    strcmp(req->tracer, "function_graph") != 0) {
			snprintf(error, n_error, "unknown tracer '%s' (function or function_graph)",
				 req->tracer);
			return -EINVAL;
		}
		t->name = strdup(req->tracer);
		if (!t->name)
			return -ENOMEM;
	}
	graph = t->name && strcmp(t->name, "function_graph") == 0;
	if (req->n_functions > 0 && !t->name) {
		snprintf(error, n_error, "-l, -n and -g limit a tracer: add -p function or -p "
			 "function_graph");
		return -EINVAL;
	}
	for (unsigned k = 0; k < req->n_functions; k++) {
		unsigned which = req->functions[k].attr == FTRACED_ATTR_FTRACE_FILTER ? 0 :
				 req->functions[k].attr == FTRACED_ATTR_FTRACE_NOTRACE ? 1 : 2;

		off[which][n[which]++] = req->functions[k].offset;
	}
	if ((n[2] > 0 || req->max_graph_depth > 0) && !graph) {
		snprintf(error, n_error, "-g and --max-graph-depth are for -p function_graph");
		return -EINVAL;
	}
	if (req->func_stack && !(t->name && strcmp(t->name, "function") == 0)) {
		snprintf(error, n_error, "--func-stack is for -p function");
		return -EINVAL;
	}
	t->filter = copy_text_strings(req->text, off[0], n[0]);
	t->notrace = copy_text_strings(req->text, off[1], n[1]);
	t->graph = copy_text_strings(req->text, off[2], n[2]);
	if (!t->filter || !t->notrace || !t->graph)
		return -ENOMEM;
	t->n_filter = n[0];
	t->n_notrace = n[1];
	t->n_graph = n[2];
	t->max_graph_depth = req->max_graph_depth;
	t->func_stack = req->func_stack;
	return 0;
}

static int per_event_strings(const struct ctl_request *req,
			     const char *(*get)(const struct ctl_request *, unsigned), char ***ret);

/*
 * The event specs, their filters and triggers, as many as given: pointers into one copy
 * of the request's event text (a session may name every event of a kernel, so
 * each takes what it uses, not a fixed slot).
 */
static int event_specs(const struct ctl_request *req, struct session_config *c)
{
	c->n_events = req->n_events;
	if (req->n_events == 0)
		return 0;
	c->events = calloc(req->n_events, sizeof(*c->events));
	c->event_text = malloc(req->n_event_text);
	if (!c->events || !c->event_text)
		return -ENOMEM;
	memcpy(c->event_text, req->event_text, req->n_event_text);
	for (unsigned k = 0; k < req->n_events; k++)
		c->events[k] = c->event_text + req->events[k].spec;
	if (per_event_strings(req, ctl_request_event_filter, &c->event_filters) < 0)
		return -ENOMEM;
	return per_event_strings(req, ctl_request_event_trigger, &c->event_triggers);
}

/*
 * Per-event strings, one slot per event spec: the filters (-f) or the
 * triggers (-R), as @get gives them; NULL when there is none at all.
 */
static int per_event_strings(const struct ctl_request *req,
			     const char *(*get)(const struct ctl_request *, unsigned), char ***ret)
{
	bool any = false;
	char **v;

	for (unsigned k = 0; k < req->n_events; k++)
		any |= get(req, k) != NULL;
	if (!any)
		return 0;
	v = calloc(req->n_events, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (unsigned k = 0; k < req->n_events; k++) {
		const char *f = get(req, k);

		if (f && !(v[k] = strdup(f))) {
			while (k-- > 0)
				free(v[k]);
			free(v);
			return -ENOMEM;
		}
	}
	*ret = v;
	return 0;
}

/* Copies @n strings of @size bytes each; NULL (and 0) for none. */
static void *copy_strings(const void *src, unsigned n, size_t size)
{
	void *p;

	if (n == 0)
		return NULL;
	p = calloc(n, size);
	if (p)
		memcpy(p, src, (size_t)n * size);
	return p;
}

/**
 * subbuf_kb_preferred() - the sub-buffer size tried for a session that names none.
 * @buffer_kb: its ring, per CPU
 *
 * Return: SUBBUF_KB_PREFERRED, halved until the ring holds SUBBUFS_PER_RING_MIN
 * of them; 0 where that leaves the smallest size (the kernel's default then).
 */
uint32_t subbuf_kb_preferred(uint32_t buffer_kb)
{
	uint32_t kb = SUBBUF_KB_PREFERRED;

	while (kb > SUBBUF_KB_MIN && kb * SUBBUFS_PER_RING_MIN > buffer_kb)
		kb /= 2;
	return kb > SUBBUF_KB_MIN ? kb : 0;
}

/**
 * session_config_memory() - the memory a session takes: rings and history.
 * @c: configuration
 * @n_cpus: CPUs it captures
 *
 * Return: bytes: its ring (all CPUs), its triggers' small rings, and a
 * flight recorder's history: the budget of the memory backend, or the
 * kernel backend's snapshot buffer (counted even where the kernel has none).
 */
uint64_t session_config_memory(const struct session_config *c, unsigned n_cpus)
{
	uint64_t ring_kb = c->buffer_kb + (uint64_t)c->n_triggers * TRIGGER_BUFFER_KB;

	/* A kernel-backend history has a snapshot buffer as large as its ring beside it. */
	if (c->mode == FTRACED_MODE_FLIGHT && c->backend == FTRACED_FLIGHT_KERNEL)
		ring_kb += c->buffer_kb;

	return ring_kb * 1024 * n_cpus + (c->backend == FTRACED_FLIGHT_MEMORY ? c->flight_size : 0) +
	       c->keep_size * n_cpus;
}

/*
 * record -m: what each CPU keeps, the most recent, lives in the daemon's
 * memory until the stop (a chunk ring, as a flight recorder's history), so
 * all CPUs together are held to what a flight recorder may take. That one
 * sub-buffer fits is checked once the kernel says its size
 * (session_setup_files()).
 */
static int keep_option(const struct ctl_request *req, unsigned n_cpus, uint64_t avail_kb,
		       struct session_config *c, char *error, size_t n_error)
{
	uint64_t avail = avail_kb * 1024;

	if (!ctl_request_has(req, FTRACED_ATTR_KEEP_KB))
		return 0;
	if (c->mode != FTRACED_MODE_RECORD) {
		snprintf(error, n_error, "-m keeps the most recent data of a record; a session "
			 "keeps it with --mode flight --flight-size SIZE");
		return -EINVAL;
	}
	if (req->keep_kb == 0 || req->keep_kb > FTRACED_KEEP_KB_MAX) {
		snprintf(error, n_error, "-m %" PRIu64 " is no size: KiB per CPU, from one "
			 "sub-buffer up to %" PRIu64 " (FTRACED_KEEP_KB_MAX)", req->keep_kb,
			 FTRACED_KEEP_KB_MAX);
		return -EINVAL;
	}
	/* At most FTRACED_KEEP_KB_MAX: no overflow below. */
	c->keep_size = req->keep_kb * 1024;
	if (avail > 0 && c->keep_size * n_cpus > avail / 100 * FLIGHT_MEM_PERCENT_MAX) {
		snprintf(error, n_error, "-m %" PRIu64 " keeps up to %" PRIu64 " KiB on %u CPUs in "
			 "the daemon's memory, over %u%% of available memory (%" PRIu64 " KiB)",
			 req->keep_kb, req->keep_kb * n_cpus, n_cpus, FLIGHT_MEM_PERCENT_MAX,
			 avail_kb);
		return -ENOMEM;
	}
	return 0;
}

/*
 * One limit over all sessions (memory-limit in ftraced.conf): per-session
 * checks against MemAvailable alone let four sessions take 8 GB.
 */
static int check_memory_limit(const struct session_config *c, unsigned n_cpus,
			      const struct memory_budget *mem, char *error, size_t n_error)
{
	uint64_t need = session_config_memory(c, n_cpus);

	if (!mem->limit || mem->committed + need <= mem->limit)
		return 0;
	snprintf(error, n_error, "the session would take %" PRIu64 " KiB of memory (rings and "
		 "history); with the %" PRIu64 " KiB other sessions take, that is over the daemon's "
		 "limit of %" PRIu64 " KiB (memory-limit in ftraced.conf)", need / 1024,
		 mem->committed / 1024, mem->limit / 1024);
	return -ENOMEM;
}

/*
 * --top-level: the lease changes what every other tool on the machine
 * sees, so only root may ask; a persistent backend's ring is an instance
 * the kernel mapped at boot, never the top level.
 */
static int top_level_option(const struct ctl_request *req, uid_t owner, struct session_config *c,
			    char *error, size_t n_error)
{
	c->top_level = req->top_level;
	if (c->top_level && owner != 0) {
		snprintf(error, n_error, "only root may lease the top-level buffer (--top-level): "
			 "every tracing tool on the machine shares it");
		return -EPERM;
	}
	if (c->top_level && c->mode == FTRACED_MODE_FLIGHT &&
	    c->backend == FTRACED_FLIGHT_PERSISTENT) {
		snprintf(error, n_error, "--top-level and the persistent flight backend exclude "
			 "each other: that backend's ring is an instance the kernel mapped at boot");
		return -EINVAL;
	}
	/* Triggers live in the event's files: only an instance the session removes drops them. */
	if (ctl_request_has(req, FTRACED_ATTR_EVENT_TRIGGER) &&
	    (c->top_level || c->backend == FTRACED_FLIGHT_PERSISTENT)) {
		snprintf(error, n_error, "-R is for the session's own instance: %s would keep the "
			 "trigger after the session", c->top_level ? "the leased top level" :
			 "the persistent flight backend's boot-mapped instance");
		return -EINVAL;
	}
	return 0;
}

/* The request's lists and strings, copied into @c (freed with it). Return: 0 or -ENOMEM. */
static int copy_lists(const struct ctl_request *req, struct session_config *c)
{
	if (req->n_probes > 0) {
		c->probes = copy_text_strings(req->text, req->probes, req->n_probes);
		if (!c->probes)
			return -ENOMEM;
		c->n_probes = req->n_probes;
	}
	if (req->n_options > 0) {
		c->trace_options = copy_text_strings(req->text, req->options, req->n_options);
		if (!c->trace_options)
			return -ENOMEM;
		c->n_trace_options = req->n_options;
	}
	if (ctl_request_cpumask(req) && !(c->cpumask = strdup(ctl_request_cpumask(req))))
		return -ENOMEM;
	if (event_specs(req, c) < 0)
		return -ENOMEM;
	c->triggers = copy_strings(req->triggers, req->n_triggers, sizeof(*c->triggers));
	c->n_excluded = req->n_excluded;
	c->excluded = copy_strings(req->excluded, req->n_excluded, sizeof(*c->excluded));
	if (ctl_request_has(req, FTRACED_ATTR_FILTER))
		c->filter = strdup(req->filter);
	if (ctl_request_has(req, FTRACED_ATTR_CLOCK))
		c->clock = strdup(req->clock);
	if ((c->n_triggers > 0 && !c->triggers) || (c->n_excluded > 0 && !c->excluded) ||
	    (ctl_request_has(req, FTRACED_ATTR_FILTER) && !c->filter) ||
	    (ctl_request_has(req, FTRACED_ATTR_CLOCK) && !c->clock))
		return -ENOMEM;
	return 0;
}

/**
 * session_config_from_request() - the configuration a RECORD or CREATE request asks for.
 * @req: the parsed request
 * @owner: uid of the client
 * @n_cpus: CPUs the session captures (sizes are per CPU)
 * @mem: memory available now, and the daemon's limit over all sessions
 * @ret: the configuration, on success; free with session_config_done()
 * @error: receives a message for the client on failure
 * @n_error: its size
 *
 * Return: 0, or -errno with @error set (-ENOMEM may leave it empty).
 */
int session_config_from_request(const struct ctl_request *req, uid_t owner, unsigned n_cpus,
				const struct memory_budget *mem, struct session_config *ret,
				char *error, size_t n_error)
{
	_cleanup_(session_config_done) struct session_config c = {};
	int r;

	if (n_cpus == 0)
		return -EINVAL;
	c.mode = req->type == FTRACED_MSG_RECORD ? FTRACED_MODE_RECORD : req->mode;
	r = check_common(req, n_cpus, mem->available_kb, error, n_error);
	if (r < 0)
		return r;
	if (c.mode == FTRACED_MODE_FLIGHT) {
		r = flight_options(req, n_cpus, mem->available_kb, &c, error, n_error);
		if (r < 0)
			return r;
	} else if (req->n_triggers > 0 || ctl_request_has(req, FTRACED_ATTR_FLIGHT_SIZE) ||
		   ctl_request_has(req, FTRACED_ATTR_FLIGHT_BACKEND) ||
		   ctl_request_has(req, FTRACED_ATTR_INSTANCE)) {
		snprintf(error, n_error, "flight recorder options need --mode flight");
		return -EINVAL;
	}
	if (c.mode == FTRACED_MODE_CONTINUOUS || c.mode == FTRACED_MODE_FLIGHT) {
		r = file_options(req, owner, &c, error, n_error);
		if (r < 0)
			return r;
	} else if (c.mode != FTRACED_MODE_RECORD) {
		snprintf(error, n_error, "this mode is not supported yet");
		return -EOPNOTSUPP;
	}

	/* A persistent backend's ring is the kernel's, reserved at boot: none to allocate. */
	if (c.backend != FTRACED_FLIGHT_PERSISTENT)
		c.buffer_kb = req->buffer_kb ?: default_buffer_kb(n_cpus, mem->available_kb);
	c.subbuf_kb = req->subbuf_kb;
	c.n_triggers = req->n_triggers;
	r = keep_option(req, n_cpus, mem->available_kb, &c, error, n_error);
	if (r < 0)
		return r;
	r = check_memory_limit(&c, n_cpus, mem, error, n_error);
	if (r < 0)
		return r;
	c.zstd = req->compression == FTRACED_COMPRESSION_ZSTD;
	c.level = ctl_request_has(req, FTRACED_ATTR_LEVEL) ? req->level : ZSTD_LEVEL_DEFAULT;
	c.duration_ms = req->duration_ms;
	c.stacktrace = req->stacktrace;
	c.rt_priority = req->rt_priority;
	c.read_interval_us = req->read_interval_us;
	c.proc_map = req->proc_map;
	if (c.proc_map && req->n_pids == 0) {
		snprintf(error, n_error, "--proc-map saves the memory maps of the processes traced: "
			 "give them with -P PID, or a command with -F");
		return -EINVAL;
	}
	c.ignore_missing = req->ignore_missing;
	if (req->follow_fork && req->n_pids == 0) {
		snprintf(error, n_error, "-c follows the children of the processes given with -P "
			 "(or record -F's command)");
		return -EINVAL;
	}
	c.n_pids = req->n_pids;
	memcpy(c.pids, req->pids, sizeof(c.pids));
	c.follow_fork = req->follow_fork;
	/* A probe's fetch arguments read any kernel or process memory. */
	if (req->n_probes > 0 && owner != 0) {
		snprintf(error, n_error, "only root may add probes (--probe): a probe reads kernel "
			 "and process memory");
		return -EPERM;
	}
	r = tracer_options(req, &c.tracer, error, n_error);
	if (r == -ENOMEM)
		snprintf(error, n_error, "out of memory");
	if (r < 0)
		return r;
	/* After the tracer is known: -p nop alone records nothing either. */
	if (req->n_events == 0 && !c.tracer.name && req->n_probes == 0) {
		snprintf(error, n_error, "nothing to record: give events with -e SYSTEM:EVENT, a "
			 "tracer with -p, or a --probe");
		return -EINVAL;
	}
	c.no_filter = req->no_filter;
	r = top_level_option(req, owner, &c, error, n_error);
	if (r < 0)
		return r;
	if (copy_lists(req, &c) < 0) {
		snprintf(error, n_error, "out of memory");
		return -ENOMEM;
	}
	*ret = c;
	c = (struct session_config){};
	return 0;
}

/**
 * session_config_done() - free what a configuration holds; it is then empty.
 * @c: configuration, filled or zeroed
 */
void session_config_done(struct session_config *c)
{
	free(c->events);
	free(c->event_text);
	free(c->excluded);
	if (c->event_filters)
		for (unsigned k = 0; k < c->n_events; k++)
			free(c->event_filters[k]);
	free(c->event_filters);
	if (c->event_triggers)
		for (unsigned k = 0; k < c->n_events; k++)
			free(c->event_triggers[k]);
	free(c->event_triggers);
	free(c->tracer.name);
	strv_free(c->tracer.filter);
	strv_free(c->tracer.notrace);
	strv_free(c->tracer.graph);
	strv_free(c->probes);
	strv_free(c->trace_options);
	free(c->cpumask);
	free(c->triggers);
	free(c->filter);
	free(c->clock);
	free(c->on_segment);
	*c = (struct session_config){};
}
