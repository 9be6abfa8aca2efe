// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A reload of sessions.d, as nginx -s reload and systemctl daemon-reload do
 * it: the whole directory is read and checked first (controller_check_
 * session_files(): every file parses, names a session of its own, asks for
 * options and events this kernel has), and only a directory without an
 * error is applied (controller_apply_session_files(): new files start
 * their session, a changed file's session starts again with what the file
 * says now once its last file is written, a session whose file went away
 * is destroyed). One error refuses the whole reload: what runs keeps
 * running as it was, a typo never stops a session.
 *
 * Main thread only.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/base/log.h"
#include "daemon/control/controller-internal.h"
#include "daemon/store/sessions-dir.h"

/* The slot of the session a sessions.d file made, if it still runs. */
static struct slot *slot_of_file(struct controller *c, const char *file)
{
	for (size_t i = 0; i < SESSION_MAX; i++)
		if (c->slots[i].session && strcmp(c->slots[i].file, file) == 0)
			return &c->slots[i];
	return NULL;
}

static const struct session_file *find_file(const struct session_files *f, const char *name)
{
	for (size_t i = 0; i < f->n; i++)
		if (strcmp(f->files[i].name, name) == 0)
			return &f->files[i];
	return NULL;
}

/*
 * A session from a file that is no longer there, with the name a new file
 * gives its session: the file was renamed, and the session starts again
 * from the new one (it could not be created while the old one runs).
 */
static struct slot *slot_renamed(struct controller *c, const struct session_files *f,
				 const char *session)
{
	struct slot *slot = controller_find_slot(c, session);

	return slot && slot->file[0] && !find_file(f, slot->file) ? slot : NULL;
}

static void add_text(char *buf, size_t n, const char *fmt, ...) _printf_(3, 4);
static void add_text(char *buf, size_t n, const char *fmt, ...)
{
	size_t len = strnlen(buf, n);
	va_list ap;

	if (len + 1 >= n)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, n - len, fmt, ap);
	va_end(ap);
}

/* A file's session, checked as if created: -errno with @error ("FILE: what"). */
static int check_one(struct controller *c, const struct session_files *f,
		     const struct session_file *file, const struct controller_limits *next,
		     char *error, size_t n_error)
{
	char what[FTRACED_MESSAGE_MAX] = "";
	struct slot *slot = slot_of_file(c, file->name), *named;
	struct session_env env;
	int r;

	for (const struct session_file *o = f->files; o < file; o++)
		if (o->req && strcmp(o->req->session, file->req->session) == 0) {
			snprintf(error, n_error, "%s and %s both name the session '%s': give each "
				 "file a session of its own (name = NAME)", o->name, file->name,
				 file->req->session);
			return -EEXIST;
		}
	named = controller_find_slot(c, file->req->session);
	if (named && named != slot && !slot_renamed(c, f, file->req->session)) {
		if (named->file[0])
			snprintf(error, n_error, "%s: the session '%s' runs from %s", file->name,
				 file->req->session, named->file);
		else
			snprintf(error, n_error, "%s: a session '%s' exists already (made with "
				 "ftracectl create or record): destroy it or rename the file's",
				 file->name, file->req->session);
		return -EEXIST;
	}
	if (slot && slot->file_hash == file->hash)
		return 0;
	/* With the limits the reload sets, as the session would be created. */
	env = controller_session_env(c, /* owner= */ 0);
	env.rt_priority_max = next->rt_priority_max;
	r = session_check_request(&env, /* owner= */ 0, file->req, what, sizeof(what));
	if (r < 0)
		snprintf(error, n_error, "%s: %s", file->name, what[0] ? what : strerror(-r));
	return r;
}

/*
 * Sessions there will be once @f is applied: those clients made, and one
 * per file (its session runs on, starts again or starts).
 */
static size_t sessions_after(const struct controller *c, const struct session_files *f)
{
	size_t n = f->n;

	for (size_t i = 0; i < SESSION_MAX; i++)
		if (c->slots[i].session && !c->slots[i].file[0])
			n++;
	return n;
}

/**
 * controller_check_session_files() - may sessions.d, as read now, be applied?
 * @c: controller
 * @f: the directory's files, each with its request or its error
 * @next: the limits the same reload sets (ftraced.conf read again)
 * @error: receives the first problem, "FILE:LINE: what"
 * @n_error: its size
 *
 * Every file with a problem is logged; nothing is changed.
 *
 * Return: 0, or -errno with @error set.
 */
int controller_check_session_files(struct controller *c, const struct session_files *f,
				   const struct controller_limits *next, char *error,
				   size_t n_error)
{
	char first[FTRACED_MESSAGE_MAX] = "";
	unsigned n_bad = 0;
	size_t n;
	int r = 0;

	if (f->n_ignored > 0) {
		snprintf(error, n_error, "more than %u *.conf files in the sessions directory "
			 "(SESSION_FILES_MAX)", SESSION_FILES_MAX);
		return -E2BIG;
	}
	for (size_t i = 0; i < f->n; i++) {
		char what[FTRACED_MESSAGE_MAX];
		int k = -EINVAL;

		if (f->files[i].error)
			snprintf(what, sizeof(what), "%s", f->files[i].error);
		else
			k = check_one(c, f, &f->files[i], next, what, sizeof(what));
		if (k >= 0)
			continue;
		log_error("Reload: %s", what);
		if (n_bad++ == 0) {
			snprintf(first, sizeof(first), "%s", what);
			r = k;
		}
	}
	if (n_bad > 0) {
		snprintf(error, n_error, "%s%s", first, n_bad > 1 ? " (and more: see the log)" : "");
		return r;
	}
	n = sessions_after(c, f);
	if (n > SESSION_MAX) {
		snprintf(error, n_error, "with the sessions directory there would be %zu sessions, "
			 "more than %u (SESSION_MAX)", n, SESSION_MAX);
		return -E2BIG;
	}
	return 0;
}

/*
 * A changed (or renamed) file's session: destroyed (its last segment
 * closed and written) and created again from @file's request once it is
 * gone (controller.c's on_session_done()).
 */
static void restart_from(struct controller *c, struct slot *slot, struct session_file *file)
{
	ctl_request_freep(&slot->next_req);
	slot->next_req = TAKE_PTR(file->req);
	slot->next_hash = file->hash;
	slot->file_generation = c->file_generation;
	if (slot->reload_when_done) {
		snprintf(slot->file, sizeof(slot->file), "%s", file->name);
		return; /* already on its way out: it comes back with this version */
	}
	log_notice("%s changed: session '%s' is stopped (its last file written) and started again "
		   "with what the file says now", file->name, session_name(slot->session));
	snprintf(slot->file, sizeof(slot->file), "%s", file->name);
	slot->reload_when_done = true;
	controller_destroy_slot(c, slot);
}

struct reload_counts {
	char started[256], restarted[256], stopped[256], failed[256];
	unsigned n_started, n_restarted, n_stopped, n_unchanged, n_failed;
};

static void count(char *names, size_t n, unsigned *counter, const char *name)
{
	add_text(names, n, "%s%s", (*counter)++ ? ", " : "", name);
}

/**
 * controller_apply_session_files() - sessions.d as checked, applied.
 * @c: controller
 * @dir: the sessions directory
 * @f: its files, checked by controller_check_session_files(); requests are taken
 * @summary: receives one line: what changed
 * @n_summary: its size
 *
 * New files start their session; a changed file's session starts again
 * with its new settings once its last file is written; a session whose
 * file went away is destroyed (its files stay). Sessions created by
 * clients are not touched. Each is said in the log.
 */
void controller_apply_session_files(struct controller *c, const char *dir,
				    struct session_files *f, char *summary, size_t n_summary)
{
	struct reload_counts k = {};

	c->sessions_dir = dir;
	c->file_generation++;
	for (size_t i = 0; i < f->n; i++) {
		struct session_file *file = &f->files[i];
		struct slot *slot = slot_of_file(c, file->name);

		if (!slot && (slot = slot_renamed(c, f, file->req->session))) {
			log_notice("%s is gone and %s names its session '%s'", slot->file,
				   file->name, file->req->session);
		} else if (!slot) {
			if (controller_create_from_file(file->name, file->req, file->hash, c))
				count(k.started, sizeof(k.started), &k.n_started, file->req->session);
			else /* what only making it tells (memory, instance, disk): logged */
				count(k.failed, sizeof(k.failed), &k.n_failed, file->req->session);
			continue;
		}
		slot->file_generation = c->file_generation;
		if (slot->file_hash == file->hash && !slot->reload_when_done) {
			/* The same text, perhaps under a new name: the session goes on. */
			snprintf(slot->file, sizeof(slot->file), "%s", file->name);
			k.n_unchanged++;
			continue;
		}
		count(k.restarted, sizeof(k.restarted), &k.n_restarted, file->req->session);
		restart_from(c, slot, file);
	}
	for (size_t i = 0; i < SESSION_MAX; i++) {
		struct slot *slot = &c->slots[i];

		if (!slot->session || !slot->file[0] || slot->file_generation == c->file_generation)
			continue;
		log_notice("%s is gone: session '%s' is stopped and destroyed (its files stay)",
			   slot->file, session_name(slot->session));
		count(k.stopped, sizeof(k.stopped), &k.n_stopped, session_name(slot->session));
		slot->file[0] = '\0';
		ctl_request_freep(&slot->next_req);
		slot->reload_when_done = false;
		controller_destroy_slot(c, slot);
	}
	add_text(summary, n_summary, "sessions.d: %u started%s%s%s, %u restarted%s%s%s, "
		 "%u stopped%s%s%s, %u unchanged", k.n_started, k.n_started ? " (" : "",
		 k.started, k.n_started ? ")" : "", k.n_restarted, k.n_restarted ? " (" : "",
		 k.restarted, k.n_restarted ? ")" : "", k.n_stopped, k.n_stopped ? " (" : "",
		 k.stopped, k.n_stopped ? ")" : "", k.n_unchanged);
	if (k.n_failed)
		add_text(summary, n_summary, ", %u could not be made (%s: see the log)", k.n_failed,
			 k.failed);
}
