// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The recipe that turns a new instance into what a session asked for
 * (instance_configure()): sub-buffer and ring size, clock, the processes
 * it follows, stack traces, events and their filters, what the top level
 * sends it, a function tracer (-p, -l, -n, -g, --max-graph-depth,
 * --func-stack), trace options (-O), the CPUs it traces (-M), and ftraced's
 * own threads left out. Kernels differ most here, so every refusal says
 * what was refused and what this kernel offers instead.
 *
 * Only calls down, into instance.c's setters and file access. Main thread,
 * while the instance is set up (tracing off).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <signal.h>

#include <tracefs.h>

#include "daemon/kernel/event-list.h"
#include "daemon/kernel/instance-internal.h"
#include "daemon/base/log.h"
#include "ftraced/proto.h"

/* Says what the kernel did not accept in a filter, from its error_log line if any. */
static void filter_error(const struct event_id *e, const char *kernel_error, int r, char *error,
			 size_t n_error)
{
	const char *msg = strerror(-r);

	if (kernel_error) {
		/* error_log lines start with a timestamp: keep what follows. */
		msg = strchr(kernel_error, ']');
		msg = msg ? msg + 1 : kernel_error;
		msg += strspn(msg, " ");
	}
	snprintf(error, n_error, "filter rejected by the kernel for %s:%s: %s", e->system,
		 e->event, msg);
}

/*
 * -R: each event's trigger, in its own events/SYSTEM/EVENT/trigger of the
 * session's instance (the kernel drops them with the instance). A trigger
 * the kernel rejects is refused with its error_log's words.
 */
static int set_triggers(struct instance *i, const struct event_list *events, char *error,
			size_t n_error)
{
	for (size_t k = 0; k < events->n; k++) {
		const struct event_id *e = &events->events[k];
		_cleanup_free_ char *log = NULL;
		const char *msg;
		int r;

		if (!e->trigger)
			continue;
		if (strcmp(e->system, "ftrace") == 0) {
			snprintf(error, n_error, "-R '%s': ftrace:%s has no trigger file (ftrace:* "
				 "events take none)", e->trigger, e->event);
			return -EOPNOTSUPP;
		}
		errno = 0;
		if (tracefs_event_file_write(i->tfs, e->system, e->event, "trigger",
					     e->trigger) >= 0)
			continue;
		r = errno ? -errno : -EINVAL;
		i->kernel_refused = r == -EPERM || r == -EACCES;
		log = tracefs_error_last(i->tfs);
		msg = log && strchr(log, ']') ? strchr(log, ']') + 1 : strerror(-r);
		msg += strspn(msg, " ");
		snprintf(error, n_error, "-R '%s' rejected by the kernel for %s:%s: %.*s",
			 e->trigger, e->system, e->event, (int)strcspn(msg, "\n"), msg);
		return r;
	}
	return 0;
}

/* The setup's pids as set_event_pid and set_ftrace_pid take them: "1 2 3". */
static void pid_list(const struct instance_setup *p, char list[static INSTANCE_PID_LIST_MAX])
{
	size_t len = 0;

	list[0] = '\0';
	for (unsigned k = 0; k < p->n_pids; k++)
		len += (size_t)snprintf(list + len, INSTANCE_PID_LIST_MAX - len, "%s%u",
					k ? " " : "", p->pids[k]);
}

/* Events of these processes only (and, with event-fork, of their children). */
static int set_event_pids(struct instance *i, const struct instance_setup *p, char *error,
			  size_t n_error)
{
	char list[INSTANCE_PID_LIST_MAX];
	int r;

	for (unsigned k = 0; k < p->n_pids; k++) {
		/* A pid nobody has would scope the session to nothing, silently. */
		if (kill((pid_t)p->pids[k], 0) < 0 && errno == ESRCH) {
			snprintf(error, n_error, "no process %u", p->pids[k]);
			return -ESRCH;
		}
	}
	pid_list(p, list);
	r = instance_write_file(i, "set_event_pid", list);
	if (r >= 0 && p->follow_fork)
		r = instance_write_file(i, "options/event-fork", "1");
	if (r < 0)
		snprintf(error, n_error, "cannot scope the session to processes %s: %s", list,
			 strerror(-r));
	return r;
}

/*
 * Whether the top level has options/@name: the kernel's, so looked at once
 * (libtracefs finds the top level by reading /proc/mounts at each call).
 */
static bool top_level_option_exists(const char *name)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "options/%s", name);
	return tracefs_file_exists(NULL, rel);
}

/*
 * Does this kernel copy top-level trace_marker writes into instances that
 * ask (options/copy_trace_marker; 6.18 has it, 6.1 not)? Without it only
 * writes to the session's own trace_marker reach it.
 */
static bool instance_gets_top_level_markers(void)
{
	static int has = -1;

	if (has < 0)
		has = top_level_option_exists("copy_trace_marker");
	return has;
}

/* Can trace_printk() be sent to an instance (options/trace_printk_dest)? */
bool instance_gets_trace_printk(void)
{
	static int has = -1;

	if (has < 0)
		has = top_level_option_exists("trace_printk_dest");
	return has;
}

/*
 * What is written to the top-level buffer and the session asked for:
 * trace_marker writes (ftrace:print) are copied in where the kernel can;
 * trace_printk() (ftrace:bprint) is sent here instead of the top level, as
 * trace_printk_dest does (one instance at a time: the last to ask).
 */
static int top_level_writes(struct instance *i, const struct event_list *events, char *error,
			    size_t n_error)
{
	/* The top level has its markers and trace_printk() by itself. */
	if (i->top_level)
		return 0;
	for (size_t k = 0; k < events->n; k++) {
		const struct event_id *e = &events->events[k];
		const char *option = NULL;
		int r;

		if (strcmp(e->system, "ftrace") != 0)
			continue;
		if (strcmp(e->event, "print") == 0 && instance_gets_top_level_markers())
			option = "options/copy_trace_marker";
		else if (strcmp(e->event, "bprint") == 0)
			option = "options/trace_printk_dest";
		if (!option)
			continue;
		r = instance_write_file(i, option, "1");
		if (r < 0) {
			snprintf(error, n_error, "cannot set %s for %s:%s: %s", option, e->system,
				 e->event, strerror(-r));
			return r;
		}
	}
	return 0;
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

	if (here && instance_word_in(here, name))
		return 0;
	i->kernel_refused = true;
	top = first_line(NULL, "available_tracers");
	if (top && instance_word_in(top, name))
		snprintf(error, n_error, "this kernel runs the %s tracer only in the top-level "
			 "buffer, not in a tracefs instance like the session's (instances offer: "
			 "%s): add --top-level to lease the top level (root)", name, here ?: "?");
	else
		snprintf(error, n_error, "this kernel has no %s tracer (available: %s)", name,
			 top ?: "?");
	return -EOPNOTSUPP;
}

/*
 * Why the kernel refused a tracer file, in words; marked as the kernel's,
 * so that an EPERM from tracefs does not read as ftraced's own refusal.
 */
static void refused(struct instance *i, const char *what, int r, char *error, size_t n_error)
{
	i->kernel_refused = true;
	if (r == -EPERM || r == -EACCES)
		snprintf(error, n_error, "this kernel refuses %s (%s): function tracing is not "
			 "permitted on this system (kernel lockdown, see kernel_lockdown(7), or "
			 "ftrace_enabled=0)", what, strerror(-r));
	else
		snprintf(error, n_error, "this kernel refuses %s: %s", what, strerror(-r));
}

/**
 * instance_kernel_refused() - was the last instance_configure() failure the kernel's?
 * @i: instance
 *
 * Return: true if the kernel refused a write, or lacks the tracer or file asked for.
 */
bool instance_kernel_refused(const struct instance *i)
{
	return i->kernel_refused;
}

/* libtracefs's filter calls for -l (set_ftrace_filter) or -n (set_ftrace_notrace). */
static int function_list_add(struct instance *i, bool notrace, const char *glob,
			     const char *mod, int flags)
{
	return notrace ? tracefs_function_notrace(i->tfs, glob, mod, flags) :
			 tracefs_function_filter(i->tfs, glob, mod, flags);
}

/* A -l or -n glob refused: no such function, or the kernel's refusal. */
static int function_refused(struct instance *i, bool notrace, const char *glob, int r,
			    char *error, size_t n_error)
{
	char what[FTRACED_FUNCTION_MAX + 64];

	snprintf(what, sizeof(what), "%s '%s'", notrace ? "-n" : "-l", glob);
	if (r == -EINVAL || r == -ENOENT) {
		snprintf(error, n_error, "%s matches no function this kernel can trace "
			 "(see available_filter_functions)", what);
		return -EINVAL;
	}
	refused(i, what, r, error, n_error);
	return r;
}

/*
 * A module command the kernel took without a match (a module not loaded, or
 * none of its functions traceable) leaves the filter empty, which traces
 * every function: refused instead, naming the glob. The file then lists no
 * function: only "#### all functions enabled ####", or (6.1, in an
 * instance) the command cached for when the module loads, "*:mod:NAME".
 */
static int check_filter_took(struct instance *i, char **globs, unsigned n, char *error,
			     size_t n_error)
{
	_cleanup_free_ char *text = NULL;
	const char *mod = NULL;

	for (unsigned k = 0; k < n && !mod; k++)
		if (strstr(globs[k], ":mod:"))
			mod = globs[k];
	if (!mod)
		return 0;
	text = tracefs_instance_file_read(i->tfs, "set_ftrace_filter", NULL);
	for (const char *line = text ?: "", *end; *line; line = *end ? end + 1 : end) {
		end = line + strcspn(line, "\n");
		if (end > line && line[0] != '#' && !memmem(line, (size_t)(end - line), ":mod:", 5))
			return 0; /* a function */
	}
	snprintf(error, n_error, "-l '%s' matches no function this kernel can trace (is the "
		 "module loaded?): it would trace every function", mod);
	return -EINVAL;
}

/*
 * -l and -n: each glob through libtracefs, all committed at once. A glob
 * "NAME:mod:MODULE" (trace-cmd's and the kernel's syntax, --module's) goes
 * to the kernel as written, after them: the kernel parses the module
 * command itself, where libtracefs's own match of '*:mod:crc7' found no
 * function on Debian 12's 6.1 with crc7 loaded. The first of those
 * truncates the file when no plain glob reset it.
 */
static int set_functions(struct instance *i, bool notrace, char **globs, unsigned n,
			 char *error, size_t n_error)
{
	const char *file = notrace ? "set_ftrace_notrace" : "set_ftrace_filter";
	unsigned n_plain = 0, done = 0;
	int r;

	for (unsigned k = 0; k < n; k++)
		n_plain += !strstr(globs[k], ":mod:");
	for (unsigned k = 0; k < n; k++) {
		int flags = (done == 0 ? TRACEFS_FL_RESET : 0) |
			    (done + 1 < n_plain ? TRACEFS_FL_CONTINUE : 0);

		if (strstr(globs[k], ":mod:"))
			continue;
		done++;
		errno = 0;
		if (function_list_add(i, notrace, globs[k], NULL, flags) != 0) {
			r = errno ? -errno : -EINVAL;
			/*
			 * libtracefs keeps the file open between globs (CONTINUE): left
			 * open, our own fd would keep the instance from being removed.
			 */
			function_list_add(i, notrace, NULL, NULL, 0);
			return function_refused(i, notrace, globs[k], r, error, n_error);
		}
	}
	for (unsigned k = 0; k < n; k++) {
		if (!strstr(globs[k], ":mod:"))
			continue;
		errno = 0;
		r = done++ == 0 ? tracefs_instance_file_write(i->tfs, file, globs[k]) :
				  tracefs_instance_file_append(i->tfs, file, globs[k]);
		if (r < 0)
			return function_refused(i, notrace, globs[k], errno ? -errno : -EINVAL,
						error, n_error);
	}
	return notrace ? 0 : check_filter_took(i, globs, n, error, n_error);
}

/* -g: function_graph's roots, in the instance's own set_graph_function. */
static int set_graph_roots(struct instance *i, const struct tracer_config *t, char *error,
			   size_t n_error)
{
	if (t->n_graph == 0 && t->max_graph_depth == 0)
		return 0;
	if (t->n_graph > 0 && !tracefs_file_exists(i->tfs, "set_graph_function")) {
		i->kernel_refused = true;
		snprintf(error, n_error, "this kernel has no set_graph_function in instances: -g "
			 "cannot be applied to the session's own instance; add --top-level to lease "
			 "the top level (root)");
		return -EOPNOTSUPP;
	}
	for (unsigned k = 0; k < t->n_graph; k++) {
		if (tracefs_instance_file_append(i->tfs, "set_graph_function", t->graph[k]) < 0) {
			int r = errno ? -errno : -EINVAL;

			if (r == -EINVAL)
				snprintf(error, n_error, "-g '%s' matches no function this kernel can "
					 "trace", t->graph[k]);
			else
				refused(i, "-g", r, error, n_error);
			return r;
		}
	}
	if (t->max_graph_depth > 0) {
		char v[16];
		int r;

		if (!tracefs_file_exists(i->tfs, "max_graph_depth")) {
			i->kernel_refused = true;
			snprintf(error, n_error, "this kernel has no max_graph_depth in instances: "
				 "--max-graph-depth cannot be applied to the session's own instance; "
				 "add --top-level to lease the top level (root)");
			return -EOPNOTSUPP;
		}
		snprintf(v, sizeof(v), "%u", t->max_graph_depth);
		r = instance_write_file(i, "max_graph_depth", v);
		if (r < 0) {
			refused(i, "--max-graph-depth", r, error, n_error);
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

	pid_list(p, list);
	r = instance_write_file(i, "set_ftrace_pid", list);
	if (r >= 0 && p->follow_fork)
		r = instance_write_file(i, "options/function-fork", "1");
	if (r < 0)
		refused(i, "set_ftrace_pid", r, error, n_error);
	return r;
}

/*
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
static int set_tracer(struct instance *i, const struct instance_setup *p, char *error,
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
		refused(i, what, r, error, n_error);
		return r;
	}
	if (t->func_stack) {
		r = instance_write_file(i, "options/func_stack_trace", "1");
		if (r < 0) {
			refused(i, "--func-stack (options/func_stack_trace)", r, error, n_error);
			return r;
		}
	}
	log_debug("Instance '%s': %s tracer set", i->name, t->name);
	return 0;
}

/*
 * Options ftraced sets itself from its own options: -O would fight them,
 * so the refusal names the option to use instead.
 */
static const struct {
	const char *name;
	const char *instead;
} managed_options[] = {
	{ "overwrite", "--flight-backend kernel" },
	{ "stacktrace", "-T" },
	{ "event-fork", "-c" },
	{ "function-fork", "-c" },
	{ "func_stack_trace", "--func-stack" },
	{ "copy_trace_marker", "-e ftrace:print" },
	{ "trace_printk_dest", "-e ftrace:bprint" },
};

/* The instance's options/ directory, as "a, b, c", for a refusal. */
static void option_names(struct instance *i, char *buf, size_t n)
{
	_cleanup_free_ char *dir = tracefs_instance_get_file(i->tfs, "options");
	size_t used = 0;
	struct dirent *de;
	DIR *d = dir ? opendir(dir) : NULL;

	buf[0] = '\0';
	while (d && (de = readdir(d)) && used < n)
		if (de->d_name[0] != '.')
			used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? ", " : "",
						 de->d_name);
	if (d)
		closedir(d);
}

/*
 * -O NAME or noNAME: a file the kernel lists in the instance's options/
 * (checked there, so no client text reaches a path otherwise), set to 1
 * or 0. Tracer options exist once the tracer is set: this comes after it.
 */
static int set_options(struct instance *i, const struct instance_setup *p, char *error,
		       size_t n_error)
{
	for (unsigned k = 0; k < p->n_options; k++) {
		const char *name = p->options[k], *value = "1";
		char rel[FTRACED_OPTION_MAX + 16], names[2048];
		bool exists;
		int r;

		snprintf(rel, sizeof(rel), "options/%s", name);
		exists = !strchr(name, '/') && tracefs_file_exists(i->tfs, rel);
		if (!exists && strncmp(name, "no", 2) == 0) {
			snprintf(rel, sizeof(rel), "options/%s", name + 2);
			if (!strchr(name, '/') && tracefs_file_exists(i->tfs, rel)) {
				name += 2;
				value = "0";
				exists = true;
			}
		}
		for (size_t m = 0; m < ELEMENTSOF(managed_options); m++)
			if (strcmp(name, managed_options[m].name) == 0) {
				snprintf(error, n_error, "-O %s: ftraced sets '%s' itself; use %s",
					 p->options[k], name, managed_options[m].instead);
				return -EINVAL;
			}
		if (!exists) {
			option_names(i, names, sizeof(names));
			snprintf(error, n_error, "unknown trace option '%s' (this kernel's, in an "
				 "instance: %s)", name, names);
			return -ENOENT;
		}
		r = instance_write_file(i, rel, value);
		if (r < 0) {
			snprintf(error, n_error, "cannot %s trace option '%s': %s",
				 value[0] == '1' ? "set" : "clear", name, strerror(-r));
			return r;
		}
	}
	return 0;
}

/* -M: the CPUs whose events are recorded; a mask of none records nothing, silently. */
static int set_cpumask(struct instance *i, const char *mask, char *error, size_t n_error)
{
	int r;

	if (!mask[strspn(mask, "0,")]) {
		snprintf(error, n_error, "CPU mask '%s' selects no CPU", mask);
		return -EINVAL;
	}
	r = instance_write_file(i, "tracing_cpumask", mask);
	if (r < 0)
		snprintf(error, n_error, "CPU mask '%s' refused by the kernel (tracing_cpumask): %s",
			 mask, strerror(-r));
	return r;
}

/*
 * ftraced's own threads are left out of the session's events and function
 * trace, as trace-cmd leaves its recorders out (its --no-filter keeps
 * them). With event-fork and function-fork the threads they start later
 * are left out too; both are off where the session follows processes of
 * its own (-P), which already leaves ftraced out. A kernel without the
 * notrace pid files (before 5.9) keeps them, and says so at debug level.
 */
static int exclude_own_threads(struct instance *i, const struct instance_setup *p, char *error,
			       size_t n_error)
{
	_cleanup_free_ char *list = NULL;
	size_t n = (size_t)p->n_exclude_pids * 12 + 1, len = 0;
	bool tracer = p->tracer && p->tracer->name;
	int r;

	if (p->n_exclude_pids == 0 || p->n_pids > 0)
		return 0;
	if (!tracefs_file_exists(i->tfs, "set_event_notrace_pid")) {
		log_debug("This kernel has no set_event_notrace_pid: ftraced's own threads stay in "
			  "the trace");
		return 0;
	}
	list = malloc(n);
	if (!list)
		return -ENOMEM;
	list[0] = '\0';
	for (unsigned k = 0; k < p->n_exclude_pids; k++)
		len += (size_t)snprintf(list + len, n - len, "%s%u", k ? " " : "",
					p->exclude_pids[k]);
	r = instance_write_file(i, "set_event_notrace_pid", list);
	if (r >= 0)
		r = instance_write_file(i, "options/event-fork", "1");
	if (r >= 0 && tracer && tracefs_file_exists(i->tfs, "set_ftrace_notrace_pid")) {
		r = instance_write_file(i, "set_ftrace_notrace_pid", list);
		if (r >= 0 && tracefs_file_exists(i->tfs, "options/function-fork"))
			r = instance_write_file(i, "options/function-fork", "1");
	}
	if (r < 0)
		snprintf(error, n_error, "cannot leave ftraced's own threads out of the trace "
			 "(set_event_notrace_pid; --no-filter keeps them): %s", strerror(-r));
	return r;
}

/**
 * instance_configure() - a new instance as a session asks for it.
 * @i: the instance, tracing off
 * @p: buffer (0: left for ring_alloc_start()) and sub-buffer size (or preference), clock,
 *     events and their filter
 * @error: receives a message for the client on failure, naming what the kernel refused
 * @n_error: its size
 *
 * Return: 0, or -errno with @error set (-EOPNOTSUPP: the kernel cannot do
 * what was asked, such as change the sub-buffer size or filter ftrace:*).
 */
int instance_configure(struct instance *i, const struct instance_setup *p, char *error,
		       size_t n_error)
{
	int r;

	i->kernel_refused = false;
	if (p->subbuf_kb == 0 && p->subbuf_kb_preferred > 0) {
		/* Only a preference: an older kernel, or no free pages that large, keep its own. */
		r = instance_set_subbuf(i, p->subbuf_kb_preferred);
		if (r < 0 && r != -EOPNOTSUPP)
			log_debug("Sub-buffers of %u KiB refused (%s): the kernel's default kept",
				  p->subbuf_kb_preferred, strerror(-r));
	}
	r = p->subbuf_kb > 0 ? instance_set_subbuf(i, p->subbuf_kb) : 0;
	if (r == -EOPNOTSUPP) {
		snprintf(error, n_error, "this kernel cannot change the sub-buffer size");
		return r;
	}
	if (r < 0) {
		snprintf(error, n_error, "cannot set sub-buffer size %u KiB: %s", p->subbuf_kb,
			 strerror(-r));
		return r;
	}
	r = p->buffer_kb > 0 ? instance_set_buffer_size(i, p->buffer_kb) : 0;
	if (r < 0) {
		snprintf(error, n_error, "cannot set buffer size %u KiB (sub-buffer %u KiB): %s",
			 p->buffer_kb, p->subbuf_kb, strerror(-r));
		return r;
	}
	if (p->clock) {
		r = instance_set_clock(i, p->clock);
		if (r < 0) {
			_cleanup_free_ char *list = NULL;

			instance_read(i, "trace_clock", &list, NULL);
			if (list)
				list[strcspn(list, "\n")] = '\0';
			snprintf(error, n_error, "unknown clock '%s' (available: %s)", p->clock,
				 list ?: "?");
			return r;
		}
	}
	if (p->n_pids > 0) {
		r = set_event_pids(i, p, error, n_error);
		if (r < 0)
			return r;
	}
	if (p->stacktrace) {
		r = instance_write_file(i, "options/stacktrace", "1");
		if (r < 0) {
			snprintf(error, n_error, "cannot turn on stack traces (options/stacktrace): %s",
				 strerror(-r));
			return r;
		}
	}
	for (size_t k = 0; k < p->events->n; k++) {
		const struct event_id *e = &p->events->events[k];
		_cleanup_free_ char *kernel_error = NULL, *both = NULL;
		const char *filter = e->filter ?: p->filter;

		/* --filter for every event and -f for this one: both must hold. */
		if (e->filter && p->filter) {
			if (asprintf(&both, "(%s) && (%s)", p->filter, e->filter) < 0) {
				snprintf(error, n_error, "out of memory");
				return -ENOMEM;
			}
			filter = both;
		}
		r = instance_enable_event(i, e, filter, &kernel_error);
		if (r == -EOPNOTSUPP) {
			snprintf(error, n_error, "%s:%s cannot be filtered (ftrace:* events have no "
				 "filter)", e->system, e->event);
			return r;
		}
		if (r < 0 && filter) {
			filter_error(e, kernel_error, r, error, n_error);
			return r;
		}
		if (r < 0) {
			snprintf(error, n_error, "cannot enable %s:%s: %s", e->system, e->event,
				 strerror(-r));
			return r;
		}
	}
	r = set_triggers(i, p->events, error, n_error);
	if (r >= 0)
		r = top_level_writes(i, p->events, error, n_error);
	if (r >= 0)
		r = set_tracer(i, p, error, n_error);
	if (r >= 0)
		r = set_options(i, p, error, n_error);
	if (r >= 0 && p->cpumask)
		r = set_cpumask(i, p->cpumask, error, n_error);
	if (r >= 0)
		r = exclude_own_threads(i, p, error, n_error);
	return r;
}

