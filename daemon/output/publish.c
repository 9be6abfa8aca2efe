// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Publishing a closed segment or a snapshot: from the segment's data to a
 * file a reader may open. A file in the session's directory is written
 * under a hidden temporary name (or, spooled in place, finished in its
 * spool directory), fsynced by the assembler, renamed into place and the
 * directory fsynced, so a reader (or a shipper watching
 * the directory) never sees half a file; the on-segment command runs on
 * it and retention brings the directory back within its budget. A file
 * for a client is written into the fd it passed. The outcome goes back to
 * the owner through its callback, with the ticket it gave.
 *
 * A segment whose file could not be written, in the directory or into the
 * client's fd, keeps its spool, so recovery rebuilds what was captured. Owned by one session;
 * main thread only (the assembly itself runs in segment.c's thread).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/base/bounds.h"
#include "daemon/base/log.h"
#include "daemon/output/publish.h"
#include "daemon/output/runner.h"
#include "daemon/output/segment.h"
#include "ftraced/macro.h"

struct publish_item {
	struct segment *segment;
	struct publish_ticket ticket;
	bool in_dir; /* tmp_name and final_name are in the publisher's directory */
	char tmp_name[PUBLISH_NAME_MAX + 8];
	char final_name[PUBLISH_NAME_MAX];
};

/**
 * publish_utc_stamp() - "YYYYmmddTHHMMSS.mmmZ", now, for file names.
 * @buf: receives it
 * @size: its size (32 is plenty)
 *
 * Milliseconds, because a restarted daemon starts its sequence numbers at 1 again.
 */
void publish_utc_stamp(char *buf, size_t size)
{
	struct timespec now;
	struct tm tm;
	size_t n;

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	n = strftime(buf, size, "%Y%m%dT%H%M%S", &tm);
	snprintf(buf + n, size - n, ".%03ldZ", now.tv_nsec / 1000000);
}

/**
 * publisher_done() - drop every file still being written (the assemblers are joined).
 * @p: publisher; its borrowed parts are left alone
 */
void publisher_done(struct publisher *p)
{
	for (size_t i = 0; i < p->n_items; i++)
		segment_free(p->items[i].segment);
	p->items = mfree(p->items);
	p->n_items = 0;
	publisher_release(p);
}

/**
 * publisher_release() - free the segments of the files done: their spools are removed.
 * @p: publisher
 *
 * Removing a segment's spool files takes the file system milliseconds;
 * the owner answers whoever waits for the file first, then calls this.
 */
void publisher_release(struct publisher *p)
{
	for (size_t i = 0; i < p->n_finished; i++)
		segment_free(p->finished[i]);
	p->finished = mfree(p->finished);
	p->n_finished = 0;
}

/* Keeps a done segment for publisher_release(); freed at once if it cannot be kept. */
static void keep_finished(struct publisher *p, struct segment *seg)
{
	struct segment **f = reallocarray(p->finished, p->n_finished + 1, sizeof(*f));

	if (!f) {
		segment_free(seg);
		return;
	}
	p->finished = f;
	p->finished[p->n_finished++] = seg;
}

/**
 * publish_path() - the absolute path of @name in a directory we hold.
 * @dir_fd: the directory
 * @name: a name in it ("" for the directory itself)
 * @buf: receives the path
 * @n: its size
 *
 * Return: 0, -ENAMETOOLONG, or -errno.
 */
int publish_path(int dir_fd, const char *name, char *buf, size_t n)
{
	char link[64];
	ssize_t k;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", dir_fd);
	k = readlink(link, buf, n - 1);
	if (k < 0)
		return negative_errno();
	buf[k] = '\0';
	if ((size_t)snprintf(buf + k, n - (size_t)k, "/%s", name) >= n - (size_t)k)
		return -ENAMETOOLONG;
	return 0;
}

/**
 * publisher_add() - start writing a segment's file.
 * @p: publisher
 * @seg: the segment, closed; taken over
 * @out_fd: the client's file, taken over; -EBADF: a file in the directory, named after
 *          the segment's target
 * @ticket: handed back with the outcome
 *
 * Return: 0, or -errno (logged) when writing could not start; the segment
 * then keeps its spool and is freed, and no outcome follows.
 */
int publisher_add(struct publisher *p, struct segment *seg, int out_fd,
		  const struct publish_ticket *ticket)
{
	struct publish_item *it, *grown;
	int fd = out_fd, r;

	grown = realloc(p->items, (p->n_items + 1) * sizeof(*grown));
	if (!grown) {
		safe_close(out_fd);
		r = -ENOMEM;
		goto fail;
	}
	p->items = grown;
	it = &p->items[p->n_items];
	*it = (struct publish_item){ .segment = seg, .ticket = *ticket };
	if (fd < 0) {
		const char *target = segment_target(seg), *slash = strrchr(target, '/');

		it->in_dir = true;
		snprintf(it->final_name, sizeof(it->final_name), "%s", slash ? slash + 1 : target);
		snprintf(it->tmp_name, sizeof(it->tmp_name), ".%s.tmp", it->final_name);
		if (!segment_in_place(seg))
			fd = openat(p->dir_fd, it->tmp_name,
				    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0640);
		if (fd < 0 && !segment_in_place(seg)) {
			r = negative_errno();
			log_error_errno(r, "Session '%s': cannot create '%s': %m", p->session,
					it->tmp_name);
			goto fail;
		}
	}
	r = segment_assemble(seg, fd); /* the segment owns @fd from here on */
	if (r < 0) {
		log_error_errno(r, "Session '%s': cannot start writing a file: %m", p->session);
		goto fail;
	}
	p->n_items++;
	return 0;

fail:
	segment_keep_spool(seg);
	segment_free(seg);
	return r;
}

/* Runs the on-segment command for a file that was just put in place. */
static void run_on_segment(struct publisher *p, const char *path, const char *name)
{
	int r = -ENAMETOOLONG;

	if (!p->on_segment)
		return;
	if (path)
		r = runner_spawn(p->runner, p->on_segment, path, ON_SEGMENT_TIMEOUT_USEC);
	if (r < 0)
		log_warning_errno(r, "Session '%s': cannot run the on-segment command for '%s', "
				  "ignoring: %m", p->session, name);
}

/**
 * publisher_retention() - delete the oldest files until the budget holds.
 * @p: publisher with a directory
 */
void publisher_retention(struct publisher *p)
{
	char prefix[FTRACED_NAME_MAX + 2];
	int r;

	if (p->dir_fd < 0)
		return;
	snprintf(prefix, sizeof(prefix), "%s-", p->session);
	r = retention_apply(p->dir_fd, prefix, p->retention, &p->usage);
	p->retention_error = MIN(r, 0);
	if (r >= 0) {
		p->files_deleted += p->usage.n_deleted;
		p->bytes_deleted += p->usage.bytes_deleted;
		return;
	}
	/* Counted for status and the metrics (publisher_warning()), not only logged. */
	p->retention_failures++;
	log_warning_errno(r, "Session '%s': retention cannot count the session's files, nothing "
			  "is deleted: %m", p->session);
}

/**
 * publisher_warning() - what the user must know about retention, for status.
 * @p: publisher
 * @buf: receives the text ("" when retention counts every file)
 * @n: its size
 *
 * Return: the length of the text.
 */
int publisher_warning(const struct publisher *p, char *buf, size_t n)
{
	const char *why = p->retention_error == -EMLINK ?
		RETENTION_MANIFEST " is not the daemon's own file (another name is linked to "
		"it, or another user owns it)" : strerror(-p->retention_error);
	int k = 0;

	if (n > 0)
		buf[0] = '\0';
	if (p->retention_error < 0)
		k = snprintf(buf, n, "retention cannot count its files (%s): nothing is deleted "
			     "and the budget does not hold", why);
	if (p->files_uncounted > 0 && (size_t)k < n)
		k += snprintf(buf + k, n - k, "%s%" PRIu64 " files written are not in "
			      RETENTION_MANIFEST ": retention never counts or deletes them",
			      k ? "; " : "", p->files_uncounted);
	return k;
}

/* An assembly is done: put the file in place (or clean up), then tell the owner. */
static void finish(struct publisher *p, struct publish_item *it, int result, uint64_t bytes)
{
	struct publish_outcome o = {
		.segment = it->segment,
		.ticket = it->ticket,
		.bytes = bytes,
	};
	char path[PATH_MAX];

	if (it->in_dir) {
		o.name = it->final_name;
		if (result >= 0 && segment_in_place(it->segment))
			result = segment_rename_file(it->segment, p->dir_fd, it->final_name);
		else if (result >= 0 &&
			 renameat(p->dir_fd, it->tmp_name, p->dir_fd, it->final_name) < 0)
			result = negative_errno();
		if (result >= 0 && fsync(p->dir_fd) < 0)
			result = negative_errno();
		if (result < 0) {
			if (!segment_in_place(it->segment))
				unlinkat(p->dir_fd, it->tmp_name, 0);
		} else if (publish_path(p->dir_fd, it->final_name, path, sizeof(path)) >= 0) {
			o.path = path;
		}
	}
	o.result = result;
	if (result < 0)
		p->files_failed++;
	else if (it->in_dir)
		p->files_written++;
	if (result >= 0)
		segment_complete(it->segment);
	else
		segment_keep_spool(it->segment); /* what was captured stays for recovery */
	if (result >= 0 && it->in_dir) {
		int r = retention_record(p->dir_fd, it->final_name);

		if (r < 0)
			p->files_uncounted++;
		if (r < 0)
			log_warning_errno(r, "Session '%s': cannot add '%s' to the directory's "
					  "manifest; retention will leave it alone: %m", p->session,
					  it->final_name);
		run_on_segment(p, o.path, it->final_name);
		publisher_retention(p);
	}
	p->done(&o, p->userdata);
}

/**
 * publisher_poll() - finish every file whose assembly is done; the owner hears of each.
 * @p: publisher
 *
 * The segments of the files done wait for publisher_release().
 */
void publisher_poll(struct publisher *p)
{
	for (size_t i = 0; i < p->n_items;) {
		struct publish_item it = p->items[i];
		uint64_t bytes;
		int result;

		if (!segment_assembled(it.segment, &result, &bytes)) {
			i++;
			continue;
		}
		/* Out of the list first: the callback may look at what is pending. */
		memmove(&p->items[i], &p->items[i + 1], (p->n_items - i - 1) * sizeof(it));
		p->n_items--;
		finish(p, &it, result, bytes);
		keep_finished(p, it.segment);
	}
}

/**
 * publisher_forget_waiter() - a client went away: its files still complete, unreported.
 * @p: publisher
 * @waiter: as in its tickets
 */
void publisher_forget_waiter(struct publisher *p, const void *waiter)
{
	for (size_t i = 0; i < p->n_items; i++)
		if (p->items[i].ticket.waiter == waiter)
			p->items[i].ticket.waiter = NULL;
}

/**
 * publisher_has_waiter() - is a file of @waiter still being written?
 * @p: publisher
 * @waiter: as in its tickets
 *
 * Return: true until its outcome was reported.
 */
bool publisher_has_waiter(const struct publisher *p, const void *waiter)
{
	for (size_t i = 0; i < p->n_items; i++)
		if (p->items[i].ticket.waiter == waiter)
			return true;
	return false;
}
