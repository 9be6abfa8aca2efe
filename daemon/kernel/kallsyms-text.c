// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * /proc/kallsyms text for a trace of an earlier boot. A boot-mapped ring
 * (Linux 6.12 and later) keeps the addresses of the boot that wrote it:
 * stacks and function events hold that boot's kernel text, which KASLR
 * placed elsewhere than this boot's. The kernel's last_boot_info says how
 * far it moved; the symbols written beside such a trace are this boot's,
 * moved back by as much. Pure text work, no I/O; unit-tested
 * (test-kallsyms-text.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/kernel/kallsyms-text.h"

/* One "ADDRESS TYPE NAME[\t[MODULE]]" line of @text, from @p to its end @e. */
struct sym_line {
	const char *p, *e;
	uint64_t addr;
	size_t n_addr;   /* hex digits */
	const char *name;
	size_t n_name;
	bool module;
};

static bool parse_line(const char *p, const char *end, struct sym_line *l)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p)), *tab;
	char *after;

	*l = (struct sym_line){ .p = p, .e = nl ? nl : end };
	errno = 0;
	l->addr = strtoull(p, &after, 16);
	if (errno || after == p || after >= l->e || *after != ' ')
		return false;
	l->n_addr = (size_t)(after - p);
	/* " T name": one type letter between single spaces. */
	if (l->e - after < 4 || after[2] != ' ')
		return false;
	l->name = after + 3;
	l->n_name = (size_t)(l->e - l->name);
	tab = memchr(l->name, '\t', l->n_name);
	if (tab) {
		l->module = true;
		l->n_name = (size_t)(tab - l->name);
	}
	return true;
}

static const char *next_line(const struct sym_line *l, const char *end)
{
	return l->e < end ? l->e + 1 : end;
}

/**
 * kallsyms_text_address() - the address of a core kernel symbol in a kallsyms text.
 * @text: /proc/kallsyms's contents
 * @n: their length
 * @name: the symbol, e.g. "_text"
 * @ret: its address
 *
 * Return: 0, or -ENOENT if no line (outside modules) names it.
 */
int kallsyms_text_address(const char *text, size_t n, const char *name, uint64_t *ret)
{
	const char *p = text, *end = text + n;
	size_t len = strlen(name);
	struct sym_line l;

	while (p < end) {
		if (parse_line(p, end, &l) && !l.module && l.n_name == len &&
		    memcmp(l.name, name, len) == 0) {
			*ret = l.addr;
			return 0;
		}
		p = next_line(&l, end);
	}
	return -ENOENT;
}

/**
 * kallsyms_text_shift() - a kallsyms text with the kernel's own symbols moved.
 * @text: /proc/kallsyms's contents
 * @n: their length
 * @base: the lowest address that moves (this boot's _text): per-CPU offsets
 *        and other absolute values below it stay
 * @delta: subtracted from every address of the kernel's own from @base on;
 *         modules' symbols stay (6.12 does not say where their last boot
 *         put them)
 * @ret: the new text, NUL-terminated, for the caller to free; each address
 *       keeps its width, so it is as long as @text
 * @ret_n: its length
 *
 * Return: 0 or -ENOMEM.
 */
int kallsyms_text_shift(const char *text, size_t n, uint64_t base, int64_t delta, char **ret,
			size_t *ret_n)
{
	const char *p = text, *end = text + n;
	char *out = malloc(n + 1), digits[24];
	struct sym_line l;

	if (!out)
		return -ENOMEM;
	memcpy(out, text, n);
	out[n] = '\0';
	while (p < end) {
		if (parse_line(p, end, &l) && !l.module && l.addr >= base && l.n_addr <= 16) {
			uint64_t moved = l.addr - (uint64_t)delta;

			/* Widths are the kernel's (16 digits on 64-bit): keep them. */
			snprintf(digits, sizeof(digits), "%0*" PRIx64, (int)l.n_addr, moved);
			if (strlen(digits) == l.n_addr)
				memcpy(out + (l.p - text), digits, l.n_addr);
		}
		p = next_line(&l, end);
	}
	*ret = out;
	*ret_n = n;
	return 0;
}

/**
 * last_boot_text_delta() - how far KASLR moved the kernel since the boot a ring was written in.
 * @info: a boot-mapped instance's last_boot_info
 * @text_now: this boot's _text, for kernels that give the old address instead of the delta
 * @ret: this boot's text address minus that boot's
 *
 * 6.12 to 6.14 write "text delta:\t<signed decimal>"; later kernels write
 * the last boot's "<hex address>\t[kernel]", then its modules.
 *
 * Return: 0, or -ENODATA when @info has neither (the ring holds nothing of
 * an earlier boot).
 */
int last_boot_text_delta(const char *info, uint64_t text_now, int64_t *ret)
{
	for (const char *p = info; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		unsigned long long old;
		long long delta;
		int used = 0;

		if (sscanf(p, "text delta: %lld%n", &delta, &used) == 1 && used > 0) {
			*ret = delta;
			return 0;
		}
		if (sscanf(p, "%llx\t[kernel]%n", &old, &used) == 1 && used > 0) {
			*ret = (int64_t)(text_now - old);
			return 0;
		}
	}
	return -ENODATA;
}
