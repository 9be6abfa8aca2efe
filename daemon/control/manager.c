// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The top object: the sd-event loop, start-up, signals (stop, reload),
 * the watchdog, the control server, the capture pool and the metrics. The
 * session table, the request handlers and the reply routing are the
 * controller's (controller.c). It shuts down by stopping every session and
 * waiting until each file is complete.
 *
 * Main thread only.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <grp.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "daemon/base/bounds.h"
#include "daemon/capture/capture.h"
#include "daemon/control/controller.h"
#include "daemon/control/ctl-server.h"
#include "daemon/control/daemon-config.h"
#include "daemon/kernel/instance.h"
#include "daemon/kernel/instance-lease.h"
#include "daemon/kernel/clock-anchor.h"
#include "daemon/kernel/kallsyms.h"
#include "daemon/base/log.h"
#include "daemon/kernel/probe.h"
#include "daemon/control/manager.h"
#include "daemon/store/hold.h"
#include "daemon/store/metadata.h"
#include "daemon/control/metrics-file.h"
#include "daemon/control/privileges.h"
#include "daemon/recovery/recovery.h"
#include "daemon/output/runner.h"
#include "daemon/store/sessions-dir.h"
#include "daemon/store/spool.h"
#include "daemon/store/state-dir.h"
#include "daemon/base/task-limit.h"
#include "lib/ctl/ctl-proto.h"
#include "lib/io-util.h"

struct manager {
	sd_event *event;
	struct ctl_server *server;
	struct capture_pool *pool;
	struct controller *controller; /* the session table and the requests that change it */
	int state_dir_fd;
	int hold_dir_fd; /* hold.h: what capture workers took and have not stored; -EBADF */
	int lock_fd;
	uint32_t instance_tag;
	struct instance **busy_orphans; /* from start-up to the controller's reaper */
	size_t n_busy_orphans;
	struct kallsyms *kallsyms;
	struct clock_anchor *clock_anchor; /* every file's wall-clock anchor (DATE) */
	struct runner *runner;
	bool exiting;
	uint64_t watchdog_usec;    /* WatchdogSec= of the unit, or 0 */
	bool watchdog_withheld;    /* a worker is stuck: no WATCHDOG=1 until it moves again */
	_Atomic uint64_t written;   /* bytes written to spools and files, by every thread */
	uint64_t written_at_extend; /* written when time was last asked for */
	sd_event_source *extend_timer;
	uint64_t started_usec;     /* CLOCK_MONOTONIC, for the uptime in the metrics */
	struct metrics_file *metrics; /* NULL: no metrics-directory */
	struct daemon_config settings; /* ftraced.conf as last read */
	unsigned rt_allowed_max;   /* the highest -r real-time scheduling allowed at start */
	const char *config_path;   /* ftraced.conf, read again at each reload */
	const char *sessions_dir;  /* sessions.d, read again at each reload; NULL: none */
};

/* Sessions changed: tell systemd, rewrite the metrics file, and exit once the last went. */
static void on_sessions_changed(void *userdata)
{
	struct manager *m = userdata;
	unsigned n = controller_n_sessions(m->controller);

	sd_notifyf(false, "STATUS=%u session(s)", n);
	metrics_file_update(m->metrics, controller_any_running(m->controller));
	if (m->exiting && n == 0)
		sd_event_exit(m->event, 0);
}

/* The daemon's own counters, for `ftracectl metrics` and the metrics file. */
static void describe_daemon(void *userdata, struct ctl_builder *b)
{
	struct manager *m = userdata;
	const struct ctl_server_counters *sc = ctl_server_counters(m->server);
	uint64_t now = 0;
	struct ftraced_daemon_counters d;
	char holder[FTRACED_NAME_MAX + 1];
	struct timespec cpu;

	sd_event_now(m->event, CLOCK_MONOTONIC, &now);
	d = (struct ftraced_daemon_counters){
		.uptime_ms = (now - m->started_usec) / 1000,
		.connections = sc ? sc->connections : 0,
		.connections_refused = sc ? sc->connections_refused : 0,
		.requests = sc ? sc->requests : 0,
		.request_errors = sc ? sc->request_errors : 0,
		.sessions_started = controller_sessions_started(m->controller),
	};
	runner_counts(m->runner, &d.hooks_run, &d.hooks_failed);
	ctl_put_daemon_counters(b, &d);
	/* From the lease's journal: a session's name, as the holder wrote it. */
	if (instance_lease_holder(m->state_dir_fd, holder, sizeof(holder)) > 0 &&
	    ctl_name_valid(holder))
		ctl_put_string(b, FTRACED_ATTR_LEASE_HOLDER, holder);
	/* Every thread's, those that ended too, to the nanosecond (/proc's are clock ticks). */
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu) == 0)
		ctl_put_u64(b, FTRACED_ATTR_DAEMON_CPU,
			    (uint64_t)cpu.tv_sec * 1000000 + (uint64_t)cpu.tv_nsec / 1000);
}

static void fill_metrics(void *userdata, struct ctl_builder *b)
{
	struct manager *m = userdata;

	controller_describe(m->controller, b, NULL);
}

static void handle_reload(struct manager *m, struct ctl_conn *conn);

static void on_request(void *userdata, struct ctl_conn *c, const struct ctl_request *req, int fd)
{
	struct manager *m = userdata;

	/* The daemon's, not the session table's: ftraced.conf too. */
	if (req->type == FTRACED_MSG_RELOAD) {
		safe_close(fd);
		handle_reload(m, c);
		return;
	}
	controller_request(m->controller, c, req, fd);
}

static void on_conn_closed(void *userdata, struct ctl_conn *c)
{
	struct manager *m = userdata;

	controller_conn_closed(m->controller, c);
}

static bool conn_busy(void *userdata, const struct ctl_conn *c)
{
	struct manager *m = userdata;

	return controller_conn_busy(m->controller, c);
}

/* Timers fire once: the next turn of a periodic one. */
static int rearm(sd_event_source *source, uint64_t usec)
{
	int r = sd_event_source_set_time_relative(source, usec);

	return r < 0 ? r : sd_event_source_set_enabled(source, SD_EVENT_ONESHOT);
}

/*
 * WATCHDOG=1 only while every capture worker takes its turns: a worker
 * blocked for good means lost data, and a restart is the way out.
 */
static int on_watchdog(sd_event_source *source, uint64_t usec, void *userdata)
{
	struct manager *m = userdata;
	uint64_t age;
	unsigned cpu;

	if (capture_pool_stalled(m->pool, MAX(m->watchdog_usec / 2, CAPTURE_STALL_USEC), &cpu,
				 &age)) {
		if (!m->watchdog_withheld)
			log_error("The capture worker of CPU %u has made no progress for %" PRIu64
				  " ms: no longer telling the watchdog that all is well", cpu,
				  age / 1000);
		m->watchdog_withheld = true;
	} else {
		if (m->watchdog_withheld)
			log_notice("The capture workers make progress again");
		m->watchdog_withheld = false;
		sd_notify(false, "WATCHDOG=1");
	}
	return rearm(source, m->watchdog_usec / 4);
}

/* Test hook (FTRACED_TEST_HOOKS=1 in the environment): SIGUSR2 blocks CPU 0's worker. */
static int on_test_stall(sd_event_source *source, const struct signalfd_siginfo *si,
			 void *userdata)
{
	struct manager *m = userdata;

	return capture_pool_test_stall(m->pool, 0);
}

/*
 * While shutting down: more time from the service manager as long as files
 * are still being written, none once the bytes stop moving.
 */
static int on_extend(sd_event_source *source, uint64_t usec, void *userdata)
{
	struct manager *m = userdata;
	uint64_t written = atomic_load_explicit(&m->written, memory_order_relaxed), age;
	unsigned cpu;

	if (written != m->written_at_extend && !capture_pool_stalled(m->pool, STOP_EXTEND_USEC,
								     &cpu, &age))
		sd_notifyf(false, "EXTEND_TIMEOUT_USEC=%" PRIu64, STOP_EXTEND_USEC);
	m->written_at_extend = written;
	return rearm(source, STOP_EXTEND_INTERVAL_USEC);
}

static int on_signal(sd_event_source *source, const struct signalfd_siginfo *si, void *userdata)
{
	struct manager *m = userdata;
	int r;

	if (m->exiting)
		return 0;
	m->exiting = true;
	log_info("Received %s, finishing %u session(s) and exiting", strsignal((int)si->ssi_signo),
		 controller_n_sessions(m->controller));
	sd_notifyf(false, "STOPPING=1\nEXTEND_TIMEOUT_USEC=%" PRIu64, STOP_EXTEND_USEC);
	m->written_at_extend = atomic_load_explicit(&m->written, memory_order_relaxed);
	r = sd_event_add_time_relative(m->event, &m->extend_timer, CLOCK_MONOTONIC,
				       STOP_EXTEND_INTERVAL_USEC, 0, on_extend, m);
	if (r < 0)
		log_warning_errno(r, "Cannot ask the service manager for more time to stop: %m");
	/* Records finish their file; the others close their segment and go. */
	controller_shutdown(m->controller);
	on_sessions_changed(m);
	return 0;
}

static struct controller_limits limits_from(const struct daemon_config *settings,
					    unsigned rt_allowed_max)
{
	return (struct controller_limits){
		.memory_limit = daemon_config_memory_limit(settings),
		.group_symbols = settings->group_symbols,
		.rt_priority_max = MIN(settings->rt_priority_max, rt_allowed_max),
	};
}

static struct controller_limits limits_of(const struct manager *m)
{
	return limits_from(&m->settings, m->rt_allowed_max);
}

static void add_key(char *buf, size_t n, bool *first, const char *key)
{
	size_t len = strnlen(buf, n);

	snprintf(buf + len, n - len, "%s%s", *first ? "" : ", ", key);
	*first = false;
}

/*
 * ftraced.conf's new settings, checked: those that apply to running
 * daemons are applied, the others said to need a restart. @summary gets
 * one clause.
 */
static void apply_settings(struct manager *m, const struct daemon_config *settings,
			   char *summary, size_t n_summary)
{
	char applied[256] = "", later[128] = "";
	bool first = true, first_later = true;
	struct controller_limits limits;

	if (strcmp(settings->metrics_directory, m->settings.metrics_directory) != 0 ||
	    settings->metrics_interval_ms != m->settings.metrics_interval_ms) {
		log_notice("metrics-directory and metrics-interval take effect at the next start, "
			   "ignoring their change");
		add_key(later, sizeof(later), &first_later, "metrics-directory/-interval");
	}
	if (settings->capture_nice != m->settings.capture_nice) {
		log_notice("capture-nice takes effect at the next start (the capture workers are "
			   "made then), ignoring its change");
		add_key(later, sizeof(later), &first_later, "capture-nice");
	}
	if (settings->rt_priority_max > m->rt_allowed_max)
		log_notice("rt-priority-max = %u needs a restart (what real-time scheduling allows "
			   "is found at start); -r stays at most %u", settings->rt_priority_max,
			   m->rt_allowed_max);
	if (settings->memory_limit != m->settings.memory_limit ||
	    settings->memory_limit_percent != m->settings.memory_limit_percent)
		add_key(applied, sizeof(applied), &first, "memory-limit");
	if (settings->group_symbols != m->settings.group_symbols)
		add_key(applied, sizeof(applied), &first, "group-symbols");
	if (settings->rt_priority_max != m->settings.rt_priority_max)
		add_key(applied, sizeof(applied), &first, "rt-priority-max");
	m->settings.rt_priority_max = settings->rt_priority_max;
	m->settings.memory_limit = settings->memory_limit;
	m->settings.memory_limit_percent = settings->memory_limit_percent;
	m->settings.group_symbols = settings->group_symbols;
	/* Raised only, never lowered: other tools' captures may rely on the kernel's table. */
	if (settings->saved_cmdlines > m->settings.saved_cmdlines) {
		int r = instance_raise_saved_cmdlines(settings->saved_cmdlines);

		if (r < 0)
			log_warning_errno(r, "Cannot raise saved_cmdlines_size to %u: %m",
					  settings->saved_cmdlines);
		else {
			m->settings.saved_cmdlines = settings->saved_cmdlines;
			add_key(applied, sizeof(applied), &first, "saved-cmdlines");
		}
	}
	limits = limits_of(m);
	controller_set_limits(m->controller, &limits);
	snprintf(summary, n_summary, "ftraced.conf: %s%s%s%s", applied[0] ? applied : "",
		 applied[0] ? " applied" : (later[0] ? "" : "unchanged"),
		 later[0] ? (applied[0] ? ", " : "") : "", later);
	if (later[0])
		snprintf(summary + strlen(summary), n_summary - strlen(summary),
			 " at the next start");
}

/*
 * A reload, from SIGHUP or `ftracectl reload` (one path for both), as
 * nginx -s reload does it: ftraced.conf and sessions.d are read and
 * checked whole first, and only if all of it is valid is anything
 * applied; otherwise nothing changes, and running sessions go on as they
 * were. Nothing captured is touched either way. Logged either way.
 *
 * Return: 0 with @summary (what changed, one line), or -errno with @error.
 */
static int reload(struct manager *m, char *summary, size_t n_summary, char *error,
		  size_t n_error)
{
	_cleanup_(session_files_done) struct session_files files = {};
	struct daemon_config settings;
	struct controller_limits next;
	size_t len;
	int r;

	sd_notify(false, "RELOADING=1\nSTATUS=Reloading");
	r = daemon_config_read(m->config_path, &settings, error, n_error);
	if (r >= 0 && m->sessions_dir) {
		r = sessions_dir_read(m->sessions_dir, SESSION_FILES_MAX, &files);
		if (r < 0)
			snprintf(error, n_error, "cannot read '%s': %s", m->sessions_dir,
				 strerror(-r));
	}
	if (r >= 0) {
		next = limits_from(&settings, m->rt_allowed_max);
		r = controller_check_session_files(m->controller, &files, &next, error, n_error);
	}
	if (r < 0) {
		log_error("Reload refused, nothing changed: %s", error);
	} else {
		apply_settings(m, &settings, summary, n_summary);
		len = strlen(summary);
		if (m->sessions_dir && len + 2 < n_summary) {
			snprintf(summary + len, n_summary - len, "; ");
			controller_apply_session_files(m->controller, m->sessions_dir, &files,
						       summary, n_summary);
		}
		log_notice("Reloaded: %s", summary);
	}
	sd_notifyf(false, "READY=1\nSTATUS=%u session(s)", controller_n_sessions(m->controller));
	return r;
}

/* SIGHUP: a reload, as daemons do; its result goes to the log. */
static int on_reload(sd_event_source *source, const struct signalfd_siginfo *si, void *userdata)
{
	char summary[FTRACED_MESSAGE_MAX] = "", error[FTRACED_MESSAGE_MAX] = "";
	struct manager *m = userdata;

	if (m->exiting)
		return 0;
	log_info("Received SIGHUP, reading '%s'%s%s again", m->config_path,
		 m->sessions_dir ? " and " : "", m->sessions_dir ?: "");
	(void)reload(m, summary, sizeof(summary), error, sizeof(error)); /* logged */
	return 0;
}

/*
 * RELOAD: the same reload, answered: OK with what changed (NOTE), or the
 * error. Root only, as SIGHUP is: a reload starts and stops every
 * session of sessions.d.
 */
static void handle_reload(struct manager *m, struct ctl_conn *conn)
{
	char summary[FTRACED_MESSAGE_MAX] = "", error[FTRACED_MESSAGE_MAX] = "";
	static struct ctl_builder b;
	uid_t uid = ctl_conn_uid(conn);
	int r;

	if (uid != 0) {
		ctl_conn_send_error(conn, -EPERM, "permission denied: only root may reload ftraced "
				    "(as only root may send it SIGHUP)");
		return;
	}
	if (m->exiting) {
		ctl_conn_send_error(conn, -ESHUTDOWN, "ftraced is shutting down");
		return;
	}
	log_info("Reload asked for on the control socket, reading '%s'%s%s again",
		 m->config_path, m->sessions_dir ? " and " : "", m->sessions_dir ?: "");
	r = reload(m, summary, sizeof(summary), error, sizeof(error));
	if (r < 0) {
		ctl_conn_send_error(conn, r, "%s; nothing changed", error);
		return;
	}
	ctl_builder_init(&b, FTRACED_MSG_OK);
	ctl_put_string(&b, FTRACED_ATTR_NOTE, summary);
	ctl_conn_send(conn, &b);
}

/*
 * Is the state directory's tag another live daemon's? A copy of a state
 * directory (into another mount namespace, say) names the same tag; both
 * daemons would take each other's instances for a crash's orphans and
 * remove or shrink them. tracefs is shared by them all: the tag's
 * clock-anchor instance, locked by a running daemon from its first
 * session on a marker clock, tells (clock-anchor.c).
 */
static int check_tag(struct manager *m, const char *path)
{
	char holder[64];
	int r = clock_anchor_check_tag(m->instance_tag, holder, sizeof(holder));

	if (r == -EBUSY)
		return log_error_errno(r, "Another ftraced (%s) runs with instance tag %08" PRIx32
				       " (its instance ftraced-%08" PRIx32 "-0 is locked): state "
				       "directory '%s' is a copy of its state directory? Remove "
				       "'%s/%s' from the copy to give it a tag of its own",
				       holder, m->instance_tag, m->instance_tag, path, path,
				       INSTANCE_TAG_FILE);
	if (r < 0)
		log_warning_errno(r, "Cannot check whether another ftraced uses instance tag %08"
				  PRIx32 ", proceeding: %m", m->instance_tag);
	return 0;
}

static gid_t resolve_group(const char *name)
{
	struct group *g;

	if (!name || !*name)
		return (gid_t)-1;
	g = getgrnam(name);
	if (!g) {
		log_notice("Group '%s' does not exist: only root may use the control socket", name);
		return (gid_t)-1;
	}
	return g->gr_gid;
}

/* kallsyms, opened while any privilege the daemon was started with is still held. */
static int open_symbols(struct manager *m, const struct manager_config *c)
{
	int r = kallsyms_open(&m->kallsyms);

	if (!m->kallsyms)
		return log_error_errno(r, "Out of memory");
	kallsyms_set_lifetime(m->kallsyms, c->test_symbols_lifetime_usec, c->test_symbols_growth_max);
	if (r < 0)
		log_warning_errno(r, "Cannot open /proc/kallsyms, files will have no symbols: %m");
	else if (!kallsyms_has_addresses(m->kallsyms))
		log_warning("/proc/kallsyms shows no addresses: ftraced was started without "
			    "CAP_SYSLOG (a unit's CapabilityBoundingSet= without it, or "
			    "ProtectKernelLogs=yes), so files will carry no symbol addresses");
	return 0;
}

/*
 * SIGTERM and SIGINT finish every session and exit; SIGHUP reloads (a
 * terminal that closes on a foreground daemon reloads it, nothing more).
 */
static int watch_signals(struct manager *m, bool test_hooks)
{
	sigset_t mask;
	int r;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD); /* sd-event child sources (on-segment commands) */
	if (test_hooks)
		sigaddset(&mask, SIGUSR2);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* A file-size limit (ulimit -f, LimitFSIZE=) fails a write with EFBIG, not the daemon. */
	signal(SIGXFSZ, SIG_IGN);
	r = sd_event_add_signal(m->event, NULL, SIGTERM, on_signal, m);
	if (r >= 0)
		r = sd_event_add_signal(m->event, NULL, SIGINT, on_signal, m);
	if (r >= 0)
		r = sd_event_add_signal(m->event, NULL, SIGHUP, on_reload, m);
	if (r >= 0 && test_hooks) {
		r = sd_event_add_signal(m->event, NULL, SIGUSR2, on_test_stall, m);
		log_warning("Test hooks are on: SIGUSR2 blocks a capture worker");
	}
	return r < 0 ? log_error_errno(r, "Cannot watch signals: %m") : 0;
}

/* An orphan a process keeps busy: the reaper retries it, and list shows it (start_controller()). */
static void keep_busy_orphan(struct instance *i, void *userdata)
{
	struct manager *m = userdata;
	struct instance **grown = reallocarray(m->busy_orphans, m->n_busy_orphans + 1,
					       sizeof(*grown));

	if (!grown) {
		instance_abandon(i); /* the next start tries again */
		return;
	}
	m->busy_orphans = grown;
	m->busy_orphans[m->n_busy_orphans++] = i;
}

/*
 * What a crash of an earlier run left: spools become files first (draining
 * what their orphaned instances still hold), then the orphans go.
 */
static void recover_leftovers(struct manager *m)
{
	char prefix[32];
	unsigned n, failed;
	int r;

	snprintf(prefix, sizeof(prefix), "ftraced-%08" PRIx32 "-", m->instance_tag);
	r = recovery_recover_all(m->state_dir_fd, prefix, m->kallsyms, &n, &failed);
	if (r < 0)
		log_warning_errno(r, "Recovering interrupted captures failed, ignoring: %m");
	else if (n > 0)
		log_notice("Recovered %u interrupted capture(s)", n);
	/* After recovery drained it: a lease's top level goes back as it was found. */
	r = instance_lease_restore_stale(m->state_dir_fd);
	if (r < 0)
		log_warning_errno(r, "Cannot put the top-level buffer all back as a crashed lease "
				  "found it (the lease ended anyway): %m");
	r = instance_remove_orphans(m->instance_tag, keep_busy_orphan, m);
	if (r < 0)
		log_warning_errno(r, "Looking for orphaned instances failed, ignoring: %m");
	r = probes_remove_orphans(m->instance_tag);
	if (r < 0)
		log_warning_errno(r, "Looking for orphaned probes failed, ignoring: %m");
	spool_report_stale(m->state_dir_fd);
}

/*
 * Everything that needed a capability is done: kallsyms is open, the
 * socket bound. Capabilities, no-new-privs and the nice value belong to
 * each thread, and a thread starts with its creator's: so they go before
 * the first one, the capture workers (one per CPU), which are made at
 * capture-nice.
 */
static int start_workers(struct manager *m)
{
	bool keep_nice;
	int nice_before;
	long n_cpus;
	int r;

	m->rt_allowed_max = priv_realtime_allowed(m->settings.rt_priority_max, &keep_nice);
	priv_nice_for_workers(m->settings.capture_nice, &nice_before);
	r = priv_drop(keep_nice);
	if (r < 0)
		return r;
	n_cpus = sysconf(_SC_NPROCESSORS_CONF);
	if (n_cpus < 1)
		return log_error_errno(-EINVAL, "Cannot count CPUs");
	r = capture_pool_new((unsigned)n_cpus, &m->pool);
	priv_nice_restore(nice_before);
	if (r == -EAGAIN) {
		char limit[PATH_MAX + 64];

		task_limit_describe(limit, sizeof(limit));
		return log_error_errno(r, "Cannot start %ld capture workers, one per CPU: a limit on "
				       "tasks is reached (%s). ftraced needs up to %ld tasks here (the "
				       "CPUs and %u more): raise TasksMax= of ftraced.service, or the "
				       "limit named", n_cpus, limit, n_cpus + TASKS_SPARE, TASKS_SPARE);
	}
	if (r < 0)
		return log_error_errno(r, "Cannot start capture workers: %m");
	return 0;
}

/* The session table, with the sessions of sessions.d and those clients saved. */
static int start_controller(struct manager *m)
{
	struct controller_env env = {
		.event = m->event,
		.pool = m->pool,
		.runner = m->runner,
		.state_dir_fd = m->state_dir_fd,
		.hold_dir_fd = m->hold_dir_fd,
		.instance_tag = m->instance_tag,
		.kallsyms = m->kallsyms,
		.clock_anchor = m->clock_anchor,
		.written = &m->written,
		.changed = on_sessions_changed,
		.describe_daemon = describe_daemon,
		.userdata = m,
	};
	struct controller_limits limits = limits_of(m);
	int r;

	r = controller_new(&env, &m->controller);
	if (r < 0)
		return log_error_errno(r, "Out of memory");
	controller_set_limits(m->controller, &limits);
	for (size_t k = 0; k < m->n_busy_orphans; k++)
		controller_retire_instance(m->controller, m->busy_orphans[k]);
	m->busy_orphans = mfree(m->busy_orphans);
	m->n_busy_orphans = 0;
	if (m->sessions_dir)
		controller_load_session_files(m->controller, m->sessions_dir);
	controller_restore_saved(m->controller);
	controller_prune_kept(m->controller);
	return 0;
}

/**
 * manager_new() - set everything up, in the order that keeps start-up safe.
 * @c: configuration
 * @ret: the manager, listening
 *
 * kallsyms is opened first, while any privilege the daemon was started with
 * is still held; orphaned instances are removed before the socket accepts
 * requests.
 *
 * Return: 0 or -errno (logged).
 */
int manager_new(const struct manager_config *c, struct manager **ret)
{
	struct ctl_server_handlers h = {
		.request = on_request,
		.closed = on_conn_closed,
		.busy = conn_busy,
	};
	_cleanup_(manager_freep) struct manager *m = NULL;
	int r;

	m = calloc(1, sizeof(*m));
	if (!m)
		return log_error_errno(-ENOMEM, "Out of memory");
	m->state_dir_fd = -EBADF;
	m->hold_dir_fd = -EBADF;
	m->lock_fd = -EBADF;
	h.userdata = m;
	m->settings = *c->settings;
	m->config_path = c->config_path;
	m->sessions_dir = c->sessions_dir;
	if (daemon_config_memory_limit(&m->settings))
		log_info("All sessions together may take %" PRIu64 " MiB of memory (memory-limit)",
			 daemon_config_memory_limit(&m->settings) >> 20);
	r = open_symbols(m, c);
	if (r < 0)
		return r;
	r = instance_check_writable();
	if (r == -EROFS)
		return log_error_errno(r, "tracefs is read-only here: a unit with "
				       "ProtectKernelTunables=yes? It must stay off for ftraced");
	if (r < 0)
		return log_error_errno(r, "Cannot create tracefs instances: %m");

	r = sd_event_default(&m->event);
	if (r < 0)
		return log_error_errno(r, "Cannot create the event loop: %m");
	sd_event_now(m->event, CLOCK_MONOTONIC, &m->started_usec);
	if (m->settings.metrics_directory[0]) {
		r = metrics_file_new(m->event, m->settings.metrics_directory,
				     m->settings.metrics_interval_ms, fill_metrics, m, &m->metrics);
		if (r < 0)
			return log_error_errno(r, "Cannot set up the metrics file: %m");
	}
	r = runner_new(m->event, &m->runner);
	if (r < 0)
		return log_error_errno(r, "Out of memory");
	r = watch_signals(m, c->test_hooks);
	if (r < 0)
		return r;

	r = state_dir_open(c->state_dir, &m->state_dir_fd, &m->lock_fd, &m->instance_tag);
	if (r < 0)
		return r;
	r = check_tag(m, c->state_dir);
	if (r < 0)
		return r;
	r = kallsyms_store_in(m->kallsyms, m->state_dir_fd);
	if (r < 0)
		return log_error_errno(r, "Cannot duplicate the state directory's fd: %m");
	recover_leftovers(m);
	/* After recovery took what the last run held: the same directory, emptied. */
	r = hold_dir_create(m->state_dir_fd, m->instance_tag, &m->hold_dir_fd);
	if (r < 0)
		log_warning_errno(r, "Cannot keep what capture workers take from the kernel in "
				  "memory that outlives the daemon (" HOLD_SHM_DIR " or "
				  "$RUNTIME_DIRECTORY), proceeding anyway: a crash loses up to a "
				  "second of it, counted: %m");
	r = clock_anchor_new(m->instance_tag, &m->clock_anchor);
	if (r < 0)
		return log_error_errno(r, "Out of memory");

	r = ctl_server_new(m->event, c->socket_path, resolve_group(c->group), &h, &m->server);
	if (r == -EADDRINUSE)
		return log_error_errno(r, "Another ftraced is already listening on '%s'",
				       c->socket_path);
	if (r < 0)
		return log_error_errno(r, "Cannot listen on '%s': %m", c->socket_path);
	/*
	 * Machine-wide, so only once this daemon is sure to run (state directory
	 * locked, socket bound): a second daemon refused changes nothing. Files
	 * read saved_cmdlines when written, after this.
	 */
	if (m->settings.saved_cmdlines > 0) {
		r = instance_raise_saved_cmdlines(m->settings.saved_cmdlines);
		if (r < 0)
			log_warning_errno(r, "Cannot raise saved_cmdlines_size to %u, long captures may "
					  "show tasks as <...>: %m", m->settings.saved_cmdlines);
		else
			log_debug("The kernel keeps %d task names (saved_cmdlines_size)", r);
	}
	r = start_workers(m);
	if (r < 0)
		return r;
	r = start_controller(m);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(m);
	return 0;
}

/**
 * manager_run() - run the event loop until a signal finished every session.
 * @m: manager
 *
 * Return: the loop's exit code, or -errno.
 */
int manager_run(struct manager *m)
{
	int r;

	if (sd_watchdog_enabled(false, &m->watchdog_usec) > 0) {
		r = sd_event_add_time_relative(m->event, NULL, CLOCK_MONOTONIC, m->watchdog_usec / 4,
					       m->watchdog_usec / 20, on_watchdog, m);
		if (r < 0)
			return log_error_errno(r, "Cannot start the watchdog timer: %m");
		log_info("Watchdog every %" PRIu64 " ms, while the capture workers make progress",
			 m->watchdog_usec / 1000);
	}
	log_info("ftraced ready");
	sd_notifyf(false, "READY=1\nSTATUS=%u session(s)", controller_n_sessions(m->controller));
	return sd_event_loop(m->event);
}

struct manager *manager_free(struct manager *m)
{
	if (!m)
		return NULL;
	m->server = ctl_server_free(m->server);
	sd_event_source_disable_unref(m->extend_timer);
	m->controller = controller_free(m->controller);
	/* A start that failed before the controller: the next start finds them again. */
	for (size_t k = 0; k < m->n_busy_orphans; k++)
		instance_abandon(m->busy_orphans[k]);
	free(m->busy_orphans);
	m->pool = capture_pool_free(m->pool);
	m->runner = runner_free(m->runner);
	m->metrics = metrics_file_free(m->metrics);
	sd_event_unref(m->event);
	if (m->hold_dir_fd >= 0)
		hold_dir_remove(m->state_dir_fd);
	safe_close(m->state_dir_fd);
	safe_close(m->hold_dir_fd);
	safe_close(m->lock_fd);
	m->kallsyms = kallsyms_free(m->kallsyms);
	m->clock_anchor = clock_anchor_free(m->clock_anchor);
	free(m);
	return NULL;
}
