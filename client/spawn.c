// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * record -- CMD ARGS: the command is forked before the request, so that
 * its pid can scope the session (-F), and held on a pipe until the daemon
 * says tracing is on: nothing it does is missed. It runs as the user who
 * runs ftracectl (or, run by root, as --user's), with ftracectl's
 * environment, terminal and cwd.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client/spawn.h"
#include "ftraced/macro.h"

/**
 * spawn_find() - can @command be run, as execvp() would look for it?
 * @command: a path (with a '/') or a name searched in $PATH
 *
 * Checked before a record starts, so that a typo is not traced.
 *
 * Return: 0, or -errno (-ENOENT: not found, -EACCES: not executable).
 */
int spawn_find(const char *command)
{
	const char *path = getenv("PATH");
	char candidate[PATH_MAX];
	int r = -ENOENT;

	if (!*command)
		return -ENOENT;
	if (strchr(command, '/'))
		return access(command, X_OK) == 0 ? 0 : -errno;
	if (!path)
		path = "/usr/local/bin:/bin:/usr/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		/* An empty entry is the current directory, as for execvp(). */
		if ((size_t)snprintf(candidate, sizeof(candidate), "%.*s%s%s", (int)n, path,
				     n ? "/" : "", command) < sizeof(candidate)) {
			if (access(candidate, X_OK) == 0)
				return 0;
			if (errno == EACCES)
				r = -EACCES;
		}
		path += n;
		if (*path == ':')
			path++;
	}
	return r;
}

/**
 * spawn_user_find() - look up --user's @name (or a number, a uid).
 * @name: as given
 * @ret: its uid, primary gid and name
 *
 * Return: 0, -ENOENT if there is no such user, or -errno.
 */
int spawn_user_find(const char *name, struct spawn_user *ret)
{
	struct passwd *pw;
	char *end;

	errno = 0;
	pw = getpwnam(name);
	if (!pw && errno == 0 && *name) {
		unsigned long uid = strtoul(name, &end, 10);

		if (!*end && uid < (uid_t)-1)
			pw = getpwuid((uid_t)uid);
	}
	if (!pw)
		return errno ? -errno : -ENOENT;
	/* The name, for initgroups(): getpw*()'s buffer is reused by the next call. */
	if (strlen(pw->pw_name) > SPAWN_USER_NAME_MAX)
		return -ENAMETOOLONG;
	*ret = (struct spawn_user){ .uid = pw->pw_uid, .gid = pw->pw_gid };
	strcpy(ret->name, pw->pw_name);
	return 0;
}

/*
 * In the child, before exec: become @u, groups first (they need root),
 * then the gid, then the uid, so that none of root's stays.
 */
static int drop_to_user(const struct spawn_user *u)
{
	if (!u || !u->name[0])
		return 0;
	if (initgroups(u->name, u->gid) < 0 || setresgid(u->gid, u->gid, u->gid) < 0 ||
	    setresuid(u->uid, u->uid, u->uid) < 0)
		return -errno;
	return 0;
}

/**
 * spawn_held() - fork @argv's command, stopped before exec until spawn_release().
 * @argv: the command and its arguments (PATH is searched)
 * @user: who it runs as (NULL or no name: as ftracectl)
 * @ret: the child
 *
 * Return: 0 or -errno.
 */
int spawn_held(char *const argv[], const struct spawn_user *user, struct spawned *ret)
{
	int go[2], result[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(result, O_CLOEXEC) < 0) {
		int r = -errno;

		close(go[0]);
		close(go[1]);
		return r;
	}
	pid = fork();
	if (pid < 0) {
		int r = -errno;

		close(go[0]);
		close(go[1]);
		close(result[0]);
		close(result[1]);
		return r;
	}
	if (pid == 0) {
		int e;
		char c;

		close(go[1]);
		close(result[0]);
		/* EOF instead of the go byte: the record never started. */
		if (read(go[0], &c, 1) != 1)
			_exit(SPAWN_CANNOT_RUN);
		close(go[0]);
		e = -drop_to_user(user);
		if (e == 0) {
			execvp(argv[0], argv);
			e = errno;
		}
		/* The close-on-exec pipe says "it runs" by closing; this says why it does not. */
		(void)!write(result[1], &e, sizeof(e));
		_exit(SPAWN_CANNOT_RUN);
	}
	close(go[0]);
	close(result[1]);
	*ret = (struct spawned){ .pid = pid, .go_fd = go[1], .exec_fd = result[0] };
	return 0;
}

/**
 * spawn_exec_result() - after spawn_release(): did the command start?
 * @s: the child
 *
 * Return: 0 once it runs, or the -errno its exec failed with.
 */
int spawn_exec_result(struct spawned *s)
{
	ssize_t n;
	int e = 0;

	if (s->exec_fd < 0)
		return 0;
	do
		n = read(s->exec_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	s->exec_fd = safe_close(s->exec_fd);
	return n == (ssize_t)sizeof(e) && e > 0 ? -e : 0;
}

/**
 * spawn_exit_status() - the status a shell would give for @wait_status.
 * @wait_status: from waitpid()
 *
 * Return: the exit code, or 128 + the signal that killed it.
 */
int spawn_exit_status(int wait_status)
{
	if (WIFEXITED(wait_status))
		return WEXITSTATUS(wait_status);
	if (WIFSIGNALED(wait_status))
		return 128 + WTERMSIG(wait_status);
	return SPAWN_CANNOT_RUN;
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
	s->exec_fd = safe_close(s->exec_fd);
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

	/*
	 * Traced (--proc-map): its stops are passed on, not taken for its end;
	 * held at its exit, it is let go and waited for.
	 */
	while (s->traced && !s->reaped) {
		siginfo_t info;

		spawn_child_event(s);
		if (s->reaped)
			break;
		if (s->at_exit)
			spawn_let_exit(s);
		else if (!block)
			return -EAGAIN;
		if (waitid(P_PID, s->pid, &info, WEXITED | WSTOPPED | WNOWAIT | __WALL) < 0 &&
		    errno != EINTR)
			return -errno;
	}
	if (s->reaped) {
		*ret_status = s->status;
		return 0;
	}

	while ((r = waitpid(s->pid, ret_status, block ? 0 : WNOHANG)) < 0)
		if (errno != EINTR)
			return -errno;
	return r == 0 ? -EAGAIN : 0;
}

/**
 * spawn_hold_at_exit() - --proc-map: stop the command at its exit, its memory still mapped.
 * @s: the child, still held before exec
 *
 * ptrace (as trace-cmd record --proc-map does): the child is seized, with
 * only the exit reported, so that its maps can be read once it is done.
 * Every signal it gets is passed on (spawn_child_event()).
 *
 * Return: 0, or -errno (e.g. -EPERM where ptrace is not allowed).
 */
int spawn_hold_at_exit(struct spawned *s)
{
	if (ptrace(PTRACE_SEIZE, s->pid, NULL, (void *)(long)PTRACE_O_TRACEEXIT) < 0)
		return -errno;
	s->traced = true;
	return 0;
}

/**
 * spawn_child_event() - after a SIGCHLD: what the traced command did.
 * @s: the child
 *
 * A signal it was sent is passed on, a job-control stop kept; its exit is
 * held (.at_exit) or, if it is gone, its status kept (.reaped).
 *
 * Return: true once it is at its exit or gone: the record stops then.
 */
bool spawn_child_event(struct spawned *s)
{
	int status;
	pid_t r;

	while (!s->reaped && (r = waitpid(s->pid, &status, WNOHANG | __WALL)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			/* Not ours any more (reaped elsewhere): ended, as far as we know. */
			s->reaped = true;
			s->status = 0;
			break;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			s->reaped = true;
			s->status = status;
			s->at_exit = false;
			break;
		}
		if (!WIFSTOPPED(status))
			continue;
		if (status >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8)))
			s->at_exit = true;
		else if (status >> 16 == PTRACE_EVENT_STOP)
			(void)ptrace(PTRACE_LISTEN, s->pid, NULL, NULL); /* stopped, as asked */
		else
			(void)ptrace(PTRACE_CONT, s->pid, NULL, (void *)(long)WSTOPSIG(status));
	}
	return s->at_exit || s->reaped;
}

/* Its maps are read (or not wanted): it may finish exiting. */
void spawn_let_exit(struct spawned *s)
{
	if (!s->at_exit)
		return;
	(void)ptrace(PTRACE_DETACH, s->pid, NULL, NULL);
	s->at_exit = false;
}
