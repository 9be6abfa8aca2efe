/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <systemd/sd-event.h>

#include "ftraced/macro.h"

struct ctl_builder;
struct metrics_file;

/* Builds a SESSIONS reply to LIST, with the daemon's counters, into @b. */
typedef void (*metrics_fill_fn)(void *userdata, struct ctl_builder *b);

int metrics_file_new(sd_event *e, const char *directory, uint64_t interval_ms,
		     metrics_fill_fn fill, void *userdata, struct metrics_file **ret);
void metrics_file_update(struct metrics_file *mf, bool running);
struct metrics_file *metrics_file_free(struct metrics_file *mf);
