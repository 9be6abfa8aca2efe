/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ftraced/macro.h"
#include "ftraced/proto.h"

/*
 * A memory flight recorder's history kept where it outlives the daemon:
 * one CPU's chunks packed in slabs, each slab a file in the holds'
 * directory (hold.h: tmpfs, $RUNTIME_DIRECTORY under systemd), under
 * RING_KEEP_DIR_PREFIX and the session's name, mapped shared. The chunks'
 * bytes are those pages and nowhere else, so keeping them costs no memory
 * twice; slabs, not a file per chunk, so that a large ring is a few
 * mappings and no page is half used per chunk. A slab is only appended to,
 * and goes as a whole when the ring drops its oldest history: its file is
 * removed at once, its mapping when the last snapshot holding one of its
 * chunks lets go. After a kill -9 or a restart, the session's next start
 * finds the slabs and resumes the history from them (chunk-ring.c).
 */
#define RING_KEEP_DIR_PREFIX "flight-"
#define RING_SLAB_MAGIC UINT32_C(0x42414c53) /* "SLAB" in file order */
#define RING_SLAB_VERSION 1u
/* The slab header; records follow it (a page would cost 1/16 of a small ring). */
#define RING_SLAB_HDR_SIZE 64u
#define RING_RECORD_MAGIC UINT32_C(0x4b4e4843) /* "CHNK" */
/* A ring has about this many slabs: it drops 1/RING_SLABS of its history at a time. */
#define RING_SLABS 16u
#define RING_SLAB_MIN 4096u
/* Slab files one CPU's history may come back from: far above RING_SLABS (and a slab per chunk). */
#define RING_SLABS_LOAD_MAX 65536u

struct ring_slab_header {
	uint32_t magic;
	uint32_t version;
	uint32_t cpu;
	uint32_t subbuf_size;
	uint32_t zstd;
	uint32_t reserved;
	uint64_t seq;          /* the slab's place in its ring */
	uint64_t size;         /* of the file: header page and records */
	_Atomic uint64_t used; /* bytes of whole records after the header page */
};

/* A chunk in a slab, 8-byte aligned; its data follows. */
struct ring_record {
	uint32_t magic;
	uint32_t size;     /* data bytes */
	uint32_t raw_size; /* sub-buffer bytes they hold */
	uint32_t reserved;
	uint64_t first_ts;
	uint64_t last_ts;
};

struct ring_slab {
	_Atomic unsigned refs;
	struct ring_slab_header *hdr; /* the mapping */
	size_t size;
	uint64_t seq;
	bool dropped;                 /* its file is gone */
	char name[32];
};

struct ring_keep {
	int dir_fd;
	unsigned cpu;
	uint32_t subbuf_size;
	bool zstd;
	size_t slab_size;
	uint64_t next_seq;
	struct ring_slab *current; /* appended to; the keep holds a reference */
	int current_fd;            /* its file: room is allocated before each record */
};

/* A chunk found in a slab at a restart; the callee takes a reference to @slab if it keeps it. */
typedef int (*ring_keep_found_fn)(struct ring_slab *slab, const struct ring_record *rec,
				  uint8_t *data, void *userdata);

int ring_keep_open(int hold_dir_fd, const char *session, unsigned cpu, uint32_t subbuf_size,
		   bool zstd, uint64_t budget, struct ring_keep **ret);
int ring_keep_load(struct ring_keep *k, ring_keep_found_fn found, void *userdata);
void ring_keep_discard(struct ring_keep *k);
void ring_keep_forget(struct ring_keep *k);
struct ring_keep *ring_keep_free(struct ring_keep *k, bool leave_files);
bool ring_keep_fits(const struct ring_keep *k, size_t size);
int ring_keep_new_slab(struct ring_keep *k, size_t size);
uint8_t *ring_keep_append(struct ring_keep *k, const void *data, size_t size, uint32_t raw_size,
			  uint64_t first_ts, uint64_t last_ts);
void ring_keep_drop(struct ring_keep *k, struct ring_slab *slab);
struct ring_slab *ring_slab_ref(struct ring_slab *s);
struct ring_slab *ring_slab_unref(struct ring_slab *s);
void ring_keep_dir_remove(int hold_dir_fd, const char *session);
void ring_keep_prune(int hold_dir_fd, bool (*wanted)(const char *session, void *userdata),
		     void *userdata);
