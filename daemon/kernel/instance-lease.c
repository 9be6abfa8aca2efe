// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The top-level buffer, leased: what instances lack on some kernels
 * (function_graph on 6.1, graph roots and depth on 6.12) only the top
 * level has, and every tracing tool on the machine shares it. A session
 * may take it when it asks (--top-level), one at a time, and only when
 * nobody else uses it: no tracer, no event, no function or pid list set.
 *
 * Before the first write, every top-level setting a session may change is
 * read and journaled in the state directory (INSTANCE_LEASE_FILE, synced,
 * renamed into place): values (tracer, buffer and sub-buffer size,
 * buffer_percent, clock, cpumask, graph depth, tracing_on, every option,
 * the session's events' filters) as found, the lists (function filters,
 * graph roots, pid lists, set_event), which were found empty, and whether
 * the snapshot buffer was freed (a kernel-backend flight recorder
 * allocates it). At
 * the session's end the journal is put back and removed; after a crash the
 * next start does it (instance_lease_restore_stale()), once recovery has
 * drained the capture. The buffer's old contents are cleared when the
 * lease begins, as trace-cmd does: a top level nobody uses holds nothing
 * of anyone's.
 *
 * One of the modules that change kernel tracing state (instance.c's
 * family). Main thread.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tracefs.h>

#include "daemon/kernel/event-list.h"
#include "daemon/kernel/instance-internal.h"
#include "daemon/kernel/instance-lease.h"
#include "daemon/base/log.h"
#include "lib/io-util.h"

/* Settings with one value, saved as found and written back where they differ. */
static const char *const lease_values[] = {
	"current_tracer", "max_graph_depth", "buffer_percent", "trace_clock", "tracing_cpumask",
	"buffer_subbuf_size_kb", "buffer_size_kb", "tracing_on",
};

/* Lists a lease may fill: found empty, emptied again. */
static const char *const lease_lists[] = {
	"set_ftrace_filter", "set_ftrace_notrace", "set_graph_function", "set_graph_notrace",
	"set_ftrace_pid", "set_ftrace_notrace_pid", "set_event_pid", "set_event_notrace_pid",
	"set_event",
};

/*
 * Is the top level's snapshot buffer allocated? Its file says so in its
 * first lines, before any of its contents. Return: 1, 0, or -errno.
 */
static int snapshot_allocated(void)
{
	_cleanup_free_ char *path = tracefs_instance_get_file(NULL, "snapshot");
	char head[1024];
	ssize_t n;
	int fd;

	fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if (fd < 0)
		return -ENOENT;
	n = read(fd, head, sizeof(head) - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	head[n] = '\0';
	return strstr(head, "Snapshot is freed") ? 0 : 1;
}

struct instance_lease {
	int state_dir_fd; /* borrowed */
	char *journal;    /* as written */
};

/* A value as it can be written back: the first line, a clock's [selected] word, a size's number. */
static char *read_value(const char *file)
{
	char *text = tracefs_instance_file_read(NULL, file, NULL), *open, *close;

	if (!text)
		return NULL;
	text[strcspn(text, "\n")] = '\0';
	open = strchr(text, '[');
	close = open ? strchr(open, ']') : NULL;
	if (strcmp(file, "trace_clock") == 0 && open && close) {
		*close = '\0';
		memmove(text, open + 1, strlen(open + 1) + 1);
	} else if (strcmp(file, "buffer_size_kb") == 0) {
		/*
		 * "7 (expanded: 1408)": the boot's minimal ring, never used. Any
		 * tracer expands it for good (a kernel-wide flag), so what a later
		 * user of the top level gets is the expanded size: that goes back.
		 */
		char *expanded = strstr(text, "(expanded: ");

		if (expanded)
			memmove(text, expanded + 11, strlen(expanded + 11) + 1);
		text[strspn(text, "0123456789")] = '\0';
	}
	return text;
}

/* A list as found empty: no line but comments ("#### all functions enabled ####", "no pid"). */
static bool list_empty(const char *text)
{
	for (const char *line = text; line && *line;) {
		size_t n = strcspn(line, "\n");

		if (n > 0 && line[0] != '#' && !(n == 6 && strncmp(line, "no pid", 6) == 0))
			return false;
		line += n + (line[n] == '\n');
	}
	return true;
}

/*
 * A setting the lease would change but cannot read: it could be neither
 * journaled nor checked, and its put-back would fail too (some kernels
 * refuse set_ftrace_filter and set_ftrace_notrace_pid even to root, with
 * EPERM, when function tracing is not permitted). Found before the first
 * write, so a refused lease leaves the top level as it was. Return: 0, or
 * the -errno of the first such file, named in @why.
 */
static int unreadable(char *why, size_t n)
{
	for (size_t t = 0; t < 2; t++) {
		const char *const *table = t == 0 ? lease_values : lease_lists;
		size_t n_table = t == 0 ? ELEMENTSOF(lease_values) : ELEMENTSOF(lease_lists);

		for (size_t k = 0; k < n_table; k++) {
			_cleanup_free_ char *path = tracefs_instance_get_file(NULL, table[k]);
			int fd, r;

			if (!path)
				return -ENOMEM;
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd >= 0) {
				close(fd);
				continue;
			}
			r = negative_errno();
			if (r == -ENOENT)
				continue; /* not on this kernel: nothing to journal */
			snprintf(why, n, "the kernel refuses %s (%s), which the lease would change and "
				 "could not put back", table[k], strerror(-r));
			return r;
		}
	}
	return 0;
}

/*
 * Why the top level is someone else's now, or "" when nobody uses it: a
 * tracer, an enabled event, a list set.
 */
static void in_use(char *why, size_t n)
{
	_cleanup_free_ char *tracer = read_value("current_tracer");

	why[0] = '\0';
	if (tracer && strcmp(tracer, "nop") != 0) {
		snprintf(why, n, "the %s tracer is set (current_tracer)", tracer);
		return;
	}
	for (size_t k = 0; k < ELEMENTSOF(lease_lists); k++) {
		_cleanup_free_ char *text = NULL;

		if (!tracefs_file_exists(NULL, lease_lists[k]))
			continue;
		text = tracefs_instance_file_read(NULL, lease_lists[k], NULL);
		if (text && !list_empty(text)) {
			text[strcspn(text, "\n")] = '\0';
			snprintf(why, n, "%s is set (%s%s)", lease_lists[k], text,
				 strcmp(lease_lists[k], "set_event") == 0 ? ", ..." : "");
			return;
		}
	}
}

static int put_line(FILE *f, const char *kind, const char *file, const char *value)
{
	/* Values are single lines from the kernel; a tab or newline would break the journal. */
	if (value && strpbrk(value, "\t\n"))
		return -EINVAL;
	fprintf(f, "%s=%s%s%s\n", kind, file, value ? "\t" : "", value ?: "");
	return 0;
}

/* Every option's value, and those of the session's events' filters. */
static int journal_options_and_filters(FILE *f, const struct event_list *events)
{
	_cleanup_free_ char *dir = tracefs_instance_get_file(NULL, "options");
	struct dirent *de;
	DIR *d = dir ? opendir(dir) : NULL;
	int r = 0;

	while (d && (de = readdir(d)) && r >= 0) {
		_cleanup_free_ char *value = NULL;
		char rel[300];

		if (de->d_name[0] == '.')
			continue;
		snprintf(rel, sizeof(rel), "options/%s", de->d_name);
		value = read_value(rel);
		if (value)
			r = put_line(f, "value", rel, value);
	}
	if (d)
		closedir(d);
	for (size_t k = 0; events && k < events->n && r >= 0; k++) {
		_cleanup_free_ char *value = NULL;
		char rel[512];

		snprintf(rel, sizeof(rel), "events/%s/%s/filter", events->events[k].system,
			 events->events[k].event);
		if (!tracefs_file_exists(NULL, rel))
			continue;
		value = read_value(rel);
		if (value)
			r = put_line(f, "filter", rel, value);
	}
	return r;
}

/* The journal's text: the holder, then every setting the lease may change. */
static int journal_text(const char *holder, const struct event_list *events, char **ret)
{
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);
	int r;

	if (!f)
		return -ENOMEM;
	r = put_line(f, "holder", holder, NULL);
	for (size_t k = 0; k < ELEMENTSOF(lease_values) && r >= 0; k++) {
		_cleanup_free_ char *value = NULL;

		if (!tracefs_file_exists(NULL, lease_values[k]))
			continue;
		value = read_value(lease_values[k]);
		if (value)
			r = put_line(f, "value", lease_values[k], value);
	}
	for (size_t k = 0; k < ELEMENTSOF(lease_lists) && r >= 0; k++)
		if (tracefs_file_exists(NULL, lease_lists[k]))
			r = put_line(f, "list", lease_lists[k], NULL);
	/* A flight recorder's kernel backend allocates it with its first swap. */
	if (r >= 0 && snapshot_allocated() == 0)
		r = put_line(f, "freed", "snapshot", NULL);
	if (r >= 0)
		r = journal_options_and_filters(f, events);
	if (fclose(f) != 0 && r >= 0)
		r = -ENOMEM;
	if (r >= 0 && n > INSTANCE_LEASE_JOURNAL_MAX)
		r = -EFBIG;
	if (r < 0) {
		free(text);
		return r;
	}
	*ret = text;
	return 0;
}

/* The holder a journal names, into @buf ("?" if it names none). */
static void journal_holder(const char *journal, char *buf, size_t n)
{
	const char *h = strncmp(journal, "holder=", 7) == 0 ? journal + 7 : "?";

	snprintf(buf, n, "%.*s", (int)strcspn(h, "\n"), h);
}

/*
 * A file a journal may name: one of the tables', an option, or an event's
 * filter; nothing else of the state directory's text reaches a path.
 */
static bool journal_file_valid(const char *kind, const char *file)
{
	const char *const *table = strcmp(kind, "list") == 0 ? lease_lists : lease_values;
	size_t n = strcmp(kind, "list") == 0 ? ELEMENTSOF(lease_lists) : ELEMENTSOF(lease_values);
	size_t len = strlen(file);

	if (strstr(file, "..") || file[strspn(file, "abcdefghijklmnopqrstuvwxyz"
						   "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./")])
		return false;
	if (strcmp(kind, "freed") == 0)
		return strcmp(file, "snapshot") == 0;
	if (strcmp(kind, "filter") == 0)
		return strncmp(file, "events/", 7) == 0 && len > 7 + 7 &&
		       strcmp(file + len - 7, "/filter") == 0;
	if (strcmp(kind, "value") == 0 && strncmp(file, "options/", 8) == 0)
		return !strchr(file + 8, '/') && file[8];
	for (size_t k = 0; k < n; k++)
		if (strcmp(table[k], file) == 0)
			return true;
	return false;
}

static int put_back(const char *file, const char *value)
{
	_cleanup_free_ char *now = read_value(file);

	if (now && strcmp(now, value) == 0)
		return 0;
	return tracefs_instance_file_write(NULL, file, value) < 0 ? negative_errno() : 0;
}

/* @file, added to the "; "-separated list of what could not be put back. */
static void note_failed(char *failed, size_t n, const char *file, int error)
{
	size_t used = strlen(failed);

	if (used < n)
		snprintf(failed + used, n - used, "%s%s (%s)", used ? "; " : "", file,
			 strerror(-error));
}

/* One journal line, put back; @pass 0 stops tracing and the tracer, 1 the rest, 2 tracing_on. */
static int restore_line(char *line, int pass, char *failed, size_t n_failed)
{
	char *file = strchr(line, '='), *value;
	int r = 0;

	if (!file)
		return -EBADMSG;
	*file++ = '\0';
	value = strchr(file, '\t');
	if (value)
		*value++ = '\0';
	if (strcmp(line, "holder") == 0)
		return 0;
	if (!journal_file_valid(line, file) ||
	    (strcmp(line, "list") != 0 && strcmp(line, "freed") != 0 && !value)) {
		if (pass == 0)
			note_failed(failed, n_failed, "a journal line not understood", -EBADMSG);
		return -EBADMSG;
	}
	if (!tracefs_file_exists(NULL, file))
		return 0;
	if (pass == 0 && strcmp(file, "tracing_on") == 0)
		r = tracefs_trace_off(NULL) < 0 ? negative_errno() : 0;
	else if (pass == 0 && strcmp(file, "current_tracer") == 0)
		r = put_back(file, value);
	else if (pass == 1 && strcmp(line, "freed") == 0)
		r = snapshot_allocated() == 1 && tracefs_instance_file_write(NULL, file, "0") < 0 ?
		    negative_errno() : 0;
	else if (pass == 1 && strcmp(line, "list") == 0)
		r = tracefs_instance_file_clear(NULL, file) < 0 ? negative_errno() : 0;
	else if (pass == 1 && strcmp(line, "filter") == 0)
		r = put_back(file, strcmp(value, "none") == 0 ? "0" : value);
	else if (pass == 1 && strcmp(file, "tracing_on") != 0 &&
		 strcmp(file, "current_tracer") != 0)
		r = put_back(file, value);
	else if (pass == 2 && strcmp(file, "tracing_on") == 0)
		r = put_back(file, value);
	if (r < 0) {
		log_warning_errno(r, "Cannot put the top level's %s back as it was: %m", file);
		note_failed(failed, n_failed, file, r);
	}
	return r;
}

/*
 * Every setting of @journal back as it was: tracing and the tracer stop
 * first, tracing_on is last. What could not be put back is named in
 * @failed. Return: 0, or the first error (the others are still tried).
 */
static int restore(const char *journal, char *failed, size_t n_failed)
{
	int first = 0;

	for (int pass = 0; pass < 3; pass++) {
		_cleanup_free_ char *copy = strdup(journal);
		char *save = NULL;

		if (!copy)
			return -ENOMEM;
		for (char *line = strtok_r(copy, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			int r = restore_line(line, pass, failed, n_failed);

			if (r < 0 && first == 0)
				first = r;
		}
	}
	return first;
}

static int remove_journal(int state_dir_fd)
{
	if (unlinkat(state_dir_fd, INSTANCE_LEASE_FILE, 0) < 0 && errno != ENOENT)
		return negative_errno();
	return fsync(state_dir_fd) < 0 ? negative_errno() : 0;
}

/*
 * The top level as an instance object: tfs NULL is libtracefs's top level.
 * Freeing it removes nothing.
 */
static int top_level_object(struct instance **ret)
{
	struct instance *i = calloc(1, sizeof(*i));

	if (!i)
		return -ENOMEM;
	snprintf(i->name, sizeof(i->name), INSTANCE_TOP_LEVEL_NAME);
	i->top_level = true;
	*ret = i;
	return 0;
}

/**
 * instance_lease_take() - lease the top-level buffer for a session.
 * @state_dir_fd: the state directory (the journal goes there)
 * @holder: the session's name, for a second asker's refusal
 * @events: the session's events (their filters are journaled)
 * @ret_lease: receives the lease; instance_lease_release() puts everything back
 * @ret_top: receives the top level as an instance, tracing off and empty
 * @error: receives why it was refused
 * @n_error: its size
 *
 * Return: 0, -EBUSY (leased already, or in use by someone else), or -errno.
 */
int instance_lease_take(int state_dir_fd, const char *holder, const struct event_list *events,
			struct instance_lease **ret_lease, struct instance **ret_top, char *error,
			size_t n_error)
{
	_cleanup_free_ char *journal = NULL;
	_cleanup_(instance_freep) struct instance *top = NULL;
	struct instance_lease *l;
	char why[512];
	int r;

	r = read_file_at(state_dir_fd, INSTANCE_LEASE_FILE, INSTANCE_LEASE_JOURNAL_MAX, &journal,
			 NULL);
	if (r >= 0) {
		journal_holder(journal, why, sizeof(why));
		snprintf(error, n_error, "the top-level buffer is leased by session '%s' already "
			 "(one lease at a time)", why);
		return -EBUSY;
	}
	if (r != -ENOENT) {
		snprintf(error, n_error, "cannot read '%s' in the state directory: %s",
			 INSTANCE_LEASE_FILE, strerror(-r));
		return r;
	}
	r = unreadable(why, sizeof(why));
	if (r < 0) {
		snprintf(error, n_error, "the top-level buffer cannot be leased here: %s; it was "
			 "left as it is", why);
		return r;
	}
	in_use(why, sizeof(why));
	if (why[0]) {
		snprintf(error, n_error, "the top-level buffer is in use by another tool: %s; it "
			 "was left as it is", why);
		return -EBUSY;
	}
	r = journal_text(holder, events, &journal);
	if (r >= 0)
		r = replace_file_at(state_dir_fd, INSTANCE_LEASE_FILE, journal, strlen(journal),
				    0600);
	if (r < 0) {
		snprintf(error, n_error, "cannot journal the top level's settings in the state "
			 "directory: %s", strerror(-r));
		return r;
	}
	l = calloc(1, sizeof(*l));
	r = l ? top_level_object(&top) : -ENOMEM;
	if (r >= 0 && tracefs_trace_off(NULL) < 0)
		r = negative_errno();
	if (r >= 0)
		r = instance_clear(top);
	if (r < 0) {
		char failed[512] = "";

		free(l);
		if (restore(journal, failed, sizeof(failed)) < 0)
			log_warning("The top-level buffer could not all be put back: %s", failed);
		(void)remove_journal(state_dir_fd); /* never a lease nobody holds */
		snprintf(error, n_error, "cannot take the top-level buffer: %s", strerror(-r));
		return r;
	}
	l->state_dir_fd = state_dir_fd;
	l->journal = TAKE_PTR(journal);
	log_notice("Session '%s' leases the top-level buffer; its settings are journaled in '%s'",
		   holder, INSTANCE_LEASE_FILE);
	*ret_lease = l;
	*ret_top = TAKE_PTR(top);
	return 0;
}

/*
 * The lease ends: the journal goes whatever could be put back. A setting
 * the kernel refuses now it would refuse at the next start too, and a
 * journal left behind would refuse every later lease for a holder long
 * gone; what could not be put back is named in a warning instead.
 */
static int end_lease(int state_dir_fd, const char *journal, const char *holder)
{
	char failed[512] = "";
	int r, q;

	r = restore(journal, failed, sizeof(failed));
	q = remove_journal(state_dir_fd);
	if (r < 0)
		log_warning("The top-level buffer is not all back as session '%s' found it, the "
			    "lease ends anyway: %s could not be restored", holder, failed);
	if (q < 0)
		log_warning_errno(q, "Cannot remove '%s' from the state directory, later leases "
				  "are refused until it is gone: %m", INSTANCE_LEASE_FILE);
	return r < 0 ? r : q;
}

/**
 * instance_lease_release() - put the top level back as it was found, and end the lease.
 * @l: lease or NULL; its instance object is gone (or never changed again)
 *
 * A setting that cannot be put back is named in a warning; the lease ends
 * all the same (end_lease()).
 *
 * Return: NULL.
 */
struct instance_lease *instance_lease_release(struct instance_lease *l)
{
	char holder[128];

	if (!l)
		return NULL;
	journal_holder(l->journal, holder, sizeof(holder));
	if (end_lease(l->state_dir_fd, l->journal, holder) >= 0)
		log_notice("The top-level buffer is back as it was found");
	free(l->journal);
	free(l);
	return NULL;
}

/**
 * instance_lease_restore_stale() - put the top level back after a crash.
 * @state_dir_fd: the state directory, locked; recovery has drained the top level
 *
 * Return: 0 (also without a journal), or -errno (what could not be put
 * back is logged; the journal is gone all the same).
 */
int instance_lease_restore_stale(int state_dir_fd)
{
	_cleanup_free_ char *journal = NULL;
	char holder[128];
	int r;

	r = read_file_at(state_dir_fd, INSTANCE_LEASE_FILE, INSTANCE_LEASE_JOURNAL_MAX, &journal,
			 NULL);
	if (r == -ENOENT)
		return 0;
	if (r < 0) {
		/* Unreadable (or larger than any journal written): kept, it would refuse every lease. */
		log_warning_errno(r, "Cannot read '%s' in the state directory, the top level is not "
				  "put back (removed anyway): %m", INSTANCE_LEASE_FILE);
		(void)remove_journal(state_dir_fd);
		return r;
	}
	journal_holder(journal, holder, sizeof(holder));
	r = end_lease(state_dir_fd, journal, holder);
	if (r >= 0)
		log_notice("Put the top-level buffer back as session '%s' found it before the "
			   "daemon stopped", holder);
	return r;
}

/**
 * instance_lease_holder() - who leases the top-level buffer now.
 * @state_dir_fd: the state directory
 * @buf: receives the holding session's name
 * @n: its size
 *
 * Return: 1 (leased: @buf holds the name), 0 (nobody), or -errno.
 */
int instance_lease_holder(int state_dir_fd, char *buf, size_t n)
{
	_cleanup_free_ char *journal = NULL;
	int r;

	r = read_file_at(state_dir_fd, INSTANCE_LEASE_FILE, INSTANCE_LEASE_JOURNAL_MAX, &journal,
			 NULL);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	journal_holder(journal, buf, n);
	return 1;
}

/**
 * instance_lease_adopt_orphan() - the leased top level, for recovery to drain.
 * @state_dir_fd: the state directory
 * @name: the instance a spool's recipe names (not trusted)
 * @ret: receives the top level, tracing off; freeing it removes nothing
 *
 * Only a recipe naming the top level, while a lease's journal is there
 * (a daemon that crashed holding it), gets it: anything else is no
 * orphan of a lease.
 *
 * Return: 0, -ENOENT, or -errno.
 */
int instance_lease_adopt_orphan(int state_dir_fd, const char *name, struct instance **ret)
{
	int r;

	if (strcmp(name, INSTANCE_TOP_LEVEL_NAME) != 0 ||
	    faccessat(state_dir_fd, INSTANCE_LEASE_FILE, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
		return -ENOENT;
	r = top_level_object(ret);
	if (r >= 0 && tracefs_trace_off(NULL) < 0)
		log_warning_errno(negative_errno(), "Cannot turn tracing off in the leased top "
				  "level, draining anyway: %m");
	return r;
}
