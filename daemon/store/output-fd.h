/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

int output_fd_check(int fd, char *error, size_t n_error);
