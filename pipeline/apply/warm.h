/*
 * warm.h - the warm base and each candidate's layer above it (README,
 * "Warm base").
 *
 * The warm base is the base commit's tree exported (no .git) to
 * ROOT/warm-DIGEST/tree, where the campaign's preparing gates (configure,
 * build) run once, writing it; from then on nobody writes it.  DIGEST
 * (sl_gating_warm_key, validators.h) names everything the prepared tree depends on, so
 * a run or a store with the same campaign definition finds it ready
 * (ROOT/warm-DIGEST/ready) and reuses it.  Every process using a warm base
 * holds a shared flock on ROOT/warm-DIGEST/lock; preparing holds it
 * exclusively, and `sluice gc` removes only warm bases it can lock
 * exclusively, of the stores ROOT/warm-DIGEST/stores lists.
 *
 * A candidate's layer holds u/ (the overlay's upper layer) and w/
 * (overlayfs' work directory) on a tmpfs of cap_mb MiB: as root mounted on
 * the directory ROOT/layer-PID-N; as an ordinary user made in a user
 * namespace of its own and held by a descriptor ("/proc/PID/fd/N",
 * sl_jail_layer_new in validators.h).  Where neither works, a plain
 * directory ROOT/layer-PID-N the caller caps by measuring it
 * (sl_gate_tree.layer_cap_mb).  Before any gate runs, the
 * candidate's added and changed files are written into u/ with a
 * modification time later than anything in the warm base, and its deleted
 * files become overlay whiteouts (0/0 character devices), so a build tool
 * sees exactly the candidate's tree and rebuilds only what it changed.
 *
 * Calling sequence: sl_warm_open() once per run (after the gating is
 * open), then per candidate sl_warm_layer_add() ... gates ...
 * sl_warm_layer_remove(), and sl_warm_free() at the end.  Layers may be
 * added and removed from several threads at once.
 */
#ifndef SL_WARM_H
#define SL_WARM_H

#include <git2.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/err.h"

typedef struct sl_warm sl_warm;

/*
 * Prepare the exported tree at dir (the preparing gates, in the jail).
 * prev_key: the key of the warm base under the same root prepared last
 * before (NULL: none), to say why this one is prepared; unfinished: an
 * earlier preparation of this same warm base did not finish.
 */
typedef int (*sl_warm_prepare_fn)(void *ctx, const char *dir, const char *prev_key,
				  int unfinished, sl_err *err);

typedef struct sl_warm_opts {
	git_repository *repo;
	const char *root;           /* the campaign's scratch root */
	const git_oid *base;
	const char *key;            /* what the prepared tree depends on, one fact a line
				       (sl_gating_warm_key); its SHA-256 names the warm base */
	const char *store;          /* the store using it, noted for gc; NULL: none */
	sl_warm_prepare_fn prepare;
	void *ctx;                  /* prepare's */
} sl_warm_opts;

/*
 * Find the warm base ROOT/warm-DIGEST (the first 16 hex digits of the
 * key's SHA-256), or make it: write the key to ROOT/warm-DIGEST/key, export
 * base's tree and call prepare on it; ROOT/warm-DIGEST/ready once prepare
 * returned SL_OK.  The store's real path is added to ROOT/warm-DIGEST/stores
 * (one a line) if it is not there.  *built_out (may be NULL) is 1 when it was
 * made now.  SL_ERROR on I/O or libgit2 failures, or what prepare returned.
 */
int sl_warm_open(sl_warm **out, const sl_warm_opts *opts, int *built_out, sl_err *err);
/* The prepared tree (borrowed until sl_warm_free). */
const char *sl_warm_tree(const sl_warm *w);
/* ROOT/warm-DIGEST, where what belongs with this warm base may be kept (borrowed). */
const char *sl_warm_dir(const sl_warm *w);
/* Release the lock; the warm base stays for the next run.  NULL is a no-op. */
void sl_warm_free(sl_warm *w);

/*
 * A new layer for the candidate commit (a descendant of the base): its
 * changes against the base written into u/ as above.  *layer_out (caller
 * frees, after sl_warm_layer_remove) is its directory; *capped_out is 1
 * when a tmpfs of cap_mb MiB holds it (else the caller measures it).
 */
int sl_warm_layer_add(char **layer_out, int *capped_out, sl_warm *w, git_repository *repo,
		      const git_oid *commit, unsigned cap_mb, sl_err *err);
/*
 * What a layer changed against the base commit, as edits appended to out
 * (whole files: splices, new files, deletions; layer.c says which files
 * count); what cannot be taken (links, binary files) is said in why, one
 * line each.  SL_EREFUSED when the layer is too large or deep to read.
 */
struct sl_edit_list;
int sl_warm_layer_changes(struct sl_edit_list *out, sl_buf *why, sl_warm *w,
			  git_repository *repo, const git_oid *base, const char *layer,
			  sl_err *err);
/* Remove a layer (unmount its tmpfs), never following links.  NULL is a no-op. */
int sl_warm_layer_remove(const char *layer, sl_err *err);

/* Which warm bases sl_warm_gc removes (none of them while a process holds it). */
enum sl_warm_gc_which {
	SL_WARM_GC_ALL,             /* every one */
	SL_WARM_GC_STORE,           /* those the store used (ROOT/warm-DIGEST/stores): its
				       line goes, the warm base once no store that exists is
				       listed; and those without a stores file (made before
				       sluice kept one: no run uses them) */
	SL_WARM_GC_NONE,            /* none: layers only */
};

/*
 * Remove, under root (a campaign's scratch root or the root above those),
 * the warm bases `which` says that no process holds, and the layers of
 * processes that are gone.  store: the store's real path (SL_WARM_GC_STORE).
 * *warm_out and *layers_out (may be NULL) get the numbers removed.
 */
int sl_warm_gc(const char *root, enum sl_warm_gc_which which, const char *store,
	       size_t *warm_out, size_t *layers_out, sl_err *err);
/* Remove the layers of processes that are gone from one campaign's root (a run's start). */
int sl_warm_sweep_layers(const char *root, sl_err *err);

#endif
