/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The flight recorder (flight.c), a session mode: it works on its own
 * struct, through the narrow host its session gives it (session-mode.h).
 * Functions taking "or NULL" answer for sessions of other modes too.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ctl_builder;
struct flight;
struct ftraced_session_counters;
struct mode_host;
struct publish_outcome;

int flight_new(const struct mode_host *host, struct flight **ret, char *error, size_t n_error);
struct flight *flight_free(struct flight *f);
int flight_snapshot_dir(const struct flight *f);
int flight_start(struct flight *f);
void flight_stop_triggers(struct flight *f);
bool flight_stop(struct flight *f);
bool flight_draining(const struct flight *f);
bool flight_swaps(const struct flight *f);
const char *flight_note(const struct flight *f);
void flight_progress(struct flight *f);
void flight_drained(struct flight *f);
void flight_published(struct flight *f, const struct publish_outcome *o);
int flight_snapshot(struct flight *f, void *waiter, int out_fd, bool trim, uint64_t since_us,
		    const char *cause, char *error, size_t n_error);
size_t flight_pending(const struct flight *f);
bool flight_leave_armed(struct flight *f);
void flight_resume_kept(struct flight *f);
void flight_leave_kept(struct flight *f);
void flight_forget_waiter(struct flight *f, const void *waiter);
bool flight_has_waiter(const struct flight *f, const void *waiter);
void flight_describe(struct flight *f, uint64_t start_usec, struct ctl_builder *b);
void flight_counters(const struct flight *f, struct ftraced_session_counters *c);
