/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a recovery's drain read from one CPU of the orphaned ring. */
struct ring_drained {
	uint64_t pages;     /* sub-buffers */
	uint64_t first_ts;  /* the first one's time stamp */
};

struct global_meta;
struct instance;
struct kallsyms;
struct parsed_recipe;

bool persistent_history_of_this_boot(const struct parsed_recipe *p);
int persistent_history_take(int state_dir_fd, const char *instance, uint64_t keep_trace_id);
int persistent_history_adopt(const struct parsed_recipe *p, struct instance **ret,
			     char **ret_last_boot_info);
int persistent_history_symbols(struct global_meta *gm, struct kallsyms *ks,
			       const char *last_boot_info, char *how, size_t n_how);
char *persistent_history_cpustat(struct instance *i, unsigned cpu, const struct ring_drained *d,
				 uint32_t page_size);
