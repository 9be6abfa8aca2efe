// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * JSON output through jansson: ftracectl's --json builds values and prints
 * them here, so every string is escaped and valid UTF-8 (bytes that are
 * not, from a file name say, become U+FFFD) and every document is whole.
 * Keys keep the order they were added in.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/json.h"

/* The UTF-8 sequence at @p, or 0 for a byte that starts none. */
static size_t utf8_length(const unsigned char *p)
{
	size_t n;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (size_t k = 1; k < n; k++)
		if ((p[k] & 0xc0) != 0x80)
			return 0;
	return n;
}

/**
 * json_text() - a JSON string for any bytes.
 * @s: NUL-terminated text; NULL is ""
 *
 * Return: a new string value, never NULL unless out of memory.
 */
json_t *json_text(const char *s)
{
	_cleanup_free_ char *fixed = NULL;
	const unsigned char *p;
	json_t *v;
	size_t used = 0;

	v = json_string(s ?: "");
	if (v)
		return v;
	/* Not UTF-8: each byte that is not part of a valid sequence becomes U+FFFD. */
	fixed = malloc(strlen(s) * 3 + 1);
	if (!fixed)
		return NULL;
	for (p = (const unsigned char *)s; *p; ) {
		size_t n = utf8_length(p);

		if (n == 0) {
			memcpy(fixed + used, "\xef\xbf\xbd", 3);
			used += 3;
			p++;
			continue;
		}
		memcpy(fixed + used, p, n);
		used += n;
		p += n;
	}
	fixed[used] = '\0';
	return json_string(fixed);
}

/* --json: what was asked for, whether a document went out, and the first error said. */
static struct {
	bool wanted;
	bool printed;
	int error;
	char text[1024];
} state;

void json_want(bool wanted)
{
	state.wanted = wanted;
}

bool json_wanted(void)
{
	return state.wanted;
}

/* An error was said on stderr: with --json the first one also ends up on stdout. */
void json_note_error(const char *text, int error)
{
	if (state.text[0])
		return;
	snprintf(state.text, sizeof(state.text), "%s", text);
	state.error = error;
}

/**
 * json_finish() - with --json, a command that failed without printing a
 * document prints its error as one: {"error": TEXT, "errno": N, "exit": CODE}.
 * @exit_code: the command's
 */
void json_finish(int exit_code)
{
	json_t *o;

	if (!state.wanted || state.printed || exit_code == 0)
		return;
	o = json_object();
	if (o) {
		json_put_text(o, "error", state.text[0] ? state.text : "failed");
		if (state.error < 0)
			json_put_u64(o, "errno", (uint64_t)-state.error);
		json_put_u64(o, "exit", (uint64_t)exit_code);
	}
	json_print(o);
}

json_t *json_u64(uint64_t v)
{
	/* json_int_t is a long long: counters never come near its end. */
	return json_integer(v > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)v);
}

/* json_object_set_new() for an object we built: a NULL value (out of memory) is dropped. */
void json_put(json_t *object, const char *key, json_t *value)
{
	if (value)
		json_object_set_new(object, key, value);
}

void json_put_text(json_t *object, const char *key, const char *s)
{
	json_put(object, key, json_text(s));
}

void json_put_u64(json_t *object, const char *key, uint64_t v)
{
	json_put(object, key, json_u64(v));
}

void json_put_bool(json_t *object, const char *key, bool v)
{
	json_put(object, key, json_boolean(v));
}

/**
 * json_print() - @v on stdout, indented, and a newline; @v is freed.
 * @v: a value (NULL: out of memory)
 *
 * Return: 0, or -ENOMEM / -EIO.
 */
int json_print(json_t *v)
{
	int r;

	if (!v)
		return -ENOMEM;
	r = json_dumpf(v, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(v);
	state.printed = true;
	if (r < 0 || putchar('\n') == EOF)
		return -EIO;
	return 0;
}
