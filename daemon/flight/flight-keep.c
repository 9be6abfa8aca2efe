// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A memory flight recorder's history beyond the daemon's life: its rings
 * keep their chunks in slabs in the holds' directory (store/ring-keep.h),
 * the daemon's exit leaves them there, and the session's first start in
 * the next run (a restart, an upgrade, or the start after a kill -9) takes
 * them up before what it records anew. The time between is the history's
 * gap: the session says it (its gap note), and the snapshot's CPU
 * statistics say from when the history is complete again.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "daemon/base/log.h"
#include "daemon/capture/chunk-ring.h"
#include "daemon/flight/flight.h"
#include "daemon/flight/flight-internal.h"
#include "daemon/output/session-config.h"
#include "daemon/output/session-mode.h"
#include "daemon/output/stream-set.h"
#include "daemon/store/metadata.h"
#include "daemon/store/ring-keep.h"

/**
 * flight_keep_rings() - new memory rings keep their chunks where they outlive the daemon.
 * @f: a memory-backend flight recorder whose rings were just made
 * @resume: take up what the daemon's run before kept for this session
 *
 * Without the holds' directory, or where a CPU's keep cannot be made, the
 * history lives on the heap as before: said, not fatal.
 */
void flight_keep_rings(struct flight *f, bool resume)
{
	uint64_t budget = f->host.config->flight_size / f->host.cpus->n_cpus, resumed = 0;

	if (f->host.hold_dir_fd < 0)
		return;
	for (unsigned cpu = 0; cpu < f->host.cpus->n_cpus; cpu++) {
		struct ring_keep *k;
		int r;

		r = ring_keep_open(f->host.hold_dir_fd, f->host.name, cpu, f->host.imeta->subbuf_size,
				   f->host.config->zstd, budget, &k);
		if (r >= 0)
			r = chunk_ring_keep(f->host.cpus->cpus[cpu].ring, k, resume);
		if (r < 0) {
			log_warning_errno(r, "Session '%s': CPU %u's history is not kept beyond the "
					  "daemon's life (it is in memory only): %m", f->host.name, cpu);
			continue;
		}
		resumed += (uint64_t)r;
	}
	if (resumed == 0)
		return;
	snprintf(f->kept_gap, sizeof(f->kept_gap), "%s",
		 f->host.ops->gap(f->host.session) ?: "the daemon restarted");
	log_notice("Session '%s': took up the history the daemon kept before it stopped (%" PRIu64
		   " chunks); a gap follows it", f->host.name, resumed);
}

/* The session's first start in this run takes up what the run before kept. */
void flight_resume_kept(struct flight *f)
{
	if (f)
		f->resume_kept = true;
}

/**
 * flight_leave_kept() - the daemon exits: the history stays for the next start.
 * @f: flight state or NULL
 */
void flight_leave_kept(struct flight *f)
{
	if (!f || !f->host.cpus->cpus)
		return;
	f->leaving = true;
	for (unsigned cpu = 0; cpu < f->host.cpus->n_cpus; cpu++)
		if (f->host.cpus->cpus[cpu].ring)
			chunk_ring_leave(f->host.cpus->cpus[cpu].ring);
}

/* The session goes for good: so does what its rings kept (unless the daemon exits). */
void flight_keep_remove(struct flight *f)
{
	if (!f->leaving && f->host.hold_dir_fd >= 0)
		ring_keep_dir_remove(f->host.hold_dir_fd, f->host.name);
}
