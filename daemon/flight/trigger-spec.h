/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "ftraced/proto.h"

/* A --trigger specification, parsed; presets are expanded to their event and filter. */
struct trigger_spec {
	char event[FTRACED_EVENT_SPEC_MAX + 1]; /* "system:event" */
	char filter[FTRACED_FILTER_MAX + 1];    /* "" for none */
	uint64_t pre_ms;          /* the snapshot keeps this long before the event; 0: all */
	uint64_t post_ms;         /* keep recording this long before the snapshot */
	uint64_t min_interval_ms; /* between two snapshots of this trigger */
	uint32_t max;             /* snapshots in all; 0 for no limit */
};

int trigger_spec_parse(const char *text, struct trigger_spec *ret, char *error, size_t n_error);
