/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-event.h>

#include "ftraced/macro.h"

#define COMMAND_ARGS_MAX 64

struct runner;

int command_split(const char *line, char *buf, size_t n_buf, char **argv, size_t n_argv);
int runner_new(sd_event *e, struct runner **ret);
struct runner *runner_free(struct runner *rn);
DEFINE_CLEANUP(struct runner *, runner_free)
void runner_counts(const struct runner *rn, uint64_t *attempted, uint64_t *failed);
int runner_spawn(struct runner *rn, const char *command, const char *path, uint64_t timeout_usec);
