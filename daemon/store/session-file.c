// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Session files (sessions.d/NAME.conf): "key = value" lines with the same
 * keys as `ftracectl create`'s options, '#' comments, blank lines. A file
 * becomes exactly the CREATE request a client would send, so the daemon
 * checks it on the same path. Pure: no I/O, no logging; the first problem
 * is reported with its line. The only allocations are the request's event
 * list (ctl_put_event()) and session_file_format_new()'s text: a file may
 * name every event of a kernel.
 *
 *   # /etc/ftraced/sessions.d/background.conf
 *   events = sched:sched_switch, irq:*
 *   segment-size = 64M
 *   max-total = 2G
 *   keep-free = 10%
 *
 *   # /etc/ftraced/sessions.d/incidents.conf: a flight recorder
 *   mode = flight
 *   events = sched, irq
 *   flight-size = 256M
 *   trigger = oom
 *   trigger = signal=SIGSEGV,post=2s
 *
 * A key given more than once adds to a list (events, triggers, function
 * globs, probes); event-filter, like -f, filters the event listed just
 * before it; exclude-events, like trace-cmd's -v, leaves events out.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/base/keyfile.h"
#include "daemon/store/session-file.h"
#include "ftraced/macro.h"
#include "lib/ctl/ctl-proto.h"
#include "lib/ctl/ctl-reply.h"
#include "lib/parse-util.h"

#define SESSION_FILE_KEYS_MAX 48 /* more than there are keys: an unknown one fails anyway */

/* events, or exclude-events (@attr EXCLUDE_EVENT): a comma-separated list of specs. */
static int add_events(struct ctl_builder *b, enum ftraced_attr attr, char *list, unsigned *total,
		      char *error, size_t n_error)
{
	char *save = NULL;
	int n = 0;

	for (char *e = strtok_r(list, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
		e = keyfile_trim(e);
		if (!*e)
			continue;
		if (!ctl_string_valid(FTRACED_ATTR_EVENT, e, FTRACED_EVENT_SPEC_MAX)) {
			snprintf(error, n_error, "invalid event '%.40s' (all, SYSTEM, SYSTEM:EVENT or "
				 "EVENT; globs allowed)", e);
			return -EINVAL;
		}
		if (++*total > FTRACED_EVENTS_PER_REQUEST_MAX) {
			snprintf(error, n_error, "more than %u events (the protocol's limit)",
				 FTRACED_EVENTS_PER_REQUEST_MAX);
			return -EINVAL;
		}
		if (attr == FTRACED_ATTR_EVENT)
			ctl_put_event(b, attr, e);
		else
			ctl_put_string(b, attr, e);
		n++;
	}
	if (n == 0) {
		snprintf(error, n_error, "no event given");
		return -EINVAL;
	}
	return n;
}

static int put_backend(struct ctl_builder *b, const char *v, char *error, size_t n_error)
{
	int k = ctl_flight_backend_parse(v);

	if (k < 0) {
		snprintf(error, n_error, "unknown flight backend '%s' (memory, kernel, persistent)",
			 v);
		return -EINVAL;
	}
	ctl_put_u32(b, FTRACED_ATTR_FLIGHT_BACKEND, (uint32_t)k);
	return 0;
}

static int put_size(struct ctl_builder *b, enum ftraced_attr a, const char *v, char *error,
		    size_t n_error)
{
	uint64_t x;

	if (parse_size(v, &x) < 0) {
		snprintf(error, n_error, "invalid size '%s' (e.g. 64M, 2G)", v);
		return -EINVAL;
	}
	ctl_put_u64(b, a, x);
	return 0;
}

static int put_duration(struct ctl_builder *b, enum ftraced_attr a, const char *v, char *error,
			size_t n_error)
{
	uint64_t ms;

	if (parse_duration_ms(v, &ms) < 0) {
		snprintf(error, n_error, "invalid duration '%s' (e.g. 30s, 10m, 24h, 7d; from 1 ms "
			 "to 30 days)", v);
		return -EINVAL;
	}
	ctl_put_u64(b, a, ms);
	return 0;
}

/* A plain number from @min to @max: the protocol parser's bounds for @a. */
static int put_number(struct ctl_builder *b, enum ftraced_attr a, const char *v, uint64_t min,
		      uint64_t max, char *error, size_t n_error)
{
	uint64_t x;

	if (parse_size(v, &x) < 0 || x < min || x > max || strpbrk(v, "KMGTkB")) {
		snprintf(error, n_error, "invalid number '%s' (%llu to %llu)", v,
			 (unsigned long long)min, (unsigned long long)max);
		return -EINVAL;
	}
	ctl_put_u32(b, a, (uint32_t)x);
	return 0;
}

/* What a file has said so far that the request needs at its end. */
struct file_state {
	char name[FTRACED_NAME_MAX + 1];
	uint32_t mode;
	unsigned n_events;
	bool event_filtered;   /* the last event listed has its event-filter */
	bool event_triggered;  /* ... and its event-trigger */
	unsigned n_excluded;   /* exclude-events */
	bool after_exclude;    /* the last list was exclude-events: no event-filter now */
	bool source;           /* a tracer or a probe: something to record without events */
	unsigned n_triggers;
	unsigned n_functions;  /* function-filter, function-notrace, graph-function together */
	unsigned n_probes;
	unsigned n_options;
	unsigned n_pids;
};

/* Keys that may be given more than once, each adding to a list. */
static bool key_repeats(const char *key)
{
	static const char *const repeating[] = {
		"event", "events", "event-filter", "event-trigger", "trigger", "function-filter",
		"exclude-event", "exclude-events",
		"function-notrace", "graph-function", "probe", "option", "pid",
	};

	for (size_t k = 0; k < ELEMENTSOF(repeating); k++)
		if (strcmp(key, repeating[k]) == 0)
			return true;
	return false;
}

/* Keys whose value is one string attribute, checked by the protocol's own rule. */
static const struct {
	const char *key;
	enum ftraced_attr attr;
	size_t max;
} string_keys[] = {
	{ "filter", FTRACED_ATTR_FILTER, FTRACED_FILTER_MAX },
	{ "clock", FTRACED_ATTR_CLOCK, FTRACED_NAME_MAX },
	{ "on-segment", FTRACED_ATTR_ON_SEGMENT, FTRACED_COMMAND_MAX },
	{ "tracer", FTRACED_ATTR_TRACER, FTRACED_TRACER_MAX },
	{ "function-filter", FTRACED_ATTR_FTRACE_FILTER, FTRACED_FUNCTION_MAX },
	{ "function-notrace", FTRACED_ATTR_FTRACE_NOTRACE, FTRACED_FUNCTION_MAX },
	{ "graph-function", FTRACED_ATTR_GRAPH_FUNCTION, FTRACED_FUNCTION_MAX },
	{ "probe", FTRACED_ATTR_PROBE, FTRACED_PROBE_MAX },
	{ "option", FTRACED_ATTR_TRACE_OPTION, FTRACED_OPTION_MAX },
	{ "cpumask", FTRACED_ATTR_CPUMASK, FTRACED_CPUMASK_MAX },
};

/* Keys whose value is yes or no, an attribute of 1 when yes. */
static const struct {
	const char *key;
	enum ftraced_attr attr;
} flag_keys[] = {
	{ "stacktrace", FTRACED_ATTR_STACKTRACE },
	{ "ignore-missing", FTRACED_ATTR_IGNORE_MISSING },
	{ "func-stack", FTRACED_ATTR_FUNC_STACK },
	{ "no-filter", FTRACED_ATTR_NO_FILTER },
	{ "top-level", FTRACED_ATTR_TOP_LEVEL },
	{ "children", FTRACED_ATTR_FOLLOW_FORK },
};

static int parse_line(struct ctl_builder *b, const char *key, char *v, struct file_state *st,
		      char *error, size_t n_error)
{
	if (strcmp(key, "name") == 0) {
		if (strlen(v) > FTRACED_NAME_MAX || !ctl_name_valid(v)) {
			snprintf(error, n_error, "invalid session name '%.70s'", v);
			return -EINVAL;
		}
		strcpy(st->name, v);
		return 0;
	}
	if (strcmp(key, "mode") == 0) {
		if (strcmp(v, "continuous") == 0) {
			st->mode = FTRACED_MODE_CONTINUOUS;
		} else if (strcmp(v, "flight") == 0) {
			st->mode = FTRACED_MODE_FLIGHT;
		} else {
			snprintf(error, n_error, "unknown mode '%s' (continuous, flight)", v);
			return -EINVAL;
		}
		return 0;
	}
	if (strcmp(key, "event") == 0 || strcmp(key, "events") == 0) {
		int r = add_events(b, FTRACED_ATTR_EVENT, v, &st->n_events, error, n_error);

		st->event_filtered = false;
		st->event_triggered = false;
		st->after_exclude = false;
		return r < 0 ? r : 0;
	}
	if (strcmp(key, "exclude-event") == 0 || strcmp(key, "exclude-events") == 0) {
		/* trace-cmd record -v: these events are left out of the others'. */
		int r = add_events(b, FTRACED_ATTR_EXCLUDE_EVENT, v, &st->n_excluded, error,
				   n_error);

		st->after_exclude = true;
		return r < 0 ? r : 0;
	}
	if (strcmp(key, "event-filter") == 0) {
		/* Like -f: for the event listed just before (the last of an "events" list). */
		if (st->after_exclude) {
			snprintf(error, n_error, "event-filter applies to the event listed just "
				 "before it, and that one is excluded");
			return -EINVAL;
		}
		if (st->n_events == 0 || st->event_filtered) {
			snprintf(error, n_error, "event-filter applies to the event listed just "
				 "before it: %s", st->n_events ? "it already has one" : "there is none");
			return -EINVAL;
		}
		if (!ctl_string_valid(FTRACED_ATTR_EVENT_FILTER, v, FTRACED_FILTER_MAX)) {
			snprintf(error, n_error, "invalid event-filter: longer than %u bytes or not "
				 "printable ASCII", FTRACED_FILTER_MAX);
			return -EINVAL;
		}
		ctl_put_event(b, FTRACED_ATTR_EVENT_FILTER, v);
		st->event_filtered = true;
		return 0;
	}
	if (strcmp(key, "event-trigger") == 0) {
		/* Like -R: for the event listed just before, once. */
		if (st->after_exclude || st->n_events == 0 || st->event_triggered) {
			snprintf(error, n_error, "event-trigger applies to the event listed just "
				 "before it: %s", st->after_exclude ? "that one is excluded" :
				 st->n_events ? "it already has one" : "there is none");
			return -EINVAL;
		}
		if (!ctl_string_valid(FTRACED_ATTR_EVENT_TRIGGER, v, FTRACED_EVENT_TRIGGER_MAX)) {
			snprintf(error, n_error, "invalid event-trigger: longer than %u bytes or not "
				 "printable ASCII", FTRACED_EVENT_TRIGGER_MAX);
			return -EINVAL;
		}
		ctl_put_event(b, FTRACED_ATTR_EVENT_TRIGGER, v);
		st->event_triggered = true;
		return 0;
	}
	if (strcmp(key, "max-graph-depth") == 0)
		return put_number(b, FTRACED_ATTR_MAX_GRAPH_DEPTH, v, 1, INT32_MAX, error, n_error);
	if (strcmp(key, "flight-backend") == 0)
		return put_backend(b, v, error, n_error);
	if (strcmp(key, "boot-instance") == 0) {
		if (!ctl_string_valid(FTRACED_ATTR_INSTANCE, v, FTRACED_NAME_MAX)) {
			snprintf(error, n_error, "invalid boot-instance '%s' (1 to %u letters, "
				 "digits, _ and -)", v, FTRACED_NAME_MAX);
			return -EINVAL;
		}
		ctl_put_string(b, FTRACED_ATTR_INSTANCE, v);
		return 0;
	}
	if (strcmp(key, "flight-size") == 0)
		return put_size(b, FTRACED_ATTR_FLIGHT_SIZE, v, error, n_error);
	if (strcmp(key, "trigger") == 0) {
		if (++st->n_triggers > FTRACED_TRIGGERS_PER_REQUEST_MAX) {
			snprintf(error, n_error, "more than %u triggers",
				 FTRACED_TRIGGERS_PER_REQUEST_MAX);
			return -EINVAL;
		}
		if (!ctl_string_valid(FTRACED_ATTR_TRIGGER, v, FTRACED_TRIGGER_MAX)) {
			snprintf(error, n_error, "invalid trigger: empty, longer than %u bytes, or "
				 "not printable ASCII", FTRACED_TRIGGER_MAX);
			return -EINVAL;
		}
		ctl_put_string(b, FTRACED_ATTR_TRIGGER, v);
		return 0;
	}
	for (size_t k = 0; k < ELEMENTSOF(string_keys); k++) {
		enum ftraced_attr a = string_keys[k].attr;

		if (strcmp(key, string_keys[k].key) != 0)
			continue;
		/* The request's own limits, said here with the line. */
		if ((a == FTRACED_ATTR_FTRACE_FILTER || a == FTRACED_ATTR_FTRACE_NOTRACE ||
		     a == FTRACED_ATTR_GRAPH_FUNCTION) &&
		    ++st->n_functions > FTRACED_FUNCTIONS_PER_REQUEST_MAX) {
			snprintf(error, n_error, "more than %u function globs",
				 FTRACED_FUNCTIONS_PER_REQUEST_MAX);
			return -EINVAL;
		}
		if (a == FTRACED_ATTR_PROBE && ++st->n_probes > FTRACED_PROBES_PER_REQUEST_MAX) {
			snprintf(error, n_error, "more than %u probes", FTRACED_PROBES_PER_REQUEST_MAX);
			return -EINVAL;
		}
		if (a == FTRACED_ATTR_TRACE_OPTION &&
		    ++st->n_options > FTRACED_OPTIONS_PER_REQUEST_MAX) {
			snprintf(error, n_error, "more than %u options", FTRACED_OPTIONS_PER_REQUEST_MAX);
			return -EINVAL;
		}
		if (!ctl_string_valid(string_keys[k].attr, v, string_keys[k].max)) {
			snprintf(error, n_error, "invalid %s: empty, longer than %zu bytes, or "
				 "characters it may not hold", key, string_keys[k].max);
			return -EINVAL;
		}
		ctl_put_string(b, string_keys[k].attr, v);
		st->source |= string_keys[k].attr == FTRACED_ATTR_TRACER ||
			      string_keys[k].attr == FTRACED_ATTR_PROBE;
		return 0;
	}
	if (strcmp(key, "compression") == 0) {
		if (strcmp(v, "zstd") != 0 && strcmp(v, "none") != 0) {
			snprintf(error, n_error, "unknown compression '%s' (zstd or none)", v);
			return -EINVAL;
		}
		ctl_put_u32(b, FTRACED_ATTR_COMPRESSION, strcmp(v, "none") == 0 ?
			    FTRACED_COMPRESSION_NONE : FTRACED_COMPRESSION_ZSTD);
		return 0;
	}
	if (strcmp(key, "level") == 0) {
		int level, consumed = 0;

		if (sscanf(v, "%d%n", &level, &consumed) != 1 || v[consumed] || level < -100 ||
		    level > 100) {
			snprintf(error, n_error, "invalid level '%s'", v);
			return -EINVAL;
		}
		ctl_put_u32(b, FTRACED_ATTR_LEVEL, (uint32_t)level);
		return 0;
	}
	for (size_t k = 0; k < ELEMENTSOF(flag_keys); k++) {
		if (strcmp(key, flag_keys[k].key) != 0)
			continue;
		if (strcmp(v, "yes") != 0 && strcmp(v, "no") != 0) {
			snprintf(error, n_error, "%s: '%.40s' is not yes or no", key, v);
			return -EINVAL;
		}
		if (strcmp(v, "yes") == 0)
			ctl_put_u32(b, flag_keys[k].attr, 1);
		return 0;
	}
	if (strcmp(key, "pid") == 0) {
		if (++st->n_pids > FTRACED_PIDS_PER_REQUEST_MAX) {
			snprintf(error, n_error, "more than %u pids", FTRACED_PIDS_PER_REQUEST_MAX);
			return -EINVAL;
		}
		return put_number(b, FTRACED_ATTR_PID, v, 1, INT32_MAX, error, n_error);
	}
	if (strcmp(key, "buffer-kb") == 0)
		return put_number(b, FTRACED_ATTR_BUFFER_KB, v, 0, UINT32_MAX, error, n_error);
	if (strcmp(key, "read-interval-us") == 0)
		return put_number(b, FTRACED_ATTR_READ_INTERVAL_US, v, FTRACED_READ_INTERVAL_MIN_US,
				  FTRACED_READ_INTERVAL_MAX_US, error, n_error);
	if (strcmp(key, "rt-priority") == 0)
		return put_number(b, FTRACED_ATTR_RT_PRIORITY, v, 1, FTRACED_RT_PRIORITY_MAX, error,
				  n_error);
	if (strcmp(key, "subbuf-kb") == 0)
		return put_number(b, FTRACED_ATTR_SUBBUF_KB, v, 0, UINT32_MAX, error, n_error);
	if (strcmp(key, "max-files") == 0)
		return put_number(b, FTRACED_ATTR_MAX_FILES, v, 0, UINT32_MAX, error, n_error);
	if (strcmp(key, "segment-size") == 0)
		return put_size(b, FTRACED_ATTR_SEGMENT_SIZE, v, error, n_error);
	if (strcmp(key, "max-total") == 0)
		return put_size(b, FTRACED_ATTR_MAX_TOTAL, v, error, n_error);
	if (strcmp(key, "segment-time") == 0)
		return put_duration(b, FTRACED_ATTR_SEGMENT_TIME_MS, v, error, n_error);
	if (strcmp(key, "max-age") == 0)
		return put_duration(b, FTRACED_ATTR_MAX_AGE_MS, v, error, n_error);
	if (strcmp(key, "keep-free") == 0) {
		size_t len = strlen(v);

		if (len > 1 && v[len - 1] == '%') {
			v[len - 1] = '\0';
			return put_number(b, FTRACED_ATTR_KEEP_FREE_PERCENT, keyfile_trim(v), 0, 99, error,
					  n_error);
		}
		return put_size(b, FTRACED_ATTR_KEEP_FREE, v, error, n_error);
	}
	snprintf(error, n_error, "unknown key '%.40s'", key);
	return -EINVAL;
}

/**
 * session_file_parse() - turn a session file into a CREATE request.
 * @text: the file's contents
 * @n: their length (at most SESSION_FILE_MAX)
 * @default_name: the session's name unless the file sets "name"
 * @b: receives the request
 * @error: receives the problem
 * @n_error: its size
 * @ret_line: the line of the problem (0: the file as a whole)
 *
 * Return: 0, or -EINVAL with @error and @ret_line set.
 */
int session_file_parse(const char *text, size_t n, const char *default_name,
		       struct ctl_builder *b, char *error, size_t n_error, unsigned *ret_line)
{
	struct file_state st = { .mode = FTRACED_MODE_CONTINUOUS };
	char seen[SESSION_FILE_KEYS_MAX][16];
	struct keyfile k;
	unsigned n_seen = 0;
	char *key, *v;
	int r;

	*ret_line = 0;
	if (n > SESSION_FILE_MAX || memchr(text, '\0', n)) {
		snprintf(error, n_error, "not a text file of at most %u bytes", SESSION_FILE_MAX);
		return -EINVAL;
	}
	ctl_builder_init(b, FTRACED_MSG_CREATE);
	keyfile_init(&k, text, n);
	while ((r = keyfile_next(&k, &key, &v, error, n_error)) > 0) {
		*ret_line = k.line;
		/* A key said twice is a mistake (the request would carry it twice). */
		if (!key_repeats(key)) {
			for (unsigned i = 0; i < n_seen; i++)
				if (strcmp(seen[i], key) == 0) {
					snprintf(error, n_error, "'%.40s' is set twice", key);
					return -EINVAL;
				}
			if (n_seen < SESSION_FILE_KEYS_MAX && strlen(key) < sizeof(seen[0]))
				strcpy(seen[n_seen++], key);
		}
		r = parse_line(b, key, v, &st, error, n_error);
		if (r < 0)
			return r;
	}
	if (r < 0) {
		*ret_line = k.line;
		return r;
	}
	*ret_line = 0;
	if (st.n_events == 0 && !st.source) {
		snprintf(error, n_error, "no events: add 'events = SYSTEM:EVENT, ...' (or 'tracer = "
			 "function')");
		return -EINVAL;
	}
	if (!st.name[0]) {
		if (strlen(default_name) > FTRACED_NAME_MAX || !ctl_name_valid(default_name)) {
			snprintf(error, n_error, "the file name is not a valid session name; add "
				 "'name = ...'");
			return -EINVAL;
		}
		strcpy(st.name, default_name);
	}
	ctl_put_string(b, FTRACED_ATTR_SESSION, st.name);
	ctl_put_u32(b, FTRACED_ATTR_MODE, st.mode);
	if (b->error) {
		snprintf(error, n_error, b->error == -E2BIG ? "events and their filters take more "
			 "than %u bytes" : b->error == -ENOMEM ? "out of memory" :
			 "too many options (at most %u bytes besides the events)",
			 b->error == -E2BIG ? FTRACED_EVENT_LIST_SIZE_MAX : FTRACED_MSG_SIZE_MAX);
		return -EINVAL;
	}
	return 0;
}

/*
 * Appends to a text being formatted. Past the buffer's end it goes on
 * counting, so a first pass with no buffer measures what a second needs.
 */
struct text {
	char *buf;
	size_t n;
	size_t used;
	bool overflow;
};

_printf_(2, 3)
static void add(struct text *t, const char *fmt, ...)
{
	bool fits = !t->overflow && t->used < t->n;
	va_list ap;
	int k;

	va_start(ap, fmt);
	k = vsnprintf(fits ? t->buf + t->used : NULL, fits ? t->n - t->used : 0, fmt, ap);
	va_end(ap);
	if (k < 0) {
		t->overflow = true;
		return;
	}
	if (!fits || (size_t)k >= t->n - t->used)
		t->overflow = true;
	t->used += (size_t)k;
}

static const char *key_of(enum ftraced_attr a)
{
	for (size_t k = 0; k < ELEMENTSOF(string_keys); k++)
		if (string_keys[k].attr == a)
			return string_keys[k].key;
	for (size_t k = 0; k < ELEMENTSOF(flag_keys); k++)
		if (flag_keys[k].attr == a)
			return flag_keys[k].key;
	return NULL;
}

/* A size in the largest unit that says it exactly: "64M", "2G", "4097". */
static void add_size(struct text *t, const char *key, uint64_t v)
{
	static const char units[] = "KMGT";
	int u = -1;

	while (u + 1 < (int)sizeof(units) - 1 && v > 0 && v % 1024 == 0) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		add(t, "%s = %" PRIu64 "\n", key, v);
	else
		add(t, "%s = %" PRIu64 "%c\n", key, v, units[u]);
}

/* A duration in the largest unit that says it exactly: "10m", "1d", "1500ms". */
static void add_duration(struct text *t, const char *key, uint64_t ms)
{
	static const struct {
		const char *unit;
		uint64_t ms;
	} units[] = { { "d", 86400000 }, { "h", 3600000 }, { "m", 60000 }, { "s", 1000 } };

	for (size_t k = 0; k < ELEMENTSOF(units); k++)
		if (ms >= units[k].ms && ms % units[k].ms == 0) {
			add(t, "%s = %" PRIu64 "%s\n", key, ms / units[k].ms, units[k].unit);
			return;
		}
	add(t, "%s = %" PRIu64 "ms\n", key, ms);
}

static void format_text(const struct ctl_request *req, struct text *t);

/**
 * session_file_format() - the session file that stands for a CREATE request.
 * @req: a parsed CREATE request
 * @buf: receives the text
 * @n: its size
 *
 * The inverse of session_file_parse(): parsing the text gives a request
 * with the same attributes. Sizes and times are written in the largest
 * unit that says them exactly. A session's saved
 * copy and `ftracectl save` are made with it.
 *
 * Return: the text's length; -ENOBUFS if it does not fit in @n; -E2BIG if
 * it would be longer than SESSION_FILE_MAX.
 */
int session_file_format(const struct ctl_request *req, char *buf, size_t n)
{
	struct text t = { .buf = buf, .n = n };

	if (n > 0)
		buf[0] = '\0';
	format_text(req, &t);
	if (t.used > SESSION_FILE_MAX)
		return -E2BIG;
	return t.overflow ? -ENOBUFS : (int)t.used;
}

static void format_text(const struct ctl_request *req, struct text *t)
{
	add(t, "name = %s\n", req->session);
	add(t, "mode = %s\n", req->mode == FTRACED_MODE_FLIGHT ? "flight" : "continuous");
	for (unsigned k = 0; k < req->n_events; k++) {
		const char *f = ctl_request_event_filter(req, k);

		add(t, "event = %s\n", ctl_request_event(req, k));
		if (f)
			add(t, "event-filter = %s\n", f);
		if (ctl_request_event_trigger(req, k))
			add(t, "event-trigger = %s\n", ctl_request_event_trigger(req, k));
	}
	for (unsigned k = 0; k < req->n_excluded; k++)
		add(t, "exclude-event = %s\n", req->excluded[k]);
	if (ctl_request_has(req, FTRACED_ATTR_FILTER))
		add(t, "filter = %s\n", req->filter);
	if (ctl_request_has(req, FTRACED_ATTR_CLOCK))
		add(t, "clock = %s\n", req->clock);
	if (ctl_request_has(req, FTRACED_ATTR_COMPRESSION))
		add(t, "compression = %s\n",
		    req->compression == FTRACED_COMPRESSION_NONE ? "none" : "zstd");
	if (ctl_request_has(req, FTRACED_ATTR_LEVEL))
		add(t, "level = %d\n", req->level);
	if (ctl_request_has(req, FTRACED_ATTR_BUFFER_KB))
		add(t, "buffer-kb = %" PRIu32 "\n", req->buffer_kb);
	if (ctl_request_has(req, FTRACED_ATTR_SUBBUF_KB))
		add(t, "subbuf-kb = %" PRIu32 "\n", req->subbuf_kb);
	if (ctl_request_has(req, FTRACED_ATTR_RT_PRIORITY))
		add(t, "rt-priority = %" PRIu32 "\n", req->rt_priority);
	if (ctl_request_has(req, FTRACED_ATTR_READ_INTERVAL_US))
		add(t, "read-interval-us = %" PRIu32 "\n", req->read_interval_us);
	for (size_t k = 0; k < ELEMENTSOF(flag_keys); k++) {
		uint32_t v = flag_keys[k].attr == FTRACED_ATTR_STACKTRACE ? req->stacktrace :
			     flag_keys[k].attr == FTRACED_ATTR_IGNORE_MISSING ? req->ignore_missing :
			     flag_keys[k].attr == FTRACED_ATTR_FUNC_STACK ? req->func_stack :
			     flag_keys[k].attr == FTRACED_ATTR_NO_FILTER ? req->no_filter :
			     flag_keys[k].attr == FTRACED_ATTR_TOP_LEVEL ? req->top_level :
			     req->follow_fork;

		if (v)
			add(t, "%s = yes\n", flag_keys[k].key);
	}
	for (unsigned k = 0; k < req->n_pids; k++)
		add(t, "pid = %" PRIu32 "\n", req->pids[k]);
	if (ctl_request_has(req, FTRACED_ATTR_TRACER))
		add(t, "tracer = %s\n", req->tracer);
	for (unsigned k = 0; k < req->n_functions; k++)
		add(t, "%s = %s\n", key_of(req->functions[k].attr),
		    req->text + req->functions[k].offset);
	if (ctl_request_has(req, FTRACED_ATTR_MAX_GRAPH_DEPTH))
		add(t, "max-graph-depth = %" PRIu32 "\n", req->max_graph_depth);
	for (unsigned k = 0; k < req->n_probes; k++)
		add(t, "probe = %s\n", req->text + req->probes[k]);
	for (unsigned k = 0; k < req->n_options; k++)
		add(t, "option = %s\n", req->text + req->options[k]);
	if (ctl_request_cpumask(req))
		add(t, "cpumask = %s\n", ctl_request_cpumask(req));
	if (ctl_request_has(req, FTRACED_ATTR_SEGMENT_SIZE))
		add_size(t, "segment-size", req->segment_size);
	if (ctl_request_has(req, FTRACED_ATTR_SEGMENT_TIME_MS))
		add_duration(t, "segment-time", req->segment_time_ms);
	if (ctl_request_has(req, FTRACED_ATTR_MAX_TOTAL))
		add_size(t, "max-total", req->max_total);
	if (ctl_request_has(req, FTRACED_ATTR_MAX_FILES))
		add(t, "max-files = %" PRIu32 "\n", req->max_files);
	if (ctl_request_has(req, FTRACED_ATTR_MAX_AGE_MS))
		add_duration(t, "max-age", req->max_age_ms);
	if (ctl_request_has(req, FTRACED_ATTR_KEEP_FREE))
		add_size(t, "keep-free", req->keep_free);
	if (ctl_request_has(req, FTRACED_ATTR_KEEP_FREE_PERCENT))
		add(t, "keep-free = %" PRIu32 "%%\n", req->keep_free_percent);
	if (ctl_request_has(req, FTRACED_ATTR_ON_SEGMENT))
		add(t, "on-segment = %s\n", req->on_segment);
	if (ctl_request_has(req, FTRACED_ATTR_FLIGHT_BACKEND))
		add(t, "flight-backend = %s\n", ctl_flight_backend_name(req->flight_backend));
	if (ctl_request_has(req, FTRACED_ATTR_INSTANCE))
		add(t, "boot-instance = %s\n", req->boot_instance);
	if (ctl_request_has(req, FTRACED_ATTR_FLIGHT_SIZE))
		add_size(t, "flight-size", req->flight_size);
	for (unsigned k = 0; k < req->n_triggers; k++)
		add(t, "trigger = %s\n", req->triggers[k]);
}

/**
 * session_file_format_new() - session_file_format() into memory of its size.
 * @req: a parsed CREATE request
 * @ret: receives the text (free())
 *
 * Return: its length; -E2BIG beyond SESSION_FILE_MAX; -ENOMEM.
 */
int session_file_format_new(const struct ctl_request *req, char **ret)
{
	struct text t = {};
	char *text;

	format_text(req, &t); /* measures */
	if (t.used > SESSION_FILE_MAX)
		return -E2BIG;
	text = malloc(t.used + 1);
	if (!text)
		return -ENOMEM;
	t = (struct text){ .buf = text, .n = t.used + 1 };
	format_text(req, &t);
	assert(!t.overflow);
	*ret = text;
	return (int)t.used;
}
