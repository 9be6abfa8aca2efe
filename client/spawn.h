/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/* The command `record -- CMD` runs: forked at once, held until tracing is on. */
struct spawned {
	pid_t pid;
	int go_fd;   /* written once to let it exec; closed to make it exit instead */
	int exec_fd; /* its exec's errno arrives here; EOF: the command runs */
	bool traced;  /* --proc-map: ptrace holds it at its exit (spawn_hold_at_exit()) */
	bool at_exit; /* held there now, its memory still mapped */
	bool reaped;  /* its status is in .status */
	int status;
};

/* record --user: who the command runs as (trace-cmd record --user). */
#define SPAWN_USER_NAME_MAX 256 /* glibc takes names up to LOGIN_NAME_MAX (256) */
struct spawn_user {
	char name[SPAWN_USER_NAME_MAX + 1]; /* empty: as ftracectl runs */
	uid_t uid;
	gid_t gid;
};

/* The shell's status for a command that could not be run. */
#define SPAWN_CANNOT_RUN 127

int spawn_find(const char *command);
int spawn_user_find(const char *name, struct spawn_user *ret);
int spawn_held(char *const argv[], const struct spawn_user *user, struct spawned *ret);
int spawn_exec_result(struct spawned *s);
int spawn_exit_status(int wait_status);
int spawn_release(struct spawned *s);
void spawn_abort(struct spawned *s);
int spawn_reap(struct spawned *s, bool block, int *ret_status);
int spawn_hold_at_exit(struct spawned *s);
bool spawn_child_event(struct spawned *s);
void spawn_let_exit(struct spawned *s);
