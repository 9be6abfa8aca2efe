// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ftracectl start, stop and destroy NAME: the verbs that take a session and
 * nothing else. stop and destroy of a continuous session return once its
 * last segment is on disk. And reload, which takes nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "client/commands/commands.h"
#include "client/ctl.h"

static int simple_verb(const struct client_options *o, int argc, char *argv[], uint16_t type,
		       const char *done)
{
	static struct ctl_builder b;
	const char *session;
	struct reply rep;
	int r;

	if (parse_session_arg(argv[0], argc, argv, /* required= */ true, &session) < 0)
		return EXIT_USAGE;
	ctl_builder_init(&b, type);
	ctl_put_string(&b, FTRACED_ATTR_SESSION, session);
	r = ctl_call_timeout(o, &b, CTL_LONG_TIMEOUT_MS, &rep);
	if (r < 0)
		return exit_code_for_call(r);
	if (rep.type == FTRACED_MSG_ERROR) {
		print_error_reply(argv[0], &rep);
		return exit_code_for_reply(&rep);
	}
	ctl_reply_done(&rep);
	if (o->json) {
		json_t *v = json_object();

		if (v)
			json_put_text(v, done, session);
		json_print(v);
	}
	return EXIT_OK;
}

int cmd_start(const struct client_options *o, int argc, char *argv[])
{
	return simple_verb(o, argc, argv, FTRACED_MSG_START, "started");
}

int cmd_stop(const struct client_options *o, int argc, char *argv[])
{
	return simple_verb(o, argc, argv, FTRACED_MSG_STOP, "stopped");
}

int cmd_destroy(const struct client_options *o, int argc, char *argv[])
{
	return simple_verb(o, argc, argv, FTRACED_MSG_DESTROY, "destroyed");
}

/*
 * ftracectl reload: the daemon reads ftraced.conf and sessions.d again and
 * applies them only if all of it is valid (what SIGHUP does, answered). The
 * daemon's error, naming the file and line, is the exit status's reason.
 */
int cmd_reload(const struct client_options *o, int argc, char *argv[])
{
	static struct ctl_builder b;
	struct reply rep;
	int r;

	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("Usage: ftracectl reload\n\n"
		       "Have ftraced read ftraced.conf and sessions.d again. Everything is checked\n"
		       "first: with any error nothing changes (running sessions go on as they\n"
		       "were) and the error is printed; else what changed is. Root only.\n");
		return EXIT_OK;
	}
	if (argc > 1) {
		print_error("reload", "takes no arguments (see 'ftracectl reload --help')");
		return EXIT_USAGE;
	}
	ctl_builder_init(&b, FTRACED_MSG_RELOAD);
	r = ctl_call_timeout(o, &b, CTL_LONG_TIMEOUT_MS, &rep);
	if (r < 0)
		return exit_code_for_call(r);
	if (rep.type == FTRACED_MSG_ERROR) {
		print_error_reply("reload", &rep);
		return exit_code_for_error(rep.error);
	}
	if (o->json) {
		json_t *v = json_object();

		if (v)
			json_put_text(v, "reloaded", rep.note);
		ctl_reply_done(&rep);
		return json_print(v) < 0 ? EXIT_FAILED : EXIT_OK;
	}
	printf("reloaded: %s\n", rep.note);
	ctl_reply_done(&rep);
	return EXIT_OK;
}
