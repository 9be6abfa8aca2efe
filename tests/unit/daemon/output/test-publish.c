// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The publisher: a snapshot segment (chunks in memory, no tracefs needed)
 * is assembled on its thread, renamed from its temporary name into place,
 * recorded in the directory's manifest, and retention then deletes the
 * oldest file beyond the budget; the owner hears of each outcome once.
 */
#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/capture/chunk-ring.h"
#include "daemon/kernel/event-list.h"
#include "daemon/kernel/instance.h"
#include "daemon/store/metadata.h"
#include "daemon/output/publish.h"
#include "daemon/output/segment.h"
#include "tests/unit/v7-fixture.h"

static unsigned n_done;
static int last_result;
static char last_name[PUBLISH_NAME_MAX + 1];

static void on_done(const struct publish_outcome *o, void *userdata)
{
	(void)userdata;
	n_done++;
	last_result = o->result;
	snprintf(last_name, sizeof(last_name), "%s", o->name ? o->name : "");
}

/* Publishes one empty snapshot named @name and waits for its outcome. */
static void publish(struct publisher *p, const struct segment_env *env, const char *name)
{
	struct publish_ticket ticket = { .snapshot = true };
	unsigned before = n_done;
	struct segment *seg;

	assert(segment_new_snapshot(env, 1, name, &(struct snapshot_window){}, &seg) == 0);
	for (unsigned cpu = 0; cpu < env->n_cpus; cpu++) {
		struct cpu_counters end = {};
		struct chunk_list l = {};

		segment_close_cpu(seg, cpu, 0, 0, &end, NULL);
		segment_set_chunks(seg, cpu, &l, false);
	}
	assert(publisher_add(p, seg, -EBADF, &ticket) == 0);
	while (n_done == before) {
		struct pollfd pfd = { .fd = env->notify_fd, .events = POLLIN };
		uint64_t v;

		assert(poll(&pfd, 1, 30000) == 1);
		(void)!read(env->notify_fd, &v, sizeof(v));
		publisher_poll(p);
	}
}

static bool exists(int dir_fd, const char *name)
{
	return faccessat(dir_fd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

int main(void)
{
	char dir[] = "/tmp/ftraced-test-publish-XXXXXX";
	struct instance_meta imeta;
	struct retention_limits limits = { .max_files = 2 };
	struct event_list events = {};
	struct segment_env env;
	struct publisher p;
	int dir_fd;

	assert(mkdtemp(dir));
	dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert(dir_fd >= 0);
	env = snapshot_segment_env(dir_fd, &imeta, &events);
	assert(env.notify_fd >= 0);
	p = (struct publisher){
		.session = "s",
		.dir_fd = dir_fd,
		.retention = &limits,
		.done = on_done,
	};

	/* In place under its final name, no temporary left, in the manifest. */
	publish(&p, &env, "sessions/s/snapshots/s-1.dat");
	assert(last_result == 0 && strcmp(last_name, "s-1.dat") == 0);
	assert(exists(dir_fd, "s-1.dat") && !exists(dir_fd, ".s-1.dat.tmp"));
	assert(exists(dir_fd, ".ftraced-files"));
	publish(&p, &env, "sessions/s/snapshots/s-2.dat");
	assert(exists(dir_fd, "s-1.dat") && exists(dir_fd, "s-2.dat"));

	/* A third file: --max-files 2 deletes the oldest, never a file we did not write. */
	assert(close(openat(dir_fd, "s-0-foreign.dat", O_WRONLY | O_CREAT, 0600)) == 0);
	publish(&p, &env, "sessions/s/snapshots/s-3.dat");
	assert(last_result == 0 && n_done == 3);
	assert(!exists(dir_fd, "s-1.dat") && exists(dir_fd, "s-2.dat") && exists(dir_fd, "s-3.dat"));
	assert(exists(dir_fd, "s-0-foreign.dat"));
	assert(p.n_items == 0);

	publisher_done(&p);
	for (const char *const *n = (const char *const[]){ "s-2.dat", "s-3.dat", "s-0-foreign.dat",
							   ".ftraced-files", NULL }; *n; n++)
		unlinkat(dir_fd, *n, 0);
	close(dir_fd);
	close(env.notify_fd);
	assert(rmdir(dir) == 0);
	snapshot_meta_done(&imeta);
	return 0;
}
