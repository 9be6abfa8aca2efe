/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

int task_limit_describe(char *buf, size_t n);
