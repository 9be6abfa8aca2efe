/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Writing a v7 file's bytes out: buffered, or staged for O_DIRECT, with
 * the progress counted (v7-out.c). The writer (v7-writer.c) lays the file
 * out and emits it through this.
 */

/*
 * A file whose data is all in memory goes out O_DIRECT in blocks of this
 * size, all but its last partial block (see v7-writer.c).
 */
#define V7_DIRECT_ALIGN 4096u

/* Bytes in memory. */
struct v7_blob {
	const void *data;
	size_t size;
};

/* Bytes of another file, read at their offset (the file's position is not used). */
struct v7_region {
	int fd;
	uint64_t offset;
	uint64_t size;
};

/* Where the output is, and who else counts the bytes (the daemon, to see progress). */
struct v7_out {
	int fd;
	uint64_t pos;
	_Atomic uint64_t *progress;
	off_t start;       /* a regular file: where writing began; -1: writeback is not ours */
	uint64_t kicked;   /* output up to here has had its writeback started */
	int saved_flags;   /* the fd's status flags before O_DIRECT was set; -1: never set */
	uint8_t *stage;    /* direct output: bytes not written yet; NULL: buffered */
	size_t n_stage;
};

void v7_out_direct_enter(struct v7_out *o);
void v7_out_direct_leave(struct v7_out *o);
int v7_out_write(struct v7_out *o, const void *p, size_t n);
int v7_out_zeros(struct v7_out *o, uint64_t n);
int v7_out_copy(struct v7_out *o, int in_fd, uint64_t offset, uint64_t n);
int v7_out_blobs(struct v7_out *o, const struct v7_blob *blobs, size_t n);
int v7_out_region(struct v7_out *o, const struct v7_region *reg);
int v7_out_finish(struct v7_out *o);
