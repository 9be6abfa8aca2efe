/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The session object as the session family shares it. Its files call each
 * other in one direction only, from the top:
 *   session.c           creation, requests, the event loop, freeing
 *   session-flight.c    the host a flight recorder works through
 *   session-run.c       starting, stopping, the end of the drain
 *   session-segments.c  the next segment, rotation, timers
 *   session-setup.c, session-check.c, session-symbols.c, session-status.c
 *   session-core.c      what all of them use: state names, wake, fail, stop request
 * Nothing else includes this: the rest of the daemon sees session.h, and
 * the flight recorder (flight.c) only its host (session-mode.h).
 */
#include <stdarg.h>

#include "daemon/base/bounds.h"
#include "daemon/kernel/clock-anchor.h"
#include "daemon/kernel/event-list.h"
#include "daemon/kernel/instance.h"
#include "daemon/kernel/instance-lease.h"
#include "daemon/base/log.h"
#include "daemon/base/proc-maps.h"
#include "daemon/store/metadata.h"
#include "daemon/output/publish.h"
#include "daemon/output/segment.h"
#include "daemon/output/session-config.h"
#include "daemon/session/session.h"
#include "daemon/output/stream-set.h"

/* In a session's directory: the uid of the user whose files it holds. */
#define SESSION_OWNER_FILE ".ftraced-owner"

struct flight;
struct probe_set;
struct ring_alloc;

struct session {
	struct session_env env;
	uint32_t id;
	char name[FTRACED_NAME_MAX + 1];
	uid_t owner;
	enum session_state state;
	struct session_config config;
	struct event_list events;       /* the config's specs, expanded */
	bool *skipped;                  /* per config spec: missing here, skipped (-i) */

	struct instance *instance;
	struct instance_lease *lease;   /* --top-level: the instance is the top level, leased */
	struct probe_set *probes;       /* --probe: created for the session, removed with it */
	char date[CLOCK_ANCHOR_DATE_MAX]; /* every file's wall-clock anchor (DATE); "": none */
	struct ring_alloc *ring_alloc;  /* while ALLOCATING: the thread sizing the ring */
	struct instance_meta imeta;
	uint64_t wake_bytes;            /* a CPU's ring holds this when its reader wakes; 0: unknown */
	struct stream_set cpus;

	struct segment_env segment_env;
	struct segment *current;        /* receiving data */
	struct segment *next;           /* during a rotation: what the workers switch to */
	uint32_t cut_generation;        /* the rotation being waited for, 0 = none */
	/*
	 * Clients waiting for a rotation (session_rotate_request()): each is
	 * answered when the segment its rotation closed (seq) is on disk; seq 0:
	 * its rotation has not begun (another was under way).
	 */
	struct rotation_waiter {
		void *waiter;
		uint32_t seq;
	} rotations[ROTATIONS_PENDING_MAX];
	size_t n_rotations;
	uint32_t next_seq;
	struct publisher publisher;     /* closed segments and snapshots on their way out */

	int out_fd;                     /* record: the client's file, until it is published */
	int dir_fd;                     /* continuous, flight: STATE_DIR/sessions/<name> */
	uint64_t file_bytes;

	int event_fd;                   /* workers and assemblers report here */
	sd_event_source *event_source;
	sd_event_source *timer_source;
	sd_event_source *read_timer;    /* -s: every CPU read at least this often */
	struct proc_maps procmaps;      /* --proc-map: read at the stop, for the last file */
	sd_event_source *segment_timer;
	sd_event_source *check_timer;   /* interference checks while running, if not watched */
	sd_event_source *check_watch;   /* inotify on the instance's files: checks when written */
	struct instance_watch *watch;   /* while running: the instance's baseline and watches */
	sd_event_source *symbols_look;  /* while running: when the symbols' copy needs a refresh */

	uint64_t start_usec;
	uint64_t stop_usec;
	bool destroy_requested;
	bool stop_requested;            /* by a part that cannot stop it: the loop stops it */
	bool stopped_reported;
	int error;                      /* fatal: no file */
	bool kernel_refused;            /* setting it up failed because the kernel refused */
	char error_message[256];
	int cut_short;                  /* capture stopped early; files hold what came before */
	char cut_message[256];
	char warning[512];              /* what someone else did to the instance; "" if nothing */
	char recovered[PATH_MAX];       /* record: its capture, rebuilt (relative to the state dir) */
	char gap[256];                  /* a time it did not capture (the daemon was away); "" */
	char note[256];                 /* what the user should know about its files; "" */
	bool gap_in_next_file;          /* ... not yet said in a file */

	struct flight *flight;          /* flight recorders only */
	/* record -m, once its rings are collected at the stop */
	uint64_t kept_raw;              /* raw sub-buffer bytes the file keeps */
	uint64_t kept_bytes;            /* memory they took (chunk headers and data) */
	uint64_t evicted_raw;           /* raw sub-buffer bytes dropped, older than those */
};

/* Messages of the scope are about @s (journal fields SESSION= and INSTANCE=). */
#define SESSION_LOG_CONTEXT(s) \
	LOG_CONTEXT((s)->name, (s)->instance ? instance_name((s)->instance) : NULL)

/* session-core.c */
void session_wake(struct session *s);
void session_set_error(struct session *s, int error, const char *fmt, ...) _printf_(3, 4);
void session_stopped(struct session *s);
void session_request_stop(struct session *s);
void session_retire_instance(struct session *s);
void session_stream_params(const struct session *s, struct stream_params *ret);
/* session-flight.c */
int session_new_flight(struct session *s, char *error, size_t n_error);
/* session-run.c */
int session_begin_running(struct session *s);
void session_check_streams(struct session *s);
void session_all_drained(struct session *s);
void session_arm_check(struct session *s);
void session_disarm_check(struct session *s);
void session_keep_symbols(struct session *s, bool starting);
void session_forget_symbols(struct session *s);
int session_setup_config(struct session *s, const struct ctl_request *req, unsigned n_cpus,
			 char *error, size_t n_error);
int session_check_config(struct session *s, const struct ctl_request *req, unsigned n_cpus,
			 char *error, size_t n_error);
int session_setup_files(struct session *s, char *error, size_t n_error);
int session_configure_instance(struct session *s, char *error, size_t n_error);
uint64_t session_segment_limit(const struct session *s);
char *session_cpustat_text(const struct session *s, uint64_t discarded, char *text);
void session_note_clears(struct session *s, unsigned cpu, const struct capture_counters *c);
/* session-segments.c */
int session_add_timer(struct session *s, sd_event_source **ret, uint64_t usec);
void session_arm_segment_timer(struct session *s);
int session_open_segment(struct session *s, struct segment **ret);
void session_publish_segment(struct session *s, struct segment *seg);
void session_rotate(struct session *s);
void session_complete_rotation(struct session *s);
void session_rotations_close(struct session *s, uint32_t seq);
void session_rotations_answer(struct session *s, uint32_t seq, int result, const char *path,
			      uint64_t bytes);
void session_rotations_forget(struct session *s, const void *waiter);
bool session_rotations_have(const struct session *s, const void *waiter);
