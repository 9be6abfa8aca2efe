// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The flight recorder through its host (session-mode.h), with no session
 * and no tracefs instance: a memory-backend history whose snapshots are
 * queued, served once their data is in the rings, published as files, and
 * reported to their waiters through the host; the queue's limit; a waiter
 * that went away; the stop that only the host may complete.
 */
#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/base/bounds.h"
#include "daemon/kernel/event-list.h"
#include "daemon/flight/flight.h"
#include "daemon/kernel/instance.h"
#include "daemon/store/metadata.h"
#include "daemon/output/publish.h"
#include "daemon/output/segment.h"
#include "daemon/output/session-config.h"
#include "daemon/output/session-mode.h"
#include "daemon/output/stream-set.h"
#include "lib/ctl/ctl-proto.h"
#include "tests/unit/v7-fixture.h"

#define MAX_REPORTS (2 * SNAPSHOTS_PENDING_MAX)

/* What the fake session saw of its mode. */
struct fake_session {
	enum mode_phase phase;
	unsigned wakes;
	unsigned stops;
	int error;
	char message[256];
	unsigned n_reports;
	struct {
		void *waiter;
		int error;
		char path[PATH_MAX];
		uint64_t bytes;
	} reports[MAX_REPORTS];
};

static enum mode_phase fake_phase(const void *session)
{
	return ((const struct fake_session *)session)->phase;
}

static void fake_wake(void *session)
{
	((struct fake_session *)session)->wakes++;
}

static void fake_set_error(void *session, int error, const char *message)
{
	struct fake_session *s = session;

	s->error = error;
	snprintf(s->message, sizeof(s->message), "%s", message);
}

static int fake_begin_running(void *session)
{
	((struct fake_session *)session)->phase = MODE_RUNNING;
	return 0;
}

static void fake_stopped(void *session)
{
	struct fake_session *s = session;

	s->stops++;
	s->phase = MODE_IDLE;
}

static void fake_stream_params(void *session, struct stream_params *ret)
{
	*ret = (struct stream_params){ .subbuf_size = 4096, .zstd = true, .level = 3 };
}

static const char *fake_gap(const void *session)
{
	return NULL;
}

static void fake_snapshot_done(void *session, void *waiter, int error, const char *path,
			       uint64_t bytes, const char *note)
{
	struct fake_session *s = session;

	assert(s->n_reports < MAX_REPORTS);
	s->reports[s->n_reports].waiter = waiter;
	s->reports[s->n_reports].error = error;
	snprintf(s->reports[s->n_reports].path, PATH_MAX, "%s", path ? path : "");
	s->reports[s->n_reports].bytes = bytes;
	s->n_reports++;
}

static const struct mode_host_ops fake_ops = {
	.phase = fake_phase,
	.wake = fake_wake,
	.set_error = fake_set_error,
	.begin_running = fake_begin_running,
	.stopped = fake_stopped,
	.stream_params = fake_stream_params,
	.gap = fake_gap,
	.snapshot_done = fake_snapshot_done,
};

static struct flight *flight;
static unsigned n_published;

static void on_published(const struct publish_outcome *o, void *userdata)
{
	n_published++;
	flight_published(flight, o);
}

/* Runs the publisher until @n files in all are out (the session's event loop, by hand). */
static void publish_until(struct publisher *p, int notify_fd, unsigned n)
{
	while (n_published < n) {
		struct pollfd pfd = { .fd = notify_fd, .events = POLLIN };
		uint64_t v;

		assert(poll(&pfd, 1, 30000) == 1);
		(void)!read(notify_fd, &v, sizeof(v));
		publisher_poll(p);
	}
	publisher_release(p);
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	return remove(path);
}

static uint64_t file_size(const char *path)
{
	struct stat st;

	assert(stat(path, &st) == 0);
	return (uint64_t)st.st_size;
}

int main(void)
{
	char dir[] = "/tmp/ftraced-test-flight-XXXXXX", path[PATH_MAX], error[256];
	struct instance_meta imeta;
	struct session_config config = { .backend = FTRACED_FLIGHT_MEMORY, .zstd = true,
					 .level = 3, .flight_size = 1 << 20 };
	struct retention_limits limits = {};
	struct fake_session session = { .phase = MODE_IDLE };
	struct event_list events = {};
	struct segment_env env;
	struct stream_set cpus;
	struct publisher p;
	struct mode_host host;
	int state_fd, session_fd, r;
	char waiters[SNAPSHOTS_PENDING_MAX + 1];

	assert(mkdtemp(dir));
	state_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert(state_fd >= 0);
	assert(mkdirat(state_fd, SESSIONS_DIR, 0700) == 0);
	assert(mkdirat(state_fd, SESSIONS_DIR "/s", 0700) == 0);
	session_fd = openat(state_fd, SESSIONS_DIR "/s", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert(session_fd >= 0);
	env = snapshot_segment_env(state_fd, &imeta, &events);
	assert(env.notify_fd >= 0);
	assert(stream_set_init(&cpus, 2) == 0);
	/* What flight_start() makes; the workers' chunks would go in here. */
	assert(stream_set_rings_new(&cpus, config.flight_size / 2) == 0);
	p = (struct publisher){ .session = "s", .dir_fd = -EBADF, .retention = &limits,
				.done = on_published };
	host = (struct mode_host){
		.name = "s", .id = 1, .cpus = &cpus, .publisher = &p, .segment_env = &env,
		.config = &config, .events = &events, .imeta = &imeta, .date = "",
		.dir_fd = session_fd, .ops = &fake_ops, .session = &session,
	};

	r = flight_new(&host, &flight, error, sizeof(error));
	assert(r == 0);
	p.dir_fd = flight_snapshot_dir(flight);
	assert(faccessat(session_fd, "snapshots", F_OK, 0) == 0);
	assert(!flight_swaps(flight) && !flight_draining(flight));

	/* Stopped: a snapshot is served at the next turn of the loop, reported through the host. */
	assert(flight_snapshot(flight, &waiters[0], -EBADF, false, 0, "test", error, sizeof(error)) == 0);
	assert(session.wakes == 1 && flight_pending(flight) == 1);
	assert(flight_has_waiter(flight, &waiters[0]));
	flight_progress(flight);
	assert(flight_pending(flight) == 0 && !flight_has_waiter(flight, &waiters[0]));
	publish_until(&p, env.notify_fd, 1);
	assert(session.n_reports == 1 && session.reports[0].waiter == &waiters[0]);
	assert(session.reports[0].error == 0 && session.reports[0].bytes > 0);
	snprintf(path, sizeof(path), "%s/" SESSIONS_DIR "/s/snapshots/", dir);
	assert(strncmp(session.reports[0].path, path, strlen(path)) == 0);
	assert(file_size(session.reports[0].path) == session.reports[0].bytes);

	/* Stopping: jobs wait for the final drain; the queue holds SNAPSHOTS_PENDING_MAX. */
	session.phase = MODE_STOPPING;
	for (unsigned i = 1; i <= SNAPSHOTS_PENDING_MAX; i++)
		assert(flight_snapshot(flight, &waiters[i], -EBADF, false, 0, "test", error,
				       sizeof(error)) == 0);
	flight_progress(flight);
	assert(flight_pending(flight) == SNAPSHOTS_PENDING_MAX);
	r = flight_snapshot(flight, &waiters[0], -EBADF, false, 0, "test", error, sizeof(error));
	assert(r == -EBUSY && strstr(error, "snapshots in progress already"));
	/* A client that went away: its snapshot is still written, never reported. */
	flight_forget_waiter(flight, &waiters[1]);
	assert(!flight_has_waiter(flight, &waiters[1]) && flight_has_waiter(flight, &waiters[2]));

	/* The memory backend's stop is the workers' final drain: the host completes it. */
	assert(!flight_stop(flight) && session.stops == 0);
	flight_drained(flight);
	assert(session.stops == 1 && session.phase == MODE_IDLE);
	assert(flight_pending(flight) == 0);
	publish_until(&p, env.notify_fd, 1 + SNAPSHOTS_PENDING_MAX);
	assert(session.n_reports == SNAPSHOTS_PENDING_MAX); /* all but the forgotten one */
	for (unsigned i = 1; i < session.n_reports; i++)
		assert(session.reports[i].waiter != &waiters[1] && session.reports[i].error == 0);
	assert(session.error == 0);
	{
		struct ftraced_session_counters c = {};

		flight_counters(flight, &c);
		assert(c.files_failed == 0);
	}

	flight = flight_free(flight);
	publisher_done(&p);
	stream_set_done(&cpus);
	assert(nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS) == 0);
	close(session_fd);
	close(state_fd);
	close(env.notify_fd);
	snapshot_meta_done(&imeta);
	return 0;
}
