/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-event.h>

#define COMMAND_ARGS_MAX 64

int command_split(const char *line, char *buf, size_t n_buf, char **argv, size_t n_argv);
int runner_spawn(sd_event *e, const char *command, const char *path, uint64_t timeout_usec);
void runner_kill_all(void);
