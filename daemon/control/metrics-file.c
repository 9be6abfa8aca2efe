// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The metrics file: the same counters `ftracectl metrics` prints, written
 * into node_exporter's textfile-collector directory (metrics-directory in
 * ftraced.conf) as ftraced.prom. It is rewritten every metrics-interval
 * while a session runs, once more when the last one stops (so the final
 * counts stay visible), and never while nothing runs: an idle daemon has no
 * timer. Each write goes to ftraced.prom.partial and is renamed over the
 * old file, so the collector never reads half of one; the file is made
 * world-readable because node_exporter runs as its own user. At exit the
 * file goes: counters of a daemon that is gone would look current.
 *
 * The text comes from a LIST reply built by the manager and decoded with
 * the client's decoder, so the file and `ftracectl metrics` cannot differ.
 * A failed write is logged (rate-limited) and retried next time; it never
 * affects a session. Main thread only.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/control/daemon-config.h"
#include "daemon/base/log.h"
#include "daemon/control/metrics-file.h"
#include "lib/ctl/ctl-proto.h"
#include "lib/ctl/ctl-reply.h"
#include "lib/io-util.h"
#include "lib/prom-metrics.h"

#define METRICS_PARTIAL_NAME METRICS_FILE_NAME ".partial"

struct metrics_file {
	sd_event_source *timer;
	char *directory;
	uint64_t interval_usec;
	metrics_fill_fn fill;
	void *userdata;
	bool running;       /* a session runs: keep rewriting */
	bool written;       /* the file is ours to remove at exit */
	struct ctl_builder reply;
};

/* The counters as Prometheus text, in a malloc'd buffer. */
static int format(struct metrics_file *mf, char **ret, size_t *ret_size)
{
	struct reply rep;
	size_t n_msg;
	FILE *f;
	int r;

	mf->fill(mf->userdata, &mf->reply);
	r = ctl_builder_finish(&mf->reply, &n_msg);
	ctl_builder_done(&mf->reply); /* a long event list stays out: the metrics name no events */
	if (r < 0)
		return r;
	r = ctl_reply_decode(mf->reply.buf, n_msg, &rep);
	if (r < 0)
		return r;
	f = open_memstream(ret, ret_size);
	if (!f) {
		ctl_reply_done(&rep);
		return -ENOMEM;
	}
	r = prom_metrics_write(f, &rep);
	if (fclose(f) != 0 && r >= 0)
		r = -ENOMEM;
	ctl_reply_done(&rep);
	if (r < 0) {
		free(*ret);
		*ret = NULL;
	}
	return r;
}

static int write_file(struct metrics_file *mf)
{
	_cleanup_close_ int dir_fd = -EBADF, fd = -EBADF;
	char *text = NULL;
	size_t n = 0;
	int r;

	r = format(mf, &text, &n);
	if (r < 0)
		return r;
	dir_fd = open(mf->directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir_fd >= 0)
		fd = openat(dir_fd, METRICS_PARTIAL_NAME,
			    O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (dir_fd < 0 || fd < 0) {
		free(text);
		return negative_errno();
	}
	/* The unit's UMask=0077 would leave it unreadable to node_exporter. */
	r = fchmod(fd, 0644) < 0 ? negative_errno() : loop_write(fd, text, n);
	free(text);
	if (r >= 0 && renameat(dir_fd, METRICS_PARTIAL_NAME, dir_fd, METRICS_FILE_NAME) < 0)
		r = negative_errno();
	if (r < 0) {
		unlinkat(dir_fd, METRICS_PARTIAL_NAME, 0);
		return r;
	}
	mf->written = true;
	return 0;
}

static int on_timer(sd_event_source *source, uint64_t usec, void *userdata)
{
	struct metrics_file *mf = userdata;
	int r = write_file(mf);

	if (r < 0)
		log_ratelimit_warning_errno(r, "Cannot write %s/%s, trying again later: %m",
					    mf->directory, METRICS_FILE_NAME);
	if (!mf->running)
		return 0; /* the final counts are written; no timer while idle */
	r = sd_event_source_set_time_relative(source, mf->interval_usec);
	if (r >= 0)
		r = sd_event_source_set_enabled(source, SD_EVENT_ONESHOT);
	if (r < 0)
		log_warning_errno(r, "Cannot schedule the next metrics file, ignoring: %m");
	return 0;
}

/**
 * metrics_file_new() - write the metrics into @directory from now on.
 * @e: the event loop
 * @directory: node_exporter's textfile-collector directory (need not exist yet)
 * @interval_ms: how often to rewrite the file while a session runs
 * @fill: builds a SESSIONS reply to LIST, with the daemon's counters
 * @userdata: for @fill
 * @ret: the writer, idle until metrics_file_update()
 *
 * Return: 0 or -errno.
 */
int metrics_file_new(sd_event *e, const char *directory, uint64_t interval_ms,
		     metrics_fill_fn fill, void *userdata, struct metrics_file **ret)
{
	struct metrics_file *mf = calloc(1, sizeof(*mf));
	int r;

	if (!mf)
		return -ENOMEM;
	*mf = (struct metrics_file){
		.interval_usec = interval_ms * 1000,
		.fill = fill,
		.userdata = userdata,
	};
	mf->directory = strdup(directory);
	if (!mf->directory) {
		metrics_file_free(mf);
		return -ENOMEM;
	}
	r = sd_event_add_time_relative(e, &mf->timer, CLOCK_MONOTONIC, 0, 0, on_timer, mf);
	if (r >= 0)
		r = sd_event_source_set_enabled(mf->timer, SD_EVENT_OFF);
	if (r < 0) {
		metrics_file_free(mf);
		return r;
	}
	*ret = mf;
	return 0;
}

/**
 * metrics_file_update() - sessions changed: write the file soon.
 * @mf: writer or NULL (no metrics-directory)
 * @running: whether a session is running now; if not, this is the last write
 */
void metrics_file_update(struct metrics_file *mf, bool running)
{
	int r;

	if (!mf)
		return;
	mf->running = running;
	r = sd_event_source_set_time_relative(mf->timer, 0);
	if (r >= 0)
		r = sd_event_source_set_enabled(mf->timer, SD_EVENT_ONESHOT);
	if (r < 0)
		log_warning_errno(r, "Cannot schedule the metrics file, ignoring: %m");
}

/**
 * metrics_file_free() - stop writing, and remove the file we wrote.
 * @mf: writer or NULL
 *
 * Return: NULL.
 */
struct metrics_file *metrics_file_free(struct metrics_file *mf)
{
	if (!mf)
		return NULL;
	sd_event_source_disable_unref(mf->timer);
	if (mf->written) {
		char path[METRICS_DIRECTORY_MAX + sizeof("/" METRICS_FILE_NAME)];

		snprintf(path, sizeof(path), "%s/%s", mf->directory, METRICS_FILE_NAME);
		if (unlink(path) < 0 && errno != ENOENT)
			log_warning_errno(negative_errno(), "Cannot remove %s: %m", path);
	}
	free(mf->directory);
	free(mf);
	return NULL;
}
