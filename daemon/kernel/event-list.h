/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

#include "ftraced/macro.h"
#include "ftraced/proto.h"

/* One concrete event; in a list, the names belong to the list. */
struct event_id {
	const char *system;
	const char *event;
	const char *filter; /* its own filter (-f after its spec); NULL: none. Not owned. */
	const char *trigger; /* its trigger (-R after its spec); NULL: none. Not owned. */
};

/* Concrete events of a session, sorted by system, each once. */
struct event_list {
	size_t n;
	size_t n_allocated;
	size_t n_bytes;    /* "system:event" names together, against the caller's limit */
	struct event_id *events;
};

/* The kernel's events as tracefs lists them, read as specs need them. */
struct event_catalog;

int event_catalog_new(const char *tracing_dir, struct event_catalog **ret);
struct event_catalog *event_catalog_free(struct event_catalog *c);
DEFINE_CLEANUP(struct event_catalog *, event_catalog_free)
int event_catalog_walk(struct event_catalog *c,
		       int (*fn)(const char *system, const char *event, void *userdata),
		       void *userdata);

int event_spec_split(const char *spec, char *system, size_t n_system, char *event, size_t n_event);
/* The ftrace events a session's instance delivers (NULL-terminated lists). */
struct ftrace_offer {
	const char *const *events;  /* also for "ftrace", "ftrace:*" and globs */
	const char *const *by_name; /* only when named: they take something from others */
};

int event_list_expand(struct event_list *l, struct event_catalog *cat, const char *spec,
		      const char *filter, const struct ftrace_offer *ftrace, size_t n_bytes_max,
		      char *ambiguous, size_t n_ambiguous);
size_t event_list_remove(struct event_list *l, const struct event_list *gone);
int event_list_set_trigger(struct event_list *l, const struct event_list *these,
			   const char *trigger);
void event_list_done(struct event_list *l);
