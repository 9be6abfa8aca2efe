/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "daemon/kernel/clock-anchor.h"
#include "daemon/kernel/event-list.h"
#include "daemon/store/metadata.h"

/* The recipe's name in a spool directory; the spool is recoverable once it is there. */
#define RECIPE "recipe"
/* A gap note: the session's own, made by the daemon (session-internal.h holds 256). */
#define RECIPE_NOTE_MAX 512u
/* An instance's name in a recipe, with its NUL. */
#define RECIPE_INSTANCE_MAX 64u
/* uname's release and version, as the recipe's "kernel=" line holds them. */
#define RECIPE_KERNEL_MAX 256u

int recipe_kernel_identity(char *buf, size_t n);

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
	/*
	 * ... in a ring the kernel mapped at boot (the persistent backend): it
	 * outlives the boot, and its DATE with it; the kernel that wrote it is
	 * recorded, for event formats only that kernel's are sure to match.
	 */
	bool persistent;
	const char *date;     /* the DATE option, measured as the spool began; NULL or "": none */
	const char *gap;      /* a time the session did not capture before this file; NULL: none */
};

/* What a recipe says, checked. */
struct parsed_recipe {
	char target[PATH_MAX];
	char instance[RECIPE_INSTANCE_MAX];
	bool zstd;
	int level;
	unsigned n_cpus;
	bool kernel_history;
	bool persistent;
	char kernel[RECIPE_KERNEL_MAX];   /* persistent: "release version" of the kernel that armed it */
	char date[CLOCK_ANCHOR_DATE_MAX]; /* "" unless measured in this boot (persistent: any boot) */
	char boot[40];
	char gap[RECIPE_NOTE_MAX]; /* "": the session captured up to this file */
	struct event_list events;
	struct instance_meta imeta;
};

int recipe_write(int spool_dir_fd, const struct recipe *r);
int recipe_instance(int dir_fd, char *buf, size_t n);
int recipe_parse(int dir_fd, struct parsed_recipe *p);
void recipe_done(struct parsed_recipe *p);
