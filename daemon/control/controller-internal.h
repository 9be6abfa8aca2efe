/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the controller's files share. They call each other in one direction,
 * from the top: controller.c (requests and replies, the sessions' news),
 * controller-reload.c (sessions.d read again: checked whole, then applied),
 * controller-files.c (the sessions the daemon makes itself: sessions.d,
 * saved sessions, reloads), controller-table.c (the session table, ids,
 * saved copies). Nothing else includes this.
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "daemon/base/bounds.h"
#include "daemon/control/controller.h"
#include "daemon/kernel/instance-offer.h"
#include "daemon/control/reply-route.h"
#include "daemon/session/session.h"
#include "lib/ctl/ctl-proto.h"

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
	struct ctl_request *next_req; /* ... with this request, checked at the reload */
	uint64_t next_hash;         /* ... and this version of the file */
};

struct controller {
	struct controller_env env;
	struct controller_limits limits;
	struct session_env session_news; /* the loop, services and news every session gets */
	struct reaper *reaper;      /* instances tracefs would not remove yet */
	struct instance_offer offer; /* what the kernel offers, found once */
	struct slot slots[SESSION_MAX];
	struct ctl_builder reply;
	uint32_t last_id;           /* the last session id given out */
	uint32_t reserved_id;       /* ids up to here are written down as taken */
	uint64_t sessions_started;
	const char *sessions_dir;   /* sessions.d; NULL until loaded */
	unsigned file_generation;
	bool exiting;
};

/* controller-table.c */
unsigned controller_n_sessions_of(const struct controller *c, uid_t uid);
void controller_changed(struct controller *c);
struct slot *controller_slot_of(struct controller *c, struct session *s);
struct slot *controller_free_slot(struct controller *c);
struct slot *controller_find_slot(struct controller *c, const char *name);
void controller_wait_in_log(struct slot *slot, const char *origin);
struct session_env controller_session_env(struct controller *c, uid_t owner);
int controller_start_session(struct controller *c, struct session *s);
void controller_destroy_slot(struct controller *c, struct slot *slot);
uint32_t controller_new_id(struct controller *c);
void controller_read_ids(struct controller *c);
void controller_save(struct controller *c, struct slot *slot, bool running, uint64_t stopped_usec);
void controller_unsave(struct controller *c, struct slot *slot);
/* controller-files.c */
bool controller_create_from_file(const char *file, const struct ctl_request *req, uint64_t hash,
				 struct controller *c);
void controller_start_from_file(struct controller *c, struct slot *slot);
void controller_handle_save(struct controller *c, struct ctl_conn *conn,
			    const struct ctl_request *req);
