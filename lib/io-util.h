/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct iovec;

/*
 * A FIFO output whose reader takes nothing for this long fails its file
 * (what was captured stays in the spool for recovery). Shorter than the
 * unit's TimeoutStopSec, so a stuck reader cannot hold up a stop.
 */
#define OUTPUT_STALL_MS (30 * 1000)


/* Says whether a line (its @n bytes, the newline included if it has one) is left out. */
typedef bool (*line_drop_fn)(const char *line, size_t n);

#define LINE_READER_BYTES (64u * 1024u) /* also the longest line it takes */

/*
 * A text read as a byte stream with some of its lines left out, never held
 * whole (/proc/kallsyms: kallsyms.c drops the symbols no address can name).
 */
struct line_reader {
	int fd;
	line_drop_fn drop;     /* NULL: every line */
	bool eof;
	size_t raw_pos, raw_len, out_pos, out_len;
	char raw[LINE_READER_BYTES];
	char out[LINE_READER_BYTES];
};

void line_reader_init(struct line_reader *r, int fd, line_drop_fn drop);
ssize_t line_reader_read(struct line_reader *r, void *buf, size_t n);

int wait_writable(int fd);
int loop_write(int fd, const void *buf, size_t n);
int loop_writev(int fd, struct iovec *iov, size_t n);
ssize_t loop_read(int fd, void *buf, size_t n);
int loop_read_exact(int fd, void *buf, size_t n);
int loop_pread_exact(int fd, void *buf, size_t n, uint64_t offset);
int loop_pwrite(int fd, const void *buf, size_t n, uint64_t offset);
int memfd_sealed(const char *name, const void *data, size_t n, int *ret_fd);
int memfd_map_sealed(int fd, size_t max, void **ret, size_t *ret_n);
int read_file_at(int dir_fd, const char *name, size_t max, char **ret, size_t *ret_n);
int replace_file_at(int dir_fd, const char *name, const void *data, size_t n, mode_t mode);
