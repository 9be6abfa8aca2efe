// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A session's configuration from a request: defaults per mode, every
 * bound of bounds.h refused with its message, options of one mode refused
 * in another, and memory checked against what is passed in (no /proc).
 */
#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon/base/bounds.h"
#include "daemon/capture/capture.h"
#include "daemon/output/session-config.h"
#include "lib/ctl/ctl-proto.h"

#define CPUS 4
#define PLENTY_KB (UINT64_C(64) << 20) /* 64 GiB available */

static char error[256];

static struct ctl_request request(uint16_t type, enum ftraced_mode mode)
{
	static char text[] = "sched:sched_switch\0irq";
	static struct ctl_event events[] = { { .spec = 0 }, { .spec = 19 } };
	struct ctl_request req = { .type = type, .mode = mode, .n_events = 2, .events = events,
				   .event_text = text, .n_event_text = sizeof(text) };

	return req;
}

static void set(struct ctl_request *req, enum ftraced_attr a)
{
	ctl_attr_set_add(&req->present, a);
}

static int build(const struct ctl_request *req, uid_t owner, uint64_t avail_kb,
		 struct session_config *c)
{
	error[0] = '\0';
	struct memory_budget mem = { .available_kb = avail_kb };

	return session_config_from_request(req, owner, CPUS, &mem, c, error, sizeof(error));
}

static void expect_refused(const struct ctl_request *req, uid_t owner, uint64_t avail_kb,
			   int expected, const char *words)
{
	struct session_config c = { .level = 12345 };

	assert(build(req, owner, avail_kb, &c) == expected);
	assert(c.level == 12345); /* untouched on failure */
	if (!strstr(error, words)) {
		fprintf(stderr, "expected '%s' in '%s'\n", words, error);
		assert(false);
	}
}

static void test_record_defaults(void)
{
	struct ctl_request req = request(FTRACED_MSG_RECORD, FTRACED_MODE_CONTINUOUS);
	struct session_config c;

	assert(build(&req, 1000, PLENTY_KB, &c) == 0);
	assert(c.mode == FTRACED_MODE_RECORD); /* RECORD is a record, whatever mode says */
	assert(c.buffer_kb == BUFFER_KB_DEFAULT && c.subbuf_kb == 0);
	assert(c.zstd && c.level == ZSTD_LEVEL_DEFAULT && c.duration_ms == 0);
	assert(c.n_events == 2 && strcmp(c.events[1], "irq") == 0);
	assert(!c.filter && !c.clock && !c.on_segment && c.n_triggers == 0);
	assert(c.segment_size == 0 && c.retention.max_files == 0);
	session_config_done(&c);
	assert(!c.events && c.n_events == 0);
	session_config_done(&c); /* idempotent */

	req.compression = FTRACED_COMPRESSION_NONE;
	req.level = -3;
	set(&req, FTRACED_ATTR_LEVEL);
	snprintf(req.filter, sizeof(req.filter), "prev_pid != 0");
	set(&req, FTRACED_ATTR_FILTER);
	snprintf(req.clock, sizeof(req.clock), "mono");
	set(&req, FTRACED_ATTR_CLOCK);
	assert(build(&req, 0, PLENTY_KB, &c) == 0);
	assert(!c.zstd && c.level == -3);
	assert(strcmp(c.filter, "prev_pid != 0") == 0 && strcmp(c.clock, "mono") == 0);
	session_config_done(&c);
}

static void test_sizes(void)
{
	struct ctl_request req = request(FTRACED_MSG_RECORD, 0);

	req.buffer_kb = BUFFER_KB_MAX + 1;
	expect_refused(&req, 0, PLENTY_KB, -EINVAL, "outside");
	req.buffer_kb = 1024;
	/* 4 CPUs x 1 MiB is more than 10% of 20 MiB. */
	expect_refused(&req, 0, 20 * 1024, -ENOMEM, "of available memory");
	req.subbuf_kb = 12;
	expect_refused(&req, 0, PLENTY_KB, -EINVAL, "not a power of two");
	req.subbuf_kb = 1024;
	expect_refused(&req, 0, PLENTY_KB, -EINVAL, "the kernel's largest sub-buffer is 512 KiB");
	req.buffer_kb = 8;
	req.subbuf_kb = 16;
	expect_refused(&req, 0, PLENTY_KB, -EINVAL, "larger than the buffer");
	req.subbuf_kb = 0;
	req.level = ZSTD_LEVEL_MAX + 1;
	set(&req, FTRACED_ATTR_LEVEL);
	expect_refused(&req, 0, PLENTY_KB, -EINVAL, "zstd level");
	req.level = 1;
	set(&req, FTRACED_ATTR_DURATION_MS);
	expect_refused(&req, 0, PLENTY_KB, -EINVAL, "duration");
}

static void test_continuous(void)
{
	struct ctl_request req = request(FTRACED_MSG_CREATE, FTRACED_MODE_CONTINUOUS);
	struct session_config c;

	assert(build(&req, 1000, PLENTY_KB, &c) == 0);
	assert(c.segment_size == SEGMENT_SIZE_DEFAULT && c.segment_time_ms == 0);
	session_config_done(&c);

	/* By time only: no size. */
	req.segment_time_ms = 60000;
	set(&req, FTRACED_ATTR_SEGMENT_TIME_MS);
	req.max_age_ms = 3600000;
	set(&req, FTRACED_ATTR_MAX_AGE_MS);
	assert(build(&req, 1000, PLENTY_KB, &c) == 0);
	assert(c.segment_size == 0 && c.segment_time_ms == 60000);
	assert(c.retention.max_age_usec == UINT64_C(3600000) * 1000);
	session_config_done(&c);

	req.segment_size = SEGMENT_SIZE_MIN - 1;
	set(&req, FTRACED_ATTR_SEGMENT_SIZE);
	expect_refused(&req, 1000, PLENTY_KB, -EINVAL, "segment size");
	req.segment_size = SEGMENT_SIZE_MIN;
	set(&req, FTRACED_ATTR_MAX_FILES);
	expect_refused(&req, 1000, PLENTY_KB, -EINVAL, "--max-files");
	req.max_files = 3;
	set(&req, FTRACED_ATTR_KEEP_FREE_PERCENT);
	req.keep_free_percent = 100;
	expect_refused(&req, 1000, PLENTY_KB, -EINVAL, "--keep-free");
	req.keep_free_percent = 10;

	/* Budgets that would delete every segment as it closes. */
	req.max_total = SEGMENT_SIZE_MIN - 1;
	set(&req, FTRACED_ATTR_MAX_TOTAL);
	expect_refused(&req, 1000, PLENTY_KB, -EINVAL, "cannot hold one segment");
	req.max_total = SEGMENT_SIZE_MIN;
	req.max_age_ms = 59999; /* segments of 60 s (set above) */
	expect_refused(&req, 1000, PLENTY_KB, -EINVAL,
		       "--max-age must be at least 60000 ms (the segment time)");
	ctl_attr_set_remove(&req.present, FTRACED_ATTR_SEGMENT_TIME_MS);
	req.segment_time_ms = 0;
	req.max_age_ms = 1;
	expect_refused(&req, 1000, PLENTY_KB, -EINVAL,
		       "--max-age must be at least 1000 ms (one second)");
	req.max_age_ms = RETENTION_AGE_MS_MIN;
	req.keep_free_percent = 99;
	expect_refused(&req, 1000, PLENTY_KB, -EINVAL, "at most 90% may be kept free");
	req.keep_free_percent = 10;
	assert(build(&req, 1000, PLENTY_KB, &c) == 0);
	assert(c.retention.max_total == SEGMENT_SIZE_MIN && c.segment_size == SEGMENT_SIZE_MIN);
	session_config_done(&c);

	/* --on-segment: root only, a full path, no shell. */
	snprintf(req.on_segment, sizeof(req.on_segment), "/usr/bin/true 'a b'");
	set(&req, FTRACED_ATTR_ON_SEGMENT);
	expect_refused(&req, 1000, PLENTY_KB, -EPERM, "only root");
	assert(build(&req, 0, PLENTY_KB, &c) == 0);
	assert(strcmp(c.on_segment, "/usr/bin/true 'a b'") == 0 && c.retention.max_files == 3);
	session_config_done(&c);
	snprintf(req.on_segment, sizeof(req.on_segment), "true");
	expect_refused(&req, 0, PLENTY_KB, -EINVAL, "full path");

	/* Flight options need --mode flight. */
	req = request(FTRACED_MSG_CREATE, FTRACED_MODE_CONTINUOUS);
	req.flight_size = 8 << 20;
	set(&req, FTRACED_ATTR_FLIGHT_SIZE);
	expect_refused(&req, 0, PLENTY_KB, -EINVAL, "need --mode flight");
	req = request(FTRACED_MSG_RECORD, 0);
	req.n_triggers = 1;
	expect_refused(&req, 0, PLENTY_KB, -EINVAL, "need --mode flight");
}

static void test_flight(void)
{
	struct ctl_request req = request(FTRACED_MSG_CREATE, FTRACED_MODE_FLIGHT);
	struct session_config c;

	assert(build(&req, 1000, PLENTY_KB, &c) == 0);
	assert(c.backend == FTRACED_FLIGHT_MEMORY && c.flight_size == FLIGHT_SIZE_DEFAULT);
	assert(c.segment_size == 0);
	session_config_done(&c);

	req.n_triggers = 2;
	snprintf(req.triggers[0], sizeof(req.triggers[0]), "oom");
	snprintf(req.triggers[1], sizeof(req.triggers[1]), "signal=SIGSEGV,post=2s");
	assert(build(&req, 1000, PLENTY_KB, &c) == 0);
	assert(c.n_triggers == 2 && strcmp(c.triggers[1], "signal=SIGSEGV,post=2s") == 0);
	session_config_done(&c);

	/*
	 * FLIGHT_SIZE_MIN and four chunks per CPU at least: chunks shrink with
	 * the ring, but not below a sub-buffer. At most 25% of memory.
	 */
	req.flight_size = FLIGHT_SIZE_MIN - 1;
	set(&req, FTRACED_ATTR_FLIGHT_SIZE);
	expect_refused(&req, 0, PLENTY_KB, -EINVAL, "--flight-size must be at least");
	req.flight_size = FLIGHT_SIZE_MIN;
	assert(build(&req, 0, PLENTY_KB, &c) == 0);
	session_config_done(&c);
	assert(capture_ring_chunk_target(FLIGHT_SIZE_MIN / CPUS) * 4 <= FLIGHT_SIZE_MIN / CPUS);
	assert(capture_ring_chunk_target(FLIGHT_SIZE_DEFAULT / CPUS) == CHUNK_TARGET_BYTES);
	req.subbuf_kb = FLIGHT_SIZE_MIN / CPUS / 4 / 1024 * 2;
	expect_refused(&req, 0, PLENTY_KB, -EINVAL, "4 chunks of 128 KiB per CPU");
	req.subbuf_kb = 0;
	req.flight_size = 256 << 20;
	expect_refused(&req, 0, 512 * 1024, -ENOMEM, "of available memory");
	assert(build(&req, 0, 0, &c) == 0); /* MemAvailable unknown: not checked */
	session_config_done(&c);

	req.flight_backend = FTRACED_FLIGHT_KERNEL;
	set(&req, FTRACED_ATTR_FLIGHT_BACKEND);
	expect_refused(&req, 0, PLENTY_KB, -EINVAL, "--buffer-size");
	ctl_attr_set_remove(&req.present, FTRACED_ATTR_FLIGHT_SIZE);
	assert(build(&req, 0, PLENTY_KB, &c) == 0);
	assert(c.backend == FTRACED_FLIGHT_KERNEL && c.flight_size == 0);
	session_config_done(&c);

	set(&req, FTRACED_ATTR_SEGMENT_TIME_MS);
	req.segment_time_ms = 1000;
	expect_refused(&req, 0, PLENTY_KB, -EINVAL, "for continuous sessions");
}

/* One limit over all sessions: rings (with triggers') and a memory history count. */
static void test_memory_limit(void)
{
	struct ctl_request req = request(FTRACED_MSG_CREATE, FTRACED_MODE_FLIGHT);
	uint64_t need = (uint64_t)BUFFER_KB_DEFAULT * 1024 * CPUS + FLIGHT_SIZE_DEFAULT;
	struct memory_budget mem = { .available_kb = PLENTY_KB, .limit = need };
	struct session_config c = { .level = 12345 };

	assert(session_config_from_request(&req, 0, CPUS, &mem, &c, error, sizeof(error)) == 0);
	assert(session_config_memory(&c, CPUS) == need);
	session_config_done(&c);
	mem.committed = 1;
	c.level = 12345;
	assert(session_config_from_request(&req, 0, CPUS, &mem, &c, error, sizeof(error)) ==
	       -ENOMEM);
	assert(c.level == 12345 && strstr(error, "memory-limit in ftraced.conf"));

	req.n_triggers = 1;
	snprintf(req.triggers[0], sizeof(req.triggers[0]), "oom");
	mem = (struct memory_budget){ .limit = need + TRIGGER_BUFFER_KB * 1024 * CPUS };
	assert(session_config_from_request(&req, 0, CPUS, &mem, &c, error, sizeof(error)) == 0);
	session_config_done(&c);
	mem.limit--;
	assert(session_config_from_request(&req, 0, CPUS, &mem, &c, error, sizeof(error)) ==
	       -ENOMEM);
}

/*
 * record -m: kept in memory per CPU, so counted by memory-limit and held,
 * over all CPUs, to what a flight recorder may take of available memory.
 */
static void test_keep(void)
{
	struct ctl_request req = request(FTRACED_MSG_RECORD, FTRACED_MODE_RECORD);
	uint64_t ring = (uint64_t)BUFFER_KB_DEFAULT * 1024 * CPUS;
	struct memory_budget mem = { .available_kb = PLENTY_KB };
	struct session_config c = {};

	req.keep_kb = 64;
	set(&req, FTRACED_ATTR_KEEP_KB);
	assert(session_config_from_request(&req, 0, CPUS, &mem, &c, error, sizeof(error)) == 0);
	assert(c.keep_size == 64 * 1024);
	assert(session_config_memory(&c, CPUS) == ring + 64 * 1024 * CPUS);
	session_config_done(&c);
	mem.limit = ring + 64 * 1024 * CPUS - 1;
	assert(session_config_from_request(&req, 0, CPUS, &mem, &c, error, sizeof(error)) ==
	       -ENOMEM);
	assert(strstr(error, "memory-limit in ftraced.conf"));

	/* A large SIZE is refused by the memory there is, not by a number. */
	req.keep_kb = FTRACED_KEEP_KB_MAX;
	req.buffer_kb = 1024;
	assert(build(&req, 0, 0, &c) == 0 && c.keep_size == FTRACED_KEEP_KB_MAX * 1024);
	session_config_done(&c);
	req.keep_kb = PLENTY_KB / CPUS / 8;
	assert(build(&req, 0, PLENTY_KB, &c) == 0);
	session_config_done(&c);
	req.keep_kb = PLENTY_KB / CPUS / 2;
	expect_refused(&req, 0, PLENTY_KB, -ENOMEM, "of available memory");
	/* What no client of ours sends: the bounds are named. */
	req.keep_kb = 0;
	expect_refused(&req, 0, PLENTY_KB, -EINVAL, "FTRACED_KEEP_KB_MAX");
	req.keep_kb = FTRACED_KEEP_KB_MAX + 1;
	expect_refused(&req, 0, 0, -EINVAL, "FTRACED_KEEP_KB_MAX");
}

/* A request as the wire brings it: built, then parsed. */
static struct ctl_request *wire(struct ctl_builder *b)
{
	static struct ctl_request req;

	assert(ctl_builder_parse(b, &req, NULL) == 0);
	ctl_builder_done(b);
	return &req;
}

/* -p and what only a tracer uses, by trace-cmd's rules; -f per event; --probe root only. */
static void test_tracer_and_probes(void)
{
	static struct ctl_builder b;
	struct session_config c = {};

	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	ctl_put_string(&b, FTRACED_ATTR_TRACER, "function_graph");
	ctl_put_string(&b, FTRACED_ATTR_GRAPH_FUNCTION, "do_sys_openat2");
	ctl_put_string(&b, FTRACED_ATTR_FTRACE_NOTRACE, "vfs_*");
	ctl_put_u32(&b, FTRACED_ATTR_MAX_GRAPH_DEPTH, 4);
	assert(build(wire(&b), 0, PLENTY_KB, &c) == 0);
	assert(strcmp(c.tracer.name, "function_graph") == 0 && c.n_events == 0);
	assert(c.tracer.n_graph == 1 && strcmp(c.tracer.graph[0], "do_sys_openat2") == 0);
	assert(c.tracer.n_notrace == 1 && c.tracer.n_filter == 0 && c.tracer.filter[0] == NULL);
	assert(c.tracer.max_graph_depth == 4);
	session_config_done(&c);

	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	ctl_put_string(&b, FTRACED_ATTR_EVENT, "sched");
	ctl_put_string(&b, FTRACED_ATTR_EVENT, "irq");
	ctl_put_string(&b, FTRACED_ATTR_EVENT_FILTER, "irq == 3");
	assert(build(wire(&b), 0, PLENTY_KB, &c) == 0);
	assert(c.event_filters && !c.event_filters[0] && strcmp(c.event_filters[1], "irq == 3") == 0);
	assert(!c.tracer.name);
	session_config_done(&c);

	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	ctl_put_string(&b, FTRACED_ATTR_PROBE, "p:x do_sys_open");
	assert(build(wire(&b), 0, PLENTY_KB, &c) == 0 && c.n_probes == 1);
	session_config_done(&c);
	expect_refused(wire(&b), 1000, PLENTY_KB, -EPERM, "only root may add probes");

	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	expect_refused(wire(&b), 0, PLENTY_KB, -EINVAL, "nothing to record");
	ctl_put_string(&b, FTRACED_ATTR_TRACER, "nop");
	expect_refused(wire(&b), 0, PLENTY_KB, -EINVAL, "nothing to record");
	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	ctl_put_string(&b, FTRACED_ATTR_TRACER, "wakeup");
	expect_refused(wire(&b), 0, PLENTY_KB, -EINVAL, "unknown tracer 'wakeup'");
	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	ctl_put_string(&b, FTRACED_ATTR_EVENT, "sched");
	ctl_put_string(&b, FTRACED_ATTR_FTRACE_FILTER, "vfs_*");
	expect_refused(wire(&b), 0, PLENTY_KB, -EINVAL, "limit a tracer");
	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	ctl_put_string(&b, FTRACED_ATTR_TRACER, "function");
	ctl_put_string(&b, FTRACED_ATTR_GRAPH_FUNCTION, "vfs_read");
	expect_refused(wire(&b), 0, PLENTY_KB, -EINVAL, "are for -p function_graph");
	ctl_builder_init(&b, FTRACED_MSG_RECORD);
	ctl_put_string(&b, FTRACED_ATTR_TRACER, "nop");
	ctl_put_u32(&b, FTRACED_ATTR_FUNC_STACK, 1);
	expect_refused(wire(&b), 0, PLENTY_KB, -EINVAL, "--func-stack is for -p function");
}

/*
 * The ring without -b: the default where it fits the machine's memory, less on
 * a machine with many CPUs and little memory (64 CPUs, 2 GiB), never below
 * the floor; a 512-CPU server with plenty gets the default.
 */
static void test_default_buffer(void)
{
	assert(default_buffer_kb(2, 24u << 20) == BUFFER_KB_DEFAULT);
	assert(default_buffer_kb(512, 512u << 20) == BUFFER_KB_DEFAULT);
	assert(default_buffer_kb(64, 1794640) == 2048);
	assert(default_buffer_kb(512, 1u << 20) == BUFFER_KB_DEFAULT_MIN);
	assert(default_buffer_kb(64, 0) == BUFFER_KB_DEFAULT);
}

/* The sub-buffer tried when none is named: 32 KiB, smaller for small rings, never one page. */
static void test_subbuf_preferred(void)
{
	assert(subbuf_kb_preferred(BUFFER_KB_DEFAULT) == SUBBUF_KB_PREFERRED);
	assert(subbuf_kb_preferred(BUFFER_KB_MAX) == SUBBUF_KB_PREFERRED);
	assert(subbuf_kb_preferred(SUBBUF_KB_PREFERRED * SUBBUFS_PER_RING_MIN) ==
	       SUBBUF_KB_PREFERRED);
	assert(subbuf_kb_preferred(SUBBUF_KB_PREFERRED * SUBBUFS_PER_RING_MIN - 1) ==
	       SUBBUF_KB_PREFERRED / 2);
	assert(subbuf_kb_preferred(256) == 8);
	assert(subbuf_kb_preferred(255) == 0);
	assert(subbuf_kb_preferred(BUFFER_KB_MIN) == 0);
	for (uint32_t kb = BUFFER_KB_MIN; kb <= BUFFER_KB_MAX; kb *= 2) {
		uint32_t s = subbuf_kb_preferred(kb);

		assert(s == 0 || (s > SUBBUF_KB_MIN && (s & (s - 1)) == 0 &&
				  s * SUBBUFS_PER_RING_MIN <= kb));
	}
}

int main(void)
{
	test_default_buffer();
	test_subbuf_preferred();
	test_record_defaults();
	test_sizes();
	test_continuous();
	test_flight();
	test_memory_limit();
	test_keep();
	test_tracer_and_probes();
	return 0;
}
