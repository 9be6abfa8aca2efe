/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

int state_dir_open(const char *path, int *ret_dir_fd, int *ret_lock_fd, uint32_t *ret_tag);
