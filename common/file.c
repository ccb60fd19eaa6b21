#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "duet-file.h"

bool duet_write_replace(const char *path, void (*write)(FILE *f, void *data), void *data)
{
	size_t n = strlen(path) + sizeof(".tmp");
	char *tmp = malloc(n);
	if (!tmp)
		return false;
	snprintf(tmp, n, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	bool ok = f != NULL;
	if (f) {
		write(f, data);
		ok = fclose(f) == 0 && rename(tmp, path) == 0;
		if (!ok)
			unlink(tmp);
	}
	free(tmp);
	return ok;
}
