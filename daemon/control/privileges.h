/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

unsigned priv_realtime_allowed(unsigned wanted, bool *ret_keep_nice);
int priv_drop(bool keep_nice);
int priv_assert_dropped(bool keep_nice);
void priv_nice_for_workers(int wanted, int *ret_before);
void priv_nice_restore(int before);
