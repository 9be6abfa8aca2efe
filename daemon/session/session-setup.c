// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Setting a new session up (session_new() calls these in order): its
 * configuration from the request, its event specs expanded against tracefs
 * (-i skips what this kernel lacks), its instance configured (sub-buffer, clock, stack traces, events and their
 * filter, wake-up watermark; the ring itself is sized later on a thread,
 * ring-alloc.c), its directory under the state directory, and the disk
 * room a continuous session's budget needs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "daemon/base/bounds.h"
#include "daemon/base/log.h"
#include "daemon/base/meminfo.h"
#include "daemon/kernel/probe.h"
#include "daemon/session/session-internal.h"
#include "daemon/store/retention.h"
#include "daemon/store/spool.h"
#include "lib/io-util.h"

/* Room for every ftrace event a session's instance can produce, and the NULL. */
#define FTRACE_OFFER_MAX 8

/*
 * The ftrace events the session's own instance produces: its marker files
 * always (and the top level's, where the kernel copies them); with a
 * tracer, that tracer's events; with stacks (-T, --func-stack),
 * kernel_stack. trace_printk() (bprint), where the kernel can send it to an
 * instance, only by name: it is then taken from the top-level buffer and
 * every other instance.
 */
static void ftrace_events_delivered(const struct session_config *c,
				    const char *events[static FTRACE_OFFER_MAX],
				    const char *by_name[static 2])
{
	unsigned n = 0;

	events[n++] = "print";
	events[n++] = "raw_data";
	if (c->tracer.name && strcmp(c->tracer.name, "function") == 0)
		events[n++] = "function";
	if (c->tracer.name && strcmp(c->tracer.name, "function_graph") == 0) {
		events[n++] = "funcgraph_entry";
		events[n++] = "funcgraph_exit";
	}
	if (c->stacktrace || c->tracer.func_stack)
		events[n++] = "kernel_stack";
	events[n] = NULL;
	by_name[0] = instance_gets_trace_printk() ? "bprint" : NULL;
	by_name[1] = NULL;
}

/* Why an ftrace event cannot be recorded by this session, for the client. */
static void ftrace_event_refused(const char *spec, char *error, size_t n_error)
{
	const char *event = strchr(spec, ':') ? strchr(spec, ':') + 1 : "";

	if (strcmp(event, "function") == 0)
		snprintf(error, n_error, "'%s' comes from the function tracer: add -p function",
			 spec);
	else if (strncmp(event, "funcgraph_", 10) == 0)
		snprintf(error, n_error, "'%s' comes from the function_graph tracer: add -p "
			 "function_graph", spec);
	else if (strcmp(event, "kernel_stack") == 0)
		snprintf(error, n_error, "'%s' comes with stack traces: add -T (or --func-stack "
			 "with -p function)", spec);
	else if (strcmp(event, "bprint") == 0)
		snprintf(error, n_error, "'%s' cannot be recorded: this kernel writes "
			 "trace_printk() only to the top-level buffer (it has no "
			 "options/trace_printk_dest)", spec);
	else
		snprintf(error, n_error, "'%s' cannot be recorded: a session's instance produces "
			 "ftrace:print and ftrace:raw_data (its markers), and the events of its "
			 "tracer (-p) and stacks (-T)", spec);
}

/* --probe: the session's own kprobes and uprobes, before its events are looked up. */
static int session_create_probes(struct session *s, char *error, size_t n_error)
{
	if (s->config.n_probes == 0)
		return 0;
	return probe_set_create(s->env.instance_tag, s->id, s->config.probes, s->config.n_probes,
				&s->probes, error, n_error);
}

/*
 * -v: the events of each excluded spec are left out of those the other
 * specs gave, as trace-cmd disables them after enabling the rest. A spec
 * matching nothing is refused as -e's would be (skipped with -i); one
 * naming ftrace events the session does not deliver leaves out nothing.
 */
static int session_exclude_events(struct session *s, struct event_catalog *cat,
				  const struct ftrace_offer *ftrace, char *error, size_t n_error)
{
	char ambiguous[512];

	for (unsigned k = 0; k < s->config.n_excluded; k++) {
		const char *spec = s->config.excluded[k];
		struct event_list gone = {};
		size_t n;
		int r;

		r = event_list_expand(&gone, cat, spec, NULL, ftrace, EVENT_LIST_BYTES_MAX,
				      ambiguous, sizeof(ambiguous));
		n = r >= 0 ? event_list_remove(&s->events, &gone) : 0;
		event_list_done(&gone);
		if (r >= 0 || r == -EOPNOTSUPP || (r == -ENOENT && s->config.ignore_missing)) {
			log_debug("Session '%s': -v '%s' leaves out %zu events", s->name, spec, n);
			continue;
		}
		if (r == -ENOTUNIQ)
			snprintf(error, n_error, "excluded event '%s' (-v) is ambiguous: it could be "
				 "%s; name it with its system", spec, ambiguous);
		else if (r == -ENOENT)
			snprintf(error, n_error, "unknown event '%s' after -v (-i skips events this "
				 "kernel lacks)", spec);
		else if (r == -EINVAL)
			snprintf(error, n_error, "malformed excluded event '%s' (expected SYSTEM, "
				 "SYSTEM:EVENT or EVENT; globs allowed)", spec);
		else
			snprintf(error, n_error, "cannot list the kernel's events for -v '%s': %s",
				 spec, strerror(-r));
		return r;
	}
	if (s->config.n_excluded > 0 && s->events.n == 0 && !s->config.tracer.name &&
	    !s->probes) {
		snprintf(error, n_error, "-v leaves out every event the -e before it gave: "
			 "nothing is left to record");
		return -ENOENT;
	}
	return 0;
}

/*
 * -R: each spec's trigger goes to the events it gave (those -v left). Its
 * spec is expanded again: the list merged every spec's events into one.
 */
static int session_event_triggers(struct session *s, struct event_catalog *cat,
				  const struct ftrace_offer *ftrace, char *error, size_t n_error)
{
	for (unsigned k = 0; s->config.event_triggers && k < s->config.n_events; k++) {
		const char *trigger = s->config.event_triggers[k];
		struct event_list these = {};
		int r;

		if (!trigger || s->skipped[k])
			continue;
		r = event_list_expand(&these, cat, s->config.events[k], NULL, ftrace,
				      EVENT_LIST_BYTES_MAX, NULL, 0);
		if (r >= 0)
			r = event_list_set_trigger(&s->events, &these, trigger);
		event_list_done(&these);
		if (r == -EEXIST) {
			snprintf(error, n_error, "'%s' names an event that already has a different "
				 "trigger (-R): give each event one", s->config.events[k]);
			return r;
		}
		if (r < 0) {
			snprintf(error, n_error, "cannot list the kernel's events for '%s': %s",
				 s->config.events[k], strerror(-r));
			return r;
		}
	}
	return 0;
}

/*
 * The configuration's event specs, each expanded against tracefs with its
 * own filter (-f). With -i, a spec this kernel lacks is skipped (and said
 * so in the log and in status), so one session file serves kernels that
 * differ.
 */
static int session_expand_events(struct session *s, char *error, size_t n_error)
{
	_cleanup_(event_catalog_freep) struct event_catalog *cat = NULL;
	const char *events[FTRACE_OFFER_MAX], *by_name[2];
	const struct ftrace_offer ftrace = { .events = events, .by_name = by_name };
	char ambiguous[512];
	unsigned n_skipped = 0;
	int r;

	ftrace_events_delivered(&s->config, events, by_name);
	s->skipped = calloc(MAX(s->config.n_events, 1u), sizeof(*s->skipped));
	if (!s->skipped) {
		snprintf(error, n_error, "out of memory");
		return -ENOMEM;
	}
	r = event_catalog_new(NULL, &cat);
	if (r < 0) {
		snprintf(error, n_error, "cannot list the kernel's events: %s", strerror(-r));
		return r;
	}
	for (unsigned k = 0; k < s->config.n_events; k++) {
		const char *spec = s->config.events[k];
		const char *filter = s->config.event_filters ? s->config.event_filters[k] : NULL;

		r = event_list_expand(&s->events, cat, spec, filter, &ftrace, EVENT_LIST_BYTES_MAX,
				      ambiguous, sizeof(ambiguous));
		if (r == -ENOENT && s->config.ignore_missing) {
			log_warning("Session '%s': this kernel has no event '%s', skipping it (-i)",
				    s->name, spec);
			s->skipped[k] = true;
			n_skipped++;
			continue;
		}
		if (r == -E2BIG) {
			snprintf(error, n_error, "too many events: with '%s' the session's event names "
				 "would take more than %u KiB (EVENT_LIST_BYTES_MAX)", spec,
				 EVENT_LIST_BYTES_MAX / 1024);
			return r;
		}
		if (r == -ENOTUNIQ) {
			snprintf(error, n_error, "event '%s' is ambiguous: it could be %s; name it "
				 "with its system", spec, ambiguous);
			return r;
		}
		if (r == -EOPNOTSUPP) {
			ftrace_event_refused(spec, error, n_error);
			return r;
		}
		if (r == -EEXIST) {
			snprintf(error, n_error, "'%s' names an event that already has a different "
				 "filter (-f): give each event one filter", spec);
			return r;
		}
		if (r == -EINVAL) {
			snprintf(error, n_error, "malformed event '%s' (expected all, SYSTEM, "
				 "SYSTEM:EVENT or EVENT; globs allowed)", spec);
			return r;
		}
		if (r == -ENOENT) {
			snprintf(error, n_error, "unknown event '%s'%s", spec,
				 s->config.ignore_missing ? "" : " (-i skips events this kernel lacks)");
			return r;
		}
		if (r < 0) {
			snprintf(error, n_error, "cannot list the kernel's events for '%s': %s", spec,
				 strerror(-r));
			return r;
		}
	}
	r = session_exclude_events(s, cat, &ftrace, error, n_error);
	if (r >= 0)
		r = session_event_triggers(s, cat, &ftrace, error, n_error);
	if (r < 0)
		return r;
	/* Every probe of the session is recorded: its group is the session's own. */
	if (s->probes) {
		r = event_list_expand(&s->events, cat, probe_set_system(s->probes), NULL, &ftrace,
				      EVENT_LIST_BYTES_MAX, NULL, 0);
		if (r < 0) {
			snprintf(error, n_error, "cannot find the session's probes in tracefs: %s",
				 strerror(-r));
			return r;
		}
	}
	if (s->config.n_events > 0 && n_skipped == s->config.n_events && !s->config.tracer.name &&
	    !s->probes) {
		snprintf(error, n_error, "this kernel has none of the events asked for");
		return -ENOENT;
	}
	return 0;
}

/*
 * The daemon's own threads (/proc/self/task): the capture workers and the
 * main thread, and any other running now. Threads started later are left
 * out through event-fork (instance-setup.c).
 */
static int own_threads(uint32_t **ret, unsigned *ret_n)
{
	_cleanup_free_ uint32_t *tids = NULL;
	unsigned n = 0, n_allocated = 0;
	struct dirent *de;
	DIR *d;

	d = opendir("/proc/self/task");
	if (!d)
		return negative_errno();
	while ((de = readdir(d))) {
		unsigned long tid;
		char *end;

		tid = strtoul(de->d_name, &end, 10);
		if (*end || tid == 0 || tid > INT32_MAX)
			continue;
		if (n == n_allocated) {
			uint32_t *t = reallocarray(tids, n ? n * 2 : 64, sizeof(*t));

			if (!t) {
				closedir(d);
				return -ENOMEM;
			}
			tids = t;
			n_allocated = n ? n * 2 : 64;
		}
		tids[n++] = (uint32_t)tid;
	}
	closedir(d);
	*ret = TAKE_PTR(tids);
	*ret_n = n;
	return 0;
}

/* Sets up the kernel side: instance, buffer, clock, events, filter, wake-up watermark. */
int session_configure_instance(struct session *s, char *error, size_t n_error)
{
	const struct session_config *c = &s->config;
	struct instance_setup setup = {
		.buffer_kb = 0, /* sized on a thread once the rest is set, see ring-alloc.c */
		.subbuf_kb = c->subbuf_kb,
		.subbuf_kb_preferred = subbuf_kb_preferred(c->buffer_kb),
		.clock = c->clock,
		.filter = c->filter,
		.events = &s->events,
		.stacktrace = c->stacktrace,
		.n_pids = c->n_pids,
		.pids = c->pids,
		.follow_fork = c->follow_fork,
		.tracer = &c->tracer,
		.n_options = c->n_trace_options,
		.options = c->trace_options,
		.cpumask = c->cpumask,
	};
	_cleanup_free_ uint32_t *threads = NULL;
	unsigned n_threads = 0;
	int r;

	if (!c->no_filter) {
		r = own_threads(&threads, &n_threads);
		if (r < 0)
			log_warning_errno(r, "Session '%s': cannot list ftraced's own threads, they "
					  "stay in the trace: %m", s->name);
		setup.n_exclude_pids = n_threads;
		setup.exclude_pids = threads;
	}
	if (c->mode == FTRACED_MODE_FLIGHT && c->backend == FTRACED_FLIGHT_PERSISTENT) {
		r = instance_adopt_boot_mapped(c->boot_instance, &s->instance, error, n_error);
		if (r < 0)
			return r;
	} else if (c->top_level) {
		r = instance_lease_take(s->env.state_dir_fd, s->name, &s->events, &s->lease,
					&s->instance, error, n_error);
		if (r < 0)
			return r;
	} else {
		r = instance_new(s->env.instance_tag, s->id, &s->instance);
		if (r < 0) {
			snprintf(error, n_error, "cannot create tracefs instance: %s",
				 strerror(-r));
			return r;
		}
	}
	r = instance_configure(s->instance, &setup, error, n_error);
	if (r < 0) {
		s->kernel_refused = instance_kernel_refused(s->instance);
		return r;
	}
	r = metadata_read(&s->imeta, s->instance);
	if (r < 0) {
		snprintf(error, n_error, "cannot read the instance's header_page: %s", strerror(-r));
		return r;
	}
	/*
	 * One wall-clock anchor for all the session's files, so that they line
	 * up exactly with each other; a counter clock has none.
	 */
	r = s->env.clock_anchor ? clock_anchor_date(s->env.clock_anchor, s->imeta.clock, s->date) : 0;
	if (r < 0 && r != -EOPNOTSUPP) {
		snprintf(s->note, sizeof(s->note), "no wall-clock anchor for clock %s (%s): its "
			 "files have trace-clock times only, readers cannot show the time of day",
			 s->imeta.clock, strerror(-r));
		log_warning("Session '%s': %s", s->name, s->note);
	}
	if (c->mode != FTRACED_MODE_FLIGHT || c->backend == FTRACED_FLIGHT_MEMORY) {
		/*
		 * Readers wake when a CPU's buffer is half full by default: a stop
		 * (or a flight snapshot's flush) would find up to half the buffer
		 * still to compress, segments could not be cut finer, and a reader
		 * woken late finds the other half overwritten already. Wake once a
		 * batch is there (CAPTURE_BATCH_BYTES), or about every
		 * SEGMENT_SIZE_CHECKS-th of a segment per CPU if that is less, and
		 * by WAKE_PERCENT_MAX of the buffer at the latest. The work per
		 * event is the same; only the wake-ups are more frequent.
		 */
		uint64_t buffer_bytes = (uint64_t)c->buffer_kb * 1024;
		uint64_t wake = CAPTURE_BATCH_BYTES;
		unsigned percent;

		if (session_segment_limit(s) > 0)
			wake = MIN(wake, session_segment_limit(s) / s->cpus.n_cpus /
					 SEGMENT_SIZE_CHECKS);
		/* Rounded up: a wake-up brings at least a batch (see capture_stream_new()). */
		percent = buffer_bytes == 0 ? WAKE_PERCENT_MAX :
			  (unsigned)MIN((uint64_t)WAKE_PERCENT_MAX,
					MAX((uint64_t)1, (wake * 100 + buffer_bytes - 1) / buffer_bytes));
		r = instance_set_buffer_percent(s->instance, percent);
		if (r < 0)
			log_warning_errno(r, "Session '%s': cannot set buffer_percent, stops may take "
					  "longer and segments grow past their size: %m", s->name);
		else
			s->wake_bytes = buffer_bytes * percent / 100;
	}
	return 0;
}

/*
 * Whose files a session directory holds (its owner's uid, written when it
 * is made): a name another user made before, even a destroyed session's,
 * is refused, so a group member never gets retention over root's files.
 * Root may use any name. A directory of files from before owners were
 * written (a manifest, no owner) is root's.
 */
static int claim_dir(struct session *s, char *error, size_t n_error)
{
	char text[24] = "", mine[24];
	unsigned long owner;
	ssize_t n = 0;
	int fd, r;

	fd = openat(s->dir_fd, SESSION_OWNER_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno != ENOENT) {
		r = negative_errno();
		snprintf(error, n_error, "cannot read the owner of the session's directory: %s",
			 strerror(-r));
		return r;
	}
	if (fd >= 0) {
		n = read(fd, text, sizeof(text) - 1);
		close(fd);
		owner = n > 0 ? strtoul(text, NULL, 10) : 0;
	} else {
		owner = faccessat(s->dir_fd, RETENTION_MANIFEST, F_OK, AT_SYMLINK_NOFOLLOW) == 0 ?
			0 : (unsigned long)s->owner;
	}
	if (owner != (unsigned long)s->owner && s->owner != 0) {
		snprintf(error, n_error, "the name '%s' holds another user's files in the state "
			 "directory (uid %lu): choose another name", s->name, owner);
		return -EEXIST;
	}
	if (fd >= 0)
		return 0;
	snprintf(mine, sizeof(mine), "%lu\n", owner);
	r = replace_file_at(s->dir_fd, SESSION_OWNER_FILE, mine, strlen(mine), 0600);
	if (r < 0)
		snprintf(error, n_error, "cannot write the owner of the session's directory: %s",
			 strerror(-r));
	return r;
}

/* Opens the session's directory, STATE_DIR/sessions/<name>, creating it, and claims it. */
static int session_open_dir(struct session *s, char *error, size_t n_error)
{
	int sessions_fd, r;

	if (mkdirat(s->env.state_dir_fd, SESSIONS_DIR, 0700) < 0 && errno != EEXIST)
		goto failed;
	sessions_fd = openat(s->env.state_dir_fd, SESSIONS_DIR,
			     O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (sessions_fd < 0)
		goto failed;
	/* The name is [A-Za-z0-9_-]{1,64} (checked by the protocol parser): no path tricks. */
	if (mkdirat(sessions_fd, s->name, 0750) < 0 && errno != EEXIST) {
		close(sessions_fd);
		goto failed;
	}
	s->dir_fd = openat(sessions_fd, s->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	r = s->dir_fd < 0 ? negative_errno() : 0;
	close(sessions_fd);
	if (r < 0) {
		snprintf(error, n_error, "cannot create the session's directory: %s", strerror(-r));
		return r;
	}
	return claim_dir(s, error, n_error);
failed:
	r = negative_errno();
	snprintf(error, n_error, "cannot create the session's directory: %s", strerror(-r));
	return r;
}

/*
 * The size at which a continuous session's segment closes: its
 * --segment-size, or with --segment-time alone SEGMENT_SIZE_MAX, which
 * trace-cmd still reads and a CPU's in-place region holds. 0: none (not
 * continuous).
 */
uint64_t session_segment_limit(const struct session *s)
{
	if (s->config.mode != FTRACED_MODE_CONTINUOUS)
		return 0;
	return s->config.segment_size ?: SEGMENT_SIZE_MAX;
}

/*
 * Whether a continuous session's segments are spooled in place, so that
 * closing one moves no data (see spool.c): they must be compressed, of a
 * bounded size (a CPU's region must hold one), and the spool directory
 * and the session's directory on one file system (the file is renamed
 * from one to the other).
 */
_Static_assert(SEGMENT_SIZE_MAX <= SPOOL_REGION_MIN / 2,
	       "a CPU's region holds a whole segment, and a late rotation's worth more");

static bool session_spools_in_place(const struct session *s)
{
	struct stat state, dir;

	return s->config.zstd && session_segment_limit(s) > 0 &&
	       fstat(s->env.state_dir_fd, &state) == 0 && fstat(s->dir_fd, &dir) == 0 &&
	       state.st_dev == dir.st_dev;
}

/*
 * --keep-free against the file system the segments go to: refused when
 * even an empty file system could not hold one segment besides the space
 * to keep free; a warning when today's free space cannot.
 */
static int session_check_disk_room(struct session *s, char *error, size_t n_error)
{
	const struct retention_limits *l = &s->config.retention;
	uint64_t segment = s->config.segment_size ?: SEGMENT_SIZE_MIN, size, avail, keep;
	struct statvfs sv;

	if (fstatvfs(s->dir_fd, &sv) < 0)
		return 0; /* retention will say so when it runs */
	size = (uint64_t)sv.f_blocks * sv.f_frsize;
	avail = (uint64_t)sv.f_bavail * sv.f_frsize;
	keep = MAX(l->keep_free, size / 100 * l->keep_free_percent);
	if (keep + segment > size) {
		snprintf(error, n_error, "--keep-free leaves no room for one segment: the file "
			 "system of the state directory holds %" PRIu64 " KiB, %" PRIu64 " KiB are "
			 "to be kept free and a segment takes %" PRIu64 " KiB", size / 1024,
			 keep / 1024, segment / 1024);
		return -ENOSPC;
	}
	if (keep + segment > avail)
		log_warning("Session '%s': only %" PRIu64 " KiB are free and %" PRIu64 " KiB are to "
			    "be kept free: segments will be deleted as they close until space is "
			    "freed", s->name, avail / 1024, keep / 1024);
	return 0;
}

/*
 * --max-total against what one closed segment really takes: its events up
 * to the segment size, noticed up to a notification step later (an
 * eighth), then each CPU's chunk under way when the cut comes (up to
 * CHUNK_TARGET_BYTES, whole sub-buffers, stored no larger than raw), and
 * the metadata of this kernel, mostly symbols, megabytes without
 * compression. A smaller budget deletes each segment as it closes and
 * keeps nothing. A segment cut by time alone has no size bound: the
 * smallest segment counts, and the events decide the rest. max-files
 * needs no such check: at least one file is always kept.
 */
static int session_check_budget(struct session *s, char *error, size_t n_error)
{
	uint64_t segment = s->config.segment_size ?: SEGMENT_SIZE_MIN, overhead, min, chunk;
	_cleanup_free_ char *cpustat = NULL;
	struct cpu_counters c;
	int r;

	if (!s->config.retention.max_total)
		return 0;
	(void)instance_read_cpu_stats(s->instance, 0, &c, &cpustat); /* none: no CPUSTAT text */
	r = segment_overhead(&s->segment_env, cpustat, &overhead);
	if (r < 0) {
		snprintf(error, n_error, "cannot read the metadata a segment carries: %s",
			 strerror(-r));
		return r;
	}
	chunk = MAX(1u, CHUNK_TARGET_BYTES / s->imeta.subbuf_size) * (uint64_t)s->imeta.subbuf_size;
	min = segment + segment / SEGMENT_SIZE_CHECKS + s->cpus.n_cpus * chunk + overhead;
	if (s->config.retention.max_total >= min)
		return 0;
	snprintf(error, n_error, "--max-total %" PRIu64 " KiB cannot hold one segment: with "
		 "compression %s a segment of %" PRIu64 " KiB%s, up to a chunk more per CPU, "
		 "carries %" PRIu64 " KiB of metadata (symbols, formats) on this kernel, so every "
		 "segment would be deleted as it closes; --max-total must be at least %" PRIu64
		 " KiB", s->config.retention.max_total / 1024, s->config.zstd ? "zstd" : "none",
		 segment / 1024, s->config.segment_size ? "" : " (or more: it is cut by time)",
		 overhead / 1024, (min + 1023) / 1024);
	return -EINVAL;
}

/*
 * -r PRIO: the workers switch to SCHED_FIFO themselves. What they may take
 * was settled at start (priv_realtime_allowed()): refused here, with the
 * remedy, rather than by a worker that could only log it.
 */
static int check_rt_priority(unsigned priority, unsigned allowed, char *error, size_t n_error)
{
	if (priority == 0 || priority <= allowed)
		return 0;
	if (allowed == 0)
		snprintf(error, n_error, "real-time scheduling (-r) is off in this daemon: set "
			 "rt-priority-max in ftraced.conf (under systemd, with LimitRTPRIO= and "
			 "RestrictRealtime=no in ftraced.service; see ftraced.conf(5))");
	else
		snprintf(error, n_error, "real-time priority %u is above this daemon's "
			 "rt-priority-max (%u)", priority, allowed);
	return -EPERM;
}

/**
 * session_setup_config() - a new session's configuration, streams and events.
 * @s: a new session with its env, owner and publisher
 * @req: the parsed request
 * @n_cpus: the capture pool's CPUs
 * @error: receives a message for the client on failure
 * @n_error: its size
 *
 * Return: 0, or -errno with @error set.
 */
int session_setup_config(struct session *s, const struct ctl_request *req, unsigned n_cpus,
			 char *error, size_t n_error)
{
	struct memory_budget mem = {
		.available_kb = meminfo_kb("MemAvailable"),
		.limit = s->env.memory_limit,
		.committed = s->env.memory_committed,
	};
	int r;

	r = session_config_from_request(req, s->owner, n_cpus, &mem, &s->config, error, n_error);
	if (r < 0)
		return r;
	r = check_rt_priority(s->config.rt_priority, s->env.rt_priority_max, error, n_error);
	if (r < 0)
		return r;
	s->publisher.on_segment = s->config.on_segment;
	r = stream_set_init(&s->cpus, n_cpus);
	if (r < 0) {
		snprintf(error, n_error, "out of memory");
		return r;
	}
	r = session_create_probes(s, error, n_error);
	if (r < 0)
		return r;
	return session_expand_events(s, error, n_error);
}

/**
 * session_check_config() - what session_setup_config() checks, with nothing made.
 * @s: a session with its env and owner, made only to be checked and freed
 * @req: the parsed request
 * @n_cpus: the capture pool's CPUs
 * @error: receives a message on failure
 * @n_error: its size
 *
 * For a reload that must know a file is good before it stops the session
 * the file's old version runs: its options, and its events against this
 * kernel. Not the memory limit over all sessions (the session a changed
 * file replaces gives its memory back first: that is checked when it is
 * made), nor events of its own probes (they exist once the probes do).
 *
 * Return: 0, or -errno with @error set.
 */
int session_check_config(struct session *s, const struct ctl_request *req, unsigned n_cpus,
			 char *error, size_t n_error)
{
	struct memory_budget mem = { .available_kb = meminfo_kb("MemAvailable") };
	int r;

	r = session_config_from_request(req, s->owner, n_cpus, &mem, &s->config, error, n_error);
	if (r < 0)
		return r;
	r = check_rt_priority(s->config.rt_priority, s->env.rt_priority_max, error, n_error);
	if (r < 0 || s->config.n_probes > 0)
		return r;
	return session_expand_events(s, error, n_error);
}

/**
 * session_setup_files() - where a configured session's files go, and the room they need.
 * @s: a session with its instance configured and its event fd
 * @error: receives a message for the client on failure
 * @n_error: its size
 *
 * Return: 0, or -errno with @error set.
 */
int session_setup_files(struct session *s, char *error, size_t n_error)
{
	int r;

	s->segment_env = (struct segment_env){
		.state_dir_fd = s->env.state_dir_fd,
		.notify_fd = s->event_fd,
		.imeta = &s->imeta,
		.events = &s->events,
		.instance_name = instance_name(s->instance),
		.kallsyms = s->env.kallsyms,
		.date = s->date,
		.procmaps = s->config.proc_map ? &s->procmaps : NULL,
		.written = s->env.written,
		.n_cpus = s->cpus.n_cpus,
		.zstd = s->config.zstd,
		.level = s->config.level,
	};
	/*
	 * record -m: a CPU's ring evicts whole chunks, and its chunks are
	 * whole sub-buffers (at least one), so the least it can keep is one.
	 */
	if (s->config.keep_size && s->config.keep_size < s->imeta.subbuf_size) {
		snprintf(error, n_error, "-m %" PRIu64 " is less than one sub-buffer: the least a "
			 "CPU can keep is one sub-buffer, %" PRIu32 " KiB here (--subbuf-kb); use "
			 "-m %" PRIu32 " or more", s->config.keep_size / 1024,
			 s->imeta.subbuf_size / 1024, s->imeta.subbuf_size / 1024);
		return -EINVAL;
	}
	if (s->config.mode != FTRACED_MODE_RECORD) {
		r = session_open_dir(s, error, n_error);
		if (r < 0)
			return r;
		s->publisher.dir_fd = s->dir_fd;
	}
	if (s->config.mode == FTRACED_MODE_CONTINUOUS) {
		s->segment_env.in_place = session_spools_in_place(s);
		r = session_check_disk_room(s, error, n_error);
		if (r < 0)
			return r;
		r = session_check_budget(s, error, n_error);
		if (r < 0)
			return r;
	}
	return 0;
}
