/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * A capture stream's insides, shared by its data path (capture-stream.c)
 * and its storing of chunks (capture-store.c). Nothing else includes this.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/capture/capture-stream.h"
#include "daemon/kernel/instance.h"

struct capture_stream {
	unsigned cpu;
	int trace_fd;
	int stats_fd;
	int pipe_fd[2];
	int spool_fd;
	struct chunk_ring *ring;
	int notify_fd;
	uint32_t subbuf_size;
	uint32_t chunk_bytes; /* a whole number of sub-buffers */
	uint32_t chunk_max;   /* what chunk_bytes may grow to (a compressed ring's) */
	uint32_t batch_bytes; /* a whole number of chunk_max: the pending buffer's size */
	uint64_t chunk_stored_max; /* a compressed ring's chunk stores at most this, or 0 */
	size_t splice_bytes;  /* at most this per splice(), a whole number of sub-buffers */
	bool zstd;
	int level;
	bool drain_only;
	unsigned rt_priority;
	uint64_t region_bytes; /* in-place spools: the size of each region; 0: own files */

	uint64_t notify_bytes;
	_Atomic uint64_t *progress; /* borrowed: every stored byte is added here too */

	/* Worker-only while the stream is in the pool. */
	bool dead;          /* an error stopped reading */
	uint64_t next_notify;
	uint8_t *pending;   /* zstd or ring: sub-buffers not stored yet, up to batch_bytes;
			     * the hold's data if there is one, else the heap's */
	struct hold *hold;  /* compressed into a spool: the pending batch, outliving us */
	size_t n_pending;
	uint64_t pending_since; /* CLOCK_MONOTONIC usec when the oldest pending sub-buffer came */
	size_t torn;        /* none: bytes of a sub-buffer a failed splice left at the spool's end */
	uint64_t spool_pos;   /* zstd: where the next record goes in the spool's file */
	uint64_t spool_data;  /* zstd: where the spool's records begin in it */
	uint64_t spool_limit; /* in place: where the next CPU's region begins */
	uint64_t kicked;      /* in place: writeback started up to here */
	uint64_t dropped;     /* in place: dropped from the page cache up to here */
	struct capture_mirror mirror; /* fd -EBADF once it is broken */
	uint64_t mirror_kicked;  /* the same two in the mirror */
	uint64_t mirror_dropped;
	struct cpu_counters seen;   /* the kernel's counters at the last turn that moved data */
	uint64_t seen_usec;         /* ... read then */
	double events_per_usec;     /* ... the rate events came in between the last two turns */

	_Atomic uint64_t bytes_raw;
	_Atomic uint64_t bytes_stored;
	_Atomic uint64_t chunks;
	_Atomic uint64_t discarded; /* events taken from the kernel and never stored */
	_Atomic uint32_t clears;    /* times the kernel's counters went back: the buffer cleared */
	_Atomic uint64_t cleared;   /* events the buffer held at the turn before each clear */
	_Atomic int error;
	_Atomic bool finished;
	/* The last cut; written before cut_generation is released. */
	uint64_t cut_bytes_stored;
	uint64_t cut_chunks;
	_Atomic uint32_t cut_generation;
};

void capture_store_notify(struct capture_stream *s);
void capture_store_held(struct capture_stream *s);
void capture_store_discarded(struct capture_stream *s, const uint8_t *pages, size_t n);
void capture_store_stored(struct capture_stream *s, uint64_t bytes, uint64_t chunks);
int capture_store_flush(struct capture_scratch *w, struct capture_stream *s);
