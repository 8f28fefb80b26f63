/*
 * list: the shipped experiments, with their kernel and description.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../isa/jdoc.h"
#include "cli.h"
#include "commands.h"

#define MAX_EXPERIMENTS 1024

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int cmd_list(int argc, char **argv, const char *self)
{
	(void)self;
	const char *dir = NULL;
	for (int i = 0; i < argc; i++) {
		if (argv[i][0] == '-')
			return cli_unknown_option("list", argv[i]);
		if (dir) {
			fprintf(stderr, "smsim list: one config directory at a time (got %s and %s)\n", dir, argv[i]);
			return 2;
		}
		dir = argv[i];
	}
	char path[1024];
	snprintf(path, sizeof path, "%s/experiments", dir ? dir : "configs");
	DIR *dp = opendir(path);
	if (!dp) {
		fprintf(stderr, "smsim: %s: cannot open (run from the smsim checkout, or give the configs dir)\n", path);
		return 2;
	}
	char *names[MAX_EXPERIMENTS];
	int n = 0;
	struct dirent *de;
	while ((de = readdir(dp)) && n < MAX_EXPERIMENTS) {
		size_t len = strlen(de->d_name);
		if (len > 5 && strcmp(de->d_name + len - 5, ".json") == 0 && (names[n] = strdup(de->d_name)))
			n++;
	}
	closedir(dp);
	qsort(names, (size_t)n, sizeof names[0], cmp_str);
	printf("%-36s %-34s %s\n", "experiment", "kernel", "description");
	for (int i = 0; i < n; i++) {
		char file[2048];
		snprintf(file, sizeof file, "%s/%s", path, names[i]);
		struct jdoc doc;
		struct diag d;
		if (jdoc_load(file, &doc, &d) == 0) {
			const cJSON *k = cJSON_GetObjectItemCaseSensitive(doc.root, "kernel");
			const cJSON *desc = cJSON_GetObjectItemCaseSensitive(doc.root, "description");
			const char *kname = cJSON_IsString(k) ? k->valuestring : "?";
			const char *slash = strrchr(kname, '/');
			printf("%-36s %-34s %s\n", file, slash ? slash + 1 : kname,
			       cJSON_IsString(desc) ? desc->valuestring : "");
			jdoc_free(&doc);
		} else {
			printf("%-36s (unreadable: %s)\n", file, d.msg);
		}
		free(names[i]);
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "smsim: error writing the list\n");
		return 2;
	}
	return 0;
}
