// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A session's dynamic probes (--probe): kprobes and uprobes created for
 * it at setup, in a group of its own ("ftraced_<tag>_<id>"), so two
 * sessions may give a probe the same name and a crash leaves probes that
 * the next start can tell apart from everyone else's. The kernel parses
 * fetch arguments; libtracefs's dynevent API writes the definitions, and
 * libelf turns a uprobe's symbol into the file offset the kernel wants.
 * Main thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tracefs.h>

#include "daemon/base/log.h"
#include "daemon/kernel/probe.h"

#define PROBE_NAME_MAX 64u /* the kernel's MAX_EVENT_NAME_LEN, NUL included, less one */

struct probe_set {
	char system[48];
	unsigned n;
	struct tracefs_dynevent **events; /* created, n of them */
};

static bool name_valid(const char *s, size_t n)
{
	if (n == 0 || n > PROBE_NAME_MAX || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

/* "SYMBOL+OFF", "SYMBOL" or "0xOFF": the symbol (or "") and the offset. */
static int split_location(const char *loc, char *symbol, size_t n_symbol, uint64_t *offset)
{
	const char *plus = strchr(loc, '+');
	size_t n = plus ? (size_t)(plus - loc) : strlen(loc);
	char *end;

	*offset = 0;
	if (strncmp(loc, "0x", 2) == 0 && !plus) {
		errno = 0;
		*offset = strtoull(loc, &end, 16);
		if (errno || end == loc + 2 || *end)
			return -EINVAL;
		symbol[0] = '\0';
		return 0;
	}
	if (!name_valid(loc, n) || n >= n_symbol)
		return -EINVAL;
	memcpy(symbol, loc, n);
	symbol[n] = '\0';
	if (plus) {
		errno = 0;
		*offset = strtoull(plus + 1, &end, 0);
		if (errno || end == plus + 1 || *end)
			return -EINVAL;
	}
	return 0;
}

/**
 * probe_def_parse() - read one --probe definition.
 * @def: "p|r:NAME SYMBOL[+OFF] [ARGS]" (kprobe) or "p|r:NAME /PATH:SYMBOL[+OFF]|0xOFF [ARGS]"
 *       (uprobe)
 * @ret: the parts; ret->args points into @def
 * @error: receives what is wrong
 * @n_error: its size
 *
 * Return: 0 or -EINVAL.
 */
int probe_def_parse(const char *def, struct probe_def *ret, char *error, size_t n_error)
{
	const char *name, *target, *end;
	size_t n;

	*ret = (struct probe_def){};
	if ((def[0] != 'p' && def[0] != 'r') || def[1] != ':') {
		snprintf(error, n_error, "probe '%s': expected p:NAME or r:NAME, then where", def);
		return -EINVAL;
	}
	ret->ret = def[0] == 'r';
	name = def + 2;
	n = strcspn(name, " ");
	if (!name_valid(name, n)) {
		snprintf(error, n_error, "probe '%s': the name must be 1 to %u letters, digits and "
			 "_ (the group is the session's own)", def, PROBE_NAME_MAX);
		return -EINVAL;
	}
	memcpy(ret->name, name, n);
	target = name + n + strspn(name + n, " ");
	n = strcspn(target, " ");
	if (n == 0 || n >= sizeof(ret->target)) {
		snprintf(error, n_error, "probe '%s': where is it? (a kernel SYMBOL[+OFF], or "
			 "/PATH:SYMBOL or /PATH:0xOFF)", def);
		return -EINVAL;
	}
	end = target + n + strspn(target + n, " ");
	ret->args = *end ? end : NULL;
	if (target[0] == '/') {
		const char *colon = memrchr(target, ':', n);

		ret->uprobe = true;
		if (!colon || colon == target + 1 ||
		    split_location(strndupa(colon + 1, (size_t)(target + n - colon - 1)), ret->symbol,
				   sizeof(ret->symbol), &ret->offset) < 0) {
			snprintf(error, n_error, "probe '%s': a uprobe is at /PATH:SYMBOL[+OFF] or "
				 "/PATH:0xOFF", def);
			return -EINVAL;
		}
		memcpy(ret->target, target, (size_t)(colon - target));
		return 0;
	}
	memcpy(ret->target, target, n);
	if (split_location(ret->target, ret->symbol, sizeof(ret->symbol), &ret->offset) < 0) {
		snprintf(error, n_error, "probe '%s': a kprobe is at SYMBOL[+OFF] or 0xADDRESS", def);
		return -EINVAL;
	}
	ret->symbol[0] = '\0'; /* the kernel resolves its own symbols */
	return 0;
}

/* The file offset of @vaddr: where the loadable segment holding it starts in the file. */
static int vaddr_to_offset(Elf *e, uint64_t vaddr, uint64_t *ret)
{
	size_t n;

	if (elf_getphdrnum(e, &n) < 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
			*ret = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ENOENT;
}

/* A defined function @symbol's address in .symtab (or .dynsym, for stripped files). */
static int find_symbol(Elf *e, const char *symbol, uint64_t *ret)
{
	for (Elf_Scn *scn = elf_nextscn(e, NULL); scn; scn = elf_nextscn(e, scn)) {
		Elf_Data *data;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    sh.sh_entsize == 0)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			const char *name;
			GElf_Sym sym;

			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    (GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
			     GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC))
				continue;
			name = elf_strptr(e, sh.sh_link, sym.st_name);
			if (name && strcmp(name, symbol) == 0) {
				*ret = sym.st_value;
				return 0;
			}
		}
	}
	return -ENOENT;
}

/*
 * The kernel answers a uprobe on a file that is not there, or past its
 * end, with EINVAL and no word on which: said here, with the numbers.
 */
static int uprobe_offset_check(const char *def, const char *path, uint64_t offset, char *error,
			       size_t n_error)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		int r = negative_errno();

		snprintf(error, n_error, "probe '%s': cannot use '%s': %s", def, path, strerror(-r));
		return r;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(error, n_error, "probe '%s': '%s' is not a regular file (a uprobe is in an "
			 "executable or library)", def, path);
		return -EINVAL;
	}
	if (offset >= (uint64_t)st.st_size) {
		snprintf(error, n_error, "probe '%s': offset 0x%" PRIx64 " is past the end of '%s' "
			 "(%" PRIu64 " bytes); a uprobe's offset counts from the file's start",
			 def, offset, path, (uint64_t)st.st_size);
		return -EINVAL;
	}
	return 0;
}

/**
 * elf_symbol_offset() - where a function starts in an ELF file, as uprobes count.
 * @path: the executable or library
 * @symbol: a function it defines
 * @ret: its offset in the file
 * @error: receives what went wrong
 * @n_error: its size
 *
 * Return: 0, -ENOENT (no such function), or another -errno.
 */
int elf_symbol_offset(const char *path, const char *symbol, uint64_t *ret, char *error,
		      size_t n_error)
{
	_cleanup_close_ int fd = -EBADF;
	uint64_t vaddr;
	Elf *e;
	int r;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		snprintf(error, n_error, "libelf: %s", elf_errmsg(-1));
		return -EINVAL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r = negative_errno();
		snprintf(error, n_error, "cannot open '%s': %s", path, strerror(-r));
		return r;
	}
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		snprintf(error, n_error, "'%s' is not an ELF file", path);
		elf_end(e);
		return -ENOEXEC;
	}
	r = find_symbol(e, symbol, &vaddr);
	if (r < 0)
		snprintf(error, n_error, "'%s' defines no function '%s'", path, symbol);
	else if ((r = vaddr_to_offset(e, vaddr, ret)) < 0)
		snprintf(error, n_error, "'%s': function '%s' is in no loadable segment", path,
			 symbol);
	elf_end(e);
	return r;
}

/* The kernel's last word on a refused definition, without its timestamp. */
static void kernel_refused(const char *def, int r, char *error, size_t n_error)
{
	_cleanup_free_ char *log = tracefs_error_last(NULL);
	const char *msg = log ? strchr(log, ']') : NULL;

	msg = msg ? msg + 1 + strspn(msg + 1, " ") : strerror(-r);
	snprintf(error, n_error, "probe '%s' refused by the kernel: %.*s", def,
		 (int)strcspn(msg, "\n"), msg);
}

static struct tracefs_dynevent *probe_alloc(const char *system, const struct probe_def *d,
					    uint64_t offset)
{
	if (!d->uprobe)
		return d->ret ? tracefs_kretprobe_alloc(system, d->name, d->target, d->args, 0) :
				tracefs_kprobe_alloc(system, d->name, d->target, d->args);
	return d->ret ? tracefs_uretprobe_alloc(system, d->name, d->target, offset, d->args) :
			tracefs_uprobe_alloc(system, d->name, d->target, offset, d->args);
}

/* Creates one probe in the set's group. */
static int probe_add(struct probe_set *ps, const char *def, char *error, size_t n_error)
{
	struct tracefs_dynevent *ev, **grown;
	struct probe_def d;
	uint64_t offset;
	int r;

	r = probe_def_parse(def, &d, error, n_error);
	if (r < 0)
		return r;
	if (!tracefs_file_exists(NULL, d.uprobe ? "uprobe_events" : "kprobe_events")) {
		snprintf(error, n_error, "probe '%s': this kernel has no %s (CONFIG_%s_EVENTS)",
			 def, d.uprobe ? "uprobes" : "kprobes", d.uprobe ? "UPROBE" : "KPROBE");
		return -EOPNOTSUPP;
	}
	offset = d.offset;
	if (d.uprobe && d.symbol[0]) {
		uint64_t at;

		r = elf_symbol_offset(d.target, d.symbol, &at, error, n_error);
		if (r < 0)
			return r;
		offset += at;
	}
	if (d.uprobe) {
		r = uprobe_offset_check(def, d.target, offset, error, n_error);
		if (r < 0)
			return r;
	}
	grown = realloc(ps->events, (ps->n + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	ps->events = grown;
	ev = probe_alloc(ps->system, &d, offset);
	if (!ev)
		return -ENOMEM;
	tracefs_error_clear(NULL);
	if (tracefs_dynevent_create(ev) < 0) {
		r = errno ? -errno : -EINVAL;
		kernel_refused(def, r, error, n_error);
		tracefs_dynevent_free(ev);
		return r;
	}
	ps->events[ps->n++] = ev;
	log_debug("Probe %s:%s created (%s)", ps->system, d.name, def);
	return 0;
}

/**
 * probe_set_create() - create a session's probes, in a group of its own.
 * @tag: the daemon's instance tag
 * @id: the session's id
 * @defs: --probe definitions
 * @n: how many
 * @ret: the set; probe_set_system() names the group to enable
 * @error: receives the first problem, naming the definition
 * @n_error: its size
 *
 * Return: 0, or -errno with @error set and nothing left behind.
 */
int probe_set_create(uint32_t tag, uint32_t id, char *const *defs, unsigned n,
		     struct probe_set **ret, char *error, size_t n_error)
{
	_cleanup_(probe_set_freep) struct probe_set *ps = calloc(1, sizeof(*ps));
	int r;

	if (!ps)
		return -ENOMEM;
	snprintf(ps->system, sizeof(ps->system), PROBE_GROUP_PREFIX "%08" PRIx32 "_%" PRIu32,
		 tag, id);
	for (unsigned k = 0; k < n; k++) {
		for (unsigned j = 0; j < k; j++) {
			struct probe_def a, b;

			if (probe_def_parse(defs[j], &a, error, n_error) == 0 &&
			    probe_def_parse(defs[k], &b, error, n_error) == 0 &&
			    strcmp(a.name, b.name) == 0) {
				snprintf(error, n_error, "two probes are named '%s'", a.name);
				return -EEXIST;
			}
		}
		r = probe_add(ps, defs[k], error, n_error);
		if (r == -ENOMEM)
			snprintf(error, n_error, "out of memory");
		if (r < 0)
			return r;
	}
	*ret = TAKE_PTR(ps);
	return 0;
}

const char *probe_set_system(const struct probe_set *ps)
{
	return ps->system;
}

/**
 * probe_set_free() - remove the probes from the kernel and free the set.
 * @ps: set or NULL
 *
 * Forced: the event is switched off in every instance first (the session's
 * may still wait for removal, busy), or the kernel refuses the removal.
 *
 * Return: NULL.
 */
struct probe_set *probe_set_free(struct probe_set *ps)
{
	if (!ps)
		return NULL;
	for (unsigned k = ps->n; k-- > 0;) {
		if (tracefs_dynevent_destroy(ps->events[k], true) < 0)
			log_warning_errno(negative_errno(), "Removing a probe of %s failed: %m",
					  ps->system);
		tracefs_dynevent_free(ps->events[k]);
	}
	free(ps->events);
	free(ps);
	return NULL;
}

/**
 * probes_remove_orphans() - remove probes a crashed daemon with @tag left behind.
 * @tag: this daemon's instance tag
 *
 * Called after recovery, which needed their formats.
 *
 * Return: how many were removed, or -errno.
 */
int probes_remove_orphans(uint32_t tag)
{
	struct tracefs_dynevent **all;
	char prefix[32];
	int n = 0;

	snprintf(prefix, sizeof(prefix), PROBE_GROUP_PREFIX "%08" PRIx32 "_", tag);
	all = tracefs_dynevent_get_all(TRACEFS_DYNEVENT_KPROBE | TRACEFS_DYNEVENT_KRETPROBE |
				       TRACEFS_DYNEVENT_UPROBE | TRACEFS_DYNEVENT_URETPROBE, NULL);
	for (size_t k = 0; all && all[k]; k++) {
		_cleanup_free_ char *system = NULL, *event = NULL;

		if (tracefs_dynevent_info(all[k], &system, &event, NULL, NULL, NULL) ==
		    TRACEFS_DYNEVENT_UNKNOWN || !system || strncmp(system, prefix, strlen(prefix)) != 0)
			continue;
		if (tracefs_dynevent_destroy(all[k], true) < 0) {
			log_warning_errno(negative_errno(), "Removing orphaned probe %s:%s failed: %m",
					  system, event);
			continue;
		}
		log_notice("Removed orphaned probe %s:%s", system, event);
		n++;
	}
	tracefs_dynevent_list_free(all);
	return n;
}
