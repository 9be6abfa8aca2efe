// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The controller's session table, and what every part of the controller
 * does with it: find and free slots, give out session ids no run gives out
 * twice, give a new session its environment, start one (counted), destroy
 * one, and keep a client's session's saved copy in step with it. It calls
 * nothing of controller.c's or controller-files.c's: they sit above it.
 * Main thread only.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/base/bounds.h"
#include "daemon/base/log.h"
#include "daemon/control/controller-internal.h"
#include "daemon/kernel/kallsyms.h"
#include "daemon/store/session-store.h"
#include "lib/io-util.h"

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

/* The sessions @uid owns. */
unsigned controller_n_sessions_of(const struct controller *c, uid_t uid)
{
	return n_sessions(c, uid, true);
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

void controller_changed(struct controller *c)
{
	c->env.changed(c->env.userdata);
}

/* An empty slot, cleared of what its last session left. */
struct slot *controller_free_slot(struct controller *c)
{
	for (size_t i = 0; i < SESSION_MAX; i++)
		if (!c->slots[i].session) {
			free(c->slots[i].conf);
			ctl_request_freep(&c->slots[i].next_req);
			c->slots[i] = (struct slot){};
			return &c->slots[i];
		}
	return NULL;
}

struct slot *controller_find_slot(struct controller *c, const char *name)
{
	for (size_t i = 0; i < SESSION_MAX; i++)
		if (c->slots[i].session && strcmp(session_name(c->slots[i].session), name) == 0)
			return &c->slots[i];
	return NULL;
}

struct slot *controller_slot_of(struct controller *c, struct session *s)
{
	for (size_t i = 0; i < SESSION_MAX; i++)
		if (c->slots[i].session == s)
			return &c->slots[i];
	return NULL;
}

void controller_wait_in_log(struct slot *slot, const char *origin)
{
	slot->reply = (struct pending_reply){ .kind = REPLY_LOG };
	snprintf(slot->reply.origin, sizeof(slot->reply.origin), "%s", origin);
}

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

/* What a new session of @owner gets from the daemon: the controller's news, its limits. */
struct session_env controller_session_env(struct controller *c, uid_t owner)
{
	struct session_env env = c->session_news;

	env.kallsyms = symbols_for(c, owner);
	env.memory_limit = c->limits.memory_limit;
	env.rt_priority_max = c->limits.rt_priority_max;
	env.memory_committed = memory_committed(c);
	return env;
}

/* session_start(), counted for the metrics. */
int controller_start_session(struct controller *c, struct session *s)
{
	int r = session_start(s);

	if (r >= 0)
		c->sessions_started++;
	return r;
}

void controller_destroy_slot(struct controller *c, struct slot *slot)
{
	controller_unsave(c, slot);
	session_destroy(slot->session); /* may reply and free the session right away */
}

/*
 * A session id no earlier run of the daemon gave out: instances are named
 * by them, and an orphan a crash left (busy, being removed) must never be
 * taken for a new session's. The ids taken are written down in the state
 * directory a block at a time, so a session costs no write.
 */
uint32_t controller_new_id(struct controller *c)
{
	char text[16];
	int r;

	/* 0 is the clock anchor's instance; a wrap starts again past it. */
	if (++c->last_id == 0)
		c->last_id = 1;
	if (c->last_id <= c->reserved_id && c->reserved_id - c->last_id < SESSION_ID_RESERVE)
		return c->last_id;
	c->reserved_id = c->last_id + SESSION_ID_RESERVE;
	snprintf(text, sizeof(text), "%" PRIu32 "\n", c->reserved_id);
	r = replace_file_at(c->env.state_dir_fd, SESSION_ID_FILE, text, strlen(text), 0600);
	if (r < 0)
		log_warning_errno(r, "Cannot write down the session ids taken (%s), ignoring: after a "
				  "crash, a new session may take an orphan's name: %m", SESSION_ID_FILE);
	return c->last_id;
}

/* The ids earlier runs wrote down as taken: this run's start past them. */
void controller_read_ids(struct controller *c)
{
	char text[16] = "";
	ssize_t n = 0;
	int fd;

	fd = openat(c->env.state_dir_fd, SESSION_ID_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, text, sizeof(text) - 1);
		close(fd);
	}
	if (n > 0)
		c->last_id = (uint32_t)strtoul(text, NULL, 10);
	c->reserved_id = c->last_id;
}

/* The saved copy of a client's session, as it is now; failures logged, not fatal. */
void controller_save(struct controller *c, struct slot *slot, bool running, uint64_t stopped_usec)
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

void controller_unsave(struct controller *c, struct slot *slot)
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
