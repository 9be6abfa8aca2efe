/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct kallsyms;

int recovery_recover_all(int state_dir_fd, const char *instance_prefix, struct kallsyms *ks,
			 unsigned *ret_files, unsigned *ret_failed);
int recovery_recover_spool(int state_dir_fd, uint64_t trace_id, struct kallsyms *ks, char *out,
			   size_t n_out);
void recovery_forget(int spool_dir_fd);
int recovery_run_offline(const char *state_dir, bool json);
