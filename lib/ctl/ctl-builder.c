// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Building control messages (ctl-proto.h): a header and attributes in a
 * fixed buffer. A message that does not fit sets the builder's error
 * instead of being cut: the caller says "too many for one request".
 *
 * Events are the one list without a small cap (a session may name every
 * event of a kernel), so they gather apart, in memory that grows: a short
 * list goes inline when it ends, a long one stays for the memfd the sender
 * passes with the message (ATTR_EVENT_LIST says where it is). No I/O, no
 * logging; the list is the only allocation.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ftraced/macro.h"
#include "lib/ctl/ctl-proto.h"

void ctl_builder_init(struct ctl_builder *b, enum ftraced_msg_type type)
{
	put_le32(b->buf, FTRACED_PROTO_MAGIC);
	put_le16(b->buf + 4, FTRACED_PROTO_VERSION);
	put_le16(b->buf + 6, (uint16_t)type);
	put_le32(b->buf + 8, 0);
	put_le32(b->buf + 12, 0);
	b->n = sizeof(struct ftraced_msg_hdr);
	b->error = 0;
	/* A builder's previous list was freed by ctl_builder_done(). */
	b->list = NULL;
	b->n_list = 0;
	b->n_list_allocated = 0;
	b->list_pending = 0;
}

/**
 * ctl_builder_done() - free a builder's event list.
 * @b: builder, initialised
 */
void ctl_builder_done(struct ctl_builder *b)
{
	free(b->list);
	b->list = NULL;
	b->n_list = 0;
	b->n_list_allocated = 0;
	b->list_pending = 0;
}

/**
 * ctl_put_event() - add an event attribute to the events being gathered.
 * @b: builder
 * @type: ATTR_EVENT, ATTR_EVENT_FILTER or ATTR_SKIPPED_EVENT
 * @s: its string
 *
 * The list is bounded by FTRACED_EVENT_LIST_SIZE_MAX; beyond it, or without
 * memory, the builder's error sticks.
 */
void ctl_put_event(struct ctl_builder *b, enum ftraced_attr type, const char *s)
{
	size_t len = strlen(s);

	if (b->error)
		return;
	if (len > UINT16_MAX ||
	    len + FTRACED_ATTR_HDR_SIZE > FTRACED_EVENT_LIST_SIZE_MAX - b->n_list) {
		b->error = -E2BIG;
		return;
	}
	if (b->n_list + FTRACED_ATTR_HDR_SIZE + len > b->n_list_allocated) {
		size_t want = MAX(b->n_list_allocated * 2, (size_t)4096);
		uint8_t *grown;

		want = MAX(want, b->n_list + FTRACED_ATTR_HDR_SIZE + len);
		grown = realloc(b->list, want);
		if (!grown) {
			b->error = -ENOMEM;
			return;
		}
		b->list = grown;
		b->n_list_allocated = want;
	}
	put_le16(b->list + b->n_list, (uint16_t)type);
	put_le16(b->list + b->n_list + 2, (uint16_t)len);
	memcpy(b->list + b->n_list + FTRACED_ATTR_HDR_SIZE, s, len);
	b->n_list += FTRACED_ATTR_HDR_SIZE + len;
}

/**
 * ctl_put_events_end() - place the events gathered since the last end.
 * @b: builder
 *
 * Up to FTRACED_EVENTS_INLINE_SIZE_MAX bytes go inline, where the message
 * is now; more stay in the list, and ATTR_EVENT_LIST takes their place.
 * A request ends its events once (ctl_builder_finish() does it); a reply
 * ends each session record's.
 */
void ctl_put_events_end(struct ctl_builder *b)
{
	size_t n = b->n_list - b->list_pending;

	if (b->error || n == 0)
		return;
	if (n <= FTRACED_EVENTS_INLINE_SIZE_MAX && n <= sizeof(b->buf) - b->n) {
		memcpy(b->buf + b->n, b->list + b->list_pending, n);
		b->n += n;
		b->n_list = b->list_pending;
	} else {
		uint8_t p[sizeof(struct ftraced_event_list)];

		put_le64(p, b->list_pending);
		put_le64(p + 8, n);
		ctl_put(b, FTRACED_ATTR_EVENT_LIST, p, sizeof(p));
		b->list_pending = b->n_list;
	}
}

void ctl_put(struct ctl_builder *b, enum ftraced_attr type, const void *data, size_t len)
{
	if (b->error)
		return;
	if (len > UINT16_MAX || len + FTRACED_ATTR_HDR_SIZE > sizeof(b->buf) - b->n) {
		b->error = -EMSGSIZE;
		return;
	}
	put_le16(b->buf + b->n, (uint16_t)type);
	put_le16(b->buf + b->n + 2, (uint16_t)len);
	if (len > 0)
		memcpy(b->buf + b->n + FTRACED_ATTR_HDR_SIZE, data, len);
	b->n += FTRACED_ATTR_HDR_SIZE + len;
}

void ctl_put_u32(struct ctl_builder *b, enum ftraced_attr type, uint32_t v)
{
	uint8_t p[4];

	put_le32(p, v);
	ctl_put(b, type, p, sizeof(p));
}

void ctl_put_u64(struct ctl_builder *b, enum ftraced_attr type, uint64_t v)
{
	uint8_t p[8];

	put_le64(p, v);
	ctl_put(b, type, p, sizeof(p));
}

void ctl_put_string(struct ctl_builder *b, enum ftraced_attr type, const char *s)
{
	ctl_put(b, type, s, strlen(s));
}

void ctl_put_cpu_stats(struct ctl_builder *b, enum ftraced_attr type,
		       const struct ftraced_cpu_stats *s)
{
	uint8_t p[sizeof(*s)] = {};

	put_le32(p, s->cpu);
	put_le64(p + 8, s->bytes_raw);
	put_le64(p + 16, s->bytes_stored);
	put_le64(p + 24, s->chunks);
	put_le64(p + 32, s->entries);
	put_le64(p + 40, s->overrun);
	put_le64(p + 48, s->dropped);
	put_le64(p + 56, s->read);
	ctl_put(b, type, p, sizeof(p));
}

static void put_u64s(struct ctl_builder *b, enum ftraced_attr type, const uint64_t *v, size_t n)
{
	uint8_t p[64];

	for (size_t k = 0; k < n && k < sizeof(p) / 8; k++)
		put_le64(p + 8 * k, v[k]);
	ctl_put(b, type, p, n * 8);
}

void ctl_put_session_counters(struct ctl_builder *b, const struct ftraced_session_counters *c)
{
	const uint64_t v[8] = {
		c->files_written, c->files_deleted, c->files_failed,
		c->triggers_fired, c->triggers_suppressed, c->bytes_deleted,
		c->retention_failures,
	};

	put_u64s(b, FTRACED_ATTR_SESSION_COUNTERS, v, ELEMENTSOF(v));
}

void ctl_put_daemon_counters(struct ctl_builder *b, const struct ftraced_daemon_counters *c)
{
	const uint64_t v[8] = {
		c->uptime_ms, c->connections, c->connections_refused, c->requests,
		c->request_errors, c->hooks_run, c->hooks_failed, c->sessions_started,
	};

	put_u64s(b, FTRACED_ATTR_DAEMON_COUNTERS, v, ELEMENTSOF(v));
}

/**
 * ctl_builder_finish() - end the events, fill in the payload length.
 * @b: builder
 * @ret_size: the packet's length; b->list holds b->n_list bytes for the memfd
 *
 * Return: 0; -EMSGSIZE if anything did not fit; -E2BIG if the events were
 * more than FTRACED_EVENT_LIST_SIZE_MAX bytes; -ENOMEM.
 */
int ctl_builder_finish(struct ctl_builder *b, size_t *ret_size)
{
	ctl_put_events_end(b);
	if (b->error)
		return b->error;
	put_le32(b->buf + 12, (uint32_t)(b->n - sizeof(struct ftraced_msg_hdr)));
	*ret_size = b->n;
	return 0;
}

/**
 * ctl_builder_parse() - parse a message built here, as the daemon would.
 * @b: builder of a request (finished by this call)
 * @ret: the request (free with ctl_request_done()); written only on success
 * @ret_bad_attr: as for ctl_request_parse()
 *
 * For requests that never cross a socket (session files): the events the
 * memfd would carry are read from the builder's list.
 *
 * Return: what ctl_builder_finish(), ctl_request_parse() or
 * ctl_request_parse_event_list() return.
 */
int ctl_builder_parse(struct ctl_builder *b, struct ctl_request *ret, uint16_t *ret_bad_attr)
{
	struct ctl_request req = {};
	size_t n;
	int r;

	r = ctl_builder_finish(b, &n);
	if (r < 0)
		return r;
	r = ctl_request_parse(b->buf, n, &req, ret_bad_attr);
	if (r < 0)
		return r;
	if (ctl_request_has(&req, FTRACED_ATTR_EVENT_LIST)) {
		const struct ftraced_event_list *l = &req.event_list;

		if (l->offset > b->n_list || l->size > b->n_list - l->offset)
			r = -EBADMSG;
		else
			r = ctl_request_parse_event_list(&req, b->list + l->offset, l->size,
							 ret_bad_attr);
		if (r < 0) {
			ctl_request_done(&req);
			return r;
		}
	}
	ctl_request_done(ret);
	*ret = req;
	return 0;
}
