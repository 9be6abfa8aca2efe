// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Building control messages (ctl-proto.h): a header and attributes in a
 * fixed buffer. A message that does not fit sets the builder's error
 * instead of being cut: the caller says "too many for one request".
 * Pure, like the parser (ctl-proto.c).
 */
#include <errno.h>
#include <string.h>

#include "ftraced/macro.h"
#include "lib/ctl-proto.h"

void ctl_builder_init(struct ctl_builder *b, enum ftraced_msg_type type)
{
	put_le32(b->buf, FTRACED_PROTO_MAGIC);
	put_le16(b->buf + 4, FTRACED_PROTO_VERSION);
	put_le16(b->buf + 6, (uint16_t)type);
	put_le32(b->buf + 8, 0);
	put_le32(b->buf + 12, 0);
	b->n = sizeof(struct ftraced_msg_hdr);
	b->error = 0;
}

void ctl_put(struct ctl_builder *b, enum ftraced_attr type, const void *data, size_t len)
{
	if (b->error)
		return;
	if (len > UINT16_MAX || len + FTRACED_ATTR_HDR_SIZE > sizeof(b->buf) - b->n) {
		b->error = -EMSGSIZE;
		return;
	}
	put_le16(b->buf + b->n, (uint16_t)type);
	put_le16(b->buf + b->n + 2, (uint16_t)len);
	if (len > 0)
		memcpy(b->buf + b->n + FTRACED_ATTR_HDR_SIZE, data, len);
	b->n += FTRACED_ATTR_HDR_SIZE + len;
}

void ctl_put_u32(struct ctl_builder *b, enum ftraced_attr type, uint32_t v)
{
	uint8_t p[4];

	put_le32(p, v);
	ctl_put(b, type, p, sizeof(p));
}

void ctl_put_u64(struct ctl_builder *b, enum ftraced_attr type, uint64_t v)
{
	uint8_t p[8];

	put_le64(p, v);
	ctl_put(b, type, p, sizeof(p));
}

void ctl_put_string(struct ctl_builder *b, enum ftraced_attr type, const char *s)
{
	ctl_put(b, type, s, strlen(s));
}

void ctl_put_cpu_stats(struct ctl_builder *b, enum ftraced_attr type,
		       const struct ftraced_cpu_stats *s)
{
	uint8_t p[sizeof(*s)] = {};

	put_le32(p, s->cpu);
	put_le64(p + 8, s->bytes_raw);
	put_le64(p + 16, s->bytes_stored);
	put_le64(p + 24, s->chunks);
	put_le64(p + 32, s->entries);
	put_le64(p + 40, s->overrun);
	put_le64(p + 48, s->dropped);
	put_le64(p + 56, s->read);
	ctl_put(b, type, p, sizeof(p));
}

static void put_u64s(struct ctl_builder *b, enum ftraced_attr type, const uint64_t *v, size_t n)
{
	uint8_t p[64];

	for (size_t k = 0; k < n && k < sizeof(p) / 8; k++)
		put_le64(p + 8 * k, v[k]);
	ctl_put(b, type, p, n * 8);
}

void ctl_put_session_counters(struct ctl_builder *b, const struct ftraced_session_counters *c)
{
	const uint64_t v[8] = {
		c->files_written, c->files_deleted, c->files_failed,
		c->triggers_fired, c->triggers_suppressed,
	};

	put_u64s(b, FTRACED_ATTR_SESSION_COUNTERS, v, ELEMENTSOF(v));
}

void ctl_put_daemon_counters(struct ctl_builder *b, const struct ftraced_daemon_counters *c)
{
	const uint64_t v[8] = {
		c->uptime_ms, c->connections, c->connections_refused, c->requests,
		c->request_errors, c->hooks_run, c->hooks_failed, c->sessions_started,
	};

	put_u64s(b, FTRACED_ATTR_DAEMON_COUNTERS, v, ELEMENTSOF(v));
}

/**
 * ctl_builder_finish() - fill in the payload length.
 * @b: builder
 * @ret_size: the packet's length
 *
 * Return: 0, or -EMSGSIZE if anything did not fit.
 */
int ctl_builder_finish(struct ctl_builder *b, size_t *ret_size)
{
	if (b->error)
		return b->error;
	put_le32(b->buf + 12, (uint32_t)(b->n - sizeof(struct ftraced_msg_hdr)));
	*ret_size = b->n;
	return 0;
}
