// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Sessions created over the socket, kept in STATE_DIR/saved/NAME.session so
 * that they outlive the daemon: a restart, a crash or a reboot brings each
 * back in the state it was in. A saved session is a short header (its
 * owner, whether it was running, when the daemon last stopped cleanly
 * while it ran) and, after a "%%" line, the session file that stands for
 * its CREATE request (session-file.c), so restoring it takes the same path
 * as a sessions.d file.
 *
 *   owner = 1000
 *   running = yes
 *   stopped = 1764079200123456
 *   %%
 *   name = bg
 *   mode = continuous
 *   event = sched
 *
 * Files are replaced whole (replace_file_at()) and read without following
 * links, at most SAVED_SESSION_MAX bytes. The format and parse functions
 * are pure and unit-tested; the rest is the directory's I/O. Main thread.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/base/keyfile.h"
#include "daemon/base/log.h"
#include "daemon/store/session-file.h"
#include "daemon/store/session-store.h"
#include "ftraced/macro.h"
#include "lib/ctl/ctl-proto.h"
#include "lib/io-util.h"

#define SEPARATOR "%%\n"
#define SUFFIX ".session"

/**
 * saved_session_format() - a saved session's file.
 * @s: what the daemon keeps of it
 * @conf: its session file
 * @buf: receives the text
 * @n: its size
 *
 * Return: the text's length, or -ENOBUFS.
 */
int saved_session_format(const struct saved_session *s, const char *conf, char *buf, size_t n)
{
	int k;

	k = snprintf(buf, n, "# The session '%s', created with 'ftracectl create': ftraced restores "
		     "it at every start\n# until 'ftracectl destroy %s'. Written by ftraced; "
		     "do not edit.\nowner = %u\nrunning = %s\n", s->name, s->name,
		     (unsigned)s->owner, s->running ? "yes" : "no");
	if (k >= 0 && (size_t)k < n && s->stopped_usec)
		k += snprintf(buf + k, n - (size_t)k, "stopped = %" PRIu64 "\n", s->stopped_usec);
	if (k >= 0 && (size_t)k < n)
		k += snprintf(buf + k, n - (size_t)k, "%s%s", SEPARATOR, conf);
	return k < 0 || (size_t)k >= n ? -ENOBUFS : k;
}

/**
 * saved_session_parse() - a saved session's header, and where its session file starts.
 * @text: the file's contents
 * @n: their length
 * @ret: the header; its name is left to the caller (the file's)
 * @ret_conf_offset: where the session file starts in @text
 * @error: receives the problem
 * @n_error: its size
 *
 * Return: 0, or -EINVAL with @error set.
 */
int saved_session_parse(const char *text, size_t n, struct saved_session *ret,
			size_t *ret_conf_offset, char *error, size_t n_error)
{
	struct saved_session s = {};
	bool owner = false, running = false;
	const char *sep = NULL;
	struct keyfile k;
	char *key, *v;
	int r;

	if (n > SAVED_SESSION_MAX || memchr(text, '\0', n)) {
		snprintf(error, n_error, "not a text file of at most %u bytes", SAVED_SESSION_MAX);
		return -EINVAL;
	}
	for (size_t pos = 0; pos < n && !sep; ) {
		const char *nl = memchr(text + pos, '\n', n - pos);

		if (!nl)
			break;
		if ((size_t)(nl - text - pos) == 2 && memcmp(text + pos, "%%", 2) == 0)
			sep = text + pos;
		pos = (size_t)(nl - text) + 1;
	}
	if (!sep) {
		snprintf(error, n_error, "no '%%%%' line before the session file");
		return -EINVAL;
	}
	keyfile_init(&k, text, (size_t)(sep - text));
	while ((r = keyfile_next(&k, &key, &v, error, n_error)) > 0) {
		char *end;

		errno = 0;
		if (strcmp(key, "owner") == 0) {
			unsigned long long uid = strtoull(v, &end, 10);

			if (errno || end == v || *end || uid >= (uid_t)-1) {
				snprintf(error, n_error, "invalid owner '%.20s'", v);
				return -EINVAL;
			}
			s.owner = (uid_t)uid;
			owner = true;
		} else if (strcmp(key, "running") == 0 &&
			   (strcmp(v, "yes") == 0 || strcmp(v, "no") == 0)) {
			s.running = strcmp(v, "yes") == 0;
			running = true;
		} else if (strcmp(key, "stopped") == 0) {
			s.stopped_usec = strtoull(v, &end, 10);
			if (errno || end == v || *end) {
				snprintf(error, n_error, "invalid stop time '%.30s'", v);
				return -EINVAL;
			}
		} else {
			snprintf(error, n_error, "unknown line '%.40s = %.40s'", key, v);
			return -EINVAL;
		}
	}
	if (r < 0)
		return r;
	if (!owner || !running) {
		snprintf(error, n_error, "no %s line", owner ? "running" : "owner");
		return -EINVAL;
	}
	*ret = s;
	*ret_conf_offset = (size_t)(sep - text) + strlen(SEPARATOR);
	return 0;
}

/* STATE_DIR/saved, made if needed; the caller closes it. */
static int open_store(int state_dir_fd, bool create)
{
	int fd;

	if (create && mkdirat(state_dir_fd, SESSION_STORE_DIR, 0700) < 0 && errno != EEXIST)
		return negative_errno();
	fd = openat(state_dir_fd, SESSION_STORE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
	return fd < 0 ? negative_errno() : fd;
}

/**
 * session_store_write() - save a session, or what changed of it.
 * @state_dir_fd: the state directory
 * @s: what the daemon keeps of it
 * @conf: its session file
 *
 * Return: 0 or -errno.
 */
int session_store_write(int state_dir_fd, const struct saved_session *s, const char *conf)
{
	/* The header takes at most SAVED_SESSION_MAX - SESSION_FILE_MAX bytes. */
	size_t size = strlen(conf) + (SAVED_SESSION_MAX - SESSION_FILE_MAX) + 1;
	_cleanup_free_ char *text = malloc(size);
	_cleanup_close_ int dir_fd = -EBADF;
	char name[FTRACED_NAME_MAX + sizeof(SUFFIX)];
	int n;

	if (!text)
		return -ENOMEM;
	n = saved_session_format(s, conf, text, size);
	if (n < 0)
		return n;
	dir_fd = open_store(state_dir_fd, true);
	if (dir_fd < 0)
		return dir_fd;
	snprintf(name, sizeof(name), "%s" SUFFIX, s->name);
	return replace_file_at(dir_fd, name, text, (size_t)n, 0600);
}

/**
 * session_store_remove() - forget a saved session (destroyed).
 * @state_dir_fd: the state directory
 * @name: the session
 *
 * Return: 0 (also if it was not saved), or -errno.
 */
int session_store_remove(int state_dir_fd, const char *name)
{
	_cleanup_close_ int dir_fd = open_store(state_dir_fd, false);
	char file[FTRACED_NAME_MAX + sizeof(SUFFIX)];

	if (dir_fd == -ENOENT)
		return 0;
	if (dir_fd < 0)
		return dir_fd;
	snprintf(file, sizeof(file), "%s" SUFFIX, name);
	if (unlinkat(dir_fd, file, 0) < 0 && errno != ENOENT)
		return negative_errno();
	return fsync(dir_fd) < 0 ? negative_errno() : 0;
}

/* One saved session read and handed on; problems logged with its name. */
static void load_one(int dir_fd, const char *file, saved_session_fn fn, void *userdata)
{
	_cleanup_free_ char *text = NULL;
	char error[256] = "";
	struct saved_session s;
	size_t len = strlen(file) - strlen(SUFFIX), off, n;
	int r;

	if (len == 0 || len > FTRACED_NAME_MAX) {
		log_error("Saved session '%s': not a session's name, skipping it", file);
		return;
	}
	/* As large as it is, up to SAVED_SESSION_MAX (a session may list thousands of events). */
	r = read_file_at(dir_fd, file, SAVED_SESSION_MAX, &text, &n);
	if (r < 0) {
		log_error_errno(r, "Saved session '%s': cannot read%s, skipping it: %m", file,
				r == -EFBIG ? " (too large or not a file)" : "");
		return;
	}
	r = saved_session_parse(text, (size_t)n, &s, &off, error, sizeof(error));
	if (r < 0) {
		log_error("Saved session '%s': %s; skipping it", file, error);
		return;
	}
	memcpy(s.name, file, len);
	s.name[len] = '\0';
	if (!ctl_name_valid(s.name)) {
		log_error("Saved session '%s': not a session's name, skipping it", file);
		return;
	}
	fn(&s, text + off, (size_t)n - off, userdata);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/**
 * session_store_load() - hand every saved session, in name order, to @fn.
 * @state_dir_fd: the state directory
 * @fn: called with each
 * @userdata: for @fn
 *
 * Files that are not regular, or cannot be read or parsed, are logged and
 * skipped; temporary files of an interrupted write are ignored.
 *
 * Return: the number handed on, or -errno if the directory cannot be read.
 */
int session_store_load(int state_dir_fd, saved_session_fn fn, void *userdata)
{
	_cleanup_close_ int dir_fd = open_store(state_dir_fd, false);
	char **names = NULL;
	size_t n = 0, n_allocated = 0;
	struct dirent *de;
	DIR *d;
	int r = 0;

	if (dir_fd == -ENOENT)
		return 0;
	if (dir_fd < 0)
		return dir_fd;
	d = fdopendir(dup(dir_fd));
	if (!d)
		return -ENOMEM;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (de->d_name[0] == '.' || len <= strlen(SUFFIX) ||
		    strcmp(de->d_name + len - strlen(SUFFIX), SUFFIX) != 0)
			continue;
		if (n == n_allocated) {
			char **v = reallocarray(names, n ? n * 2 : 16, sizeof(*v));

			if (!v) {
				r = -ENOMEM;
				break;
			}
			names = v;
			n_allocated = n ? n * 2 : 16;
		}
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			r = -ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	if (n > 0)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t k = 0; k < n; k++) {
		if (r >= 0)
			load_one(dir_fd, names[k], fn, userdata);
		free(names[k]);
	}
	free(names);
	return r < 0 ? r : (int)n;
}
