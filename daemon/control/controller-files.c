// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The sessions the daemon makes itself, besides those clients ask for:
 * those of sessions.d (at start; a reload is controller-reload.c's, which
 * makes its new and changed sessions here), and those clients
 * made with `create`, saved in the state directory (session-store.c) and
 * restored at every start with the time they did not capture (their gap).
 * Also what keeps the saved copies in step, the session ids no run gives
 * out twice, and `ftracectl save`.
 *
 * Main thread only.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon/control/controller-internal.h"
#include "daemon/control/ctl-server.h"
#include "daemon/base/log.h"
#include "daemon/store/ring-keep.h"
#include "daemon/store/session-file.h"
#include "daemon/store/session-store.h"
#include "daemon/store/sessions-dir.h"
#include "lib/io-util.h"
#include "lib/time-util.h"

/*
 * A session from a file (sessions.d or a saved copy): created now as
 * @owner, started once its ring is allocated if @start. Problems are
 * logged with @origin.
 */
static struct slot *create_from(struct controller *c, const char *origin,
				const struct ctl_request *req, uid_t owner, bool start)
{
	char error[FTRACED_MESSAGE_MAX] = "";
	struct session_env env = controller_session_env(c, owner);
	struct session *s;
	struct slot *slot;
	int r;

	if (controller_find_slot(c, req->session)) {
		log_error("%s: a session '%s' exists already; skipping this one", origin,
			  req->session);
		return NULL;
	}
	slot = controller_free_slot(c);
	if (!slot) {
		log_error("%s: too many sessions (at most %u); skipping session '%s'", origin,
			  SESSION_MAX, req->session);
		return NULL;
	}
	r = session_new(&env, controller_new_id(c), req->session, owner, req, -EBADF, &s, error,
			sizeof(error), NULL);
	if (r < 0) {
		log_error("%s: %s; skipping this session", origin, error);
		return NULL;
	}
	slot->session = s;
	slot->start_when_ready = start;
	controller_wait_in_log(slot, origin); /* on_session_ready() tells the log */
	return slot;
}

/* A session file's request (sessions-dir.c), with a hash of the file for reloads. */
bool controller_create_from_file(const char *file, const struct ctl_request *req, uint64_t hash,
				 struct controller *c)
{
	struct slot *slot = create_from(c, file, req, /* owner= */ 0, /* start= */ true);

	if (!slot)
		return false;
	if (session_file_format_new(req, &slot->conf) < 0)
		slot->conf = NULL;
	snprintf(slot->file, sizeof(slot->file), "%s", file);
	slot->file_hash = hash;
	slot->file_generation = c->file_generation;
	return true;
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
void controller_start_from_file(struct controller *c, struct slot *slot)
{
	const char *message;
	int r;

	if (!slot->start_when_ready) {
		log_info("%s: session '%s' created", slot->reply.origin,
			 session_name(slot->session));
		return;
	}
	/* Before it starts: its first file's recipe says the gap, should a crash recover it. */
	if (slot->saved)
		account_gap(c, slot);
	/* A flight recorder's history the daemon kept before it stopped (or was killed). */
	session_resume_history(slot->session);
	r = controller_start_session(c, slot->session);
	if (r < 0) {
		session_error(slot->session, &message);
		log_error("%s: cannot start session '%s': %s", slot->reply.origin,
			  session_name(slot->session), message[0] ? message : strerror(-r));
		return;
	}
	log_info("%s: session '%s' started", slot->reply.origin, session_name(slot->session));
	/* Running now: a crash from here on is a crash of this run. */
	if (slot->saved)
		controller_save(c, slot, /* running= */ true, 0);
}

/* A saved session (session-store.c): created again as it was, started if it was running. */
static void restore_saved(const struct saved_session *s, const char *conf, size_t n_conf,
			  void *userdata)
{
	static struct ctl_builder b;
	_cleanup_(ctl_request_freep) struct ctl_request *req = calloc(1, sizeof(*req));
	struct controller *c = userdata;
	char origin[FTRACED_NAME_MAX + 32], error[256] = "";
	struct slot *slot;
	unsigned line;
	int r;

	snprintf(origin, sizeof(origin), "saved session '%s'", s->name);
	if (!req) {
		log_error("%s: out of memory, skipping it", origin);
		return;
	}
	r = session_file_parse(conf, n_conf, s->name, &b, error, sizeof(error), &line);
	if (r >= 0 && (r = ctl_builder_parse(&b, req, NULL)) < 0)
		snprintf(error, sizeof(error), "too large or malformed");
	ctl_builder_done(&b);
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

static bool session_exists(const char *name, void *userdata)
{
	return controller_find_slot(userdata, name) != NULL;
}

/**
 * controller_prune_kept() - at start-up, once every session is back: the
 * flight recorder histories kept for sessions that are no more go.
 * @c: controller
 */
void controller_prune_kept(struct controller *c)
{
	if (c->env.hold_dir_fd >= 0)
		ring_keep_prune(c->env.hold_dir_fd, session_exists, c);
}

/**
 * controller_load_session_files() - start the sessions of sessions.d.
 * @c: controller
 * @dir: the sessions directory (kept: read again at each reload)
 *
 * At start, unlike a reload, a file with an error is skipped (and logged)
 * and the others start: nothing runs yet that it could keep.
 */
void controller_load_session_files(struct controller *c, const char *dir)
{
	_cleanup_(session_files_done) struct session_files f = {};
	int r;

	c->sessions_dir = dir;
	c->file_generation++;
	r = sessions_dir_read(dir, SESSION_FILES_MAX, &f);
	if (r < 0) {
		log_warning_errno(r, "Cannot read '%s', no sessions from files: %m", dir);
		return;
	}
	if (f.n_ignored > 0)
		log_error("'%s' holds more than %u *.conf files (SESSION_FILES_MAX): %zu not read",
			  dir, SESSION_FILES_MAX, f.n_ignored);
	for (size_t i = 0; i < f.n; i++) {
		if (f.files[i].error)
			log_error("%s; skipping this session", f.files[i].error);
		else
			controller_create_from_file(f.files[i].name, f.files[i].req, f.files[i].hash,
						    c);
	}
}

/* SAVE: the session's file for sessions.d, as a sealed memfd. */
void controller_handle_save(struct controller *c, struct ctl_conn *conn, const struct ctl_request *req)
{
	struct slot *slot = controller_find_slot(c, req->session);
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
			controller_save(c, slot, /* running= */ true, now);
		slot->session = session_leave_armed(s);
		if (slot->session) {
			session_leave_history(s);
			session_destroy(s); /* may free it */
		}
		else
			controller_changed(c);
	}
}
