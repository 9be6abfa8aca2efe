// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The control protocol codec: bytes <-> messages, attributes and requests;
 * building messages is ctl-builder.c.
 * Pure: no I/O, no logging, so it is unit-tested and fuzzed on its own.
 * Its one allocation is a request's events, which have no small cap (a
 * session may name every event of a kernel: tens of thousands): they take
 * what they use (ctl-request.c), and ctl_request_done() frees them. Both
 * the daemon and ftracectl link it, so the two sides of
 * the wire are the same code.
 *
 * The parser is the daemon's first line against hostile clients: lengths
 * are checked against each other and against named limits before use,
 * strings are restricted to what each attribute needs, and *ret is only
 * written on success. Meaning (does the event exist, is the size sane) is
 * checked later, by the session.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftraced/macro.h"
#include "lib/ctl/ctl-proto.h"

/**
 * ctl_msg_parse() - check a packet's header against its length.
 * @buf: the packet
 * @n: bytes received
 * @ret: the message type and payload
 *
 * Return: 0; -EBADMSG for a short packet, bad magic, unknown flags or a
 * payload length that disagrees with @n; -EPROTONOSUPPORT for another
 * version; -EOPNOTSUPP for an unknown type.
 */
int ctl_msg_parse(const void *buf, size_t n, struct ctl_msg *ret)
{
	const uint8_t *p = buf;
	uint32_t magic, flags, n_payload;
	uint16_t version, type;

	if (n < sizeof(struct ftraced_msg_hdr) || n > FTRACED_MSG_SIZE_MAX)
		return -EBADMSG;
	magic = get_le32(p);
	version = get_le16(p + 4);
	type = get_le16(p + 6);
	flags = get_le32(p + 8);
	n_payload = get_le32(p + 12);
	if (magic != FTRACED_PROTO_MAGIC)
		return -EBADMSG;
	if (version != FTRACED_PROTO_VERSION)
		return -EPROTONOSUPPORT;
	if (flags != 0)
		return -EBADMSG;
	if ((uint64_t)sizeof(struct ftraced_msg_hdr) + n_payload != (uint64_t)n)
		return -EBADMSG;
	if (type == 0 || type >= _FTRACED_MSG_TYPE_MAX)
		return -EOPNOTSUPP;

	*ret = (struct ctl_msg){
		.type = type,
		.payload = p + sizeof(struct ftraced_msg_hdr),
		.n_payload = n_payload,
	};
	return 0;
}

void ctl_attr_iter_init(struct ctl_attr_iter *it, const struct ctl_msg *m)
{
	it->p = m->payload;
	it->n = m->n_payload;
}

/**
 * ctl_attr_next() - the next attribute of a payload.
 * @it: iterator
 * @ret: the attribute (points into the payload)
 *
 * Return: 1 with an attribute, 0 at the end, -EBADMSG if the rest of the
 * payload is not a whole attribute.
 */
int ctl_attr_next(struct ctl_attr_iter *it, struct ctl_attr *ret)
{
	uint16_t type, len;

	if (it->n == 0)
		return 0;
	if (it->n < FTRACED_ATTR_HDR_SIZE)
		return -EBADMSG;
	type = get_le16(it->p);
	len = get_le16(it->p + 2);
	if ((size_t)len > it->n - FTRACED_ATTR_HDR_SIZE)
		return -EBADMSG;
	*ret = (struct ctl_attr){ .type = type, .len = len, .data = it->p + FTRACED_ATTR_HDR_SIZE };
	it->p += FTRACED_ATTR_HDR_SIZE + len;
	it->n -= FTRACED_ATTR_HDR_SIZE + len;
	return 1;
}

int ctl_attr_u32(const struct ctl_attr *a, uint32_t *ret)
{
	if (a->len != 4)
		return -EBADMSG;
	*ret = get_le32(a->data);
	return 0;
}

int ctl_attr_u64(const struct ctl_attr *a, uint64_t *ret)
{
	if (a->len != 8)
		return -EBADMSG;
	*ret = get_le64(a->data);
	return 0;
}

int ctl_attr_cpu_stats(const struct ctl_attr *a, struct ftraced_cpu_stats *ret)
{
	if (a->len != sizeof(*ret))
		return -EBADMSG;
	*ret = (struct ftraced_cpu_stats){
		.cpu = get_le32(a->data),
		.bytes_raw = get_le64(a->data + 8),
		.bytes_stored = get_le64(a->data + 16),
		.chunks = get_le64(a->data + 24),
		.entries = get_le64(a->data + 32),
		.overrun = get_le64(a->data + 40),
		.dropped = get_le64(a->data + 48),
		.read = get_le64(a->data + 56),
	};
	return 0;
}

/* @n little-endian u64s, exactly. */
static int attr_u64s(const struct ctl_attr *a, uint64_t *v, size_t n)
{
	if (a->len != n * 8)
		return -EBADMSG;
	for (size_t k = 0; k < n; k++)
		v[k] = get_le64(a->data + 8 * k);
	return 0;
}

int ctl_attr_session_counters(const struct ctl_attr *a, struct ftraced_session_counters *ret)
{
	uint64_t v[8];

	static_assert(sizeof(v) == sizeof(*ret), "eight counters");
	if (attr_u64s(a, v, ELEMENTSOF(v)) < 0)
		return -EBADMSG;
	*ret = (struct ftraced_session_counters){
		.files_written = v[0],
		.files_deleted = v[1],
		.files_failed = v[2],
		.triggers_fired = v[3],
		.triggers_suppressed = v[4],
		.bytes_deleted = v[5],
		.retention_failures = v[6],
	};
	return 0;
}

int ctl_attr_daemon_counters(const struct ctl_attr *a, struct ftraced_daemon_counters *ret)
{
	uint64_t v[8];

	static_assert(sizeof(v) == sizeof(*ret), "eight counters");
	if (attr_u64s(a, v, ELEMENTSOF(v)) < 0)
		return -EBADMSG;
	*ret = (struct ftraced_daemon_counters){
		.uptime_ms = v[0],
		.connections = v[1],
		.connections_refused = v[2],
		.requests = v[3],
		.request_errors = v[4],
		.hooks_run = v[5],
		.hooks_failed = v[6],
		.sessions_started = v[7],
	};
	return 0;
}

/* Which bytes each string attribute may contain. */
static bool char_ok(uint16_t type, uint8_t c)
{
	bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');

	switch (type) {
	case FTRACED_ATTR_SESSION:
	case FTRACED_ATTR_CLOCK:
	case FTRACED_ATTR_INSTANCE:
	case FTRACED_ATTR_STATE:
		return alnum || c == '_' || c == '-';
	case FTRACED_ATTR_EVENT:
	case FTRACED_ATTR_SKIPPED_EVENT:
	case FTRACED_ATTR_EXCLUDE_EVENT:
		/* Names, and globs over them. */
		return alnum || c == '_' || c == '-' || c == ':' || c == '*' || c == '.' ||
		       c == '?' || c == '[' || c == ']';
	case FTRACED_ATTR_FTRACE_FILTER:
	case FTRACED_ATTR_FTRACE_NOTRACE:
	case FTRACED_ATTR_GRAPH_FUNCTION:
		/* Kernel function globs: set_ftrace_filter's syntax, ":mod:NAME" included. */
		return alnum || c == '_' || c == '.' || c == '*' || c == '?' || c == '[' ||
		       c == ']' || c == ':' || c == '-' || c == '$';
	case FTRACED_ATTR_TRACER:
		return alnum || c == '_';
	case FTRACED_ATTR_HISTORY_FROM:
		/* 2026-11-25T13:02:00.123456789Z */
		return alnum || c == '-' || c == ':' || c == '.';
	case FTRACED_ATTR_TRACE_OPTION:
		/* Option file names: record-tgid, funcgraph-proc, func_stack_trace, ... */
		return alnum || c == '_' || c == '-';
	case FTRACED_ATTR_CPUMASK:
		return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') ||
		       c == ',';
	case FTRACED_ATTR_FILTER:
	case FTRACED_ATTR_EVENT_FILTER:
	case FTRACED_ATTR_EVENT_TRIGGER:
	case FTRACED_ATTR_PROBE:
	case FTRACED_ATTR_ON_SEGMENT:
	case FTRACED_ATTR_TRIGGER:
	case FTRACED_ATTR_PATH:
	case FTRACED_ATTR_RECOVERED:
	case FTRACED_ATTR_LAST_SNAPSHOT:
	case FTRACED_ATTR_LEASE_HOLDER:
		return c >= 0x20 && c < 0x7f;
	case FTRACED_ATTR_MESSAGE:
	case FTRACED_ATTR_PROC_MAPS:
	case FTRACED_ATTR_DIRECTORY:
	case FTRACED_ATTR_NOTE:
	case FTRACED_ATTR_TRIGGER_STATUS:
	case FTRACED_ATTR_PENDING_INSTANCE:
	case FTRACED_ATTR_WARNING:
	case FTRACED_ATTR_GAP:
		return (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t';
	default:
		return false;
	}
}

/**
 * ctl_attr_string() - copy a string attribute out, checking its characters.
 * @a: the attribute (not NUL-terminated on the wire)
 * @max: longest accepted length
 * @ret: buffer of at least @max + 1 bytes
 *
 * Return: 0, or -EBADMSG for an empty, overlong or ill-formed string.
 */
int ctl_attr_string(const struct ctl_attr *a, size_t max, char *ret)
{
	if (a->len == 0 || a->len > max)
		return -EBADMSG;
	for (size_t i = 0; i < a->len; i++)
		if (!char_ok(a->type, a->data[i]))
			return -EBADMSG;
	memcpy(ret, a->data, a->len);
	ret[a->len] = '\0';
	return 0;
}

/*
 * Attribute sets as lists: LIST(M) applies M to each member, so one list
 * gives both words of a struct ctl_attr_set at compile time.
 */
#define LO(a) ((a) < 64 ? UINT64_C(1) << ((a) % 64) : 0)
#define HI(a) ((a) >= 64 ? UINT64_C(1) << ((a) % 64) : 0)
#define ATTR_SET(list) { { list(LO), list(HI) } }
#define NONE(M) 0

#define CAPTURE_ATTRS(M) (M(FTRACED_ATTR_EVENT) | M(FTRACED_ATTR_FILTER) | \
			  M(FTRACED_ATTR_BUFFER_KB) | M(FTRACED_ATTR_SUBBUF_KB) | \
			  M(FTRACED_ATTR_CLOCK) | M(FTRACED_ATTR_COMPRESSION) | \
			  M(FTRACED_ATTR_LEVEL) | M(FTRACED_ATTR_STACKTRACE) | \
			  M(FTRACED_ATTR_IGNORE_MISSING) | M(FTRACED_ATTR_PID) | \
			  M(FTRACED_ATTR_FOLLOW_FORK) | M(FTRACED_ATTR_EVENT_FILTER) | \
			  M(FTRACED_ATTR_TRACER) | M(FTRACED_ATTR_FTRACE_FILTER) | \
			  M(FTRACED_ATTR_FTRACE_NOTRACE) | M(FTRACED_ATTR_GRAPH_FUNCTION) | \
			  M(FTRACED_ATTR_MAX_GRAPH_DEPTH) | M(FTRACED_ATTR_FUNC_STACK) | \
			  M(FTRACED_ATTR_PROBE) | M(FTRACED_ATTR_RT_PRIORITY) | \
			  M(FTRACED_ATTR_TRACE_OPTION) | M(FTRACED_ATTR_CPUMASK) | \
			  M(FTRACED_ATTR_NO_FILTER) | M(FTRACED_ATTR_TOP_LEVEL) | \
			  M(FTRACED_ATTR_EVENT_LIST) | M(FTRACED_ATTR_EXCLUDE_EVENT) | \
			  M(FTRACED_ATTR_EVENT_TRIGGER) | \
			  M(FTRACED_ATTR_READ_INTERVAL_US))
/* Attributes a request may carry more than once. */
#define REPEATABLE_ATTRS(M) (M(FTRACED_ATTR_EVENT) | M(FTRACED_ATTR_TRIGGER) | \
			     M(FTRACED_ATTR_PID) | M(FTRACED_ATTR_EVENT_FILTER) | \
			     M(FTRACED_ATTR_FTRACE_FILTER) | M(FTRACED_ATTR_FTRACE_NOTRACE) | \
			     M(FTRACED_ATTR_GRAPH_FUNCTION) | M(FTRACED_ATTR_PROBE) | \
			     M(FTRACED_ATTR_TRACE_OPTION) | M(FTRACED_ATTR_EXCLUDE_EVENT) | \
			     M(FTRACED_ATTR_EVENT_TRIGGER) | M(FTRACED_ATTR_PROC_MAPS))
#define SEGMENT_ATTRS(M) (M(FTRACED_ATTR_SEGMENT_SIZE) | M(FTRACED_ATTR_SEGMENT_TIME_MS) | \
			  M(FTRACED_ATTR_MAX_TOTAL) | M(FTRACED_ATTR_MAX_FILES) | \
			  M(FTRACED_ATTR_MAX_AGE_MS) | M(FTRACED_ATTR_KEEP_FREE) | \
			  M(FTRACED_ATTR_KEEP_FREE_PERCENT) | M(FTRACED_ATTR_ON_SEGMENT))
#define FLIGHT_ATTRS(M) (M(FTRACED_ATTR_FLIGHT_BACKEND) | M(FTRACED_ATTR_FLIGHT_SIZE) | \
			 M(FTRACED_ATTR_TRIGGER) | M(FTRACED_ATTR_INSTANCE))
#define RECORD_ATTRS(M) (CAPTURE_ATTRS(M) | M(FTRACED_ATTR_DURATION_MS) | \
			 M(FTRACED_ATTR_PROC_MAP) | M(FTRACED_ATTR_KEEP_KB))
#define CREATE_ATTRS(M) (CAPTURE_ATTRS(M) | SEGMENT_ATTRS(M) | FLIGHT_ATTRS(M) | \
			 M(FTRACED_ATTR_SESSION) | M(FTRACED_ATTR_MODE))
#define CREATE_REQUIRED(M) (M(FTRACED_ATTR_SESSION) | M(FTRACED_ATTR_MODE))
#define SESSION_ONLY(M) M(FTRACED_ATTR_SESSION)
#define STOP_ATTRS(M) (M(FTRACED_ATTR_SESSION) | M(FTRACED_ATTR_PROC_MAPS))
#define SNAPSHOT_ATTRS(M) (M(FTRACED_ATTR_SESSION) | M(FTRACED_ATTR_TRIM) | \
			   M(FTRACED_ATTR_SINCE_US))
#define OFFER_ATTRS(M) M(FTRACED_ATTR_OFFER)

static const struct ctl_attr_set repeatable_attrs = ATTR_SET(REPEATABLE_ATTRS);

/* Which attributes each request accepts, and which it requires; none for replies. */
static const struct {
	struct ctl_attr_set allowed;
	struct ctl_attr_set required;
} request_attrs[_FTRACED_MSG_TYPE_MAX] = {
	/* Events or a tracer: the session configuration checks that one is there. */
	[FTRACED_MSG_RECORD] = { ATTR_SET(RECORD_ATTRS), ATTR_SET(NONE) },
	[FTRACED_MSG_STOP] = { ATTR_SET(STOP_ATTRS), ATTR_SET(SESSION_ONLY) },
	[FTRACED_MSG_LIST] = { ATTR_SET(NONE), ATTR_SET(NONE) },
	[FTRACED_MSG_STATUS] = { ATTR_SET(SESSION_ONLY), ATTR_SET(NONE) },
	[FTRACED_MSG_CREATE] = { ATTR_SET(CREATE_ATTRS), ATTR_SET(CREATE_REQUIRED) },
	[FTRACED_MSG_START] = { ATTR_SET(SESSION_ONLY), ATTR_SET(SESSION_ONLY) },
	[FTRACED_MSG_DESTROY] = { ATTR_SET(SESSION_ONLY), ATTR_SET(SESSION_ONLY) },
	[FTRACED_MSG_SNAPSHOT] = { ATTR_SET(SNAPSHOT_ATTRS), ATTR_SET(SESSION_ONLY) },
	[FTRACED_MSG_SAVE] = { ATTR_SET(SESSION_ONLY), ATTR_SET(SESSION_ONLY) },
	[FTRACED_MSG_OFFER] = { ATTR_SET(OFFER_ATTRS), ATTR_SET(OFFER_ATTRS) },
	[FTRACED_MSG_RELOAD] = { ATTR_SET(NONE), ATTR_SET(NONE) },
	[FTRACED_MSG_ROTATE] = { ATTR_SET(SESSION_ONLY), ATTR_SET(SESSION_ONLY) },
};

static bool is_request(uint16_t type)
{
	switch (type) {
	case FTRACED_MSG_RECORD:
	case FTRACED_MSG_STOP:
	case FTRACED_MSG_LIST:
	case FTRACED_MSG_STATUS:
	case FTRACED_MSG_CREATE:
	case FTRACED_MSG_START:
	case FTRACED_MSG_DESTROY:
	case FTRACED_MSG_SNAPSHOT:
	case FTRACED_MSG_SAVE:
	case FTRACED_MSG_OFFER:
	case FTRACED_MSG_RELOAD:
	case FTRACED_MSG_ROTATE:
		return true;
	default:
		return false;
	}
}

static int request_take(const void *buf, size_t n, struct ctl_request *ret, uint16_t *bad);

/*
 * A string attribute copied to the end of the request's text; its offset
 * in @ret. Every string came with a 4-byte header, so a whole message's
 * strings with their NULs always fit.
 */
static int text_string(struct ctl_request *req, const struct ctl_attr *a, size_t max,
		       uint32_t *ret)
{
	int r;

	if (a->len > max || req->n_text + a->len + 1 > sizeof(req->text))
		return -EBADMSG;
	r = ctl_attr_string(a, max, req->text + req->n_text);
	if (r < 0)
		return r;
	*ret = (uint32_t)req->n_text;
	req->n_text += a->len + 1;
	return 0;
}

/*
 * An EVENT, or the EVENT_FILTER or EVENT_TRIGGER of the event just before:
 * checked as any string, then stored with its event (ctl-request.c).
 */
static int add_event_attr(struct ctl_request *req, const struct ctl_attr *a)
{
	static_assert(FTRACED_FILTER_MAX >= FTRACED_EVENT_TRIGGER_MAX &&
		      FTRACED_FILTER_MAX >= FTRACED_EVENT_SPEC_MAX, "the longest is a filter");
	size_t max = a->type == FTRACED_ATTR_EVENT ? FTRACED_EVENT_SPEC_MAX :
		     a->type == FTRACED_ATTR_EVENT_FILTER ? FTRACED_FILTER_MAX :
		     FTRACED_EVENT_TRIGGER_MAX;
	char text[FTRACED_FILTER_MAX + 1];
	int r = ctl_attr_string(a, max, text);

	if (r < 0)
		return r;
	switch (a->type) {
	case FTRACED_ATTR_EVENT:
		return ctl_request_store_event(req, text, a->len);
	case FTRACED_ATTR_EVENT_FILTER:
		return ctl_request_store_event_filter(req, text, a->len);
	case FTRACED_ATTR_EVENT_TRIGGER:
		return ctl_request_store_event_trigger(req, text, a->len);
	default:
		return -EBADMSG;
	}
}

/**
 * ctl_request_parse_event_list() - add the events of an ATTR_EVENT_LIST.
 * @req: a request whose message had ATTR_EVENT_LIST (so no events inline)
 * @list: the range of the memfd it names
 * @n: its length
 * @ret_bad_attr: on failure over one attribute, its type; else 0. May be NULL.
 *
 * The list holds EVENT, EVENT_FILTER and EVENT_TRIGGER attributes, as the
 * message would.
 *
 * Return: 0; -EBADMSG for anything else or ill-formed; -E2BIG beyond
 * FTRACED_EVENTS_PER_REQUEST_MAX events; -ENOMEM. On failure @req keeps
 * what it had, to be freed as ever.
 */
int ctl_request_parse_event_list(struct ctl_request *req, const void *list, size_t n,
				 uint16_t *ret_bad_attr)
{
	struct ctl_attr_iter it = { .p = list, .n = n };
	struct ctl_attr a;
	int r;

	if (n > FTRACED_EVENT_LIST_SIZE_MAX)
		return -EBADMSG;
	while ((r = ctl_attr_next(&it, &a)) > 0) {
		if (ret_bad_attr)
			*ret_bad_attr = a.type;
		r = add_event_attr(req, &a);
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r;
	if (ret_bad_attr)
		*ret_bad_attr = 0;
	if (req->n_events == 0)
		return -EBADMSG; /* a list is sent only for events that do not fit inline */
	return 0;
}

/**
 * ctl_request_parse() - parse and validate a whole request packet.
 * @buf: the packet
 * @n: its length
 * @ret: the request, zeroed or parsed before (its events are freed); written
 *       only on success; free with ctl_request_done()
 * @ret_bad_attr: on failure over one attribute (malformed, duplicate, not
 *                allowed here, or required and missing), its type; else 0.
 *                May be NULL.
 *
 * A request with ATTR_EVENT_LIST has its events added from the memfd by
 * ctl_request_parse_event_list().
 *
 * Return: 0; -EOPNOTSUPP for a type that is not a request; -EBADMSG for
 * malformed, unknown, duplicate or missing attributes; -E2BIG beyond
 * FTRACED_EVENTS_PER_REQUEST_MAX events; -ENOMEM; or what ctl_msg_parse()
 * returns.
 */
int ctl_request_parse(const void *buf, size_t n, struct ctl_request *ret, uint16_t *ret_bad_attr)
{
	uint16_t bad = 0;
	int r = request_take(buf, n, ret, &bad);

	if (r < 0 && ret_bad_attr)
		*ret_bad_attr = bad;
	return r;
}

static int request_parse(const struct ctl_msg *m, struct ctl_request *req, uint16_t *bad);

/* The request's events are freed unless it is handed over whole. */
static int request_take(const void *buf, size_t n, struct ctl_request *ret, uint16_t *bad)
{
	struct ctl_request req;
	struct ctl_msg m;
	int r;

	r = ctl_msg_parse(buf, n, &m);
	if (r < 0)
		return r;
	if (!is_request(m.type))
		return -EOPNOTSUPP;
	req = (struct ctl_request){ .type = m.type };
	r = request_parse(&m, &req, bad);
	if (r < 0) {
		ctl_request_done(&req);
		return r;
	}
	ctl_request_done(ret);
	memcpy(ret, &req, sizeof(req));
	return 0;
}

static int request_parse(const struct ctl_msg *m, struct ctl_request *req, uint16_t *bad)
{
	const struct ctl_attr_set *allowed, *required;
	bool after_exclude = false; /* the last EVENT-like attribute was an EXCLUDE_EVENT */
	struct ctl_attr_iter it;
	struct ctl_attr a;
	int r;

	allowed = &request_attrs[m->type].allowed;
	required = &request_attrs[m->type].required;

	ctl_attr_iter_init(&it, m);
	while ((r = ctl_attr_next(&it, &a)) > 0) {
		*bad = a.type;
		if (!ctl_attr_set_has(allowed, a.type))
			return -EBADMSG;
		if (ctl_attr_set_has(&req->present, a.type) &&
		    !ctl_attr_set_has(&repeatable_attrs, a.type))
			return -EBADMSG;
		ctl_attr_set_add(&req->present, a.type);

		switch (a.type) {
		case FTRACED_ATTR_EVENT:
			r = add_event_attr(req, &a);
			after_exclude = false;
			break;
		case FTRACED_ATTR_EVENT_LIST:
			r = ctl_attr_event_list(&a, &req->event_list);
			break;
		case FTRACED_ATTR_EXCLUDE_EVENT:
			if (req->n_excluded >= FTRACED_EXCLUDED_PER_REQUEST_MAX)
				return -EBADMSG;
			r = ctl_attr_string(&a, FTRACED_EVENT_SPEC_MAX, req->excluded[req->n_excluded]);
			if (r >= 0)
				req->n_excluded++;
			/* An EVENT_FILTER now would go to an excluded event: refused. */
			after_exclude = true;
			break;
		case FTRACED_ATTR_FILTER:
			r = ctl_attr_string(&a, FTRACED_FILTER_MAX, req->filter);
			break;
		case FTRACED_ATTR_CLOCK:
			r = ctl_attr_string(&a, FTRACED_NAME_MAX, req->clock);
			break;
		case FTRACED_ATTR_SESSION:
			r = ctl_attr_string(&a, FTRACED_NAME_MAX, req->session);
			break;
		case FTRACED_ATTR_BUFFER_KB:
			r = ctl_attr_u32(&a, &req->buffer_kb);
			break;
		case FTRACED_ATTR_SUBBUF_KB:
			r = ctl_attr_u32(&a, &req->subbuf_kb);
			break;
		case FTRACED_ATTR_COMPRESSION:
			r = ctl_attr_u32(&a, &req->compression);
			if (r >= 0 && req->compression >= _FTRACED_COMPRESSION_MAX)
				r = -EBADMSG;
			break;
		case FTRACED_ATTR_LEVEL: {
			uint32_t v;

			r = ctl_attr_u32(&a, &v);
			req->level = (int32_t)v;
			break;
		}
		case FTRACED_ATTR_DURATION_MS:
			r = ctl_attr_u64(&a, &req->duration_ms);
			break;
		case FTRACED_ATTR_MODE:
			r = ctl_attr_u32(&a, &req->mode);
			if (r >= 0 && req->mode >= _FTRACED_MODE_MAX)
				r = -EBADMSG;
			break;
		case FTRACED_ATTR_SEGMENT_SIZE:
			r = ctl_attr_u64(&a, &req->segment_size);
			break;
		case FTRACED_ATTR_SEGMENT_TIME_MS:
			r = ctl_attr_u64(&a, &req->segment_time_ms);
			break;
		case FTRACED_ATTR_MAX_TOTAL:
			r = ctl_attr_u64(&a, &req->max_total);
			break;
		case FTRACED_ATTR_MAX_FILES:
			r = ctl_attr_u32(&a, &req->max_files);
			break;
		case FTRACED_ATTR_MAX_AGE_MS:
			r = ctl_attr_u64(&a, &req->max_age_ms);
			break;
		case FTRACED_ATTR_KEEP_FREE:
			r = ctl_attr_u64(&a, &req->keep_free);
			break;
		case FTRACED_ATTR_KEEP_FREE_PERCENT:
			r = ctl_attr_u32(&a, &req->keep_free_percent);
			break;
		case FTRACED_ATTR_ON_SEGMENT:
			r = ctl_attr_string(&a, FTRACED_COMMAND_MAX, req->on_segment);
			break;
		case FTRACED_ATTR_FLIGHT_BACKEND:
			r = ctl_attr_u32(&a, &req->flight_backend);
			if (r >= 0 && req->flight_backend >= _FTRACED_FLIGHT_BACKEND_MAX)
				r = -EBADMSG;
			break;
		case FTRACED_ATTR_FLIGHT_SIZE:
			r = ctl_attr_u64(&a, &req->flight_size);
			break;
		case FTRACED_ATTR_INSTANCE:
			/* A request's instance: the boot-mapped one a persistent backend adopts. */
			r = ctl_attr_string(&a, FTRACED_NAME_MAX, req->boot_instance);
			break;
		case FTRACED_ATTR_TRIGGER:
			if (req->n_triggers >= FTRACED_TRIGGERS_PER_REQUEST_MAX)
				return -EBADMSG;
			r = ctl_attr_string(&a, FTRACED_TRIGGER_MAX, req->triggers[req->n_triggers]);
			if (r >= 0)
				req->n_triggers++;
			break;
		case FTRACED_ATTR_TRIM:
			r = ctl_attr_u32(&a, &req->trim);
			if (r >= 0 && req->trim > 1)
				r = -EBADMSG;
			break;
		case FTRACED_ATTR_SINCE_US:
			r = ctl_attr_u64(&a, &req->since_us);
			break;
		case FTRACED_ATTR_PROC_MAPS:
			if (req->n_proc_maps >= FTRACED_PIDS_PER_REQUEST_MAX)
				return -EBADMSG;
			r = text_string(req, &a, FTRACED_PROC_MAPS_MAX, &req->proc_maps[req->n_proc_maps]);
			if (r >= 0)
				req->n_proc_maps++;
			break;
		case FTRACED_ATTR_PROC_MAP:
			r = ctl_attr_u32(&a, &req->proc_map);
			if (r >= 0 && req->proc_map > 1)
				r = -EBADMSG;
			break;
		case FTRACED_ATTR_KEEP_KB: /* its bounds: session_config_from_request() */
			r = ctl_attr_u64(&a, &req->keep_kb);
			break;
		case FTRACED_ATTR_READ_INTERVAL_US:
			r = ctl_attr_u32(&a, &req->read_interval_us);
			if (r >= 0 && (req->read_interval_us < FTRACED_READ_INTERVAL_MIN_US ||
				       req->read_interval_us > FTRACED_READ_INTERVAL_MAX_US))
				r = -EBADMSG;
			break;
		case FTRACED_ATTR_RT_PRIORITY:
			r = ctl_attr_u32(&a, &req->rt_priority);
			if (r >= 0 && (req->rt_priority < 1 ||
				       req->rt_priority > FTRACED_RT_PRIORITY_MAX))
				r = -EBADMSG;
			break;
		case FTRACED_ATTR_STACKTRACE:
			r = ctl_attr_u32(&a, &req->stacktrace);
			if (r >= 0 && req->stacktrace > 1)
				r = -EBADMSG;
			break;
		case FTRACED_ATTR_IGNORE_MISSING:
			r = ctl_attr_u32(&a, &req->ignore_missing);
			if (r >= 0 && req->ignore_missing > 1)
				r = -EBADMSG;
			break;
		case FTRACED_ATTR_PID:
			if (req->n_pids >= FTRACED_PIDS_PER_REQUEST_MAX)
				return -EBADMSG;
			r = ctl_attr_u32(&a, &req->pids[req->n_pids]);
			if (r >= 0 && (req->pids[req->n_pids] == 0 || req->pids[req->n_pids] > INT32_MAX))
				r = -EBADMSG;
			if (r >= 0)
				req->n_pids++;
			break;
		case FTRACED_ATTR_FOLLOW_FORK:
			r = ctl_attr_u32(&a, &req->follow_fork);
			if (r >= 0 && req->follow_fork > 1)
				r = -EBADMSG;
			break;
		case FTRACED_ATTR_EVENT_FILTER:
			/* Like trace-cmd's -f: for the event just before, not an excluded one. */
			if (after_exclude)
				return -EBADMSG;
			r = add_event_attr(req, &a);
			break;
		case FTRACED_ATTR_EVENT_TRIGGER:
			/* Like trace-cmd's -R: for the event just before, not an excluded one. */
			if (after_exclude)
				return -EBADMSG;
			r = add_event_attr(req, &a);
			break;
		case FTRACED_ATTR_TRACER:
			r = ctl_attr_string(&a, FTRACED_TRACER_MAX, req->tracer);
			break;
		case FTRACED_ATTR_FTRACE_FILTER:
		case FTRACED_ATTR_FTRACE_NOTRACE:
		case FTRACED_ATTR_GRAPH_FUNCTION:
			if (req->n_functions >= FTRACED_FUNCTIONS_PER_REQUEST_MAX)
				return -EBADMSG;
			r = text_string(req, &a, FTRACED_FUNCTION_MAX,
					&req->functions[req->n_functions].offset);
			if (r >= 0)
				req->functions[req->n_functions++].attr = a.type;
			break;
		case FTRACED_ATTR_MAX_GRAPH_DEPTH:
			r = ctl_attr_u32(&a, &req->max_graph_depth);
			if (r >= 0 && req->max_graph_depth == 0)
				r = -EBADMSG;
			break;
		case FTRACED_ATTR_FUNC_STACK:
			r = ctl_attr_u32(&a, &req->func_stack);
			if (r >= 0 && req->func_stack > 1)
				r = -EBADMSG;
			break;
		case FTRACED_ATTR_PROBE:
			if (req->n_probes >= FTRACED_PROBES_PER_REQUEST_MAX)
				return -EBADMSG;
			r = text_string(req, &a, FTRACED_PROBE_MAX, &req->probes[req->n_probes]);
			if (r >= 0)
				req->n_probes++;
			break;
		case FTRACED_ATTR_TRACE_OPTION:
			if (req->n_options >= FTRACED_OPTIONS_PER_REQUEST_MAX)
				return -EBADMSG;
			r = text_string(req, &a, FTRACED_OPTION_MAX, &req->options[req->n_options]);
			if (r >= 0)
				req->n_options++;
			break;
		case FTRACED_ATTR_CPUMASK:
			r = text_string(req, &a, FTRACED_CPUMASK_MAX, &req->cpumask);
			if (r >= 0)
				req->cpumask++;
			break;
		case FTRACED_ATTR_NO_FILTER:
			r = ctl_attr_u32(&a, &req->no_filter);
			if (r >= 0 && req->no_filter > 1)
				r = -EBADMSG;
			break;
		case FTRACED_ATTR_TOP_LEVEL:
			r = ctl_attr_u32(&a, &req->top_level);
			if (r >= 0 && req->top_level > 1)
				r = -EBADMSG;
			break;
		case FTRACED_ATTR_OFFER:
			r = ctl_attr_u32(&a, &req->offer);
			if (r >= 0 && req->offer >= _FTRACED_OFFER_MAX)
				r = -EBADMSG;
			break;
		default:
			r = -EBADMSG;
		}
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r; /* the attribute framing itself */
	*bad = FTRACED_ATTR_EVENT_LIST;
	/* Events come inline or in the memfd, not both (a filter's event would be ambiguous). */
	if (ctl_request_has(req, FTRACED_ATTR_EVENT_LIST) && req->n_events > 0)
		return -EBADMSG;
	*bad = 0;

	for (unsigned k = 0; k < FTRACED_ATTR_SET_MAX; k++)
		if (ctl_attr_set_has(required, k) && !ctl_attr_set_has(&req->present, k)) {
			*bad = (uint16_t)k;
			return -EBADMSG;
		}

	return 0;
}

/**
 * ctl_string_valid() - would @s pass as string attribute @type?
 * @type: the attribute it is meant for
 * @s: NUL-terminated string
 * @max: its longest accepted length
 *
 * For builders of requests from other text (session files): the same rule
 * the parser applies, checked where a line number can still be given.
 *
 * Return: true if the parser would accept it.
 */
bool ctl_string_valid(enum ftraced_attr type, const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!char_ok((uint16_t)type, (uint8_t)s[i]))
			return false;
	return true;
}

/**
 * ctl_name_valid() - is @s an acceptable session name?
 * @s: NUL-terminated name
 *
 * Return: true for 1..FTRACED_NAME_MAX characters of [A-Za-z0-9_-].
 */
bool ctl_name_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > FTRACED_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!char_ok(FTRACED_ATTR_SESSION, (uint8_t)s[i]))
			return false;
	return true;
}
