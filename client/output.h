/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

int output_open(const char *command, const char *output, bool force, char *partial, size_t n);
int output_open_stdout(const char *command);
void output_discard(const char *partial);
int output_commit(const char *command, const char *partial, const char *output);
int output_save_recovered(int fd, const char *output, char *ret_path, size_t n);
