/*
 * migrations.h - internal to storage/: the numbered schema migrations.
 */
#ifndef SL_MIGRATIONS_H
#define SL_MIGRATIONS_H

#include <stddef.h>

/* Number of migrations; the schema version of an up-to-date file. */
size_t sl_migrations_count(void);
/* SQL of migration i+1 (0-based index), or NULL. */
const char *sl_migration(size_t i);

#endif
