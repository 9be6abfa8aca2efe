// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A function tracer in a session's own instance (-p function or
 * function_graph, with -l, -n, -g, --max-graph-depth, --func-stack): the
 * instance's share of tracefs state that only a tracer has. Kernels differ
 * most here, so every refusal says what this kernel offers instead.
 * Main thread, while the instance is set up (tracing off).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/instance-internal.h"
#include "daemon/log.h"
#include "ftraced/proto.h"

/* Is @name a word of the space-separated @list? */
static bool word_in(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && *p; p += strcspn(p, " \n"), p += strspn(p, " \n"))
		if (strncmp(p, name, n) == 0 && (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
			return true;
	return false;
}

/* The first line of a tracefs file, for messages; "?" when unreadable. */
static char *first_line(struct tracefs_instance *tfs, const char *file)
{
	char *text = tracefs_instance_file_read(tfs, file, NULL);

	if (!text)
		return strdup("?");
	text[strcspn(text, "\n")] = '\0';
	return text;
}

static int check_available(struct instance *i, const char *name, char *error, size_t n_error)
{
	_cleanup_free_ char *here = first_line(i->tfs, "available_tracers");
	_cleanup_free_ char *top = NULL;

	if (here && word_in(here, name))
		return 0;
	top = first_line(NULL, "available_tracers");
	if (top && word_in(top, name))
		snprintf(error, n_error, "this kernel runs the %s tracer only in the top-level "
			 "buffer, not in a tracefs instance like the session's (instances offer: %s)",
			 name, here ?: "?");
	else
		snprintf(error, n_error, "this kernel has no %s tracer (available: %s)", name,
			 top ?: "?");
	return -EOPNOTSUPP;
}

/* Why the kernel refused a tracer file, in words. */
static void refused(const char *what, int r, char *error, size_t n_error)
{
	if (r == -EPERM || r == -EACCES)
		snprintf(error, n_error, "the kernel refuses %s (%s): function tracing is not "
			 "permitted on this system (kernel lockdown, see kernel_lockdown(7), or "
			 "ftrace_enabled=0)", what, strerror(-r));
	else
		snprintf(error, n_error, "the kernel refuses %s: %s", what, strerror(-r));
}

/* libtracefs's filter calls for -l (set_ftrace_filter) or -n (set_ftrace_notrace). */
static int function_list_add(struct instance *i, bool notrace, const char *glob,
			     const char *mod, int flags)
{
	return notrace ? tracefs_function_notrace(i->tfs, glob, mod, flags) :
			 tracefs_function_filter(i->tfs, glob, mod, flags);
}

/*
 * -l and -n: each glob through libtracefs, all committed at once. A glob
 * "NAME:mod:MODULE" (trace-cmd's and the kernel's syntax) limits to a module.
 */
static int set_functions(struct instance *i, bool notrace, char **globs, unsigned n,
			 char *error, size_t n_error)
{
	for (unsigned k = 0; k < n; k++) {
		char glob[FTRACED_FUNCTION_MAX + 1], *mod;
		int flags = (k == 0 ? TRACEFS_FL_RESET : 0) | (k + 1 < n ? TRACEFS_FL_CONTINUE : 0);
		int r;

		snprintf(glob, sizeof(glob), "%s", globs[k]);
		mod = strstr(glob, ":mod:");
		if (mod) {
			*mod = '\0';
			mod += strlen(":mod:");
		}
		errno = 0;
		r = function_list_add(i, notrace, glob, mod, flags);
		if (r != 0) {
			char what[FTRACED_FUNCTION_MAX + 64];

			r = errno ? -errno : -EINVAL;
			/*
			 * libtracefs keeps the file open between globs (CONTINUE): left
			 * open, our own fd would keep the instance from being removed.
			 */
			function_list_add(i, notrace, NULL, NULL, 0);
			snprintf(what, sizeof(what), "%s '%s'", notrace ? "-n" : "-l", globs[k]);
			if (r == -EINVAL || r == -ENOENT) {
				snprintf(error, n_error, "%s matches no function this kernel can trace "
					 "(see available_filter_functions)", what);
				return -EINVAL;
			}
			refused(what, r, error, n_error);
			return r;
		}
	}
	return 0;
}

/* -g: function_graph's roots, in the instance's own set_graph_function. */
static int set_graph_roots(struct instance *i, const struct tracer_config *t, char *error,
			   size_t n_error)
{
	if (t->n_graph == 0 && t->max_graph_depth == 0)
		return 0;
	if (t->n_graph > 0 && !tracefs_file_exists(i->tfs, "set_graph_function")) {
		snprintf(error, n_error, "this kernel has no set_graph_function in instances: -g "
			 "cannot be applied to the session's own instance");
		return -EOPNOTSUPP;
	}
	for (unsigned k = 0; k < t->n_graph; k++) {
		if (tracefs_instance_file_append(i->tfs, "set_graph_function", t->graph[k]) < 0) {
			int r = errno ? -errno : -EINVAL;

			if (r == -EINVAL)
				snprintf(error, n_error, "-g '%s' matches no function this kernel can "
					 "trace", t->graph[k]);
			else
				refused("-g", r, error, n_error);
			return r;
		}
	}
	if (t->max_graph_depth > 0) {
		char v[16];
		int r;

		if (!tracefs_file_exists(i->tfs, "max_graph_depth")) {
			snprintf(error, n_error, "this kernel has no max_graph_depth in instances: "
				 "--max-graph-depth cannot be applied to the session's own instance");
			return -EOPNOTSUPP;
		}
		snprintf(v, sizeof(v), "%u", t->max_graph_depth);
		r = instance_write_file(i, "max_graph_depth", v);
		if (r < 0) {
			refused("--max-graph-depth", r, error, n_error);
			return r;
		}
	}
	return 0;
}

/* -P/-F with a tracer: function events of those processes only (and their children with -c). */
static int set_function_pids(struct instance *i, const struct instance_setup *p, char *error,
			     size_t n_error)
{
	char list[INSTANCE_PID_LIST_MAX];
	int r;

	instance_pid_list(p, list);
	r = instance_write_file(i, "set_ftrace_pid", list);
	if (r >= 0 && p->follow_fork)
		r = instance_write_file(i, "options/function-fork", "1");
	if (r < 0)
		refused("set_ftrace_pid", r, error, n_error);
	return r;
}

/**
 * instance_set_tracer() - start the session's function tracer (tracing is still off).
 * @i: instance
 * @p: the setup; its tracer, and the processes it is scoped to
 * @error: receives what the kernel refused, and what it offers instead
 * @n_error: its size
 *
 * Filters are written before the tracer: a tracer started first would
 * patch every function in the kernel for nothing.
 *
 * Return: 0 (also when no tracer is asked for), -EOPNOTSUPP when this
 * kernel cannot run it in an instance, or another -errno with @error set.
 */
int instance_set_tracer(struct instance *i, const struct instance_setup *p, char *error,
			size_t n_error)
{
	const struct tracer_config *t = p->tracer;
	char what[FTRACED_TRACER_MAX + 16];
	int r;

	if (!t || !t->name)
		return 0;
	r = check_available(i, t->name, error, n_error);
	if (r < 0)
		return r;
	r = set_functions(i, false, t->filter, t->n_filter, error, n_error);
	if (r >= 0)
		r = set_functions(i, true, t->notrace, t->n_notrace, error, n_error);
	if (r >= 0)
		r = set_graph_roots(i, t, error, n_error);
	if (r >= 0 && p->n_pids > 0)
		r = set_function_pids(i, p, error, n_error);
	if (r < 0)
		return r;
	r = instance_write_file(i, "current_tracer", t->name);
	if (r < 0) {
		snprintf(what, sizeof(what), "the %s tracer", t->name);
		refused(what, r, error, n_error);
		return r;
	}
	if (t->func_stack) {
		r = instance_write_file(i, "options/func_stack_trace", "1");
		if (r < 0) {
			refused("--func-stack (options/func_stack_trace)", r, error, n_error);
			return r;
		}
	}
	log_debug("Instance '%s': %s tracer set", i->name, t->name);
	return 0;
}
