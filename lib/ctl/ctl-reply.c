// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Decoding replies (OK, ERROR, SESSIONS, STARTED, FINISHED) into plain
 * structs: what ftracectl prints and the metrics writer formats. Attributes
 * a newer daemon adds are skipped; malformed ones fail the whole reply.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ftraced/macro.h"
#include "lib/ctl/ctl-proto.h"
#include "lib/ctl/ctl-reply.h"

static int add_cpu(struct ftraced_cpu_stats **cpus, unsigned *n, const struct ctl_attr *a)
{
	struct ftraced_cpu_stats *c;

	if (*n >= 65536)
		return -EBADMSG;
	c = realloc(*cpus, (*n + 1) * sizeof(*c));
	if (!c)
		return -ENOMEM;
	*cpus = c;
	if (ctl_attr_cpu_stats(a, &c[*n]) < 0)
		return -EBADMSG;
	(*n)++;
	return 0;
}

/* One EVENT of a session record: as many as the daemon sends, up to the protocol's limit. */
static int add_event(struct session_info *s, const struct ctl_attr *a)
{
	char spec[FTRACED_EVENT_SPEC_MAX + 1];
	int r = ctl_attr_string(a, FTRACED_EVENT_SPEC_MAX, spec);

	if (r < 0)
		return r;
	if (s->n_events >= FTRACED_EVENTS_PER_REQUEST_MAX)
		return -EBADMSG;
	if (s->n_events == s->n_events_allocated) {
		unsigned want = MAX(s->n_events_allocated * 2, 16u);
		char **events = reallocarray(s->events, want, sizeof(*events));
		bool *skipped;

		if (!events)
			return -ENOMEM;
		s->events = events;
		skipped = reallocarray(s->skipped, want, sizeof(*skipped));
		if (!skipped)
			return -ENOMEM;
		s->skipped = skipped;
		s->n_events_allocated = want;
	}
	s->events[s->n_events] = strdup(spec);
	if (!s->events[s->n_events])
		return -ENOMEM;
	s->skipped[s->n_events++] = false;
	return 0;
}

/*
 * A SKIPPED_EVENT names one of the session's EVENTs (sent before it). The
 * daemon sends them in the events' order, so the search starts after the
 * last one found: thousands of skipped events cost no more than their list.
 */
static int mark_skipped(struct session_info *s, const struct ctl_attr *a)
{
	char spec[FTRACED_EVENT_SPEC_MAX + 1];
	int r = ctl_attr_string(a, FTRACED_EVENT_SPEC_MAX, spec);

	if (r < 0)
		return r;
	for (unsigned i = 0; i < s->n_events; i++) {
		unsigned k = (s->skipped_next + i) % s->n_events;

		if (!s->skipped[k] && strcmp(s->events[k], spec) == 0) {
			s->skipped[k] = true;
			s->n_skipped++;
			s->skipped_next = k + 1;
			return 0;
		}
	}
	return -EBADMSG;
}

static int decode_session(struct ctl_attr_iter *it, struct session_info *s, struct ctl_attr *next,
			  bool *has_next)
{
	struct ctl_attr a;
	int r;

	*has_next = false;
	while ((r = ctl_attr_next(it, &a)) > 0) {
		switch (a.type) {
		case FTRACED_ATTR_SESSION_BEGIN:
			*next = a;
			*has_next = true;
			return 0;
		case FTRACED_ATTR_SESSION:
			r = ctl_attr_string(&a, FTRACED_NAME_MAX, s->name);
			break;
		case FTRACED_ATTR_STATE:
			r = ctl_attr_string(&a, FTRACED_NAME_MAX, s->state);
			break;
		case FTRACED_ATTR_INSTANCE:
			r = ctl_attr_string(&a, FTRACED_NAME_MAX, s->instance);
			break;
		case FTRACED_ATTR_OWNER_UID:
			r = ctl_attr_u32(&a, &s->owner);
			break;
		case FTRACED_ATTR_COMPRESSION:
			r = ctl_attr_u32(&a, &s->compression);
			break;
		case FTRACED_ATTR_MODE:
			r = ctl_attr_u32(&a, &s->mode);
			break;
		case FTRACED_ATTR_SEGMENT_SEQ:
			r = ctl_attr_u32(&a, &s->segment_seq);
			s->has_segment_seq = true;
			break;
		case FTRACED_ATTR_SEGMENTS_KEPT:
			r = ctl_attr_u32(&a, &s->segments_kept);
			break;
		case FTRACED_ATTR_DISK_BYTES:
			r = ctl_attr_u64(&a, &s->disk_bytes);
			break;
		case FTRACED_ATTR_SEGMENT_SIZE:
			r = ctl_attr_u64(&a, &s->segment_size);
			break;
		case FTRACED_ATTR_SEGMENT_TIME_MS:
			r = ctl_attr_u64(&a, &s->segment_time_ms);
			break;
		case FTRACED_ATTR_MAX_TOTAL:
			r = ctl_attr_u64(&a, &s->max_total);
			break;
		case FTRACED_ATTR_MAX_FILES:
			r = ctl_attr_u32(&a, &s->max_files);
			break;
		case FTRACED_ATTR_MAX_AGE_MS:
			r = ctl_attr_u64(&a, &s->max_age_ms);
			break;
		case FTRACED_ATTR_KEEP_FREE:
			r = ctl_attr_u64(&a, &s->keep_free);
			break;
		case FTRACED_ATTR_KEEP_FREE_PERCENT:
			r = ctl_attr_u32(&a, &s->keep_free_percent);
			break;
		case FTRACED_ATTR_SUBBUF_SIZE:
			r = ctl_attr_u32(&a, &s->subbuf_size);
			break;
		case FTRACED_ATTR_BUFFER_KB:
			r = ctl_attr_u32(&a, &s->buffer_kb);
			break;
		case FTRACED_ATTR_RT_PRIORITY:
			r = ctl_attr_u32(&a, &s->rt_priority);
			break;
		case FTRACED_ATTR_EVENT:
			r = add_event(s, &a);
			break;
		case FTRACED_ATTR_EVENT_LIST:
			r = ctl_attr_event_list(&a, &s->event_list);
			s->has_event_list = r >= 0;
			break;
		case FTRACED_ATTR_SKIPPED_EVENT:
			r = mark_skipped(s, &a);
			break;
		case FTRACED_ATTR_ELAPSED_MS:
			r = ctl_attr_u64(&a, &s->elapsed_ms);
			break;
		case FTRACED_ATTR_STARTED_US:
			r = ctl_attr_u64(&a, &s->started_us);
			break;
		case FTRACED_ATTR_LAST_SNAPSHOT_US:
			r = ctl_attr_u64(&a, &s->last_snapshot_us);
			break;
		case FTRACED_ATTR_LAST_SNAPSHOT:
			r = ctl_attr_string(&a, FTRACED_PATH_MAX, s->last_snapshot);
			break;
		case FTRACED_ATTR_FILE_BYTES:
			r = ctl_attr_u64(&a, &s->file_bytes);
			s->has_file_bytes = true;
			break;
		case FTRACED_ATTR_ERRNO: {
			uint32_t e;

			r = ctl_attr_u32(&a, &e);
			s->error = -(int)e;
			break;
		}
		case FTRACED_ATTR_MESSAGE:
			r = ctl_attr_string(&a, FTRACED_MESSAGE_MAX, s->message);
			break;
		case FTRACED_ATTR_WARNING:
			r = ctl_attr_string(&a, FTRACED_MESSAGE_MAX, s->warning);
			break;
		case FTRACED_ATTR_GAP:
			r = ctl_attr_string(&a, FTRACED_MESSAGE_MAX, s->gap);
			break;
		case FTRACED_ATTR_HISTORY_FROM:
			r = ctl_attr_string(&a, sizeof(s->history_from) - 1, s->history_from);
			break;
		case FTRACED_ATTR_EVENTS_DISCARDED:
			r = ctl_attr_u64(&a, &s->discarded);
			break;
		case FTRACED_ATTR_CPU:
			r = add_cpu(&s->cpus, &s->n_cpus, &a);
			break;
		case FTRACED_ATTR_CPU_SEGMENT:
			r = add_cpu(&s->cpus_segment, &s->n_cpus_segment, &a);
			break;
		case FTRACED_ATTR_FLIGHT_BACKEND:
			r = ctl_attr_u32(&a, &s->flight_backend);
			break;
		case FTRACED_ATTR_FLIGHT_SIZE:
			r = ctl_attr_u64(&a, &s->flight_size);
			break;
		case FTRACED_ATTR_HISTORY_MS:
			r = ctl_attr_u64(&a, &s->history_ms);
			s->has_history_ms = true;
			break;
		case FTRACED_ATTR_HISTORY_RAW_BYTES:
			r = ctl_attr_u64(&a, &s->history_raw_bytes);
			break;
		case FTRACED_ATTR_HISTORY_BYTES:
			r = ctl_attr_u64(&a, &s->history_bytes);
			break;
		case FTRACED_ATTR_EVICTED_RAW_BYTES:
			r = ctl_attr_u64(&a, &s->evicted_raw_bytes);
			break;
		case FTRACED_ATTR_KEEP_KB:
			r = ctl_attr_u64(&a, &s->keep_kb);
			break;
		case FTRACED_ATTR_SNAPSHOTS:
			r = ctl_attr_u32(&a, &s->snapshots);
			break;
		case FTRACED_ATTR_DIRECTORY:
			r = ctl_attr_string(&a, FTRACED_PATH_MAX, s->directory);
			break;
		case FTRACED_ATTR_RECOVERED:
			r = ctl_attr_string(&a, FTRACED_PATH_MAX, s->recovered);
			break;
		case FTRACED_ATTR_TRIGGER_STATUS:
			if (s->n_triggers >= FTRACED_TRIGGERS_PER_REQUEST_MAX)
				return -EBADMSG;
			r = ctl_attr_string(&a, FTRACED_MESSAGE_MAX, s->triggers[s->n_triggers]);
			if (r >= 0)
				s->n_triggers++;
			break;
		case FTRACED_ATTR_NOTE:
			r = ctl_attr_string(&a, FTRACED_MESSAGE_MAX, s->note);
			break;
		case FTRACED_ATTR_SESSION_COUNTERS:
			r = ctl_attr_session_counters(&a, &s->counters);
			break;
		default:
			break; /* newer daemons may add attributes */
		}
		if (r < 0)
			return r;
	}
	return r;
}

/**
 * ctl_flight_backend_name() - a flight backend as ftracectl spells it.
 * @backend: enum ftraced_flight_backend
 *
 * Return: "memory", "kernel", "persistent" or "unknown".
 */
const char *ctl_flight_backend_name(uint32_t backend)
{
	switch (backend) {
	case FTRACED_FLIGHT_MEMORY:
		return "memory";
	case FTRACED_FLIGHT_KERNEL:
		return "kernel";
	case FTRACED_FLIGHT_PERSISTENT:
		return "persistent";
	default:
		return "unknown";
	}
}

/**
 * ctl_flight_backend_parse() - a flight backend by the name ftracectl spells it.
 * @name: "memory", "kernel" or "persistent"
 *
 * Return: the enum ftraced_flight_backend, or -EINVAL.
 */
int ctl_flight_backend_parse(const char *name)
{
	for (uint32_t k = 0; k < _FTRACED_FLIGHT_BACKEND_MAX; k++)
		if (strcmp(name, ctl_flight_backend_name(k)) == 0)
			return (int)k;
	return -EINVAL;
}

/**
 * ctl_reply_decode() - decode one reply message.
 * @buf: the message
 * @n: its length
 * @ret: the decoded reply (free with ctl_reply_done())
 *
 * Return: 0, -EBADMSG for a malformed reply, or -ENOMEM.
 */
int ctl_reply_decode(const void *buf, size_t n, struct reply *ret)
{
	struct ctl_attr_iter it;
	struct ctl_attr a;
	struct ctl_msg m;
	bool has_next;
	int r;

	*ret = (struct reply){};
	r = ctl_msg_parse(buf, n, &m);
	if (r < 0)
		return -EBADMSG;
	ret->type = m.type;
	ctl_attr_iter_init(&it, &m);
	if (m.type == FTRACED_MSG_ERROR) {
		while ((r = ctl_attr_next(&it, &a)) > 0) {
			uint32_t e;

			if (a.type == FTRACED_ATTR_ERRNO && ctl_attr_u32(&a, &e) >= 0)
				ret->error = -(int)e;
			else if (a.type == FTRACED_ATTR_MESSAGE)
				ctl_attr_string(&a, FTRACED_MESSAGE_MAX, ret->message);
			else if (a.type == FTRACED_ATTR_KERNEL_REFUSED && ctl_attr_u32(&a, &e) >= 0)
				ret->kernel_refused = e == 1;
		}
		if (ret->error >= 0)
			ret->error = -EIO;
		return 0;
	}
	if (m.type == FTRACED_MSG_OK) {
		while ((r = ctl_attr_next(&it, &a)) > 0) {
			if (a.type == FTRACED_ATTR_PATH)
				r = ctl_attr_string(&a, FTRACED_PATH_MAX, ret->path);
			else if (a.type == FTRACED_ATTR_NOTE)
				r = ctl_attr_string(&a, FTRACED_MESSAGE_MAX, ret->note);
			else if (a.type == FTRACED_ATTR_FILE_BYTES &&
				 (r = ctl_attr_u64(&a, &ret->file_bytes)) >= 0)
				ret->has_file_bytes = true;
			if (r < 0)
				return -EBADMSG;
		}
		return r < 0 ? -EBADMSG : 0;
	}
	has_next = false;
	while ((r = ctl_attr_next(&it, &a)) > 0 && a.type != FTRACED_ATTR_SESSION_BEGIN) {
		char line[FTRACED_MESSAGE_MAX + 1], **grown;

		if (a.type == FTRACED_ATTR_DAEMON_COUNTERS) {
			if (ctl_attr_daemon_counters(&a, &ret->daemon) < 0) {
				ctl_reply_done(ret);
				return -EBADMSG;
			}
			ret->has_daemon = true;
			continue;
		}
		if (a.type == FTRACED_ATTR_DAEMON_CPU) {
			if (ctl_attr_u64(&a, &ret->daemon_cpu_usec) < 0) {
				ctl_reply_done(ret);
				return -EBADMSG;
			}
			ret->has_daemon_cpu = true;
			continue;
		}
		if (a.type == FTRACED_ATTR_LEASE_HOLDER) {
			/* Shown to people only: one that does not parse is shown as unknown. */
			if (ctl_attr_string(&a, FTRACED_NAME_MAX, ret->lease_holder) < 0)
				snprintf(ret->lease_holder, sizeof(ret->lease_holder), "?");
			continue;
		}
		if (a.type != FTRACED_ATTR_PENDING_INSTANCE ||
		    ctl_attr_string(&a, FTRACED_MESSAGE_MAX, line) < 0)
			continue;
		grown = realloc(ret->pending, (ret->n_pending + 1) * sizeof(*grown));
		if (!grown)
			continue;
		ret->pending = grown;
		ret->pending[ret->n_pending] = strdup(line);
		if (ret->pending[ret->n_pending])
			ret->n_pending++;
	}
	if (r > 0 && a.type == FTRACED_ATTR_SESSION_BEGIN)
		has_next = true;
	while (has_next) {
		struct session_info *items;

		items = realloc(ret->sessions.items, (ret->sessions.n + 1) * sizeof(*items));
		if (!items) {
			ctl_reply_done(ret);
			return -ENOMEM;
		}
		ret->sessions.items = items;
		items[ret->sessions.n] = (struct session_info){};
		r = decode_session(&it, &items[ret->sessions.n++], &a, &has_next);
		if (r < 0) {
			ctl_reply_done(ret);
			return -EBADMSG;
		}
	}
	return 0;
}

/**
 * ctl_reply_has_event_lists() - do session records keep their events in the memfd?
 * @r: a decoded reply
 *
 * Return: true if one has ATTR_EVENT_LIST: ctl_reply_decode_event_lists() is due.
 */
bool ctl_reply_has_event_lists(const struct reply *r)
{
	for (size_t i = 0; i < r->sessions.n; i++)
		if (r->sessions.items[i].has_event_list)
			return true;
	return false;
}

/**
 * ctl_reply_decode_event_lists() - add the events the records left in the memfd.
 * @r: a decoded reply
 * @list: the memfd's content
 * @n: its length
 *
 * Each record's range holds EVENT and SKIPPED_EVENT attributes.
 *
 * Return: 0, -EBADMSG for a range beyond @n or a malformed list, -ENOMEM.
 */
int ctl_reply_decode_event_lists(struct reply *r, const void *list, size_t n)
{
	for (size_t i = 0; i < r->sessions.n; i++) {
		struct session_info *s = &r->sessions.items[i];
		const struct ftraced_event_list *l = &s->event_list;
		struct ctl_attr_iter it;
		struct ctl_attr a;
		int k;

		if (!s->has_event_list)
			continue;
		if (l->offset > n || l->size > n - l->offset)
			return -EBADMSG;
		it = (struct ctl_attr_iter){ .p = (const uint8_t *)list + l->offset, .n = l->size };
		while ((k = ctl_attr_next(&it, &a)) > 0) {
			if (a.type == FTRACED_ATTR_EVENT)
				k = add_event(s, &a);
			else if (a.type == FTRACED_ATTR_SKIPPED_EVENT)
				k = mark_skipped(s, &a);
			else
				k = -EBADMSG;
			if (k < 0)
				return k == -ENOMEM ? k : -EBADMSG;
		}
		if (k < 0)
			return -EBADMSG;
		s->has_event_list = false;
	}
	return 0;
}

void ctl_reply_done(struct reply *r)
{
	for (size_t i = 0; i < r->sessions.n; i++) {
		struct session_info *s = &r->sessions.items[i];

		for (unsigned k = 0; k < s->n_events; k++)
			free(s->events[k]);
		free(s->events);
		free(s->skipped);
		free(s->cpus);
		free(s->cpus_segment);
	}
	free(r->sessions.items);
	r->sessions = (struct sessions){};
	for (size_t i = 0; i < r->n_pending; i++)
		free(r->pending[i]);
	free(r->pending);
	r->pending = NULL;
	r->n_pending = 0;
	if (r->has_fd)
		close(r->fd);
	r->has_fd = false;
}


/* A session mode's name, as ftracectl's --mode spells it. */
const char *ctl_mode_name(uint32_t mode)
{
	switch (mode) {
	case FTRACED_MODE_RECORD:
		return "record";
	case FTRACED_MODE_CONTINUOUS:
		return "continuous";
	case FTRACED_MODE_FLIGHT:
		return "flight";
	default:
		return "unknown";
	}
}
