// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The control socket: a pathname AF_UNIX SOCK_SEQPACKET listener, taken
 * from systemd (sd_listen_fds) or bound by us, and one struct ctl_conn per
 * accepted client.
 *
 * Every connection is authorised on accept from SO_PEERCRED and
 * SO_PEERGROUPS (root, or a member of the configured group), whatever the
 * socket file's permissions say. Each packet is received whole into a
 * CTL_MSG_SIZE_MAX buffer; truncated packets, unexpected or surplus file
 * descriptors and malformed requests get an error reply and every fd that
 * arrived is closed. Replies are sent without blocking: a client that does
 * not read its replies is dropped, never waited for.
 *
 * Deadlines: a connection must send its first request within
 * CTL_REQUEST_TIMEOUT_USEC and is closed after CTL_IDLE_TIMEOUT_USEC without
 * one, unless an operation of it is in progress (the manager says so through
 * the busy handler). When the connection limits are reached, a new client
 * takes the place of the longest-idle connection of the user holding the
 * most, so idle connections can never lock out a `status`.
 *
 * Main thread only.
 */
#include <errno.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "daemon/base/bounds.h"
#include "daemon/control/ctl-server.h"
#include "daemon/control/ctl-socket.h"
#include "daemon/base/event-timer.h"
#include "daemon/base/log.h"
#include "lib/ctl/ctl-proto.h"
#include "lib/io-util.h"

#define PEER_GROUPS_MAX 256

struct ctl_conn {
	struct ctl_server *server;
	struct ctl_conn *next;
	int fd;
	sd_event_source *source;
	uid_t uid;
	pid_t pid;
	uint64_t last_request; /* CLOCK_MONOTONIC usec of the last request, or of accept */
	bool requested;        /* at least one request arrived */
};

struct ctl_server {
	sd_event *event;
	struct ctl_server_handlers handlers;
	gid_t group;
	int listen_fd;
	sd_event_source *listen_source;
	sd_event_source *sweep_source; /* set for the connections' earliest deadline */
	struct ctl_conn *conns;
	unsigned n_conns;
	uint8_t buf[CTL_MSG_SIZE_MAX];
	struct ctl_request *req;
	char *bound_path; /* set when we bound the socket ourselves: unlinked at exit */
	struct ctl_server_counters counters;
};

const struct ctl_server_counters *ctl_server_counters(const struct ctl_server *s)
{
	return &s->counters;
}

uid_t ctl_conn_uid(const struct ctl_conn *c)
{
	return c->uid;
}

/* The client's pid when it connected (SO_PEERCRED). */
pid_t ctl_conn_pid(const struct ctl_conn *c)
{
	return c->pid;
}

static void close_fds(struct msghdr *mh);
static void arm_sweep(struct ctl_server *s);

/*
 * Closing a unix socket with unread packets makes the peer's next read fail
 * with ECONNRESET before it sees our last reply (the reason it was refused).
 * So discard what is queued, closing any descriptors in it, first.
 */
static void drain(int fd)
{
	for (int k = 0; k < 16; k++) {
		union {
			struct cmsghdr align;
			uint8_t buf[CMSG_SPACE(sizeof(int) * 8)];
		} control;
		uint8_t byte;
		struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
		struct msghdr mh = {
			.msg_iov = &iov,
			.msg_iovlen = 1,
			.msg_control = &control,
			.msg_controllen = sizeof(control),
		};

		if (recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) <= 0)
			return;
		close_fds(&mh);
	}
}

static void conn_free(struct ctl_conn *c)
{
	struct ctl_server *s = c->server;

	if (s->handlers.closed)
		s->handlers.closed(s->handlers.userdata, c);
	for (struct ctl_conn **p = &s->conns; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	s->n_conns--;
	if (!s->conns)
		sd_event_source_set_enabled(s->sweep_source, SD_EVENT_OFF);
	sd_event_source_disable_unref(c->source);
	drain(c->fd);
	safe_close(c->fd);
	free(c);
}

/**
 * ctl_conn_send() - send a built message without blocking.
 * @c: connection
 * @b: message
 *
 * Return: 0 or -errno; on failure the connection is not usable any more
 * (the caller may keep going, the next poll closes it).
 */
int ctl_conn_send(struct ctl_conn *c, struct ctl_builder *b)
{
	return ctl_conn_send_fd(c, b, -EBADF);
}

/**
 * ctl_conn_send_fd() - send a built message with a descriptor, without blocking.
 * @c: connection
 * @b: message
 * @fd: passed with SCM_RIGHTS (the caller keeps and closes its own), or -EBADF for none
 *
 * Events the builder keeps for a memfd go in one, passed instead of @fd
 * (a reply with session records carries no other); the list is freed.
 *
 * Return: as ctl_conn_send().
 */
int ctl_conn_send_fd(struct ctl_conn *c, struct ctl_builder *b, int fd)
{
	union {
		struct cmsghdr align;
		uint8_t buf[CMSG_SPACE(sizeof(int))];
	} control = {};
	_cleanup_close_ int list_fd = -EBADF;
	struct iovec iov;
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = &control,
		.msg_controllen = sizeof(control),
	};
	struct cmsghdr *cm;
	size_t n;
	int r;

	r = ctl_builder_finish(b, &n);
	if (r < 0) {
		ctl_builder_done(b);
		return log_error_errno(r, "Reply does not fit in one message: %m");
	}
	iov = (struct iovec){ .iov_base = b->buf, .iov_len = n };
	/* Session records' events too many for the packet: in a sealed memfd, the reply's one fd. */
	if (b->n_list > 0) {
		r = fd >= 0 ? -EMSGSIZE :
		    memfd_sealed("ftraced-events", b->list, b->n_list, &list_fd);
		ctl_builder_done(b);
		if (r < 0)
			return log_error_errno(r, "Cannot pass a reply's event list: %m");
		fd = list_fd;
	}
	/* Events that went inline leave the list's memory behind: the next init forgets it. */
	ctl_builder_done(b);
	if (fd >= 0) {
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	} else {
		mh.msg_control = NULL;
		mh.msg_controllen = 0;
	}
	if (sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		r = negative_errno();
		log_ratelimit_debug_errno(r, "Sending to client pid %d failed, dropping it: %m",
					  (int)c->pid);
		shutdown(c->fd, SHUT_RDWR);
		return r;
	}
	return 0;
}

static void ctl_conn_send_error_fdv(struct ctl_conn *c, int error, int fd, bool kernel,
				    const char *fmt, va_list ap) _printf_(5, 0);

/**
 * ctl_conn_send_error() - send an ERROR reply.
 * @c: connection
 * @error: negative errno
 * @fmt: message for the user
 *
 * Return: @error.
 */
int ctl_conn_send_error(struct ctl_conn *c, int error, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ctl_conn_send_error_fdv(c, error, -EBADF, false, fmt, ap);
	va_end(ap);
	return error;
}

/**
 * ctl_conn_send_kernel_refusal() - an ERROR reply for what the kernel refused.
 * @c: connection
 * @error: negative errno, as the kernel gave it
 * @fmt: message for the user
 *
 * Marked KERNEL_REFUSED: an EPERM from tracefs is not ftraced's own
 * permission refusal, and the client's exit status tells them apart.
 *
 * Return: @error.
 */
int ctl_conn_send_kernel_refusal(struct ctl_conn *c, int error, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ctl_conn_send_error_fdv(c, error, -EBADF, true, fmt, ap);
	va_end(ap);
	return error;
}

/**
 * ctl_conn_send_error_fd() - an ERROR reply with a descriptor (a file the
 * client may read, such as what a failed record recovered).
 * @c: connection
 * @error: negative errno
 * @fd: passed with SCM_RIGHTS (the caller keeps its own), or -EBADF
 * @fmt: message for the user
 *
 * Return: @error.
 */
int ctl_conn_send_error_fd(struct ctl_conn *c, int error, int fd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ctl_conn_send_error_fdv(c, error, fd, false, fmt, ap);
	va_end(ap);
	return error;
}

static void ctl_conn_send_error_fdv(struct ctl_conn *c, int error, int fd, bool kernel,
				    const char *fmt, va_list ap)
{
	static struct ctl_builder b;
	char msg[FTRACED_MESSAGE_MAX + 1];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	/* Only what the protocol allows in a message goes out. */
	for (char *p = msg; *p; p++)
		if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f)
			*p = '?';
	if (c->requested)
		c->server->counters.request_errors++;
	ctl_builder_init(&b, FTRACED_MSG_ERROR);
	ctl_put_u32(&b, FTRACED_ATTR_ERRNO, (uint32_t)-error);
	if (msg[0])
		ctl_put_string(&b, FTRACED_ATTR_MESSAGE, msg);
	if (kernel)
		ctl_put_u32(&b, FTRACED_ATTR_KERNEL_REFUSED, 1);
	ctl_conn_send_fd(c, &b, fd);
}

static void close_fds(struct msghdr *mh)
{
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		for (size_t i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			safe_close(fd);
		}
	}
}

/* The descriptors of a request: at most two (RECORD's output and an event list). */
static int take_fds(struct msghdr *mh, int ret[static 2], unsigned *ret_n)
{
	unsigned n_fds = 0;

	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		size_t n;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			return -EBADMSG;
		n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		if (n > 2 - n_fds)
			return -ETOOMANYREFS;
		memcpy(ret + n_fds, CMSG_DATA(cm), n * sizeof(int));
		n_fds += (unsigned)n;
	}
	*ret_n = n_fds;
	return 0;
}

/*
 * The events of a request with ATTR_EVENT_LIST, from the sealed memfd
 * passed last. Its size is checked against FTRACED_EVENT_LIST_SIZE_MAX
 * before it is mapped; a bad list is the client's fault, answered here.
 *
 * Return: 0, or the error already sent.
 */
static int take_event_list(struct ctl_conn *c, int fd)
{
	struct ctl_request *req = c->server->req;
	const struct ftraced_event_list *l = &req->event_list;
	uint16_t bad_attr = 0;
	size_t n = 0;
	void *p = NULL;
	int r;

	r = memfd_map_sealed(fd, FTRACED_EVENT_LIST_SIZE_MAX, &p, &n);
	if (r < 0)
		return ctl_conn_send_error(c, r == -EFBIG ? -E2BIG : -EBADMSG,
					   r == -EFBIG ? "event list larger than %u bytes" :
					   "event list is not a sealed memfd",
					   FTRACED_EVENT_LIST_SIZE_MAX);
	r = l->offset > n || l->size > n - l->offset ? -EBADMSG :
	    ctl_request_parse_event_list(req, (const uint8_t *)p + l->offset, l->size,
					 &bad_attr);
	if (p)
		munmap(p, n);
	if (r == -E2BIG)
		return ctl_conn_send_error(c, r, "too many events (at most %u)",
					   FTRACED_EVENTS_PER_REQUEST_MAX);
	if (r == -ENOMEM)
		return ctl_conn_send_error(c, r, "out of memory for the event list");
	if (r < 0) {
		char rule[256];

		ctl_attr_rule(bad_attr ? bad_attr : FTRACED_ATTR_EVENT_LIST, rule, sizeof(rule));
		return ctl_conn_send_error(c, r, "malformed request: bad %s", rule);
	}
	return 0;
}

static int on_conn(sd_event_source *source, int fd, uint32_t revents, void *userdata)
{
	struct ctl_conn *c = userdata;
	struct ctl_server *s = c->server;
	union {
		struct cmsghdr align;
		uint8_t buf[CMSG_SPACE(sizeof(int) * 2)];
	} control;
	struct iovec iov = { .iov_base = s->buf, .iov_len = sizeof(s->buf) };
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = &control,
		.msg_controllen = sizeof(control),
	};
	uint16_t bad_attr = 0;
	int fds[2] = { -EBADF, -EBADF };
	_cleanup_close_ int list_fd = -EBADF;
	int passed_fd = -EBADF;
	unsigned n_fds = 0;
	ssize_t n;
	int r;

	if (revents & (EPOLLHUP | EPOLLERR) && !(revents & EPOLLIN)) {
		conn_free(c);
		return 0;
	}
	n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return 0;
		conn_free(c);
		return 0;
	}
	if (n == 0) {
		conn_free(c);
		return 0;
	}
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
		close_fds(&mh);
		ctl_conn_send_error(c, -EMSGSIZE,
				    (mh.msg_flags & MSG_TRUNC) ?
				    "message too large (max %u bytes)" :
				    "too many file descriptors (max 2)", CTL_MSG_SIZE_MAX);
		log_ratelimit_debug_errno(-EMSGSIZE, "Truncated message from pid %d, dropping",
					  (int)c->pid);
		conn_free(c);
		return 0;
	}
	c->requested = true;
	s->counters.requests++;
	sd_event_now(s->event, CLOCK_MONOTONIC, &c->last_request);
	r = take_fds(&mh, fds, &n_fds);
	if (r < 0) {
		close_fds(&mh);
		ctl_conn_send_error(c, r, r == -ETOOMANYREFS ? "too many file descriptors (max 2)" :
				    "malformed control data");
		return 0;
	}
	passed_fd = fds[0];
	r = ctl_request_parse(s->buf, (size_t)n, s->req, &bad_attr);
	/* An event list is the last descriptor; only it may come with another. */
	if (r >= 0 && ctl_request_has(s->req, FTRACED_ATTR_EVENT_LIST)) {
		if (n_fds == 0) {
			bad_attr = FTRACED_ATTR_EVENT_LIST;
			r = -EBADMSG;
		} else {
			list_fd = TAKE_FD(fds[n_fds - 1]);
			passed_fd = fds[0];
		}
	} else if (r >= 0 && n_fds > 1) {
		safe_close(fds[1]);
		r = -ETOOMANYREFS;
	}
	if (r == -ETOOMANYREFS) {
		safe_close(passed_fd);
		ctl_conn_send_error(c, r, "too many file descriptors (max 1 without an event list)");
		return 0;
	}
	if (r == -E2BIG) {
		safe_close(passed_fd);
		ctl_conn_send_error(c, r, "too many events (at most %u)",
				    FTRACED_EVENTS_PER_REQUEST_MAX);
		return 0;
	}
	if (r < 0) {
		safe_close(fds[1]);
		safe_close(passed_fd);
		log_ratelimit_debug_errno(r, "Bad request from pid %d, rejecting: %m", (int)c->pid);
		if (r == -EPROTONOSUPPORT)
			ctl_conn_send_error(c, r, "protocol version not supported (this is version %u)",
					    FTRACED_PROTO_VERSION);
		else if (r == -EOPNOTSUPP)
			ctl_conn_send_error(c, r, "unknown request type");
		else if (bad_attr != 0) {
			char rule[256];

			ctl_attr_rule(bad_attr, rule, sizeof(rule));
			ctl_conn_send_error(c, r, "malformed request: bad %s", rule);
		} else {
			ctl_conn_send_error(c, r, "malformed request");
		}
		return 0;
	}
	if (list_fd >= 0 && take_event_list(c, list_fd) < 0) {
		safe_close(passed_fd);
		return 0;
	}
	if (passed_fd >= 0 && s->req->type != FTRACED_MSG_RECORD &&
	    s->req->type != FTRACED_MSG_SNAPSHOT) {
		safe_close(passed_fd);
		ctl_conn_send_error(c, -EBADMSG, "this request takes no file descriptor");
		return 0;
	}
	s->handlers.request(s->handlers.userdata, c, s->req, passed_fd);
	/* The request moved this connection's deadline, or made it busy. */
	arm_sweep(s);
	return 0;
}

static bool peer_allowed(int fd, gid_t group, struct ucred *ret_cred)
{
	gid_t groups[PEER_GROUPS_MAX];
	socklen_t len = sizeof(*ret_cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, ret_cred, &len) < 0)
		return false;
	if (ret_cred->uid == 0)
		return true;
	if (group == (gid_t)-1)
		return false;
	if (ret_cred->gid == group)
		return true;
	len = sizeof(groups);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
		return false;
	for (size_t i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == group)
			return true;
	return false;
}

static unsigned conns_of_uid(struct ctl_server *s, uid_t uid)
{
	unsigned n = 0;

	for (struct ctl_conn *c = s->conns; c; c = c->next)
		n += c->uid == uid;
	return n;
}

static bool conn_busy(struct ctl_server *s, const struct ctl_conn *c)
{
	return s->handlers.busy && s->handlers.busy(s->handlers.userdata, c);
}

/*
 * The connection to close for a newcomer: the longest-idle one without an
 * operation in progress, of @uid, or (@uid == -1) of the user holding the
 * most connections. NULL when every candidate is busy.
 */
static struct ctl_conn *idle_victim(struct ctl_server *s, uid_t uid)
{
	struct ctl_conn *victim = NULL;
	unsigned victim_n = 0;

	for (struct ctl_conn *c = s->conns; c; c = c->next) {
		unsigned n;

		if ((uid != (uid_t)-1 && c->uid != uid) || conn_busy(s, c))
			continue;
		n = uid != (uid_t)-1 ? 0 : conns_of_uid(s, c->uid);
		if (!victim || n > victim_n ||
		    (n == victim_n && c->last_request < victim->last_request)) {
			victim = c;
			victim_n = n;
		}
	}
	return victim;
}

/* Makes room for one more connection of @uid; false if every candidate is busy. */
static bool make_room(struct ctl_server *s, uid_t uid)
{
	while (s->n_conns >= CTL_CONN_MAX || conns_of_uid(s, uid) >= CTL_CONN_PER_UID_MAX) {
		struct ctl_conn *victim = idle_victim(s, s->n_conns >= CTL_CONN_MAX ? (uid_t)-1 : uid);

		if (!victim)
			return false;
		log_ratelimit_debug_errno(-EUSERS, "Connection limit reached: closing an idle "
					  "connection of uid %u", (unsigned)victim->uid);
		ctl_conn_send_error(victim, -ETIMEDOUT,
				    "closed: idle while the daemon's connection limit was reached");
		conn_free(victim);
	}
	return true;
}

/*
 * When a connection is next looked at. One with an operation in progress
 * (a record waiting for its end, a watch) is never closed: it is looked at
 * again an idle timeout later, so a long record costs the daemon one
 * wake-up a minute rather than one a second. When its operation ends, it
 * is closed at that look if it has been idle since, as any other.
 */
static uint64_t conn_deadline(struct ctl_server *s, const struct ctl_conn *c, uint64_t now)
{
	if (conn_busy(s, c))
		return now + CTL_IDLE_TIMEOUT_USEC;
	return c->last_request + (c->requested ? CTL_IDLE_TIMEOUT_USEC : CTL_REQUEST_TIMEOUT_USEC);
}

/* Sets the sweep for the earliest deadline of all connections (off with none). */
static void arm_sweep(struct ctl_server *s)
{
	uint64_t now, next = UINT64_MAX;
	int r;

	if (!s->conns) {
		sd_event_source_set_enabled(s->sweep_source, SD_EVENT_OFF);
		return;
	}
	sd_event_now(s->event, CLOCK_MONOTONIC, &now);
	for (const struct ctl_conn *c = s->conns; c; c = c->next)
		next = MIN(next, conn_deadline(s, c, now));
	r = event_timer_set(s->sweep_source, next);
	if (r < 0)
		log_ratelimit_warning_errno(r, "Cannot set the control connections' deadline "
					    "timer: %m");
}

/* Closes connections past their deadline, at the earliest of them. */
static int on_sweep(sd_event_source *source, uint64_t now, void *userdata)
{
	struct ctl_server *s = userdata;
	struct ctl_conn *next;

	for (struct ctl_conn *c = s->conns; c; c = next) {
		next = c->next;
		if (now < conn_deadline(s, c, now))
			continue;
		log_ratelimit_debug_errno(-ETIMEDOUT, "Closing %s connection of pid %d",
					  c->requested ? "idle" : "silent", (int)c->pid);
		ctl_conn_send_error(c, -ETIMEDOUT, c->requested ?
				    "closed: idle for too long" :
				    "closed: no request within the time allowed");
		conn_free(c);
	}
	arm_sweep(s);
	return 0;
}

static int on_listen(sd_event_source *source, int fd, uint32_t revents, void *userdata)
{
	struct ctl_server *s = userdata;
	struct ctl_conn *c;
	struct ucred cred = { .uid = (uid_t)-1, .gid = (gid_t)-1 };
	int cfd, refused = 0, r;

	cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (cfd < 0) {
		if (errno != EAGAIN && errno != EINTR)
			log_ratelimit_warning_errno(negative_errno(), "accept failed: %m");
		return 0;
	}
	/* Only authorised peers may push others out. */
	if (!peer_allowed(cfd, s->group, &cred))
		refused = -EACCES;
	else if (!make_room(s, cred.uid))
		refused = -EUSERS;
	c = calloc(1, sizeof(*c));
	if (!c) {
		safe_close(cfd);
		return 0;
	}
	*c = (struct ctl_conn){ .server = s, .fd = cfd, .next = s->conns, .uid = cred.uid,
				.pid = cred.pid };
	sd_event_now(s->event, CLOCK_MONOTONIC, &c->last_request);
	s->conns = c;
	s->n_conns++;

	if (refused == -EACCES) {
		log_ratelimit_debug_errno(refused, "Refusing client uid %u: not root or in the group",
					  (unsigned)cred.uid);
		ctl_conn_send_error(c, refused,
				    "permission denied: ftraced accepts root and members of its group");
	} else if (refused == -EUSERS) {
		ctl_conn_send_error(c, refused, "too many connections with requests in progress "
				    "(at most %u, %u per user)", CTL_CONN_MAX, CTL_CONN_PER_UID_MAX);
	}
	if (refused < 0) {
		s->counters.connections_refused++;
		conn_free(c);
		return 0;
	}
	s->counters.connections++;
	r = sd_event_add_io(s->event, &c->source, cfd, EPOLLIN, on_conn, c);
	if (r < 0) {
		log_error_errno(r, "Cannot watch connection: %m");
		conn_free(c);
		return 0;
	}
	arm_sweep(s);
	return 0;
}

/**
 * ctl_server_new() - listen on the control socket.
 * @e: event loop
 * @path: socket path
 * @group: gid whose members may connect besides root, or (gid_t)-1
 * @h: request and close handlers
 * @ret: the server
 *
 * Return: 0, -EADDRINUSE if another daemon answers on @path, or -errno.
 */
int ctl_server_new(sd_event *e, const char *path, gid_t group,
		   const struct ctl_server_handlers *h, struct ctl_server **ret)
{
	struct ctl_server *s;
	int r;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->req = calloc(1, sizeof(*s->req));
	if (!s->req) {
		free(s);
		return -ENOMEM;
	}
	s->event = sd_event_ref(e);
	s->handlers = *h;
	s->group = group;
	s->listen_fd = ctl_socket_from_systemd(path);
	if (s->listen_fd >= 0)
		log_info("Using the control socket passed by the service manager");
	else {
		s->listen_fd = ctl_socket_bind(path, group);
		if (s->listen_fd >= 0)
			s->bound_path = strdup(path);
	}
	if (s->listen_fd < 0) {
		r = s->listen_fd;
		ctl_server_free(s);
		return r;
	}
	r = sd_event_add_io(e, &s->listen_source, s->listen_fd, EPOLLIN, on_listen, s);
	if (r >= 0)
		r = sd_event_add_time(e, &s->sweep_source, CLOCK_MONOTONIC, UINT64_MAX,
				      CTL_SWEEP_ACCURACY_USEC, on_sweep, s);
	if (r >= 0)
		r = sd_event_source_set_enabled(s->sweep_source, SD_EVENT_OFF);
	if (r < 0) {
		ctl_server_free(s);
		return r;
	}
	*ret = s;
	return 0;
}

struct ctl_server *ctl_server_free(struct ctl_server *s)
{
	if (!s)
		return NULL;
	while (s->conns)
		conn_free(s->conns);
	sd_event_source_disable_unref(s->listen_source);
	sd_event_source_disable_unref(s->sweep_source);
	safe_close(s->listen_fd);
	if (s->bound_path)
		unlink(s->bound_path);
	free(s->bound_path);
	sd_event_unref(s->event);
	if (s->req)
		ctl_request_done(s->req);
	free(s->req);
	free(s);
	return NULL;
}
