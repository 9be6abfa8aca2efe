/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct kallsyms;
struct parsed_recipe;
struct spool_start;
struct v7_cpu_data;

/*
 * A recovered file's CPU statistics, as a session's own files have them:
 * per CPU, the counters at the end (with what ftraced knows of its losses)
 * and, where the spool kept them, when the file began.
 */
struct cpustat_texts {
	unsigned n_cpus;
	char **texts; /* [cpu]: the end; [n_cpus + cpu]: when the file began */
};

int recovered_file_name(const char *target, const char *suffix, char *buf, size_t n);
void recovered_file_cpustat_done(struct cpustat_texts *t);
int recovered_file_cpustat_set(struct cpustat_texts *t, const struct parsed_recipe *p,
				unsigned cpu, const char *end, uint64_t discarded,
				const struct spool_start *start);
int recovered_file_write(int state_dir_fd, const struct parsed_recipe *p, const char *path,
			 const struct v7_cpu_data *data, const struct cpustat_texts *stats,
			 struct kallsyms *ks, const char *last_boot_info);
void recovered_file_newest(int dir_fd, char *name, size_t n);
