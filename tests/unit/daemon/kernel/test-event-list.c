// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Event specifications as typed by users, split without a kernel, and
 * expanded against a tracing directory made here: the kernel's listing is
 * what decides, so a fake one shows what is refused.
 */
#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/kernel/event-list.h"

static int split(const char *spec, char *sys, char *ev)
{
	return event_spec_split(spec, sys, FTRACED_NAME_MAX + 1, ev, FTRACED_EVENT_SPEC_MAX + 1);
}

static void make(const char *root, const char *rel, bool dir)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if (dir) {
		assert(mkdir(path, 0755) == 0);
		return;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert(fd >= 0);
	close(fd);
}

static char ambiguous[256];

static int expand_max(const char *root, struct event_list *l, const char *spec, size_t max)
{
	static const char *const deliverable[] = { "print", NULL };
	static const char *const by_name[] = { "bprint", NULL };
	static const struct ftrace_offer ftrace = { .events = deliverable, .by_name = by_name };
	struct event_catalog *cat;
	int r;

	assert(event_catalog_new(root, &cat) == 0);
	r = event_list_expand(l, cat, spec, NULL, &ftrace, max, ambiguous, sizeof(ambiguous));
	event_catalog_free(cat);
	return r;
}

static int expand(const char *root, struct event_list *l, const char *spec)
{
	return expand_max(root, l, spec, 1024);
}

static bool has(const struct event_list *l, const char *system, const char *event)
{
	for (size_t k = 0; k < l->n; k++)
		if (strcmp(l->events[k].system, system) == 0 && strcmp(l->events[k].event, event) == 0)
			return true;
	return false;
}

/* events/ holds systems (directories) and files that are not systems. */
static void test_expand_against_a_listing(void)
{
	char root[] = "/tmp/ftraced-test-events-XXXXXX", cmd[PATH_MAX + 16];
	struct event_list l = {};

	assert(mkdtemp(root));
	make(root, "events", true);
	make(root, "events/enable", false);
	make(root, "events/header_page", false);
	make(root, "events/sched", true);
	make(root, "events/sched/enable", false);
	make(root, "events/sched/sched_switch", true);
	make(root, "events/sched/sched_wakeup", true);
	make(root, "events/ftrace", true); /* no enable file, as in the kernel */
	make(root, "events/ftrace/print", true);
	make(root, "events/ftrace/function", true);
	make(root, "events/ftrace/bprint", true);
	make(root, "events/syscalls", true);
	make(root, "events/syscalls/sys_enter_openat", true);
	make(root, "events/syscalls/sys_exit_openat", true);
	make(root, "events/syscalls/sys_enter_read", true);
	make(root, "events/probes_a", true);
	make(root, "events/probes_a/tick", true);
	make(root, "events/probes_b", true);
	make(root, "events/probes_b/tick", true);

	assert(expand(root, &l, "sched:sched_switch") == 0 && l.n == 1);
	assert(expand(root, &l, "sched") == 0 && l.n == 2);
	assert(strcmp(l.events[1].event, "sched_wakeup") == 0);
	assert(expand(root, &l, "ftrace:print") == 0 && l.n == 3);
	assert(expand(root, &l, "ftrace:function") == -EOPNOTSUPP);
	assert(expand(root, &l, "sched:nosuch") == -ENOENT);
	assert(expand(root, &l, "nosuch") == -ENOENT);
	/* Files in events/ and the directory's own entries are not systems. */
	assert(expand(root, &l, "enable") == -ENOENT);
	assert(expand(root, &l, "header_page:x") == -ENOENT);
	assert(expand(root, &l, "..") == -ENOENT);
	assert(expand(root, &l, ".:sched") == -ENOENT);
	assert(l.n == 3);
	event_list_done(&l);

	/* Globs in either part, as trace-cmd takes them. */
	assert(expand(root, &l, "syscalls:sys_enter_*") == 0 && l.n == 2);
	assert(has(&l, "syscalls", "sys_enter_read") && !has(&l, "syscalls", "sys_exit_openat"));
	assert(expand(root, &l, "sys*:*openat") == 0 && l.n == 3);
	assert(expand(root, &l, "syscalls:nosuch*") == -ENOENT);
	event_list_done(&l);
	/* A bare name: a system first, else the one event of that name. */
	assert(expand(root, &l, "sched_switch") == 0 && l.n == 1 && has(&l, "sched", "sched_switch"));
	assert(expand(root, &l, "sys_enter_*") == 0 && l.n == 3);
	assert(expand(root, &l, "tick") == -ENOTUNIQ);
	assert(strstr(ambiguous, "probes_a:tick") && strstr(ambiguous, "probes_b:tick"));
	event_list_done(&l);
	/* ftrace by name: delivered, delivered by name only, or refused. */
	assert(expand(root, &l, "print") == 0 && has(&l, "ftrace", "print"));
	assert(expand(root, &l, "bprint") == 0 && has(&l, "ftrace", "bprint"));
	assert(expand(root, &l, "function") == -EOPNOTSUPP);
	event_list_done(&l);
	/* Every event, and an ftrace glob never takes what is offered by name only. */
	assert(expand(root, &l, "all") == 0 && l.n == 8);
	assert(!has(&l, "ftrace", "function") && !has(&l, "ftrace", "bprint"));
	assert(expand(root, &l, "ftrace:*") == 0 && l.n == 8);
	event_list_done(&l);
	/* The bound is on bytes; an event twice counts once. */
	assert(expand_max(root, &l, "sched", 40) == 0 && l.n == 2);
	assert(expand_max(root, &l, "sched", 40) == 0 && l.n == 2 && l.n_bytes == 38);
	assert(expand_max(root, &l, "syscalls:sys_enter_read", 40) == -E2BIG);
	event_list_done(&l);

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert(system(cmd) == 0);
}

int main(void)
{
	char sys[FTRACED_NAME_MAX + 1], ev[FTRACED_EVENT_SPEC_MAX + 1];
	char long_sys[FTRACED_NAME_MAX + 8];

	assert(split("sched:sched_switch", sys, ev) == 0);
	assert(strcmp(sys, "sched") == 0 && strcmp(ev, "sched_switch") == 0);
	assert(split("irq:*", sys, ev) == 0 && strcmp(sys, "irq") == 0 && strcmp(ev, "*") == 0);
	assert(split("block", sys, ev) == 0 && strcmp(sys, "block") == 0 && strcmp(ev, "*") == 0);

	assert(split("", sys, ev) == -EINVAL);
	assert(split(":x", sys, ev) == -EINVAL);
	assert(split("sched:", sys, ev) == -EINVAL);
	assert(split("a:b:c", sys, ev) == -EINVAL);
	assert(split("*:x", sys, ev) == -EINVAL);
	memset(long_sys, 'a', sizeof(long_sys) - 1);
	long_sys[sizeof(long_sys) - 1] = '\0';
	assert(split(long_sys, sys, ev) == -EINVAL);

	test_expand_against_a_listing();
	printf("event-list: all tests passed\n");
	return 0;
}
