// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A flight recorder's snapshot jobs, once their data is in the rings: each
 * is taken off the queue, what the rings hold becomes a segment handed to
 * the publisher, and a failure is reported to whoever asked. flight.c
 * queues the jobs and hears the publisher's outcome; flight-kernel.c
 * serves them after its drain. Main thread only.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/base/bounds.h"
#include "daemon/base/log.h"
#include "daemon/capture/chunk-ring.h"
#include "daemon/flight/flight-internal.h"
#include "daemon/flight/trigger.h"
#include "daemon/kernel/instance.h"
#include "daemon/output/publish.h"
#include "daemon/output/segment.h"
#include "daemon/output/stream-set.h"
#include "lib/io-util.h"

void flight_snapshot_failed(struct flight *f, void *waiter, struct trigger_slot *trigger,
			    int error)
{
	char result[128];

	f->n_failed++;
	log_error_errno(error, "Session '%s': snapshot failed: %m", f->host.name);
	if (trigger) {
		snprintf(result, sizeof(result), "snapshot failed: %s", strerror(-error));
		trigger_set_result(trigger->trigger, result);
	}
	if (waiter)
		f->host.ops->snapshot_done(f->host.session, waiter, error, NULL, 0, NULL);
}

/* Takes what the rings hold now and starts writing it as a snapshot file. */
static void write_snapshot(struct flight *f, struct snapshot_job *job)
{
	char stamp[32], target[PUBLISH_NAME_MAX + sizeof(SESSIONS_DIR) + FTRACED_NAME_MAX + 24];
	char origin[FTRACED_NAME_MAX + TRIGGER_CAUSE_MAX + 96];
	struct publish_ticket ticket = { .snapshot = true, .waiter = job->waiter,
					 .cookie = job->trigger };
	uint32_t seq = ++f->next_snapshot_seq;
	struct segment *seg;
	int r;

	publish_utc_stamp(stamp, sizeof(stamp));
	snprintf(target, sizeof(target), SESSIONS_DIR "/%s/" SNAPSHOTS_DIR "/%s-%s-%06" PRIu32
		 ".dat", f->host.name, f->host.name, stamp, seq);
	r = segment_new_snapshot(f->host.segment_env, seq, target, &job->window, &seg);
	if (r < 0) {
		flight_snapshot_failed(f, job->waiter, job->trigger, r);
		return;
	}
	snprintf(origin, sizeof(origin), "ftraced-origin: session '%s' (flight recorder), snapshot "
		 "%" PRIu32 "\nftraced-cause: %s\n", f->host.name, seq, job->cause);
	if (segment_set_origin(seg, origin) < 0)
		log_warning("Session '%s': out of memory saying why the snapshot was taken in it",
			    f->host.name);
	/* With a swap, the statistics of the buffer drained were read before it. */
	r = f->swap ? 0 : stream_set_read_stats(f->host.cpus, f->host.instance, /* start= */ false,
						 /* text= */ true);
	if (r < 0)
		log_warning_errno(r, "Session '%s': reading statistics failed, ignoring: %m",
				  f->host.name);
	for (unsigned cpu = 0; cpu < f->host.cpus->n_cpus; cpu++) {
		struct cpu_stream *cs = &f->host.cpus->cpus[cpu];
		struct chunk_list l = {};
		bool older_lost;

		r = chunk_ring_collect(cs->ring, &l);
		if (r < 0) {
			segment_free(seg);
			flight_snapshot_failed(f, job->waiter, job->trigger, r);
			return;
		}
		/* Memory: evicted from our ring; kernel: overwritten in the kernel's. */
		older_lost = flight_kernel_backend(f) ? cs->cut.overrun > cs->lost_base : l.evicted;
		if (l.gap_from_ts && f->kept_gap[0] && segment_set_gap(seg, f->kept_gap) < 0)
			log_warning("Session '%s': out of memory saying the gap in a snapshot",
				    f->host.name);
		segment_close_cpu(seg, cpu, 0, 0, &cs->cut, TAKE_PTR(cs->cut_text));
		segment_set_chunks(seg, cpu, &l, older_lost);
	}
	r = publisher_add(f->host.publisher, seg, TAKE_FD(job->out_fd), &ticket);
	if (r < 0)
		flight_snapshot_failed(f, job->waiter, job->trigger, r);
	else
		f->n_unpublished++;
}

/* Memory backend: is the flush this job waits for done? */
static bool job_ready(struct flight *f, const struct snapshot_job *job)
{
	if (flight_phase(f) == MODE_IDLE)
		return true;
	if (job->flush == FLUSH_AFTER_STOP)
		return false;
	for (unsigned cpu = 0; cpu < f->host.cpus->n_cpus; cpu++)
		if (!f->host.cpus->cpus[cpu].stream)
			return true;
	return stream_set_cut_reached(f->host.cpus, job->flush);
}

/* Writes every job whose data is ready; the job leaves the queue first. */
void flight_serve_jobs(struct flight *f)
{

	for (size_t i = 0; i < f->n_jobs;) {
		struct snapshot_job job = f->jobs[i];
		bool ready = flight_kernel_backend(f) ? job.flush <= f->flush_done : job_ready(f, &job);

		if (!ready) {
			i++;
			continue;
		}
		memmove(&f->jobs[i], &f->jobs[i + 1], (f->n_jobs - i - 1) * sizeof(job));
		f->n_jobs--;
		write_snapshot(f, &job);
		safe_close(job.out_fd);
	}
}

