/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ftraced/proto.h"
#include "lib/wall-clock.h"

/* A session record as received in STARTED, SESSIONS and FINISHED. */
struct session_info {
	char name[FTRACED_NAME_MAX + 1];
	char state[FTRACED_NAME_MAX + 1];
	char instance[FTRACED_NAME_MAX + 1];
	uint32_t owner;
	uint32_t mode;
	uint32_t compression;
	uint32_t subbuf_size;
	uint32_t buffer_kb;      /* per CPU ring */
	uint32_t rt_priority;    /* -r: SCHED_FIFO priority of its capture workers; 0: none */
	unsigned n_events;
	char **events;           /* the specs as given, allocated: as many as there are */
	bool *skipped;           /* -i: this kernel lacks events[k] */
	unsigned n_events_allocated;
	unsigned n_skipped;
	unsigned skipped_next;   /* where the next SKIPPED_EVENT is looked for first */
	bool has_event_list;     /* its events are in the reply's memfd, here: */
	struct ftraced_event_list event_list;
	uint64_t elapsed_ms;
	uint64_t started_us;      /* wall clock, 0: never started */
	uint64_t last_snapshot_us; /* wall clock, 0: none yet */
	char last_snapshot[FTRACED_PATH_MAX + 1]; /* its file, "" for a client's (not sent) */
	bool has_file_bytes;
	uint64_t file_bytes;
	unsigned n_cpus;
	struct ftraced_cpu_stats *cpus;
	unsigned n_cpus_segment;
	struct ftraced_cpu_stats *cpus_segment; /* continuous: since the open segment began */
	bool has_segment_seq;
	uint32_t segment_seq;
	uint32_t segments_kept;
	uint64_t disk_bytes;
	uint64_t segment_size;
	uint64_t segment_time_ms;
	uint64_t max_total;
	uint32_t max_files;
	uint64_t max_age_ms;
	uint64_t keep_free;
	uint32_t keep_free_percent;
	/* flight recorder */
	uint32_t flight_backend;
	uint64_t flight_size;
	bool has_history_ms;
	uint64_t history_ms;
	char history_from[WALL_TEXT_MAX]; /* UTC, "" if not said */
	uint64_t history_raw_bytes;
	uint64_t history_bytes;
	uint64_t evicted_raw_bytes;      /* flight, and record -m: older data dropped */
	uint64_t keep_kb;                /* record -m: KiB kept per CPU; 0: all */
	uint32_t snapshots;
	char directory[FTRACED_PATH_MAX + 1];
	char recovered[FTRACED_PATH_MAX + 1]; /* newest file recovered after a crash, in directory */
	unsigned n_triggers;
	char triggers[FTRACED_TRIGGERS_PER_REQUEST_MAX][FTRACED_MESSAGE_MAX + 1];
	char note[FTRACED_MESSAGE_MAX + 1];
	int error;
	char message[FTRACED_MESSAGE_MAX + 1];
	char warning[FTRACED_MESSAGE_MAX + 1]; /* what another process did to its instance; retention */
	char gap[FTRACED_MESSAGE_MAX + 1];     /* a time it did not capture: the daemon was away */
	uint64_t discarded;              /* events the daemon could not store */
	struct ftraced_session_counters counters;
};

struct sessions {
	size_t n;
	struct session_info *items;
};

struct reply {
	uint16_t type;
	int error;                       /* ERROR: negative errno */
	char message[FTRACED_MESSAGE_MAX + 1];
	bool kernel_refused;             /* ERROR: the kernel refused (KERNEL_REFUSED) */
	struct sessions sessions;
	/* OK to a SNAPSHOT */
	char path[FTRACED_PATH_MAX + 1];
	bool has_file_bytes;
	uint64_t file_bytes;
	char note[FTRACED_MESSAGE_MAX + 1];
	/* LIST, STATUS: instances the daemon could not remove yet */
	char **pending;
	size_t n_pending;
	/* LIST, STATUS: the daemon's own counters */
	bool has_daemon;
	struct ftraced_daemon_counters daemon;
	bool has_daemon_cpu;
	uint64_t daemon_cpu_usec; /* DAEMON_CPU */
	char lease_holder[FTRACED_NAME_MAX + 1]; /* LEASE_HOLDER; "": the top level is not leased */
	/* OK to SAVE and OFFER: the descriptor that came with it, closed by ctl_reply_done() */
	bool has_fd;
	int fd;
};

int ctl_reply_decode(const void *buf, size_t n, struct reply *ret);
bool ctl_reply_has_event_lists(const struct reply *r);
int ctl_reply_decode_event_lists(struct reply *r, const void *list, size_t n);
void ctl_reply_done(struct reply *r);
const char *ctl_mode_name(uint32_t mode);
const char *ctl_flight_backend_name(uint32_t backend);
int ctl_flight_backend_parse(const char *name);
