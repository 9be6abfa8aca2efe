// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One file rebuilt by crash recovery (recovery.c): its name beside the
 * file the capture was writing, its CPU statistics with what was lost, the
 * metadata read now (symbols that resolve an earlier boot's addresses, for
 * a persistent history), written into place atomically and counted by its
 * directory's retention. And the newest such file of a directory, which a
 * flight session's status names.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "daemon/base/bounds.h"
#include "daemon/base/log.h"
#include "daemon/store/metadata.h"
#include "daemon/recovery/persistent-history.h"
#include "daemon/recovery/recovered-file.h"
#include "daemon/recovery/recovery-recipe.h"
#include "daemon/store/retention.h"
#include "daemon/store/spool.h"
#include "lib/io-util.h"
#include "lib/v7-writer.h"

/**
 * recovered_file_name() - where a recovered file goes: "dir/name.dat" -> "dir/name<suffix>".
 * @target: the file the capture was writing
 * @suffix: e.g. "-recovered.dat"
 * @buf: receives the path
 * @n: its size
 *
 * Return: 0, or -ENAMETOOLONG.
 */
int recovered_file_name(const char *target, const char *suffix, char *buf, size_t n)
{
	size_t len = strlen(target);

	if (len > 4 && strcmp(target + len - 4, ".dat") == 0)
		len -= 4;
	if ((size_t)snprintf(buf, n, "%.*s%s", (int)len, target, suffix) >= n)
		return -ENAMETOOLONG;
	return 0;
}

/* Creates the directories of a relative path (sessions/<name>/, recovered/). */
/*
 * One directory at a time, each opened with O_NOFOLLOW from its parent's
 * fd: a symlink planted anywhere on the way (sessions/NAME -> /etc) is
 * refused instead of followed, so nothing is created or written outside
 * the state directory.
 */
static int open_parent(int state_dir_fd, const char *path, const char **ret_name)
{
	const char *slash = strrchr(path, '/'), *comp = path;
	int fd;

	fd = openat(state_dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return negative_errno();
	while (slash && comp < slash) {
		const char *end = strchr(comp, '/');
		char name[NAME_MAX + 1];
		int next;

		if ((size_t)(end - comp) >= sizeof(name)) {
			close(fd);
			return -ENAMETOOLONG;
		}
		memcpy(name, comp, (size_t)(end - comp));
		name[end - comp] = '\0';
		if (mkdirat(fd, name, 0750) < 0 && errno != EEXIST) {
			next = negative_errno();
			close(fd);
			return next;
		}
		next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		close(fd);
		if (next < 0)
			return errno == ELOOP || errno == ENOTDIR ? -ELOOP : negative_errno();
		fd = next;
		comp = end + 1;
	}
	*ret_name = slash ? slash + 1 : path;
	return fd;
}


void recovered_file_cpustat_done(struct cpustat_texts *t)
{
	for (unsigned i = 0; t->texts && i < 2 * t->n_cpus; i++)
		free(t->texts[i]);
	free(t->texts);
}

/*
 * One CPU's texts. @end: the orphan's stats text (NULL: it was gone);
 * @discarded: events read from the ring but in no spool (UINT64_MAX:
 * unknown); @start: the counters the spool began with.
 */
int recovered_file_cpustat_set(struct cpustat_texts *t, const struct parsed_recipe *p,
				unsigned cpu, const char *end, uint64_t discarded,
				const struct spool_start *start)
{
	char lost[64] = "", gap[RECIPE_NOTE_MAX + 16] = "";
	const char *warning = "";

	if (!end)
		warning = "ftraced-warning: the daemon stopped before this file was finished, and "
			  "the ring buffer's rest was gone when it was recovered: events after the "
			  "last one here were lost, uncounted\n";
	else if (discarded == UINT64_MAX)
		warning = "ftraced-warning: the daemon stopped before this file was finished; "
			  "how many events it had read but not stored is unknown\n";
	else if (discarded > 0)
		snprintf(lost, sizeof(lost), "ftraced-discarded: %" PRIu64 "\n", discarded);
	if (p->gap[0])
		snprintf(gap, sizeof(gap), "ftraced-gap: %s\n", p->gap);
	if (asprintf(&t->texts[cpu], "CPU: %u\n%s%s%s%s", cpu, end ?: "", lost, warning, gap) < 0) {
		t->texts[cpu] = NULL;
		return -ENOMEM;
	}
	if (start->read == UINT64_MAX || start->overrun == UINT64_MAX)
		return 0;
	if (asprintf(&t->texts[t->n_cpus + cpu], "CPU: %u (when this file began)\n"
		     "overrun: %" PRIu64 "\ndropped events: %" PRIu64 "\nread events: %" PRIu64 "\n",
		     cpu, start->overrun, start->dropped, start->read) < 0) {
		t->texts[t->n_cpus + cpu] = NULL;
		return -ENOMEM;
	}
	return 0;
}

/**
 * recovered_file_write() - write one recovered file from per-CPU data regions, into place atomically.
 * @state_dir_fd: the state directory
 * @p: the capture's recipe
 * @path: where, relative to @state_dir_fd (recovered_file_name())
 * @data: per CPU, the captured data
 * @stats: per CPU, its statistics texts
 * @ks: this boot's symbols (NULL: none)
 * @last_boot_info: a persistent history's (for its symbols), or NULL
 *
 * The file joins its directory's retention.
 *
 * Return: 0 or -errno (nothing left in place).
 */
int recovered_file_write(int state_dir_fd, const struct parsed_recipe *p, const char *path,
			 const struct v7_cpu_data *data, const struct cpustat_texts *stats,
			 struct kallsyms *ks, const char *last_boot_info)
{
	char tmp[NAME_MAX + 1], how[160] = "", version[256];
	struct global_meta gm = {};
	int dir_fd, fd = -EBADF, r;
	const char *name;
	struct v7_file f;

	dir_fd = open_parent(state_dir_fd, path, &name);
	if (dir_fd < 0)
		return dir_fd;
	snprintf(tmp, sizeof(tmp), ".%.200s.tmp", name);
	fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0640);
	r = fd < 0 ? negative_errno() :
		     global_meta_read(&gm, &p->events, ks, p->zstd, /* no_events= */ false);
	if (r >= 0 && last_boot_info)
		persistent_history_symbols(&gm, ks, last_boot_info, how, sizeof(how));
	snprintf(version, sizeof(version), "ftraced " FTRACED_VERSION " (recovered%s%s)",
		 how[0] ? "; " : "", how);
	if (r >= 0) {
		f = (struct v7_file){
			.compression = p->zstd ? V7_COMPRESSION_ZSTD : V7_COMPRESSION_NONE,
			.metadata_zstd = true, /* raw data, compressed symbols */
			.level = p->level,
			.version = version,
			.n_cpus = p->n_cpus,
			.n_data = p->n_cpus,
			.data = data,
			.date = p->date[0] ? p->date : NULL,
			.n_cpustat = stats->texts ? 2 * (size_t)stats->n_cpus : 0,
			.cpustat = (const char *const *)stats->texts,
		};
		metadata_to_v7(&p->imeta, &gm, &f);
		if (getrandom(&f.trace_id, sizeof(f.trace_id), 0) != sizeof(f.trace_id))
			f.trace_id = (uint64_t)time(NULL);
		r = v7_write(fd, &f, NULL);
	}
	if (r >= 0 && fsync(fd) < 0)
		r = negative_errno();
	if (r >= 0 && renameat(dir_fd, tmp, dir_fd, name) < 0)
		r = negative_errno();
	if (r >= 0 && fsync(dir_fd) < 0)
		r = negative_errno();
	if (r < 0 && fd >= 0)
		unlinkat(dir_fd, tmp, 0);
	/*
	 * In a session's directory (segments, or snapshots): its retention
	 * counts and deletes it like the files it wrote. In recovered/ (records
	 * whose output could not be written): a budget of its own, oldest first.
	 */
	if (r >= 0 && retention_record(dir_fd, name) < 0)
		log_warning("Recovery: cannot add '%s' to its directory's manifest", name);
	if (r >= 0 && strncmp(path, RECOVERED_DIR "/", strlen(RECOVERED_DIR "/")) == 0) {
		static const struct retention_limits recovered = {
			.max_files = RECOVERED_MAX_FILES,
			.max_age_usec = RECOVERED_MAX_AGE_USEC,
			.keep_free_percent = RECOVERED_KEEP_FREE_PERCENT,
		};
		struct retention_usage usage;

		if (retention_apply(dir_fd, "", &recovered, &usage) >= 0 && usage.n_deleted > 0)
			log_notice("Recovery: deleted the %u oldest file(s) of %s/ (at most %u files, "
				   "%u days, %u%% of the file system kept free)", usage.n_deleted,
				   RECOVERED_DIR, RECOVERED_MAX_FILES,
				   (unsigned)(RECOVERED_MAX_AGE_USEC / 86400000000ull),
				   RECOVERED_KEEP_FREE_PERCENT);
	}
	safe_close(fd);
	safe_close(dir_fd);
	global_meta_done(&gm);
	return r;
}

/**
 * recovered_file_newest() - the newest recovered file of a directory, for status to name.
 * @dir_fd: a session's directory (segments or snapshots)
 * @name: receives its name, "" if there is none
 * @n: @name's size
 */
void recovered_file_newest(int dir_fd, char *name, size_t n)
{
	const size_t n_suffix = strlen("-recovered.dat");
	struct timespec newest = {};
	struct dirent *de;
	struct stat st;
	int fd;
	DIR *d;

	name[0] = '\0';
	/* Its own open file: a dup would share (and move) @dir_fd's offset. */
	fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d)
		safe_close(fd);
	while (d && (de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (len <= n_suffix || len >= n || strcmp(de->d_name + len - n_suffix,
							  "-recovered.dat") != 0 ||
		    fstatat(dir_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (!name[0] || st.st_mtim.tv_sec > newest.tv_sec ||
		    (st.st_mtim.tv_sec == newest.tv_sec && st.st_mtim.tv_nsec > newest.tv_nsec)) {
			newest = st.st_mtim;
			memcpy(name, de->d_name, len + 1);
		}
	}
	if (d)
		closedir(d);
}
