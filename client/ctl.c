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

static int add_cpu(struct ftraced_cpu_stats **cpus, unsigned *n, const struct ctl_attr *a)
{
	struct ftraced_cpu_stats *c;

	if (*n >= 65536)
		return -EBADMSG;
	c = realloc(*cpus, (*n + 1) * sizeof(*c));
	if (!c)
		return -ENOMEM;
	*cpus = c;
	if (ctl_attr_cpu_stats(a, &c[*n]) < 0)
		return -EBADMSG;
	(*n)++;
	return 0;
}

/* A SKIPPED_EVENT names one of the session's EVENTs (sent before it). */
static int mark_skipped(struct session_info *s, const struct ctl_attr *a)
{
	char spec[FTRACED_EVENT_SPEC_MAX + 1];
	int r = ctl_attr_string(a, FTRACED_EVENT_SPEC_MAX, spec);

	if (r < 0)
		return r;
	for (unsigned k = 0; k < s->n_events; k++)
		if (!s->skipped[k] && strcmp(s->events[k], spec) == 0) {
			s->skipped[k] = true;
			s->n_skipped++;
			return 0;
		}
	return -EBADMSG;
}

static int decode_session(struct ctl_attr_iter *it, struct session_info *s, struct ctl_attr *next,
			  bool *has_next)
{
	struct ctl_attr a;
	int r;

	*has_next = false;
	while ((r = ctl_attr_next(it, &a)) > 0) {
		switch (a.type) {
		case FTRACED_ATTR_SESSION_BEGIN:
			*next = a;
			*has_next = true;
			return 0;
		case FTRACED_ATTR_SESSION:
			r = ctl_attr_string(&a, FTRACED_NAME_MAX, s->name);
			break;
		case FTRACED_ATTR_STATE:
			r = ctl_attr_string(&a, FTRACED_NAME_MAX, s->state);
			break;
		case FTRACED_ATTR_INSTANCE:
			r = ctl_attr_string(&a, FTRACED_NAME_MAX, s->instance);
			break;
		case FTRACED_ATTR_OWNER_UID:
			r = ctl_attr_u32(&a, &s->owner);
			break;
		case FTRACED_ATTR_COMPRESSION:
			r = ctl_attr_u32(&a, &s->compression);
			break;
		case FTRACED_ATTR_MODE:
			r = ctl_attr_u32(&a, &s->mode);
			break;
		case FTRACED_ATTR_SEGMENT_SEQ:
			r = ctl_attr_u32(&a, &s->segment_seq);
			s->has_segment_seq = true;
			break;
		case FTRACED_ATTR_SEGMENTS_KEPT:
			r = ctl_attr_u32(&a, &s->segments_kept);
			break;
		case FTRACED_ATTR_DISK_BYTES:
			r = ctl_attr_u64(&a, &s->disk_bytes);
			break;
		case FTRACED_ATTR_SEGMENT_SIZE:
			r = ctl_attr_u64(&a, &s->segment_size);
			break;
		case FTRACED_ATTR_SEGMENT_TIME_MS:
			r = ctl_attr_u64(&a, &s->segment_time_ms);
			break;
		case FTRACED_ATTR_MAX_TOTAL:
			r = ctl_attr_u64(&a, &s->max_total);
			break;
		case FTRACED_ATTR_MAX_FILES:
			r = ctl_attr_u32(&a, &s->max_files);
			break;
		case FTRACED_ATTR_MAX_AGE_MS:
			r = ctl_attr_u64(&a, &s->max_age_ms);
			break;
		case FTRACED_ATTR_KEEP_FREE:
			r = ctl_attr_u64(&a, &s->keep_free);
			break;
		case FTRACED_ATTR_KEEP_FREE_PERCENT:
			r = ctl_attr_u32(&a, &s->keep_free_percent);
			break;
		case FTRACED_ATTR_SUBBUF_SIZE:
			r = ctl_attr_u32(&a, &s->subbuf_size);
			break;
		case FTRACED_ATTR_BUFFER_KB:
			r = ctl_attr_u32(&a, &s->buffer_kb);
			break;
		case FTRACED_ATTR_EVENT:
			if (s->n_events >= FTRACED_EVENTS_PER_REQUEST_MAX)
				return -EBADMSG;
			r = ctl_attr_string(&a, FTRACED_EVENT_SPEC_MAX, s->events[s->n_events]);
			if (r >= 0)
				s->n_events++;
			break;
		case FTRACED_ATTR_SKIPPED_EVENT:
			r = mark_skipped(s, &a);
			break;
		case FTRACED_ATTR_ELAPSED_MS:
			r = ctl_attr_u64(&a, &s->elapsed_ms);
			break;
		case FTRACED_ATTR_FILE_BYTES:
			r = ctl_attr_u64(&a, &s->file_bytes);
			s->has_file_bytes = true;
			break;
		case FTRACED_ATTR_ERRNO: {
			uint32_t e;

			r = ctl_attr_u32(&a, &e);
			s->error = -(int)e;
			break;
		}
		case FTRACED_ATTR_MESSAGE:
			r = ctl_attr_string(&a, FTRACED_MESSAGE_MAX, s->message);
			break;
		case FTRACED_ATTR_WARNING:
			r = ctl_attr_string(&a, FTRACED_MESSAGE_MAX, s->warning);
			break;
		case FTRACED_ATTR_EVENTS_DISCARDED:
			r = ctl_attr_u64(&a, &s->discarded);
			break;
		case FTRACED_ATTR_CPU:
			r = add_cpu(&s->cpus, &s->n_cpus, &a);
			break;
		case FTRACED_ATTR_CPU_SEGMENT:
			r = add_cpu(&s->cpus_segment, &s->n_cpus_segment, &a);
			break;
		case FTRACED_ATTR_FLIGHT_BACKEND:
			r = ctl_attr_u32(&a, &s->flight_backend);
			break;
		case FTRACED_ATTR_FLIGHT_SIZE:
			r = ctl_attr_u64(&a, &s->flight_size);
			break;
		case FTRACED_ATTR_HISTORY_MS:
			r = ctl_attr_u64(&a, &s->history_ms);
			s->has_history_ms = true;
			break;
		case FTRACED_ATTR_HISTORY_RAW_BYTES:
			r = ctl_attr_u64(&a, &s->history_raw_bytes);
			break;
		case FTRACED_ATTR_HISTORY_BYTES:
			r = ctl_attr_u64(&a, &s->history_bytes);
			break;
		case FTRACED_ATTR_EVICTED_RAW_BYTES:
			r = ctl_attr_u64(&a, &s->evicted_raw_bytes);
			break;
		case FTRACED_ATTR_SNAPSHOTS:
			r = ctl_attr_u32(&a, &s->snapshots);
			break;
		case FTRACED_ATTR_DIRECTORY:
			r = ctl_attr_string(&a, FTRACED_PATH_MAX, s->directory);
			break;
		case FTRACED_ATTR_TRIGGER_STATUS:
			if (s->n_triggers >= FTRACED_TRIGGERS_PER_REQUEST_MAX)
				return -EBADMSG;
			r = ctl_attr_string(&a, FTRACED_MESSAGE_MAX, s->triggers[s->n_triggers]);
			if (r >= 0)
				s->n_triggers++;
			break;
		case FTRACED_ATTR_NOTE:
			r = ctl_attr_string(&a, FTRACED_MESSAGE_MAX, s->note);
			break;
		default:
			break; /* newer daemons may add attributes */
		}
		if (r < 0)
			return r;
	}
	return r;
}

/**
 * ctl_receive() - wait for one message and decode it.
 * @fd: connected socket
 * @timeout_ms: how long to wait, -1 for ever
 * @ret: the decoded reply (free with reply_done())
 *
 * Return: 0, -ETIMEDOUT, -ECONNRESET when the daemon closed the
 * connection, -EBADMSG for a malformed reply, or -errno.
 */
int ctl_receive(int fd, int timeout_ms, struct reply *ret)
{
	static uint8_t buf[FTRACED_MSG_SIZE_MAX];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct ctl_attr_iter it;
	struct ctl_attr a;
	struct ctl_msg m;
	bool has_next;
	ssize_t n;
	int r;

	*ret = (struct reply){};
	r = poll(&p, 1, timeout_ms);
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
	r = ctl_msg_parse(buf, (size_t)n, &m);
	if (r < 0)
		return -EBADMSG;
	ret->type = m.type;
	ctl_attr_iter_init(&it, &m);
	if (m.type == FTRACED_MSG_ERROR) {
		while ((r = ctl_attr_next(&it, &a)) > 0) {
			uint32_t e;

			if (a.type == FTRACED_ATTR_ERRNO && ctl_attr_u32(&a, &e) >= 0)
				ret->error = -(int)e;
			else if (a.type == FTRACED_ATTR_MESSAGE)
				ctl_attr_string(&a, FTRACED_MESSAGE_MAX, ret->message);
		}
		if (ret->error >= 0)
			ret->error = -EIO;
		return 0;
	}
	if (m.type == FTRACED_MSG_OK) {
		while ((r = ctl_attr_next(&it, &a)) > 0) {
			if (a.type == FTRACED_ATTR_PATH)
				r = ctl_attr_string(&a, FTRACED_PATH_MAX, ret->path);
			else if (a.type == FTRACED_ATTR_NOTE)
				r = ctl_attr_string(&a, FTRACED_MESSAGE_MAX, ret->note);
			else if (a.type == FTRACED_ATTR_FILE_BYTES &&
				 (r = ctl_attr_u64(&a, &ret->file_bytes)) >= 0)
				ret->has_file_bytes = true;
			if (r < 0)
				return -EBADMSG;
		}
		return r < 0 ? -EBADMSG : 0;
	}
	has_next = false;
	while ((r = ctl_attr_next(&it, &a)) > 0 && a.type == FTRACED_ATTR_PENDING_INSTANCE) {
		char line[FTRACED_MESSAGE_MAX + 1], **grown;

		if (ctl_attr_string(&a, FTRACED_MESSAGE_MAX, line) < 0)
			continue;
		grown = realloc(ret->pending, (ret->n_pending + 1) * sizeof(*grown));
		if (!grown)
			continue;
		ret->pending = grown;
		ret->pending[ret->n_pending] = strdup(line);
		if (ret->pending[ret->n_pending])
			ret->n_pending++;
	}
	if (r > 0 && a.type == FTRACED_ATTR_SESSION_BEGIN)
		has_next = true;
	while (has_next) {
		struct session_info *items;

		items = realloc(ret->sessions.items, (ret->sessions.n + 1) * sizeof(*items));
		if (!items) {
			reply_done(ret);
			return -ENOMEM;
		}
		ret->sessions.items = items;
		items[ret->sessions.n] = (struct session_info){};
		r = decode_session(&it, &items[ret->sessions.n++], &a, &has_next);
		if (r < 0) {
			reply_done(ret);
			return -EBADMSG;
		}
	}
	return 0;
}

void reply_done(struct reply *r)
{
	for (size_t i = 0; i < r->sessions.n; i++) {
		free(r->sessions.items[i].cpus);
		free(r->sessions.items[i].cpus_segment);
	}
	free(r->sessions.items);
	r->sessions = (struct sessions){};
	for (size_t i = 0; i < r->n_pending; i++)
		free(r->pending[i]);
	free(r->pending);
	r->pending = NULL;
	r->n_pending = 0;
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

const char *mode_name(uint32_t mode)
{
	switch (mode) {
	case FTRACED_MODE_RECORD:
		return "record";
	case FTRACED_MODE_CONTINUOUS:
		return "continuous";
	case FTRACED_MODE_FLIGHT:
		return "flight";
	default:
		return "unknown";
	}
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
