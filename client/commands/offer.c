// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ftracectl list -e/-t/-f/-o/--kernel: what the kernel offers a session,
 * with trace-cmd list's selectors and meanings (-e and -f take a regular
 * expression, matched anywhere in the name, as trace-cmd's do). The daemon
 * answers with a file descriptor (tracefs is root's to read); the lines
 * are filtered and printed here. And ftracectl save: a session's file for
 * sessions.d, read from the descriptor the daemon passes.
 */
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/commands/commands.h"
#include "client/ctl.h"

/* Asks the daemon for @type (OFFER or SAVE) and opens what it passes for reading. */
static int call_for_fd(const struct client_options *o, const char *command,
		       struct ctl_builder *b, FILE **ret)
{
	struct reply rep;
	FILE *f;
	int r;

	r = ctl_call(o, b, &rep);
	if (r < 0)
		return exit_code_for_call(r);
	if (rep.type == FTRACED_MSG_ERROR) {
		print_error_reply(command, &rep);
		r = exit_code_for_reply(&rep);
		ctl_reply_done(&rep);
		return r;
	}
	if (rep.type != FTRACED_MSG_OK || !rep.has_fd) {
		print_error(command, "unexpected reply from the daemon");
		ctl_reply_done(&rep);
		return EXIT_FAILED;
	}
	f = fdopen(rep.fd, "r");
	if (!f) {
		print_error(command, "cannot read the daemon's answer: %m");
		ctl_reply_done(&rep);
		return EXIT_FAILED;
	}
	rep.has_fd = false; /* the FILE has it now */
	ctl_reply_done(&rep);
	*ret = f;
	return EXIT_OK;
}

/* Splits a "NAME<TAB>VALUE<TAB>DETAIL" line in place; missing fields are "". */
static void fields(char *line, char **name, char **value, char **detail)
{
	line[strcspn(line, "\n")] = '\0';
	*name = line;
	*value = strchr(line, '\t');
	*detail = *value ? strchr(*value + 1, '\t') : NULL;
	if (*value)
		*(*value)++ = '\0';
	if (*detail)
		*(*detail)++ = '\0';
	*value = *value ?: (char *)"";
	*detail = *detail ?: (char *)"";
}

static int print_offer(const struct client_options *o, enum ftraced_offer what, const char *pattern)
{
	static const char *const keys[] = {
		[FTRACED_OFFER_EVENTS] = "events",
		[FTRACED_OFFER_TRACERS] = "tracers",
		[FTRACED_OFFER_FUNCTIONS] = "functions",
		[FTRACED_OFFER_OPTIONS] = "options",
		[FTRACED_OFFER_CAPABILITIES] = "kernel",
	};
	static struct ctl_builder b;
	json_t *json = NULL;
	char *line = NULL, *name, *value, *detail;
	size_t n_line = 0;
	regex_t re;
	FILE *f;
	int r;

	if (pattern && (r = regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB)) != 0) {
		char why[128];

		regerror(r, &re, why, sizeof(why));
		print_error("list", "invalid regular expression '%s': %s", pattern, why);
		return EXIT_USAGE;
	}
	ctl_builder_init(&b, FTRACED_MSG_OFFER);
	ctl_put_u32(&b, FTRACED_ATTR_OFFER, what);
	r = call_for_fd(o, "list", &b, &f);
	if (r != EXIT_OK) {
		if (pattern)
			regfree(&re);
		return r;
	}
	if (o->json)
		json = what == FTRACED_OFFER_CAPABILITIES ? json_object() : json_array();
	while (getline(&line, &n_line, f) > 0) {
		fields(line, &name, &value, &detail);
		if (!name[0] || (pattern && regexec(&re, name, 0, NULL, 0) != 0))
			continue;
		if (json && what == FTRACED_OFFER_CAPABILITIES) {
			json_put_text(json, name, value);
		} else if (json && (what == FTRACED_OFFER_EVENTS || what == FTRACED_OFFER_FUNCTIONS)) {
			json_array_append_new(json, json_text(name));
		} else if (json) {
			json_t *item = json_object();

			if (item) {
				json_put_text(item, "name", name);
				json_put_text(item, what == FTRACED_OFFER_TRACERS ? "where" : "default",
					      value);
				json_put_text(item, "note", detail);
				json_array_append_new(json, item);
			}
		} else if (what == FTRACED_OFFER_CAPABILITIES) {
			printf("%-28s %s%s%s%s\n", name, value, detail[0] ? "  (" : "", detail,
			       detail[0] ? ")" : "");
		} else if (what == FTRACED_OFFER_TRACERS || what == FTRACED_OFFER_OPTIONS) {
			printf("%-22s %-10s %s\n", name, value, detail);
		} else {
			printf("%s\n", name);
		}
	}
	free(line);
	fclose(f);
	if (pattern)
		regfree(&re);
	if (json) {
		json_t *top = json_object();

		if (top)
			json_object_set_new(top, keys[what], json);
		else
			json_decref(json);
		json_print(top);
	}
	return EXIT_OK;
}

static void list_help(void)
{
	printf("Usage: ftracectl list [-e [REGEX] | -t | -f [REGEX] | -o | --kernel]\n\n"
	       "Without a selector, the sessions. With one, what this kernel offers a session,\n"
	       "as trace-cmd list shows it:\n\n"
	       "  -e [REGEX]   events (SYSTEM:EVENT), those matching REGEX if given\n"
	       "  -t           tracers, and whether they run in a session's own instance\n"
	       "  -f [REGEX]   functions the function tracer can filter on (-l, -n, -g)\n"
	       "  -o           trace options of an instance (-O), and those ftraced sets itself\n"
	       "      --kernel the features ftraced uses: snapshot buffer, tracers in an\n"
	       "               instance, kprobes, uprobes, copied markers, persistent buffers,\n"
	       "               the largest sub-buffer\n"
	       "  -j, --json   as JSON\n");
}

/**
 * list_offer() - `ftracectl list` with a selector, if @argv has one.
 * @o: options
 * @argc: arguments, "list" first
 * @argv: arguments
 * @ret_exit: the exit code, when handled
 *
 * Return: true if handled (a selector, or --help).
 */
bool list_offer(const struct client_options *o, int argc, char *argv[], int *ret_exit)
{
	static const struct {
		const char *option;
		enum ftraced_offer what;
		bool pattern;
	} selectors[] = {
		{ "-e", FTRACED_OFFER_EVENTS, true },
		{ "-t", FTRACED_OFFER_TRACERS, false },
		{ "-f", FTRACED_OFFER_FUNCTIONS, true },
		{ "-o", FTRACED_OFFER_OPTIONS, false },
		{ "--kernel", FTRACED_OFFER_CAPABILITIES, false },
	};

	if (argc < 2)
		return false;
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		list_help();
		*ret_exit = EXIT_OK;
		return true;
	}
	for (size_t k = 0; k < ELEMENTSOF(selectors); k++) {
		const char *pattern;

		if (strcmp(argv[1], selectors[k].option) != 0)
			continue;
		pattern = selectors[k].pattern && argc > 2 ? argv[2] : NULL;
		if (argc > (pattern ? 3 : 2)) {
			print_error("list", "unexpected argument '%s'", argv[pattern ? 3 : 2]);
			*ret_exit = EXIT_USAGE;
			return true;
		}
		*ret_exit = print_offer(o, selectors[k].what, pattern);
		return true;
	}
	return false;
}

int cmd_save(const struct client_options *o, int argc, char *argv[])
{
	static struct ctl_builder b;
	const char *session;
	char buf[4096];
	size_t n;
	FILE *f;
	int r;

	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("Usage: ftracectl save SESSION\n\n"
		       "Print a session's file for /etc/ftraced/sessions.d: the same session,\n"
		       "created and started with the daemon.\n");
		return EXIT_OK;
	}
	if (parse_session_arg("save", argc, argv, /* required= */ true, &session) < 0)
		return EXIT_USAGE;
	ctl_builder_init(&b, FTRACED_MSG_SAVE);
	ctl_put_string(&b, FTRACED_ATTR_SESSION, session);
	r = call_for_fd(o, "save", &b, &f);
	if (r != EXIT_OK)
		return r;
	if (o->json) {
		_cleanup_free_ char *text = NULL;
		size_t n_text = 0;
		FILE *m = open_memstream(&text, &n_text);
		json_t *v = json_object();

		while (m && (n = fread(buf, 1, sizeof(buf), f)) > 0)
			fwrite(buf, 1, n, m);
		if (m)
			fclose(m);
		fclose(f);
		if (v) {
			json_put_text(v, "session", session);
			json_put_text(v, "file", text);
		}
		return json_print(v) < 0 ? EXIT_FAILED : EXIT_OK;
	}
	printf("# /etc/ftraced/sessions.d/%s.conf, from 'ftracectl save %s'\n", session, session);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, stdout);
	fclose(f);
	return EXIT_OK;
}
