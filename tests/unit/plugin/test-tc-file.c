// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The plugin's file opener (plugin/tc-file.c) given damaged symbol, printk and
 * comm sections: the file still opens, and nothing reads past a section (the
 * ASan and valgrind runs of this test see any byte read past it).
 */
#undef NDEBUG
#include <assert.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/v7-writer.h"
#include "plugin/tc-file.h"
#include "tests/unit/v7-fixture.h"

static void open_with(const char *kallsyms, const char *printk, const char *cmdlines)
{
	struct fixture fx;
	struct tc_file *f = NULL;
	char path[64], error[TC_ERROR_MAX] = "";
	int fd = memfd_create("v7", MFD_CLOEXEC);

	assert(fd >= 0);
	fixture_init(&fx, 4096, /* zstd= */ true, 4);
	fx.file.kallsyms = (struct v7_blob){ kallsyms, strlen(kallsyms) };
	fx.file.printk = (struct v7_blob){ printk, strlen(printk) };
	fx.file.cmdlines = (struct v7_blob){ cmdlines, strlen(cmdlines) };
	assert(v7_write(fd, &fx.file, NULL) == 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	assert(tc_file_open(path, &f, error, sizeof(error)) == 0);
	assert(f->tep != NULL);
	tc_file_free(f);
	fixture_done(&fx);
	close(fd);
}

int main(void)
{
	/* Well formed. */
	open_with("ffffffff81000000 T _text\n", "0xffffffff81234567 : \"hello\\n\"\n", "1 init\n");
	/* printk lines without a ':' or with nothing after it, the last one at the very end
	 * of the section: libtraceevent 1.7 would copy from past the text's end. */
	open_with("", "ffffffff81000000\n0xffffffff81000001 :\n:\"x\"\n::\n"
		      "0xffffffff81000002 : \"ok\"\nffffffff81000003", "");
	open_with("", "ffffffff81000003:", "");
	open_with("", ":", "");
	/* Symbols and comms without their second field. */
	open_with("ffffffff81000000\nffffffff81000001 T\n", "", "1\n2 \nx y\n");
	return 0;
}
