/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

/* Longest line of a "key = value" file, newline excluded. */
#define KEYFILE_LINE_MAX 8191u

/* Reading a "key = value" text: session files and ftraced.conf. */
struct keyfile {
	const char *text;
	size_t n;
	size_t pos;
	unsigned line;              /* of the pair last returned */
	char buf[KEYFILE_LINE_MAX + 1];
};

char *keyfile_trim(char *s);
void keyfile_init(struct keyfile *k, const char *text, size_t n);
int keyfile_next(struct keyfile *k, char **ret_key, char **ret_value, char *error,
		 size_t n_error);
