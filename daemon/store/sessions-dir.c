// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The sessions directory (/etc/ftraced/sessions.d): every NAME.conf, in
 * name order, read and parsed (session-file.c) into the CREATE request a
 * client would send. The whole directory is read before anything is done
 * with it, and a file that cannot be read or parsed carries its error
 * (with its line): the caller decides. At start the others start; a
 * reload with any error changes nothing (controller-files.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/store/session-file.h"
#include "daemon/store/sessions-dir.h"
#include "ftraced/macro.h"
#include "lib/ctl/ctl-proto.h"
#include "lib/io-util.h"

/* FNV-1a: which version of a file a session came from. */
static uint64_t text_hash(const char *text, size_t n)
{
	uint64_t h = UINT64_C(14695981039346656037);

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)text[i]) * UINT64_C(1099511628211);
	return h;
}

/* A file's problem, kept with it: "NAME:LINE: what" (or "NAME: what"). */
static int set_error(struct session_file *f, unsigned line, const char *what)
{
	char buf[FTRACED_MESSAGE_MAX];

	if (line)
		snprintf(buf, sizeof(buf), "%s:%u: %s", f->name, line, what);
	else
		snprintf(buf, sizeof(buf), "%s: %s", f->name, what);
	f->error = strdup(buf);
	return f->error ? 0 : -ENOMEM;
}

/*
 * One file: read (at most SESSION_FILE_MAX), parsed into @f's request, or
 * @f's error. Return: 0, or -ENOMEM (nothing can be said about the file).
 */
static int read_file(int dir_fd, struct session_file *f)
{
	static struct ctl_builder b;
	_cleanup_free_ char *text = NULL, *default_name = NULL;
	_cleanup_(ctl_request_freep) struct ctl_request *req = NULL;
	char error[FTRACED_MESSAGE_MAX] = "";
	unsigned line = 0;
	size_t n = 0;
	int r;

	/* As large as it is, up to SESSION_FILE_MAX: a file may list thousands of events. */
	r = read_file_at(dir_fd, f->name, SESSION_FILE_MAX, &text, &n);
	if (r == -ENOMEM)
		return r;
	if (r == -EFBIG) {
		snprintf(error, sizeof(error), "larger than %u bytes or not a file",
			 SESSION_FILE_MAX);
		return set_error(f, 0, error);
	}
	if (r < 0) {
		snprintf(error, sizeof(error), "cannot read: %s", strerror(-r));
		return set_error(f, 0, error);
	}
	default_name = strndup(f->name, strlen(f->name) - strlen(".conf"));
	req = calloc(1, sizeof(*req));
	if (!default_name || !req)
		return -ENOMEM;
	r = session_file_parse(text, n, default_name, &b, error, sizeof(error), &line);
	if (r >= 0) {
		r = ctl_builder_parse(&b, req, NULL);
		if (r < 0)
			snprintf(error, sizeof(error), "too large or malformed");
	}
	ctl_builder_done(&b);
	if (r < 0)
		return set_error(f, line, error);
	f->req = TAKE_PTR(req);
	f->hash = text_hash(text, n);
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct session_file *)a)->name,
		      ((const struct session_file *)b)->name);
}

/**
 * sessions_dir_read() - read and parse every *.conf of @dir, in name order.
 * @dir: the sessions directory; a missing one holds no files
 * @max_files: files read at most (more are counted in n_ignored)
 * @ret: the files, each with its request or its error; free with session_files_done()
 *
 * Return: 0, or -errno if the directory cannot be read (or memory runs out).
 */
int sessions_dir_read(const char *dir, size_t max_files, struct session_files *ret)
{
	_cleanup_(session_files_done) struct session_files f = {};
	struct dirent *de;
	int dir_fd, r = 0;
	DIR *d;

	*ret = (struct session_files){};
	dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir_fd < 0)
		return errno == ENOENT ? 0 : negative_errno();
	f.files = calloc(max_files ?: 1, sizeof(*f.files));
	d = f.files ? fdopendir(dup(dir_fd)) : NULL;
	if (!d) {
		r = f.files ? negative_errno() : -ENOMEM;
		close(dir_fd);
		return r;
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (len <= 5 || strcmp(de->d_name + len - 5, ".conf") != 0 || de->d_name[0] == '.')
			continue;
		if (f.n == max_files) {
			f.n_ignored++;
			continue;
		}
		snprintf(f.files[f.n++].name, sizeof(f.files[0].name), "%s", de->d_name);
	}
	closedir(d);
	if (f.n > 0)
		qsort(f.files, f.n, sizeof(*f.files), cmp_name);
	for (size_t i = 0; i < f.n && r >= 0; i++) {
		r = read_file(dir_fd, &f.files[i]);
		if (f.files[i].error)
			f.n_bad++;
	}
	close(dir_fd);
	if (r < 0)
		return r;
	*ret = f;
	f = (struct session_files){};
	return 0;
}

/* Frees what session_files holds; it is then empty. */
void session_files_done(struct session_files *f)
{
	for (size_t i = 0; i < f->n; i++) {
		ctl_request_freep(&f->files[i].req);
		free(f->files[i].error);
	}
	free(f->files);
	*f = (struct session_files){};
}
