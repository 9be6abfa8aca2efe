// SPDX-License-Identifier: GPL-2.0-or-later
/* The parsers behind the instance module: per-CPU stats and header_page. */
#undef NDEBUG
#include <assert.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>

#include "daemon/kernel/instance.h"

int main(void)
{
	static const char stats[] =
		"entries: 12\noverrun: 34\ncommit overrun: 0\nbytes: 4096\n"
		"oldest event ts:   100.000000\nnow ts:   200.000000\n"
		"dropped events: 56\nread events: 78\n";
	static const char header_16k[] =
		"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
		"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
		"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
		"\tfield: char data;\toffset:16;\tsize:16368;\tsigned:0;\n";
	struct cpu_counters c;
	uint32_t size;

	assert(instance_parse_cpu_counters(stats, &c) == 0);
	assert(c.entries == 12 && c.overrun == 34 && c.dropped == 56 && c.read == 78);
	assert(c.bytes == 4096);
	assert(instance_parse_cpu_counters("garbage", &c) == -EINVAL);

	assert(subbuf_size_from_header_page(header_16k, &size) == 0 && size == 16384);
	assert(subbuf_size_from_header_page("\tfield: u64 timestamp;\n", &size) == -EINVAL);

	/* A gone task's name, as saved_cmdlines keeps it. */
	{
		char comm[17];

		assert(saved_cmdlines_find("1 systemd\n412 python3\n4120 kworker/0:1\n", 412, comm,
					   sizeof(comm)) == 0 && strcmp(comm, "python3") == 0);
		assert(saved_cmdlines_find("4120 kworker/0:1", 4120, comm, sizeof(comm)) == 0 &&
		       strcmp(comm, "kworker/0:1") == 0);
		assert(saved_cmdlines_find("412 python3\n", 41, comm, sizeof(comm)) == -ENOENT);
		assert(saved_cmdlines_find("412\n412python3\n", 412, comm, sizeof(comm)) == -ENOENT);
		assert(saved_cmdlines_find("", 1, comm, sizeof(comm)) == -ENOENT);
	}

	printf("instance-parse: all tests passed\n");
	return 0;
}
