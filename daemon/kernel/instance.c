// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Our own tracefs instance, the object: its life (created, removed, or
 * adopted as an orphan of a crash), its setters and its file access. With
 * instance-setup.c (the recipe a session asks for), instance-watch.c and
 * probe.c, the only modules that change kernel tracing state. Everything a
 * session sets (events, filters, buffer and sub-buffer size, clock,
 * tracing_on) lives inside its instance "ftraced-<tag>-<id>", so undoing
 * it all is one tracefs_instance_destroy(); the top-level buffer and
 * other tools' instances are never touched.
 *
 * Called from the main thread, except instance_read*() which the assembler
 * thread may use on an instance that is no longer changed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tracefs.h>

#include "daemon/kernel/event-list.h"
#include "daemon/kernel/instance-internal.h"
#include "daemon/base/log.h"
#include "lib/io-util.h"

#define INSTANCE_PREFIX "ftraced-"

/**
 * instance_new() - create the tracefs instance "ftraced-<tag>-<id>".
 * @tag: the daemon's instance tag (see instance_tag())
 * @id: internal session id (never client text)
 * @ret: the instance, tracing off
 *
 * The instance is made 0700: when tracefs is mounted with gid=, group
 * members could otherwise consume our trace_pipe_raw.
 *
 * Return: 0, -EEXIST if it already exists, or another -errno.
 */
int instance_new(uint32_t tag, uint64_t id, struct instance **ret)
{
	_cleanup_free_ char *dir = NULL;
	struct instance *i;
	int r;

	i = calloc(1, sizeof(*i));
	if (!i)
		return -ENOMEM;
	snprintf(i->name, sizeof(i->name), INSTANCE_PREFIX "%08" PRIx32 "-%" PRIu64, tag, id);
	i->tfs = tracefs_instance_create(i->name);
	if (!i->tfs) {
		r = negative_errno();
		free(i);
		return r;
	}
	/* Found, not made (its mkdir failed with EEXIST): someone else's, left alone. */
	if (!tracefs_instance_is_new(i->tfs)) {
		tracefs_instance_free(i->tfs);
		free(i);
		return -EEXIST;
	}
	dir = tracefs_instance_get_dir(i->tfs);
	if (dir && chmod(dir, 0700) < 0)
		log_debug_errno(negative_errno(), "chmod 0700 of '%s' failed, ignoring: %m", dir);
	r = instance_set_tracing(i, false);
	if (r < 0) {
		instance_free(i);
		return r;
	}
	*ret = i;
	return 0;
}

/**
 * instance_free() - destroy the tracefs instance and free it.
 * @i: instance or NULL
 *
 * Return: NULL.
 */
struct instance *instance_free(struct instance *i)
{
	char name[sizeof(i->name)];
	int r;

	if (!i)
		return NULL;
	snprintf(name, sizeof(name), "%s", i->name);
	r = instance_destroy(i);
	if (r < 0)
		log_warning_errno(r, "Removing instance '%s' failed: %m", name);
	return NULL;
}

/*
 * rmdir of the instance's directory. One that is gone already (another
 * process removed it: tracefs is shared) is what a removal wants: 1.
 */
static int remove_dir(struct instance *i)
{
	if (tracefs_instance_destroy(i->tfs) >= 0)
		return 0;
	return errno == ENOENT ? 1 : negative_errno();
}

/**
 * instance_try_remove() - remove the instance from tracefs, keeping the object.
 * @i: instance
 *
 * tracefs refuses (EBUSY) while a process holds one of the instance's
 * files open; the object then stays valid for another try.
 *
 * Return: 0 (the object only needs instance_free() now), 1 if another
 * process had removed it already (the same for the object), or -errno.
 */
int instance_try_remove(struct instance *i)
{
	int r;

	if (!i->tfs || i->boot_mapped)
		return 0; /* a boot-mapped one is only released, by instance_destroy() */
	r = remove_dir(i);
	if (r < 0)
		return r;
	tracefs_instance_free(i->tfs);
	i->tfs = NULL;
	return r;
}

/**
 * instance_exists() - is the instance still in tracefs?
 * @i: instance
 *
 * Another process may remove it (rmdir) once nothing holds its files open.
 *
 * Return: false only if its directory is gone.
 */
bool instance_exists(const struct instance *i)
{
	_cleanup_free_ char *dir = NULL;
	struct stat st;

	if (i->top_level || i->boot_mapped || !i->tfs)
		return true;
	dir = tracefs_instance_get_dir(i->tfs);
	return !dir || stat(dir, &st) == 0 || errno != ENOENT;
}

/**
 * instance_abandon() - free the object and leave the instance in tracefs.
 * @i: instance or NULL
 *
 * For an instance that cannot be removed now: the next start removes it
 * as an orphan.
 *
 * Return: NULL.
 */
struct instance *instance_abandon(struct instance *i)
{
	if (!i)
		return NULL;
	if (i->boot_mapped)
		instance_boot_forget(i);
	tracefs_instance_free(i->tfs);
	free(i);
	return NULL;
}

/**
 * instance_destroy() - remove the instance from tracefs and free it.
 * @i: instance or NULL
 *
 * Return: 0, or -errno of the removal (the object is freed either way).
 */
int instance_destroy(struct instance *i)
{
	int r = 0;

	if (!i)
		return 0;
	if (i->boot_mapped)
		return instance_boot_release(i);
	if (i->tfs) {
		r = remove_dir(i);
		tracefs_instance_free(i->tfs);
	}
	free(i);
	return MIN(r, 0);
}

const char *instance_name(const struct instance *i)
{
	return i->name;
}

/* The top-level buffer, leased (instance-lease.c): never removed, only put back. */
bool instance_is_top_level(const struct instance *i)
{
	return i->top_level;
}

int instance_write_file(struct instance *i, const char *file, const char *value)
{
	if (tracefs_instance_file_write(i->tfs, file, value) < 0)
		return negative_errno();
	return 0;
}

/**
 * instance_set_subbuf() - set the sub-buffer size (reallocates the ring).
 * @i: instance
 * @subbuf_kb: sub-buffer size, already checked against bounds.h
 *
 * Return: 0, -EOPNOTSUPP if the kernel has no buffer_subbuf_size_kb, or -errno.
 */
int instance_set_subbuf(struct instance *i, uint32_t subbuf_kb)
{
	char v[16];

	if (i->boot_mapped)
		return -EPERM; /* the kernel refuses it (EBUSY): the mapping fixed it */
	if (!tracefs_file_exists(i->tfs, "buffer_subbuf_size_kb"))
		return -EOPNOTSUPP;
	snprintf(v, sizeof(v), "%u", subbuf_kb);
	return instance_write_file(i, "buffer_subbuf_size_kb", v);
}

/**
 * instance_set_buffer_size() - set the per-CPU ring size.
 * @i: instance
 * @buffer_kb: per-CPU size, already checked against bounds.h
 *
 * The kernel allocates the ring before this returns: seconds for a large
 * one (a session does it on a thread, see ring-alloc.c).
 *
 * Return: 0 or -errno.
 */
int instance_set_buffer_size(struct instance *i, uint32_t buffer_kb)
{
	/* 6.12 takes the write, and the ring it allocates is no longer the mapped one. */
	if (i->boot_mapped)
		return -EPERM;
	if (tracefs_instance_set_buffer_size(i->tfs, buffer_kb, -1) < 0)
		return negative_errno();
	return 0;
}

/**
 * instance_set_buffer() - set the sub-buffer size, then the per-CPU buffer size.
 * @i: instance
 * @buffer_kb: per-CPU buffer size, already checked against bounds.h
 * @subbuf_kb: sub-buffer size, or 0 for the kernel's default
 *
 * Return: 0, -EOPNOTSUPP if the kernel has no buffer_subbuf_size_kb, or -errno.
 */
int instance_set_buffer(struct instance *i, uint32_t buffer_kb, uint32_t subbuf_kb)
{
	int r;

	if (subbuf_kb > 0) {
		r = instance_set_subbuf(i, subbuf_kb);
		if (r < 0)
			return r;
	}
	return instance_set_buffer_size(i, buffer_kb);
}

/**
 * instance_set_clock() - select the trace clock.
 * @i: instance
 * @clock: a name checked against the instance's trace_clock list
 *
 * Return: 0, -EINVAL for a clock the kernel does not offer, or -errno.
 */
int instance_set_clock(struct instance *i, const char *clock)
{
	_cleanup_free_ char *list = NULL;
	bool found = false;
	char *save = NULL;

	list = tracefs_instance_file_read(i->tfs, "trace_clock", NULL);
	if (!list)
		return negative_errno();
	for (char *t = strtok_r(list, " []\n", &save); t; t = strtok_r(NULL, " []\n", &save))
		if (strcmp(t, clock) == 0)
			found = true;
	if (!found)
		return -EINVAL;
	return instance_write_file(i, "trace_clock", clock);
}

/**
 * instance_enable_event() - apply the filter to one event and enable it.
 * @i: instance
 * @e: an event the kernel listed
 * @filter: filter expression or NULL
 * @ret_kernel_error: on a rejected filter, the kernel's error_log text (caller frees)
 *
 * Return: 0, -EOPNOTSUPP for a filter on an ftrace:* event, or -errno
 * (-EINVAL for a rejected filter).
 */
int instance_enable_event(struct instance *i, const struct event_id *e, const char *filter,
			  char **ret_kernel_error)
{
	/*
	 * ftrace:* entries (print for trace_marker, bprint, ...) have no enable
	 * or filter file: the kernel records them whenever they are written.
	 */
	if (strcmp(e->system, "ftrace") == 0)
		return filter ? -EOPNOTSUPP : 0;
	if (filter && tracefs_event_file_write(i->tfs, e->system, e->event, "filter", filter) < 0) {
		int r = negative_errno();

		if (ret_kernel_error)
			*ret_kernel_error = tracefs_error_last(i->tfs);
		return r;
	}
	/*
	 * The event's own enable file: tracefs_event_enable() takes regular
	 * expressions and walks every system and event for each call, which
	 * made `-e all` take seconds.
	 */
	if (tracefs_event_file_write(i->tfs, e->system, e->event, "enable", "1") < 0)
		return negative_errno();
	return 0;
}

/**
 * instance_set_buffer_percent() - how full a CPU's buffer gets before readers wake.
 * @i: instance
 * @percent: 0..100; 0 wakes readers on any data, for read() only (splice
 *           refuses partial sub-buffers, so a splicing reader would spin)
 *
 * Return: 0, -EINVAL, or -errno.
 */
int instance_set_buffer_percent(struct instance *i, unsigned percent)
{
	char v[8];

	if (percent > 100)
		return -EINVAL;
	snprintf(v, sizeof(v), "%u", percent);
	return instance_write_file(i, "buffer_percent", v);
}

/*
 * Overwrite mode: a full ring drops its oldest events instead of new ones.
 * Not written when already so: in a boot-mapped instance, 6.12.95 follows
 * a write of options/overwrite into a NULL dereference (measured, Debian's
 * 6.12 cloud kernel under qemu): the kernel dies.
 */
int instance_set_overwrite(struct instance *i, bool on)
{
	_cleanup_free_ char *now = NULL;

	if (instance_read(i, "options/overwrite", &now, NULL) >= 0 && now[0] == (on ? '1' : '0'))
		return 0;
	if (i->boot_mapped)
		return -EPERM;
	return instance_write_file(i, "options/overwrite", on ? "1" : "0");
}

int instance_set_tracing(struct instance *i, bool on)
{
	if ((on ? tracefs_trace_on(i->tfs) : tracefs_trace_off(i->tfs)) < 0)
		return negative_errno();
	return 0;
}

/**
 * instance_read() - read a whole file of the instance.
 * @i: instance
 * @file: path inside the instance, built by us
 * @ret: NUL-terminated contents (caller frees)
 * @ret_size: length, or NULL
 *
 * Return: 0 or -errno.
 */
int instance_read(struct instance *i, const char *file, char **ret, size_t *ret_size)
{
	int size = 0;
	char *s;

	s = tracefs_instance_file_read(i->tfs, file, &size);
	if (!s)
		return negative_errno();
	*ret = s;
	if (ret_size)
		*ret_size = (size_t)size;
	return 0;
}

static int open_cpu_file(struct instance *i, unsigned cpu, const char *name, int *ret_fd)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "per_cpu/cpu%u/%s", cpu, name);
	fd = tracefs_instance_file_open(i->tfs, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return negative_errno();
	*ret_fd = fd;
	return 0;
}

/**
 * instance_open_cpu_raw() - open one CPU's trace_pipe_raw, non-blocking.
 * @i: instance
 * @cpu: CPU number
 * @ret_fd: the fd
 *
 * Return: 0 or -errno.
 */
int instance_open_cpu_raw(struct instance *i, unsigned cpu, int *ret_fd)
{
	return open_cpu_file(i, cpu, "trace_pipe_raw", ret_fd);
}

/**
 * instance_open_pipe() - open trace_pipe, the ring as text read by consuming it, non-blocking.
 * @i: instance
 * @cpu: one CPU's (per_cpu/cpuN/trace_pipe), or -1 for all CPUs'
 * @ret_fd: the fd (reads fail with EAGAIN once the ring is empty)
 *
 * Return: 0 or -errno.
 */
int instance_open_pipe(struct instance *i, int cpu, int *ret_fd)
{
	int fd;

	if (cpu >= 0)
		return open_cpu_file(i, (unsigned)cpu, "trace_pipe", ret_fd);
	fd = tracefs_instance_file_open(i->tfs, "trace_pipe", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return negative_errno();
	*ret_fd = fd;
	return 0;
}

/**
 * instance_open_cpu_snapshot_raw() - open one CPU's snapshot_raw, non-blocking.
 * @i: instance with a snapshot buffer
 * @cpu: CPU number
 * @ret_fd: the fd: the snapshot buffer's sub-buffers, read like trace_pipe_raw
 *
 * Return: 0 or -errno.
 */
int instance_open_cpu_snapshot_raw(struct instance *i, unsigned cpu, int *ret_fd)
{
	return open_cpu_file(i, cpu, "snapshot_raw", ret_fd);
}

/**
 * instance_has_snapshot() - can the ring be swapped with a snapshot buffer here?
 * @i: instance
 *
 * Return: true if the kernel has CONFIG_TRACER_SNAPSHOT (Debian's 6.1 does).
 */
bool instance_has_snapshot(struct instance *i)
{
	return tracefs_file_exists(i->tfs, "snapshot");
}

/**
 * instance_snapshot_swap() - swap the ring with the snapshot buffer, tracing on or off.
 * @i: instance with a snapshot buffer
 *
 * The first swap allocates the snapshot buffer (as large as the ring).
 *
 * Return: 0 or -errno.
 */
int instance_snapshot_swap(struct instance *i)
{
	return instance_write_file(i, "snapshot", "1");
}

/**
 * instance_snapshot_clear() - empty the snapshot buffer (its counters go back to 0).
 * @i: instance
 *
 * Return: 0 or -errno.
 */
int instance_snapshot_clear(struct instance *i)
{
	return instance_write_file(i, "snapshot", "2");
}

/**
 * instance_open_cpu_stats() - open one CPU's stats file for reading.
 * @i: instance
 * @cpu: CPU number
 * @ret_fd: the fd
 *
 * Return: 0 or -errno.
 */
int instance_open_cpu_stats(struct instance *i, unsigned cpu, int *ret_fd)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "per_cpu/cpu%u/stats", cpu);
	fd = tracefs_instance_file_open(i->tfs, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return negative_errno();
	*ret_fd = fd;
	return 0;
}

/**
 * instance_read_cpu_stats() - read and parse one CPU's stats file.
 * @i: instance
 * @cpu: CPU number
 * @ret: parsed counters
 * @ret_text: the raw text for a CPUSTAT option (caller frees), or NULL
 *
 * Return: 0 or -errno.
 */
int instance_read_cpu_stats(struct instance *i, unsigned cpu, struct cpu_counters *ret,
			    char **ret_text)
{
	_cleanup_free_ char *text = NULL;
	char path[64];
	int r;

	snprintf(path, sizeof(path), "per_cpu/cpu%u/stats", cpu);
	r = instance_read(i, path, &text, NULL);
	if (r < 0)
		return r;
	r = instance_parse_cpu_counters(text, ret);
	if (r < 0)
		return r;
	if (ret_text)
		*ret_text = TAKE_PTR(text);
	return 0;
}

/**
 * instance_word_in() - is @name a word of the space-separated @list?
 * @list: a tracefs listing such as available_tracers (NULL: none)
 * @name: the word
 *
 * Return: true if it is there, whole.
 */
bool instance_word_in(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && *p; p += strcspn(p, " \n"), p += strspn(p, " \n"))
		if (strncmp(p, name, n) == 0 && (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
			return true;
	return false;
}

/* The tag of a state directory from before tags were kept in it: its path's FNV-1a hash. */
static uint32_t path_tag(const char *state_dir)
{
	uint32_t h = 2166136261u;

	for (const char *p = state_dir; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	return h;
}

/**
 * instance_tag_load() - the tag in the instance names of the daemon using a state directory.
 * @state_dir_fd: the directory, locked by the caller
 * @resolved: its absolute, resolved path
 * @create: write one down if it has none (a daemon); else only read (--recover)
 * @ret: the tag
 *
 * tracefs is shared by everything on the machine, possibly by several
 * daemons with different state directories, in different mount
 * namespaces even, where the same path names another directory. Each
 * names its instances "ftraced-<tag>-<id>" with its own tag, and holds its
 * state directory's lock, so at start-up a daemon knows that instances
 * with its tag were left by an earlier run of itself and that others are
 * none of its business. The tag is random, made once and kept in the
 * directory (INSTANCE_TAG_FILE); a directory from before that has its
 * path's hash, kept from then on.
 *
 * Return: 0 or -errno.
 */
int instance_tag_load(int state_dir_fd, const char *resolved, bool create, uint32_t *ret)
{
	char text[16] = "";
	unsigned long v;
	uint32_t tag;
	struct stat st;
	ssize_t n = 0;
	char *end;
	int fd;

	fd = openat(state_dir_fd, INSTANCE_TAG_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, text, sizeof(text) - 1);
		close(fd);
		errno = 0;
		v = strtoul(text, &end, 16);
		if (n > 0 && !errno && end != text && (*end == '\n' || !*end) && v <= UINT32_MAX) {
			*ret = (uint32_t)v;
			return 0;
		}
	} else if (errno != ENOENT) {
		return negative_errno();
	}
	/* A directory that has run a daemon before keeps its instances' old names. */
	if (fstatat(state_dir_fd, "spool", &st, AT_SYMLINK_NOFOLLOW) == 0 ||
	    getrandom(&tag, sizeof(tag), 0) != (ssize_t)sizeof(tag))
		tag = path_tag(resolved);
	if (create) {
		snprintf(text, sizeof(text), "%08" PRIx32 "\n", tag);
		fd = replace_file_at(state_dir_fd, INSTANCE_TAG_FILE, text, strlen(text), 0600);
		if (fd < 0)
			return fd;
	}
	*ret = tag;
	return 0;
}

struct name_list {
	const char *prefix;
	size_t n;
	char **names;
	int error;
};

static int collect_ours(const char *name, void *userdata)
{
	struct name_list *l = userdata;
	char **names;

	if (strncmp(name, l->prefix, strlen(l->prefix)) != 0)
		return 0;
	names = realloc(l->names, (l->n + 1) * sizeof(*names));
	if (!names || !(names[l->n] = strdup(name))) {
		if (names)
			l->names = names;
		l->error = -ENOMEM;
		return 1;
	}
	l->names = names;
	l->n++;
	return 0;
}

/**
 * instance_check_writable() - can this process create instances at all?
 *
 * A unit with ProtectKernelTunables=yes mounts tracefs read-only, and
 * ReadWritePaths= cannot undo that: better to say so at start-up than at
 * the first session.
 *
 * Return: 0, -EROFS, -EACCES or another -errno.
 */
int instance_check_writable(void)
{
	_cleanup_free_ char *path = NULL;
	const char *dir = tracefs_tracing_dir();

	if (!dir)
		return -ENOENT;
	if (asprintf(&path, "%s/instances", dir) < 0)
		return -ENOMEM;
	return access(path, W_OK) < 0 ? negative_errno() : 0;
}

/*
 * A busy orphan (a process holds one of its files open) keeps its ring
 * buffers until it goes: tracing off, its events off and its ring at the
 * least the kernel allows, so it pins next to nothing while it waits.
 */
static void quiet_orphan(struct instance *i)
{
	(void)tracefs_instance_file_write(i->tfs, "set_event", "");
	if (tracefs_instance_file_write(i->tfs, "buffer_size_kb", "1") < 0)
		log_debug_errno(negative_errno(), "Cannot shrink the ring buffers of busy instance "
				"'%s': %m", i->name);
}

/**
 * instance_remove_orphans() - destroy the instances an earlier run left.
 * @tag: this daemon's tag
 * @busy: takes over an orphan tracefs will not remove yet (a process holds one of its
 *	  files open), to retry; NULL: it is left for the next start
 * @userdata: for @busy
 *
 * Called once at start-up, with the state directory locked and before any
 * session exists: an instance with our tag then belongs to an earlier run
 * of this daemon that died, and each one pins its ring buffers in kernel
 * memory. Other daemons' instances are left alone. A busy one is quieted
 * (quiet_orphan()) before it is handed over. (tracefs_instances() would
 * take a regex, but libtracefs 1.6 leaks it; comparing the prefix needs
 * none.)
 *
 * Return: the number removed, or -errno.
 */
int instance_remove_orphans(uint32_t tag, instance_busy_fn busy, void *userdata)
{
	char prefix[32];
	struct name_list l = { .prefix = prefix };
	int n = 0;

	snprintf(prefix, sizeof(prefix), INSTANCE_PREFIX "%08" PRIx32 "-", tag);
	if (tracefs_instances_walk(collect_ours, &l) < 0 && l.error == 0)
		l.error = negative_errno();
	for (size_t k = 0; k < l.n; k++) {
		struct instance *i = NULL;
		int r = instance_adopt_orphan(l.names[k], prefix, &i);

		if (r >= 0)
			r = instance_try_remove(i);
		if (r >= 0) {
			log_notice("Removed orphaned instance '%s'", l.names[k]);
			n++;
		} else if (r == -EBUSY && i) {
			log_warning("Orphaned instance '%s' is busy (a process holds one of its files "
				    "open): %s", l.names[k], busy ? "shrunk, and removed once it is "
				    "free" : "left for the daemon's next start");
			quiet_orphan(i);
			if (busy)
				busy(TAKE_PTR(i), userdata);
		} else {
			log_warning_errno(r, "Removing orphaned instance '%s' failed: %m", l.names[k]);
		}
		instance_abandon(i);
		free(l.names[k]);
	}
	free(l.names);
	return l.error < 0 ? l.error : n;
}

/**
 * instance_clear() - empty every CPU's ring buffer (what ": > trace" does).
 * @i: instance
 *
 * Return: 0 or -errno.
 */
int instance_clear(struct instance *i)
{
	return tracefs_instance_file_clear(i->tfs, "trace") < 0 ? negative_errno() : 0;
}

/* One trace_marker write: an ftrace:print event in this instance's ring. */
int instance_write_marker(struct instance *i, const char *text)
{
	return instance_write_file(i, "trace_marker", text);
}

/**
 * instance_task_comm() - a task's name as the kernel's saved_cmdlines kept it.
 * @pid: the task
 * @buf: receives the name
 * @n: its size
 *
 * For a task that is gone already (/proc no longer has it): the kernel
 * keeps the names of the tasks events were recorded for.
 *
 * Return: 0, -ENOENT if the kernel keeps none for @pid, or -errno.
 */
int instance_task_comm(pid_t pid, char *buf, size_t n)
{
	_cleanup_free_ char *text = tracefs_instance_file_read(NULL, "saved_cmdlines", NULL);

	return text ? saved_cmdlines_find(text, pid, buf, n) : -EIO;
}

/**
 * instance_raise_saved_cmdlines() - make the kernel keep at least @n task names.
 * @n: entries for saved_cmdlines (the pid -> name table every file carries)
 *
 * A top-level setting, shared by every tracer on the machine: only ever
 * raised, so nobody else's larger choice is undone.
 *
 * Return: the size now, or -errno.
 */
int instance_raise_saved_cmdlines(unsigned n)
{
	long long cur;
	char v[16];

	if (tracefs_instance_file_read_number(NULL, "saved_cmdlines_size", &cur) < 0)
		return -EIO;
	if (cur >= n)
		return (int)cur;
	snprintf(v, sizeof(v), "%u", n);
	if (tracefs_instance_file_write(NULL, "saved_cmdlines_size", v) < 0)
		return negative_errno();
	/* The kernel rounds up to fill the pages it allocates. */
	if (tracefs_instance_file_read_number(NULL, "saved_cmdlines_size", &cur) < 0)
		return (int)n;
	return (int)cur;
}

