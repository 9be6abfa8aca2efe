// SPDX-License-Identifier: GPL-2.0-or-later
/* --probe definitions read, and a uprobe's symbol found in a real ELF file (this test's own). */
#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon/kernel/probe.h"

static char error[256];

/* A function of this executable whose file offset is found from its symbols. */
__attribute__((noinline, used)) int probe_test_target(int x);
__attribute__((noinline, used)) int probe_test_target(int x)
{
	return x + 1;
}

static void test_parse(void)
{
	struct probe_def d;

	assert(probe_def_parse("p:opened do_sys_openat2 dfd=%di:s32", &d, error, sizeof(error)) == 0);
	assert(!d.uprobe && !d.ret && strcmp(d.name, "opened") == 0);
	assert(strcmp(d.target, "do_sys_openat2") == 0 && strcmp(d.args, "dfd=%di:s32") == 0);
	assert(probe_def_parse("r:ret vfs_read+0x10", &d, error, sizeof(error)) == 0);
	assert(d.ret && strcmp(d.target, "vfs_read+0x10") == 0 && d.args == NULL);
	assert(probe_def_parse("p:u /usr/bin/x:main+8 a=%ax b=%bx", &d, error, sizeof(error)) == 0);
	assert(d.uprobe && strcmp(d.target, "/usr/bin/x") == 0 && strcmp(d.symbol, "main") == 0);
	assert(d.offset == 8 && strcmp(d.args, "a=%ax b=%bx") == 0);
	assert(probe_def_parse("p:u /lib/a:b.so:0x4f0", &d, error, sizeof(error)) == 0);
	assert(strcmp(d.target, "/lib/a:b.so") == 0 && d.symbol[0] == '\0' && d.offset == 0x4f0);

	assert(probe_def_parse("x:a b", &d, error, sizeof(error)) == -EINVAL);
	assert(probe_def_parse("p:", &d, error, sizeof(error)) == -EINVAL);
	assert(probe_def_parse("p:grp/name do_sys_open", &d, error, sizeof(error)) == -EINVAL);
	assert(strstr(error, "the group is the session's own"));
	assert(probe_def_parse("p:1abc do_sys_open", &d, error, sizeof(error)) == -EINVAL);
	assert(probe_def_parse("p:name", &d, error, sizeof(error)) == -EINVAL);
	assert(probe_def_parse("p:name /usr/bin/x", &d, error, sizeof(error)) == -EINVAL);
	assert(probe_def_parse("p:name /usr/bin/x:0xzz", &d, error, sizeof(error)) == -EINVAL);
	assert(probe_def_parse("p:name /usr/bin/x:sym+", &d, error, sizeof(error)) == -EINVAL);
	assert(probe_def_parse("p:name a;b", &d, error, sizeof(error)) == -EINVAL);
}

static void test_elf(void)
{
	uint64_t at;

	assert(elf_symbol_offset("/proc/self/exe", "probe_test_target", &at, error,
				 sizeof(error)) == 0);
	assert(at > 0);
	assert(elf_symbol_offset("/proc/self/exe", "no_such_function_here", &at, error,
				 sizeof(error)) == -ENOENT);
	assert(strstr(error, "defines no function 'no_such_function_here'"));
	assert(elf_symbol_offset("/proc/self/status", "x", &at, error, sizeof(error)) == -ENOEXEC);
	assert(elf_symbol_offset("/nonexistent", "x", &at, error, sizeof(error)) == -ENOENT);
	assert(strstr(error, "cannot open '/nonexistent'"));
}

int main(void)
{
	test_parse();
	test_elf();
	printf("probe: all tests passed\n");
	return 0;
}
