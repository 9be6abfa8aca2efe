// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * "key = value" lines, '#' comment lines and blank lines: the syntax of
 * session files and of ftraced.conf. Pure: no I/O, no allocation; the
 * caller knows the keys and says what is wrong with a value.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon/base/keyfile.h"

/* Spaces, tabs (and a CR) around @s cut off, in place. */
char *keyfile_trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/**
 * keyfile_init() - start reading @text.
 * @k: reader
 * @text: the file's contents, not NUL-terminated necessarily
 * @n: their length (the caller bounds it)
 */
void keyfile_init(struct keyfile *k, const char *text, size_t n)
{
	k->text = text;
	k->n = n;
	k->pos = 0;
	k->line = 0;
}

/**
 * keyfile_next() - the next "key = value" pair.
 * @k: reader
 * @ret_key: the key, trimmed (points into @k, valid until the next call)
 * @ret_value: the value, trimmed
 * @error: receives the problem
 * @n_error: its size
 *
 * Return: 1 with a pair, 0 at the end, -EINVAL with @error set (k->line
 * names the line).
 */
int keyfile_next(struct keyfile *k, char **ret_key, char **ret_value, char *error,
		 size_t n_error)
{
	while (k->pos < k->n) {
		const char *nl = memchr(k->text + k->pos, '\n', k->n - k->pos);
		size_t len = nl ? (size_t)(nl - k->text - k->pos) : k->n - k->pos;
		char *key, *eq;

		k->line++;
		if (len > KEYFILE_LINE_MAX) {
			snprintf(error, n_error, "line longer than %u bytes", KEYFILE_LINE_MAX);
			return -EINVAL;
		}
		memcpy(k->buf, k->text + k->pos, len);
		k->buf[len] = '\0';
		k->pos += len + 1;
		if (memchr(k->buf, '\0', len)) {
			snprintf(error, n_error, "not a text file");
			return -EINVAL;
		}
		key = keyfile_trim(k->buf);
		if (!*key || *key == '#')
			continue;
		eq = strchr(key, '=');
		if (!eq) {
			snprintf(error, n_error, "expected 'key = value'");
			return -EINVAL;
		}
		*eq = '\0';
		*ret_key = keyfile_trim(key);
		*ret_value = keyfile_trim(eq + 1);
		return 1;
	}
	return 0;
}
