// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Instances on their way out. Removing one takes the kernel tens of
 * milliseconds (55 ms for 2 x 4 MiB here: its ring buffers are freed), so
 * each removal runs on a thread of its own and the main loop, a stopped
 * record's file and other clients never wait for it; the result comes back
 * through a pipe. tracefs refuses to remove an instance
 * while a process holds one of its files open (EBUSY): a marker writer
 * keeping trace_marker open is the common case, and the documented way to
 * write markers. Such an instance, with its ring buffers, would otherwise
 * stay until the next daemon start. The reaper keeps it, retries every
 * REAPER_RETRY_USEC (its timer runs only while something is pending), lists
 * it in `ftracectl list`/`status`, and tells a waiting client (a destroy)
 * when it is gone or its deadline passed.
 *
 * Owned by the manager; main thread only, but for the removal threads,
 * which touch nothing but their instance. At exit they are joined and each
 * busy one is tried once more; what is still busy then is an orphan the
 * next start removes.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/base/bounds.h"
#include "daemon/kernel/instance.h"
#include "daemon/base/log.h"
#include "daemon/session/reaper.h"
#include "lib/ctl/ctl-proto.h"
#include "lib/time-util.h"

struct pending {
	struct instance *instance;
	char name[FTRACED_NAME_MAX + 1];
	uint64_t since_usec;
	bool removing;         /* a removal thread has the instance now */
	pthread_t thread;
	bool busy;             /* a removal failed: retried on the timer */
	int error;             /* the last removal's */
	bool gone;             /* another process had removed it already */
	void *waiter;          /* told when it goes, or at the deadline */
	uint64_t deadline_usec;
};

/* What a removal thread sends back; a pipe write this small is atomic. */
struct removal_result {
	struct instance *instance;
	int error;
};

struct reaper {
	sd_event *event;
	sd_event_source *timer;
	int results[2];                /* removal threads write, the loop reads */
	sd_event_source *results_source;
	reaper_done_fn done;
	void *userdata;
	struct pending *items;
	size_t n_items;
};

static int on_results(sd_event_source *source, int fd, uint32_t revents, void *userdata);

/**
 * reaper_new() - nothing pending yet.
 * @e: the event loop (for the retry timer)
 * @done: called for waiters (see reaper_wait())
 * @userdata: for @done
 * @ret: the reaper
 *
 * Return: 0 or -ENOMEM.
 */
int reaper_new(sd_event *e, reaper_done_fn done, void *userdata, struct reaper **ret)
{
	struct reaper *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->event = e;
	r->done = done;
	r->userdata = userdata;
	r->results[0] = r->results[1] = -EBADF;
	/* The loop's end never blocks; the threads' end does (see removal_main()). */
	if (pipe2(r->results, O_CLOEXEC) < 0 ||
	    fcntl(r->results[0], F_SETFL, O_NONBLOCK) < 0 ||
	    sd_event_add_io(e, &r->results_source, r->results[0], EPOLLIN, on_results, r) < 0) {
		reaper_free(r);
		return -ENOMEM;
	}
	*ret = r;
	return 0;
}

static void drop(struct reaper *r, size_t k)
{
	memmove(&r->items[k], &r->items[k + 1], (r->n_items - k - 1) * sizeof(*r->items));
	r->n_items--;
}

/* Item @k is gone: its waiter is told and it is dropped. */
static void removed(struct reaper *r, size_t k)
{
	struct pending *p = &r->items[k];

	if (p->gone)
		log_notice("Instance '%s' was removed by another process already", p->name);
	else if (p->busy)
		log_notice("Removed instance '%s' (it was busy for %.1f s)", p->name,
			   (double)(monotonic_usec() - p->since_usec) / 1e6);
	instance_free(p->instance);
	if (p->waiter)
		r->done(p->waiter, p->name, 0, r->userdata);
	drop(r, k);
}

/* One removal attempt for item @k, here and now; true if it is gone (and dropped). */
static bool try_remove(struct reaper *r, size_t k)
{
	struct pending *p = &r->items[k];
	int error = instance_try_remove(p->instance);

	if (error < 0) {
		p->error = error;
		return false;
	}
	p->gone = error > 0;
	removed(r, k);
	return true;
}

static int on_retry(sd_event_source *source, uint64_t usec, void *userdata)
{
	struct reaper *r = userdata;
	uint64_t now = monotonic_usec();
	int ret;

	for (size_t k = 0; k < r->n_items;) {
		struct pending *p = &r->items[k];

		if (!p->removing && try_remove(r, k))
			continue;
		if (p->waiter && now >= p->deadline_usec) {
			r->done(p->waiter, p->name, p->error, r->userdata);
			p->waiter = NULL;
		}
		k++;
	}
	bool busy = false;

	for (size_t k = 0; k < r->n_items; k++)
		busy |= r->items[k].busy;
	if (!busy) {
		r->timer = sd_event_source_disable_unref(r->timer);
		return 0;
	}
	/* A time source fires once: set the next turn and enable it again. */
	ret = sd_event_source_set_time_relative(source, REAPER_RETRY_USEC);
	if (ret >= 0)
		ret = sd_event_source_set_enabled(source, SD_EVENT_ONESHOT);
	return ret;
}

static void arm_retry(struct reaper *r, const char *name)
{
	if (!r->timer &&
	    sd_event_add_time_relative(r->event, &r->timer, CLOCK_MONOTONIC, REAPER_RETRY_USEC,
				       REAPER_RETRY_USEC / 10, on_retry, r) < 0)
		log_warning("Cannot arm the instance removal timer: '%s' waits for the next start",
			    name);
}

/* A removal failed: say why, and retry on the timer until it goes. */
static void mark_busy(struct reaper *r, struct pending *p, int error)
{
	p->busy = true;
	p->error = error;
	log_warning_errno(error, "Removing instance '%s' failed (%m): a process holds one of "
			  "its files open; retrying", p->name);
	arm_retry(r, p->name);
}

/* A removal thread's work: its instance, and where to say how it went. */
struct removal_job {
	struct instance *instance;
	int result_fd;
};

static void *removal_main(void *userdata)
{
	struct removal_job job = *(struct removal_job *)userdata;
	struct removal_result res = { .instance = job.instance };

	free(userdata);
	res.error = instance_try_remove(res.instance);
	/* A blocking write of a few bytes to a pipe its reader drains: it goes through. */
	while (write(job.result_fd, &res, sizeof(res)) < 0 && errno == EINTR)
		;
	return NULL;
}

/* Removal threads report: gone (told and dropped), or busy (retried on the timer). */
static int on_results(sd_event_source *source, int fd, uint32_t revents, void *userdata)
{
	struct reaper *r = userdata;
	struct removal_result res;

	while (read(fd, &res, sizeof(res)) == sizeof(res)) {
		for (size_t k = 0; k < r->n_items; k++) {
			struct pending *p = &r->items[k];

			if (p->instance != res.instance || !p->removing)
				continue;
			pthread_join(p->thread, NULL);
			p->removing = false;
			/* 1: another process removed it (ENOENT), which is as good. */
			if (res.error >= 0) {
				p->gone = res.error > 0;
				removed(r, k);
				break;
			}
			mark_busy(r, p, res.error);
			break;
		}
	}
	return 0;
}

/**
 * reaper_retire() - remove an instance now, or keep trying until it goes.
 * @r: reaper
 * @i: an instance no session uses any more; taken over
 * @now: try here and now instead of on a thread (an instance that never ran:
 *       small, and its client should find it gone)
 */
void reaper_retire(struct reaper *r, struct instance *i, bool now)
{
	struct removal_job *job;
	struct pending *grown, *p;

	if (!i)
		return;
	grown = realloc(r->items, (r->n_items + 1) * sizeof(*grown));
	if (!grown) {
		instance_free(i); /* here and now, then */
		return;
	}
	r->items = grown;
	p = &r->items[r->n_items];
	*p = (struct pending){ .instance = i, .since_usec = monotonic_usec(), .removing = true };
	snprintf(p->name, sizeof(p->name), "%s", instance_name(i));
	job = now ? NULL : malloc(sizeof(*job));
	if (job)
		*job = (struct removal_job){ .instance = i, .result_fd = r->results[1] };
	if (!job || pthread_create(&p->thread, NULL, removal_main, job) != 0) {
		free(job);
		p->removing = false;
		r->n_items++;
		if (!try_remove(r, r->n_items - 1))
			mark_busy(r, &r->items[r->n_items - 1], r->items[r->n_items - 1].error);
		return;
	}
	r->n_items++;
}

static struct pending *find(const struct reaper *r, const char *name)
{
	for (size_t k = 0; k < r->n_items; k++)
		if (strcmp(r->items[k].name, name) == 0)
			return &r->items[k];
	return NULL;
}

/**
 * reaper_pending() - is this instance still waiting to be removed?
 * @r: reaper
 * @name: the instance's name
 *
 * Return: true while it is busy.
 */
bool reaper_pending(const struct reaper *r, const char *name)
{
	return find(r, name);
}

/**
 * reaper_wait() - tell @waiter through the done callback when @name is gone.
 * @r: reaper
 * @name: a pending instance
 * @waiter: the client to answer (one per instance)
 * @timeout_usec: answer with the error if it is still there after this long
 */
void reaper_wait(struct reaper *r, const char *name, void *waiter, uint64_t timeout_usec)
{
	struct pending *p = find(r, name);

	if (!p) {
		r->done(waiter, name, 0, r->userdata);
		return;
	}
	p->waiter = waiter;
	p->deadline_usec = monotonic_usec() + timeout_usec;
}

/**
 * reaper_forget_waiter() - a client went away.
 * @r: reaper
 * @waiter: as given to reaper_wait()
 */
void reaper_forget_waiter(struct reaper *r, const void *waiter)
{
	for (size_t k = 0; k < r->n_items; k++)
		if (r->items[k].waiter == waiter)
			r->items[k].waiter = NULL;
}

/**
 * reaper_has_waiter() - is @waiter waiting for a removal?
 * @r: reaper
 * @waiter: a client
 *
 * Return: true until it was answered.
 */
bool reaper_has_waiter(const struct reaper *r, const void *waiter)
{
	for (size_t k = 0; k < r->n_items; k++)
		if (r->items[k].waiter == waiter)
			return true;
	return false;
}

/**
 * reaper_describe() - one FTRACED_ATTR_PENDING_INSTANCE line per pending instance.
 * @r: reaper
 * @b: the LIST or STATUS reply
 */
void reaper_describe(const struct reaper *r, struct ctl_builder *b)
{
	uint64_t now = monotonic_usec();

	for (size_t k = 0; k < r->n_items; k++) {
		const struct pending *p = &r->items[k];
		char line[FTRACED_MESSAGE_MAX];

		if (!p->busy)
			snprintf(line, sizeof(line), "%s: being removed", p->name);
		else
			snprintf(line, sizeof(line), "%s: busy for %" PRIu64 " s (%s: a process holds "
				 "one of its files open, such as trace_marker); retried every second",
				 p->name, (now - p->since_usec) / 1000000, strerror(-p->error));
		ctl_put_string(b, FTRACED_ATTR_PENDING_INSTANCE, line);
	}
}

/**
 * reaper_free() - one last try for each; what is still busy is left to the next start.
 * @r: reaper or NULL
 *
 * Return: NULL.
 */
struct reaper *reaper_free(struct reaper *r)
{
	if (!r)
		return NULL;
	for (size_t k = 0; k < r->n_items; k++)
		if (r->items[k].removing) {
			pthread_join(r->items[k].thread, NULL);
			r->items[k].removing = false;
		}
	while (r->n_items > 0)
		if (!try_remove(r, 0)) {
			log_warning("Instance '%s' is still busy; the next start removes it",
				    r->items[0].name);
			instance_abandon(r->items[0].instance);
			drop(r, 0);
		}
	sd_event_source_disable_unref(r->timer);
	sd_event_source_disable_unref(r->results_source);
	safe_close(r->results[0]);
	safe_close(r->results[1]);
	free(r->items);
	free(r);
	return NULL;
}
