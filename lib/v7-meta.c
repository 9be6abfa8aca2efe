// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A v7 file's metadata sections parsed back into what the writer takes
 * (struct v7_file), so a file made from other files' data (ftracectl
 * extract) carries their header page, formats, symbols, printk formats
 * and comms unchanged; and the events a format section names, by id.
 * Every length is checked against its section body.
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

/**
 * v7_formats_foreach() - call @fn for every event of a FTRACE_EVENTS or EVENT_FORMATS body.
 * @formats: the section body
 * @n: its size
 * @per_system: false for FTRACE_EVENTS (u32 count, formats), true for
 *              EVENT_FORMATS (u32 systems; per system name, u32 count, formats)
 * @fn: called with the system ("ftrace" for FTRACE_EVENTS), name and id;
 *      a non-zero return stops the walk and is returned
 * @userdata: passed to @fn
 *
 * Return: 0, what @fn returned, or -EBADMSG if the body is damaged.
 */
int v7_formats_foreach(const uint8_t *formats, size_t n, bool per_system, v7_format_fn fn,
		       void *userdata)
{
	size_t pos = 0;
	uint32_t n_systems = 1;

	if (per_system) {
		if (n < 4)
			return -EBADMSG;
		n_systems = get_le32(formats);
		pos = 4;
	}
	for (uint32_t sys = 0; sys < n_systems; sys++) {
		const char *system = "ftrace";
		uint32_t count;

		if (per_system) {
			const uint8_t *nul = memchr(formats + pos, '\0', n - pos);

			if (!nul)
				return -EBADMSG;
			system = (const char *)formats + pos;
			pos = (size_t)(nul - formats) + 1;
		}
		if (n - pos < 4)
			return -EBADMSG;
		count = get_le32(formats + pos);
		pos += 4;
		for (uint32_t k = 0; k < count; k++) {
			const char *text, *end, *id, *nl;
			char name[128];
			uint64_t size;
			int v = 0, r;

			if (n - pos < 8)
				return -EBADMSG;
			size = get_le64(formats + pos);
			pos += 8;
			if (size > n - pos)
				return -EBADMSG;
			text = (const char *)formats + pos;
			end = text + size;
			pos += size;
			nl = memchr(text, '\n', size);
			id = memmem(text, size, "\nID: ", 5);
			if (size < 7 || memcmp(text, "name: ", 6) != 0 || !nl || !id ||
			    (size_t)(nl - text - 6) >= sizeof(name))
				return -EBADMSG;
			memcpy(name, text + 6, (size_t)(nl - text - 6));
			name[nl - text - 6] = '\0';
			for (id += 5; id < end && *id >= '0' && *id <= '9' && v < 1000000; id++)
				v = v * 10 + (*id - '0');
			r = fn(system, name, v, userdata);
			if (r != 0)
				return r;
		}
	}
	return 0;
}

struct find_id {
	const char *name;
	int id;
};

static int match_name(const char *system, const char *name, int id, void *userdata)
{
	struct find_id *f = userdata;

	if (strcmp(name, f->name) != 0)
		return 0;
	f->id = id;
	return 1;
}

/**
 * v7_find_event_id() - the id of an event in a FTRACE_EVENTS or EVENT_FORMATS body.
 * @formats: the section body
 * @n: its size
 * @per_system: see v7_formats_foreach()
 * @name: event name, e.g. "print"
 * @ret_id: its id
 *
 * Return: 0, -ENOENT if there is no such event, -EBADMSG if damaged.
 */
int v7_find_event_id(const uint8_t *formats, size_t n, bool per_system, const char *name,
		     int *ret_id)
{
	struct find_id f = { .name = name };
	int r;

	r = v7_formats_foreach(formats, n, per_system, match_name, &f);
	if (r < 0)
		return r;
	if (r == 0)
		return -ENOENT;
	*ret_id = f.id;
	return 0;
}

/* What a file's CPUSTAT texts say about losses (ftracectl info, the babeltrace2 plugin). */
static uint64_t stat_field(const char *text, const char *key)
{
	const char *p = text ? strstr(text, key) : NULL;

	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

/*
 * CPUSTAT texts start with "CPU: N" (trace-cmd and ftraced alike); ftraced
 * adds texts for the same CPU that go on with a note: "CPU: N (when this
 * file began)". @note NULL: the text without one.
 */
static const char *cpustat_of(const struct v7_reader *r, uint32_t cpu, const char *note)
{
	for (size_t i = 0; i < v7_reader_n_cpustat(r); i++) {
		const char *t = v7_reader_cpustat(r, i);
		const char *p = t ? strstr(t, "CPU: ") : NULL;
		char *end;

		if (!p || strtoul(p + 5, &end, 10) != cpu)
			continue;
		if (note ? strncmp(end, " (", 2) == 0 && strncmp(end + 2, note, strlen(note)) == 0 :
			   *end == '\n' || *end == '\0')
			return t;
	}
	return NULL;
}

/**
 * v7_lost_events() - events lost on @cpu while this file's data was captured: what the kernel
 * overwrote or dropped since the file began (trace-cmd's files, and a
 * session's first, count from the instance's start), and what ftraced
 * read but could not store.
 */
uint64_t v7_lost_events(const struct v7_reader *r, uint32_t cpu)
{
	const char *end = cpustat_of(r, cpu, NULL), *begin = cpustat_of(r, cpu, "when this");
	uint64_t at_end = stat_field(end, "overrun: ") + stat_field(end, "dropped events: ");
	uint64_t at_begin = stat_field(begin, "overrun: ") + stat_field(begin, "dropped events: ");

	return (at_end > at_begin ? at_end - at_begin : 0) +
	       stat_field(end, "ftraced-discarded: ");
}
