// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The session table and what changes it: requests from clients (record,
 * create, start, stop, snapshot, destroy, list, status), sessions.d files
 * (at start and at each reload), and saved sessions (restored at start).
 * It enforces the session limits of bounds.h, routes each answer to the
 * client or log that waits for it, and keeps the saved copy of every
 * session a client created (session-store.c) in step with its state.
 *
 * Each slot has at most one pending reply, of one kind: a record's client
 * waits for STARTED and then FINISHED; a create, stop or destroy for OK;
 * a session from a file or a saved copy is told about in the log. While
 * one is pending, other changes to the session are refused as busy.
 *
 * The manager owns the loop, the signals and the services this uses
 * (struct controller_env). Main thread only.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon/bounds.h"
#include "daemon/controller.h"
#include "daemon/ctl-server.h"
#include "daemon/instance-offer.h"
#include "daemon/kallsyms.h"
#include "daemon/log.h"
#include "daemon/output-fd.h"
#include "daemon/reaper.h"
#include "daemon/session-file.h"
#include "daemon/session-store.h"
#include "daemon/session.h"
#include "daemon/sessions-dir.h"
#include "lib/ctl-proto.h"
#include "lib/io-util.h"
#include "lib/time-util.h"

enum reply_kind {
	REPLY_NONE,
	REPLY_RECORD,  /* the record's client: STARTED, then FINISHED */
	REPLY_OK,      /* a create, stop or destroy: OK or ERROR */
	REPLY_LOG,     /* a session file's or saved session's: said in the log */
};

struct pending_reply {
	enum reply_kind kind;
	struct ctl_conn *conn;   /* RECORD, OK */
	char origin[PATH_MAX];   /* LOG: where the session came from, for the log */
};

struct slot {
	struct session *session;
	struct pending_reply reply;
	char *conf;                 /* its session file: what `ftracectl save` prints */
	bool persist;               /* created by a client: saved, restored at each start */
	bool saved;                 /* ... and its saved copy exists */
	bool start_when_ready;      /* from a file, or saved while running */
	uint64_t stopped_usec;      /* saved: the daemon's clean stop while it ran; 0: a crash */
	char file[NAME_MAX + 1];    /* from sessions.d: its file */
	uint64_t file_hash;         /* ... and what the file said, to tell a change at reload */
	unsigned file_generation;   /* the last reload that found the file */
	bool reload_when_done;      /* its file changed: created again from it once it is gone */
};

struct controller {
	struct controller_env env;
	struct controller_limits limits;
	struct reaper *reaper;      /* instances tracefs would not remove yet */
	struct instance_offer offer; /* what the kernel offers, found once */
	struct slot slots[SESSION_MAX];
	struct ctl_builder reply;
	uint32_t next_id;
	uint64_t sessions_started;
	const char *sessions_dir;   /* sessions.d; NULL until loaded */
	unsigned file_generation;
	bool exiting;
};

static unsigned n_sessions(const struct controller *c, uid_t uid, bool only_uid)
{
	unsigned n = 0;

	for (size_t i = 0; i < SESSION_MAX; i++)
		if (c->slots[i].session && (!only_uid || session_owner(c->slots[i].session) == uid))
			n++;
	return n;
}

unsigned controller_n_sessions(const struct controller *c)
{
	return n_sessions(c, 0, false);
}

bool controller_any_running(const struct controller *c)
{
	for (size_t i = 0; i < SESSION_MAX; i++)
		if (c->slots[i].session && session_state(c->slots[i].session) == SESSION_RUNNING)
			return true;
	return false;
}

uint64_t controller_sessions_started(const struct controller *c)
{
	return c->sessions_started;
}

static void changed(struct controller *c)
{
	c->env.changed(c->env.userdata);
}

/* An empty slot, cleared of what its last session left. */
static struct slot *free_slot(struct controller *c)
{
	for (size_t i = 0; i < SESSION_MAX; i++)
		if (!c->slots[i].session) {
			free(c->slots[i].conf);
			c->slots[i] = (struct slot){};
			return &c->slots[i];
		}
	return NULL;
}

static struct slot *find_slot(struct controller *c, const char *name)
{
	for (size_t i = 0; i < SESSION_MAX; i++)
		if (c->slots[i].session && strcmp(session_name(c->slots[i].session), name) == 0)
			return &c->slots[i];
	return NULL;
}

static struct slot *slot_of(struct controller *c, struct session *s)
{
	for (size_t i = 0; i < SESSION_MAX; i++)
		if (c->slots[i].session == s)
			return &c->slots[i];
	return NULL;
}

static void reply_ok(struct controller *c, struct ctl_conn *conn)
{
	ctl_builder_init(&c->reply, FTRACED_MSG_OK);
	ctl_conn_send(conn, &c->reply);
}

/* The pending create, stop or destroy is answered OK. */
static void answer_ok(struct controller *c, struct slot *slot)
{
	if (slot->reply.kind == REPLY_OK) {
		reply_ok(c, slot->reply.conn);
		slot->reply = (struct pending_reply){};
	}
}

static void wait_for(struct slot *slot, enum reply_kind kind, struct ctl_conn *conn)
{
	slot->reply = (struct pending_reply){ .kind = kind, .conn = conn };
}

static void wait_in_log(struct slot *slot, const char *origin)
{
	slot->reply = (struct pending_reply){ .kind = REPLY_LOG };
	snprintf(slot->reply.origin, sizeof(slot->reply.origin), "%s", origin);
}

/* The saved copy of a client's session, as it is now; failures logged, not fatal. */
static void save(struct controller *c, struct slot *slot, bool running, uint64_t stopped_usec)
{
	struct saved_session s = {
		.owner = session_owner(slot->session),
		.running = running,
		.stopped_usec = stopped_usec,
	};
	int r;

	if (!slot->persist || !slot->conf)
		return;
	snprintf(s.name, sizeof(s.name), "%s", session_name(slot->session));
	r = session_store_write(c->env.state_dir_fd, &s, slot->conf);
	if (r < 0) {
		log_error_errno(r, "Session '%s': cannot save it, it will not come back after a "
				"restart: %m", s.name);
		return;
	}
	slot->saved = true;
}

static void unsave(struct controller *c, struct slot *slot)
{
	int r;

	if (!slot->saved)
		return;
	r = session_store_remove(c->env.state_dir_fd, session_name(slot->session));
	if (r < 0)
		log_error_errno(r, "Session '%s': cannot remove its saved copy, it will come back "
				"after a restart: %m", session_name(slot->session));
	slot->saved = false;
}

/* A continuous session stopped and its last segment is on disk. */
static void on_session_stopped(struct session *s, void *userdata)
{
	struct controller *c = userdata;
	struct slot *slot = slot_of(c, s);

	log_info("Session '%s' stopped", session_name(s));
	if (slot && !c->exiting)
		save(c, slot, /* running= */ false, 0);
	if (slot)
		answer_ok(c, slot);
	changed(c);
}

static void create_from_file(const char *file, const struct ctl_request *req, uint64_t hash,
			     void *userdata);

static void on_session_done(struct session *s, void *userdata)
{
	char instance[FTRACED_NAME_MAX + 1];
	struct controller *c = userdata;
	struct slot *slot = slot_of(c, s);
	struct pending_reply reply;
	const char *message;
	int error;

	if (!slot)
		return;
	error = session_error(s, &message);
	snprintf(instance, sizeof(instance), "%s", session_instance_name(s) ?: "");
	if (slot->reply.kind == REPLY_RECORD && slot->reply.conn) {
		if (error < 0) {
			ctl_conn_send_error(slot->reply.conn, error, "%s", message);
		} else {
			ctl_builder_init(&c->reply, FTRACED_MSG_FINISHED);
			session_describe(s, &c->reply);
			ctl_conn_send(slot->reply.conn, &c->reply);
		}
	}
	log_info("Session '%s' %s", session_name(s), error < 0 ? "failed" : "finished");
	reply = slot->reply;
	slot->session = session_free(s); /* its instance goes to the reaper */
	slot->reply = (struct pending_reply){};
	if (slot->reload_when_done && !c->exiting && c->sessions_dir) {
		char file[sizeof(slot->file)];

		snprintf(file, sizeof(file), "%s", slot->file);
		slot->reload_when_done = false;
		slot->file[0] = '\0';
		sessions_dir_load_one(c->sessions_dir, file, create_from_file, c);
	}
	/*
	 * The session's buffers were freed by several threads into several
	 * arenas: give the free pages back, after the answer went out, so a
	 * daemon that has run many captures holds what one capture needs.
	 */
	malloc_trim(0);
	/* A destroy answers once the instance is gone too, or says why it is not. */
	if (reply.kind == REPLY_OK && instance[0] && reaper_pending(c->reaper, instance))
		reaper_wait(c->reaper, instance, reply.conn, DESTROY_WAIT_USEC);
	else if (reply.kind == REPLY_OK)
		reply_ok(c, reply.conn);
	changed(c);
}

/* A session is done with its instance: the reaper removes it. */
static void retire_instance(struct instance *i, bool now, void *userdata)
{
	struct controller *c = userdata;

	reaper_retire(c->reaper, i, now);
}

/* A destroy waited for its session's busy instance: gone, or still busy at the deadline. */
static void on_instance_removed(void *waiter, const char *name, int result, void *userdata)
{
	struct controller *c = userdata;
	struct ctl_conn *conn = waiter;

	if (result >= 0) {
		reply_ok(c, conn);
		return;
	}
	ctl_conn_send_error(conn, result, "the session is destroyed, but its instance '%s' is "
			    "still busy: a process holds one of its files open (trace_marker?); "
			    "ftraced keeps trying to remove it, and 'ftracectl list' shows it until "
			    "then", name);
}

/* A snapshot is complete: tell the client that asked. */
static void on_snapshot(struct session *s, void *waiter, int result, const char *path,
			uint64_t bytes, const char *note, void *userdata)
{
	struct controller *c = userdata;
	struct ctl_conn *conn = waiter;

	if (result < 0) {
		ctl_conn_send_error(conn, result, "snapshot of '%s' failed: %s", session_name(s),
				    strerror(-result));
		return;
	}
	ctl_builder_init(&c->reply, FTRACED_MSG_OK);
	if (path)
		ctl_put_string(&c->reply, FTRACED_ATTR_PATH, path);
	ctl_put_u64(&c->reply, FTRACED_ATTR_FILE_BYTES, bytes);
	if (note)
		ctl_put_string(&c->reply, FTRACED_ATTR_NOTE, note);
	ctl_conn_send(conn, &c->reply);
}

static void on_session_ready(struct session *s, int result, void *userdata);

/* Symbols for the files of @owner's session: root's always; group members' per ftraced.conf. */
static struct kallsyms *symbols_for(const struct controller *c, uid_t owner)
{
	enum group_symbols g = c->limits.group_symbols;
	bool show = owner == 0 || g == GROUP_SYMBOLS_YES ||
		(g == GROUP_SYMBOLS_AUTO && kallsyms_shown_to_users());

	return show ? c->env.kallsyms : NULL;
}

static uint64_t memory_committed(const struct controller *c)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < SESSION_MAX; i++)
		if (c->slots[i].session)
			sum += session_memory(c->slots[i].session);
	return sum;
}

/* What a new session of @owner gets from the daemon. */
static struct session_env session_env_of(struct controller *c, uid_t owner)
{
	return (struct session_env){
		.event = c->env.event,
		.pool = c->env.pool,
		.state_dir_fd = c->env.state_dir_fd,
		.instance_tag = c->env.instance_tag,
		.kallsyms = symbols_for(c, owner),
		.clock_anchor = c->env.clock_anchor,
		.memory_limit = c->limits.memory_limit,
		.rt_priority_max = c->limits.rt_priority_max,
		.memory_committed = memory_committed(c),
		.runner = c->env.runner,
		.written = c->env.written,
		.retire_instance = retire_instance,
		.on_ready = on_session_ready,
		.on_done = on_session_done,
		.on_stopped = on_session_stopped,
		.on_snapshot = on_snapshot,
		.userdata = c,
	};
}

/*
 * A session from a file (sessions.d or a saved copy): created now as
 * @owner, started once its ring is allocated if @start. Problems are
 * logged with @origin.
 */
static struct slot *create_from(struct controller *c, const char *origin,
				const struct ctl_request *req, uid_t owner, bool start)
{
	char error[FTRACED_MESSAGE_MAX] = "";
	struct session_env env = session_env_of(c, owner);
	struct session *s;
	struct slot *slot;
	int r;

	if (find_slot(c, req->session)) {
		log_error("%s: a session '%s' exists already; skipping this one", origin,
			  req->session);
		return NULL;
	}
	slot = free_slot(c);
	if (!slot) {
		log_error("%s: too many sessions (at most %u); skipping session '%s'", origin,
			  SESSION_MAX, req->session);
		return NULL;
	}
	r = session_new(&env, ++c->next_id, req->session, owner, req, -EBADF, &s, error,
			sizeof(error));
	if (r < 0) {
		log_error("%s: %s; skipping this session", origin, error);
		return NULL;
	}
	slot->session = s;
	slot->start_when_ready = start;
	wait_in_log(slot, origin); /* on_session_ready() tells the log */
	return slot;
}

/* A session file's request (sessions-dir.c), with a hash of the file for reloads. */
static void create_from_file(const char *file, const struct ctl_request *req, uint64_t hash,
			     void *userdata)
{
	struct controller *c = userdata;
	struct slot *slot = create_from(c, file, req, /* owner= */ 0, /* start= */ true);

	if (!slot)
		return;
	slot->conf = malloc(SESSION_FILE_MAX);
	if (slot->conf && session_file_format(req, slot->conf, SESSION_FILE_MAX) < 0)
		slot->conf = mfree(slot->conf);
	snprintf(slot->file, sizeof(slot->file), "%s", file);
	slot->file_hash = hash;
	slot->file_generation = c->file_generation;
}

/* RECORD (with the output fd) or CREATE: a new session. */
static void handle_new(struct controller *c, struct ctl_conn *conn, const struct ctl_request *req,
		       int fd)
{
	char error[FTRACED_MESSAGE_MAX] = "", name[FTRACED_NAME_MAX + 1];
	bool record = req->type == FTRACED_MSG_RECORD;
	struct session_env env = session_env_of(c, ctl_conn_uid(conn));
	_cleanup_free_ char *conf = NULL;
	struct session *s;
	struct slot *slot;
	uid_t uid = ctl_conn_uid(conn);
	uint32_t id;
	int r;

	if (record && fd < 0) {
		ctl_conn_send_error(conn, -EBADF, "record needs the output file descriptor");
		return;
	}
	if (c->exiting) {
		safe_close(fd);
		ctl_conn_send_error(conn, -ESHUTDOWN, "the daemon is shutting down");
		return;
	}
	if (record) {
		r = output_fd_check(fd, error, sizeof(error));
		if (r < 0) {
			safe_close(fd);
			ctl_conn_send_error(conn, r, "%s", error);
			return;
		}
	}
	if (n_sessions(c, 0, false) >= SESSION_MAX ||
	    (uid != 0 && n_sessions(c, uid, true) >= SESSION_PER_UID_MAX)) {
		safe_close(fd);
		ctl_conn_send_error(conn, -EUSERS, "too many sessions (at most %u, %u per user)",
				    SESSION_MAX, SESSION_PER_UID_MAX);
		return;
	}
	id = ++c->next_id;
	if (record) {
		/* Made-up names never take a name someone chose. */
		do
			snprintf(name, sizeof(name), "record-%" PRIu32, id);
		while (find_slot(c, name) && (id = ++c->next_id));
	} else {
		snprintf(name, sizeof(name), "%s", req->session);
		if (find_slot(c, name)) {
			ctl_conn_send_error(conn, -EEXIST, "a session named '%s' exists already", name);
			return;
		}
		/* What is saved, so the session outlives the daemon. */
		conf = malloc(SESSION_FILE_MAX);
		if (!conf || session_file_format(req, conf, SESSION_FILE_MAX) < 0) {
			ctl_conn_send_error(conn, -E2BIG, "the session cannot be saved: its options "
					    "take more than %u bytes as a session file",
					    SESSION_FILE_MAX);
			return;
		}
	}
	r = session_new(&env, id, name, uid, req, fd, &s, error, sizeof(error));
	if (r < 0) {
		log_ratelimit_debug_errno(r, "Request for a new session rejected: %s", error);
		ctl_conn_send_error(conn, r, "%s", error);
		return;
	}
	slot = free_slot(c);
	slot->session = s;
	slot->conf = TAKE_PTR(conf);
	slot->persist = !record;
	/* The reply follows in on_session_ready(), once the ring is allocated. */
	wait_for(slot, record ? REPLY_RECORD : REPLY_OK, conn);
	changed(c);
}

/* session_start(), counted for the metrics. */
static int start_session(struct controller *c, struct session *s)
{
	int r = session_start(s);

	if (r >= 0)
		c->sessions_started++;
	return r;
}

/* A record's ring is there: start it and tell its client. */
static void start_record(struct controller *c, struct slot *slot)
{
	struct session *s = slot->session;
	const char *message;
	int r;

	r = start_session(c, s);
	if (r < 0) {
		session_error(s, &message);
		ctl_conn_send_error(slot->reply.conn, r, "cannot start: %s",
				    message[0] ? message : strerror(-r));
		slot->reply = (struct pending_reply){};
		if (session_state(s) == SESSION_CREATED)
			slot->session = session_free(s);
		return;
	}
	ctl_builder_init(&c->reply, FTRACED_MSG_STARTED);
	session_describe(s, &c->reply);
	ctl_conn_send(slot->reply.conn, &c->reply);
}

/* The newest file's time in a session's directory: when it last wrote one. */
static uint64_t newest_file_usec(int state_dir_fd, const char *name)
{
	char rel[FTRACED_NAME_MAX + 16];
	uint64_t newest = 0;
	struct dirent *de;
	DIR *d;
	int fd;

	snprintf(rel, sizeof(rel), "sessions/%s", name);
	fd = openat(state_dir_fd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((de = readdir(d))) {
		struct stat st;

		if (de->d_name[0] != '.' && fstatat(dirfd(d), de->d_name, &st,
						    AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
			newest = MAX(newest, (uint64_t)st.st_mtim.tv_sec * 1000000 +
					     (uint64_t)st.st_mtim.tv_nsec / 1000);
	}
	closedir(d);
	return newest;
}

static void format_utc(uint64_t usec, char *buf, size_t n)
{
	time_t t = (time_t)(usec / 1000000);
	struct tm tm;

	if (!gmtime_r(&t, &tm) || strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, n, "?");
}

/*
 * A saved session running again after the daemon was away: the time it
 * did not capture, said in status and in its next file. After a clean
 * stop that time is known; after a crash it begins at most at the last
 * file the session wrote (what the crash interrupted was recovered from
 * its spool).
 */
static void account_gap(struct controller *c, struct slot *slot)
{
	const char *name = session_name(slot->session);
	uint64_t now = realtime_usec(), from = slot->stopped_usec;
	char a[32], b[32], note[256];

	if (!from)
		from = newest_file_usec(c->env.state_dir_fd, name);
	if (!from || from > now) {
		snprintf(note, sizeof(note), "the daemon restarted (after a crash) and this session "
			 "captured nothing until %s",
			 (format_utc(now, b, sizeof(b)), b));
	} else {
		format_utc(from, a, sizeof(a));
		format_utc(now, b, sizeof(b));
		snprintf(note, sizeof(note), "no capture from %s%s to %s (%.1f s): the daemon %s",
			 slot->stopped_usec ? "" : "at most ", a, b, (double)(now - from) / 1e6,
			 slot->stopped_usec ? "was stopped" : "crashed");
	}
	log_notice("Session '%s': %s", name, note);
	session_set_gap(slot->session, note);
}

/* A session file's or saved session's session is ready: started if it should be. */
static void start_from_file(struct controller *c, struct slot *slot)
{
	const char *message;
	int r;

	if (!slot->start_when_ready) {
		log_info("%s: session '%s' created", slot->reply.origin,
			 session_name(slot->session));
		return;
	}
	r = start_session(c, slot->session);
	if (r < 0) {
		session_error(slot->session, &message);
		log_error("%s: cannot start session '%s': %s", slot->reply.origin,
			  session_name(slot->session), message[0] ? message : strerror(-r));
		return;
	}
	log_info("%s: session '%s' started", slot->reply.origin, session_name(slot->session));
	if (slot->saved) {
		account_gap(c, slot);
		/* Running now: a crash from here on is a crash of this run. */
		save(c, slot, /* running= */ true, 0);
	}
}

/*
 * A new session's ring is allocated (or was refused): the create is
 * answered, the record starts, a file's session starts.
 */
static void on_session_ready(struct session *s, int result, void *userdata)
{
	struct controller *c = userdata;
	struct slot *slot = slot_of(c, s);
	bool record = session_mode(s) == FTRACED_MODE_RECORD;
	struct pending_reply reply;
	const char *message;

	if (!slot)
		return;
	reply = slot->reply;
	if (result < 0 || c->exiting || (record && !reply.conn)) {
		session_error(s, &message);
		if (result >= 0)
			message = c->exiting ? "the daemon is shutting down" :
				"its client went away before it started";
		if (reply.conn)
			ctl_conn_send_error(reply.conn, result < 0 ? result : -ESHUTDOWN, "%s",
					    message);
		if (reply.kind == REPLY_LOG)
			log_error("%s: %s; skipping this session", reply.origin, message);
		else
			log_info("Session '%s' not started: %s", session_name(s), message);
		slot->session = session_free(s);
		free(slot->conf);
		*slot = (struct slot){};
		changed(c);
		return;
	}
	if (record) {
		start_record(c, slot);
	} else if (reply.kind == REPLY_LOG) {
		start_from_file(c, slot);
		slot->reply = (struct pending_reply){};
	} else {
		log_info("Session '%s' created", session_name(s));
		save(c, slot, /* running= */ false, 0);
		answer_ok(c, slot);
	}
	changed(c);
}

/* Finds the named session a request may change, or replies with the reason. */
static struct slot *slot_for_change(struct controller *c, struct ctl_conn *conn,
				    const struct ctl_request *req)
{
	struct slot *slot = find_slot(c, req->session);
	uid_t uid = ctl_conn_uid(conn);

	if (!slot) {
		ctl_conn_send_error(conn, -ENOENT, "no session '%s'", req->session);
		return NULL;
	}
	if (uid != 0 && uid != session_owner(slot->session)) {
		ctl_conn_send_error(conn, -EPERM, "session '%s' belongs to another user",
				    req->session);
		return NULL;
	}
	if (slot->reply.kind == REPLY_OK || slot->reply.kind == REPLY_LOG) {
		ctl_conn_send_error(conn, -EBUSY, "session '%s' is busy with another request",
				    req->session);
		return NULL;
	}
	return slot;
}

static void handle_start(struct controller *c, struct ctl_conn *conn,
			 const struct ctl_request *req)
{
	struct slot *slot = slot_for_change(c, conn, req);
	const char *message;
	int r;

	if (!slot)
		return;
	if (session_mode(slot->session) == FTRACED_MODE_RECORD) {
		ctl_conn_send_error(conn, -EINVAL, "'%s' is an on-demand record", req->session);
		return;
	}
	r = start_session(c, slot->session);
	if (r == -EBUSY) {
		ctl_conn_send_error(conn, r, "session '%s' is %s", req->session,
				    session_state_to_string(session_state(slot->session)));
		return;
	}
	if (r < 0) {
		session_error(slot->session, &message);
		ctl_conn_send_error(conn, r, "cannot start '%s': %s", req->session,
				    message[0] ? message : strerror(-r));
		return;
	}
	save(c, slot, /* running= */ true, 0);
	reply_ok(c, conn);
	changed(c);
}

static void destroy(struct controller *c, struct slot *slot)
{
	unsave(c, slot);
	session_destroy(slot->session); /* may reply and free the session right away */
}

static void handle_destroy(struct controller *c, struct ctl_conn *conn,
			   const struct ctl_request *req)
{
	struct slot *slot = slot_for_change(c, conn, req);

	if (!slot)
		return;
	if (session_mode(slot->session) == FTRACED_MODE_RECORD) {
		/* A record ends by finishing its file: destroy means stop. */
		session_stop(slot->session);
		reply_ok(c, conn);
		return;
	}
	wait_for(slot, REPLY_OK, conn);
	destroy(c, slot);
}

static void handle_stop(struct controller *c, struct ctl_conn *conn, const struct ctl_request *req)
{
	struct slot *slot = slot_for_change(c, conn, req);
	int r;

	if (!slot)
		return;
	r = session_stop(slot->session);
	if (r == -EALREADY) {
		ctl_conn_send_error(conn, r, "session '%s' is already %s", req->session,
				    session_state_to_string(session_state(slot->session)));
		return;
	}
	/* A continuous or flight session answers once its last file is on disk. */
	if (session_mode(slot->session) != FTRACED_MODE_RECORD)
		wait_for(slot, REPLY_OK, conn);
	else
		reply_ok(c, conn);
}

static void handle_snapshot(struct controller *c, struct ctl_conn *conn,
			    const struct ctl_request *req, int fd)
{
	char error[FTRACED_MESSAGE_MAX] = "";
	struct slot *slot;
	int r;

	if (fd >= 0) {
		r = output_fd_check(fd, error, sizeof(error));
		if (r < 0) {
			safe_close(fd);
			ctl_conn_send_error(conn, r, "%s", error);
			return;
		}
	}
	slot = slot_for_change(c, conn, req);
	if (!slot) {
		safe_close(fd);
		return;
	}
	r = session_snapshot(slot->session, conn, fd, req->trim != 0, error, sizeof(error));
	if (r < 0)
		ctl_conn_send_error(conn, r, "%s", error);
}

/**
 * controller_describe() - a SESSIONS reply: the daemon, then every session or one.
 * @c: controller
 * @b: receives the reply
 * @only: the one session to describe, or NULL for all
 */
void controller_describe(struct controller *c, struct ctl_builder *b, const char *only)
{
	ctl_builder_init(b, FTRACED_MSG_SESSIONS);
	c->env.describe_daemon(c->env.userdata, b);
	reaper_describe(c->reaper, b);
	for (size_t i = 0; i < SESSION_MAX; i++) {
		struct session *s = c->slots[i].session;

		if (s && (!only || strcmp(session_name(s), only) == 0)) {
			session_check(s);
			session_describe(s, b);
		}
	}
}

/* SAVE: the session's file for sessions.d, as a sealed memfd. */
static void handle_save(struct controller *c, struct ctl_conn *conn, const struct ctl_request *req)
{
	struct slot *slot = find_slot(c, req->session);
	uid_t uid = ctl_conn_uid(conn);
	_cleanup_close_ int fd = -EBADF;
	int r;

	if (!slot) {
		ctl_conn_send_error(conn, -ENOENT, "no session '%s'", req->session);
		return;
	}
	if (uid != 0 && uid != session_owner(slot->session)) {
		ctl_conn_send_error(conn, -EPERM, "session '%s' belongs to another user",
				    req->session);
		return;
	}
	if (!slot->conf) {
		ctl_conn_send_error(conn, -EINVAL, "'%s' is an on-demand record: it has no session "
				    "file", req->session);
		return;
	}
	r = memfd_sealed("ftraced-save", slot->conf, strlen(slot->conf), &fd);
	if (r < 0) {
		ctl_conn_send_error(conn, r, "cannot pass the session file: %s", strerror(-r));
		return;
	}
	ctl_builder_init(&c->reply, FTRACED_MSG_OK);
	ctl_conn_send_fd(conn, &c->reply, fd);
}

/* OFFER: what the kernel offers, as a descriptor to read. */
static void handle_offer(struct controller *c, struct ctl_conn *conn,
			 const struct ctl_request *req)
{
	_cleanup_close_ int fd = -EBADF;
	int r;

	r = instance_offer_open(&c->offer, req->offer, &fd);
	if (r == -EPERM && req->offer == FTRACED_OFFER_FUNCTIONS) {
		ctl_conn_send_error(conn, r, "the kernel does not let its functions be listed "
				    "(available_filter_functions: %s): function tracing is not "
				    "permitted on this system (kernel lockdown, or ftrace_enabled=0)",
				    strerror(-r));
		return;
	}
	if (r < 0) {
		ctl_conn_send_error(conn, r, "cannot look at what the kernel offers: %s",
				    strerror(-r));
		return;
	}
	ctl_builder_init(&c->reply, FTRACED_MSG_OK);
	ctl_conn_send_fd(conn, &c->reply, fd);
}

static void handle_list(struct controller *c, struct ctl_conn *conn,
			const struct ctl_request *req)
{
	bool one = ctl_request_has(req, FTRACED_ATTR_SESSION);

	if (one && !find_slot(c, req->session)) {
		ctl_conn_send_error(conn, -ENOENT, "no session '%s'", req->session);
		return;
	}
	controller_describe(c, &c->reply, one ? req->session : NULL);
	ctl_conn_send(conn, &c->reply);
}

/**
 * controller_request() - act on a client's request.
 * @c: controller
 * @conn: the client's connection
 * @req: its request, checked for syntax
 * @fd: the descriptor it passed, taken over; or -EBADF
 */
void controller_request(struct controller *c, struct ctl_conn *conn, const struct ctl_request *req,
			int fd)
{
	struct slot *named = ctl_request_has(req, FTRACED_ATTR_SESSION) ?
		find_slot(c, req->session) : NULL;
	LOG_CONTEXT(named ? session_name(named->session) : NULL,
		    named ? session_instance_name(named->session) : NULL);

	switch (req->type) {
	case FTRACED_MSG_RECORD:
	case FTRACED_MSG_CREATE:
		handle_new(c, conn, req, fd);
		return;
	case FTRACED_MSG_START:
		handle_start(c, conn, req);
		break;
	case FTRACED_MSG_DESTROY:
		handle_destroy(c, conn, req);
		break;
	case FTRACED_MSG_STOP:
		handle_stop(c, conn, req);
		break;
	case FTRACED_MSG_SNAPSHOT:
		handle_snapshot(c, conn, req, fd);
		return;
	case FTRACED_MSG_LIST:
	case FTRACED_MSG_STATUS:
		handle_list(c, conn, req);
		break;
	case FTRACED_MSG_SAVE:
		handle_save(c, conn, req);
		break;
	case FTRACED_MSG_OFFER:
		handle_offer(c, conn, req);
		break;
	default:
		ctl_conn_send_error(conn, -EOPNOTSUPP, "unknown request type");
	}
	safe_close(fd);
}

/**
 * controller_conn_closed() - a connection goes away: nothing waits on it any more.
 * @c: controller
 * @conn: the connection
 *
 * A record whose client went away still finishes its file: the fd stays valid.
 */
void controller_conn_closed(struct controller *c, struct ctl_conn *conn)
{
	reaper_forget_waiter(c->reaper, conn);
	for (size_t i = 0; i < SESSION_MAX; i++) {
		struct slot *slot = &c->slots[i];
		bool record;

		if (slot->session)
			session_forget_waiter(slot->session, conn);
		if (slot->reply.conn != conn)
			continue;
		record = slot->reply.kind == REPLY_RECORD;
		slot->reply = (struct pending_reply){};
		if (record && session_stop(slot->session) == 0)
			log_info("Client of session '%s' went away, finishing its file",
				 session_name(slot->session));
	}
}

/**
 * controller_conn_busy() - does anything wait to answer @conn?
 * @c: controller
 * @conn: the connection
 *
 * Return: true for a record's client, a create, stop or destroy waiting
 * for its reply, or a snapshot's.
 */
bool controller_conn_busy(struct controller *c, const struct ctl_conn *conn)
{
	for (size_t i = 0; i < SESSION_MAX; i++) {
		const struct slot *slot = &c->slots[i];

		if (slot->session && (slot->reply.conn == conn ||
				      session_has_waiter(slot->session, conn)))
			return true;
	}
	return reaper_has_waiter(c->reaper, conn);
}

/* A saved session (session-store.c): created again as it was, started if it was running. */
static void restore_saved(const struct saved_session *s, const char *conf, size_t n_conf,
			  void *userdata)
{
	static struct ctl_builder b;
	_cleanup_free_ struct ctl_request *req = malloc(sizeof(*req));
	struct controller *c = userdata;
	char origin[FTRACED_NAME_MAX + 32], error[256] = "";
	struct slot *slot;
	unsigned line;
	size_t n;
	int r;

	snprintf(origin, sizeof(origin), "saved session '%s'", s->name);
	if (!req) {
		log_error("%s: out of memory, skipping it", origin);
		return;
	}
	r = session_file_parse(conf, n_conf, s->name, &b, error, sizeof(error), &line);
	if (r >= 0 && ((r = ctl_builder_finish(&b, &n)) < 0 ||
		       (r = ctl_request_parse(b.buf, n, req, NULL)) < 0))
		snprintf(error, sizeof(error), "too large or malformed");
	if (r >= 0 && strcmp(req->session, s->name) != 0) {
		snprintf(error, sizeof(error), "it names the session '%s'", req->session);
		r = -EINVAL;
	}
	if (r < 0) {
		log_error("%s: %s; skipping it (it stays saved)", origin, error);
		return;
	}
	slot = create_from(c, origin, req, s->owner, s->running);
	if (!slot)
		return;
	slot->conf = strndup(conf, n_conf);
	slot->persist = true;
	slot->saved = true;
	slot->stopped_usec = s->stopped_usec;
	if (!slot->conf)
		log_error("%s: out of memory keeping its saved copy", origin);
}

/**
 * controller_restore_saved() - bring back the sessions clients created before.
 * @c: controller
 *
 * Each in the state it was in: created, or running again (and the time it
 * did not run accounted for).
 */
void controller_restore_saved(struct controller *c)
{
	int r = session_store_load(c->env.state_dir_fd, restore_saved, c);

	if (r < 0)
		log_error_errno(r, "Cannot read the saved sessions, none is restored: %m");
	else if (r > 0)
		log_info("Restoring %d saved session(s)", r);
}

/**
 * controller_load_session_files() - start the sessions of sessions.d.
 * @c: controller
 * @dir: the sessions directory (kept: read again at each reload)
 */
void controller_load_session_files(struct controller *c, const char *dir)
{
	c->sessions_dir = dir;
	c->file_generation++;
	sessions_dir_load(dir, SESSION_MAX * 4, create_from_file, c);
}

/* The slot of the session a sessions.d file made, if it still runs. */
static struct slot *slot_of_file(struct controller *c, const char *file)
{
	for (size_t i = 0; i < SESSION_MAX; i++)
		if (c->slots[i].session && strcmp(c->slots[i].file, file) == 0)
			return &c->slots[i];
	return NULL;
}

/*
 * A file found at a reload: a new one's session starts; a changed one's
 * session is destroyed (its last segment closed and written) and created
 * again from the file once it is gone.
 */
static void reload_file(const char *file, const struct ctl_request *req, uint64_t hash,
			void *userdata)
{
	struct controller *c = userdata;
	struct slot *slot = slot_of_file(c, file);

	if (!slot) {
		create_from_file(file, req, hash, c);
		return;
	}
	slot->file_generation = c->file_generation;
	if (slot->file_hash == hash || slot->reload_when_done)
		return;
	log_notice("%s changed: session '%s' is stopped (its last file written) and started again "
		   "with what the file says now", file, session_name(slot->session));
	slot->reload_when_done = true;
	destroy(c, slot);
}

/**
 * controller_reload_session_files() - sessions.d read again (SIGHUP).
 * @c: controller
 * @dir: the sessions directory
 *
 * New files start their session; a changed file's session starts again
 * with its new settings once its last file is written; a session whose
 * file went away is destroyed (its files stay). Sessions created by
 * clients are not touched. Each is said in the log.
 */
void controller_reload_session_files(struct controller *c, const char *dir)
{
	c->sessions_dir = dir;
	c->file_generation++;
	sessions_dir_load(dir, SESSION_MAX * 4, reload_file, c);
	for (size_t i = 0; i < SESSION_MAX; i++) {
		struct slot *slot = &c->slots[i];

		if (!slot->session || !slot->file[0] || slot->reload_when_done ||
		    slot->file_generation == c->file_generation)
			continue;
		log_notice("%s is gone: session '%s' is stopped and destroyed (its files stay)",
			   slot->file, session_name(slot->session));
		slot->file[0] = '\0';
		destroy(c, slot);
	}
}

/**
 * controller_set_limits() - the settings sessions are created with from now on.
 * @c: controller
 * @l: limits from ftraced.conf
 */
void controller_set_limits(struct controller *c, const struct controller_limits *l)
{
	c->limits = *l;
}

/**
 * controller_shutdown() - finish every session: records their file,
 * continuous sessions and flight recorders their last segment.
 * @c: controller
 *
 * A saved session that was running is saved as such, with the time of
 * this clean stop, so the next start runs it again and knows its gap.
 * env.changed() follows as each goes.
 */
void controller_shutdown(struct controller *c)
{
	uint64_t now = realtime_usec();

	c->exiting = true;
	for (size_t i = 0; i < SESSION_MAX; i++) {
		struct slot *slot = &c->slots[i];
		struct session *s = slot->session;

		if (!s)
			continue;
		if (session_mode(s) == FTRACED_MODE_RECORD) {
			session_stop(s);
			continue;
		}
		if (slot->saved && session_state(s) == SESSION_RUNNING)
			save(c, slot, /* running= */ true, now);
		session_destroy(s); /* may free it */
	}
}

/**
 * controller_new() - an empty session table.
 * @env: the daemon's services
 * @ret: the controller
 *
 * Return: 0 or -errno.
 */
int controller_new(const struct controller_env *env, struct controller **ret)
{
	_cleanup_(controller_freep) struct controller *c = NULL;
	int r;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->env = *env;
	c->offer.tag = env->instance_tag;
	r = reaper_new(env->event, on_instance_removed, c, &c->reaper);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(c);
	return 0;
}

struct controller *controller_free(struct controller *c)
{
	if (!c)
		return NULL;
	for (size_t i = 0; i < SESSION_MAX; i++) {
		c->slots[i].session = session_free(c->slots[i].session);
		free(c->slots[i].conf);
	}
	c->reaper = reaper_free(c->reaper);
	instance_offer_done(&c->offer);
	free(c);
	return NULL;
}
