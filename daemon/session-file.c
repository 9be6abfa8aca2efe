// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Session files (sessions.d/NAME.conf): "key = value" lines with the same
 * keys as `ftracectl create`'s options, '#' comments, blank lines. A file
 * becomes exactly the CREATE request a client would send, so the daemon
 * checks it on the same path. Pure: no I/O, no allocation, no logging;
 * the first problem is reported with its line.
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
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon/keyfile.h"
#include "daemon/session-file.h"
#include "lib/ctl-proto.h"
#include "lib/parse-util.h"

#define SESSION_FILE_KEYS_MAX 32 /* more than there are keys: an unknown one fails anyway */

static int add_events(struct ctl_builder *b, char *list, unsigned *total, char *error,
		      size_t n_error)
{
	char *save = NULL;
	int n = 0;

	for (char *e = strtok_r(list, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
		e = keyfile_trim(e);
		if (!*e)
			continue;
		if (!ctl_string_valid(FTRACED_ATTR_EVENT, e, FTRACED_EVENT_SPEC_MAX)) {
			snprintf(error, n_error, "invalid event '%.40s' (SYSTEM:EVENT, SYSTEM:* or "
				 "SYSTEM)", e);
			return -EINVAL;
		}
		if (++*total > FTRACED_EVENTS_PER_REQUEST_MAX) {
			snprintf(error, n_error, "more than %u events", FTRACED_EVENTS_PER_REQUEST_MAX);
			return -EINVAL;
		}
		ctl_put_string(b, FTRACED_ATTR_EVENT, e);
		n++;
	}
	if (n == 0) {
		snprintf(error, n_error, "no event given");
		return -EINVAL;
	}
	return n;
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
		snprintf(error, n_error, "invalid duration '%s' (e.g. 30s, 10m, 24h, 7d)", v);
		return -EINVAL;
	}
	ctl_put_u64(b, a, ms);
	return 0;
}

static int put_number(struct ctl_builder *b, enum ftraced_attr a, const char *v, uint64_t max,
		      char *error, size_t n_error)
{
	uint64_t x;

	if (parse_size(v, &x) < 0 || x > max || strpbrk(v, "KMGTkB")) {
		snprintf(error, n_error, "invalid number '%s'", v);
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
	unsigned n_triggers;
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
		int r = add_events(b, v, &st->n_events, error, n_error);

		return r < 0 ? r : 0;
	}
	if (strcmp(key, "flight-backend") == 0) {
		if (strcmp(v, "memory") != 0 && strcmp(v, "kernel") != 0) {
			snprintf(error, n_error, "unknown flight backend '%s' (memory, kernel)", v);
			return -EINVAL;
		}
		ctl_put_u32(b, FTRACED_ATTR_FLIGHT_BACKEND, v[0] == 'k' ? FTRACED_FLIGHT_KERNEL :
			    FTRACED_FLIGHT_MEMORY);
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
	if (strcmp(key, "filter") == 0 || strcmp(key, "clock") == 0 ||
	    strcmp(key, "on-segment") == 0) {
		enum ftraced_attr a = key[0] == 'f' ? FTRACED_ATTR_FILTER :
				      key[0] == 'c' ? FTRACED_ATTR_CLOCK : FTRACED_ATTR_ON_SEGMENT;
		size_t max = a == FTRACED_ATTR_FILTER ? FTRACED_FILTER_MAX :
			     a == FTRACED_ATTR_CLOCK ? FTRACED_NAME_MAX : FTRACED_COMMAND_MAX;

		if (!ctl_string_valid(a, v, max)) {
			snprintf(error, n_error, "invalid %s: empty, longer than %zu bytes, or "
				 "characters it may not hold", key, max);
			return -EINVAL;
		}
		ctl_put_string(b, a, v);
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
	if (strcmp(key, "stacktrace") == 0 || strcmp(key, "ignore-missing") == 0) {
		if (strcmp(v, "yes") != 0 && strcmp(v, "no") != 0) {
			snprintf(error, n_error, "%s: '%.40s' is not yes or no", key, v);
			return -EINVAL;
		}
		if (strcmp(v, "yes") == 0)
			ctl_put_u32(b, key[0] == 's' ? FTRACED_ATTR_STACKTRACE :
				    FTRACED_ATTR_IGNORE_MISSING, 1);
		return 0;
	}
	if (strcmp(key, "buffer-kb") == 0)
		return put_number(b, FTRACED_ATTR_BUFFER_KB, v, UINT32_MAX, error, n_error);
	if (strcmp(key, "subbuf-kb") == 0)
		return put_number(b, FTRACED_ATTR_SUBBUF_KB, v, UINT32_MAX, error, n_error);
	if (strcmp(key, "max-files") == 0)
		return put_number(b, FTRACED_ATTR_MAX_FILES, v, UINT32_MAX, error, n_error);
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
			return put_number(b, FTRACED_ATTR_KEEP_FREE_PERCENT, keyfile_trim(v), 99, error,
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
		if (strcmp(key, "event") != 0 && strcmp(key, "events") != 0 &&
		    strcmp(key, "trigger") != 0) {
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
	if (st.n_events == 0) {
		snprintf(error, n_error, "no events: add 'events = SYSTEM:EVENT, ...'");
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
		snprintf(error, n_error, "too many events or options");
		return -EINVAL;
	}
	return 0;
}
