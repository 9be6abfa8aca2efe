/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <systemd/sd-event.h>

#include "ftraced/macro.h"

struct ctl_builder;
struct instance;
struct reaper;

/* An instance a waiter asked about is gone (@result 0), or still busy at the deadline. */
typedef void (*reaper_done_fn)(void *waiter, const char *name, int result, void *userdata);

int reaper_new(sd_event *e, reaper_done_fn done, void *userdata, struct reaper **ret);
struct reaper *reaper_free(struct reaper *r);
DEFINE_CLEANUP(struct reaper *, reaper_free)
void reaper_retire(struct reaper *r, struct instance *i, bool now);
bool reaper_pending(const struct reaper *r, const char *name);
void reaper_wait(struct reaper *r, const char *name, void *waiter, uint64_t timeout_usec);
void reaper_forget_waiter(struct reaper *r, const void *waiter);
bool reaper_has_waiter(const struct reaper *r, const void *waiter);
void reaper_describe(const struct reaper *r, struct ctl_builder *b);
