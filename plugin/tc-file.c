// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A trace-cmd v7 file opened to read its events (see tc-file.h). Everything
 * in the file is untrusted: the reader checks the layout; what libtraceevent
 * is given is a NUL-terminated copy of a section the reader bounded.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <traceevent/event-parse.h>

#include "lib/io-util.h"
#include "lib/v7-format.h"
#include "lib/v7-reader.h"
#include "lib/wall-clock.h"
#include "plugin/tc-file.h"

/* A v7 file starts with this, then "7\0" (trace-cmd's "\27\10Dtracing" magic). */
static const char TC_MAGIC[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g', '7', 0 };

struct tc_file *tc_file_free(struct tc_file *f)
{
	if (!f)
		return NULL;
	if (f->tep)
		tep_free(f->tep);
	v7_meta_done(&f->meta);
	v7_reader_free(f->reader);
	if (f->fd >= 0)
		close(f->fd);
	free(f);
	return NULL;
}

/* libtraceevent parses texts that end in NUL; the sections' do not have to. */
static char *text_of(const struct v7_blob *b)
{
	char *t = malloc(b->size + 1);

	if (t) {
		if (b->size)
			memcpy(t, b->data, b->size);
		t[b->size] = '\0';
	}
	return t;
}

/*
 * libtraceevent 1.7's printk parser copies from one byte past a line's first
 * ':' (it skips the space of "ADDR : FORMAT"), so a line with nothing after
 * its ':' makes it read past the text's end. Only lines with an address
 * before the ':' and something after it are kept; the others name nothing.
 */
static int parse_printk(struct tep_handle *tep, const char *text)
{
	size_t n = strlen(text), kept = 0;
	char *safe = malloc(n + 1);
	int k;

	if (!safe)
		return -ENOMEM;
	for (const char *line = text; *line;) {
		const char *end = strchrnul(line, '\n');
		const char *colon = memchr(line, ':', (size_t)(end - line));

		if (colon && colon > line && colon + 1 < end) {
			memcpy(safe + kept, line, (size_t)(end - line));
			kept += (size_t)(end - line);
			safe[kept++] = '\n';
		}
		line = *end ? end + 1 : end;
	}
	safe[kept] = '\0';
	k = tep_parse_printk_formats(tep, safe);
	free(safe);
	return k;
}

typedef int (*tep_text_fn)(struct tep_handle *tep, const char *text);

static int parse_text(struct tep_handle *tep, const struct v7_blob *b, tep_text_fn fn)
{
	char *t;
	int k;

	if (!b->data || b->size == 0)
		return 0;
	t = text_of(b);
	if (!t)
		return -ENOMEM;
	k = fn(tep, t);
	free(t);
	return k;
}

/*
 * One event format. A format libtraceevent cannot parse is skipped, as
 * trace-cmd report does: its events come out as "unknown" events.
 */
static void parse_format(struct tep_handle *tep, const struct v7_blob *b, const char *system)
{
	(void)tep_parse_event(tep, b->data, b->size, system);
}

static int load_tep(struct tc_file *f, char *error, size_t n_error)
{
	const struct v7_meta *m = &f->meta;
	char *header;
	int k;

	f->tep = tep_alloc();
	if (!f->tep)
		return -ENOMEM;
	/* v7_reader_open() accepts little-endian files with 64-bit longs only. */
	tep_set_file_bigendian(f->tep, TEP_LITTLE_ENDIAN);
	tep_set_long_size(f->tep, 8);
	tep_set_page_size(f->tep, (int)v7_reader_page_size(f->reader));
	header = text_of(&m->header_page);
	if (!header)
		return -ENOMEM;
	k = tep_parse_header_page(f->tep, header, m->header_page.size, 8);
	free(header);
	if (k != 0) {
		snprintf(error, n_error, "its header page format does not parse");
		return -EBADMSG;
	}
	for (size_t i = 0; i < m->n_ftrace_formats; i++)
		parse_format(f->tep, &m->ftrace_formats[i], "ftrace");
	for (size_t s = 0; s < m->n_systems; s++)
		for (size_t i = 0; i < m->systems[s].n_formats; i++)
			parse_format(f->tep, &m->systems[s].formats[i], m->systems[s].name);
	/* Symbols, printk formats and comms only make output nicer: damaged ones are not fatal. */
	(void)parse_text(f->tep, &m->kallsyms, tep_parse_kallsyms);
	(void)parse_text(f->tep, &m->printk, parse_printk);
	(void)parse_text(f->tep, &m->cmdlines, tep_parse_saved_cmdlines);
	return 0;
}

/**
 * tc_file_open() - open a v7 file and everything needed to decode its events.
 * @path: the file
 * @ret: receives the file
 * @error: receives what is wrong, on failure
 * @n_error: its size
 *
 * Return: 0, -EBADMSG for a damaged file, -EPROTONOSUPPORT for one we cannot
 * read, or -errno.
 */
int tc_file_open(const char *path, struct tc_file **ret, char *error, size_t n_error)
{
	_cleanup_(tc_file_freep) struct tc_file *f = NULL;
	int k;

	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0) {
		k = -errno;
		snprintf(error, n_error, "cannot open '%s': %s", path, strerror(-k));
		return k;
	}
	k = v7_reader_open(f->fd, &f->reader, error, n_error);
	if (k < 0)
		return k;
	k = v7_meta_read(f->reader, &f->meta, error, n_error);
	if (k < 0)
		return k;
	k = load_tep(f, error, n_error);
	if (k < 0)
		return k;
	f->has_date = wall_date_parse(v7_reader_option(f->reader, V7_READER_DATE), &f->date_us);
	*ret = TAKE_PTR(f);
	return 0;
}

/**
 * tc_probe() - whether @path looks like a trace-cmd v7 file (its first 12 bytes).
 *
 * Return: 1 if it does, 0 if it does not (or is not a readable regular file).
 */
int tc_probe(const char *path)
{
	char head[sizeof(TC_MAGIC)];
	int fd, k;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	k = loop_pread_exact(fd, head, sizeof(head), 0);
	close(fd);
	return k == 0 && memcmp(head, TC_MAGIC, sizeof(head)) == 0;
}
