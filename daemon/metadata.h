/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

#include "daemon/v7-writer.h"

struct instance;
struct event_list;

/*
 * What a v7 file says about the kernel besides the ring-buffer data. The
 * instance part (header_page, clock) is read when the session starts; the
 * rest (formats, symbols, comms) when the file is assembled, so that comms
 * of processes that appeared during the capture are known.
 */
struct metadata {
	char *header_page;
	size_t n_header_page;
	char *header_event;
	size_t n_header_event;
	char *trace_clock;
	char clock[64];
	uint32_t subbuf_size;

	struct v7_blob *ftrace_formats;
	size_t n_ftrace_formats;
	struct v7_system *systems;
	size_t n_systems;
	struct v7_blob *event_formats; /* all systems' formats, in one array */
	size_t n_event_formats;
	char *kallsyms;
	size_t n_kallsyms;
	char *printk;
	size_t n_printk;
	char *cmdlines;
	size_t n_cmdlines;
	char uname[512];
};

void metadata_set_kallsyms_fd(int fd);
int metadata_read_instance(struct metadata *m, struct instance *i);
int metadata_read_global(struct metadata *m, const struct event_list *events);
void metadata_to_v7(const struct metadata *m, struct v7_file *f);
void metadata_done(struct metadata *m);
