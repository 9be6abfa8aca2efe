/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "lib/v7-format.h"

struct v7_reader;


/* What walking one CPU region found. */
struct v7_cpu_summary {
	uint64_t pages;
	uint64_t events;
	uint64_t first_ts;
	uint64_t last_ts;
	uint64_t missed_pages;  /* pages flagged "events were lost before this one" */
	uint64_t missed_events; /* where the kernel could store the count */
};

int v7_walk_cpu(struct v7_reader *r, size_t i, uint64_t *by_id, struct v7_cpu_summary *ret,
		char *problem, size_t n_problem);
int v7_verify(int fd, uint64_t *ret_events, uint64_t *ret_pages, char *problem,
	      size_t n_problem);
