// SPDX-License-Identifier: GPL-2.0-or-later
/* Symbols for a trace of an earlier boot: kallsyms text moved by the KASLR delta. */
#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/kernel/kallsyms-text.h"

int main(void)
{
	/* Measured in Debian's 6.12 under qemu: _text moved by 0xde00000 between two boots. */
	static const char now[] =
		"0000000000000000 A fixed_percpu_data\n"
		"0000000000001000 A cpu_debug_store\n"
		"ffffffffb2600000 T _text\n"
		"ffffffffb2a40510 T ksys_write\n"
		"ffffffffb328ab80 T schedule\n"
		"ffffffffc0a01000 t virtblk_probe\t[virtio_blk]\n"
		"ffffffffb3800000 D _data\n";
	static const char then[] =
		"0000000000000000 A fixed_percpu_data\n"
		"0000000000001000 A cpu_debug_store\n"
		"ffffffffa4800000 T _text\n"
		"ffffffffa4c40510 T ksys_write\n"
		"ffffffffa548ab80 T schedule\n"
		"ffffffffc0a01000 t virtblk_probe\t[virtio_blk]\n"
		"ffffffffa5a00000 D _data\n";
	uint64_t text;
	int64_t delta;
	char *out;
	size_t n;

	assert(kallsyms_text_address(now, strlen(now), "_text", &text) == 0);
	assert(text == 0xffffffffb2600000ull);
	assert(kallsyms_text_address(now, strlen(now), "schedule", &text) == 0);
	assert(text == 0xffffffffb328ab80ull);
	/* A module's symbol is not the kernel's; a prefix is not the name. */
	assert(kallsyms_text_address(now, strlen(now), "virtblk_probe", &text) == -ENOENT);
	assert(kallsyms_text_address(now, strlen(now), "_te", &text) == -ENOENT);
	assert(kallsyms_text_address("garbage\n\nffff\n", 15, "_text", &text) == -ENOENT);

	/* 6.12's form, and the later one giving the old address. */
	assert(last_boot_text_delta("text delta:\t232783872\ndata delta:\t232783872\n", 0,
				    &delta) == 0 && delta == 232783872);
	assert(last_boot_text_delta("text delta:\t-4096\n", 0, &delta) == 0 && delta == -4096);
	assert(last_boot_text_delta("ffffffffa4800000\t[kernel]\nffffffffc0000000\text4\n",
				    0xffffffffb2600000ull, &delta) == 0 && delta == 0xde00000);
	assert(last_boot_text_delta("# Current\n", 0, &delta) == -ENODATA);
	assert(last_boot_text_delta("", 0, &delta) == -ENODATA);

	/* Moved back: the kernel's symbols where the old boot had them, the rest as it was. */
	assert(kallsyms_text_shift(now, strlen(now), 0xffffffffb2600000ull, 0xde00000, &out,
				   &n) == 0);
	assert(n == strlen(then) && strcmp(out, then) == 0);
	free(out);
	/* A delta of 0 changes nothing; a text without a final newline is fine. */
	assert(kallsyms_text_shift(now, strlen(now) - 1, 0, 0, &out, &n) == 0);
	assert(n == strlen(now) - 1 && memcmp(out, now, n) == 0 && out[n] == '\0');
	free(out);
	return 0;
}
