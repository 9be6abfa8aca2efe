/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct event_list;
struct kallsyms;
struct instance_meta;

/* What a spool needs besides its data to become a file again. */
struct recipe {
	const char *target;   /* path of the file, relative to the state directory */
	const char *instance; /* the tracefs instance capturing into it */
	bool zstd;
	int level;
	unsigned n_cpus;
	const struct event_list *events;
	const struct instance_meta *imeta;
	/*
	 * A kernel-backend flight recorder: no spool data, the history is
	 * in the instance's ring (overwrite mode) until a snapshot drains it.
	 */
	bool kernel_history;
	const char *date;     /* the DATE option, measured as the spool began; NULL or "": none */
	const char *gap;      /* a time the session did not capture before this file; NULL: none */
};

int recovery_write_recipe(int spool_dir_fd, const struct recipe *r);
int recovery_recover_all(int state_dir_fd, const char *instance_prefix, struct kallsyms *ks,
			 unsigned *ret_files, unsigned *ret_failed);
int recovery_recover_spool(int state_dir_fd, uint64_t trace_id, struct kallsyms *ks, char *out,
			   size_t n_out);
void recovery_forget(int spool_dir_fd);
int recovery_run_offline(const char *state_dir, bool json);
