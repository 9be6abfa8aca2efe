/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct parsed_recipe;

bool persistent_history_of_this_boot(const struct parsed_recipe *p);
int persistent_history_take(int state_dir_fd, const char *instance, uint64_t keep_trace_id);
