/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

#include <systemd/sd-event.h>

#include "daemon/flight/trigger-spec.h"
#include "ftraced/macro.h"

struct trigger;

/* What a firing says of itself: the trigger, the event, its task and time. */
#define TRIGGER_CAUSE_MAX (FTRACED_TRIGGER_MAX + 256u)

/* The trigger fired (its rate limits allowed it): @ts is the event's trace time. */
typedef void (*trigger_fire_fn)(struct trigger *t, uint64_t ts, void *userdata);

struct trigger_env {
	sd_event *event;
	uint32_t instance_tag;
	uint64_t instance_id;
	const char *clock; /* the session's trace clock, or NULL for the default */
	const char *date;  /* the session's wall-clock anchor (DATE option), "" or NULL: none */
	unsigned n_cpus;
	trigger_fire_fn fire;
	void *userdata;
};

int trigger_new(const struct trigger_env *env, const char *text, struct trigger **ret,
		char *error, size_t n_error);
struct trigger *trigger_free(struct trigger *t);
DEFINE_CLEANUP(struct trigger *, trigger_free)
int trigger_arm(struct trigger *t);
void trigger_disarm(struct trigger *t);
const struct trigger_spec *trigger_spec(const struct trigger *t);
void trigger_set_result(struct trigger *t, const char *result);
void trigger_describe(const struct trigger *t, char *buf, size_t n);
const char *trigger_cause(const struct trigger *t);
void trigger_add_counts(const struct trigger *t, uint64_t *fired, uint64_t *suppressed);
