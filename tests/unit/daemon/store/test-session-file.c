// SPDX-License-Identifier: GPL-2.0-or-later
/* Session files become the CREATE request a client would send; problems name their line. */
#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/store/session-file.h"
#include "lib/ctl/ctl-proto.h"

static struct ctl_builder b;
static struct ctl_request req;
static char error[256];
static unsigned line;

static int parse(const char *text, const char *name)
{
	int r;

	r = session_file_parse(text, strlen(text), name, &b, error, sizeof(error), &line);
	if (r >= 0)
		assert(ctl_builder_parse(&b, &req, NULL) == 0);
	ctl_builder_done(&b);
	return r;
}

/*
 * A request made into a file and that file parsed give the same request:
 * saved sessions and `ftracectl save` rely on it. Both are formatted again
 * and the texts compared, with the fields that matter checked directly.
 */
static void test_format_round_trip(void)
{
	static struct ctl_request first;
	static char text[64 * 1024], again[64 * 1024];
	int n;

	assert(parse("mode = flight\n"
		     "event = sched:sched_switch\n"
		     "event-filter = prev_pid != 0\n"
		     "event-trigger = traceoff if prev_pid == 1\n"
		     "events = irq, syscalls:sys_enter_open*\n"
		     "exclude-events = irq:softirq_*, sched_stat_*\n"
		     "filter = common_pid != 1\n"
		     "clock = mono\n"
		     "compression = none\n"
		     "level = -3\n"
		     "buffer-kb = 2048\n"
		     "subbuf-kb = 16\n"
		     "stacktrace = yes\n"
		     "ignore-missing = yes\n"
		     "no-filter = yes\n"
		     "top-level = yes\n"
		     "pid = 1\n"
		     "children = yes\n"
		     "tracer = function_graph\n"
		     "graph-function = do_sys_openat2\n"
		     "function-notrace = *spin*\n"
		     "max-graph-depth = 3\n"
		     "probe = p:tick do_sys_openat2 dfd=%di:s32\n"
		     "option = record-tgid\n"
		     "option = noirq-info\n"
		     "cpumask = ff,ffffffff\n"
		     "flight-backend = kernel\n"
		     "trigger = signal=SIGSEGV,post=2s\n"
		     "trigger = oom\n"
		     "max-files = 20\n"
		     "max-total = 65M\n"
		     "flight-size = 1536K\n"
		     "segment-size = 3000\n"
		     "segment-time = 1500ms\n"
		     "max-age = 1d\n"
		     "keep-free = 5%\n"
		     "rt-priority = 10\n"
		     "read-interval-us = 250000\n"
		     "on-segment = /usr/bin/ship 'a b'\n", "fr") == 0);
	first = req;
	req = (struct ctl_request){}; /* first owns the events now */
	n = session_file_format(&first, text, sizeof(text));
	assert(n > 0 && (size_t)n == strlen(text));
	assert(parse(text, "ignored") == 0);
	assert(req.n_excluded == 2 && strcmp(req.excluded[1], "sched_stat_*") == 0);
	assert(strcmp(ctl_request_event_trigger(&req, 0), "traceoff if prev_pid == 1") == 0);
	assert(ctl_request_event_trigger(&req, 1) == NULL);
	assert(req.read_interval_us == 250000);
	assert(parse("events = sched\nread-interval-us = 999\n", "x") == -EINVAL && line == 2);
	assert(session_file_format(&req, again, sizeof(again)) == n && strcmp(text, again) == 0);
	assert(strcmp(req.session, "fr") == 0 && req.mode == FTRACED_MODE_FLIGHT);
	assert(req.n_events == 3 && strcmp(ctl_request_event_filter(&req, 0), "prev_pid != 0") == 0);
	assert(!ctl_request_event_filter(&req, 1));
	assert(req.level == -3 && req.buffer_kb == 2048 && req.subbuf_kb == 16);
	assert(req.stacktrace && req.ignore_missing && req.no_filter && req.follow_fork);
	assert(req.top_level);
	assert(req.n_pids == 1 && req.pids[0] == 1 && req.max_graph_depth == 3);
	assert(req.n_functions == 2 && req.n_probes == 1 && req.n_options == 2);
	assert(strcmp(ctl_request_cpumask(&req), "ff,ffffffff") == 0);
	assert(req.n_triggers == 2 && req.max_age_ms == 86400000 && req.keep_free_percent == 5);
	assert(req.max_total == 65u << 20 && req.flight_size == 1536u << 10);
	assert(req.segment_size == 3000 && req.segment_time_ms == 1500);
	assert(strstr(text, "max-total = 65M\n") && strstr(text, "max-age = 1d\n"));
	assert(memcmp(&req.present, &first.present, sizeof(req.present)) == 0);
	/* A buffer too small says so instead of cutting a line. */
	assert(session_file_format(&first, again, 40) == -ENOBUFS);
	ctl_request_done(&first);
}

/* A file may list every event of a big kernel, one per line or many to a line. */
static void test_many_events(void)
{
	size_t size = 20000 * 48 + 64, used = 0;
	char *text = malloc(size), *again = NULL;
	int n;

	assert(text);
	used += (size_t)snprintf(text + used, size - used, "mode = flight\n");
	for (unsigned k = 0; k < 20000; k++) {
		if (k % 2)
			used += (size_t)snprintf(text + used, size - used, "event = s%u:e_%u\n",
						 k % 50, k);
		else
			used += (size_t)snprintf(text + used, size - used, "events = s%u:e_%u\n",
						 k % 50, k);
		if (k == 12345)
			used += (size_t)snprintf(text + used, size - used,
						 "event-filter = common_pid != 0\n");
	}
	assert(used < size && used > 64 * 1024);
	assert(parse(text, "big") == 0);
	assert(req.n_events == 20000);
	assert(strcmp(ctl_request_event(&req, 19999), "s49:e_19999") == 0);
	assert(strcmp(ctl_request_event_filter(&req, 12345), "common_pid != 0") == 0);
	n = session_file_format_new(&req, &again);
	assert(n > 64 * 1024 && (size_t)n == strlen(again));
	assert(strstr(again, "event = s49:e_19999\n"));
	assert(parse(again, "big") == 0 && req.n_events == 20000);
	free(again);
	ctl_request_done(&req);
	free(text);
}

int main(void)
{
	test_format_round_trip();
	test_many_events();

	assert(parse("# background tracing\n"
		     "events = sched:sched_switch, irq:*\n"
		     "\n"
		     "  event=block  \n"
		     "filter = prev_pid != 0 && next_pid != 0\n"
		     "buffer-kb = 8192\n"
		     "compression = none\n"
		     "level = -1\n"
		     "segment-size = 64M\n"
		     "segment-time = 10m\n"
		     "max-total = 2G\n"
		     "max-files = 100\n"
		     "max-age = 7d\n"
		     "keep-free = 10%\n"
		     "on-segment = /usr/bin/ship 'a b'\n", "bg") == 0);
	assert(req.type == FTRACED_MSG_CREATE && req.mode == FTRACED_MODE_CONTINUOUS);
	assert(strcmp(req.session, "bg") == 0 && req.n_events == 3);
	assert(strcmp(ctl_request_event(&req, 1), "irq:*") == 0);
	assert(strcmp(ctl_request_event(&req, 2), "block") == 0);
	assert(strcmp(req.filter, "prev_pid != 0 && next_pid != 0") == 0);
	assert(req.buffer_kb == 8192 && req.compression == FTRACED_COMPRESSION_NONE);
	assert(req.level == -1 && req.segment_size == 64u << 20);
	assert(req.segment_time_ms == 600000 && req.max_total == 2ull << 30);
	assert(req.max_files == 100 && req.max_age_ms == 7ull * 86400000);
	assert(req.keep_free_percent == 10 && strcmp(req.on_segment, "/usr/bin/ship 'a b'") == 0);

	assert(parse("name = other\nevents = sched\nkeep-free = 1G\n", "file") == 0);
	assert(strcmp(req.session, "other") == 0 && req.keep_free == 1ull << 30);

	assert(parse("events = sched, nosuch\nstacktrace = yes\nignore-missing = yes\n", "x") == 0);
	assert(req.stacktrace == 1 && req.ignore_missing == 1 && req.n_events == 2);
	assert(parse("events = sched\nstacktrace = no\n", "x") == 0 && req.stacktrace == 0);
	assert(parse("events = sched\nstacktrace = maybe\n", "x") == -EINVAL && line == 2);
	assert(parse("events = sched\nrt-priority = 40\n", "x") == 0 && req.rt_priority == 40);
	assert(parse("events = sched\nrt-priority = 0\n", "x") == -EINVAL && line == 2);
	assert(strstr(error, "invalid number '0' (1 to 99)"));
	/* The protocol refuses a depth of 0: the file parser must too (found by libFuzzer). */
	assert(parse("events = sched\nmax-graph-depth = 0\n", "x") == -EINVAL && line == 2);
	assert(parse("events = sched\nrt-priority = 100\n", "x") == -EINVAL && line == 2);
	assert(parse("events = sched\nbogus = 1\n", "x") == -EINVAL && line == 2);
	assert(strstr(error, "unknown key 'bogus'"));
	assert(parse("events = sched\nno equals sign\n", "x") == -EINVAL && line == 2);
	assert(parse("segment-size = 12Q\nevents = sched\n", "x") == -EINVAL && line == 1);
	assert(parse("events = sched\nmax-files = 10G\n", "x") == -EINVAL && line == 2);
	assert(parse("events = sched\nkeep-free = 150%\n", "x") == -EINVAL && line == 2);
	assert(parse("events = sched\nmode = recorder\n", "x") == -EINVAL && line == 2);
	assert(parse("mode = flight\nevents = sched\nflight-backend = memory\nflight-size = 256M\n"
		     "trigger = oom\ntrigger = event=sched:sched_switch,filter=a == 1,post=1s\n",
		     "fl") == 0);
	assert(req.mode == FTRACED_MODE_FLIGHT && req.flight_backend == FTRACED_FLIGHT_MEMORY);
	assert(req.flight_size == 256u << 20 && req.n_triggers == 2);
	assert(strcmp(req.triggers[1], "event=sched:sched_switch,filter=a == 1,post=1s") == 0);
	assert(parse("events = sched\nflight-backend = disk\n", "x") == -EINVAL && line == 2);
	/* Armed at every boot from sessions.d: the persistent backend and its instance. */
	assert(parse("mode = flight\nevents = sched\nflight-backend = persistent\n"
		     "boot-instance = crash_ring\n", "pr") == 0);
	assert(req.flight_backend == FTRACED_FLIGHT_PERSISTENT &&
	       strcmp(req.boot_instance, "crash_ring") == 0);
	assert(parse("events = sched\nboot-instance = ../x\n", "x") == -EINVAL && line == 2);
	assert(parse("events = sched\ntrigger = \n", "x") == -EINVAL && line == 2);
	assert(parse("events = sched\nname = ../etc\n", "x") == -EINVAL && line == 2);
	assert(parse("events = , ,\n", "x") == -EINVAL && line == 1);
	/* Found by fuzz-session-file: every value obeys the protocol's own rules. */
	assert(parse("events = sched:sched_switch, rev_pid !n=a\n", "x") == -EINVAL && line == 1);
	assert(parse("events = sched\nfilter = a\tb\n", "x") == -EINVAL && line == 2);
	assert(parse("events = sched\nclock = lo cal\n", "x") == -EINVAL && line == 2);
	assert(parse("events = sched\nfilter = a\nfilter = b\n", "x") == -EINVAL && line == 3);
	assert(parse("event = sched\nevent = irq\n", "x") == 0 && req.n_events == 2);
	assert(parse("buffer-kb = 8\n", "x") == -EINVAL && line == 0 && strstr(error, "no events"));
	assert(parse("events = sched\n", "bad name") == -EINVAL && line == 0);
	assert(session_file_parse("a\0b", 3, "x", &b, error, sizeof(error), &line) == -EINVAL);

	/* Capture breadth: event-filter follows its event; lists repeat; a tracer alone records. */
	assert(parse("events = sched, irq\nevent-filter = irq == 1\nevent = block\n"
		     "tracer = function\nfunction-filter = vfs_*\nfunction-filter = ksys_*\n"
		     "function-notrace = vfs_write\nfunc-stack = yes\n"
		     "probe = p:a /bin/true:main\nprobe = r:b do_sys_openat2 $retval\n", "x") == 0);
	assert(req.n_events == 3 && ctl_request_event_filter(&req, 0) == NULL);
	assert(strcmp(ctl_request_event_filter(&req, 1), "irq == 1") == 0);
	assert(ctl_request_event_filter(&req, 2) == NULL);
	assert(strcmp(req.tracer, "function") == 0 && req.n_functions == 3 && req.func_stack == 1);
	assert(req.n_probes == 2 && strcmp(req.text + req.probes[1], "r:b do_sys_openat2 $retval") == 0);
	assert(parse("tracer = function_graph\ngraph-function = do_sys_*\nmax-graph-depth = 3\n",
		     "x") == 0);
	assert(req.n_events == 0 && req.max_graph_depth == 3 && req.n_functions == 1);
	assert(parse("probe = p:a do_sys_open\n", "x") == 0 && req.n_probes == 1);
	assert(parse("event-filter = a == 1\nevents = sched\n", "x") == -EINVAL && line == 1);
	assert(strstr(error, "there is none"));
	assert(parse("events = sched\nevent-filter = a == 1\nevent-filter = b == 1\n", "x") ==
	       -EINVAL && line == 3 && strstr(error, "already has one"));
	assert(parse("events = sched\ntracer = func tion\n", "x") == -EINVAL && line == 2);
	assert(parse("events = sched\nevent-trigger = stacktrace\nevent-trigger = traceon\n",
		     "x") == -EINVAL && line == 3 && strstr(error, "already has one"));
	assert(parse("event-trigger = stacktrace\nevents = sched\n", "x") == -EINVAL && line == 1);
	/* exclude-event: trace-cmd's -v; no event-filter for an excluded event. */
	assert(parse("events = sched\nexclude-event = sched_switch\nevent-filter = a == 1\n",
		     "x") == -EINVAL && line == 3 && strstr(error, "excluded"));
	assert(parse("events = sched\nexclude-event = bad spec\n", "x") == -EINVAL && line == 2);
	assert(parse("events = sched\ntracer = function\ntracer = nop\n", "x") == -EINVAL &&
	       line == 3);
	assert(parse("events = sched\nfunction-filter = a b\n", "x") == -EINVAL && line == 2);
	assert(parse("events = sched\nmax-graph-depth = x\n", "x") == -EINVAL && line == 2);
	{
		char many[64 * 40];
		size_t n = 0;

		for (unsigned i = 0; i <= FTRACED_PROBES_PER_REQUEST_MAX; i++)
			n += (size_t)snprintf(many + n, sizeof(many) - n, "probe = p:p%u x\n", i);
		assert(parse(many, "x") == -EINVAL && line == FTRACED_PROBES_PER_REQUEST_MAX + 1);
		assert(strstr(error, "more than 16 probes"));
		n = 0;
		for (unsigned i = 0; i <= FTRACED_FUNCTIONS_PER_REQUEST_MAX; i++)
			n += (size_t)snprintf(many + n, sizeof(many) - n, "function-notrace = f%u\n", i);
		assert(parse(many, "x") == -EINVAL && strstr(error, "more than 64 function globs"));
	}

	printf("session-file: all tests passed\n");
	return 0;
}
