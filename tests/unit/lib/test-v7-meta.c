// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A file's metadata read back (lib/v7-meta.c) is what was written, and a file
 * written again with it has the same sections; a damaged section is refused.
 */
#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ftraced/macro.h"
#include "lib/v7-meta.h"
#include "lib/v7-reader.h"
#include "tests/unit/v7-fixture.h"

static bool same(struct v7_blob a, struct v7_blob b)
{
	return a.size == b.size && (a.size == 0 || memcmp(a.data, b.data, a.size) == 0);
}

static struct v7_reader *open_written(const struct v7_file *f)
{
	struct v7_reader *r;
	char error[256];
	int fd = memfd_create("v7", MFD_CLOEXEC);

	assert(fd >= 0 && v7_write(fd, f, NULL) == 0);
	assert(v7_reader_open(fd, &r, error, sizeof(error)) == 0);
	return r;
}

int main(void)
{
	static const char kallsyms[] = "ffffffff81000000 T _text\n";
	static const char printk[] = "0xffffffff81234567 : \"hello\\n\"\n";
	static const char cmdlines[] = "1 init\n";
	struct fixture fx;
	struct v7_meta m = {}, again = {};
	struct v7_file copy;
	struct v7_reader *r;
	char error[256];

	fixture_init(&fx, 4096, /* zstd= */ true, 4);
	fx.file.kallsyms = (struct v7_blob){ kallsyms, strlen(kallsyms) };
	fx.file.printk = (struct v7_blob){ printk, strlen(printk) };
	fx.file.cmdlines = (struct v7_blob){ cmdlines, strlen(cmdlines) };
	r = open_written(&fx.file);
	assert(v7_meta_read(r, &m, error, sizeof(error)) == 0);
	assert(same(m.header_page, fx.file.header_page));
	assert(same(m.header_event, fx.file.header_event));
	assert(same(m.kallsyms, fx.file.kallsyms) && same(m.printk, fx.file.printk));
	assert(same(m.cmdlines, fx.file.cmdlines));
	assert(m.n_ftrace_formats == fx.file.n_ftrace_formats);
	assert(m.n_systems == 1 && strcmp(m.systems[0].name, fx.file.systems[0].name) == 0);
	assert(m.systems[0].n_formats == 1 && same(m.systems[0].formats[0], fx.formats[0]));
	v7_reader_free(r);

	/* Written again from what was read: the same metadata once more. */
	copy = fx.file;
	v7_meta_to_file(&m, &copy);
	r = open_written(&copy);
	assert(v7_meta_read(r, &again, error, sizeof(error)) == 0);
	assert(same(again.header_page, m.header_page) && same(again.kallsyms, m.kallsyms));
	assert(again.n_systems == 1 && same(again.systems[0].formats[0], fx.formats[0]));
	v7_reader_free(r);
	v7_meta_done(&again);

	/* Lengths and counts past their section: refused, never read past. */
	{
		static const struct {
			int id;
			size_t n;
			const char *body;
		} bad[] = {
			/* header_page claims 2^40 bytes */
			{ V7_SEC_HEADER_INFO, 20, "header_page\0\0\0\0\0\0\1\0\0" },
			{ V7_SEC_HEADER_INFO, 8, "garbage\0" },
			/* a million ftrace formats in 4 bytes */
			{ V7_SEC_FTRACE_EVENTS, 4, "\x40\x42\x0f\0" },
			/* one system whose name never ends */
			{ V7_SEC_EVENT_FORMATS, 8, "\1\0\0\0sche" },
			/* kallsyms of 255 bytes in 6 */
			{ V7_SEC_KALLSYMS, 6, "\xff\0\0\0ab" },
		};
		static const char good_header[] = "header_page\0\1\0\0\0\0\0\0\0x"
						  "header_event\0\0\0\0\0\0\0\0\0";

		for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
			struct v7_meta b = {};
			size_t h = V7_SEC_HEADER_INFO - V7_SEC_FIRST_META;
			size_t k = (size_t)(bad[i].id - V7_SEC_FIRST_META);

			b.body[h] = malloc(sizeof(good_header) - 1);
			memcpy(b.body[h], good_header, sizeof(good_header) - 1);
			b.n_body[h] = sizeof(good_header) - 1;
			assert(v7_meta_parse(&b) == 0 && b.header_page.size == 1);
			v7_meta_done(&b);
			b.body[h] = malloc(sizeof(good_header) - 1);
			memcpy(b.body[h], good_header, sizeof(good_header) - 1);
			b.n_body[h] = sizeof(good_header) - 1;
			free(b.body[k]);
			b.body[k] = malloc(bad[i].n);
			memcpy(b.body[k], bad[i].body, bad[i].n);
			b.n_body[k] = bad[i].n;
			assert(v7_meta_parse(&b) == -EBADMSG);
			v7_meta_done(&b);
		}
	}
	v7_meta_done(&m);
	fixture_done(&fx);
	printf("v7-meta: OK\n");
	return 0;
}
