/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/* The command `record -- CMD` runs: forked at once, held until tracing is on. */
struct spawned {
	pid_t pid;
	int go_fd;   /* written once to let it exec; closed to make it exit instead */
	int exec_fd; /* its exec's errno arrives here; EOF: the command runs */
};

/* The shell's status for a command that could not be run. */
#define SPAWN_CANNOT_RUN 127

int spawn_find(const char *command);
int spawn_held(char *const argv[], struct spawned *ret);
int spawn_exec_result(struct spawned *s);
int spawn_exit_status(int wait_status);
int spawn_release(struct spawned *s);
void spawn_abort(struct spawned *s);
int spawn_reap(struct spawned *s, bool block, int *ret_status);
