/*
 * migrations.h - internal to storage/: the numbered schema migrations.
 */
#ifndef SL_MIGRATIONS_H
#define SL_MIGRATIONS_H

#include <stddef.h>

/* Number of migrations; the schema version of an up-to-date file. */
/*
 * PRAGMA application_id of a store ("SLUC"), set with each migration: a
 * SQLite file with another id, or with none and tables that are not
 * sluice's, belongs to another program and is never opened as a store.
 */
#define SL_STORE_APPLICATION_ID 0x534c5543

size_t sl_migrations_count(void);
/* SQL of migration i+1 (0-based index), or NULL. */
const char *sl_migration(size_t i);

#endif
