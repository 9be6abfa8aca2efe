/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "lib/v7-writer.h"

struct instance;
struct kallsyms_section;
struct event_list;
struct kallsyms;

/*
 * What a v7 file says about the kernel besides the ring-buffer data, in two
 * parts. The instance part (header_page, clock) belongs to the captured
 * instance and is read once when the session is configured; the global
 * part (formats, symbols, comms, uname) is read afresh for every file, so
 * that comms of processes that appeared during the capture are known.
 */
struct instance_meta {
	char *header_page;
	size_t n_header_page;
	char *header_event;
	size_t n_header_event;
	char *trace_clock;
	char clock[64];
	uint32_t subbuf_size;
};

struct global_meta {
	struct v7_blob *ftrace_formats;
	size_t n_ftrace_formats;
	struct v7_system *systems;
	size_t n_systems;
	struct v7_blob *event_formats; /* all systems' formats, in one array */
	size_t n_event_formats;
	char *kallsyms;                /* text: uncompressed files, or symbols rewritten */
	size_t n_kallsyms;
	struct kallsyms_section *kallsyms_sealed; /* zstd files: the section body, shared */
	char *printk;
	size_t n_printk;
	char *cmdlines;
	size_t n_cmdlines;
	char uname[512];
};

int metadata_read(struct instance_meta *m, struct instance *i);
void metadata_done(struct instance_meta *m);
int global_meta_read(struct global_meta *m, const struct event_list *events,
		     struct kallsyms *ks, bool zstd, bool no_events);
void global_meta_done(struct global_meta *m);
void metadata_to_v7(const struct instance_meta *im, const struct global_meta *gm,
		    struct v7_file *f);
