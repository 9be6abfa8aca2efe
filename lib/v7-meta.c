// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A v7 file's metadata sections parsed back into what the writer takes
 * (struct v7_file), so a file made from other files' data (ftracectl
 * extract) carries their header page, formats, symbols, printk formats
 * and comms unchanged. Every length is checked against its section body.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftraced/macro.h"
#include "lib/v7-meta.h"
#include "lib/v7-reader.h"

/* A cursor over one section body. */
struct cursor {
	const uint8_t *p, *end;
};

static int take(struct cursor *c, size_t n, const uint8_t **ret)
{
	if ((size_t)(c->end - c->p) < n)
		return -EBADMSG;
	*ret = c->p;
	c->p += n;
	return 0;
}

static int take_u32(struct cursor *c, uint32_t *ret)
{
	const uint8_t *p;
	int r = take(c, 4, &p);

	if (r >= 0)
		*ret = get_le32(p);
	return r;
}

static int take_u64(struct cursor *c, uint64_t *ret)
{
	const uint8_t *p;
	int r = take(c, 8, &p);

	if (r >= 0)
		*ret = get_le64(p);
	return r;
}

/* A NUL-terminated string; @expect, if given, must be it. */
static int take_str(struct cursor *c, const char *expect, const char **ret)
{
	const uint8_t *nul = memchr(c->p, '\0', (size_t)(c->end - c->p));

	if (!nul || (expect && strcmp((const char *)c->p, expect) != 0))
		return -EBADMSG;
	*ret = (const char *)c->p;
	c->p = nul + 1;
	return 0;
}

/* A blob after its u64 (or u32) size. */
static int take_blob(struct cursor *c, bool size64, struct v7_blob *ret)
{
	uint64_t n = 0;
	uint32_t n32;
	const uint8_t *p;
	int r;

	r = size64 ? take_u64(c, &n) : take_u32(c, &n32);
	if (!size64 && r >= 0)
		n = n32;
	if (r >= 0 && n > (uint64_t)(c->end - c->p))
		r = -EBADMSG;
	if (r >= 0)
		r = take(c, (size_t)n, &p);
	if (r >= 0)
		*ret = (struct v7_blob){ .data = p, .size = (size_t)n };
	return r;
}

/* "u32 count, then count × (u64 size, text)" into @ret (grown), from @c. */
static int take_formats(struct cursor *c, struct v7_blob **ret, size_t *n_ret)
{
	uint32_t n;
	struct v7_blob *grown;
	int r = take_u32(c, &n);

	if (r < 0)
		return r;
	/* Each format takes at least its 8-byte size: a count beyond that is a lie. */
	if (n > (size_t)(c->end - c->p) / 8)
		return -EBADMSG;
	grown = reallocarray(*ret, *n_ret + n + 1, sizeof(**ret));
	if (!grown)
		return -ENOMEM;
	*ret = grown;
	for (uint32_t i = 0; i < n; i++) {
		r = take_blob(c, true, &grown[(*n_ret)++]);
		if (r < 0)
			return r;
	}
	return 0;
}

static struct cursor section(const struct v7_meta *m, int id)
{
	size_t k = (size_t)(id - V7_SEC_FIRST_META);

	return (struct cursor){ m->body[k], m->body[k] + m->n_body[k] };
}

static int parse(struct v7_meta *m)
{
	struct cursor c;
	const char *name;
	uint32_t n_systems = 0;
	size_t *counts;
	int r;

	c = section(m, V7_SEC_HEADER_INFO);
	if (!c.p)
		return -EBADMSG;
	r = take_str(&c, "header_page", &name);
	if (r >= 0)
		r = take_blob(&c, true, &m->header_page);
	if (r >= 0)
		r = take_str(&c, "header_event", &name);
	if (r >= 0)
		r = take_blob(&c, true, &m->header_event);
	c = section(m, V7_SEC_FTRACE_EVENTS);
	if (r >= 0 && c.p)
		r = take_formats(&c, &m->ftrace_formats, &m->n_ftrace_formats);
	c = section(m, V7_SEC_EVENT_FORMATS);
	if (r >= 0 && c.p)
		r = take_u32(&c, &n_systems);
	if (r < 0 || !c.p)
		return r;
	if (n_systems > (size_t)(c.end - c.p) / 5) /* a name's NUL and a u32 count each */
		return -EBADMSG;
	m->systems = calloc(n_systems + 1, sizeof(*m->systems));
	counts = calloc(n_systems + 1, sizeof(*counts));
	if (!m->systems || !counts) {
		free(counts);
		return -ENOMEM;
	}
	for (uint32_t i = 0; r >= 0 && i < n_systems; i++) {
		size_t before = m->n_event_formats_total;

		r = take_str(&c, NULL, &m->systems[i].name);
		if (r >= 0)
			r = take_formats(&c, &m->event_formats, &m->n_event_formats_total);
		counts[i] = m->n_event_formats_total - before;
	}
	/* The array may have moved as it grew: point each system into it at the end. */
	for (size_t i = 0, at = 0; r >= 0 && i < n_systems; at += counts[i++]) {
		m->systems[i].formats = m->event_formats + at;
		m->systems[i].n_formats = counts[i];
	}
	m->n_systems = r >= 0 ? n_systems : 0;
	free(counts);
	return r;
}

/* A u32- or u64-sized single blob section (KALLSYMS, PRINTK; CMDLINES); absent: empty. */
static int single(const struct v7_meta *m, int id, bool size64, struct v7_blob *ret)
{
	struct cursor c = section(m, id);

	*ret = (struct v7_blob){};
	return c.p ? take_blob(&c, size64, ret) : 0;
}

/**
 * v7_meta_parse() - parse the section bodies @m holds into its blobs and systems.
 * @m: bodies set (a missing one is NULL), nothing parsed yet
 *
 * Return: 0, -EBADMSG if a length or count goes past its body, or -ENOMEM.
 */
int v7_meta_parse(struct v7_meta *m)
{
	int k = parse(m);

	if (k >= 0)
		k = single(m, V7_SEC_KALLSYMS, false, &m->kallsyms);
	if (k >= 0)
		k = single(m, V7_SEC_PRINTK, false, &m->printk);
	if (k >= 0)
		k = single(m, V7_SEC_CMDLINES, true, &m->cmdlines);
	return k;
}

/**
 * v7_meta_read() - read and parse a file's metadata sections.
 * @r: the file
 * @m: zero-initialised; v7_meta_done() it, also on failure
 * @error: receives what is wrong, on failure
 * @n_error: its size
 *
 * Return: 0, -EBADMSG if a section is damaged or missing (HEADER_INFO), or -ENOMEM.
 */
int v7_meta_read(struct v7_reader *r, struct v7_meta *m, char *error, size_t n_error)
{
	int k;

	for (int id = V7_SEC_FIRST_META; id <= V7_SEC_LAST_META; id++) {
		size_t i = (size_t)(id - V7_SEC_FIRST_META);

		k = v7_reader_section(r, (uint16_t)id, &m->body[i], &m->n_body[i]);
		if (k == -ENOENT && id != V7_SEC_HEADER_INFO)
			continue;
		if (k < 0) {
			snprintf(error, n_error, "cannot read its metadata section %d: %s", id,
				 strerror(-k));
			return k;
		}
	}
	k = v7_meta_parse(m);
	if (k < 0)
		snprintf(error, n_error, "its metadata does not parse: %s", strerror(-k));
	return k;
}

/**
 * v7_meta_to_file() - point a v7_file's metadata at @m's (which must outlive it).
 * @m: parsed metadata
 * @f: the file to write
 */
void v7_meta_to_file(const struct v7_meta *m, struct v7_file *f)
{
	f->header_page = m->header_page;
	f->header_event = m->header_event;
	f->n_ftrace_formats = m->n_ftrace_formats;
	f->ftrace_formats = m->ftrace_formats;
	f->n_systems = m->n_systems;
	f->systems = m->systems;
	f->kallsyms = m->kallsyms;
	f->printk = m->printk;
	f->cmdlines = m->cmdlines;
}

void v7_meta_done(struct v7_meta *m)
{
	for (size_t i = 0; i < ELEMENTSOF(m->body); i++)
		free(m->body[i]);
	free(m->ftrace_formats);
	free(m->event_formats);
	free(m->systems);
	*m = (struct v7_meta){};
}
