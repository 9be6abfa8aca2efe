// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Runs a session's --on-segment command after each closed segment: the
 * program is executed directly (no shell), with the segment's path as its
 * last argument, stdin from /dev/null and its output in our log. It gets a
 * deadline, after which it is killed; a failure is logged and changes
 * nothing else. The event loop never waits for it: sd-event reaps it.
 *
 * The command line is split into words by command_split(), a small pure
 * parser: blanks separate words, 'single' and "double" quotes group them,
 * a backslash escapes the next character outside single quotes.
 *
 * Main thread only. SIGCHLD must be blocked (sd-event's child sources).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/base/bounds.h"
#include "daemon/base/log.h"
#include "daemon/output/runner.h"

struct run {
	struct runner *runner;
	struct run *next;
	sd_event_source *child;
	sd_event_source *timer;
	char *what;
};

/* The commands running for one daemon; owned by its manager. */
struct runner {
	sd_event *event;
	struct run *runs;
	unsigned n_running;
	uint64_t n_attempted;
	uint64_t n_failed; /* could not start, failed, or killed at the deadline */
};

/* Commands asked to run, and those that could not start or did not succeed. */
void runner_counts(const struct runner *rn, uint64_t *attempted, uint64_t *failed)
{
	*attempted = rn->n_attempted;
	*failed = rn->n_failed;
}

/**
 * command_split() - split a command line into words.
 * @line: the command line
 * @buf: storage for the words (NUL-terminated, pointed into by @argv)
 * @n_buf: its size; strlen(@line) + 1 always suffices
 * @argv: receives the words and a NULL after the last
 * @n_argv: its size
 *
 * Return: the number of words; -EINVAL for an unterminated quote or a
 * trailing backslash; -E2BIG if @argv or @buf is too small.
 */
int command_split(const char *line, char *buf, size_t n_buf, char **argv, size_t n_argv)
{
	size_t n = 0, o = 0;
	const char *p = line;

	for (;;) {
		char quote = 0;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		if (n + 1 >= n_argv)
			return -E2BIG;
		argv[n++] = buf + o;
		for (; *p && (quote || (*p != ' ' && *p != '\t')); p++) {
			char c = *p;

			if (!quote && (c == '\'' || c == '"')) {
				quote = c;
				continue;
			}
			if (quote && c == quote) {
				quote = 0;
				continue;
			}
			if (c == '\\' && quote != '\'') {
				if (!p[1])
					return -EINVAL;
				c = *++p;
			}
			if (o + 1 >= n_buf)
				return -E2BIG;
			buf[o++] = c;
		}
		if (quote)
			return -EINVAL;
		if (o + 1 > n_buf)
			return -E2BIG;
		buf[o++] = '\0';
	}
	if (n == 0)
		return -EINVAL;
	argv[n] = NULL;
	return (int)n;
}

static void run_free(struct run *r)
{
	for (struct run **p = &r->runner->runs; *p; p = &(*p)->next)
		if (*p == r) {
			*p = r->next;
			break;
		}
	/* The child source owns the process: freeing it while it runs kills and reaps it. */
	sd_event_source_disable_unref(r->child);
	sd_event_source_disable_unref(r->timer);
	free(r->what);
	r->runner->n_running--;
	free(r);
}

static int on_child(sd_event_source *source, const siginfo_t *si, void *userdata)
{
	struct run *r = userdata;

	if (!(si->si_code == CLD_EXITED && si->si_status == 0))
		r->runner->n_failed++;
	if (si->si_code == CLD_EXITED && si->si_status == 0)
		log_debug("%s: done", r->what);
	else if (si->si_code == CLD_EXITED)
		log_warning("%s: exited with status %d, ignoring", r->what, si->si_status);
	else
		log_warning("%s: killed by signal %d, ignoring", r->what, si->si_status);
	run_free(r);
	return 0;
}

static int on_timeout(sd_event_source *source, uint64_t usec, void *userdata)
{
	struct run *r = userdata;

	log_warning("%s: still running at its deadline, killing it", r->what);
	/* Through the child source: safe against pid reuse. */
	sd_event_source_send_child_signal(r->child, SIGKILL, NULL, 0);
	return 0;
}

/* In the child: nothing that is not async-signal-safe. */
_Noreturn static void exec_child(char **argv, const sigset_t *empty)
{
	int null = open("/dev/null", O_RDONLY);

	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		if (null != STDIN_FILENO)
			close(null);
	}
	dup2(STDERR_FILENO, STDOUT_FILENO);
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigprocmask(SIG_SETMASK, empty, NULL);
	execv(argv[0], argv);
	_exit(127);
}

/**
 * runner_new() - no command running yet.
 * @e: the event loop that reaps children and enforces deadlines
 * @ret: the runner
 *
 * Return: 0 or -ENOMEM.
 */
int runner_new(sd_event *e, struct runner **ret)
{
	struct runner *rn = calloc(1, sizeof(*rn));

	if (!rn)
		return -ENOMEM;
	rn->event = e;
	*ret = rn;
	return 0;
}

/**
 * runner_free() - kill and forget every command still running (at exit).
 * @rn: runner or NULL
 *
 * Return: NULL.
 */
struct runner *runner_free(struct runner *rn)
{
	if (!rn)
		return NULL;
	while (rn->runs)
		run_free(rn->runs);
	free(rn);
	return NULL;
}

/* runner_spawn() without the counting. */
static int spawn(struct runner *rn, const char *command, const char *path, uint64_t timeout_usec)
{
	char *argv[COMMAND_ARGS_MAX + 2], *buf;
	size_t n_buf = strlen(command) + 1;
	struct run *r;
	sigset_t empty;
	pid_t pid;
	int n, err;

	if (rn->n_running >= RUNNER_MAX)
		return -EAGAIN;
	buf = malloc(n_buf);
	r = calloc(1, sizeof(*r));
	if (!buf || !r) {
		free(buf);
		free(r);
		return -ENOMEM;
	}
	n = command_split(command, buf, n_buf, argv, COMMAND_ARGS_MAX + 1);
	if (n < 0 || argv[0][0] != '/') {
		free(buf);
		free(r);
		return n < 0 ? n : -EINVAL;
	}
	argv[n] = (char *)path;
	argv[n + 1] = NULL;
	if (asprintf(&r->what, "on-segment '%s'", argv[0]) < 0)
		r->what = NULL;
	r->runner = rn;
	r->next = rn->runs;
	rn->runs = r;
	rn->n_running++;
	sigemptyset(&empty);
	pid = fork();
	if (pid < 0) {
		err = negative_errno();
		free(buf);
		run_free(r);
		return err;
	}
	if (pid == 0)
		exec_child(argv, &empty);
	free(buf);
	err = sd_event_add_child(rn->event, &r->child, pid, WEXITED, on_child, r);
	if (err >= 0)
		err = sd_event_add_time_relative(rn->event, &r->timer, CLOCK_MONOTONIC, timeout_usec, 1000,
						 on_timeout, r);
	if (err < 0) {
		/* Not watched: do not leave it running unsupervised. */
		kill(pid, SIGKILL);
		if (!r->child)
			waitpid(pid, NULL, 0);
		run_free(r);
		return err;
	}
	sd_event_source_set_child_process_own(r->child, true);
	return 0;
}

/**
 * runner_spawn() - run @command with @path appended, without waiting for it.
 * @rn: runner
 * @command: the command line (see command_split()); the program needs a full path
 * @path: appended as the last argument
 * @timeout_usec: killed after this long
 *
 * Counted as run, and as failed when it cannot start.
 *
 * Return: 0, -EINVAL for a malformed command, -EAGAIN if too many run
 * already, or -errno.
 */
int runner_spawn(struct runner *rn, const char *command, const char *path, uint64_t timeout_usec)
{
	int r = spawn(rn, command, path, timeout_usec);

	rn->n_attempted++;
	if (r < 0)
		rn->n_failed++;
	return r;
}
