/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

/* The per-CPU spool files of one capture, in STATE_DIR/spool/<trace id>/. */
struct spool {
	int state_dir_fd; /* borrowed */
	uint64_t trace_id;
	int dir_fd;
	unsigned n_cpus;
	int *fds;
};

int spool_create(struct spool *s, int state_dir_fd, uint64_t trace_id, unsigned n_cpus);
void spool_close(struct spool *s);
void spool_remove(struct spool *s);
unsigned spool_report_stale(int state_dir_fd);
