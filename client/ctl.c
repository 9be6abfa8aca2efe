// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ftracectl's side of the control protocol: connecting (with errors that
 * say what to do), sending requests with an optional fd, receiving and
 * decoding replies with the same codec the daemon uses, and the output
 * helpers every subcommand shares.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "client/ctl.h"
#include "ftraced/macro.h"
#include "lib/io-util.h"

#define REPLY_TIMEOUT_MS 30000

/* A problem, on stderr; with --json the first also goes out as JSON at the end (main()). */
void print_error(const char *command, const char *fmt, ...)
{
	char text[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	json_note_error(text, 0);
	fprintf(stderr, "ftracectl%s%s: %s\n", command ? " " : "", command ?: "", text);
}

/**
 * print_error_reply() - the daemon's ERROR reply, for a person (and, with --json, a script).
 * @command: the command, for the prefix
 * @rep: an ERROR reply
 */
void print_error_reply(const char *command, const struct reply *rep)
{
	const char *text = rep->message[0] ? rep->message : strerror(-rep->error);

	json_note_error(text, rep->error); /* first, with its errno */
	print_error(command, "%s", text);
}

/*
 * For an ERROR reply: the kernel's refusal (KERNEL_REFUSED) has its own
 * status, whatever its errno; an EPERM of ftraced's own rules is EXIT_DENIED.
 */
int exit_code_for_reply(const struct reply *rep)
{
	return rep->kernel_refused ? EXIT_KERNEL : exit_code_for_error(rep->error);
}

/* For a failed ctl_call(): the cause was already printed. */
int exit_code_for_call(int error)
{
	switch (error) {
	case -ENOENT:
	case -ECONNREFUSED:
		return EXIT_NO_DAEMON;
	case -EACCES:
	case -EPERM:
		return EXIT_DENIED;
	default:
		return EXIT_FAILED;
	}
}

/**
 * parse_session_arg() - the optional or required SESSION argument of a verb.
 * @command: for messages
 * @argc: arguments, the verb first
 * @argv: arguments
 * @required: whether it must be there
 * @ret: the name, or NULL
 *
 * Return: 0, or -EINVAL after printing why.
 */
int parse_session_arg(const char *command, int argc, char *argv[], bool required,
		      const char **ret)
{
	*ret = NULL;
	if (argc > 2) {
		print_error(command, "unexpected argument '%s'", argv[2]);
		return -EINVAL;
	}
	if (argc == 2 && strcmp(argv[1], "--help") != 0 && strcmp(argv[1], "-h") != 0) {
		if (!ctl_name_valid(argv[1])) {
			print_error(command, "invalid session name '%s'", argv[1]);
			return -EINVAL;
		}
		*ret = argv[1];
	} else if (required || argc == 2) {
		print_error(command, "usage: ftracectl %s%s", command,
			    required ? " SESSION" : " [SESSION]");
		return -EINVAL;
	}
	return 0;
}

int exit_code_for_error(int error)
{
	switch (error) {
	case -EACCES:
	case -EPERM:
		return EXIT_DENIED;
	default:
		return EXIT_FAILED;
	}
}

/**
 * ctl_connect_quiet() - connect to the daemon's control socket, printing nothing.
 * @o: options (socket path)
 * @ret_fd: the connected socket
 *
 * For a command that works without a daemon too (extract).
 *
 * Return: 0, or -errno (-ENOENT, -ECONNREFUSED: no daemon listens there).
 */
int ctl_connect_quiet(const struct client_options *o, int *ret_fd)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = -EBADF;

	if (strlen(o->socket_path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, o->socket_path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return negative_errno();
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return negative_errno();
	*ret_fd = TAKE_FD(fd);
	return 0;
}

/**
 * ctl_connect() - connect to the daemon's control socket.
 * @o: options (socket path)
 * @ret_fd: the connected socket
 *
 * Return: 0, or -errno after printing what went wrong and what to do.
 */
int ctl_connect(const struct client_options *o, int *ret_fd)
{
	int r;

	if (strlen(o->socket_path) >= sizeof(((struct sockaddr_un *)NULL)->sun_path)) {
		print_error(NULL, "socket path '%s' is too long", o->socket_path);
		return -ENAMETOOLONG;
	}
	r = ctl_connect_quiet(o, ret_fd);
	if (r < 0) {
		if (r == -ENOENT || r == -ECONNREFUSED)
			print_error(NULL, "ftraced is not running (nothing listens on '%s'); start it "
				    "with 'systemctl start ftraced' or run 'ftraced' as root",
				    o->socket_path);
		else if (r == -EACCES || r == -EPERM)
			print_error(NULL, "permission denied on '%s': you must be root or a member "
				    "of the tracing group", o->socket_path);
		else
			print_error(NULL, "cannot connect to '%s': %s", o->socket_path,
				    strerror(-r));
		return r;
	}
	return 0;
}

static int send_request(int fd, struct ctl_builder *b, int pass_fd);

/**
 * ctl_send() - send one request, optionally passing a file descriptor.
 * @fd: connected socket
 * @b: request; the events it gathered are freed (ctl_builder_done()) either way
 * @pass_fd: fd to pass with SCM_RIGHTS, or -1
 *
 * Return: 0 or -errno.
 */
int ctl_send(int fd, struct ctl_builder *b, int pass_fd)
{
	int r = send_request(fd, b, pass_fd);

	ctl_builder_done(b);
	return r;
}

static int send_request(int fd, struct ctl_builder *b, int pass_fd)
{
	union {
		struct cmsghdr align;
		uint8_t buf[CMSG_SPACE(sizeof(int) * 2)];
	} control = {};
	struct iovec iov;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	_cleanup_close_ int list_fd = -EBADF;
	int fds[2], n_fds = 0;
	size_t n;
	int r;

	r = ctl_builder_finish(b, &n);
	if (r < 0)
		return r;
	iov = (struct iovec){ .iov_base = b->buf, .iov_len = n };
	if (pass_fd >= 0)
		fds[n_fds++] = pass_fd;
	/* Events too many for the packet: in a sealed memfd, passed last (ATTR_EVENT_LIST). */
	if (b->n_list > 0) {
		r = memfd_sealed("ftracectl-events", b->list, b->n_list, &list_fd);
		if (r < 0)
			return r;
		fds[n_fds++] = list_fd;
	}
	if (n_fds > 0) {
		struct cmsghdr *cm;

		mh.msg_control = &control;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n_fds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n_fds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)n_fds);
	}
	if (sendmsg(fd, &mh, MSG_NOSIGNAL) < 0)
		return negative_errno();
	return 0;
}

/**
 * ctl_receive_sigmask() - wait for one message and decode it, signals unblocked.
 * @fd: connected socket
 * @timeout_ms: how long to wait, -1 for ever
 * @wait_mask: the signal mask while waiting (ppoll), or NULL to keep the current one
 * @ret: the decoded reply (free with ctl_reply_done())
 *
 * A caller that blocks its signals and passes the mask without them here
 * sees each signal as -EINTR, even one that arrived just before the wait.
 *
 * Return: 0, -ETIMEDOUT, -EINTR, -ECONNRESET when the daemon closed the
 * connection, -EBADMSG for a malformed reply, or -errno.
 */
int ctl_receive_sigmask(int fd, int timeout_ms, const sigset_t *wait_mask, struct reply *ret)
{
	static uint8_t buf[FTRACED_MSG_SIZE_MAX];
	union {
		struct cmsghdr align;
		uint8_t buf[CMSG_SPACE(sizeof(int))];
	} control;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct timespec timeout = { .tv_sec = timeout_ms / 1000,
				    .tv_nsec = (long)(timeout_ms % 1000) * 1000000 };
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = &control,
		.msg_controllen = sizeof(control),
	};
	_cleanup_close_ int passed = -EBADF;
	struct cmsghdr *cm;
	ssize_t n;
	int r;

	*ret = (struct reply){};
	r = ppoll(&p, 1, timeout_ms < 0 ? NULL : &timeout, wait_mask);
	if (r < 0)
		return negative_errno();
	if (r == 0)
		return -ETIMEDOUT;
	n = recvmsg(fd, &mh, MSG_TRUNC | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return negative_errno();
	/* A descriptor comes with the OK to SAVE and OFFER; one at most. */
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
		    cm->cmsg_len == CMSG_LEN(sizeof(int)) && passed < 0)
			memcpy(&passed, CMSG_DATA(cm), sizeof(int));
	if (n == 0)
		return -ECONNRESET;
	if ((size_t)n > sizeof(buf) || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
		return -EBADMSG;
	r = ctl_reply_decode(buf, (size_t)n, ret);
	/* Session records whose events did not fit: they are in the memfd that came along. */
	if (r >= 0 && ctl_reply_has_event_lists(ret)) {
		void *list = NULL;
		size_t n_list = 0;

		r = passed < 0 ? -EBADMSG :
		    memfd_map_sealed(passed, FTRACED_EVENT_LIST_SIZE_MAX, &list, &n_list);
		if (r >= 0)
			r = ctl_reply_decode_event_lists(ret, list, n_list);
		if (list)
			munmap(list, n_list);
		passed = safe_close(passed);
		if (r < 0) {
			ctl_reply_done(ret);
			return r == -ENOMEM ? r : -EBADMSG;
		}
	}
	if (r >= 0 && passed >= 0) {
		ret->fd = TAKE_FD(passed);
		ret->has_fd = true;
	}
	return r;
}

/* ctl_receive_sigmask() with the current signal mask. */
int ctl_receive(int fd, int timeout_ms, struct reply *ret)
{
	return ctl_receive_sigmask(fd, timeout_ms, NULL, ret);
}

/**
 * ctl_send_and_receive() - send a request and receive the reply.
 * @fd: connected socket
 * @b: request
 * @pass_fd: fd to pass, or -1
 * @timeout_ms: how long to wait for the reply
 * @ret: the reply
 *
 * A refused peer is sent the reason before the daemon hangs up, so even
 * when the send fails, a reply already queued is read and returned.
 *
 * Return: 0 with a reply, or the -errno of the send or, if it worked, of
 * the receive.
 */
int ctl_send_and_receive(int fd, struct ctl_builder *b, int pass_fd, int timeout_ms,
			 struct reply *ret)
{
	int r_send, r;

	r_send = ctl_send(fd, b, pass_fd);
	r = ctl_receive(fd, r_send >= 0 ? timeout_ms : 0, ret);
	if (r < 0 && r_send < 0)
		return r_send;
	return r;
}

/**
 * ctl_call() - connect, send one request, wait for its reply.
 * @o: options
 * @b: request
 * @ret: the reply
 *
 * Return: 0 (the reply may still be an ERROR), or -errno after printing why.
 */
int ctl_call(const struct client_options *o, struct ctl_builder *b, struct reply *ret)
{
	return ctl_call_timeout(o, b, REPLY_TIMEOUT_MS, ret);
}

/**
 * ctl_call_timeout() - ctl_call() with a given time to wait for the reply.
 * @o: options
 * @b: request
 * @timeout_ms: how long to wait
 * @ret: the reply
 *
 * Return: as ctl_call().
 */
int ctl_call_timeout(const struct client_options *o, struct ctl_builder *b, int timeout_ms,
		     struct reply *ret)
{
	_cleanup_close_ int fd = -EBADF;
	int r;

	r = ctl_connect(o, &fd);
	if (r < 0)
		return r;
	r = ctl_send_and_receive(fd, b, -1, timeout_ms, ret);
	if (r == -ECONNRESET)
		print_error(NULL, "the daemon closed the connection");
	else if (r < 0)
		print_error(NULL, "talking to the daemon failed: %s", strerror(-r));
	return r;
}

/* Events lost: overwritten or dropped by the kernel, or never stored by the daemon. */
uint64_t session_lost(const struct session_info *s)
{
	uint64_t n = s->discarded;

	for (unsigned i = 0; i < s->n_cpus; i++)
		n += s->cpus[i].overrun + s->cpus[i].dropped;
	return n;
}

uint64_t session_lost_segment(const struct session_info *s)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < s->n_cpus_segment; i++)
		n += s->cpus_segment[i].overrun + s->cpus_segment[i].dropped;
	return n;
}

uint64_t session_bytes_raw(const struct session_info *s)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < s->n_cpus; i++)
		n += s->cpus[i].bytes_raw;
	return n;
}

uint64_t session_bytes_stored(const struct session_info *s)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < s->n_cpus; i++)
		n += s->cpus[i].bytes_stored;
	return n;
}

void print_size(char *buf, size_t n, uint64_t bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	size_t u = 0;

	while (v >= 1024 && u + 1 < ELEMENTSOF(units)) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, n, "%llu B", (unsigned long long)bytes);
	else
		snprintf(buf, n, "%.1f %s", v, units[u]);
}

/**
 * utc_seconds() - a wall-clock time as people read it: "2026-11-25T13:02:00Z".
 * @buf: receives it
 * @n: its size
 * @us: µs since the epoch
 *
 * Return: @buf.
 */
const char *utc_seconds(char *buf, size_t n, uint64_t us)
{
	time_t t = (time_t)(us / 1000000);
	struct tm tm;

	if (!gmtime_r(&t, &tm) || strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, n, "?");
	return buf;
}

/**
 * session_recovered_path() - where a flight session's newest recovered file is.
 * @s: session, with recovered[] set
 * @buf: receives DIRECTORY/RECOVERED
 * @n: its size
 *
 * Return: @buf.
 */
const char *session_recovered_path(const struct session_info *s, char *buf, size_t n)
{
	size_t len = strlen(s->directory);

	snprintf(buf, n, "%s%s%s", s->directory, len && s->directory[len - 1] != '/' ? "/" : "",
		 s->recovered);
	return buf;
}

static void flight_json(json_t *o, const struct session_info *s)
{
	json_t *triggers = json_array();

	json_put_text(o, "flight_backend", ctl_flight_backend_name(s->flight_backend));
	json_put_u64(o, "snapshots", s->snapshots);
	json_put_u64(o, "snapshots_kept", s->segments_kept);
	json_put_u64(o, "snapshots_disk_bytes", s->disk_bytes);
	if (s->flight_backend == FTRACED_FLIGHT_MEMORY) {
		json_put_u64(o, "flight_size", s->flight_size);
		json_put_u64(o, "history_bytes", s->history_bytes);
		json_put_u64(o, "history_raw_bytes", s->history_raw_bytes);
		json_put_u64(o, "evicted_raw_bytes", s->evicted_raw_bytes);
	}
	if (s->has_history_ms)
		json_put_u64(o, "history_ms", s->history_ms);
	if (s->history_from[0])
		json_put_text(o, "history_from", s->history_from);
	if (s->directory[0])
		json_put_text(o, "directory", s->directory);
	if (s->recovered[0]) {
		char path[2 * sizeof(s->directory)];

		json_put_text(o, "recovered", session_recovered_path(s, path, sizeof(path)));
	}
	if (s->last_snapshot_us) {
		char when[32];

		json_put_text(o, "last_snapshot_at", utc_seconds(when, sizeof(when),
								 s->last_snapshot_us));
		if (s->last_snapshot[0])
			json_put_text(o, "last_snapshot", s->last_snapshot);
	}
	if (s->note[0])
		json_put_text(o, "note", s->note);
	for (unsigned i = 0; triggers && i < s->n_triggers; i++)
		json_array_append_new(triggers, json_text(s->triggers[i]));
	json_put(o, "triggers", triggers);
}

/**
 * print_skipped() - a warning line for each event the session skipped (-i).
 * @command: the command, for the prefix
 * @s: session
 */
void print_skipped(const char *command, const struct session_info *s)
{
	for (unsigned k = 0; k < s->n_events; k++)
		if (s->skipped[k])
			fprintf(stderr, "ftracectl %s: warning: this kernel has no event '%s'; "
				"skipped (-i)\n", command, s->events[k]);
}

/* The events of @s, all or only those skipped (-i). */
static json_t *events_json(const struct session_info *s, bool only_skipped)
{
	json_t *a = json_array();

	for (unsigned i = 0; a && i < s->n_events; i++)
		if (!only_skipped || s->skipped[i])
			json_array_append_new(a, json_text(s->events[i]));
	return a;
}

static json_t *cpu_json(const struct ftraced_cpu_stats *c)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	json_put_u64(o, "cpu", c->cpu);
	json_put_u64(o, "bytes_raw", c->bytes_raw);
	json_put_u64(o, "bytes_stored", c->bytes_stored);
	json_put_u64(o, "chunks", c->chunks);
	json_put_u64(o, "entries", c->entries);
	json_put_u64(o, "overrun", c->overrun);
	json_put_u64(o, "dropped", c->dropped);
	json_put_u64(o, "read", c->read);
	return o;
}

/**
 * session_json() - one session as a JSON object.
 * @s: session
 *
 * Return: a new object, or NULL if out of memory.
 */
json_t *session_json(const struct session_info *s)
{
	json_t *o = json_object(), *cpus = json_array();

	if (!o || !cpus) {
		json_decref(o);
		json_decref(cpus);
		return NULL;
	}
	json_put_text(o, "name", s->name);
	json_put_text(o, "state", s->state);
	json_put_text(o, "instance", s->instance);
	json_put_text(o, "mode", ctl_mode_name(s->mode));
	json_put_u64(o, "owner_uid", s->owner);
	json_put_text(o, "compression", s->compression == FTRACED_COMPRESSION_NONE ? "none" : "zstd");
	json_put_u64(o, "subbuf_size", s->subbuf_size);
	if (s->rt_priority)
		json_put_u64(o, "rt_priority", s->rt_priority);
	if (s->mode == FTRACED_MODE_CONTINUOUS) {
		if (s->has_segment_seq)
			json_put_u64(o, "segment", s->segment_seq);
		json_put_u64(o, "segments_kept", s->segments_kept);
		json_put_u64(o, "disk_bytes", s->disk_bytes);
		if (s->directory[0])
			json_put_text(o, "directory", s->directory);
		json_put_u64(o, "segment_size", s->segment_size);
		json_put_u64(o, "segment_time_ms", s->segment_time_ms);
		json_put_u64(o, "max_total", s->max_total);
		json_put_u64(o, "max_files", s->max_files);
		json_put_u64(o, "max_age_ms", s->max_age_ms);
		json_put_u64(o, "keep_free", s->keep_free);
		json_put_u64(o, "keep_free_percent", s->keep_free_percent);
		json_put_u64(o, "lost_events_segment", session_lost_segment(s));
	}
	if (s->mode == FTRACED_MODE_FLIGHT)
		flight_json(o, s);
	if (s->keep_kb) {
		json_put_u64(o, "keep_kb", s->keep_kb);
		json_put_u64(o, "kept_raw_bytes", s->history_raw_bytes);
		json_put_u64(o, "evicted_raw_bytes", s->evicted_raw_bytes);
	}
	json_put(o, "events", events_json(s, false));
	if (s->n_skipped)
		json_put(o, "skipped_events", events_json(s, true));
	json_put_u64(o, "elapsed_ms", s->elapsed_ms);
	if (s->started_us) {
		char when[32];

		json_put_text(o, "started", utc_seconds(when, sizeof(when), s->started_us));
	}
	if (s->has_file_bytes)
		json_put_u64(o, "file_bytes", s->file_bytes);
	json_put_u64(o, "bytes_raw", session_bytes_raw(s));
	json_put_u64(o, "bytes_stored", session_bytes_stored(s));
	json_put_u64(o, "lost_events", session_lost(s));
	json_put_u64(o, "discarded_events", s->discarded);
	if (s->mode != FTRACED_MODE_RECORD) {
		json_put_u64(o, "files_written", s->counters.files_written);
		json_put_u64(o, "files_deleted", s->counters.files_deleted);
		json_put_u64(o, "bytes_deleted", s->counters.bytes_deleted);
		json_put_u64(o, "files_failed", s->counters.files_failed);
		json_put_u64(o, "retention_failures", s->counters.retention_failures);
	}
	if (s->warning[0])
		json_put_text(o, "warning", s->warning);
	if (s->gap[0])
		json_put_text(o, "gap", s->gap);
	if (s->error < 0) {
		json_put_u64(o, "errno", (uint64_t)-s->error);
		json_put_text(o, "error", s->message);
	}
	for (unsigned i = 0; i < s->n_cpus; i++)
		json_array_append_new(cpus, cpu_json(&s->cpus[i]));
	json_put(o, "cpus", cpus);
	return o;
}
