// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The top object: the sd-event loop, signals, the control server, the
 * capture pool and the session table. It turns requests into session
 * operations, enforces the session limits of bounds.h, routes a record's
 * completion back to the client that asked for it, and shuts down by
 * stopping every session and waiting until each file is complete.
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

#include "daemon/bounds.h"
#include "daemon/capture.h"
#include "daemon/ctl-server.h"
#include "daemon/daemon-config.h"
#include "daemon/instance.h"
#include "daemon/clock-anchor.h"
#include "daemon/kallsyms.h"
#include "daemon/log.h"
#include "daemon/probe.h"
#include "daemon/manager.h"
#include "daemon/metadata.h"
#include "daemon/metrics-file.h"
#include "daemon/output-fd.h"
#include "daemon/privileges.h"
#include "daemon/reaper.h"
#include "daemon/recovery.h"
#include "daemon/runner.h"
#include "daemon/sessions-dir.h"
#include "daemon/session.h"
#include "daemon/spool.h"
#include "lib/ctl-proto.h"
#include "lib/io-util.h"

struct slot {
	struct session *session;
	struct ctl_conn *conn;   /* record: the client waiting for STARTED, then FINISHED */
	struct ctl_conn *waiter; /* continuous: a CREATE, STOP or DESTROY waiting for its reply */
	char origin[PATH_MAX];   /* a session file's: started once its ring is allocated */
};

struct manager {
	sd_event *event;
	struct ctl_server *server;
	struct capture_pool *pool;
	int state_dir_fd;
	int lock_fd;
	uint32_t instance_tag;
	struct kallsyms *kallsyms;
	struct clock_anchor *clock_anchor; /* every file's wall-clock anchor (DATE) */
	uint64_t memory_limit;     /* all sessions' rings and histories, bytes; 0: none */
	enum group_symbols group_symbols;
	unsigned rt_priority_max;  /* the highest -r the workers can take; 0: -r refused */
	struct runner *runner;
	struct reaper *reaper;     /* instances tracefs would not remove yet */
	uint32_t next_id;
	bool exiting;
	uint64_t watchdog_usec;    /* WatchdogSec= of the unit, or 0 */
	bool watchdog_withheld;    /* a worker is stuck: no WATCHDOG=1 until it moves again */
	_Atomic uint64_t written;   /* bytes written to spools and files, by every thread */
	uint64_t written_at_extend; /* written when time was last asked for */
	sd_event_source *extend_timer;
	struct slot slots[SESSION_MAX];
	struct ctl_builder reply;
	uint64_t started_usec;     /* CLOCK_MONOTONIC, for the uptime in the metrics */
	uint64_t sessions_started;
	struct metrics_file *metrics; /* NULL: no metrics-directory */
};

static unsigned n_sessions(const struct manager *m, uid_t uid, bool only_uid)
{
	unsigned n = 0;

	for (size_t i = 0; i < SESSION_MAX; i++)
		if (m->slots[i].session && (!only_uid || session_owner(m->slots[i].session) == uid))
			n++;
	return n;
}

static bool any_running(const struct manager *m)
{
	for (size_t i = 0; i < SESSION_MAX; i++)
		if (m->slots[i].session && session_state(m->slots[i].session) == SESSION_RUNNING)
			return true;
	return false;
}

/* Sessions changed: tell systemd, and rewrite the metrics file. */
static void notify_status(const struct manager *m)
{
	sd_notifyf(false, "STATUS=%u session(s)", n_sessions(m, 0, false));
	metrics_file_update(m->metrics, any_running(m));
}

/* An empty slot, cleared of what its last session left. */
static struct slot *free_slot(struct manager *m)
{
	for (size_t i = 0; i < SESSION_MAX; i++)
		if (!m->slots[i].session) {
			m->slots[i] = (struct slot){};
			return &m->slots[i];
		}
	return NULL;
}

static struct slot *find_slot(struct manager *m, const char *name)
{
	for (size_t i = 0; i < SESSION_MAX; i++)
		if (m->slots[i].session && strcmp(session_name(m->slots[i].session), name) == 0)
			return &m->slots[i];
	return NULL;
}

static void maybe_exit(struct manager *m)
{
	if (m->exiting && n_sessions(m, 0, false) == 0)
		sd_event_exit(m->event, 0);
}

static struct slot *slot_of(struct manager *m, struct session *s)
{
	for (size_t i = 0; i < SESSION_MAX; i++)
		if (m->slots[i].session == s)
			return &m->slots[i];
	return NULL;
}

static void reply_ok(struct manager *m, struct ctl_conn *c)
{
	ctl_builder_init(&m->reply, FTRACED_MSG_OK);
	ctl_conn_send(c, &m->reply);
}

/* A continuous session stopped and its last segment is on disk. */
static void on_session_stopped(struct session *s, void *userdata)
{
	struct manager *m = userdata;
	struct slot *slot = slot_of(m, s);

	log_info("Session '%s' stopped", session_name(s));
	if (slot && slot->waiter) {
		reply_ok(m, slot->waiter);
		slot->waiter = NULL;
	}
	notify_status(m);
}

static void on_session_done(struct session *s, void *userdata)
{
	char instance[FTRACED_NAME_MAX + 1];
	struct manager *m = userdata;
	struct slot *slot = slot_of(m, s);
	const char *message;
	int error;

	if (!slot)
		return;
	error = session_error(s, &message);
	snprintf(instance, sizeof(instance), "%s", session_instance_name(s) ?: "");
	if (slot->conn) {
		if (error < 0) {
			ctl_conn_send_error(slot->conn, error, "%s", message);
		} else {
			ctl_builder_init(&m->reply, FTRACED_MSG_FINISHED);
			session_describe(s, &m->reply);
			ctl_conn_send(slot->conn, &m->reply);
		}
	}
	log_info("Session '%s' %s", session_name(s), error < 0 ? "failed" : "finished");
	slot->session = session_free(s); /* its instance goes to the reaper */
	/*
	 * The session's buffers were freed by several threads into several
	 * arenas: give the free pages back, after the answer went out, so a
	 * daemon that has run many captures holds what one capture needs.
	 */
	malloc_trim(0);
	/* A destroy answers once the instance is gone too, or says why it is not. */
	if (slot->waiter && instance[0] && reaper_pending(m->reaper, instance))
		reaper_wait(m->reaper, instance, slot->waiter, DESTROY_WAIT_USEC);
	else if (slot->waiter)
		reply_ok(m, slot->waiter);
	slot->conn = NULL;
	slot->waiter = NULL;
	notify_status(m);
	maybe_exit(m);
}

/* A session is done with its instance: the reaper removes it. */
static void retire_instance(struct instance *i, bool now, void *userdata)
{
	struct manager *m = userdata;

	reaper_retire(m->reaper, i, now);
}

/* A destroy waited for its session's busy instance: gone, or still busy at the deadline. */
static void on_instance_removed(void *waiter, const char *name, int result, void *userdata)
{
	struct manager *m = userdata;
	struct ctl_conn *c = waiter;

	if (result >= 0) {
		reply_ok(m, c);
		return;
	}
	ctl_conn_send_error(c, result, "the session is destroyed, but its instance '%s' is still "
			    "busy: a process holds one of its files open (trace_marker?); ftraced "
			    "keeps trying to remove it, and 'ftracectl list' shows it until then",
			    name);
}

/* A snapshot is complete: tell the client that asked. */
static void on_snapshot(struct session *s, void *waiter, int result, const char *path,
			uint64_t bytes, const char *note, void *userdata)
{
	struct manager *m = userdata;
	struct ctl_conn *c = waiter;

	if (result < 0) {
		ctl_conn_send_error(c, result, "snapshot of '%s' failed: %s", session_name(s),
				    strerror(-result));
		return;
	}
	ctl_builder_init(&m->reply, FTRACED_MSG_OK);
	if (path)
		ctl_put_string(&m->reply, FTRACED_ATTR_PATH, path);
	ctl_put_u64(&m->reply, FTRACED_ATTR_FILE_BYTES, bytes);
	if (note)
		ctl_put_string(&m->reply, FTRACED_ATTR_NOTE, note);
	ctl_conn_send(c, &m->reply);
}

/* What every session gets from the manager. */
static void on_session_ready(struct session *s, int result, void *userdata);

/* Symbols for the files of @owner's session: root's always; group members' per ftraced.conf. */
static struct kallsyms *symbols_for(const struct manager *m, uid_t owner)
{
	bool show = owner == 0 || m->group_symbols == GROUP_SYMBOLS_YES ||
		(m->group_symbols == GROUP_SYMBOLS_AUTO && kallsyms_shown_to_users());

	return show ? m->kallsyms : NULL;
}

static uint64_t memory_committed(const struct manager *m)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < SESSION_MAX; i++)
		if (m->slots[i].session)
			sum += session_memory(m->slots[i].session);
	return sum;
}

/* What a new session of @owner gets from the daemon. */
static struct session_env session_env_of(struct manager *m, uid_t owner)
{
	return (struct session_env){
		.event = m->event,
		.pool = m->pool,
		.state_dir_fd = m->state_dir_fd,
		.instance_tag = m->instance_tag,
		.kallsyms = symbols_for(m, owner),
		.clock_anchor = m->clock_anchor,
		.memory_limit = m->memory_limit,
		.rt_priority_max = m->rt_priority_max,
		.memory_committed = memory_committed(m),
		.runner = m->runner,
		.written = &m->written,
		.retire_instance = retire_instance,
		.on_ready = on_session_ready,
		.on_done = on_session_done,
		.on_stopped = on_session_stopped,
		.on_snapshot = on_snapshot,
		.userdata = m,
	};
}

/*
 * A session file's request (sessions-dir.c): created as root now, started
 * once its ring is allocated. Problems are logged with the file's name.
 */
static void create_from_file(const char *file, const struct ctl_request *req, void *userdata)
{
	char error[FTRACED_MESSAGE_MAX] = "";
	struct manager *m = userdata;
	struct session_env env = session_env_of(m, 0);
	struct session *s;
	struct slot *slot;
	int r;

	if (find_slot(m, req->session) || !(slot = free_slot(m))) {
		log_error("%s: session '%s' exists already or too many sessions; skipping", file,
			  req->session);
		return;
	}
	r = session_new(&env, ++m->next_id, req->session, /* owner= */ 0, req, -EBADF, &s,
			error, sizeof(error));
	if (r < 0) {
		log_error("%s: %s; skipping this session", file, error);
		return;
	}
	slot->session = s;
	snprintf(slot->origin, sizeof(slot->origin), "%s", file); /* started in on_session_ready() */
}

/* RECORD (with the output fd) or CREATE: a new session. */
static void handle_new(struct manager *m, struct ctl_conn *c, const struct ctl_request *req,
		       int fd)
{
	char error[FTRACED_MESSAGE_MAX] = "", name[FTRACED_NAME_MAX + 1];
	bool record = req->type == FTRACED_MSG_RECORD;
	struct session_env env = session_env_of(m, ctl_conn_uid(c));
	struct session *s;
	struct slot *slot;
	uid_t uid = ctl_conn_uid(c);
	uint32_t id;
	int r;

	if (record && fd < 0) {
		ctl_conn_send_error(c, -EBADF, "record needs the output file descriptor");
		return;
	}
	if (m->exiting) {
		safe_close(fd);
		ctl_conn_send_error(c, -ESHUTDOWN, "the daemon is shutting down");
		return;
	}
	if (record) {
		r = output_fd_check(fd, error, sizeof(error));
		if (r < 0) {
			safe_close(fd);
			ctl_conn_send_error(c, r, "%s", error);
			return;
		}
	}
	if (n_sessions(m, 0, false) >= SESSION_MAX ||
	    (uid != 0 && n_sessions(m, uid, true) >= SESSION_PER_UID_MAX)) {
		safe_close(fd);
		ctl_conn_send_error(c, -EUSERS, "too many sessions (at most %u, %u per user)",
				    SESSION_MAX, SESSION_PER_UID_MAX);
		return;
	}
	id = ++m->next_id;
	if (record) {
		/* Made-up names never take a name someone chose. */
		do
			snprintf(name, sizeof(name), "record-%" PRIu32, id);
		while (find_slot(m, name) && (id = ++m->next_id));
	} else {
		snprintf(name, sizeof(name), "%s", req->session);
		if (find_slot(m, name)) {
			ctl_conn_send_error(c, -EEXIST, "a session named '%s' exists already", name);
			return;
		}
	}
	r = session_new(&env, id, name, uid, req, fd, &s, error, sizeof(error));
	if (r < 0) {
		log_ratelimit_debug_errno(r, "Request for a new session rejected: %s", error);
		ctl_conn_send_error(c, r, "%s", error);
		return;
	}
	slot = free_slot(m);
	slot->session = s;
	/* The reply follows in on_session_ready(), once the ring is allocated. */
	if (record)
		slot->conn = c;
	else
		slot->waiter = c;
	notify_status(m);
}

/* session_start(), counted for the metrics. */
static int start_session(struct manager *m, struct session *s)
{
	int r = session_start(s);

	if (r >= 0)
		m->sessions_started++;
	return r;
}

/* A record's ring is there: start it and tell its client. */
static void start_record(struct manager *m, struct slot *slot)
{
	struct session *s = slot->session;
	const char *message;
	int r;

	r = start_session(m, s);
	if (r < 0) {
		session_error(s, &message);
		ctl_conn_send_error(slot->conn, r, "cannot start: %s",
				    message[0] ? message : strerror(-r));
		slot->conn = NULL;
		if (session_state(s) == SESSION_CREATED)
			slot->session = session_free(s);
		return;
	}
	ctl_builder_init(&m->reply, FTRACED_MSG_STARTED);
	session_describe(s, &m->reply);
	ctl_conn_send(slot->conn, &m->reply);
}

/* A session file's session is ready: start it. */
static void start_from_file(struct manager *m, struct slot *slot)
{
	const char *message;
	int r;

	r = start_session(m, slot->session);
	if (r < 0) {
		session_error(slot->session, &message);
		log_error("%s: cannot start session '%s': %s", slot->origin,
			  session_name(slot->session), message[0] ? message : strerror(-r));
	} else {
		log_info("%s: session '%s' started", slot->origin, session_name(slot->session));
	}
	slot->origin[0] = '\0';
}

/*
 * A new session's ring is allocated (or was refused): the CREATE is
 * answered, the record starts, a session file's session starts.
 */
static void on_session_ready(struct session *s, int result, void *userdata)
{
	struct manager *m = userdata;
	struct slot *slot = slot_of(m, s);
	bool record = session_mode(s) == FTRACED_MODE_RECORD;
	const char *message;

	if (!slot)
		return;
	if (result < 0 || m->exiting || (record && !slot->conn)) {
		session_error(s, &message);
		if (result >= 0)
			message = m->exiting ? "the daemon is shutting down" :
				"its client went away before it started";
		if (slot->conn ?: slot->waiter)
			ctl_conn_send_error(slot->conn ?: slot->waiter,
					    result < 0 ? result : -ESHUTDOWN, "%s", message);
		if (slot->origin[0])
			log_error("%s: %s; skipping this session", slot->origin, message);
		else
			log_info("Session '%s' not started: %s", session_name(s), message);
		slot->session = session_free(s);
		*slot = (struct slot){};
		notify_status(m);
		maybe_exit(m);
		return;
	}
	if (record) {
		start_record(m, slot);
	} else if (slot->origin[0]) {
		start_from_file(m, slot);
	} else {
		log_info("Session '%s' created", session_name(s));
		if (slot->waiter)
			reply_ok(m, slot->waiter);
		slot->waiter = NULL;
	}
	notify_status(m);
}

/* Finds the named session a request may change, or replies with the reason. */
static struct slot *slot_for_change(struct manager *m, struct ctl_conn *c,
				    const struct ctl_request *req)
{
	struct slot *slot = find_slot(m, req->session);
	uid_t uid = ctl_conn_uid(c);

	if (!slot) {
		ctl_conn_send_error(c, -ENOENT, "no session '%s'", req->session);
		return NULL;
	}
	if (uid != 0 && uid != session_owner(slot->session)) {
		ctl_conn_send_error(c, -EPERM, "session '%s' belongs to another user",
				    req->session);
		return NULL;
	}
	if (slot->waiter) {
		ctl_conn_send_error(c, -EBUSY, "session '%s' is busy with another request",
				    req->session);
		return NULL;
	}
	return slot;
}

static void handle_start(struct manager *m, struct ctl_conn *c, const struct ctl_request *req)
{
	struct slot *slot = slot_for_change(m, c, req);
	const char *message;
	int r;

	if (!slot)
		return;
	if (session_mode(slot->session) == FTRACED_MODE_RECORD) {
		ctl_conn_send_error(c, -EINVAL, "'%s' is an on-demand record", req->session);
		return;
	}
	r = start_session(m, slot->session);
	if (r == -EBUSY) {
		ctl_conn_send_error(c, r, "session '%s' is %s", req->session,
				    session_state_to_string(session_state(slot->session)));
		return;
	}
	if (r < 0) {
		session_error(slot->session, &message);
		ctl_conn_send_error(c, r, "cannot start '%s': %s", req->session,
				    message[0] ? message : strerror(-r));
		return;
	}
	reply_ok(m, c);
	notify_status(m);
}

static void handle_destroy(struct manager *m, struct ctl_conn *c, const struct ctl_request *req)
{
	struct slot *slot = slot_for_change(m, c, req);

	if (!slot)
		return;
	if (session_mode(slot->session) == FTRACED_MODE_RECORD) {
		/* A record ends by finishing its file: destroy means stop. */
		session_stop(slot->session);
		reply_ok(m, c);
		return;
	}
	slot->waiter = c;
	session_destroy(slot->session); /* may reply and free the session right away */
}

static void handle_stop(struct manager *m, struct ctl_conn *c, const struct ctl_request *req)
{
	struct slot *slot = slot_for_change(m, c, req);
	int r;

	if (!slot)
		return;
	r = session_stop(slot->session);
	if (r == -EALREADY) {
		ctl_conn_send_error(c, r, "session '%s' is already %s", req->session,
				    session_state_to_string(session_state(slot->session)));
		return;
	}
	/* A continuous or flight session answers once its last file is on disk. */
	if (session_mode(slot->session) != FTRACED_MODE_RECORD)
		slot->waiter = c;
	else
		reply_ok(m, c);
}

static void handle_snapshot(struct manager *m, struct ctl_conn *c, const struct ctl_request *req,
			    int fd)
{
	char error[FTRACED_MESSAGE_MAX] = "";
	struct slot *slot;
	int r;

	if (fd >= 0) {
		r = output_fd_check(fd, error, sizeof(error));
		if (r < 0) {
			safe_close(fd);
			ctl_conn_send_error(c, r, "%s", error);
			return;
		}
	}
	slot = slot_for_change(m, c, req);
	if (!slot) {
		safe_close(fd);
		return;
	}
	r = session_snapshot(slot->session, c, fd, req->trim != 0, error, sizeof(error));
	if (r < 0)
		ctl_conn_send_error(c, r, "%s", error);
}

/* The daemon's own counters, for `ftracectl metrics` and the metrics file. */
static void describe_daemon(struct manager *m, struct ctl_builder *b)
{
	const struct ctl_server_counters *sc = ctl_server_counters(m->server);
	uint64_t now = 0;
	struct ftraced_daemon_counters d;
	struct timespec cpu;

	sd_event_now(m->event, CLOCK_MONOTONIC, &now);
	d = (struct ftraced_daemon_counters){
		.uptime_ms = (now - m->started_usec) / 1000,
		.connections = sc->connections,
		.connections_refused = sc->connections_refused,
		.requests = sc->requests,
		.request_errors = sc->request_errors,
		.sessions_started = m->sessions_started,
	};
	runner_counts(m->runner, &d.hooks_run, &d.hooks_failed);
	ctl_put_daemon_counters(b, &d);
	/* Every thread's, those that ended too, to the nanosecond (/proc's are clock ticks). */
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu) == 0)
		ctl_put_u64(b, FTRACED_ATTR_DAEMON_CPU,
			    (uint64_t)cpu.tv_sec * 1000000 + (uint64_t)cpu.tv_nsec / 1000);
}

/* A SESSIONS reply: the daemon, then every session or only the one named @only. */
static void describe_sessions(struct manager *m, struct ctl_builder *b, const char *only)
{
	ctl_builder_init(b, FTRACED_MSG_SESSIONS);
	describe_daemon(m, b);
	reaper_describe(m->reaper, b);
	for (size_t i = 0; i < SESSION_MAX; i++) {
		struct session *s = m->slots[i].session;

		if (s && (!only || strcmp(session_name(s), only) == 0)) {
			session_check(s);
			session_describe(s, b);
		}
	}
}

static void fill_metrics(void *userdata, struct ctl_builder *b)
{
	describe_sessions(userdata, b, NULL);
}

static void handle_list(struct manager *m, struct ctl_conn *c, const struct ctl_request *req)
{
	bool one = ctl_request_has(req, FTRACED_ATTR_SESSION);

	if (one && !find_slot(m, req->session)) {
		ctl_conn_send_error(c, -ENOENT, "no session '%s'", req->session);
		return;
	}
	describe_sessions(m, &m->reply, one ? req->session : NULL);
	ctl_conn_send(c, &m->reply);
}

static void on_request(void *userdata, struct ctl_conn *c, const struct ctl_request *req, int fd)
{
	struct manager *m = userdata;

	switch (req->type) {
	case FTRACED_MSG_RECORD:
	case FTRACED_MSG_CREATE:
		handle_new(m, c, req, fd);
		return;
	case FTRACED_MSG_START:
		handle_start(m, c, req);
		break;
	case FTRACED_MSG_DESTROY:
		handle_destroy(m, c, req);
		break;
	case FTRACED_MSG_STOP:
		handle_stop(m, c, req);
		break;
	case FTRACED_MSG_SNAPSHOT:
		handle_snapshot(m, c, req, fd);
		return;
	case FTRACED_MSG_LIST:
	case FTRACED_MSG_STATUS:
		handle_list(m, c, req);
		break;
	default:
		ctl_conn_send_error(c, -EOPNOTSUPP, "unknown request type");
	}
	safe_close(fd);
}

/* A record whose client went away still finishes its file: the fd stays valid. */
static void on_conn_closed(void *userdata, struct ctl_conn *c)
{
	struct manager *m = userdata;

	reaper_forget_waiter(m->reaper, c);
	for (size_t i = 0; i < SESSION_MAX; i++) {
		if (m->slots[i].session)
			session_forget_waiter(m->slots[i].session, c);
		if (m->slots[i].waiter == c)
			m->slots[i].waiter = NULL;
		if (m->slots[i].conn != c)
			continue;
		m->slots[i].conn = NULL;
		if (session_stop(m->slots[i].session) == 0)
			log_info("Client of session '%s' went away, finishing its file",
				 session_name(m->slots[i].session));
	}
}

/* The client of a record, a stop or destroy waiting for its reply, or a snapshot's. */
static bool conn_busy(void *userdata, const struct ctl_conn *c)
{
	struct manager *m = userdata;

	for (size_t i = 0; i < SESSION_MAX; i++) {
		const struct slot *slot = &m->slots[i];

		if (slot->session && (slot->conn == c || slot->waiter == c ||
				      session_has_waiter(slot->session, c)))
			return true;
	}
	return reaper_has_waiter(m->reaper, c);
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
		 n_sessions(m, 0, false));
	sd_notifyf(false, "STOPPING=1\nEXTEND_TIMEOUT_USEC=%" PRIu64, STOP_EXTEND_USEC);
	m->written_at_extend = atomic_load_explicit(&m->written, memory_order_relaxed);
	r = sd_event_add_time_relative(m->event, &m->extend_timer, CLOCK_MONOTONIC,
				       STOP_EXTEND_INTERVAL_USEC, 0, on_extend, m);
	if (r < 0)
		log_warning_errno(r, "Cannot ask the service manager for more time to stop: %m");
	for (size_t i = 0; i < SESSION_MAX; i++) {
		struct session *s = m->slots[i].session;

		if (!s)
			continue;
		/* Records finish their file; continuous sessions close their segment and go. */
		if (session_mode(s) == FTRACED_MODE_RECORD)
			session_stop(s);
		else
			session_destroy(s); /* may free it */
	}
	maybe_exit(m);
	return 0;
}

/*
 * Opens (creating it if needed) and locks the state directory: one daemon
 * per state directory, which is what makes its instance tag its own.
 */
static int open_state_dir(struct manager *m, const char *path)
{
	_cleanup_free_ char *resolved = NULL;

	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return log_error_errno(negative_errno(), "Cannot create state directory '%s': %m",
				       path);
	m->state_dir_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (m->state_dir_fd < 0)
		return log_error_errno(negative_errno(), "Cannot open state directory '%s': %m",
				       path);
	m->lock_fd = openat(m->state_dir_fd, "lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
			    0600);
	if (m->lock_fd < 0)
		return log_error_errno(negative_errno(), "Cannot open '%s/lock': %m", path);
	if (flock(m->lock_fd, LOCK_EX | LOCK_NB) < 0)
		return log_error_errno(errno == EWOULDBLOCK ? -EBUSY : negative_errno(),
				       "Another ftraced uses state directory '%s'", path);
	resolved = realpath(path, NULL);
	if (!resolved)
		return log_error_errno(negative_errno(), "Cannot resolve '%s': %m", path);
	m->instance_tag = instance_tag(resolved);
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
	sigset_t mask;
	bool keep_nice;
	long n_cpus;
	int r;

	m = calloc(1, sizeof(*m));
	if (!m)
		return log_error_errno(-ENOMEM, "Out of memory");
	m->state_dir_fd = -EBADF;
	m->lock_fd = -EBADF;
	h.userdata = m;
	m->memory_limit = daemon_config_memory_limit(c->settings);
	m->group_symbols = c->settings->group_symbols;
	if (m->memory_limit)
		log_info("All sessions together may take %" PRIu64 " MiB of memory (memory-limit)",
			 m->memory_limit >> 20);
	r = kallsyms_open(&m->kallsyms);
	if (!m->kallsyms)
		return log_error_errno(r, "Out of memory");
	kallsyms_set_lifetime(m->kallsyms, c->test_symbols_lifetime_usec, c->test_symbols_growth_max);
	if (r < 0)
		log_warning_errno(r, "Cannot open /proc/kallsyms, files will have no symbols: %m");
	else if (!kallsyms_has_addresses(m->kallsyms))
		log_warning("/proc/kallsyms shows no addresses: ftraced was started without "
			    "CAP_SYSLOG (a unit's CapabilityBoundingSet= without it, or "
			    "ProtectKernelLogs=yes), so files will carry no symbol addresses");
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
	if (c->settings->metrics_directory[0]) {
		r = metrics_file_new(m->event, c->settings->metrics_directory,
				     c->settings->metrics_interval_ms, fill_metrics, m, &m->metrics);
		if (r < 0)
			return log_error_errno(r, "Cannot set up the metrics file: %m");
	}
	r = runner_new(m->event, &m->runner);
	if (r >= 0)
		r = reaper_new(m->event, on_instance_removed, m, &m->reaper);
	if (r < 0)
		return log_error_errno(r, "Out of memory");
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGCHLD); /* sd-event child sources (on-segment commands) */
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* A file-size limit (ulimit -f, LimitFSIZE=) fails a write with EFBIG, not the daemon. */
	signal(SIGXFSZ, SIG_IGN);
	r = sd_event_add_signal(m->event, NULL, SIGTERM, on_signal, m);
	if (r >= 0)
		r = sd_event_add_signal(m->event, NULL, SIGINT, on_signal, m);
	if (r >= 0 && c->test_hooks) {
		sigaddset(&mask, SIGUSR2);
		sigprocmask(SIG_BLOCK, &mask, NULL);
		r = sd_event_add_signal(m->event, NULL, SIGUSR2, on_test_stall, m);
		log_warning("Test hooks are on: SIGUSR2 blocks a capture worker");
	}
	if (r < 0)
		return log_error_errno(r, "Cannot watch signals: %m");

	r = open_state_dir(m, c->state_dir);
	if (r < 0)
		return r;
	r = kallsyms_store_in(m->kallsyms, m->state_dir_fd);
	if (r < 0)
		return log_error_errno(r, "Cannot duplicate the state directory's fd: %m");

	/*
	 * Spools of captures a crash interrupted become files first (draining
	 * what their orphaned instances still hold), then the orphans go.
	 */
	{
		char prefix[32];
		unsigned n, failed;

		snprintf(prefix, sizeof(prefix), "ftraced-%08" PRIx32 "-", m->instance_tag);
		r = recovery_recover_all(m->state_dir_fd, prefix, m->kallsyms, &n, &failed);
		if (r < 0)
			log_warning_errno(r, "Recovering interrupted captures failed, ignoring: %m");
		else if (n > 0)
			log_notice("Recovered %u interrupted capture(s)", n);
	}
	r = instance_remove_orphans(m->instance_tag);
	if (r < 0)
		log_warning_errno(r, "Looking for orphaned instances failed, ignoring: %m");
	r = clock_anchor_new(m->instance_tag, &m->clock_anchor);
	if (r < 0)
		return log_error_errno(r, "Out of memory");
	r = probes_remove_orphans(m->instance_tag);
	if (r < 0)
		log_warning_errno(r, "Looking for orphaned probes failed, ignoring: %m");
	spool_report_stale(m->state_dir_fd);

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
	if (c->settings->saved_cmdlines > 0) {
		r = instance_raise_saved_cmdlines(c->settings->saved_cmdlines);
		if (r < 0)
			log_warning_errno(r, "Cannot raise saved_cmdlines_size to %u, long captures may "
					  "show tasks as <...>: %m", c->settings->saved_cmdlines);
		else
			log_debug("The kernel keeps %d task names (saved_cmdlines_size)", r);
	}

	/*
	 * Everything that needed a capability is done: kallsyms is open, the
	 * socket bound. Capabilities and no-new-privs belong to each thread, and
	 * a thread starts with its creator's: so before the first one.
	 */
	m->rt_priority_max = priv_realtime_allowed(c->settings->rt_priority_max, &keep_nice);
	r = priv_drop(keep_nice);
	if (r < 0)
		return r;
	n_cpus = sysconf(_SC_NPROCESSORS_CONF);
	if (n_cpus < 1)
		return log_error_errno(-EINVAL, "Cannot count CPUs");
	r = capture_pool_new((unsigned)n_cpus, &m->pool);
	if (r < 0)
		return log_error_errno(r, "Cannot start capture workers: %m");

	if (c->sessions_dir)
		sessions_dir_load(c->sessions_dir, SESSION_MAX * 4, create_from_file, m);

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
	sd_notifyf(false, "READY=1\nSTATUS=%u session(s)", n_sessions(m, 0, false));
	return sd_event_loop(m->event);
}

struct manager *manager_free(struct manager *m)
{
	if (!m)
		return NULL;
	m->server = ctl_server_free(m->server);
	sd_event_source_disable_unref(m->extend_timer);
	for (size_t i = 0; i < SESSION_MAX; i++)
		m->slots[i].session = session_free(m->slots[i].session);
	m->pool = capture_pool_free(m->pool);
	m->runner = runner_free(m->runner);
	m->reaper = reaper_free(m->reaper);
	m->metrics = metrics_file_free(m->metrics);
	sd_event_unref(m->event);
	safe_close(m->state_dir_fd);
	safe_close(m->lock_fd);
	m->kallsyms = kallsyms_free(m->kallsyms);
	m->clock_anchor = clock_anchor_free(m->clock_anchor);
	free(m);
	return NULL;
}
