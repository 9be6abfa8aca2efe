/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct instance;
struct ring_alloc;

int ring_alloc_start(struct instance *i, uint32_t buffer_kb, bool snapshot, int notify_fd,
		     struct ring_alloc **ret);
bool ring_alloc_finished(struct ring_alloc *a, int *ret_result);
struct ring_alloc *ring_alloc_free(struct ring_alloc *a);
