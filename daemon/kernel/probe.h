/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ftraced/macro.h"
#include "ftraced/proto.h"

/* Every session's probes are a group of its own: "ftraced_<tag>_<id>". */
#define PROBE_GROUP_PREFIX "ftraced_"

struct probe_set;

int probe_set_create(uint32_t tag, uint32_t id, char *const *defs, unsigned n,
		     struct probe_set **ret, char *error, size_t n_error);
const char *probe_set_system(const struct probe_set *ps);
struct probe_set *probe_set_free(struct probe_set *ps);
DEFINE_CLEANUP(struct probe_set *, probe_set_free)
int probes_remove_orphans(uint32_t tag);

/* Exposed for unit tests. */
struct probe_def {
	bool uprobe;
	bool ret;                   /* r: on return */
	char name[64 + 1];
	char target[FTRACED_PROBE_MAX + 1]; /* kprobe: SYMBOL[+OFF] or 0xADDR; uprobe: the path */
	char symbol[FTRACED_PROBE_MAX + 1]; /* uprobe: SYMBOL[+OFF]; "" when given as an offset */
	uint64_t offset;            /* uprobe: file offset (or added to the symbol's) */
	const char *args;           /* fetch arguments, into the definition given; NULL: none */
};
int probe_def_parse(const char *def, struct probe_def *ret, char *error, size_t n_error);
int elf_symbol_offset(const char *path, const char *symbol, uint64_t *ret, char *error,
		      size_t n_error);
