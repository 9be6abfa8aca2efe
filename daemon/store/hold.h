/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ftraced/macro.h"

/*
 * A hold: the sub-buffers a capture worker took from the kernel and has
 * not yet stored in its spool (the pending batch), in a shared mapping of
 * a file on tmpfs, so that they outlive the daemon. One per stream into a
 * compressed spool; the next start's recovery appends what a killed
 * daemon held to the spool it was meant for (recovery-hold.c).
 *
 * The holds of a state directory live in one directory, which the state
 * directory names by a symbolic link (HOLD_LINK): under systemd in the
 * service's runtime directory ($RUNTIME_DIRECTORY, kept across restarts
 * by RuntimeDirectoryPreserve=restart), by hand in /dev/shm; named after
 * the state directory's instance tag either way. Memory, not disk: raw
 * sub-buffers never reach the disk, and rewriting a batch costs no I/O.
 */
#define HOLD_LINK "hold"
#define HOLD_SHM_DIR "/dev/shm"
#define HOLD_DIR_PREFIX "ftraced-hold-"
/* The header's page; the data follows it, page aligned. */
#define HOLD_HDR_SIZE 4096u
#define HOLD_MAGIC UINT32_C(0x444c4854) /* "THLD" in file order */
#define HOLD_VERSION 1u
/* A hold holds one batch at most (CAPTURE_BATCH_BYTES, or a chunk of the largest sub-buffer). */
#define HOLD_CAPACITY_MAX (UINT64_C(16) << 20)

/*
 * The header, in the mapping. The worker changes spool_id, stored and
 * n_pending in an order that leaves every instant recoverable exactly
 * once (capture-store.c): a reader after the daemon's death trusts
 * n_pending bytes only if the spool holds exactly `stored` bytes of
 * intact records.
 */
struct hold_header {
	uint32_t magic;
	uint32_t version;
	uint32_t cpu;
	uint32_t subbuf_size;
	uint64_t capacity;
	_Atomic uint64_t spool_id;  /* the spool the batch is for (its trace id); 0: none */
	_Atomic uint64_t stored;    /* bytes of records in that spool before the batch */
	_Atomic uint64_t n_pending; /* raw bytes of whole sub-buffers at HOLD_HDR_SIZE */
};

struct hold {
	int dir_fd;   /* borrowed */
	int fd;
	char name[32];
	struct hold_header *hdr;
	uint8_t *data;
	size_t capacity;
};

int hold_dir_create(int state_dir_fd, uint32_t tag, int *ret_fd);
int hold_dir_open(int state_dir_fd, int *ret_fd);
void hold_dir_prune(int hold_dir_fd, int spool_fd);
void hold_dir_remove(int state_dir_fd);
int hold_new(int hold_dir_fd, unsigned cpu, uint32_t subbuf_size, size_t capacity,
	     struct hold **ret);
struct hold *hold_free(struct hold *h);
DEFINE_CLEANUP(struct hold *, hold_free)
int hold_find(int hold_dir_fd, uint64_t spool_id, unsigned cpu, uint32_t subbuf_size,
	      uint64_t stored, uint8_t **ret, size_t *ret_n);
