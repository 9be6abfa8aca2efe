/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

uint64_t meminfo_kb(const char *field);
