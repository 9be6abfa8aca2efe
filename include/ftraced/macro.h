/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Small helpers shared by the daemon and the client: cleanup attributes,
 * ownership hand-over and little-endian access. Everything here is
 * header-only and has no state.
 */
#pragma once

#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define ALIGN_UP(x, a) ((((x) + (a) - 1) / (a)) * (a))

/* Hand ownership of a pointer or fd to someone else; the local becomes empty. */
#define TAKE_PTR(p) ({ __typeof__(p) _p = (p); (p) = NULL; _p; })
#define TAKE_FD(fd) ({ int _fd = (fd); (fd) = -EBADF; _fd; })

#define DEFINE_CLEANUP(type, func) \
	static inline void func##p(type *p) \
	{ \
		if (*p) \
			func(*p); \
	}

static inline void freep(void *p)
{
	free(*(void **)p);
}
#define _cleanup_free_ _cleanup_(freep)

/* free() in the destructor idiom: p = mfree(p); */
/* Frees a NULL-terminated array of strings and the strings; NULL is fine. */
static inline void strv_free(char **v)
{
	for (size_t k = 0; v && v[k]; k++)
		free(v[k]);
	free(v);
}

static inline void *mfree(void *p)
{
	free(p);
	return NULL;
}

static inline int safe_close(int fd)
{
	if (fd >= 0) {
		int saved = errno;

		close(fd);
		errno = saved;
	}
	return -EBADF;
}

static inline void closep(int *fd)
{
	safe_close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

static inline void close_pair(int p[2])
{
	p[0] = safe_close(p[0]);
	p[1] = safe_close(p[1]);
}

/* -errno from the libc convention, never 0 even if errno was not set. */
static inline int negative_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

static inline void put_le16(uint8_t *p, uint16_t v) { v = htole16(v); memcpy(p, &v, 2); }
static inline void put_le32(uint8_t *p, uint32_t v) { v = htole32(v); memcpy(p, &v, 4); }
static inline void put_le64(uint8_t *p, uint64_t v) { v = htole64(v); memcpy(p, &v, 8); }
static inline uint16_t get_le16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return le16toh(v); }
static inline uint32_t get_le32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return le32toh(v); }
static inline uint64_t get_le64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return le64toh(v); }
