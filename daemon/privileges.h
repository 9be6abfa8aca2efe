/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

int priv_drop(void);
int priv_assert_dropped(void);
