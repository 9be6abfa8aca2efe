/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the instance modules share: the object (instance.c), taking over one
 * that exists (instance-adopt.c), its recipe (instance-setup.c) and its watch
 * (instance-watch.c).
 */
#pragma once

#include <tracefs.h>

#include "daemon/kernel/instance.h"
#include "ftraced/proto.h"

struct instance {
	struct tracefs_instance *tfs;
	char name[FTRACED_NAME_MAX + 1];
	/*
	 * Mapped by the kernel at boot onto reserved memory (instance-adopt.c):
	 * adopted, never created, resized or removed; freeing it releases it.
	 */
	bool boot_mapped;
	/* The top-level buffer, leased (instance-lease.c): tfs is NULL, nothing is removed. */
	bool top_level;
	/*
	 * The last setup failure was the kernel's: it refused a write, or has
	 * no such tracer or file (the client's exit status says so).
	 */
	bool kernel_refused;
};

int instance_boot_release(struct instance *i);
void instance_boot_forget(struct instance *i);

/* Room for every pid a request may give, as decimal text with spaces. */
#define INSTANCE_PID_LIST_MAX (FTRACED_PIDS_PER_REQUEST_MAX * 12 + 1)

int instance_write_file(struct instance *i, const char *file, const char *value);
bool instance_word_in(const char *list, const char *name);
