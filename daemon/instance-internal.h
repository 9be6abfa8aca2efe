/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the instance modules (instance.c, instance-tracer.c) share. */
#pragma once

#include <tracefs.h>

#include "daemon/instance.h"
#include "ftraced/proto.h"

struct instance {
	struct tracefs_instance *tfs;
	char name[32];
};

/* Room for every pid a request may give, as decimal text with spaces. */
#define INSTANCE_PID_LIST_MAX (FTRACED_PIDS_PER_REQUEST_MAX * 12 + 1)

int instance_write_file(struct instance *i, const char *file, const char *value);
int instance_set_tracer(struct instance *i, const struct instance_setup *p, char *error,
			size_t n_error);
void instance_pid_list(const struct instance_setup *p, char list[static INSTANCE_PID_LIST_MAX]);
