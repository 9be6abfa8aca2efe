// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The session table and what changes it: requests from clients (record,
 * create, start, stop, snapshot, rotate, destroy, list, status, save, what
 * the kernel offers) and the sessions' own news (ready, stopped, done, a
 * snapshot written). It enforces the session limits of bounds.h and routes
 * each answer to the client or log that waits for it. The sessions the
 * daemon makes itself (sessions.d, saved copies) and the saved copies'
 * upkeep are controller-files.c's.
 *
 * Each slot has at most one pending reply, of one kind: a record's client
 * waits for STARTED and then FINISHED; a create, stop or destroy for OK;
 * a session from a file or a saved copy is told about in the log. While
 * one is pending, other changes to the session are refused as busy.
 *
 * The manager owns the loop, the signals and the services this uses
 * (struct controller_env). Main thread only.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/base/bounds.h"
#include "daemon/control/controller-internal.h"
#include "daemon/control/ctl-server.h"
#include "daemon/kernel/instance-offer.h"
#include "daemon/kernel/kallsyms.h"
#include "daemon/base/log.h"
#include "daemon/store/output-fd.h"
#include "daemon/session/reaper.h"
#include "daemon/store/session-file.h"
#include "daemon/session/session.h"
#include "lib/ctl/ctl-proto.h"
#include "lib/io-util.h"
#include "lib/time-util.h"

static void reply_ok(struct controller *c, struct ctl_conn *conn)
{
	if (!conn)
		return; /* its client went away */
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

/* A continuous or flight session stopped and its last file is on disk. */
static void on_session_stopped(struct session *s, void *userdata)
{
	struct controller *c = userdata;
	struct slot *slot = controller_slot_of(c, s);

	log_info("Session '%s' stopped", session_name(s));
	if (slot && !c->exiting)
		controller_save(c, slot, /* running= */ false, 0);
	if (slot && reply_route(&slot->reply, NEWS_STOPPED).answer == ANSWER_OK)
		answer_ok(c, slot);
	controller_changed(c);
}

/* A record's client hears how its capture ended. */
static void answer_record(struct controller *c, struct slot *slot, struct session *s,
			  enum reply_answer answer, int error, const char *message)
{
	if (answer == ANSWER_ERROR) {
		/*
		 * What a failed record captured, rebuilt in the state
		 * directory, goes to its client too: it may not read
		 * that directory (a group member), it can copy the file.
		 */
		const char *rel = session_recovered_file(s);
		_cleanup_close_ int fd = rel ? openat(c->env.state_dir_fd, rel,
					O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : -EBADF;

		ctl_conn_send_error_fd(slot->reply.conn, error, fd, "%s", message);
	} else if (answer == ANSWER_FINISHED) {
		ctl_builder_init(&c->reply, FTRACED_MSG_FINISHED);
		session_describe(s, &c->reply);
		ctl_conn_send(slot->reply.conn, &c->reply);
	}
}

static void on_session_done(struct session *s, void *userdata)
{
	char instance[FTRACED_NAME_MAX + 1];
	struct controller *c = userdata;
	struct slot *slot = controller_slot_of(c, s);
	struct pending_reply reply;
	struct reply_route route;
	const char *message;
	int error;

	if (!slot)
		return;
	error = session_error(s, &message);
	route = reply_route(&slot->reply, error < 0 ? NEWS_FAILED : NEWS_DONE);
	snprintf(instance, sizeof(instance), "%s", session_instance_name(s) ?: "");
	answer_record(c, slot, s, route.answer, error, message);
	log_info("Session '%s' %s", session_name(s), error < 0 ? "failed" : "finished");
	reply = slot->reply;
	slot->session = session_free(s); /* its instance goes to the reaper */
	slot->reply = (struct pending_reply){ .kind = route.then };
	/* A changed session file: its session comes back with what the reload checked. */
	if (slot->next_req && !c->exiting) {
		_cleanup_(ctl_request_freep) struct ctl_request *req = TAKE_PTR(slot->next_req);
		uint64_t hash = slot->next_hash;
		char file[sizeof(slot->file)];

		snprintf(file, sizeof(file), "%s", slot->file);
		slot->reload_when_done = false;
		slot->file[0] = '\0';
		controller_create_from_file(file, req, hash, c);
	}
	/*
	 * The session's buffers were freed by several threads into several
	 * arenas: give the free pages back, after the answer went out, so a
	 * daemon that has run many captures holds what one capture needs.
	 */
	malloc_trim(0);
	/* A destroy answers once the instance is gone too, or says why it is not. */
	if (route.answer == ANSWER_OK && reply.conn && instance[0] &&
	    reaper_pending(c->reaper, instance))
		reaper_wait(c->reaper, instance, reply.conn, DESTROY_WAIT_USEC);
	else if (route.answer == ANSWER_OK)
		reply_ok(c, reply.conn);
	controller_changed(c);
}

/* A session is done with its instance: the reaper removes it. */
static void retire_instance(struct instance *i, bool now, void *userdata)
{
	struct controller *c = userdata;

	reaper_retire(c->reaper, i, now);
}

/**
 * controller_retire_instance() - an instance of no session goes: at once, or when it is free.
 * @c: controller
 * @i: the instance, taken over (a busy orphan found at start-up)
 *
 * Until it goes, list and status show it, and no session gets its name.
 */
void controller_retire_instance(struct controller *c, struct instance *i)
{
	reaper_retire(c->reaper, i, /* now= */ true);
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

/* A rotation asked for is complete: its client hears the closed segment's path. */
static void on_rotated(struct session *s, void *waiter, int result, const char *path,
		       uint64_t bytes, const char *note, void *userdata)
{
	struct controller *c = userdata;
	struct ctl_conn *conn = waiter;

	if (result < 0) {
		ctl_conn_send_error(conn, result, "rotation of '%s' failed: writing its segment: %s",
				    session_name(s), strerror(-result));
		return;
	}
	ctl_builder_init(&c->reply, FTRACED_MSG_OK);
	if (path)
		ctl_put_string(&c->reply, FTRACED_ATTR_PATH, path);
	ctl_put_u64(&c->reply, FTRACED_ATTR_FILE_BYTES, bytes);
	ctl_conn_send(conn, &c->reply);
}

/* RECORD (with the output fd) or CREATE: a new session. */
static void handle_new(struct controller *c, struct ctl_conn *conn, const struct ctl_request *req,
		       int fd)
{
	char error[FTRACED_MESSAGE_MAX] = "", name[FTRACED_NAME_MAX + 1];
	bool record = req->type == FTRACED_MSG_RECORD, kernel_refused = false;
	struct session_env env = controller_session_env(c, ctl_conn_uid(conn));
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
	if (controller_n_sessions(c) >= SESSION_MAX ||
	    (uid != 0 && controller_n_sessions_of(c, uid) >= SESSION_PER_UID_MAX)) {
		safe_close(fd);
		ctl_conn_send_error(conn, -EUSERS, "too many sessions (at most %u, %u per user)",
				    SESSION_MAX, SESSION_PER_UID_MAX);
		return;
	}
	id = controller_new_id(c);
	if (record) {
		/* Made-up names never take a name someone chose. */
		do
			snprintf(name, sizeof(name), "record-%" PRIu32, id);
		while (controller_find_slot(c, name) && (id = controller_new_id(c)));
	} else {
		snprintf(name, sizeof(name), "%s", req->session);
		if (controller_find_slot(c, name)) {
			ctl_conn_send_error(conn, -EEXIST, "a session named '%s' exists already", name);
			return;
		}
		/* What is saved, so the session outlives the daemon. */
		r = session_file_format_new(req, &conf);
		if (r < 0) {
			if (r == -ENOMEM)
				ctl_conn_send_error(conn, r, "out of memory for its session file");
			else
				ctl_conn_send_error(conn, -E2BIG, "the session cannot be saved: its "
						    "options take more than %u bytes as a session "
						    "file", SESSION_FILE_MAX);
			return;
		}
	}
	r = session_new(&env, id, name, uid, req, fd, &s, error, sizeof(error), &kernel_refused);
	if (r < 0) {
		log_ratelimit_debug_errno(r, "Request for a new session rejected: %s", error);
		if (kernel_refused)
			ctl_conn_send_kernel_refusal(conn, r, "%s", error);
		else
			ctl_conn_send_error(conn, r, "%s", error);
		return;
	}
	slot = controller_free_slot(c);
	slot->session = s;
	slot->conf = TAKE_PTR(conf);
	slot->persist = !record;
	/* The reply follows in on_session_ready(), once the ring is allocated. */
	wait_for(slot, record ? REPLY_RECORD : REPLY_OK, conn);
	controller_changed(c);
}

/* A record's ring is there: start it and tell its client. */
static void start_record(struct controller *c, struct slot *slot)
{
	struct session *s = slot->session;
	const char *message;
	int r;

	r = controller_start_session(c, s);
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

/*
 * A new session's ring is allocated (or was refused): the create is
 * answered, the record starts, a file's session starts.
 */
static void on_session_ready(struct session *s, int result, void *userdata)
{
	struct controller *c = userdata;
	struct slot *slot = controller_slot_of(c, s);
	struct reply_route route;
	const char *message;

	if (!slot)
		return;
	route = reply_route(&slot->reply, result < 0 || c->exiting ? NEWS_NOT_STARTED : NEWS_READY);
	if (route.drop) {
		session_error(s, &message);
		if (result >= 0)
			message = c->exiting ? "the daemon is shutting down" :
				"its client went away before it started";
		if (route.answer == ANSWER_ERROR)
			ctl_conn_send_error(slot->reply.conn, result < 0 ? result : -ESHUTDOWN,
					    "%s", message);
		if (route.answer == ANSWER_LOG_ERROR)
			log_error("%s: %s; skipping this session", slot->reply.origin, message);
		else
			log_info("Session '%s' not started: %s", session_name(s), message);
		slot->session = session_free(s);
		free(slot->conf);
		ctl_request_freep(&slot->next_req);
		*slot = (struct slot){};
		controller_changed(c);
		return;
	}
	switch (route.answer) {
	case ANSWER_STARTED:
		start_record(c, slot);
		break;
	case ANSWER_START:
		controller_start_from_file(c, slot); /* names the file the session came from */
		slot->reply = (struct pending_reply){};
		break;
	case ANSWER_OK:
		log_info("Session '%s' created", session_name(s));
		controller_save(c, slot, /* running= */ false, 0);
		answer_ok(c, slot);
		break;
	default:
		break;
	}
	controller_changed(c);
}

/* Finds the named session the client may act on, or replies with the reason. */
static struct slot *slot_owned(struct controller *c, struct ctl_conn *conn,
			       const struct ctl_request *req)
{
	struct slot *slot = controller_find_slot(c, req->session);
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
	return slot;
}

/* Finds the named session a request may change, or replies with the reason. */
static struct slot *slot_for_change(struct controller *c, struct ctl_conn *conn,
				    const struct ctl_request *req)
{
	struct slot *slot = slot_owned(c, conn, req);

	if (!slot)
		return NULL;
	if (reply_blocks_changes(&slot->reply)) {
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
	r = controller_start_session(c, slot->session);
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
	controller_save(c, slot, /* running= */ true, 0);
	reply_ok(c, conn);
	controller_changed(c);
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
	controller_destroy_slot(c, slot);
}

static void handle_stop(struct controller *c, struct ctl_conn *conn, const struct ctl_request *req)
{
	struct slot *slot = slot_for_change(c, conn, req);
	int r;

	if (!slot)
		return;
	if (req->n_proc_maps > 0) {
		const char *texts[FTRACED_PIDS_PER_REQUEST_MAX];

		for (unsigned k = 0; k < req->n_proc_maps; k++)
			texts[k] = ctl_request_proc_maps(req, k);
		r = session_set_proc_maps(slot->session, texts, req->n_proc_maps);
		if (r < 0) {
			ctl_conn_send_error(conn, r, "memory maps (PROC_MAPS) for session '%s', "
					    "which %s", req->session,
					    r == -ENOMEM ? "has no memory left for them" :
					    r == -EALREADY ? "is stopping already" :
					    "is not a record with --proc-map");
			return;
		}
	}
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
	char error[FTRACED_MESSAGE_MAX] = "", cause[128];
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
	snprintf(cause, sizeof(cause), "snapshot asked for by uid %u (pid %d, ftracectl snapshot)",
		 (unsigned)ctl_conn_uid(conn), (int)ctl_conn_pid(conn));
	r = session_snapshot(slot->session, conn, fd, req->trim != 0, req->since_us, cause, error,
			     sizeof(error));
	if (r < 0)
		ctl_conn_send_error(conn, r, "%s", error);
}

/* ROTATE: the owner (or root) closes a running continuous session's segment now. */
static void handle_rotate(struct controller *c, struct ctl_conn *conn,
			  const struct ctl_request *req)
{
	char error[FTRACED_MESSAGE_MAX] = "";
	/* Not refused as busy: a rotation changes no setting, and one asked while a
	 * stop is under way hears "stopping, not running" from the session. */
	struct slot *slot = slot_owned(c, conn, req);
	int r;

	if (!slot)
		return;
	r = session_rotate_request(slot->session, conn, error, sizeof(error));
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

	if (one && !controller_find_slot(c, req->session)) {
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
		controller_find_slot(c, req->session) : NULL;
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
		controller_handle_save(c, conn, req);
		break;
	case FTRACED_MSG_OFFER:
		handle_offer(c, conn, req);
		break;
	case FTRACED_MSG_ROTATE:
		handle_rotate(c, conn, req);
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
		/* What waits stays, for nobody: reply-route.c decides what that means. */
		slot->reply.conn = NULL;
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
	c->session_news = (struct session_env){
		.event = env->event,
		.pool = env->pool,
		.state_dir_fd = env->state_dir_fd,
		.instance_tag = env->instance_tag,
		.clock_anchor = env->clock_anchor,
		.hold_dir_fd = env->hold_dir_fd,
		.runner = env->runner,
		.written = env->written,
		.retire_instance = retire_instance,
		.on_ready = on_session_ready,
		.on_done = on_session_done,
		.on_stopped = on_session_stopped,
		.on_snapshot = on_snapshot,
		.on_rotated = on_rotated,
		.userdata = c,
	};
	controller_read_ids(c);
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
		ctl_request_freep(&c->slots[i].next_req);
	}
	c->reaper = reaper_free(c->reaper);
	instance_offer_done(&c->offer);
	free(c);
	return NULL;
}
