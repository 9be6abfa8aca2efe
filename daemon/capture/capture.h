/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "daemon/capture/capture-stream.h"
#include "ftraced/macro.h"

/*
 * The capture workers, one per CPU, and the streams they serve
 * (capture.c); a stream's own data path is capture-stream.h's.
 */
struct capture_pool;

int capture_pool_new(unsigned n_cpus, struct capture_pool **ret);
struct capture_pool *capture_pool_free(struct capture_pool *p);
DEFINE_CLEANUP(struct capture_pool *, capture_pool_free)
unsigned capture_pool_cpus(const struct capture_pool *p);
bool capture_pool_stalled(const struct capture_pool *p, uint64_t max_age_usec, unsigned *ret_cpu,
			  uint64_t *ret_age_usec);
int capture_pool_test_stall(struct capture_pool *p, unsigned cpu);
int capture_pool_add(struct capture_pool *p, struct capture_stream *s);
int capture_pool_rotate(struct capture_pool *p, struct capture_stream *s, int spool_fd,
			uint64_t spool_id);
int capture_pool_read(struct capture_pool *p, struct capture_stream *s);
int capture_pool_flush(struct capture_pool *p, struct capture_stream *s);
int capture_pool_finish(struct capture_pool *p, struct capture_stream *s);
