/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

int kallsyms_text_address(const char *text, size_t n, const char *name, uint64_t *ret);
int kallsyms_text_shift(const char *text, size_t n, uint64_t base, int64_t delta, char **ret,
			size_t *ret_n);
int last_boot_text_delta(const char *info, uint64_t text_now, int64_t *ret);
