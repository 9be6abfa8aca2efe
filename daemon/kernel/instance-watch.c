// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What other processes do to a session's instance. When the session starts,
 * instance_watch_new() takes a baseline of every setting that decides what
 * is recorded and how (the clock, the CPU mask, the buffer's size, the
 * tracer, every option, the filters of the session's events and systems,
 * the pid filters) and sets an inotify watch on those files, on those that
 * switch tracing or the session's events (tracing_on, set_event, the
 * enable files) and on those that clear the buffer (trace and
 * per_cpu/cpuN/trace). instance_watch_read() then says which were written
 * and what changed since the baseline; instance_check() what tracing_on
 * and set_event say now. The session decides what to make of it
 * (session-check.c). Main thread.
 *
 * tracefs writes go through the VFS, which notifies inotify (also eventfs,
 * on 6.18), so a setting is read again only when its file was written. The
 * kernel changes the pid filters by itself (event-fork adds children, an
 * exit removes them), so those report a write by another process, not a
 * difference. Where watches cannot be set up (fs.inotify.max_user_watches
 * reached), every setting is compared on every read instead.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <tracefs.h>

#include "daemon/kernel/event-list.h"
#include "daemon/kernel/instance-internal.h"

/* Shown of a setting's value in a message: its first line, at most this long. */
#define SHOWN_VALUE_MAX 48

enum watched_kind {
	WATCHED_CONTROL, /* tracing_on, set_event, enable files: instance_check() reads them */
	WATCHED_CLEAR,   /* trace files: the CPUs' counters tell */
	WATCHED_VALUE,   /* compared with its baseline */
	WATCHED_WRITTEN, /* a write by another process is the finding */
};

struct watched {
	char *path;     /* relative to the instance */
	enum watched_kind kind;
	char *baseline; /* WATCHED_VALUE: the value the session started with */
	bool written;   /* since the last read */
};

struct instance_watch {
	struct instance *instance; /* borrowed */
	int fd;                    /* inotify, or -EBADF: compare everything on every read */
	struct watched *files;
	size_t n_files;
	size_t *by_wd;             /* watch descriptor -> index in files (+1; 0: none) */
	size_t n_by_wd;
};

static int add(struct instance_watch *w, enum watched_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Adds a file to watch, if this kernel has it; a value's baseline is read now. */
static int add(struct instance_watch *w, enum watched_kind kind, const char *fmt, ...)
{
	struct watched *f;
	char *path;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&path, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	if (!tracefs_file_exists(w->instance->tfs, path)) {
		free(path);
		return 0;
	}
	f = reallocarray(w->files, w->n_files + 1, sizeof(*w->files));
	if (!f) {
		free(path);
		return -ENOMEM;
	}
	w->files = f;
	f = &w->files[w->n_files++];
	*f = (struct watched){ .path = path, .kind = kind };
	if (kind == WATCHED_VALUE && instance_read(w->instance, path, &f->baseline, NULL) < 0)
		f->baseline = strdup("");
	return kind == WATCHED_VALUE && !f->baseline ? -ENOMEM : 0;
}

/* Every file of the options directory: each option changes what is recorded, or how. */
static int add_options(struct instance_watch *w)
{
	_cleanup_free_ char *dir = tracefs_instance_get_file(w->instance->tfs, "options");
	struct dirent *de;
	DIR *d;
	int r = 0;

	if (!dir)
		return -ENOMEM;
	d = opendir(dir);
	if (!d)
		return 0;
	while (r >= 0 && (de = readdir(d)))
		if (de->d_name[0] != '.')
			r = add(w, WATCHED_VALUE, "options/%s", de->d_name);
	closedir(d);
	return r;
}

static int add_files(struct instance_watch *w, const struct event_list *events, unsigned n_cpus,
		     bool own_snapshot)
{
	static const char *const control[] = { "tracing_on", "set_event", "events/enable" };
	static const char *const values[] = { "trace_clock", "tracing_cpumask", "buffer_size_kb",
					      "buffer_subbuf_size_kb", "current_tracer" };
	static const char *const pids[] = { "set_event_pid", "set_event_notrace_pid",
					    "set_ftrace_pid", "set_ftrace_notrace_pid" };
	int r = 0;

	for (size_t k = 0; k < ELEMENTSOF(control) && r >= 0; k++)
		r = add(w, WATCHED_CONTROL, "%s", control[k]);
	for (size_t k = 0; k < ELEMENTSOF(values) && r >= 0; k++)
		r = add(w, WATCHED_VALUE, "%s", values[k]);
	for (size_t k = 0; k < ELEMENTSOF(pids) && r >= 0; k++)
		r = add(w, WATCHED_WRITTEN, "%s", pids[k]);
	/* A swap takes the buffer away; a kernel-backend flight recorder swaps itself. */
	if (r >= 0 && !own_snapshot)
		r = add(w, WATCHED_WRITTEN, "snapshot");
	if (r >= 0)
		r = add_options(w);
	if (r >= 0)
		r = add(w, WATCHED_CLEAR, "trace");
	for (unsigned cpu = 0; cpu < n_cpus && r >= 0; cpu++)
		r = add(w, WATCHED_CLEAR, "per_cpu/cpu%u/trace", cpu);
	for (size_t k = 0; k < events->n && r >= 0; k++) {
		const struct event_id *e = &events->events[k];

		/* ftrace:* events are written, not switched on, nor filtered by us. */
		if (strcmp(e->system, "ftrace") == 0)
			continue;
		/* Sorted by system: its files once. */
		if (k == 0 || strcmp(e->system, events->events[k - 1].system) != 0) {
			r = add(w, WATCHED_CONTROL, "events/%s/enable", e->system);
			if (r >= 0)
				r = add(w, WATCHED_VALUE, "events/%s/filter", e->system);
		}
		if (r >= 0)
			r = add(w, WATCHED_CONTROL, "events/%s/%s/enable", e->system, e->event);
		if (r >= 0)
			r = add(w, WATCHED_VALUE, "events/%s/%s/filter", e->system, e->event);
	}
	return r;
}

/* The inotify watches, one per file; -errno leaves the caller comparing on every read. */
static int add_watches(struct instance_watch *w)
{
	_cleanup_close_ int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

	if (fd < 0)
		return negative_errno();
	for (size_t k = 0; k < w->n_files; k++) {
		_cleanup_free_ char *path = tracefs_instance_get_file(w->instance->tfs,
								      w->files[k].path);
		int wd = path ? inotify_add_watch(fd, path, IN_MODIFY) : -1;

		if (!path)
			return -ENOMEM;
		if (wd < 0)
			return negative_errno();
		if ((size_t)wd >= w->n_by_wd) {
			size_t n = MAX((size_t)wd + 1, 2 * w->n_by_wd);
			size_t *t = reallocarray(w->by_wd, n, sizeof(*t));

			if (!t)
				return -ENOMEM;
			memset(t + w->n_by_wd, 0, (n - w->n_by_wd) * sizeof(*t));
			w->by_wd = t;
			w->n_by_wd = n;
		}
		w->by_wd[wd] = k + 1;
	}
	w->fd = TAKE_FD(fd);
	return 0;
}

/**
 * instance_watch_free() - stop watching.
 * @w: watch or NULL
 *
 * Return: NULL.
 */
struct instance_watch *instance_watch_free(struct instance_watch *w)
{
	if (!w)
		return NULL;
	safe_close(w->fd);
	for (size_t k = 0; k < w->n_files; k++) {
		free(w->files[k].path);
		free(w->files[k].baseline);
	}
	free(w->files);
	free(w->by_wd);
	free(w);
	return NULL;
}

/**
 * instance_watch_new() - a running session's baseline, and watches on its instance.
 * @i: the session's instance, set up as the session wants it
 * @events: the session's events
 * @n_cpus: CPUs whose per_cpu/cpuN/trace is watched
 * @own_snapshot: the session swaps the snapshot buffer itself: its writes are no finding
 * @ret: the watch
 * @ret_watch_error: 0, or why there are no inotify watches (the caller then reads it
 *	every so often: -ENOSPC is fs.inotify.max_user_watches reached)
 *
 * System directories are named from @events, whose names came from the
 * kernel's own event list.
 *
 * Return: 0 or -errno (the baseline could not be taken).
 */
int instance_watch_new(struct instance *i, const struct event_list *events, unsigned n_cpus,
		       bool own_snapshot, struct instance_watch **ret, int *ret_watch_error)
{
	struct instance_watch *w = calloc(1, sizeof(*w));
	int r;

	if (!w)
		return -ENOMEM;
	w->instance = i;
	w->fd = -EBADF;
	r = add_files(w, events, n_cpus, own_snapshot);
	if (r < 0) {
		instance_watch_free(w);
		return r;
	}
	*ret_watch_error = add_watches(w);
	*ret = w;
	return 0;
}

/**
 * instance_watch_fd() - the fd to poll for writes.
 * @w: watch
 *
 * Return: an inotify fd (the watch's), or -EBADF where there are no watches.
 */
int instance_watch_fd(const struct instance_watch *w)
{
	return w->fd;
}

/* "[local] global" -> "local"; other values: their first line. */
static void shown(const char *value, char *buf, size_t n)
{
	const char *a = strchr(value, '['), *b = a ? strchr(a, ']') : NULL;

	if (a && b)
		snprintf(buf, n, "%.*s", (int)MIN((size_t)(b - a - 1), (size_t)SHOWN_VALUE_MAX), a + 1);
	else
		snprintf(buf, n, "%.*s", (int)MIN(strcspn(value, "\n"), (size_t)SHOWN_VALUE_MAX),
			 value);
}

/* Appends "what" to the findings, "; "-separated, as far as it fits. */
static void found(struct instance_changes *c, const char *what)
{
	size_t n = strlen(c->changed);

	snprintf(c->changed + n, sizeof(c->changed) - n, "%s%s", n ? "; " : "", what);
}

/* A setting's file was written (or may have been): what it says now against the baseline. */
static void compare(struct instance_watch *w, struct watched *f, struct instance_changes *c)
{
	char what[2 * SHOWN_VALUE_MAX + 512], was[SHOWN_VALUE_MAX + 1], now_shown[SHOWN_VALUE_MAX + 1];
	_cleanup_free_ char *now = NULL;

	switch (f->kind) {
	case WATCHED_CONTROL:
		c->control = true;
		return;
	case WATCHED_CLEAR:
		/* Writing a trace file does nothing but clear (": > trace", "echo > trace"). */
		snprintf(what, sizeof(what), "%s was written by another process, which clears %s",
			 f->path, strcmp(f->path, "trace") == 0 ? "every CPU's buffer" :
			 "that CPU's buffer");
		found(c, what);
		c->control = true;
		return;
	case WATCHED_WRITTEN:
		snprintf(what, sizeof(what), "%s was written by another process", f->path);
		found(c, what);
		return;
	case WATCHED_VALUE:
		break;
	}
	if (instance_read(w->instance, f->path, &now, NULL) < 0 || strcmp(now, f->baseline) == 0)
		return;
	shown(f->baseline, was, sizeof(was));
	shown(now, now_shown, sizeof(now_shown));
	snprintf(what, sizeof(what), "%s was changed by another process (from '%s' to '%s')",
		 f->path, was, now_shown);
	found(c, what);
	/* Said once: a change back is a change again. */
	free(f->baseline);
	f->baseline = TAKE_PTR(now);
}

/**
 * instance_watch_read() - what was written to the instance since the last read.
 * @w: watch
 * @ret: findings: whether tracing_on, set_event, an enable or a trace file was written
 *	 (or may have been: the caller checks them and the counters), and the settings
 *	 changed since the baseline
 *
 * Without watches (or when the queue overflowed), everything is compared.
 */
void instance_watch_read(struct instance_watch *w, struct instance_changes *ret)
{
	/* Room for a burst of events, each a struct inotify_event without a name. */
	uint64_t buf[256];
	bool all = w->fd < 0;
	ssize_t n;

	*ret = (struct instance_changes){};
	while (w->fd >= 0 && (n = read(w->fd, buf, sizeof(buf))) > 0) {
		for (const uint8_t *p = (const uint8_t *)buf; p < (const uint8_t *)buf + n;) {
			const struct inotify_event *e = (const struct inotify_event *)p;

			if (e->mask & IN_Q_OVERFLOW)
				all = true;
			else if (e->wd >= 0 && (size_t)e->wd < w->n_by_wd && w->by_wd[e->wd])
				w->files[w->by_wd[e->wd] - 1].written = true;
			p += sizeof(*e) + e->len;
		}
	}
	for (size_t k = 0; k < w->n_files; k++) {
		struct watched *f = &w->files[k];

		/* Without watches, a pid filter the kernel keeps up to date cannot be judged. */
		if (f->written || (all && f->kind != WATCHED_WRITTEN))
			compare(w, f, ret);
		f->written = false;
	}
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/**
 * instance_check() - has anyone else changed the instance under the session?
 * @i: a running session's instance
 * @events: the events the session enabled
 * @ret_tracing_off: tracing_on reads 0
 * @ret_disabled: receives the first enabled event that no longer is ("" if none)
 * @n_disabled: its size
 *
 * Two small reads (tracing_on and set_event), cheap enough for every
 * status request, rotation and stop; a session of every event the kernel
 * has looks each up in set_event's sorted lines.
 *
 * Return: 0 or -errno of a read.
 */
int instance_check(struct instance *i, const struct event_list *events, bool *ret_tracing_off,
		   char *ret_disabled, size_t n_disabled)
{
	_cleanup_free_ char *on = NULL, *set = NULL;
	_cleanup_free_ char **lines = NULL;
	size_t n_lines = 0;
	char *save = NULL;
	int r;

	r = instance_read(i, "tracing_on", &on, NULL);
	if (r < 0)
		return r;
	/* An empty set_event (every event switched off) may read as nothing at all. */
	if (instance_read(i, "set_event", &set, NULL) < 0)
		set = strdup("");
	if (!set)
		return -ENOMEM;
	*ret_tracing_off = on[0] == '0';
	ret_disabled[0] = '\0';
	/* set_event's lines, sorted: each of the session's events is looked up in them. */
	for (char *p = set; *p; p++)
		n_lines += *p == '\n';
	lines = calloc(n_lines + 1, sizeof(*lines));
	if (!lines)
		return -ENOMEM;
	n_lines = 0;
	for (char *p = strtok_r(set, "\n", &save); p; p = strtok_r(NULL, "\n", &save))
		lines[n_lines++] = p;
	qsort(lines, n_lines, sizeof(*lines), cmp_line);
	for (size_t k = 0; k < events->n; k++) {
		const struct event_id *e = &events->events[k];
		char line[FTRACED_NAME_MAX + FTRACED_EVENT_SPEC_MAX + 2];
		const char *key = line;

		/* ftrace:* events are not enabled: they are written, not switched on. */
		if (strcmp(e->system, "ftrace") == 0)
			continue;
		snprintf(line, sizeof(line), "%s:%s", e->system, e->event);
		if (!bsearch(&key, lines, n_lines, sizeof(*lines), cmp_line)) {
			snprintf(ret_disabled, n_disabled, "%s", line);
			break;
		}
	}
	return 0;
}
