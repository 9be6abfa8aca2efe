// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sessions.d read whole: every *.conf in name order, each with its request
 * or its error (file and line), files beyond the limit counted, a missing
 * directory empty. What a reload decides from.
 */
#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/store/sessions-dir.h"
#include "lib/ctl/ctl-proto.h"

static char dir[] = "/tmp/test-sessions-dir-XXXXXX";

static void put(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert(f && fputs(text, f) >= 0 && fclose(f) == 0);
}

static void drop(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert(unlink(path) == 0);
}

int main(void)
{
	struct session_files f;
	char missing[300];
	uint64_t hash;

	assert(mkdtemp(dir));
	snprintf(missing, sizeof(missing), "%s/none", dir);
	assert(sessions_dir_read(missing, 8, &f) == 0 && f.n == 0 && f.n_bad == 0);

	put("b.conf", "events = sched:sched_switch\n");
	put("a.conf", "name = first\nevents = irq\nmode = flight\n");
	put("notes.txt", "not a session\n");
	put(".hidden.conf", "events = sched\n");
	assert(sessions_dir_read(dir, 8, &f) == 0);
	assert(f.n == 2 && f.n_bad == 0 && f.n_ignored == 0);
	assert(strcmp(f.files[0].name, "a.conf") == 0 && strcmp(f.files[1].name, "b.conf") == 0);
	assert(strcmp(f.files[0].req->session, "first") == 0);
	assert(f.files[0].req->mode == FTRACED_MODE_FLIGHT);
	assert(strcmp(f.files[1].req->session, "b") == 0 && !f.files[1].error);
	hash = f.files[1].hash;
	session_files_done(&f);
	assert(f.n == 0 && !f.files);

	/* A typo: the file carries its error with its line and key; the others their request. */
	put("b.conf", "events = sched:sched_switch\nbogus-key = 1\n");
	assert(sessions_dir_read(dir, 8, &f) == 0);
	assert(f.n == 2 && f.n_bad == 1);
	assert(f.files[0].req && !f.files[0].error);
	assert(!f.files[1].req && f.files[1].error);
	assert(strstr(f.files[1].error, "b.conf:2: ") == f.files[1].error);
	assert(strstr(f.files[1].error, "bogus-key"));
	session_files_done(&f);

	/* The same text, the same hash; another, another. */
	put("b.conf", "events = sched:sched_switch\n");
	assert(sessions_dir_read(dir, 8, &f) == 0 && f.files[1].hash == hash);
	session_files_done(&f);
	put("b.conf", "events = sched:sched_switch\nsegment-time = 1s\n");
	assert(sessions_dir_read(dir, 8, &f) == 0 && f.files[1].hash != hash);
	session_files_done(&f);

	/* More files than the limit: counted, not read. */
	put("c.conf", "events = sched\n");
	assert(sessions_dir_read(dir, 2, &f) == 0 && f.n == 2 && f.n_ignored == 1);
	session_files_done(&f);

	drop("a.conf");
	drop("b.conf");
	drop("c.conf");
	drop("notes.txt");
	drop(".hidden.conf");
	assert(rmdir(dir) == 0);
	return 0;
}
