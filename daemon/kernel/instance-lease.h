/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "ftraced/proto.h"

struct event_list;
struct instance;

/*
 * In the state directory while a session leases the top-level buffer: every
 * top-level setting the lease may change, as it was found, and the holder.
 */
#define INSTANCE_LEASE_FILE "top-level-lease"
/* What a leased top level is called in status and in a spool's recipe. */
#define INSTANCE_TOP_LEVEL_NAME FTRACED_TOP_LEVEL_INSTANCE
/* The journal's size: a value per option and per event filter, each a line. */
#define INSTANCE_LEASE_JOURNAL_MAX (1024u * 1024u)

struct instance_lease;

int instance_lease_take(int state_dir_fd, const char *holder, const struct event_list *events,
			struct instance_lease **ret_lease, struct instance **ret_top, char *error,
			size_t n_error);
struct instance_lease *instance_lease_release(struct instance_lease *l);
int instance_lease_restore_stale(int state_dir_fd);
int instance_lease_holder(int state_dir_fd, char *buf, size_t n);
int instance_lease_adopt_orphan(int state_dir_fd, const char *name, struct instance **ret);
