// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ftracectl record: one command, one complete file. The client opens the
 * output itself (as FILE.partial, with its own rights), passes the fd to
 * the daemon, and renames it into place once the daemon says the file is
 * complete and synced; a failed or interrupted capture leaves only the
 * .partial. Ctrl-C, SIGTERM or SIGHUP (the terminal went away) asks the
 * daemon to stop and the file is still finished and renamed.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "client/capture-options.h"
#include "client/commands/commands.h"
#include "client/ctl.h"
#include "client/output.h"
#include "client/proc-maps.h"
#include "client/spawn.h"
#include "ftraced/macro.h"
#include "lib/time-util.h"

#define PROGRESS_INTERVAL_MS 1000

static volatile sig_atomic_t stop_requested;
/* --proc-map: SIGCHLD from a traced command is looked at (it may only have been signalled). */
static volatile sig_atomic_t child_event;
static bool child_traced;

/* A signal to stop, or the command we ran has ended (SIGCHLD). */
static void on_stop_signal(int sig)
{
	if (sig == SIGCHLD && child_traced)
		child_event = 1;
	else
		stop_requested = 1;
}

/* trace-cmd record's default output. */
#define DEFAULT_OUTPUT "trace.dat"

static void record_help(void)
{
	printf("Usage: ftracectl record -e EVENT... | -p TRACER | --probe DEF... [OPTIONS]\n"
	       "                        [[--] CMD [ARG...]]\n\n"
	       "Record kernel events into a trace-cmd v7 file; with CMD, run it (as you, once\n"
	       "tracing is on), record until it exits, and exit with its status.\n\n"
	       CAPTURE_OPTIONS_HELP
	       "  -m SIZE                keep at most SIZE KiB of trace data per CPU (compressed\n"
	       "                         bytes with zstd), the most recent: older data is\n"
	       "                         dropped while recording, in whole chunks (up to a\n"
	       "                         sixteenth of SIZE each), and the summary and the\n"
	       "                         file's CPU statistics say how much; held in the\n"
	       "                         daemon's memory, none on disk until the stop (at\n"
	       "                         least one sub-buffer)\n"
	       "  -F, --only-command     only events of CMD's process (with -c, and its children)\n"
	       "      --proc-map         the memory maps of the processes traced (-P, and\n"
	       "                         CMD with -F) in the file, as trace-cmd's PROCMAPS\n"
	       "      --user USER        run CMD as USER: its uid, gid and groups (ftracectl\n"
	       "                         must run as root)\n"
	       "  -o, --output FILE      output file (default " DEFAULT_OUTPUT "; written as\n"
	       "                         FILE.partial until complete; an existing FIFO is\n"
	       "                         streamed into; - is standard output, a pipe or a file)\n"
	       "      --duration TIME    stop after TIME (e.g. 10s, 500ms, 2m; at most 30 days);\n"
	       "                         default: until Ctrl-C or CMD's end\n"
	       "      --force            overwrite FILE if it exists\n"
	       "  -q, --quiet            print nothing but errors and warnings\n"
	       "  -j, --json             the summary as JSON\n");
}

static bool progress_wanted(bool quiet, bool json)
{
	return !quiet && !json && isatty(STDERR_FILENO);
}

static void print_progress(const struct session_info *s)
{
	char raw[32], stored[32];

	print_size(raw, sizeof(raw), session_bytes_raw(s));
	print_size(stored, sizeof(stored), session_bytes_stored(s));
	fprintf(stderr, "\r%6.1f s  captured %s  stored %s  lost %llu events\033[K",
		(double)s->elapsed_ms / 1000, raw, stored, (unsigned long long)session_lost(s));
}

/*
 * The summary, on @out (stderr when the trace itself goes to stdout); with
 * @quiet only what is lost, on stderr. "No events lost." only when nothing
 * was: not after a store failure, nor with an interference warning.
 */
static void print_summary(FILE *out, const struct session_info *s, const char *output, bool quiet)
{
	char raw[32], file[32];
	uint64_t lost = session_lost(s);

	if (!quiet) {
		print_size(raw, sizeof(raw), session_bytes_raw(s));
		print_size(file, sizeof(file), s->file_bytes);
		fprintf(out, "%s: %s, %s of ring-buffer data from %u CPUs in %.2f s (%s",
			output, file, raw, s->n_cpus, (double)s->elapsed_ms / 1000,
			s->compression == FTRACED_COMPRESSION_NONE ? "uncompressed" : "zstd");
		if (s->compression != FTRACED_COMPRESSION_NONE && session_bytes_stored(s) > 0)
			fprintf(out, ", %.1fx",
				(double)session_bytes_raw(s) / (double)session_bytes_stored(s));
		fprintf(out, ")\n");
		for (unsigned i = 0; i < s->n_cpus; i++) {
			const struct ftraced_cpu_stats *c = &s->cpus[i];

			print_size(raw, sizeof(raw), c->bytes_raw);
			fprintf(out, "  CPU %u: %s, %llu events read, %llu lost\n", c->cpu, raw,
				(unsigned long long)c->read,
				(unsigned long long)(c->overrun + c->dropped));
		}
	}
	if (s->keep_kb && !quiet) {
		print_size(raw, sizeof(raw), s->evicted_raw_bytes);
		print_size(file, sizeof(file), s->history_raw_bytes);
		fprintf(out, "Kept the most recent %s of ring-buffer data, at most %llu KiB per CPU "
			"(-m); %s older was dropped.\n", file, (unsigned long long)s->keep_kb,
			raw);
	}
	if (s->discarded > 0)
		fprintf(stderr, "ftracectl record: %llu events were read but could not be stored "
			"(see the error below)\n", (unsigned long long)s->discarded);
	if (lost > s->discarded)
		fprintf(stderr, "ftracectl record: warning: the kernel lost %llu events; use a larger "
			"buffer (-b) or fewer events\n", (unsigned long long)(lost - s->discarded));
	else if (!quiet && !s->warning[0] && s->discarded == 0)
		fprintf(out, s->evicted_raw_bytes ? "No events lost but those -m dropped.\n" :
			"No events lost.\n");
}

struct record_args {
	struct ctl_builder *req;
	const char *output;
	bool to_stdout;     /* -o - */
	bool force;
	bool quiet;
	bool json;
	struct capture_state capture;
	bool only_command;  /* -F */
	struct spawn_user user; /* --user; no name: CMD runs as ftracectl does */
	bool proc_map;      /* --proc-map: CMD is held at its exit until the maps are read */
	uint64_t duration_ms; /* --duration; 0: none */
	char **command;     /* after the options; NULL: none */
};

/* --user USER: only root can become another user, so anyone else is told so at once. */
static int user_option(const char *name, struct spawn_user *ret)
{
	int r;

	if (geteuid() != 0) {
		print_error("record", "--user %s runs the command as that user, which only root "
			    "can do (ftracectl runs as uid %u); run the command without --user to "
			    "run it as you", name, (unsigned)geteuid());
		return -EPERM;
	}
	r = spawn_user_find(name, ret);
	if (r < 0) {
		print_error("record", "--user: %s '%s'", r == -ENOENT ? "no such user" :
			    strerror(-r), name);
		return r;
	}
	return 0;
}

static int parse_args(int argc, char *argv[], struct record_args *a)
{
	enum { ARG_FORCE = _OPT_CAPTURE_END, ARG_DURATION, ARG_USER, ARG_PROC_MAP };
	static const struct option options[] = {
		CAPTURE_LONG_OPTIONS,
		{ "output", required_argument, NULL, 'o' },
		{ "duration", required_argument, NULL, ARG_DURATION },
		{ "force", no_argument, NULL, ARG_FORCE },
		{ "quiet", no_argument, NULL, 'q' },
		{ "only-command", no_argument, NULL, 'F' },
		{ "user", required_argument, NULL, ARG_USER },
		{ "proc-map", no_argument, NULL, ARG_PROC_MAP },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	uint64_t ms;
	int c, r;

	/*
	 * '+': as trace-cmd, the first word that is not an option starts the
	 * command, whose own options are never ours ("--" before it also works).
	 */
	optind = 0; /* 0, not 1: re-initialise getopt fully (main used "+") */
	while ((c = getopt_long(argc, argv, "+" CAPTURE_SHORT_OPTIONS "o:qhFj", options,
				NULL)) >= 0) {
		r = capture_option("record", c, optarg, a->req, &a->capture);
		if (r < 0)
			return r;
		if (r > 0)
			continue;
		switch (c) {
		case 'o':
			a->output = optarg;
			break;
		case ARG_DURATION:
			r = parse_duration_ms(optarg, &ms);
			if (r < 0) {
				print_error("record", "invalid duration '%s' (%s)", optarg,
					    r == -ERANGE ? "from 1 ms to 30 days" :
					    "e.g. 10s, 500ms, 2m");
				return -EINVAL;
			}
			a->duration_ms = ms;
			break;
		case ARG_FORCE:
			a->force = true;
			break;
		case 'q':
			a->quiet = true;
			break;
		case 'F':
			a->only_command = true;
			break;
		case ARG_PROC_MAP:
			a->proc_map = true;
			ctl_put_u32(a->req, FTRACED_ATTR_PROC_MAP, 1);
			break;
		case ARG_USER:
			r = user_option(optarg, &a->user);
			if (r < 0)
				return r;
			break;
		case 'j':
			a->json = true;
			break;
		case 'h':
			record_help();
			return 0;
		default:
			return -EINVAL;
		}
	}
	if (optind < argc)
		a->command = argv + optind;
	if (capture_finish("record", a->req, &a->capture) < 0)
		return -EINVAL;
	if (!a->capture.has_source) {
		print_error("record", "no events given; use -e SYSTEM:EVENT (e.g. -e sched) or -p "
			    "TRACER");
		return -EINVAL;
	}
	if (!a->output)
		a->output = DEFAULT_OUTPUT;
	a->to_stdout = strcmp(a->output, "-") == 0;
	if (a->to_stdout && a->json) {
		print_error("record", "-o - writes the trace to standard output: --json cannot go "
			    "there too");
		return -EINVAL;
	}
	/*
	 * With --proc-map the client stops the record itself, so that the maps
	 * go with its STOP; else the daemon keeps the time.
	 */
	if (a->duration_ms && !a->proc_map)
		ctl_put_u64(a->req, FTRACED_ATTR_DURATION_MS, a->duration_ms);
	if (a->proc_map && a->capture.n_pids == 0 && !(a->only_command && a->command)) {
		print_error("record", "--proc-map saves the memory maps of the processes traced: "
			    "give them with -P PID, or a command with -F");
		return -EINVAL;
	}
	if (a->user.name[0] && !a->command) {
		print_error("record", "--user runs the command given after the options as that "
			    "user; there is none");
		return -EINVAL;
	}
	if (a->only_command && !a->command) {
		print_error("record", "-F traces the command given after the options; there is none");
		return -EINVAL;
	}
	if (a->req->error) {
		print_error("record", "too many events or options for one request");
		return -EINVAL;
	}
	return 1;
}

/*
 * Waits for FINISHED; sends STOP on a signal and, for the progress line,
 * STATUS every PROGRESS_INTERVAL_MS. Without a progress line it sleeps
 * until the daemon or a signal wakes it: the stop signals are blocked but
 * while it waits, so one that arrives just before the wait still ends it.
 */
/*
 * --proc-map: the maps of -P's processes, and of -F's command (held at its
 * exit), go with the STOP; one that cannot be read is said and left out.
 */
static void put_proc_maps(struct ctl_builder *b, const struct record_args *a,
			  const struct spawned *cmd)
{
	uint32_t pids[FTRACED_PIDS_PER_REQUEST_MAX + 1];
	unsigned n = a->capture.n_pids;
	size_t room = FTRACED_MSG_SIZE_MAX - 1024; /* the rest of the STOP */

	memcpy(pids, a->capture.pids, n * sizeof(*pids));
	if (a->only_command && a->command && !cmd->reaped)
		pids[n++] = (uint32_t)cmd->pid;
	for (unsigned k = 0; k < n && k < FTRACED_PIDS_PER_REQUEST_MAX; k++) {
		_cleanup_free_ char *text = NULL;
		int r = proc_maps_text((pid_t)pids[k], &text);

		if (r >= 0 && strlen(text) + 8 > room)
			r = -ENOBUFS;
		if (r < 0) {
			fprintf(stderr, "ftracectl record: --proc-map: no memory maps of process %u "
				"in the file: %s\n", pids[k], r == -ENOBUFS || r == -E2BIG ?
				"they take more than one request holds" : strerror(-r));
			continue;
		}
		ctl_put_string(b, FTRACED_ATTR_PROC_MAPS, text);
		room -= strlen(text) + 8;
	}
}

static int wait_finished(int sock, const char *session, bool progress,
			 const struct record_args *a, struct spawned *cmd, struct reply *ret)
{
	uint64_t deadline = a->proc_map && a->duration_ms ?
		monotonic_usec() + a->duration_ms * 1000 : 0;
	struct ctl_builder *b = malloc(sizeof(*b));
	sigset_t stop_signals, wait_mask;
	bool stop_sent = false;
	int r;

	if (!b)
		return -ENOMEM;
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	sigaddset(&stop_signals, SIGHUP);
	sigaddset(&stop_signals, SIGCHLD);
	sigprocmask(SIG_BLOCK, &stop_signals, &wait_mask);
	for (;;) {
		struct reply rep;
		int timeout = progress ? PROGRESS_INTERVAL_MS : -1;

		if (child_event) {
			child_event = 0;
			if (spawn_child_event(cmd))
				stop_requested = 1;
		}
		if (deadline && !stop_requested) {
			uint64_t now = monotonic_usec();

			if (now >= deadline)
				stop_requested = 1;
			else if (timeout < 0 || (deadline - now) / 1000 + 1 < (uint64_t)timeout)
				timeout = (int)((deadline - now) / 1000 + 1);
		}
		if (stop_requested && !stop_sent) {
			ctl_builder_init(b, FTRACED_MSG_STOP);
			ctl_put_string(b, FTRACED_ATTR_SESSION, session);
			if (a->proc_map)
				put_proc_maps(b, a, cmd);
			r = ctl_send(sock, b, -1);
			if (r < 0)
				break;
			stop_sent = true;
			if (progress)
				fprintf(stderr, "\nStopping, finishing the file...\n");
		}
		r = ctl_receive_sigmask(sock, timeout, &wait_mask, &rep);
		if (r == -EINTR)
			continue;
		if (r == -ETIMEDOUT) {
			if (progress && !stop_sent) {
				ctl_builder_init(b, FTRACED_MSG_STATUS);
				ctl_put_string(b, FTRACED_ATTR_SESSION, session);
				r = ctl_send(sock, b, -1);
				if (r < 0)
					break;
			}
			continue;
		}
		if (r < 0)
			break;
		if (rep.type == FTRACED_MSG_SESSIONS && rep.sessions.n == 1 && progress && !stop_sent)
			print_progress(&rep.sessions.items[0]);
		if (rep.type == FTRACED_MSG_FINISHED ||
		    (rep.type == FTRACED_MSG_ERROR && rep.error != -EALREADY)) {
			*ret = rep;
			r = 0;
			break;
		}
		ctl_reply_done(&rep);
	}
	sigprocmask(SIG_SETMASK, &wait_mask, NULL);
	free(b);
	if (progress)
		fputc('\n', stderr);
	return r;
}

/* The command's end, for the exit status: said on stderr unless quiet. */
static int command_status(struct record_args *a, struct spawned *cmd)
{
	FILE *out = stderr;
	int status;

	/* A --duration that ended first leaves the command running; it is not waited for. */
	if (spawn_reap(cmd, false, &status) < 0) {
		if (!a->quiet)
			fprintf(out, "'%s' is still running\n", a->command[0]);
		return EXIT_OK;
	}
	if (!a->quiet && WIFEXITED(status))
		fprintf(out, "'%s' exited with status %d\n", a->command[0], WEXITSTATUS(status));
	else if (!a->quiet && WIFSIGNALED(status))
		fprintf(out, "'%s' was killed by signal %d\n", a->command[0], WTERMSIG(status));
	return spawn_exit_status(status);
}

/* Recording has begun: where to, and what the daemon noted (to stderr: stdout may be the trace). */
static void announce(const struct session_info *s, const struct record_args *a, bool json,
		     bool progress)
{
	if (!json && !a->quiet)
		fprintf(stderr, "Recording into '%s' as session '%s' on instance '%s'%s\n",
			a->to_stdout ? "standard output" : a->output, s->name, s->instance,
			progress ? " (Ctrl-C to stop)" : "");
	print_skipped("record", s);
	if (s->note[0] && !json)
		fprintf(stderr, "ftracectl record: note: %s\n", s->note);
}

/* The capture failed: say so, and save what the daemon rebuilt of it, if it sent that. */
static void report_failed(const struct reply *rep, const struct record_args *a,
			  const char *partial)
{
	char copy[PATH_MAX];
	int r;

	print_error("record", "capture failed: %s; the partial output is left at '%s'",
		    rep->message[0] ? rep->message : strerror(-rep->error),
		    partial[0] ? partial : a->output);
	if (!rep->has_fd)
		return;
	r = output_save_recovered(rep->fd, a->to_stdout ? "trace.dat" : a->output, copy,
				  sizeof(copy));
	if (r >= 0)
		fprintf(stderr, "ftracectl record: a copy of what was captured is in '%s'\n", copy);
	else
		print_error("record", "cannot copy what was captured out of the daemon's state "
			    "directory: %s", strerror(-r));
}

/*
 * The file is complete: it takes its name and the summary is said.
 * Return: the command's status (@exit_code) with a command, else the record's.
 */
static int report_finished(const struct session_info *s, const struct record_args *a,
			   const char *partial, bool json, FILE *text, int exit_code)
{
	int r;

	if (output_commit("record", partial, a->output) < 0)
		return EXIT_FAILED;
	if (json)
		json_print(session_json(s));
	else
		print_summary(text, s, a->to_stdout ? "standard output" : a->output, a->quiet);
	/* A capture cut short still leaves a valid file of what came before. */
	r = s->error;
	if (r < 0)
		print_error("record", "%s; '%s' holds what was captured until then",
			    s->message, a->output);
	/* Another process changed the instance: events may be missing, and the file says so. */
	if (s->warning[0]) {
		print_error("record", "events may be missing from '%s': %s", a->output,
			    s->warning);
		r = r < 0 ? r : -EIO;
	}
	/* With a command, its status; the record's own failure only without one. */
	if (a->command)
		return exit_code;
	return r < 0 ? EXIT_FAILED : EXIT_OK;
}

/*
 * The command, forked and held until tracing is on; its end stops the
 * record. With --proc-map and -F it is also held at its exit, so that its
 * maps can still be read then. Return: 0, or -errno (printed).
 */
static int start_command(struct record_args *a, const struct sigaction *sa,
			 struct spawned *cmd)
{
	int r;

	sigaction(SIGCHLD, sa, NULL);
	r = spawn_held(a->command, &a->user, cmd);
	if (r < 0) {
		print_error("record", "cannot start '%s': %s", a->command[0], strerror(-r));
		return r;
	}
	if (a->proc_map && a->only_command) {
		r = spawn_hold_at_exit(cmd);
		if (r < 0)
			fprintf(stderr, "ftracectl record: --proc-map: cannot hold '%s' at its exit "
				"(ptrace: %s): its maps are read when the record stops, if it "
				"still runs\n", a->command[0], strerror(-r));
		child_traced = r >= 0;
	}
	if (a->only_command)
		ctl_put_u32(a->req, FTRACED_ATTR_PID, (uint32_t)cmd->pid);
	return 0;
}

int cmd_record(const struct client_options *global, int argc, char *argv[])
{
	_cleanup_(ctl_builder_freep) struct ctl_builder *req = calloc(1, sizeof(*req));
	struct record_args a = { .req = req, .json = global->json };
	struct sigaction sa = { .sa_handler = on_stop_signal };
	_cleanup_close_ int sock = -EBADF, out = -EBADF;
	char partial[PATH_MAX];
	struct spawned cmd = { .go_fd = -EBADF, .exec_fd = -EBADF };
	struct client_options o = *global;
	struct reply rep = {};
	int r, exec_error = 0, exit_code;
	FILE *text;
	bool progress;

	if (!req)
		return EXIT_FAILED;
	ctl_builder_init(req, FTRACED_MSG_RECORD);
	r = parse_args(argc, argv, &a);
	if (r <= 0)
		return r < 0 ? EXIT_USAGE : EXIT_OK;
	o.json = a.json;
	json_want(a.json);
	progress = progress_wanted(a.quiet, o.json);
	/* With the trace on stdout, what is said to a person goes to stderr. */
	text = a.to_stdout ? stderr : stdout;
	if (a.command) {
		r = spawn_find(a.command[0]);
		if (r < 0) {
			print_error("record", "cannot run '%s': %s", a.command[0], strerror(-r));
			return SPAWN_CANNOT_RUN;
		}
	}

	out = a.to_stdout ? output_open_stdout("record") :
		output_open("record", a.output, a.force, partial, sizeof(partial));
	if (a.to_stdout)
		partial[0] = '\0';
	if (out < 0)
		return EXIT_FAILED;
	r = ctl_connect(&o, &sock);
	if (r < 0) {
		output_discard(partial);
		return r == -EACCES || r == -EPERM ? EXIT_DENIED : EXIT_NO_DAEMON;
	}
	/* From here on, a signal asks the daemon to stop instead of killing us. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (a.command) {
		r = start_command(&a, &sa, &cmd);
		if (r < 0) {
			output_discard(partial);
			return EXIT_FAILED;
		}
	}
	r = ctl_send_and_receive(sock, req, out, CTL_LONG_TIMEOUT_MS, &rep);
	out = safe_close(out);
	if (r < 0 || rep.type == FTRACED_MSG_ERROR) {
		if (a.command)
			spawn_abort(&cmd);
		if (r == -EINTR && stop_requested)
			print_error("record", "stopped before recording began (a signal came while "
				    "the daemon was setting the session up, e.g. allocating its ring "
				    "buffer): nothing was recorded");
		else if (r < 0)
			print_error("record", "talking to the daemon failed: %s", strerror(-r));
		else
			print_error_reply("record", &rep);
		output_discard(partial);
		return r < 0 ? EXIT_FAILED : exit_code_for_reply(&rep);
	}
	if (rep.type != FTRACED_MSG_STARTED || rep.sessions.n != 1) {
		print_error("record", "unexpected reply from the daemon");
		ctl_reply_done(&rep);
		output_discard(partial);
		return EXIT_FAILED;
	}
	announce(&rep.sessions.items[0], &a, o.json, progress);
	if (a.command) {
		/* A command that cannot run after all ends the record; its file is still made. */
		r = spawn_release(&cmd);
		exec_error = r < 0 ? r : spawn_exec_result(&cmd);
		if (exec_error < 0)
			print_error("record", "cannot run '%s': %s; stopping", a.command[0],
				    strerror(-exec_error));
	}

	{
		char session[FTRACED_NAME_MAX + 1];

		snprintf(session, sizeof(session), "%s", rep.sessions.items[0].name);
		ctl_reply_done(&rep);
		r = wait_finished(sock, session, progress, &a, &cmd, &rep);
	}
	if (r < 0) {
		print_error("record", "%s; the partial output is left at '%s'",
			    r == -ECONNRESET ? "the daemon went away before the file was complete" :
			    strerror(-r), partial[0] ? partial : a.output);
		return EXIT_FAILED;
	}
	if (rep.type == FTRACED_MSG_ERROR) {
		report_failed(&rep, &a, partial);
		ctl_reply_done(&rep);
		return EXIT_FAILED;
	}
	exit_code = a.command && exec_error == 0 ? command_status(&a, &cmd) : EXIT_OK;
	if (exec_error < 0) {
		spawn_reap(&cmd, true, &r);
		exit_code = SPAWN_CANNOT_RUN;
	}
	r = report_finished(&rep.sessions.items[0], &a, partial, o.json, text, exit_code);
	ctl_reply_done(&rep);
	return r;
}
