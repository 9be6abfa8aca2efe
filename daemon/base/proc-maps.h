/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

/*
 * A record's PROCMAPS texts (--proc-map), one per process, as its client
 * sent them with the STOP: written as options into the last file.
 */
struct proc_maps {
	size_t n;
	char **texts;
};

int proc_maps_add(struct proc_maps *m, const char *text);
void proc_maps_done(struct proc_maps *m);
