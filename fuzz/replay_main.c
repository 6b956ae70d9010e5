/*
 * replay_main.c - runs a libFuzzer target over its saved corpus without
 * libFuzzer, so that `make test` replays every corpus under ASan+UBSan with
 * gcc.  Usage: replay_X FILE_OR_DIR...  Prints one summary line.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "replay: cannot open %s\n", path);
		return -1;
	}
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (len == cap) {
			cap = cap ? cap * 2 : 4096;
			uint8_t *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(f);
				return -1;
			}
			buf = nb;
		}
		size_t got = fread(buf + len, 1, cap - len, f);
		if (!got)
			break;
		len += got;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

static int replay_path(const char *path, int *count)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		fprintf(stderr, "replay: no such file %s\n", path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		(*count)++;
		return replay_file(path);
	}
	DIR *d = opendir(path);
	if (!d)
		return -1;
	struct dirent *de;
	int rc = 0;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		char sub[4096];
		snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
		if (replay_path(sub, count) != 0)
			rc = -1;
	}
	closedir(d);
	return rc;
}

int main(int argc, char **argv)
{
	int count = 0, rc = 0;
	for (int i = 1; i < argc; i++)
		if (replay_path(argv[i], &count) != 0)
			rc = 1;
	printf("replayed %d inputs\n", count);
	return rc;
}
