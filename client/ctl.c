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
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "client/ctl.h"
#include "ftraced/macro.h"

#define REPLY_TIMEOUT_MS 30000

void print_error(const char *command, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ftracectl%s%s: ", command ? " " : "", command ?: "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/**
 * print_error_reply() - the daemon's ERROR reply, for a person or (--json) a script.
 * @command: the command, for the prefix
 * @o: options (--json)
 * @rep: an ERROR reply
 *
 * With --json the error is a JSON object on stdout, so a script reads one
 * format whatever happened; the text still goes to stderr.
 */
void print_error_reply(const char *command, const struct client_options *o,
		       const struct reply *rep)
{
	const char *text = rep->message[0] ? rep->message : strerror(-rep->error);

	print_error(command, "%s", text);
	if (o->json) {
		printf("{\"error\": ");
		print_json_string(text);
		printf(", \"errno\": %d}\n", -rep->error);
	}
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
 * ctl_connect() - connect to the daemon's control socket.
 * @o: options (socket path)
 * @ret_fd: the connected socket
 *
 * Return: 0, or -errno after printing what went wrong and what to do.
 */
int ctl_connect(const struct client_options *o, int *ret_fd)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = -EBADF;

	if (strlen(o->socket_path) >= sizeof(sa.sun_path)) {
		print_error(NULL, "socket path '%s' is too long", o->socket_path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, o->socket_path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return negative_errno();
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = negative_errno();

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
	*ret_fd = TAKE_FD(fd);
	return 0;
}

/**
 * ctl_send() - send one request, optionally passing a file descriptor.
 * @fd: connected socket
 * @b: request
 * @pass_fd: fd to pass with SCM_RIGHTS, or -1
 *
 * Return: 0 or -errno.
 */
int ctl_send(int fd, struct ctl_builder *b, int pass_fd)
{
	union {
		struct cmsghdr align;
		uint8_t buf[CMSG_SPACE(sizeof(int))];
	} control = {};
	struct iovec iov;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	size_t n;
	int r;

	r = ctl_builder_finish(b, &n);
	if (r < 0)
		return r;
	iov = (struct iovec){ .iov_base = b->buf, .iov_len = n };
	if (pass_fd >= 0) {
		struct cmsghdr *cm;

		mh.msg_control = &control;
		mh.msg_controllen = sizeof(control);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &pass_fd, sizeof(int));
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
 * @ret: the decoded reply (free with reply_done())
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
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct timespec timeout = { .tv_sec = timeout_ms / 1000,
				    .tv_nsec = (long)(timeout_ms % 1000) * 1000000 };
	ssize_t n;
	int r;

	*ret = (struct reply){};
	r = ppoll(&p, 1, timeout_ms < 0 ? NULL : &timeout, wait_mask);
	if (r < 0)
		return negative_errno();
	if (r == 0)
		return -ETIMEDOUT;
	n = recv(fd, buf, sizeof(buf), MSG_TRUNC);
	if (n < 0)
		return negative_errno();
	if (n == 0)
		return -ECONNRESET;
	if ((size_t)n > sizeof(buf))
		return -EBADMSG;
	return ctl_reply_decode(buf, (size_t)n, ret);
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

/* A JSON string literal on stdout; NULL prints as "". */
void print_json_string(const char *s)
{
	putchar('"');
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void print_flight_json(const struct session_info *s)
{
	printf(", \"flight_backend\": \"%s\", \"snapshots\": %u, \"snapshots_kept\": %u, "
	       "\"snapshots_disk_bytes\": %llu",
	       s->flight_backend == FTRACED_FLIGHT_KERNEL ? "kernel" : "memory", s->snapshots,
	       s->segments_kept, (unsigned long long)s->disk_bytes);
	if (s->flight_backend == FTRACED_FLIGHT_MEMORY)
		printf(", \"flight_size\": %llu, \"history_bytes\": %llu, "
		       "\"history_raw_bytes\": %llu, \"evicted_raw_bytes\": %llu",
		       (unsigned long long)s->flight_size, (unsigned long long)s->history_bytes,
		       (unsigned long long)s->history_raw_bytes,
		       (unsigned long long)s->evicted_raw_bytes);
	if (s->has_history_ms)
		printf(", \"history_ms\": %llu", (unsigned long long)s->history_ms);
	if (s->directory[0]) {
		printf(", \"directory\": ");
		print_json_string(s->directory);
	}
	if (s->note[0]) {
		printf(", \"note\": ");
		print_json_string(s->note);
	}
	printf(", \"triggers\": [");
	for (unsigned i = 0; i < s->n_triggers; i++) {
		printf(i ? ", " : "");
		print_json_string(s->triggers[i]);
	}
	printf("]");
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

/**
 * print_session_json() - one session as a JSON object (no trailing newline).
 * @s: session
 * @indent: prefix of each line
 */
void print_session_json(const struct session_info *s, const char *indent)
{
	printf("%s{\"name\": ", indent);
	print_json_string(s->name);
	printf(", \"state\": ");
	print_json_string(s->state);
	printf(", \"instance\": ");
	print_json_string(s->instance);
	printf(", \"mode\": \"%s\", \"owner_uid\": %u, \"compression\": \"%s\", "
	       "\"subbuf_size\": %u", mode_name(s->mode),
	       s->owner, s->compression == FTRACED_COMPRESSION_NONE ? "none" : "zstd",
	       s->subbuf_size);
	if (s->rt_priority)
		printf(", \"rt_priority\": %u", s->rt_priority);
	if (s->mode == FTRACED_MODE_CONTINUOUS) {
		if (s->has_segment_seq)
			printf(", \"segment\": %u", s->segment_seq);
		printf(", \"segments_kept\": %u, \"disk_bytes\": %llu, \"segment_size\": %llu, "
		       "\"segment_time_ms\": %llu, \"max_total\": %llu, \"max_files\": %u, "
		       "\"max_age_ms\": %llu, \"keep_free\": %llu, \"keep_free_percent\": %u, "
		       "\"lost_events_segment\": %llu",
		       s->segments_kept, (unsigned long long)s->disk_bytes,
		       (unsigned long long)s->segment_size, (unsigned long long)s->segment_time_ms,
		       (unsigned long long)s->max_total, s->max_files,
		       (unsigned long long)s->max_age_ms, (unsigned long long)s->keep_free,
		       s->keep_free_percent, (unsigned long long)session_lost_segment(s));
	}
	if (s->mode == FTRACED_MODE_FLIGHT)
		print_flight_json(s);
	printf(", \"events\": [");
	for (unsigned i = 0; i < s->n_events; i++) {
		printf(i ? ", " : "");
		print_json_string(s->events[i]);
	}
	printf("]");
	if (s->n_skipped) {
		printf(", \"skipped_events\": [");
		for (unsigned i = 0, n = 0; i < s->n_events; i++)
			if (s->skipped[i]) {
				printf(n++ ? ", " : "");
				print_json_string(s->events[i]);
			}
		printf("]");
	}
	printf(", \"elapsed_ms\": %llu", (unsigned long long)s->elapsed_ms);
	if (s->has_file_bytes)
		printf(", \"file_bytes\": %llu", (unsigned long long)s->file_bytes);
	printf(", \"bytes_raw\": %llu, \"bytes_stored\": %llu, \"lost_events\": %llu, "
	       "\"discarded_events\": %llu",
	       (unsigned long long)session_bytes_raw(s), (unsigned long long)session_bytes_stored(s),
	       (unsigned long long)session_lost(s), (unsigned long long)s->discarded);
	if (s->mode != FTRACED_MODE_RECORD)
		printf(", \"files_written\": %llu, \"files_deleted\": %llu, \"files_failed\": %llu",
		       (unsigned long long)s->counters.files_written,
		       (unsigned long long)s->counters.files_deleted,
		       (unsigned long long)s->counters.files_failed);
	if (s->warning[0]) {
		printf(", \"warning\": ");
		print_json_string(s->warning);
	}
	if (s->error < 0) {
		printf(", \"errno\": %d, \"error\": ", -s->error);
		print_json_string(s->message);
	}
	printf(", \"cpus\": [");
	for (unsigned i = 0; i < s->n_cpus; i++) {
		const struct ftraced_cpu_stats *c = &s->cpus[i];

		printf("%s\n%s  {\"cpu\": %u, \"bytes_raw\": %llu, \"bytes_stored\": %llu, "
		       "\"chunks\": %llu, \"entries\": %llu, \"overrun\": %llu, \"dropped\": %llu, "
		       "\"read\": %llu}", i ? "," : "", indent, c->cpu,
		       (unsigned long long)c->bytes_raw, (unsigned long long)c->bytes_stored,
		       (unsigned long long)c->chunks, (unsigned long long)c->entries,
		       (unsigned long long)c->overrun, (unsigned long long)c->dropped,
		       (unsigned long long)c->read);
	}
	printf("]}");
}
