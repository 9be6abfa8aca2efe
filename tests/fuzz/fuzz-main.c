// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Replay driver for the fuzz targets when they are not built for libFuzzer:
 * runs LLVMFuzzerTestOneInput() on every file of the corpus directories
 * given, so every corpus (seeds and every crash input ever found) is
 * replayed as an ordinary test on every build.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rbe");
	uint8_t *buf;
	long n;

	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n > 0 ? (size_t)n : 1);
	if (!buf || (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n)) {
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

int main(int argc, char *argv[])
{
	unsigned n = 0;

	for (int i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		struct dirent *de;

		if (!d) {
			if (run_file(argv[i]) < 0) {
				fprintf(stderr, "cannot read '%s'\n", argv[i]);
				return 1;
			}
			n++;
			continue;
		}
		while ((de = readdir(d))) {
			char path[4096];

			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], de->d_name);
			if (run_file(path) < 0) {
				fprintf(stderr, "cannot read '%s'\n", path);
				closedir(d);
				return 1;
			}
			n++;
		}
		closedir(d);
	}
	printf("%u inputs replayed\n", n);
	return n > 0 ? 0 : 1;
}
