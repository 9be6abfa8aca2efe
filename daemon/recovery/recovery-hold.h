/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

#include "daemon/recovery/recovery-recipe.h"
#include "daemon/store/spool.h"

void recovery_hold_append(int hold_dir_fd, uint64_t spool_id, unsigned cpu,
			  const struct parsed_recipe *p, int fd, struct spool_scan *scan);
