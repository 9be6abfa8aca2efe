// SPDX-License-Identifier: GPL-2.0-or-later
/* command_split(): how an --on-segment command line becomes argv, without a shell. */
#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon/output/runner.h"

static int split(const char *line, char **argv, size_t n_argv)
{
	static char buf[256];

	return command_split(line, buf, sizeof(buf), argv, n_argv);
}

int main(void)
{
	char *argv[8];

	assert(split("/usr/bin/rsync -a  dest", argv, 8) == 3);
	assert(strcmp(argv[0], "/usr/bin/rsync") == 0 && strcmp(argv[1], "-a") == 0);
	assert(strcmp(argv[2], "dest") == 0 && argv[3] == NULL);
	assert(split("/bin/sh -c 'cp \"$0\" /x y'", argv, 8) == 3);
	assert(strcmp(argv[2], "cp \"$0\" /x y") == 0);
	assert(split("/a \"b c\\\" d\" e\\ f 'g\\h'", argv, 8) == 4);
	assert(strcmp(argv[1], "b c\" d") == 0 && strcmp(argv[2], "e f") == 0);
	assert(strcmp(argv[3], "g\\h") == 0);
	assert(split("/a ''", argv, 8) == 2 && strcmp(argv[1], "") == 0);

	assert(split("", argv, 8) == -EINVAL);
	assert(split("   ", argv, 8) == -EINVAL);
	assert(split("/a 'open", argv, 8) == -EINVAL);
	assert(split("/a \"open", argv, 8) == -EINVAL);
	assert(split("/a trailing\\", argv, 8) == -EINVAL);
	assert(split("/a b c d e f g h", argv, 8) == -E2BIG);

	printf("runner: all tests passed\n");
	return 0;
}
