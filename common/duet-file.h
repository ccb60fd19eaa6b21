/* Files that other processes read while they are being replaced. */
#ifndef DUET_FILE_H
#define DUET_FILE_H

#include <stdbool.h>
#include <stdio.h>

/* Replaces path with what write(f, data) writes, through "path.tmp" and a
 * rename, so that a reader never sees half of it. false (with errno, and
 * no .tmp left behind) when it could not. */
bool duet_write_replace(const char *path, void (*write)(FILE *f, void *data), void *data);

#endif
