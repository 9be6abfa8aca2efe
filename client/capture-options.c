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
#include "ftraced/macro.h"

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

/* A trace-cmd record option ftraced does not have: what it is there, and what to use here. */
struct foreign_option {
	int c;
	const char *name;    /* as typed */
	const char *meaning; /* trace-cmd's */
	const char *instead;
};

#define NO_PROFILE "ftracectl has no profile: record the events wanted with -e and read " \
	"the file with trace-cmd report"
#define NO_NETWORK "ftracectl writes a file, a FIFO or standard output (-o -): e.g. " \
	"'-o - | ssh HOST \"cat > trace.dat\"', or run ftraced on that host"
#define NO_GUEST "ftracectl traces the kernel it runs on: run ftraced in the guest"

static const struct foreign_option foreign_options[] = {
	{ 'd', "-d", "disable the function tracer while recording",
	  "to stop after a time, use --duration TIME" },
	{ 'D', "-D", "fully disable function tracing, for every user",
	  "ftraced never changes the system's function tracing" },
	{ 'S', "-S", "enable only the command line's events with --profile", NO_PROFILE },
	{ 'G', "-G", "set soft and hard irqs as global with --profile", NO_PROFILE },
	{ 'H', "-H", "event hooks for --profile", NO_PROFILE },
	{ OPT_FOREIGN_PROFILE, "--profile", "record what trace-cmd report --profile reads",
	  NO_PROFILE },
	{ OPT_FOREIGN_BY_COMM, "--by-comm", "merge related tasks' events with --profile",
	  NO_PROFILE },
	{ 'N', "-N", "send the trace to a trace-cmd listen server", NO_NETWORK },
	{ 't', "-t", "use TCP for -N's live trace", NO_NETWORK },
	{ 'V', "-V", "send the trace over vsock to a listener", NO_GUEST },
	{ 'A', "-A", "record on a guest's agent", NO_GUEST },
	{ OPT_FOREIGN_PROXY, "--proxy", "reach a guest's agent through a proxy", NO_GUEST },
	{ OPT_FOREIGN_NAME, "--name", "name an agent (with -A)", NO_GUEST },
	{ OPT_FOREIGN_TSYNC_INTERVAL, "--tsync-interval",
	  "synchronise timestamps with guests", NO_GUEST },
	{ OPT_FOREIGN_TS_OFFSET, "--ts-offset", "add an offset to the timestamps",
	  "trace-cmd report --ts-offset applies one when reading" },
	{ OPT_FOREIGN_TSC2NSEC, "--tsc2nsec", "convert the x86-tsc clock to nanoseconds",
	  "record with a nanosecond clock: the default (local), or -C mono" },
	{ 'B', "-B", "create a named buffer for the events that follow",
	  "every session has an instance of its own: for another, start another session "
	  "('ftracectl create NAME')" },
	{ 'k', "-k", "do not reset the buffers after recording",
	  "ftraced reads its own instance into the file and removes it; the top level is "
	  "never reset (--top-level puts it back as found)" },
	{ OPT_FOREIGN_TEMP, "--temp", "where the temporary per-CPU files go",
	  "ftraced writes the file itself; its spools are in the daemon's state directory "
	  "(ftraced.conf(5))" },
	{ OPT_FOREIGN_CMDLINES_SIZE, "--cmdlines-size", "resize the kernel's saved_cmdlines",
	  "a setting of the whole system, which ftraced leaves alone; -e sched records "
	  "every task's name as it runs" },
	{ OPT_FOREIGN_POLL, "--poll", "read the buffers without blocking",
	  "ftraced's workers wait for the kernel's watermark" },
	{ OPT_FOREIGN_FILE_VERSION, "--file-version", "write another file version",
	  "ftraced writes trace-cmd version 7 files only" },
	{ OPT_FOREIGN_STDERR, "--stderr", "send the command's output to stderr",
	  "the command's output is its own: redirect it in a shell" },
	{ OPT_FOREIGN_VERBOSE, "--verbose", "set trace-cmd's log level",
	  "the daemon's log is in its journal (journalctl -u ftraced)" },
};

/**
 * capture_foreign_option() - say that @c is trace-cmd record's and not ours.
 * @command: for messages
 * @c: getopt's value
 *
 * Return: -EINVAL (printed) if @c is one of them, else 0.
 */
static int capture_foreign_option(const char *command, int c)
{
	for (size_t k = 0; k < ELEMENTSOF(foreign_options); k++) {
		const struct foreign_option *f = &foreign_options[k];

		if (f->c != c)
			continue;
		print_error(command, "%s is trace-cmd record's '%s', which ftraced does not have; %s",
			    f->name, f->meaning, f->instead);
		return -EINVAL;
	}
	return 0;
}

/**
 * capture_finish() - after the last option: what had to wait for all of them.
 * @command: for messages
 * @b: the request
 * @st: what the options said
 *
 * -l and -n go out here, each with --module's ":mod:MOD" appended as
 * trace-cmd does (and, without -l, "-l '*:mod:MOD'"): --module may come
 * before or after them.
 *
 * Return: 0, or -EINVAL (printed).
 */
int capture_finish(const char *command, struct ctl_builder *b, const struct capture_state *st)
{
	bool any_filter = false;

	for (unsigned k = 0; k < st->n_functions; k++) {
		const char *f = st->functions[k];
		char glob[FTRACED_FUNCTION_MAX + 1];

		any_filter |= !st->notrace[k];
		if (st->module && strstr(f, ":mod:")) {
			print_error(command, "-%c '%s' names its module already; --module %s would "
				    "name another", st->notrace[k] ? 'n' : 'l', f, st->module);
			return -EINVAL;
		}
		if ((size_t)snprintf(glob, sizeof(glob), "%s%s%s", f, st->module ? ":mod:" : "",
				     st->module ?: "") >= sizeof(glob)) {
			print_error(command, "-%c '%s:mod:%s' is longer than %u characters",
				    st->notrace[k] ? 'n' : 'l', f, st->module, FTRACED_FUNCTION_MAX);
			return -EINVAL;
		}
		ctl_put_string(b, st->notrace[k] ? FTRACED_ATTR_FTRACE_NOTRACE :
			       FTRACED_ATTR_FTRACE_FILTER, glob);
	}
	if (st->module && !any_filter) {
		char glob[FTRACED_FUNCTION_MAX + 1];

		snprintf(glob, sizeof(glob), "*:mod:%s", st->module);
		ctl_put_string(b, FTRACED_ATTR_FTRACE_FILTER, glob);
	}
	return 0;
}

/*
 * -m SIZE: KiB per CPU, as trace-cmd's. The least is one sub-buffer, which
 * only the daemon knows (it says so); FTRACED_KEEP_KB_MAX keeps it a size.
 */
static int keep_option(const char *command, const char *arg, struct ctl_builder *b)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || v < 1 || v > FTRACED_KEEP_KB_MAX) {
		print_error(command, "invalid -m SIZE '%s': KiB of trace data per CPU, a whole "
			    "number from 1 (at least one sub-buffer) to %llu", arg,
			    (unsigned long long)FTRACED_KEEP_KB_MAX);
		return -EINVAL;
	}
	ctl_put_u64(b, FTRACED_ATTR_KEEP_KB, (uint64_t)v);
	return 1;
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
		if (!st->has_event || st->event_filtered || st->negate) {
			print_error(command, "-f '%s' filters the -e just before it: %s", arg,
				    st->negate && st->has_event ? "-v excludes it" :
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
	case 'R':
		/* trace-cmd's meaning: the trigger of the -e just before. */
		if (!st->has_event || st->event_triggered || st->negate) {
			print_error(command, "-R '%s' is the trigger of the -e just before it: %s", arg,
				    st->negate && st->has_event ? "-v excludes it" :
				    st->has_event ? "that event already has a trigger" : "there is none");
			return -EINVAL;
		}
		if (!ctl_string_valid(FTRACED_ATTR_EVENT_TRIGGER, arg, FTRACED_EVENT_TRIGGER_MAX)) {
			print_error(command, "invalid trigger '%s' (printable ASCII on one line, at most "
				    "%u bytes; e.g. stacktrace, traceoff if prev_pid == 1, "
				    "hist:keys=pid)", arg, FTRACED_EVENT_TRIGGER_MAX);
			return -EINVAL;
		}
		ctl_put_event(b, FTRACED_ATTR_EVENT_TRIGGER, arg);
		st->event_triggered = true;
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
		if (c == 'g') {
			ctl_put_string(b, FTRACED_ATTR_GRAPH_FUNCTION, arg);
			return 1;
		}
		if (st->n_functions >= FTRACED_FUNCTIONS_PER_REQUEST_MAX) {
			print_error(command, "at most %u -l, -n and -g", FTRACED_FUNCTIONS_PER_REQUEST_MAX);
			return -EINVAL;
		}
		st->notrace[st->n_functions] = c == 'n';
		st->functions[st->n_functions++] = arg;
		return 1;
	case OPT_MODULE:
		if (st->module || !ctl_name_valid(arg)) {
			print_error(command, st->module ? "--module is given once (trace-cmd takes one)" :
				    "invalid module name '%s'", arg);
			return -EINVAL;
		}
		st->module = arg;
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
	case 'v':
		/* trace-cmd's: every -e after it is excluded, for the rest of the line. */
		st->negate = true;
		return 1;
	case 'e':
		if (strlen(arg) > FTRACED_EVENT_SPEC_MAX) {
			print_error(command, "event '%s' is too long", arg);
			return -EINVAL;
		}
		if (st->negate) {
			if (strcmp(arg, "all") == 0) {
				print_error(command, "-v -e all would exclude every event");
				return -EINVAL;
			}
			ctl_put_string(b, FTRACED_ATTR_EXCLUDE_EVENT, arg);
			st->has_event = true; /* for -f's message */
			return 1;
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
		st->event_triggered = false;
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
	case 'a':
		if (st->negate) {
			print_error(command, "-a after -v would exclude every event; give -a first "
				    "(-a -v -e EVENT: every event but EVENT)");
			return -EINVAL;
		}
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
		st->event_triggered = false;
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
		if (st->n_pids >= FTRACED_PIDS_PER_REQUEST_MAX) {
			print_error(command, "at most %u processes (-P)", FTRACED_PIDS_PER_REQUEST_MAX);
			return -EINVAL;
		}
		st->pids[st->n_pids++] = (uint32_t)v;
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
	case 's':
		/*
		 * trace-cmd's recorders sleep this long between reads; ftraced's
		 * wake on the kernel's watermark, and -s adds a read of every CPU
		 * at least this often, partly filled sub-buffers included.
		 */
		if (parse_long(command, "read interval (microseconds, 1000 to 3600000000)", arg,
			       FTRACED_READ_INTERVAL_MIN_US, FTRACED_READ_INTERVAL_MAX_US, &v) < 0)
			return -EINVAL;
		ctl_put_u32(b, FTRACED_ATTR_READ_INTERVAL_US, (uint32_t)v);
		return 1;
	case 'm':
		/*
		 * trace-cmd's meaning: at most SIZE KiB per CPU, the most recent.
		 * A session that keeps the most recent data is a flight recorder.
		 */
		if (strcmp(command, "record") != 0) {
			print_error(command, "-m keeps the most recent data of a record; a session "
				    "keeps it as a flight recorder: --mode flight --flight-size SIZE");
			return -EINVAL;
		}
		return keep_option(command, arg, b);
	case OPT_LEVEL:
		if (parse_long(command, "zstd level", arg, -100, 100, &v) < 0)
			return -EINVAL;
		ctl_put_u32(b, FTRACED_ATTR_LEVEL, (uint32_t)(int32_t)v);
		return 1;
	case OPT_DATE:
		/*
		 * trace-cmd's --date maps the trace clock to the wall clock; every
		 * ftraced file carries that anchor (its DATE option) already.
		 */
		return 1;
	default:
		return capture_foreign_option(command, c);
	}
}
