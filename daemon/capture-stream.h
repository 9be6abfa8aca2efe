/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The capture stream's data path, as the worker that holds the stream
 * drives it (see capture.h for the session's side).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/capture.h"

struct compressor;

/* What a worker lends the streams it serves: buffers and a zstd context (not thread-safe). */
struct capture_scratch {
	struct compressor *zc;
	uint8_t *raw;   /* one sub-buffer of the largest size */
	size_t raw_cap;
	uint8_t *out;   /* one chunk record of the largest size */
	size_t out_cap;
};

int capture_scratch_init(struct capture_scratch *w);
void capture_scratch_deinit(struct capture_scratch *w);

int capture_stream_trace_fd(const struct capture_stream *s);
unsigned capture_stream_cpu(const struct capture_stream *s);
bool capture_stream_has_ring(const struct capture_stream *s);
bool capture_stream_dead(const struct capture_stream *s);
bool capture_stream_drain_only(const struct capture_stream *s);
unsigned capture_stream_rt_priority(const struct capture_stream *s);
int capture_stream_begin(struct capture_stream *s);
int capture_stream_drain(struct capture_stream *s, struct capture_scratch *w, uint64_t max_bytes);
void capture_stream_rotate(struct capture_stream *s, struct capture_scratch *w, int spool_fd);
void capture_stream_finish(struct capture_stream *s, struct capture_scratch *w);
void capture_stream_fail(struct capture_stream *s, int error);
