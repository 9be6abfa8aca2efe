// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The sessions directory (/etc/ftraced/sessions.d): every NAME.conf, in
 * name order, read and parsed (session-file.c) into the CREATE request a
 * client would send, then handed to the manager to create. A file that
 * cannot be read or parsed is logged with its name (and line) and skipped;
 * the others are not affected.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/base/log.h"
#include "daemon/store/session-file.h"
#include "daemon/store/sessions-dir.h"
#include "ftraced/macro.h"
#include "lib/ctl-proto.h"

/* FNV-1a: which version of a file a session came from. */
static uint64_t text_hash(const char *text, size_t n)
{
	uint64_t h = UINT64_C(14695981039346656037);

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)text[i]) * UINT64_C(1099511628211);
	return h;
}

/* One file: read (at most SESSION_FILE_MAX), parsed, its request handed on. */
static void load_file(int dir_fd, const char *file, session_file_fn create, void *userdata)
{
	static struct ctl_builder b;
	_cleanup_free_ char *text = NULL, *default_name = NULL;
	_cleanup_free_ struct ctl_request *req = NULL;
	char error[FTRACED_MESSAGE_MAX] = "";
	unsigned line;
	size_t n = 0;
	int fd, r;

	fd = openat(dir_fd, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		log_error_errno(negative_errno(), "%s: cannot open, skipping: %m", file);
		return;
	}
	text = malloc(SESSION_FILE_MAX + 1);
	if (text) {
		ssize_t k;

		/* One byte more than allowed: the parser then says the file is too large. */
		while ((k = read(fd, text + n, SESSION_FILE_MAX + 1 - n)) > 0)
			n += (size_t)k;
	}
	close(fd);
	default_name = strndup(file, strlen(file) - strlen(".conf"));
	req = malloc(sizeof(*req));
	if (!text || !default_name || !req) {
		log_error("%s: out of memory, skipping", file);
		return;
	}
	r = session_file_parse(text, n, default_name, &b, error, sizeof(error), &line);
	if (r >= 0) {
		size_t len;

		r = ctl_builder_finish(&b, &len);
		if (r >= 0)
			r = ctl_request_parse(b.buf, len, req, NULL);
		if (r < 0)
			snprintf(error, sizeof(error), "too large or malformed");
	}
	if (r < 0) {
		if (line)
			log_error("%s:%u: %s; skipping this session", file, line, error);
		else
			log_error("%s: %s; skipping this session", file, error);
		return;
	}
	create(file, req, text_hash(text, n), userdata);
}

/**
 * sessions_dir_load_one() - hand one file of @dir to @create.
 * @dir: the sessions directory
 * @file: the file's name in it
 * @create: called with its request
 * @userdata: for @create
 */
void sessions_dir_load_one(const char *dir, const char *file, session_file_fn create,
			   void *userdata)
{
	int dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dir_fd < 0) {
		log_error_errno(negative_errno(), "Cannot read '%s': %m", dir);
		return;
	}
	load_file(dir_fd, file, create, userdata);
	close(dir_fd);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/**
 * sessions_dir_load() - hand every *.conf of @dir, in name order, to @create.
 * @dir: the sessions directory; a missing one means no sessions
 * @max_files: files read at most
 * @create: called with each file's request
 * @userdata: for @create
 */
void sessions_dir_load(const char *dir, size_t max_files, session_file_fn create,
		       void *userdata)
{
	_cleanup_free_ char **names = calloc(max_files, sizeof(*names));
	struct dirent *de;
	size_t n = 0;
	int dir_fd;
	DIR *d;

	dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir_fd < 0) {
		if (errno != ENOENT)
			log_warning_errno(negative_errno(), "Cannot read '%s', no sessions from "
					  "files: %m", dir);
		return;
	}
	d = names ? fdopendir(dup(dir_fd)) : NULL;
	while (d && (de = readdir(d)) && n < max_files) {
		size_t len = strlen(de->d_name);

		if (len > 5 && strcmp(de->d_name + len - 5, ".conf") == 0 && de->d_name[0] != '.')
			names[n++] = strdup(de->d_name);
	}
	if (d)
		closedir(d);
	if (n > 0)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		if (names[i])
			load_file(dir_fd, names[i], create, userdata);
		free(names[i]);
	}
	close(dir_fd);
}
