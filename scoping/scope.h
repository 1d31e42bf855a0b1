/*
 * scope.h - find the places a campaign will change.
 *
 * Reads the files of one commit from the object database (never the working
 * tree's edits, so bare repositories and any revision work; a file the index
 * shows clean, holding the commit's very blob, is read from the work tree,
 * as git does: scoping/worktree.h), keeps those whose
 * path matches the globs and whose language (by extension, or a glob
 * override) is the query's, parses them with tree-sitter on several threads,
 * runs the query, filters matches with the predicates the C library leaves to
 * its caller (#eq?, #not-eq?, #match?, #not-match?, #any-of?, #not-any-of?,
 * the #any-eq?-style forms for quantified captures; #set! is accepted and
 * ignored; regexes are POSIX extended), and turns each remaining match into a
 * site.  Sites are grouped into targets: a target is the region a candidate
 * may edit (the site capture itself, or the statement, function, class or
 * file enclosing it); sites in the same region become one target, and two
 * patterns matching the same range give one site.
 *
 * Before parsing, a prefilter (prefilter.h) skips files that cannot match:
 * they lack a literal of the query's predicates, or (C, C++) a keyword its
 * node types imply (for_statement: the word "for"); it never changes the
 * result (opts.no_prefilter turns it off).  With
 * opts.cache, each file's result is kept in the store keyed by (blob id,
 * language, hash of the query, site capture and unit), so re-scoping parses
 * only changed blobs; a hit gives exactly the targets a parse would.
 *
 * Skipped without error: files of another language or outside the globs,
 * symlinks, submodules, blobs over 8 MiB, blobs with a NUL byte in their
 * first 8000 bytes (binary).
 *
 * Calling sequence:
 *     sl_scope_check_query(lang, query, capture, &off, err)   optional, early errors
 *     sl_scope(&list, repo, &commit_oid, &opts, err)
 *     ... use list.v[0 .. list.n) ...
 *     sl_target_list_release(&list)
 *
 * Positions: lines are 1-based, columns are 1-based byte columns; byte
 * offsets are 0-based and half-open [start, end).  end_line/end_col name the
 * position just past the region, in the same convention ("foo" at the start
 * of line 1 is 1:1 to 1:4).
 */
#ifndef SL_SCOPE_H
#define SL_SCOPE_H

#include <stddef.h>
#include <stdint.h>
#include <git2.h>

#include "common/err.h"
#include "common/util.h"

typedef struct sl_capture {
	char *name;                 /* capture name without '@' */
	uint32_t start_byte, end_byte;
	char *text;                 /* the captured source text */
} sl_capture;

typedef struct sl_site {
	uint32_t start_byte, end_byte;          /* the site capture */
	uint32_t start_line, start_col, end_line, end_col;
	sl_capture *caps;                       /* every capture of the match, in the
						   match's order (a quantified capture
						   may appear several times) */
	size_t ncaps;
} sl_site;

typedef struct sl_target {
	char *path;                 /* repository-relative, '/'-separated */
	const char *lang;           /* static language name ("c", "python", ...) */
	char blob[GIT_OID_HEXSZ + 1]; /* the file's blob id at the scoped commit */
	const char *unit;           /* static: "capture", "statement", "function",
				       "class" or "file"; "capture" also when the
				       asked unit does not enclose the site */
	uint32_t start_byte, end_byte;          /* the unit's region */
	uint32_t start_line, start_col, end_line, end_col;
	char *unit_text;            /* the region's text */
	sl_site *sites;             /* sorted by start_byte */
	size_t nsites;
} sl_target;

typedef struct sl_target_list {
	sl_target *v;               /* sorted by path, then start_byte */
	size_t n, alloc;
} sl_target_list;

#define SL_TARGET_LIST_INIT { .v = NULL }

/* A per-path language override: files matching glob are of language. */
typedef struct sl_lang_override {
	const char *glob;           /* without '/': matched against the base name */
	const char *language;
} sl_lang_override;

/*
 * What sl_scope saw, filled when opts->stats is set (counters are reset by
 * sl_scope; release with sl_scope_stats_release).  Every regular file of the
 * tree is "seen" and lands in exactly one of: skipped_lang (other language
 * or outside the globs), skipped_other (over 8 MiB or binary), cache_hits,
 * skipped_prefilter, parsed.  parse_errors and literal_no_match count files
 * whether fresh or from the cache.
 */
typedef struct sl_scope_stats {
	size_t files_seen;
	size_t skipped_lang;
	size_t skipped_other;
	size_t skipped_prefilter;   /* read, but the query's literals or keywords do not occur */
	size_t parsed;
	size_t parsed_in_part;      /* of parsed: only the top-level items, or the statements
				       of functions, that may hold a match (C, C++; the rest
				       was not parsed) */
	size_t parsed_again;        /* parsed in part, then again with more of the file: a
				       syntax error outside one statement (items.h) */
	size_t parse_errors;        /* parsed with ERROR or MISSING nodes (in the part parsed) */
	size_t bytes_read;          /* the text of the files scoped (not cache hits) */
	size_t bytes_parsed;        /* of those, the bytes given to the parser: whole files,
				       or the items and statements kept (a part parsed
				       again counts twice) */
	size_t read_worktree;       /* read from the work tree, which held their blobs
				       (worktree.h), not inflated from the object database */
	size_t cache_hits;
	size_t literal_no_match;    /* a literal of the query occurs, no match came out
				       (C: e.g. a call inside a macro body) */
	sl_strvec literal_no_match_paths; /* those files, sorted */
	size_t literals;            /* literals and keywords the prefilter looks for;
				       0: the query has none to prefilter on */
	unsigned threads;
	size_t results_held;        /* the most files' encoded results held at once (with
				       opts->emit, the files being scoped and passed on,
				       whatever the tree's size) */
	int64_t ms;                 /* wall-clock time of sl_scope */
} sl_scope_stats;
#define SL_SCOPE_STATS_INIT { .literal_no_match_paths = SL_STRVEC_INIT }
void sl_scope_stats_release(sl_scope_stats *s);

struct sl_store;

typedef struct sl_scope_opts {
	const char *language;       /* required: a name sl_lang_known() accepts */
	const char *query;          /* required: tree-sitter query source */
	const char *const *globs;   /* path globs (sl_glob_match); none = every file of the language */
	size_t nglobs;
	const char *const *paths;   /* exact paths: only these files, in this order, each
				       looked up in the tree instead of walking it (a
				       path not in the tree is no file); globs still apply */
	size_t npaths;
	const char *capture;        /* the capture marking a site ("name" or "@name");
				       NULL = the query's first capture; a match
				       without it is ignored */
	const char *unit;           /* the editable region around a site: "capture"
				       (default when NULL), "statement" (the innermost
				       statement), "function" (the innermost function or
				       method, python: with its decorators), "class"
				       (the innermost class/struct/interface/impl) or
				       "file".  When no such node encloses the site the
				       unit falls back to "capture". */
	const sl_lang_override *overrides; /* consulted before extensions, first match wins */
	size_t noverrides;
	unsigned threads;           /* parser threads (the calling thread reads the
				       blobs for them); 0 = one per online core;
				       1 = the calling thread does it all */
	int no_prefilter;           /* 1: parse every file (results are identical) */
	int no_worktree;            /* 1: read every file from its blob, never from the
				       work tree (worktree.h; results are identical) */
	struct sl_store *cache;     /* borrowed; NULL = no cache (see scope_cache.h) */
	sl_scope_stats *stats;      /* borrowed; NULL = not wanted */
	/*
	 * NULL: the targets are appended to out.  Else each is passed to emit
	 * (with emit_arg), in out's order, once the files before it are
	 * scoped, and released; out is not touched.  Memory then holds the
	 * results of the files being scoped, not of the whole tree.  A
	 * nonzero return stops scoping and is returned.  On a failure the
	 * targets of the files before the failing one may have been passed on.
	 * With a cache too, the files' results are written to it as they are
	 * passed on, a few hundred files a transaction, outside emit's calls,
	 * and a cache hit's result is read from it again when its turn comes
	 * (a rerun holds a chunk of them, not the tree's).
	 */
	int (*emit)(const sl_target *t, void *arg);
	void *emit_arg;
} sl_scope_opts;
#define SL_SCOPE_OPTS_INIT { .language = NULL }

/*
 * Compile the query for the language and check its predicates and the named
 * capture.  On error returns SL_EINPUT with a message and, when the error has
 * a position, *offset_out = its byte offset in the query (else UINT32_MAX).
 */
int sl_scope_check_query(const char *language, const char *query, const char *capture,
			 uint32_t *offset_out, sl_err *err);
/*
 * The same, but the check in a child process is skipped when the store
 * `known` (borrowed; NULL: none) records that sl_scope with it as cache
 * compiled this query in-process before.
 */
int sl_scope_check_query_in(struct sl_store *known, const char *language, const char *query,
			    const char *capture, uint32_t *offset_out, sl_err *err);

/*
 * Scope the tree of `commit`.  Appends this commit's targets to *out (an
 * initialised list, possibly holding earlier results), sorted among
 * themselves; the caller releases the list.  On error nothing is appended.
 * Errors: SL_EINPUT (options, query), SL_ENOTFOUND (no such commit),
 * SL_ERROR (libgit2, tree-sitter).
 */
int sl_scope(sl_target_list *out, git_repository *repo, const git_oid *commit,
	     const sl_scope_opts *opts, sl_err *err);

void sl_target_list_release(sl_target_list *list);
/* Free a target's contents (the struct is reusable).  If NULL nothing occurs. */
void sl_target_release(sl_target *t);

/*
 * One target as bytes (the scope cache's encoding: unit, region, unit text,
 * sites and captures; not path, blob nor language), appended to out, and
 * back: sl_target_decode fills *out (the caller releases it) from data
 * and the path, blob id and language it was scoped with.  SL_EINPUT when
 * the bytes are not one target or the language is unknown.  A run keeps
 * its targets so in the store, not in memory.
 */
void sl_target_encode(sl_buf *out, const sl_target *t);
int sl_target_decode(sl_target *out, const void *data, size_t len, const char *path,
		     const char *blob, const char *lang, sl_err *err);

/* 1 if the language is built in. */
int sl_lang_known(const char *name);
/* The language of a path by its extension, or NULL. */
const char *sl_lang_for_path(const char *path);
/* The same, trying the overrides first (static name, NULL if none applies). */
const char *sl_lang_for_path_ex(const char *path, const sl_lang_override *ov, size_t nov);
/* Comma-separated names of the built-in languages (static). */
const char *sl_lang_names(void);
/*
 * The query a fix campaign uses when it names none: every function and
 * method of the language (c, cpp, python, bash: function_definition;
 * javascript, typescript, tsx: function declarations, function expressions,
 * arrow functions, methods; go: function and method declarations; java:
 * methods and constructors; rust: function_item), one capture @unit.
 * Static; NULL for a language without functions (json) or unknown.
 */
const char *sl_lang_function_query(const char *name);
/* A query whose one match is the file's root node, capture @file (static; NULL if unknown). */
const char *sl_lang_file_query(const char *name);

#endif
