// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The capture options shared by `record` and `create`: parsed once, each
 * turned into its request attribute, with a clear message for a bad value.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "client/capture-options.h"
#include "client/ctl.h"

static int parse_long(const char *command, const char *what, const char *arg, long min,
		      long max, long *ret)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < min || v > max) {
		print_error(command, "invalid %s '%s'", what, arg);
		return -EINVAL;
	}
	*ret = v;
	return 0;
}

/**
 * capture_option() - handle one capture option.
 * @command: for messages
 * @c: getopt's value
 * @arg: its argument
 * @b: the request being built
 * @st: what the options said so far
 *
 * Return: 1 if handled, 0 if @c is not a capture option, -EINVAL (printed).
 */
int capture_option(const char *command, int c, const char *arg, struct ctl_builder *b,
		   struct capture_state *st)
{
	long v;

	switch (c) {
	case 'f':
		/* trace-cmd's meaning: the filter of the -e just before. */
		if (!st->has_event || st->event_filtered) {
			print_error(command, "-f '%s' filters the -e just before it: %s", arg,
				    st->has_event ? "that event already has a filter" : "there is none");
			return -EINVAL;
		}
		if (strlen(arg) > FTRACED_FILTER_MAX) {
			print_error(command, "filter is longer than %u bytes", FTRACED_FILTER_MAX);
			return -EINVAL;
		}
		ctl_put_event(b, FTRACED_ATTR_EVENT_FILTER, arg);
		st->event_filtered = true;
		return 1;
	case 'p':
		if (strlen(arg) > FTRACED_TRACER_MAX) {
			print_error(command, "unknown tracer '%s' (function or function_graph)", arg);
			return -EINVAL;
		}
		ctl_put_string(b, FTRACED_ATTR_TRACER, arg);
		st->has_source = true;
		return 1;
	case 'l':
	case 'n':
	case 'g':
		if (strlen(arg) > FTRACED_FUNCTION_MAX) {
			print_error(command, "-%c: function '%s' is longer than %u characters", c, arg,
				    FTRACED_FUNCTION_MAX);
			return -EINVAL;
		}
		ctl_put_string(b, c == 'l' ? FTRACED_ATTR_FTRACE_FILTER :
			       c == 'n' ? FTRACED_ATTR_FTRACE_NOTRACE : FTRACED_ATTR_GRAPH_FUNCTION,
			       arg);
		return 1;
	case OPT_MAX_GRAPH_DEPTH:
		if (parse_long(command, "graph depth (a positive integer)", arg, 1, INT32_MAX, &v) < 0)
			return -EINVAL;
		ctl_put_u32(b, FTRACED_ATTR_MAX_GRAPH_DEPTH, (uint32_t)v);
		return 1;
	case OPT_FUNC_STACK:
		ctl_put_u32(b, FTRACED_ATTR_FUNC_STACK, 1);
		return 1;
	case OPT_PROBE:
		if (strlen(arg) > FTRACED_PROBE_MAX) {
			print_error(command, "probe is longer than %u bytes", FTRACED_PROBE_MAX);
			return -EINVAL;
		}
		ctl_put_string(b, FTRACED_ATTR_PROBE, arg);
		st->has_source = true;
		return 1;
	case 'e':
		if (strlen(arg) > FTRACED_EVENT_SPEC_MAX) {
			print_error(command, "event '%s' is too long", arg);
			return -EINVAL;
		}
		/* No small cap (a session may name every event): only the protocol's limit. */
		if (st->n_events >= FTRACED_EVENTS_PER_REQUEST_MAX) {
			print_error(command, "too many events: at most %u -e options",
				    FTRACED_EVENTS_PER_REQUEST_MAX);
			return -E2BIG;
		}
		ctl_put_event(b, FTRACED_ATTR_EVENT, arg);
		st->n_events++;
		st->has_event = true;
		st->has_source = true;
		st->event_filtered = false;
		return 1;
	case OPT_FILTER:
		if (strlen(arg) > FTRACED_FILTER_MAX) {
			print_error(command, "filter is longer than %u bytes", FTRACED_FILTER_MAX);
			return -EINVAL;
		}
		ctl_put_string(b, FTRACED_ATTR_FILTER, arg);
		return 1;
	case 'b':
	case OPT_SUBBUF:
		if (parse_long(command, "size (KiB, a positive integer)", arg, 1, INT32_MAX, &v) < 0)
			return -EINVAL;
		ctl_put_u32(b, c == 'b' ? FTRACED_ATTR_BUFFER_KB : FTRACED_ATTR_SUBBUF_KB,
			    (uint32_t)v);
		return 1;
	case 'C':
		/* Scripts of before, where -C was the compression: the new meaning, said. */
		if (strcmp(arg, "zstd") == 0 || strcmp(arg, "none") == 0) {
			print_error(command, "-C sets the trace clock, as in trace-cmd; for "
				    "compression use --compression %s", arg);
			return -EINVAL;
		}
		if (!ctl_name_valid(arg)) {
			print_error(command, "invalid clock name '%s'", arg);
			return -EINVAL;
		}
		ctl_put_string(b, FTRACED_ATTR_CLOCK, arg);
		return 1;
	case 'd':
		print_error(command, "-d is trace-cmd's 'disable the function tracer while "
			    "recording', which ftraced does not have; to stop after a time, use "
			    "--duration TIME");
		return -EINVAL;
	case 'a':
		if (st->n_events >= FTRACED_EVENTS_PER_REQUEST_MAX) {
			print_error(command, "too many events: at most %u -e options",
				    FTRACED_EVENTS_PER_REQUEST_MAX);
			return -E2BIG;
		}
		ctl_put_event(b, FTRACED_ATTR_EVENT, "all");
		st->n_events++;
		st->has_event = true;
		st->has_source = true;
		st->event_filtered = false;
		return 1;
	case 'O':
		if (!ctl_string_valid(FTRACED_ATTR_TRACE_OPTION, arg, FTRACED_OPTION_MAX)) {
			print_error(command, "invalid trace option '%s' (an option's name, or noNAME; "
				    "'ftracectl list -o' lists them)", arg);
			return -EINVAL;
		}
		ctl_put_string(b, FTRACED_ATTR_TRACE_OPTION, arg);
		return 1;
	case 'M':
		if (!ctl_string_valid(FTRACED_ATTR_CPUMASK, arg, FTRACED_CPUMASK_MAX)) {
			print_error(command, "invalid CPU mask '%s' (hex digits, commas allowed, as "
				    "tracing_cpumask: e.g. 3 for CPUs 0 and 1)", arg);
			return -EINVAL;
		}
		ctl_put_string(b, FTRACED_ATTR_CPUMASK, arg);
		return 1;
	case OPT_NO_FILTER:
		ctl_put_u32(b, FTRACED_ATTR_NO_FILTER, 1);
		return 1;
	case OPT_TOP_LEVEL:
		ctl_put_u32(b, FTRACED_ATTR_TOP_LEVEL, 1);
		return 1;
	case OPT_COMPRESSION:
		if (strcmp(arg, "zstd") == 0) {
			ctl_put_u32(b, FTRACED_ATTR_COMPRESSION, FTRACED_COMPRESSION_ZSTD);
		} else if (strcmp(arg, "none") == 0) {
			ctl_put_u32(b, FTRACED_ATTR_COMPRESSION, FTRACED_COMPRESSION_NONE);
		} else {
			print_error(command, "unknown compression '%s' (zstd or none)", arg);
			return -EINVAL;
		}
		return 1;
	case 'T':
		ctl_put_u32(b, FTRACED_ATTR_STACKTRACE, 1);
		return 1;
	case 'i':
		ctl_put_u32(b, FTRACED_ATTR_IGNORE_MISSING, 1);
		return 1;
	case 'P':
		if (parse_long(command, "pid", arg, 1, INT32_MAX, &v) < 0)
			return -EINVAL;
		ctl_put_u32(b, FTRACED_ATTR_PID, (uint32_t)v);
		return 1;
	case 'c':
		ctl_put_u32(b, FTRACED_ATTR_FOLLOW_FORK, 1);
		return 1;
	case 'r':
		if (parse_long(command, "real-time priority", arg, 1, FTRACED_RT_PRIORITY_MAX, &v) < 0)
			return -EINVAL;
		ctl_put_u32(b, FTRACED_ATTR_RT_PRIORITY, (uint32_t)v);
		return 1;
	case OPT_LEVEL:
		if (parse_long(command, "zstd level", arg, -100, 100, &v) < 0)
			return -EINVAL;
		ctl_put_u32(b, FTRACED_ATTR_LEVEL, (uint32_t)(int32_t)v);
		return 1;
	default:
		return 0;
	}
}
