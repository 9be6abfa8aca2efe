/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

#include "daemon/control/daemon-config.h"
#include "ftraced/macro.h"

struct capture_pool;
struct clock_anchor;
struct ctl_builder;
struct ctl_conn;
struct ctl_request;
struct controller;
struct instance;
struct kallsyms;
struct runner;
struct session_files;

/* What the controller takes from the daemon: its services, and how to tell it things. */
struct controller_env {
	sd_event *event;
	struct capture_pool *pool;
	struct runner *runner;
	int state_dir_fd;
	int hold_dir_fd;   /* holds (hold.h) of compressed streams; -EBADF: none */
	uint32_t instance_tag;
	struct kallsyms *kallsyms;
	struct clock_anchor *clock_anchor;
	_Atomic uint64_t *written;
	/* The sessions changed (count, states): for sd_notify and the metrics file. */
	void (*changed)(void *userdata);
	/* The daemon's own counters, before the sessions of a SESSIONS reply. */
	void (*describe_daemon)(void *userdata, struct ctl_builder *b);
	void *userdata;
};

/* The daemon's settings the controller applies to sessions (ftraced.conf). */
struct controller_limits {
	uint64_t memory_limit;     /* all sessions' rings and histories, bytes; 0: none */
	enum group_symbols group_symbols;
	unsigned rt_priority_max;  /* the highest -r the workers can take; 0: -r refused */
};

int controller_new(const struct controller_env *env, struct controller **ret);
struct controller *controller_free(struct controller *c);
DEFINE_CLEANUP(struct controller *, controller_free)

void controller_set_limits(struct controller *c, const struct controller_limits *l);
void controller_request(struct controller *c, struct ctl_conn *conn, const struct ctl_request *req,
			int fd);
void controller_conn_closed(struct controller *c, struct ctl_conn *conn);
bool controller_conn_busy(struct controller *c, const struct ctl_conn *conn);
void controller_describe(struct controller *c, struct ctl_builder *b, const char *only);
unsigned controller_n_sessions(const struct controller *c);
bool controller_any_running(const struct controller *c);
uint64_t controller_sessions_started(const struct controller *c);
void controller_load_session_files(struct controller *c, const char *dir);
int controller_check_session_files(struct controller *c, const struct session_files *f,
				   const struct controller_limits *next, char *error,
				   size_t n_error);
void controller_apply_session_files(struct controller *c, const char *dir,
				    struct session_files *f, char *summary, size_t n_summary);
void controller_restore_saved(struct controller *c);
void controller_prune_kept(struct controller *c);
void controller_retire_instance(struct controller *c, struct instance *i);
void controller_shutdown(struct controller *c);
