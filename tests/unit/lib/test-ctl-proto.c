// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The control protocol codec: round trips of every request, and the
 * malformed packets a hostile client can send, each of which must be
 * rejected without touching the output.
 */
#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftraced/macro.h"
#include "lib/ctl/ctl-proto.h"
#include "lib/ctl/ctl-reply.h"

static struct ctl_builder b;
static struct ctl_request req;

static size_t finish(void)
{
	size_t n;

	assert(ctl_builder_finish(&b, &n) == 0);
	return n;
}

static void test_record_roundtrip(void)
{
	size_t n;

	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	ctl_put_string(&b, FTRACED_ATTR_EVENT, "sched:sched_switch");
	ctl_put_string(&b, FTRACED_ATTR_EVENT, "irq:*");
	ctl_put_string(&b, FTRACED_ATTR_EVENT, "block");
	ctl_put_string(&b, FTRACED_ATTR_FILTER, "common_pid == 42 && prev_prio < 100");
	ctl_put_u32(&b, FTRACED_ATTR_BUFFER_KB, 8192);
	ctl_put_u32(&b, FTRACED_ATTR_SUBBUF_KB, 16);
	ctl_put_string(&b, FTRACED_ATTR_CLOCK, "mono");
	ctl_put_u32(&b, FTRACED_ATTR_COMPRESSION, FTRACED_COMPRESSION_NONE);
	ctl_put_u32(&b, FTRACED_ATTR_LEVEL, (uint32_t)-3);
	ctl_put_u64(&b, FTRACED_ATTR_DURATION_MS, 10000);
	ctl_put_u32(&b, FTRACED_ATTR_RT_PRIORITY, 50);
	ctl_put_u64(&b, FTRACED_ATTR_KEEP_KB, FTRACED_KEEP_KB_MAX);
	n = finish();

	assert(ctl_request_parse(b.buf, n, &req, NULL) == 0);
	assert(req.type == FTRACED_MSG_RECORD);
	assert(req.n_events == 3);
	assert(strcmp(ctl_request_event(&req, 0), "sched:sched_switch") == 0);
	assert(strcmp(ctl_request_event(&req, 1), "irq:*") == 0);
	assert(strcmp(ctl_request_event(&req, 2), "block") == 0);
	assert(strcmp(req.filter, "common_pid == 42 && prev_prio < 100") == 0);
	assert(req.buffer_kb == 8192 && req.subbuf_kb == 16);
	assert(strcmp(req.clock, "mono") == 0);
	assert(req.compression == FTRACED_COMPRESSION_NONE);
	assert(req.level == -3);
	assert(req.duration_ms == 10000);
	assert(req.rt_priority == 50);
	assert(req.keep_kb == FTRACED_KEEP_KB_MAX);
	assert(ctl_request_has(&req, FTRACED_ATTR_CLOCK));
	assert(!ctl_request_has(&req, FTRACED_ATTR_SESSION));
}

static void expect_reject(const void *buf, size_t n, int error);

static void test_other_requests(void)
{
	size_t n;

	ctl_builder_init(&b, FTRACED_MSG_LIST);
	n = finish();
	assert(n == sizeof(struct ftraced_msg_hdr));
	assert(ctl_request_parse(b.buf, n, &req, NULL) == 0 && req.type == FTRACED_MSG_LIST);

	ctl_builder_init(&b, FTRACED_MSG_STOP);
	ctl_put_string(&b, FTRACED_ATTR_SESSION, "record-7");
	n = finish();
	assert(ctl_request_parse(b.buf, n, &req, NULL) == 0);
	assert(req.type == FTRACED_MSG_STOP && strcmp(req.session, "record-7") == 0);

	ctl_builder_init(&b, FTRACED_MSG_STATUS);
	n = finish();
	assert(ctl_request_parse(b.buf, n, &req, NULL) == 0 && !ctl_request_has(&req, FTRACED_ATTR_SESSION));

	/* RELOAD: 17 on the wire, whatever comes before it; it takes no attribute. */
	assert(FTRACED_MSG_RELOAD == 17);
	ctl_builder_init(&b, FTRACED_MSG_RELOAD);
	n = finish();
	assert(ctl_request_parse(b.buf, n, &req, NULL) == 0 && req.type == FTRACED_MSG_RELOAD);
	ctl_builder_init(&b, FTRACED_MSG_RELOAD);
	ctl_put_string(&b, FTRACED_ATTR_SESSION, "s2");
	n = finish();
	assert(ctl_request_parse(b.buf, n, &req, NULL) == -EBADMSG);
	/* 16 is no request. */
	ctl_builder_init(&b, (enum ftraced_msg_type)16);
	n = finish();
	assert(ctl_request_parse(b.buf, n, &req, NULL) == -EOPNOTSUPP);
	/* ROTATE is 18 on the wire (17 is RELOAD's) and names its session. */
	static_assert(FTRACED_MSG_ROTATE == 18, "ROTATE keeps its number");
	ctl_builder_init(&b, FTRACED_MSG_ROTATE);
	ctl_put_string(&b, FTRACED_ATTR_SESSION, "bg");
	n = finish();
	assert(ctl_request_parse(b.buf, n, &req, NULL) == 0);
	assert(req.type == FTRACED_MSG_ROTATE && strcmp(req.session, "bg") == 0);
	ctl_builder_init(&b, FTRACED_MSG_ROTATE);
	n = finish();
	expect_reject(b.buf, n, -EBADMSG); /* which session? */
	ctl_builder_init(&b, FTRACED_MSG_ROTATE);
	ctl_put_string(&b, FTRACED_ATTR_SESSION, "bg");
	ctl_put_u32(&b, FTRACED_ATTR_TRIM, 1);
	n = finish();
	expect_reject(b.buf, n, -EBADMSG); /* nothing else */
}

/* Builds a RECORD with one event, then lets the caller damage it. */
static size_t valid_record(void)
{
	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	ctl_put_string(&b, FTRACED_ATTR_EVENT, "sched");
	return finish();
}

static void expect_reject(const void *buf, size_t n, int error)
{
	static struct ctl_request untouched, saved;

	/* Poisoned, then put back: its events are still the last parse's, to be freed. */
	memcpy(&saved, &req, sizeof(req));
	memset(&req, 0x5a, sizeof(req));
	memcpy(&untouched, &req, sizeof(req));
	assert(ctl_request_parse(buf, n, &req, NULL) == error);
	assert(memcmp(&req, &untouched, sizeof(req)) == 0); /* *ret only written on success */
	memcpy(&req, &saved, sizeof(req));
}

static void test_malformed_header(void)
{
	size_t n = valid_record();
	uint8_t copy[FTRACED_MSG_SIZE_MAX];

	/* every truncation of a valid packet */
	for (size_t k = 0; k < n; k++)
		expect_reject(b.buf, k, -EBADMSG);
	/* a trailing byte */
	memcpy(copy, b.buf, n);
	copy[n] = 0;
	expect_reject(copy, n + 1, -EBADMSG);
	/* oversized */
	expect_reject(b.buf, FTRACED_MSG_SIZE_MAX + 1, -EBADMSG);

	memcpy(copy, b.buf, n);
	copy[0] ^= 1; /* magic */
	expect_reject(copy, n, -EBADMSG);
	memcpy(copy, b.buf, n);
	put_le16(copy + 4, FTRACED_PROTO_VERSION + 1);
	expect_reject(copy, n, -EPROTONOSUPPORT);
	memcpy(copy, b.buf, n);
	put_le32(copy + 8, 1); /* unknown flag */
	expect_reject(copy, n, -EBADMSG);
	memcpy(copy, b.buf, n);
	put_le32(copy + 12, UINT32_MAX); /* payload length overflow */
	expect_reject(copy, n, -EBADMSG);
	memcpy(copy, b.buf, n);
	put_le16(copy + 6, 0);
	expect_reject(copy, n, -EOPNOTSUPP);
	put_le16(copy + 6, _FTRACED_MSG_TYPE_MAX);
	expect_reject(copy, n, -EOPNOTSUPP);
	put_le16(copy + 6, FTRACED_MSG_FINISHED); /* a reply type is not a request */
	expect_reject(copy, n, -EOPNOTSUPP);
}

static void test_malformed_attrs(void)
{
	static const char *const bad_events[] = { "sched/x", "a b", "sched\n", "../x", "é" };
	char long_name[FTRACED_NAME_MAX + 2];
	size_t n;

	/* attribute length running past the payload */
	n = valid_record();
	put_le16(b.buf + sizeof(struct ftraced_msg_hdr) + 2, 200);
	expect_reject(b.buf, n, -EBADMSG);

	/* a partial attribute header */
	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	ctl_put_string(&b, FTRACED_ATTR_EVENT, "sched");
	n = finish();
	b.buf[n] = 1;
	put_le32(b.buf + 12, (uint32_t)(n + 1 - sizeof(struct ftraced_msg_hdr)));
	expect_reject(b.buf, n + 1, -EBADMSG);

	/* unknown attribute, reply-only attribute, attribute not allowed for the type */
	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	ctl_put_string(&b, FTRACED_ATTR_EVENT, "sched");
	ctl_put_u32(&b, _FTRACED_ATTR_MAX, 1);
	expect_reject(b.buf, finish(), -EBADMSG);
	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	ctl_put_string(&b, FTRACED_ATTR_EVENT, "sched");
	ctl_put_u32(&b, FTRACED_ATTR_ERRNO, 1);
	expect_reject(b.buf, finish(), -EBADMSG);
	ctl_builder_init(&b, FTRACED_MSG_LIST);
	ctl_put_string(&b, FTRACED_ATTR_SESSION, "x");
	expect_reject(b.buf, finish(), -EBADMSG);

	/* duplicates (other than events) */
	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	ctl_put_string(&b, FTRACED_ATTR_EVENT, "sched");
	ctl_put_u32(&b, FTRACED_ATTR_BUFFER_KB, 1);
	ctl_put_u32(&b, FTRACED_ATTR_BUFFER_KB, 2);
	expect_reject(b.buf, finish(), -EBADMSG);

	/* wrong integer widths */
	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	ctl_put_string(&b, FTRACED_ATTR_EVENT, "sched");
	ctl_put_u64(&b, FTRACED_ATTR_BUFFER_KB, 1);
	expect_reject(b.buf, finish(), -EBADMSG);
	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	ctl_put_string(&b, FTRACED_ATTR_EVENT, "sched");
	ctl_put_u32(&b, FTRACED_ATTR_DURATION_MS, 1);
	expect_reject(b.buf, finish(), -EBADMSG);
	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	ctl_put_string(&b, FTRACED_ATTR_EVENT, "sched");
	ctl_put_u32(&b, FTRACED_ATTR_COMPRESSION, _FTRACED_COMPRESSION_MAX);
	expect_reject(b.buf, finish(), -EBADMSG);
	/* -m is a record's only (its bounds are the daemon's: test-session-config) */
	ctl_builder_init(&b, FTRACED_MSG_CREATE);
	ctl_put_string(&b, FTRACED_ATTR_SESSION, "kept");
	ctl_put_string(&b, FTRACED_ATTR_EVENT, "sched");
	ctl_put_u64(&b, FTRACED_ATTR_KEEP_KB, 64);
	expect_reject(b.buf, finish(), -EBADMSG);
	for (size_t i = 0; i < 2; i++) {
		static const uint32_t bad_priorities[] = { 0, FTRACED_RT_PRIORITY_MAX + 1 };

		ctl_builder_init(&b, FTRACED_MSG_RECORD);
		ctl_put_string(&b, FTRACED_ATTR_EVENT, "sched");
		ctl_put_u32(&b, FTRACED_ATTR_RT_PRIORITY, bad_priorities[i]);
		expect_reject(b.buf, finish(), -EBADMSG);
	}

	/* strings: bad characters, embedded NUL, empty, too long */
	for (size_t i = 0; i < ELEMENTSOF(bad_events); i++) {
		ctl_builder_init(&b, FTRACED_MSG_RECORD);
		ctl_put_string(&b, FTRACED_ATTR_EVENT, bad_events[i]);
		expect_reject(b.buf, finish(), -EBADMSG);
	}
	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	ctl_put(&b, FTRACED_ATTR_EVENT, "sch\0ed", 6);
	expect_reject(b.buf, finish(), -EBADMSG);
	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	ctl_put(&b, FTRACED_ATTR_EVENT, "", 0);
	expect_reject(b.buf, finish(), -EBADMSG);
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	ctl_builder_init(&b, FTRACED_MSG_STOP);
	ctl_put_string(&b, FTRACED_ATTR_SESSION, long_name);
	expect_reject(b.buf, finish(), -EBADMSG);
	ctl_builder_init(&b, FTRACED_MSG_STOP);
	ctl_put_string(&b, FTRACED_ATTR_SESSION, "a:b");
	expect_reject(b.buf, finish(), -EBADMSG);
	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	ctl_put_string(&b, FTRACED_ATTR_EVENT, "sched");
	ctl_put_string(&b, FTRACED_ATTR_FILTER, "pid == 1\t");
	expect_reject(b.buf, finish(), -EBADMSG);

	/* -f: after its event, once */
	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	ctl_put_string(&b, FTRACED_ATTR_EVENT_FILTER, "pid == 1");
	ctl_put_string(&b, FTRACED_ATTR_EVENT, "sched");
	expect_reject(b.buf, finish(), -EBADMSG);
	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	ctl_put_string(&b, FTRACED_ATTR_EVENT, "sched");
	ctl_put_string(&b, FTRACED_ATTR_EVENT_FILTER, "pid == 1");
	ctl_put_string(&b, FTRACED_ATTR_EVENT_FILTER, "pid == 2");
	expect_reject(b.buf, finish(), -EBADMSG);
	/* function globs: no spaces, no slashes; a tracer is a name; depth at least 1 */
	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	ctl_put_string(&b, FTRACED_ATTR_FTRACE_FILTER, "vfs_* x");
	expect_reject(b.buf, finish(), -EBADMSG);
	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	ctl_put_string(&b, FTRACED_ATTR_GRAPH_FUNCTION, "../x");
	expect_reject(b.buf, finish(), -EBADMSG);
	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	ctl_put_string(&b, FTRACED_ATTR_TRACER, "function graph");
	expect_reject(b.buf, finish(), -EBADMSG);
	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	ctl_put_u32(&b, FTRACED_ATTR_MAX_GRAPH_DEPTH, 0);
	expect_reject(b.buf, finish(), -EBADMSG);
	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	for (unsigned i = 0; i <= FTRACED_PROBES_PER_REQUEST_MAX; i++)
		ctl_put_string(&b, FTRACED_ATTR_PROBE, "p:x do_sys_open");
	expect_reject(b.buf, finish(), -EBADMSG);

	/* required attributes (what to record is the session configuration's to check) */
	ctl_builder_init(&b, FTRACED_MSG_CREATE);
	ctl_put_string(&b, FTRACED_ATTR_EVENT, "sched");
	expect_reject(b.buf, finish(), -EBADMSG);
	ctl_builder_init(&b, FTRACED_MSG_STOP);
	expect_reject(b.buf, finish(), -EBADMSG);
}

/* Long repeated strings land in the request's text, each where it belongs. */
static void test_capture_breadth_attributes(void)
{
	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	ctl_put_string(&b, FTRACED_ATTR_EVENT, "sched:sched_switch");
	ctl_put_string(&b, FTRACED_ATTR_EVENT, "irq");
	ctl_put_string(&b, FTRACED_ATTR_EVENT_FILTER, "irq == 1");
	ctl_put_string(&b, FTRACED_ATTR_TRACER, "function");
	ctl_put_string(&b, FTRACED_ATTR_FTRACE_FILTER, "vfs_*");
	ctl_put_string(&b, FTRACED_ATTR_FTRACE_NOTRACE, "vfs_write:mod:ext4");
	ctl_put_string(&b, FTRACED_ATTR_FTRACE_FILTER, "do_sys_open*");
	ctl_put_string(&b, FTRACED_ATTR_PROBE, "p:x /bin/true:main n=%di");
	assert(ctl_request_parse(b.buf, finish(), &req, NULL) == 0);
	assert(req.n_events == 2);
	assert(ctl_request_event_filter(&req, 0) == NULL);
	assert(strcmp(ctl_request_event_filter(&req, 1), "irq == 1") == 0);
	assert(strcmp(req.tracer, "function") == 0);
	assert(req.n_functions == 3);
	assert(req.functions[1].attr == FTRACED_ATTR_FTRACE_NOTRACE);
	assert(strcmp(req.text + req.functions[1].offset, "vfs_write:mod:ext4") == 0);
	assert(strcmp(req.text + req.functions[2].offset, "do_sys_open*") == 0);
	assert(req.n_probes == 1 && strcmp(req.text + req.probes[0], "p:x /bin/true:main n=%di") == 0);
	/* No event: still a request; the configuration asks for something to record. */
	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	ctl_put_string(&b, FTRACED_ATTR_TRACER, "function");
	assert(ctl_request_parse(b.buf, finish(), &req, NULL) == 0);
}

/* "sys_N:ev_N", as a kernel's thousands of events are named. */
static const char *event_name(unsigned k)
{
	static char name[32];

	snprintf(name, sizeof(name), "sys_%u:ev_%u", k % 97, k);
	return name;
}

/* Short lists travel inline; long ones in the memfd, in order, filters with their events. */
static void test_event_list(void)
{
	struct ctl_request *big = calloc(1, sizeof(*big));
	size_t n;

	assert(big);
	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	for (unsigned k = 0; k < 300; k++)
		ctl_put_event(&b, FTRACED_ATTR_EVENT, event_name(k));
	ctl_put_u32(&b, FTRACED_ATTR_BUFFER_KB, 1024);
	n = finish();
	assert(b.n_list == 0); /* 300 events: about 6 KiB, inline */
	assert(ctl_request_parse(b.buf, n, &req, NULL) == 0);
	assert(req.n_events == 300 && !ctl_request_has(&req, FTRACED_ATTR_EVENT_LIST));
	assert(strcmp(ctl_request_event(&req, 299), event_name(299)) == 0);
	ctl_builder_done(&b);

	ctl_builder_init(&b, FTRACED_MSG_CREATE);
	ctl_put_string(&b, FTRACED_ATTR_SESSION, "many");
	ctl_put_u32(&b, FTRACED_ATTR_MODE, FTRACED_MODE_CONTINUOUS);
	for (unsigned k = 0; k < 20000; k++) {
		ctl_put_event(&b, FTRACED_ATTR_EVENT, event_name(k));
		if (k % 1000 == 7)
			ctl_put_event(&b, FTRACED_ATTR_EVENT_FILTER, "common_pid != 0");
	}
	n = finish();
	assert(n < 128 && b.n_list > FTRACED_EVENTS_INLINE_SIZE_MAX);
	/* The message alone names the list; the events are the memfd's. */
	assert(ctl_request_parse(b.buf, n, big, NULL) == 0);
	assert(ctl_request_has(big, FTRACED_ATTR_EVENT_LIST) && big->n_events == 0);
	assert(big->event_list.offset == 0 && big->event_list.size == b.n_list);
	assert(ctl_request_parse_event_list(big, b.list, b.n_list, NULL) == 0);
	assert(big->n_events == 20000);
	for (unsigned k = 0; k < 20000; k++) {
		assert(strcmp(ctl_request_event(big, k), event_name(k)) == 0);
		assert(!ctl_request_event_filter(big, k) == (k % 1000 != 7));
	}
	ctl_request_done(big);
	assert(ctl_builder_parse(&b, big, NULL) == 0 && big->n_events == 20000);
	ctl_request_done(big);
	ctl_builder_done(&b);

	/* Beyond the protocol's limit: a named refusal, not a malformed request. */
	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	for (unsigned k = 0; k <= FTRACED_EVENTS_PER_REQUEST_MAX; k++)
		ctl_put_event(&b, FTRACED_ATTR_EVENT, "sched");
	assert(ctl_builder_parse(&b, big, NULL) == -E2BIG);
	ctl_builder_done(&b);
	free(big);
}

static void test_event_list_malformed(void)
{
	uint8_t list[64], ref[16];
	struct ctl_attr_iter it = { .p = list };
	size_t n;

	/* Inline events and a list together: which list would a filter belong to? */
	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	ctl_put_string(&b, FTRACED_ATTR_EVENT, "sched");
	put_le64(ref, 0);
	put_le64(ref + 8, 9);
	ctl_put(&b, FTRACED_ATTR_EVENT_LIST, ref, sizeof(ref));
	expect_reject(b.buf, finish(), -EBADMSG);
	/* Empty, beyond the limit, wrapping, of the wrong size. */
	const uint64_t bad[][2] = {
		{ 0, 0 }, { 0, FTRACED_EVENT_LIST_SIZE_MAX + 1ull },
		{ FTRACED_EVENT_LIST_SIZE_MAX, 1 }, { UINT64_MAX, 2 },
	};
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		ctl_builder_init(&b, FTRACED_MSG_RECORD);
		put_le64(ref, bad[i][0]);
		put_le64(ref + 8, bad[i][1]);
		ctl_put(&b, FTRACED_ATTR_EVENT_LIST, ref, sizeof(ref));
		expect_reject(b.buf, finish(), -EBADMSG);
	}
	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	ctl_put(&b, FTRACED_ATTR_EVENT_LIST, ref, 8);
	expect_reject(b.buf, finish(), -EBADMSG);

	/* A list holds events and their filters only, well framed, and is not empty. */
	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	put_le64(ref, 0);
	put_le64(ref + 8, 9);
	ctl_put(&b, FTRACED_ATTR_EVENT_LIST, ref, sizeof(ref));
	n = finish();
	assert(ctl_request_parse(b.buf, n, &req, NULL) == 0);
	put_le16(list, FTRACED_ATTR_SESSION);
	put_le16(list + 2, 5);
	memcpy(list + 4, "sched", 5);
	assert(ctl_request_parse_event_list(&req, list, 9, NULL) == -EBADMSG);
	put_le16(list, FTRACED_ATTR_EVENT_FILTER); /* no event before it */
	assert(ctl_request_parse_event_list(&req, list, 9, NULL) == -EBADMSG);
	put_le16(list, FTRACED_ATTR_EVENT);
	assert(ctl_request_parse_event_list(&req, list, 8, NULL) == -EBADMSG); /* cut */
	assert(ctl_request_parse_event_list(&req, list, 0, NULL) == -EBADMSG);
	list[4] = '/';
	assert(ctl_request_parse_event_list(&req, list, 9, NULL) == -EBADMSG);
	list[4] = 's';
	assert(ctl_request_parse_event_list(&req, list, 9, NULL) == 0 && req.n_events == 1);
	(void)it;
	ctl_request_done(&req);
}

static void test_builder_overflow(void)
{
	static char big[FTRACED_FILTER_MAX];
	size_t n;

	memset(big, 'x', sizeof(big) - 1);
	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	for (int i = 0; i < 40; i++)
		ctl_put_string(&b, FTRACED_ATTR_FILTER, big);
	assert(ctl_builder_finish(&b, &n) == -EMSGSIZE);
}

static void test_reply_decode(void)
{
	struct ftraced_cpu_stats in = { .cpu = 3, .bytes_raw = 1ull << 40, .bytes_stored = 7,
					.chunks = 9, .entries = 1, .overrun = 2, .dropped = 3,
					.read = 4 }, out;
	struct ctl_attr_iter it;
	struct ctl_attr a;
	struct ctl_msg m;
	char s[FTRACED_MESSAGE_MAX + 1];
	size_t n;

	ctl_builder_init(&b, FTRACED_MSG_SESSIONS);
	ctl_put(&b, FTRACED_ATTR_SESSION_BEGIN, NULL, 0);
	ctl_put_cpu_stats(&b, FTRACED_ATTR_CPU, &in);
	ctl_put_string(&b, FTRACED_ATTR_MESSAGE, "line one\n  line two");
	n = finish();
	assert(ctl_msg_parse(b.buf, n, &m) == 0 && m.type == FTRACED_MSG_SESSIONS);
	ctl_attr_iter_init(&it, &m);
	assert(ctl_attr_next(&it, &a) == 1 && a.type == FTRACED_ATTR_SESSION_BEGIN && a.len == 0);
	assert(ctl_attr_next(&it, &a) == 1 && ctl_attr_cpu_stats(&a, &out) == 0);
	assert(memcmp(&in, &out, sizeof(in)) == 0);
	assert(ctl_attr_next(&it, &a) == 1 && ctl_attr_string(&a, FTRACED_MESSAGE_MAX, s) == 0);
	assert(strcmp(s, "line one\n  line two") == 0);
	assert(ctl_attr_next(&it, &a) == 0);
}

/* Counters and the daemon's record survive the trip through ctl_reply_decode(). */
static void test_counters_decode(void)
{
	struct ftraced_session_counters sc = { .files_written = 5, .files_deleted = 2,
					       .files_failed = 1, .triggers_fired = 3,
					       .triggers_suppressed = 1ull << 40,
					       .bytes_deleted = 6ull << 30, .retention_failures = 4 };
	struct ftraced_daemon_counters dc = { .uptime_ms = 1234, .connections = 7,
					      .connections_refused = 1, .requests = 9,
					      .request_errors = 2, .hooks_run = 4, .hooks_failed = 1,
					      .sessions_started = 3 };
	struct reply rep;
	size_t n;

	ctl_builder_init(&b, FTRACED_MSG_SESSIONS);
	ctl_put_daemon_counters(&b, &dc);
	ctl_put_u64(&b, FTRACED_ATTR_DAEMON_CPU, 4321);
	ctl_put_string(&b, FTRACED_ATTR_PENDING_INSTANCE, "ftraced-x");
	ctl_put(&b, FTRACED_ATTR_SESSION_BEGIN, NULL, 0);
	ctl_put_string(&b, FTRACED_ATTR_SESSION, "a");
	ctl_put_session_counters(&b, &sc);
	n = finish();
	assert(ctl_reply_decode(b.buf, n, &rep) == 0);
	assert(rep.has_daemon && memcmp(&rep.daemon, &dc, sizeof(dc)) == 0);
	assert(rep.has_daemon_cpu && rep.daemon_cpu_usec == 4321);
	assert(rep.n_pending == 1 && strcmp(rep.pending[0], "ftraced-x") == 0);
	assert(rep.sessions.n == 1 && strcmp(rep.sessions.items[0].name, "a") == 0);
	assert(memcmp(&rep.sessions.items[0].counters, &sc, sizeof(sc)) == 0);
	ctl_reply_done(&rep);

	/* a short counters attribute fails the reply */
	ctl_builder_init(&b, FTRACED_MSG_SESSIONS);
	ctl_put_u64(&b, FTRACED_ATTR_DAEMON_COUNTERS, 1);
	n = finish();
	assert(ctl_reply_decode(b.buf, n, &rep) == -EBADMSG);
	/* so does a CPU time that is not a u64 */
	ctl_builder_init(&b, FTRACED_MSG_SESSIONS);
	ctl_put_u32(&b, FTRACED_ATTR_DAEMON_CPU, 1);
	n = finish();
	assert(ctl_reply_decode(b.buf, n, &rep) == -EBADMSG);

	/* reply-only attributes from 64 on are refused in a request */
	ctl_builder_init(&b, FTRACED_MSG_LIST);
	ctl_put_session_counters(&b, &sc);
	expect_reject(b.buf, finish(), -EBADMSG);
}

static void test_names(void)
{
	assert(ctl_name_valid("record-1"));
	assert(ctl_name_valid("A_b-9"));
	assert(!ctl_name_valid(""));
	assert(!ctl_name_valid("a/b"));
	assert(!ctl_name_valid(".."));
	assert(!ctl_name_valid("a b"));
}

/* Two session records: one with a few events inline, one with thousands in the memfd. */
static void test_reply_event_lists(void)
{
	struct reply r;
	size_t n;

	ctl_builder_init(&b, FTRACED_MSG_SESSIONS);
	ctl_put(&b, FTRACED_ATTR_SESSION_BEGIN, NULL, 0);
	ctl_put_string(&b, FTRACED_ATTR_SESSION, "few");
	ctl_put_event(&b, FTRACED_ATTR_EVENT, "sched");
	ctl_put_event(&b, FTRACED_ATTR_EVENT, "nosuch:event");
	ctl_put_event(&b, FTRACED_ATTR_SKIPPED_EVENT, "nosuch:event");
	ctl_put_events_end(&b);
	ctl_put(&b, FTRACED_ATTR_SESSION_BEGIN, NULL, 0);
	ctl_put_string(&b, FTRACED_ATTR_SESSION, "many");
	for (unsigned k = 0; k < 5000; k++)
		ctl_put_event(&b, FTRACED_ATTR_EVENT, event_name(k));
	for (unsigned k = 0; k < 5000; k += 2)
		ctl_put_event(&b, FTRACED_ATTR_SKIPPED_EVENT, event_name(k));
	ctl_put_events_end(&b);
	n = finish();
	assert(b.n_list > 0);

	assert(ctl_reply_decode(b.buf, n, &r) == 0 && r.sessions.n == 2);
	assert(r.sessions.items[0].n_events == 2 && r.sessions.items[0].n_skipped == 1);
	assert(r.sessions.items[0].skipped[1] && !r.sessions.items[0].skipped[0]);
	assert(ctl_reply_has_event_lists(&r) && r.sessions.items[1].n_events == 0);
	/* A list that does not reach as far as the record says: the reply is refused. */
	assert(ctl_reply_decode_event_lists(&r, b.list, b.n_list - 1) == -EBADMSG);
	ctl_reply_done(&r);

	assert(ctl_reply_decode(b.buf, n, &r) == 0);
	assert(ctl_reply_decode_event_lists(&r, b.list, b.n_list) == 0);
	assert(!ctl_reply_has_event_lists(&r));
	assert(r.sessions.items[1].n_events == 5000 && r.sessions.items[1].n_skipped == 2500);
	for (unsigned k = 0; k < 5000; k++) {
		assert(strcmp(r.sessions.items[1].events[k], event_name(k)) == 0);
		assert(r.sessions.items[1].skipped[k] == (k % 2 == 0));
	}
	ctl_reply_done(&r);
	ctl_builder_done(&b);
}

int main(void)
{
	test_record_roundtrip();
	test_other_requests();
	test_malformed_header();
	test_malformed_attrs();
	test_capture_breadth_attributes();
	test_event_list();
	test_event_list_malformed();
	test_builder_overflow();
	test_reply_decode();
	test_reply_event_lists();
	test_counters_decode();
	test_names();
	printf("ctl-proto: all tests passed\n");
	return 0;
}
