/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * What a session mode (the flight recorder, flight.c) may see of its
 * session and ask of it: nothing else. The session (session.c) fills a
 * mode_host when it makes the mode and stays the only one to change its
 * own state; the mode works on its own struct (flight.h) and never sees
 * struct session.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-event.h>

struct capture_pool;
struct event_list;
struct instance;
struct instance_meta;
struct kallsyms;
struct publisher;
struct segment_env;
struct session_config;
struct stream_params;
struct stream_set;

/* Where the session is, as a mode needs to know it. */
enum mode_phase {
	MODE_IDLE,     /* not running: created, allocating or stopped */
	MODE_RUNNING,
	MODE_STOPPING, /* its stop waits for the mode (mode_host_ops.stopped) */
};

struct mode_host_ops {
	enum mode_phase (*phase)(const void *session);
	/* Something changed: the session's next turn of the event loop looks. */
	void (*wake)(void *session);
	/* Fails the session; @message is for the client. */
	void (*set_error)(void *session, int error, const char *message);
	/* The mode's streams (if any) are open: the session runs (tracing on). */
	int (*begin_running)(void *session);
	/*
	 * The session is stopped: the mode's part of a stop is over, or it
	 * could not resume tracing after a pause it made (with set_error).
	 */
	void (*stopped)(void *session);
	void (*stream_params)(void *session, struct stream_params *ret);
	/* The time the session did not capture before its next file, NULL: none. */
	const char *(*gap)(const void *session);
	/* A snapshot a waiter asked for is complete (@error 0), or failed. */
	void (*snapshot_done)(void *session, void *waiter, int error, const char *path,
			      uint64_t bytes, const char *note);
};

/* The session's parts a mode works with, borrowed for the session's life. */
struct mode_host {
	const char *name;
	uint32_t id;
	struct instance *instance;
	struct stream_set *cpus;
	struct publisher *publisher;
	const struct segment_env *segment_env;
	const struct session_config *config;
	const struct event_list *events;
	const struct instance_meta *imeta;
	const char *date;          /* the files' DATE anchor, "" none */
	int dir_fd;                /* STATE_DIR/sessions/<name> */
	sd_event *event;
	struct capture_pool *pool;
	struct kallsyms *kallsyms;
	uint32_t instance_tag;
	int hold_dir_fd;           /* store/hold.h: memory that outlives the daemon; <0 none */
	const struct mode_host_ops *ops;
	void *session;
};
