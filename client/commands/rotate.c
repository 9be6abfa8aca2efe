// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ftracectl rotate SESSION: close a running continuous session's open
 * segment now and print the closed segment's path once that file is
 * complete on disk, as `lttng rotate` does; capture goes on into the next
 * segment without a pause (the daemon reuses its size and time rotation).
 *
 * live_session_dir() is extract's way through the daemon: where a
 * session's files are, whatever the daemon's --state-dir, after a rotation
 * if the session is running, so its files hold every event up to the
 * request.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "client/commands/commands.h"
#include "client/ctl.h"
#include "ftraced/macro.h"

/* Assembling a closed segment of 64 MiB or more on a slow disk. */
#define ROTATE_TIMEOUT_MS CTL_LONG_TIMEOUT_MS

static int rotate_on(int fd, const char *session, struct reply *rep)
{
	static struct ctl_builder b;

	ctl_builder_init(&b, FTRACED_MSG_ROTATE);
	ctl_put_string(&b, FTRACED_ATTR_SESSION, session);
	return ctl_send_and_receive(fd, &b, -1, ROTATE_TIMEOUT_MS, rep);
}

static void rotate_help(void)
{
	printf("Usage: ftracectl rotate SESSION\n\n"
	       "Close a running continuous session's open segment now and print its path\n"
	       "once the file is complete; capture goes on into the next segment.\n\n"
	       "  -h, --help   show this help\n");
}

int cmd_rotate(const struct client_options *o, int argc, char *argv[])
{
	_cleanup_close_ int fd = -EBADF;
	const char *session;
	struct reply rep;
	int r;

	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		rotate_help();
		return EXIT_OK;
	}
	if (parse_session_arg("rotate", argc, argv, /* required= */ true, &session) < 0)
		return EXIT_USAGE;
	r = ctl_connect(o, &fd);
	if (r < 0)
		return exit_code_for_call(r);
	r = rotate_on(fd, session, &rep);
	if (r < 0) {
		print_error("rotate", "talking to the daemon failed: %s", strerror(-r));
		return EXIT_FAILED;
	}
	if (rep.type != FTRACED_MSG_OK) {
		int code = EXIT_FAILED;

		if (rep.type == FTRACED_MSG_ERROR) {
			print_error_reply("rotate", &rep);
			code = exit_code_for_error(rep.error);
		} else {
			print_error("rotate", "unexpected reply from the daemon");
		}
		ctl_reply_done(&rep);
		return code;
	}
	if (o->json) {
		json_t *v = json_object();

		if (v) {
			json_put_text(v, "file", rep.path);
			json_put_u64(v, "bytes", rep.file_bytes);
		}
		json_print(v);
	} else {
		printf("%s\n", rep.path);
	}
	ctl_reply_done(&rep);
	return EXIT_OK;
}

/**
 * live_session_dir() - where a session's files are, asked of the daemon.
 * @o: options (the socket)
 * @session: its name
 * @dir: receives its directory
 * @n_dir: its size
 * @rotated: receives the segment a rotation closed, "" if none
 * @n_rotated: its size
 *
 * A running continuous session is rotated first: its files then hold
 * every event up to this call. No daemon on the socket, or one that does
 * not know the session, is not an error: the caller reads the state
 * directory itself.
 *
 * Return: 1 with @dir set, 0 if the daemon cannot tell, or -errno after
 * printing why (the rotation failed).
 */
int live_session_dir(const struct client_options *o, const char *session, char *dir,
		     size_t n_dir, char *rotated, size_t n_rotated)
{
	static struct ctl_builder b;
	_cleanup_close_ int fd = -EBADF;
	const struct session_info *s;
	struct reply rep;
	bool running;
	int r;

	rotated[0] = '\0';
	if (ctl_connect_quiet(o, &fd) < 0)
		return 0;
	ctl_builder_init(&b, FTRACED_MSG_STATUS);
	ctl_put_string(&b, FTRACED_ATTR_SESSION, session);
	r = ctl_send_and_receive(fd, &b, -1, CTL_LONG_TIMEOUT_MS, &rep);
	if (r < 0)
		return 0;
	if (rep.type != FTRACED_MSG_SESSIONS || rep.sessions.n != 1 ||
	    !rep.sessions.items[0].directory[0]) {
		ctl_reply_done(&rep);
		return 0;
	}
	s = &rep.sessions.items[0];
	snprintf(dir, n_dir, "%s", s->directory);
	/* The daemon names a directory with a '/' after it. */
	while (strlen(dir) > 1 && dir[strlen(dir) - 1] == '/')
		dir[strlen(dir) - 1] = '\0';
	running = s->mode == FTRACED_MODE_CONTINUOUS && strcmp(s->state, "running") == 0;
	ctl_reply_done(&rep);
	if (!running)
		return 1;
	r = rotate_on(fd, session, &rep);
	if (r < 0) {
		print_error("extract", "rotating '%s' failed: talking to the daemon: %s", session,
			    strerror(-r));
		return r;
	}
	if (rep.type != FTRACED_MSG_OK) {
		r = rep.type == FTRACED_MSG_ERROR && rep.error < 0 ? rep.error : -EPROTO;
		print_error("extract", "rotating '%s' failed, its open segment is not in the "
			    "output: %s", session, rep.message[0] ? rep.message : strerror(-r));
		ctl_reply_done(&rep);
		return r;
	}
	snprintf(rotated, n_rotated, "%s", rep.path);
	ctl_reply_done(&rep);
	return 1;
}
