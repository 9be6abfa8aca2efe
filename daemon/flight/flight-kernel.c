// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The flight recorder's kernel backend: the history is the instance's own
 * ring, in overwrite mode, and nothing reads it until a snapshot. A
 * snapshot swaps the ring with the kernel's snapshot buffer (or, without
 * one, pauses tracing) and drains it through temporary streams into
 * temporary rings, keeping a copy of what it takes for recovery; the
 * snapshots themselves are written by flight.c. Main thread only.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/base/bounds.h"
#include "daemon/capture/capture.h"
#include "daemon/kernel/clock-anchor.h"
#include "daemon/flight/flight-internal.h"
#include "daemon/flight/flight.h"
#include "daemon/kernel/instance.h"
#include "daemon/base/log.h"
#include "daemon/recovery/persistent-history.h"
#include "daemon/output/publish.h"
#include "daemon/recovery/recovery-recipe.h"
#include "daemon/output/segment.h"
#include "daemon/store/spool.h"
#include "daemon/output/stream-set.h"
#include "lib/time-util.h"

static void drop_copies(struct flight *f);

/*
 * Kernel backend: the history lives in the instance's ring, and a crash
 * of the daemon leaves it there. A recipe with no spool data tells the
 * next start (recovery.c) to drain that ring into a snapshot,
 * "<name>-<created>-history-recovered.dat", before the instance goes.
 * A persistent backend's ring outlives a crash of the kernel too: its
 * recipe is kept when the daemon exits (flight_abandon()), and the next
 * start, in this boot or the next, drains it the same way; the instance
 * stays, the kernel's.
 */
int flight_keep_history_recipe(struct flight *f)
{
	char stamp[32], target[sizeof(SESSIONS_DIR) + 2 * FTRACED_NAME_MAX + 96], boot[40] = "";
	int r;

	publish_utc_stamp(stamp, sizeof(stamp));
	/* A persistent history may come back after a reboot: its name says which boot it is of. */
	if (f->host.config->backend == FTRACED_FLIGHT_PERSISTENT && boot_id(boot) == 0)
		boot[8] = '\0';
	snprintf(target, sizeof(target), SESSIONS_DIR "/%s/" SNAPSHOTS_DIR "/%s-%s%s%s-history.dat",
		 f->host.name, f->host.name, stamp, boot[0] ? "-boot-" : "", boot);
	r = spool_create(&f->history, f->host.segment_env->state_dir_fd, spool_new_id(), 0);
	if (r < 0)
		return r;
	r = recipe_write(f->history.dir_fd, &(struct recipe){
		.target = target,
		.date = f->host.date,
		.gap = f->host.ops->gap(f->host.session),
		.instance = instance_name(f->host.instance),
		.zstd = f->host.config->zstd,
		.level = f->host.config->level,
		.n_cpus = f->host.cpus->n_cpus,
		.events = f->host.events,
		.imeta = f->host.imeta,
		.kernel_history = true,
		.persistent = f->host.config->backend == FTRACED_FLIGHT_PERSISTENT,
	});
	if (r < 0) {
		spool_remove(&f->history);
		return r;
	}
	/* A restart within the boot: the ring is this boot's history, resumed as it is. */
	if (f->host.config->backend == FTRACED_FLIGHT_PERSISTENT) {
		r = persistent_history_take(f->host.segment_env->state_dir_fd,
					    instance_name(f->host.instance), f->history.trace_id);
		if (r < 0)
			log_warning_errno(r, "Session '%s': cannot look for this boot's history in "
					  "the state directory, arming afresh: %m", f->host.name);
		f->resume = r > 0;
	}
	return 0;
}


/*
 * Kernel backend: a drain empties the kernel's ring, so what it takes is
 * also written to the history's spool, "cpuN", until the snapshots made of
 * it are written: a crash in between leaves it for recovery (recovery.c),
 * followed by what the ring still holds. Its header has the counters the
 * drain began with (paused: exact; after a swap the drained buffer's are
 * not readable). Drains whose snapshots are still being written append.
 * Without copies (an error) the snapshot goes on, as before.
 */
static void open_copies(struct flight *f)
{
	unsigned n = f->host.cpus->n_cpus;

	if (f->copies)
		return;
	f->copies = malloc(n * sizeof(*f->copies));
	if (!f->copies)
		return;
	for (unsigned cpu = 0; cpu < n; cpu++) {
		struct spool_start start = SPOOL_START_UNKNOWN;
		struct cpu_counters c;
		char name[32];
		int r;

		snprintf(name, sizeof(name), "cpu%u", cpu);
		f->copies[cpu] = openat(f->history.dir_fd, name, O_RDWR | O_CREAT | O_TRUNC |
					O_CLOEXEC | O_NOFOLLOW, 0600);
		r = f->copies[cpu] < 0 ? negative_errno() : 0;
		if (r >= 0 && !f->swap && instance_read_cpu_stats(f->host.instance, cpu, &c, NULL) >= 0)
			start = (struct spool_start){ c.read, c.overrun, c.dropped };
		if (r >= 0)
			r = spool_write_header(f->copies[cpu], &start, NULL);
		if (r < 0) {
			log_warning_errno(r, "Session '%s': cannot keep a copy of the drain for "
					  "recovery, draining without: %m", f->host.name);
			f->n_copies = cpu + 1;
			drop_copies(f);
			return;
		}
	}
	f->n_copies = n;
}

/* Every snapshot of the drains is written: their copies go. */
static void drop_copies(struct flight *f)
{
	for (unsigned cpu = 0; f->copies && cpu < f->n_copies; cpu++) {
		char name[32];

		snprintf(name, sizeof(name), "cpu%u", cpu);
		unlinkat(f->history.dir_fd, name, 0);
		safe_close(f->copies[cpu]);
	}
	free(f->copies);
	f->copies = NULL;
	f->n_copies = 0;
}

void flight_drop_copies_when_written(struct flight *f)
{
	if (!f->draining && f->n_unpublished == 0)
		drop_copies(f);
}

/* Kernel backend: tracing off, and temporary streams drain the ring into temporary rings. */
int flight_kernel_drain_begin(struct flight *f)
{
	struct stream_params params;
	char error[256];
	int r;

	r = stream_set_rings_new(f->host.cpus, UINT64_MAX);
	if (r < 0)
		return r;
	f->drain_start_usec = monotonic_usec();
	if (f->swap) {
		/* The counters of the buffer about to be drained: after the swap they are its. */
		r = stream_set_read_stats(f->host.cpus, f->host.instance, /* start= */ false, /* text= */ true);
		if (r < 0)
			log_warning_errno(r, "Session '%s': reading statistics failed, ignoring: %m",
					  f->host.name);
		r = instance_snapshot_swap(f->host.instance);
		if (r < 0) {
			log_error_errno(r, "Session '%s': cannot swap the snapshot buffer: %m", f->host.name);
			stream_set_rings_free(f->host.cpus);
			return r;
		}
	} else if (flight_phase(f) == MODE_RUNNING) {
		r = instance_set_tracing(f->host.instance, false);
		if (r < 0)
			log_warning_errno(r, "Session '%s': cannot pause tracing, draining anyway: %m",
					  f->host.name);
	}
	f->host.ops->stream_params(f->host.session, &params);
	params.snapshot_raw = f->swap;
	if (f->history.dir_fd >= 0) {
		open_copies(f);
		params.copy_fds = f->copies;
	}
	r = stream_set_open(f->host.cpus, f->host.instance, &params, NULL, error, sizeof(error));
	if (r < 0) {
		log_error("Session '%s': %s", f->host.name, error);
		stream_set_release(f->host.cpus, true);
		stream_set_rings_free(f->host.cpus);
		if (flight_phase(f) == MODE_RUNNING && !f->swap)
			instance_set_tracing(f->host.instance, true);
		return r;
	}
	f->draining = true;
	f->flush_requested++;
	for (unsigned cpu = 0; cpu < f->host.cpus->n_cpus; cpu++) {
		struct cpu_stream *cs = &f->host.cpus->cpus[cpu];

		r = capture_pool_add(f->host.pool, cs->stream);
		if (r >= 0)
			r = capture_pool_finish(f->host.pool, cs->stream);
		if (r < 0) {
			/* Queued streams finish anyway; the drain ends with what it has. */
			log_error_errno(r, "Session '%s': cannot drain CPU %u: %m", f->host.name, cpu);
			cs->stream = capture_stream_free(cs->stream);
		}
	}
	return 0;
}

/*
 * Swap: the snapshot buffer is drained while tracing went on. Clearing it
 * resets its counters, so the ring it becomes at the next swap counts
 * from 0: its counters going "back" then is no interference.
 */
static void swap_done(struct flight *f)
{
	int r;

	r = instance_snapshot_clear(f->host.instance);
	if (r < 0)
		log_warning_errno(r, "Session '%s': cannot clear the snapshot buffer: %m", f->host.name);
	for (unsigned cpu = 0; cpu < f->host.cpus->n_cpus; cpu++)
		f->host.cpus->cpus[cpu].seen = (struct cpu_counters){};
	log_info("Session '%s': snapshot by swap, drained in %.1f ms while tracing went on",
		 f->host.name, (double)(monotonic_usec() - f->drain_start_usec) / 1000);
}

/* No snapshot buffer: the ring itself was drained; tracing resumes where it ran. */
static void pause_done(struct flight *f)
{
	int r;

	if (flight_phase(f) == MODE_RUNNING) {
		r = instance_set_tracing(f->host.instance, true);
		if (r < 0) {
			flight_fail(f, r, "cannot resume tracing after a snapshot: %s", strerror(-r));
			flight_stopped(f);
		}
	}
	if (f->host.config->backend == FTRACED_FLIGHT_PERSISTENT)
		snprintf(f->note, sizeof(f->note), "persistent backend: tracing was paused for "
			 "%.1f ms while the ring was drained; a ring that was read is not kept "
			 "across the next reboot by 6.12",
			 (double)(monotonic_usec() - f->drain_start_usec) / 1000);
	else
		snprintf(f->note, sizeof(f->note), "kernel backend: no snapshot buffer to swap on "
			 "this kernel, so tracing was paused for %.1f ms while the ring was drained",
			 (double)(monotonic_usec() - f->drain_start_usec) / 1000);
	log_info("Session '%s': %s", f->host.name, f->note);
}

/* Kernel backend: the drain is over; write the snapshots, then the next drain if asked. */
void flight_kernel_drain_end(struct flight *f)
{
	int r;

	/* The drain's streams are temporary: the session's totals stay as they were. */
	for (unsigned cpu = 0; cpu < f->host.cpus->n_cpus; cpu++)
		f->host.cpus->cpus[cpu].stream = capture_stream_free(f->host.cpus->cpus[cpu].stream);
	f->draining = false;
	f->flush_done = f->flush_requested;
	flight_serve_jobs(f);
	flight_drop_copies_when_written(f);
	/*
	 * What was overwritten so far is accounted for: the ring drained is
	 * empty now, or (swap) tracing goes on in the cleared buffer, from 0.
	 */
	for (unsigned cpu = 0; cpu < f->host.cpus->n_cpus; cpu++)
		f->host.cpus->cpus[cpu].lost_base = f->swap ? 0 : f->host.cpus->cpus[cpu].cut.overrun;
	stream_set_rings_free(f->host.cpus);
	if (f->swap)
		swap_done(f);
	else
		pause_done(f);
	if (flight_phase(f) == MODE_STOPPING)
		flight_stopped(f);
	if (f->drain_again) {
		f->drain_again = false;
		r = flight_kernel_drain_begin(f);
		if (r < 0) {
			for (size_t i = 0; i < f->n_jobs; i++)
				f->jobs[i].flush = f->flush_done; /* written empty rather than lost */
			flight_serve_jobs(f);
		}
	}
}

/**
 * flight_leave_armed() - the daemon exits and a persistent backend's history records on.
 * @f: flight state
 *
 * Return: true if @f is one that stays armed (its recipe is then kept when
 * it is freed: the next start recovers the history); false otherwise.
 */
bool flight_leave_armed(struct flight *f)
{
	if (f->host.config->backend != FTRACED_FLIGHT_PERSISTENT || f->draining || f->n_jobs > 0 ||
	    f->host.ops->phase(f->host.session) != MODE_RUNNING)
		return false;
	f->keep_history = true;
	return true;
}
