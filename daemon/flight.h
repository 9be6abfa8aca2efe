/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct ctl_builder;
struct flight;
struct ftraced_session_counters;
struct publish_outcome;
struct session;

int flight_new(struct session *s, char *error, size_t n_error);
struct flight *flight_free(struct flight *f);
int flight_snapshot_dir(const struct flight *f);
int flight_start(struct session *s);
void flight_stop_triggers(struct session *s);
bool flight_stop(struct session *s);
bool flight_draining(const struct session *s);
bool flight_swaps(const struct session *s);
const char *flight_note(const struct session *s);
void flight_progress(struct session *s);
void flight_drained(struct session *s);
void flight_published(struct session *s, const struct publish_outcome *o);
size_t flight_pending(const struct session *s);
void flight_forget_waiter(struct session *s, const void *waiter);
bool flight_has_waiter(const struct session *s, const void *waiter);
void flight_describe(struct session *s, struct ctl_builder *b);
void flight_counters(const struct session *s, struct ftraced_session_counters *c);
