// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * record -- CMD ARGS: the command is forked before the request, so that
 * its pid can scope the session (-F), and held on a pipe until the daemon
 * says tracing is on: nothing it does is missed. It runs as the user who
 * runs ftracectl, with ftracectl's environment, terminal and cwd.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client/spawn.h"
#include "ftraced/macro.h"

/**
 * spawn_held() - fork @argv's command, stopped before exec until spawn_release().
 * @argv: the command and its arguments (PATH is searched)
 * @ret: the child
 *
 * Return: 0 or -errno.
 */
int spawn_held(char *const argv[], struct spawned *ret)
{
	int go[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int r = -errno;

		close(go[0]);
		close(go[1]);
		return r;
	}
	if (pid == 0) {
		char c;

		close(go[1]);
		/* EOF instead of the go byte: the record never started. */
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		close(go[0]);
		execvp(argv[0], argv);
		fprintf(stderr, "ftracectl record: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(go[0]);
	*ret = (struct spawned){ .pid = pid, .go_fd = go[1] };
	return 0;
}

/* Tracing is on: let the command run. */
int spawn_release(struct spawned *s)
{
	int r = write(s->go_fd, "g", 1) == 1 ? 0 : -errno;

	s->go_fd = safe_close(s->go_fd);
	return r;
}

/* The record failed: the command exits without running, and is reaped. */
void spawn_abort(struct spawned *s)
{
	int status;

	s->go_fd = safe_close(s->go_fd);
	spawn_reap(s, true, &status);
}

/**
 * spawn_reap() - the command's end.
 * @s: the child
 * @block: wait for it; else only look
 * @ret_status: its wait status
 *
 * Return: 0 once it ended, -EAGAIN if it still runs (not blocking), or -errno.
 */
int spawn_reap(struct spawned *s, bool block, int *ret_status)
{
	pid_t r;

	while ((r = waitpid(s->pid, ret_status, block ? 0 : WNOHANG)) < 0)
		if (errno != EINTR)
			return -errno;
	return r == 0 ? -EAGAIN : 0;
}
