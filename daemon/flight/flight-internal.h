/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The flight recorder's state, as flight.c (history, snapshots, triggers),
 * flight-snapshot.c (writing a snapshot whose data is ready) and
 * flight-kernel.c (the kernel backend's drain) share it. Nothing else
 * includes this.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <systemd/sd-event.h>

#include "daemon/flight/trigger.h"
#include "daemon/output/session-config.h"
#include "daemon/output/segment.h"
#include "daemon/output/session-mode.h"
#include "daemon/store/spool.h"
#include "ftraced/macro.h"

struct trigger;

#define SNAPSHOTS_DIR "snapshots"
/* A job that waits for the final drain of a stop rather than a flush. */
#define FLUSH_AFTER_STOP UINT32_MAX

/* A snapshot asked for, waiting for the workers' flush or the kernel drain. */
struct snapshot_job {
	void *waiter;
	int out_fd;
	struct snapshot_window window;
	uint32_t flush;               /* served once this flush (or drain) is complete */
	struct trigger_slot *trigger;
	char cause[TRIGGER_CAUSE_MAX]; /* why it is taken, for the file */
};

/* A trigger of a flight session, and its post timer. */
struct trigger_slot {
	struct flight *flight;
	struct trigger *trigger;
	sd_event_source *post; /* armed between firing and its snapshot */
	uint64_t fired_ts;     /* the firing event's time (trace clock), for pre= */
	char cause[TRIGGER_CAUSE_MAX]; /* that firing, for its snapshot */
};

struct flight {
	struct mode_host host;
	int snap_dir_fd;              /* STATE_DIR/sessions/<name>/snapshots */
	struct snapshot_job *jobs;
	size_t n_jobs;
	uint32_t flush_requested;     /* flushes (memory) or drains (kernel) begun */
	uint32_t flush_done;          /* kernel: drains complete */
	bool swap;                    /* kernel: snapshots swap the ring with the snapshot buffer */
	bool draining;                /* kernel: streams draining the ring (or snapshot buffer) */
	bool drain_again;             /* kernel: jobs came in during a drain */
	bool keep_history;            /* persistent: the daemon exits, the ring records on */
	bool resume;                  /* persistent: the ring holds this boot's history already */
	bool resume_kept;             /* memory: the next start takes up the slabs a run before kept */
	bool leaving;                 /* memory: the daemon exits, its rings' slabs stay */
	char kept_gap[256];           /* memory: the gap after a history taken up, for snapshots */
	uint64_t drain_start_usec;
	struct trigger_slot *triggers;
	unsigned n_triggers;
	uint32_t n_snapshots;         /* written */
	uint64_t n_failed;            /* snapshots that could not be written */
	uint32_t next_snapshot_seq;
	bool has_date;                /* the session's wall-clock anchor, for times people read */
	long long date_us;
	uint64_t start_wall_usec;     /* the realtime clock when recording began */
	char note[256];               /* what the user should know about the backend */
	char recovered[NAME_MAX + 1]; /* the newest "...-recovered.dat" in the snapshots, or "" */
	uint64_t last_snapshot_us;    /* when the last snapshot was complete (wall clock), or 0 */
	char last_snapshot[PATH_MAX]; /* its file, "" for a client's */
	struct spool history;         /* kernel: a recipe, for recovery after a crash ... */
	int *copies;                  /* ... and while drained snapshots are unwritten, per CPU
				       * a copy of what the drain took from the kernel's ring */
	unsigned n_copies;
	unsigned n_unpublished;       /* kernel: snapshots handed to the publisher, not done */
};


static inline bool flight_kernel_backend(const struct flight *f)
{
	return f->host.config->backend != FTRACED_FLIGHT_MEMORY; /* kernel or persistent */
}

static inline enum mode_phase flight_phase(const struct flight *f)
{
	return f->host.ops->phase(f->host.session);
}

/* The session is stopped (the host changes its state). */
static inline void flight_stopped(struct flight *f)
{
	f->host.ops->stopped(f->host.session);
}

/* Fails the session, with a message for the client. */
_printf_(3, 4) static inline void flight_fail(struct flight *f, int error, const char *fmt, ...)
{
	char message[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	f->host.ops->set_error(f->host.session, error, message);
}

/* flight-snapshot.c */
void flight_serve_jobs(struct flight *f);
void flight_snapshot_failed(struct flight *f, void *waiter, struct trigger_slot *trigger,
			    int error);

/* flight-keep.c */
void flight_keep_rings(struct flight *f, bool resume);
void flight_keep_remove(struct flight *f);

/* flight-kernel.c */
int flight_keep_history_recipe(struct flight *f);
int flight_kernel_drain_begin(struct flight *f);
void flight_kernel_drain_end(struct flight *f);
void flight_drop_copies_when_written(struct flight *f);
