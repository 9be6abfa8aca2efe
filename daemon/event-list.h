/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

#include "ftraced/proto.h"

struct event_id {
	char system[FTRACED_NAME_MAX + 1];
	char event[FTRACED_EVENT_SPEC_MAX + 1];
	const char *filter; /* its own filter (-f after its spec); NULL: none. Not owned. */
};

/* Concrete events of a session, sorted by system, each once. */
struct event_list {
	size_t n;
	struct event_id *events;
};

int event_spec_split(const char *spec, char *system, size_t n_system, char *event, size_t n_event);
/* The ftrace events a session's instance delivers (NULL-terminated lists). */
struct ftrace_offer {
	const char *const *events;  /* also for "ftrace" and "ftrace:*" */
	const char *const *by_name; /* only when named: they take something from others */
};

int event_list_expand(struct event_list *l, const char *tracing_dir, const char *spec,
		      const char *filter, const struct ftrace_offer *ftrace, size_t n_max);
void event_list_done(struct event_list *l);
