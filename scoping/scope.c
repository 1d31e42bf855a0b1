/*
 * scope.c - find a campaign's targets in one commit.
 *
 * Reads: the commit's tree and blobs through libgit2 (never a work tree),
 * and the scope cache of opts->cache.  Writes: the caller's sl_target_list,
 * opts->stats, and new rows of the scope cache.
 *
 * The query is compiled once (tree-sitter, our predicate evaluator, the
 * literal prefilter).  The main thread walks the tree, keeps the blobs of
 * the language that match the globs, and answers what it can from the
 * cache.  Files whose blob is the same as an earlier file's are scoped once
 * and their result is copied.  The remaining files are shared out among
 * the main thread and one helper thread per further core: each takes the
 * next file in tree order, reads its blob on a repository handle of its
 * own (libgit2 objects are never shared between threads; the main
 * thread's is the caller's, and reads what a helper could not), and
 * parses it with its own parser and query cursor, while the TSQuery, the
 * compiled predicates and the prefilter are only read.  A file is skipped
 * if the prefilter says no match is possible; in C and C++, when every
 * match lies inside one top-level item, only the items that may hold one
 * are parsed (items.h).  Then the query runs, the matches that pass the
 * predicates are kept, their sites grouped into targets in the thread's
 * own list, and the file's result encoded for the cache.  Each syntax tree
 * is freed before the next file, so memory grows with the result, the
 * list of candidate paths and, per thread, one file.  At the end the main
 * thread concatenates the lists, sorts them (path, start, end: a total
 * order, so the thread count never changes the output) and writes the new
 * cache rows in one transaction.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <tree_sitter/api.h>

#include "scoping/items.h"
#include "scoping/lang.h"
#include "scoping/predicate.h"
#include "scoping/prefilter.h"
#include "scoping/worktree.h"
#include "scoping/scope.h"
#include "scoping/blank.h"
#include "storage/scope_cache.h"
#include "common/util.h"
#include "common/caps.h"

#define BINARY_SNIFF 8000

/*
 * Bounds on a user's query.  libtree-sitter 0.20.7's ts_query_new crashes or
 * never returns on some queries (stacked quantifiers: "_??", "(_)** @a"), so
 * the first compilation of a query runs in a child process with a time and
 * memory limit.  Running a query is bounded per file by the number of
 * partial matches in progress and by time.  The bounds are SL_CAP_QUERY_*
 * (common/caps.h).
 */

/* Results are encoded for the cache in this format; bump it when it changes. */
#define CACHE_FORMAT "sluice-scope-2"  /* 2: a capture's text may be its target's unit text */
#define CACHE_MAX_ROWS 500000  /* past this, rows of other queries are dropped */
#define CF_PREFILTERED 1u      /* cache flags */
#define CF_PARSE_ERROR 2u
#define CF_LIT_NO_MATCH 4u

struct compiled {
	const sl_lang *lang;
	TSQuery *q;
	sl_preds *preds;
	sl_prefilter *pf;          /* the predicates' literals: for CF_LIT_NO_MATCH */
	sl_prefilter *skip;        /* those and the keywords the patterns imply: what files to skip */
	int by_items;              /* skip's verdict holds item by item too (items.h) */
	unsigned split;            /* and statement by statement: SL_ITEMS_STATEMENTS */
	uint32_t site_cap;
};

enum unit_kind { U_CAPTURE, U_STATEMENT, U_FUNCTION, U_CLASS, U_FILE };
static const char *const unit_names[] = { "capture", "statement", "function", "class", "file" };

/* A file to scope, found by the tree walk, and what scoping it gave. */
struct entry {
	char *path;
	git_oid oid;
	unsigned flags;        /* CF_* once scoped */
	unsigned char scoped;  /* 1: result known (cache hit or a worker's) */
	unsigned char from_cache;
	unsigned char skipped; /* too large or binary */
	unsigned char has_dups; /* other entries have the same blob and copy this result */
	unsigned char put;     /* its encoding is in the cache already (opts->emit) */
	unsigned char reread;  /* a cache hit with targets: its encoding is read again
				  when its turn to be passed on comes (opts->emit) */
	atomic_int done;       /* a worker's result is in (opts->emit) */
	uint32_t dup_of;       /* 1 + the entry whose result this one copies; 0: none */
	uint32_t dups_left;    /* opts->emit: duplicates of this one not passed on yet */
	char *enc;             /* the encoded result for the cache, when wanted */
	size_t enc_len;
	const git_index_entry *ie; /* the file may be read from the work tree (worktree.h) */
};

struct walk {
	const sl_lang *lang;
	const sl_scope_opts *opts;
	sl_scope_stats *stats;
	struct entry *v;
	size_t n, alloc;
};

/* A site before grouping, with the region of its unit. */
struct raw {
	const char *unit;      /* static unit name; "capture" also when the unit does not enclose the site */
	uint32_t ustart, uend;
	TSPoint upt_start, upt_end;
	sl_site site;
	size_t seq;
};

static int git_fail(sl_err *err, const char *what)
{
	return sl_err_set(err, SL_ERROR, "%s: %s", what, sl_git_error_or("unknown error"));
}

/* The token of the query text at offset, for error messages. */
static void query_token(const char *src, size_t len, uint32_t off, char *out, size_t outsz)
{
	size_t n = 0;

	if (off < len && src[off] == '"') {
		for (n = 1; off + n < len && src[off + n] != '"' && src[off + n] != '\n'; n++)
			;
		if (off + n < len && src[off + n] == '"')
			n++;
	} else {
		while (off + n < len && !strchr(" \t\r\n()[]\"@:#!?", src[off + n]))
			n++;
	}
	if (n >= outsz)
		n = outsz - 1;
	memcpy(out, src + (off < len ? off : len), n);
	out[n] = '\0';
}

static int query_error(const char *src, size_t len, uint32_t off, TSQueryError type,
		       const char *language, sl_err *err)
{
	char where[32], tok[80];

	sl_query_pos(src, len, off, where);
	query_token(src, len, off, tok, sizeof(tok));
	switch (type) {
	case TSQueryErrorNodeType:
		return sl_err_set(err, SL_EINPUT, "invalid query at %s: unknown node type '%s' in language '%s'",
				  where, tok, language);
	case TSQueryErrorField:
		return sl_err_set(err, SL_EINPUT, "invalid query at %s: unknown field '%s' in language '%s'",
				  where, tok, language);
	case TSQueryErrorCapture:
		return sl_err_set(err, SL_EINPUT, "invalid query at %s: undefined capture '@%s'",
				  where, tok);
	case TSQueryErrorStructure:
		return sl_err_set(err, SL_EINPUT, "invalid query at %s: impossible pattern structure",
				  where);
	case TSQueryErrorLanguage:
		return sl_err_set(err, SL_EINPUT, "invalid query: grammar of '%s' not supported by this tree-sitter",
				  language);
	default:
		if (off >= len)
			return sl_err_set(err, SL_EINPUT,
					  "invalid query at %s: syntax error at end of query (unbalanced parentheses?)",
					  where);
		{
			/* show the rest of the line, not a token: syntax errors are often punctuation */
			size_t n = 0;

			while (off + n < len && n < 30 && src[off + n] != '\n')
				n++;
			return sl_err_set(err, SL_EINPUT, "invalid query at %s: syntax error near '%.*s'",
					  where, (int)n, src + off);
		}
	}
}

static void compiled_release(struct compiled *c)
{
	sl_prefilter_free(c->pf);
	c->pf = NULL;
	sl_prefilter_free(c->skip);
	c->skip = NULL;
	sl_preds_free(c->preds);
	c->preds = NULL;
	if (c->q)
		ts_query_delete(c->q);
	c->q = NULL;
}

/*
 * The last query sl_scope_check_query compiled, kept for the sl_scope that
 * usually follows with the same text: compiling a C query costs about as
 * much as re-scoping a cached tree of 2,000 files does otherwise.  One
 * slot, taken (not copied) by the next compile_query of the same language
 * and text.
 */
static struct {
	pthread_mutex_t lock;
	const sl_lang *lang;
	char *query;
	TSQuery *q;
} checked = { PTHREAD_MUTEX_INITIALIZER, NULL, NULL, NULL };

static void checked_put(const sl_lang *lang, const char *query, TSQuery *q)
{
	pthread_mutex_lock(&checked.lock);
	if (checked.q)
		ts_query_delete(checked.q);
	free(checked.query);
	checked.lang = lang;
	checked.query = sl_xstrdup(query);
	checked.q = q;
	pthread_mutex_unlock(&checked.lock);
}

/* The checked query if it is lang's and query's, else NULL; the caller owns it. */
static TSQuery *checked_take(const sl_lang *lang, const char *query)
{
	TSQuery *q = NULL;

	pthread_mutex_lock(&checked.lock);
	if (checked.q && checked.lang == lang && !strcmp(checked.query, query)) {
		q = checked.q;
		checked.q = NULL;
		free(checked.query);
		checked.query = NULL;
	}
	pthread_mutex_unlock(&checked.lock);
	return q;
}

static int compile_query(struct compiled *c, const char *language, const char *query,
			 const char *capture, uint32_t *offset_out, sl_err *err)
{
	uint32_t off = 0, ncaps;
	TSQueryError type = TSQueryErrorNone;
	size_t len;
	int leaf;

	memset(c, 0, sizeof(*c));
	if (offset_out)
		*offset_out = UINT32_MAX;
	if (!language || !(c->lang = sl_lang_find(language)))
		return sl_err_set(err, SL_EINPUT, "unknown language '%s' (known: %s)",
				  language ? language : "", sl_lang_names());
	if (!query || !*query)
		return sl_err_set(err, SL_EINPUT, "empty query");
	len = strlen(query);
	if (len > UINT32_MAX / 2)
		return sl_err_set(err, SL_EINPUT, "query too long");

	if (!(c->q = checked_take(c->lang, query)))
		c->q = ts_query_new(c->lang->grammar(), query, (uint32_t)len, &off, &type);
	if (c->q) {
		c->pf = sl_prefilter_new(c->q);
		c->skip = sl_prefilter_new_ex(c->q, query, len, sl_lang_keyword_nodes(c->lang),
					      c->lang->list_nodes);
		c->by_items = c->skip && c->lang->item_holders &&
			sl_prefilter_below_root(c->q, query, len, c->lang->item_holders);
		if (c->by_items && c->lang->stmt_holders &&
		    sl_prefilter_below_root(c->q, query, len, c->lang->stmt_holders))
			c->split = SL_ITEMS_STATEMENTS;
		else if (c->by_items && c->lang->body_holders &&
			 (leaf = sl_prefilter_body_child(c->q, query, len, c->lang->body_holders)))
			c->split = SL_ITEMS_BODY | (leaf > 1 ? SL_ITEMS_BODY_LEAF : 0);
	}
	if (!c->q) {
		if (offset_out)
			*offset_out = off;
		return query_error(query, len, off, type, language, err);
	}
	if (sl_preds_compile(&c->preds, c->q, query, len, offset_out, err))
		goto fail;

	ncaps = ts_query_capture_count(c->q);
	if (!ncaps) {
		sl_err_set(err, SL_EINPUT, "invalid query: it defines no capture (mark the site with @name)");
		goto fail;
	}
	c->site_cap = 0;
	if (capture) {
		size_t want = strlen(capture += capture[0] == '@');
		uint32_t i;

		for (i = 0; i < ncaps; i++) {
			uint32_t nl;
			const char *name = ts_query_capture_name_for_id(c->q, i, &nl);

			if (nl == want && !memcmp(name, capture, nl))
				break;
		}
		if (i == ncaps) {
			sl_buf names = SL_BUF_INIT;

			for (uint32_t j = 0; j < ncaps; j++) {
				uint32_t nl;
				const char *name = ts_query_capture_name_for_id(c->q, j, &nl);

				sl_buf_addf(&names, "%s@%.*s", j ? ", " : "", (int)nl, name);
			}
			sl_err_set(err, SL_EINPUT, "capture '@%s' is not defined by the query (it defines %s)",
				   capture, names.buf);
			sl_buf_release(&names);
			goto fail;
		}
		c->site_cap = i;
	}
	return 0;
fail:
	compiled_release(c);
	return SL_EINPUT;
}

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/*
 * Compile the query in a child: 0 if ts_query_new returned there (a query
 * it rejects is then compiled again here, for the error's offset), else
 * SL_EINPUT naming what happened to the child.
 */
static int compile_in_child(const sl_lang *lang, const char *query, sl_err *err)
{
	int fds[2] = { -1, -1 }, st = 0, ret = SL_ERROR, ended = 0;
	int64_t deadline = sl_now_ms() + SL_CAP_QUERY_COMPILE_WALL_MS;
	pid_t pid;

	/* close-on-exec: a child another thread starts must not hold it open */
	if (pipe2(fds, O_CLOEXEC))
		return sl_err_set(err, SL_ERROR, "cannot check the query: pipe: %s", strerror(errno));
	if ((pid = fork()) < 0) {
		sl_err_set(err, SL_ERROR, "cannot check the query: fork: %s", strerror(errno));
		goto done;
	}
	if (pid == 0) {
		uint32_t off;
		TSQueryError type;
		TSQuery *q;

		close(fds[0]);
		{
			/* SIGXCPU at the cap, SIGKILL a second later */
			rlim_t cpu = (SL_CAP_QUERY_COMPILE_MS + 999) / 1000;
			struct rlimit rl = { cpu, cpu + 1 };

			setrlimit(RLIMIT_CPU, &rl);
		}
#ifndef UNDER_ASAN
		{
			struct rlimit rl = { (rlim_t)SL_CAP_QUERY_COMPILE_MEM_MB << 20,
					     (rlim_t)SL_CAP_QUERY_COMPILE_MEM_MB << 20 };

			setrlimit(RLIMIT_AS, &rl);
		}
#endif
		q = ts_query_new(lang->grammar(), query, (uint32_t)strlen(query), &off, &type);
		_exit(q ? 0 : 1);
	}
	close(fds[1]);
	fds[1] = -1;
	/* the pipe closes when the child ends, however it ends */
	while (!ended) {
		int64_t left = deadline - sl_now_ms();
		struct pollfd pfd = { fds[0], POLLIN, 0 };
		char c;

		if (left <= 0)
			break;
		if (poll(&pfd, 1, (int)left) > 0 && read(fds[0], &c, 1) <= 0)
			ended = 1;
	}
	if (!ended)
		kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!ended || (WIFSIGNALED(st) && (WTERMSIG(st) == SIGXCPU || WTERMSIG(st) == SIGKILL)))
		ret = sl_err_set(err, SL_EINPUT, "invalid query: tree-sitter did not finish compiling it "
				 "in %d s of CPU time (a quantifier right after another is not "
				 "supported)", SL_CAP_QUERY_COMPILE_MS / 1000);
	else if (WIFSIGNALED(st))
		ret = sl_err_set(err, SL_EINPUT, "invalid query: tree-sitter crashed compiling it "
				 "(signal %d; a quantifier right after another is not supported)",
				 WTERMSIG(st));
	else if (!WIFEXITED(st) || WEXITSTATUS(st) > 1)
		ret = sl_err_set(err, SL_EINPUT, "invalid query: tree-sitter failed compiling it "
				 "(exit %d)", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	else
		ret = 0;
done:
	close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	return ret;
}

static int query_ident_char(char ch)
{
	return isalnum((unsigned char)ch) || ch == '_' || ch == '-' || ch == '.' || ch == '?' ||
	       ch == '!';
}

/*
 * q[i] opens a comment (';') or a string ('"'): the index of its last
 * character (the one before the newline, or the closing quote).
 */
static size_t skip_comment_or_string(const char *q, size_t len, size_t i)
{
	if (q[i] == ';') {
		while (i + 1 < len && q[i + 1] != '\n')
			i++;
		return i;
	}
	for (i++; i < len && q[i] != '"'; i++)
		if (q[i] == '\\')
			i++;
	return i;
}

/*
 * The quick answer for the usual crash: a quantifier right after another
 * ("_??", "(_)** @a"), outside strings and comments.  screen_groups refuses
 * the other known class; compile_in_child catches what is left.
 */
static int screen_quantifiers(const char *q, size_t len, uint32_t *offset_out, sl_err *err)
{
	int quantifiable = 0, quantified = 0;

	for (size_t i = 0; i < len; i++) {
		char ch = q[i];

		if (ch == ';') {
			i = skip_comment_or_string(q, len, i);
		} else if (ch == '"') {
			i = skip_comment_or_string(q, len, i);
			quantifiable = 1;
			quantified = 0;
		} else if (ch == '*' || ch == '+' || ch == '?') {
			if (quantified) {
				if (offset_out)
					*offset_out = (uint32_t)i;
				return sl_err_set(err, SL_EINPUT, "invalid query: quantifier '%c' right "
						  "after another is not supported", ch);
			}
			quantified = quantifiable;
			quantifiable = 0;
		} else if (ch == ')' || ch == ']' ||
			   (ch == '_' && (!i || !query_ident_char(q[i - 1])) &&
			    (i + 1 == len || q[i + 1] == '?' || q[i + 1] == '!' ||
			     !query_ident_char(q[i + 1])))) {
			quantifiable = 1;
			quantified = 0;
		} else if (!isspace((unsigned char)ch)) {
			while (i + 1 < len && query_ident_char(q[i + 1]))
				i++;
			quantifiable = quantified = 0;
		}
	}
	return 0;
}

/*
 * The other known crash or hang, which tree-sitter 0.20.7 meets only some of
 * the times it compiles the query: a quantified group or alternation that
 * holds a quantified pattern ("((_)?)? @a", "[(a)* (b)]+").  Refused every
 * time, so the answer never depends on luck.  A quantified node holding
 * quantified children ("(block (statement)*)?") is fine.  Groups nest at
 * most SL_CAP_QUERY_DEPTH deep.
 */
static int screen_groups(const char *q, size_t len, uint32_t *offset_out, sl_err *err)
{
	struct { unsigned char group, inner_quantified; } st[SL_CAP_QUERY_DEPTH];
	size_t depth = 0;
	int after_risky = 0;        /* just after a group holding a quantified pattern */

	for (size_t i = 0; i < len; i++) {
		char ch = q[i];

		if (ch == ';') {
			i = skip_comment_or_string(q, len, i);
		} else if (ch == '"') {
			i = skip_comment_or_string(q, len, i);
			after_risky = 0;
		} else if (isspace((unsigned char)ch)) {
			continue;
		} else if (ch == '(' || ch == '[') {
			size_t j = i + 1;

			if (depth == SL_CAP_QUERY_DEPTH) {
				if (offset_out)
					*offset_out = (uint32_t)i;
				return sl_err_set(err, SL_EINPUT, "invalid query: patterns nest "
						  "deeper than %d", SL_CAP_QUERY_DEPTH);
			}
			while (j < len && isspace((unsigned char)q[j]))
				j++;
			/* a group's first token opens a pattern; a node's names its type */
			st[depth].group = ch == '[' ||
					  (j < len && (q[j] == '(' || q[j] == '[' || q[j] == '"'));
			st[depth].inner_quantified = 0;
			depth++;
			after_risky = 0;
		} else if (ch == ')' || ch == ']') {
			after_risky = depth && st[depth - 1].group && st[depth - 1].inner_quantified;
			if (depth)
				depth--;
		} else if (ch == '*' || ch == '+' || ch == '?') {
			if (after_risky) {
				if (offset_out)
					*offset_out = (uint32_t)i;
				return sl_err_set(err, SL_EINPUT, "invalid query: quantifier '%c' on a "
						  "group that holds a quantified pattern is not "
						  "supported", ch);
			}
			if (depth)
				st[depth - 1].inner_quantified = 1;
			after_risky = 0;
		} else {
			/* a name, @capture, field:, !field or #predicate? */
			int pred = ch == '#';

			while (i + 1 < len && query_ident_char(q[i + 1]) &&
			       (pred || (q[i + 1] != '?' && q[i + 1] != '!')))
				i++;
			after_risky = 0;
		}
	}
	return 0;
}

/*
 * The hash under which the store marks a query as compiled here before
 * (sl_scope_cache_query_ok): the language, the text and what could change
 * the verdict (this format, the grammar's ABI).
 */
static void compiled_key(char out[GIT_OID_HEXSZ + 1], const sl_lang *lang, const char *query)
{
	sl_buf b = SL_BUF_INIT;
	git_oid oid;

	sl_buf_addf(&b, "sluice-query-compiled-1%c%s%c%u%c%s", 0, lang->name, 0,
		    ts_language_version(lang->grammar()), 0, query);
	if (git_odb_hash(&oid, b.buf, b.len, GIT_OBJECT_BLOB))
		memset(&oid, 0, sizeof(oid));
	git_oid_tostr(out, GIT_OID_HEXSZ + 1, &oid);
	sl_buf_release(&b);
}

static int compiled_before(sl_store *store, const sl_lang *lang, const char *query)
{
	char key[GIT_OID_HEXSZ + 1];

	compiled_key(key, lang, query);
	return sl_scope_cache_query_ok(store, key);
}

static int mark_compiled(sl_store *store, const sl_lang *lang, const char *query, sl_err *err)
{
	char key[GIT_OID_HEXSZ + 1];

	compiled_key(key, lang, query);
	return sl_scope_cache_mark_query_ok(store, key, err);
}

int sl_scope_check_query(const char *language, const char *query, const char *capture,
			 uint32_t *offset_out, sl_err *err)
{
	return sl_scope_check_query_in(NULL, language, query, capture, offset_out, err);
}

int sl_scope_check_query_in(sl_store *known, const char *language, const char *query,
			    const char *capture, uint32_t *offset_out, sl_err *err)
{
	struct compiled c;
	const sl_lang *lang = language ? sl_lang_find(language) : NULL;
	int ret;

	if (offset_out)
		*offset_out = UINT32_MAX;
	if (lang && query && *query && strlen(query) <= UINT32_MAX / 2 &&
	    ((ret = screen_quantifiers(query, strlen(query), offset_out, err)) ||
	     (ret = screen_groups(query, strlen(query), offset_out, err)) ||
	     ((!known || !compiled_before(known, lang, query)) &&
	      (ret = compile_in_child(lang, query, err)))))
		return ret;
	ret = compile_query(&c, language, query, capture, offset_out, err);
	if (!ret) {
		checked_put(c.lang, query, c.q);
		c.q = NULL;
	}
	compiled_release(&c);
	return ret;
}

static int path_selected(const sl_scope_opts *opts, const sl_lang *lang, const char *path)
{
	const char *l = sl_lang_for_path_ex(path, opts->overrides, opts->noverrides);

	if (!l || strcmp(l, lang->name))
		return 0;
	if (!opts->nglobs)
		return 1;
	for (size_t i = 0; i < opts->nglobs; i++)
		if (opts->globs[i] && sl_glob_match(opts->globs[i], path))
			return 1;
	return 0;
}

static int walk_cb(const char *root, const git_tree_entry *te, void *payload)
{
	struct walk *w = payload;
	git_filemode_t mode = git_tree_entry_filemode(te);
	sl_buf path = SL_BUF_INIT;

	/* symlinks and submodules are not source files of the commit */
	if (git_tree_entry_type(te) != GIT_OBJECT_BLOB ||
	    (mode != GIT_FILEMODE_BLOB && mode != GIT_FILEMODE_BLOB_EXECUTABLE))
		return 0;
	sl_buf_adds(&path, root);
	sl_buf_adds(&path, git_tree_entry_name(te));
	w->stats->files_seen++;
	if (path_selected(w->opts, w->lang, path.buf)) {
		SL_ALLOC_GROW(w->v, w->n + 1, w->alloc);
		memset(&w->v[w->n], 0, sizeof(w->v[w->n]));
		w->v[w->n].path = sl_buf_detach(&path, NULL);
		git_oid_cpy(&w->v[w->n].oid, git_tree_entry_id(te));
		w->n++;
	} else {
		w->stats->skipped_lang++;
	}
	sl_buf_release(&path);
	return 0;
}

static char *dup_range(const char *text, uint32_t start, uint32_t end)
{
	return sl_xstrndup(text + start, end - start);
}

static void site_release(sl_site *s)
{
	for (size_t i = 0; i < s->ncaps; i++) {
		free(s->caps[i].name);
		free(s->caps[i].text);
	}
	free(s->caps);
	s->caps = NULL;
	s->ncaps = 0;
}

static void target_release(sl_target *t)
{
	if (!t)
		return;
	free(t->path);
	free(t->unit_text);
	for (size_t i = 0; i < t->nsites; i++)
		site_release(&t->sites[i]);
	free(t->sites);
	memset(t, 0, sizeof(*t));
}

void sl_target_release(sl_target *t)
{
	target_release(t);
}

void sl_target_list_release(sl_target_list *list)
{
	if (!list)
		return;
	for (size_t i = 0; i < list->n; i++)
		target_release(&list->v[i]);
	free(list->v);
	list->v = NULL;
	list->n = list->alloc = 0;
}

static int is_unit_type(const sl_lang *lang, enum unit_kind k, const char *type)
{
	switch (k) {
	case U_STATEMENT:
		return sl_lang_is_stmt_type(lang, type);
	case U_FUNCTION:
		return sl_lang_is_func_type(lang, type);
	case U_CLASS:
		return sl_lang_is_class_type(lang, type);
	default:
		return 0;
	}
}

/* The unit of kind k enclosing (or being) the site in *out: 1 if there is one. */
static int unit_node(const sl_lang *lang, enum unit_kind k, TSNode site, TSNode *out)
{
	for (TSNode n = site; !ts_node_is_null(n); n = ts_node_parent(n)) {
		if (!is_unit_type(lang, k, ts_node_type(n)))
			continue;
		if (lang->func_wrapper && k != U_STATEMENT) {
			TSNode p = ts_node_parent(n);

			if (!ts_node_is_null(p) && !strcmp(ts_node_type(p), lang->func_wrapper)) {
				*out = p;
				return 1;
			}
		}
		*out = n;
		return 1;
	}
	return 0;
}

/* The point just past len bytes of text. */
static TSPoint end_point(const char *text, size_t len)
{
	TSPoint p = { 0, 0 };
	const char *nl;

	for (const char *s = text; (nl = memchr(s, '\n', len - (size_t)(s - text))); s = nl + 1)
		p.row++;
	nl = memrchr(text, '\n', len);
	p.column = (uint32_t)(nl ? len - (size_t)(nl + 1 - text) : len);
	return p;
}

static int raw_cmp(const void *a_, const void *b_)
{
	const struct raw *a = a_, *b = b_;

	if (a->ustart != b->ustart)
		return a->ustart < b->ustart ? -1 : 1;
	if (a->uend != b->uend)
		return a->uend > b->uend ? -1 : 1;     /* the outer region first */
	if (a->site.start_byte != b->site.start_byte)
		return a->site.start_byte < b->site.start_byte ? -1 : 1;
	if (a->site.end_byte != b->site.end_byte)
		return a->site.end_byte > b->site.end_byte ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int target_cmp(const void *a_, const void *b_)
{
	const sl_target *a = a_, *b = b_;
	int c = strcmp(a->path, b->path);

	if (c)
		return c;
	if (a->start_byte != b->start_byte)
		return a->start_byte < b->start_byte ? -1 : 1;
	if (a->end_byte != b->end_byte)
		return a->end_byte > b->end_byte ? -1 : 1;
	return 0;
}

static void set_pos(uint32_t *line, uint32_t *col, TSPoint p)
{
	*line = p.row + 1;
	*col = p.column + 1;
}

/* Record the match's site (if it has one) in *raws. */
static void add_raw(struct raw **raws, size_t *nraws, size_t *alloc, const struct compiled *c,
		    enum unit_kind want, const TSQueryMatch *m, const char *text, size_t len)
{
	struct raw r;
	TSNode site, un;
	int found = 0;

	for (uint16_t i = 0; i < m->capture_count; i++)
		if (m->captures[i].index == c->site_cap) {
			site = m->captures[i].node;
			found = 1;
			break;
		}
	if (!found)
		return;

	memset(&r, 0, sizeof(r));
	r.site.start_byte = ts_node_start_byte(site);
	r.site.end_byte = ts_node_end_byte(site);
	set_pos(&r.site.start_line, &r.site.start_col, ts_node_start_point(site));
	set_pos(&r.site.end_line, &r.site.end_col, ts_node_end_point(site));
	r.site.ncaps = m->capture_count;
	r.site.caps = sl_xcalloc(m->capture_count ? m->capture_count : 1, sizeof(sl_capture));
	for (uint16_t i = 0; i < m->capture_count; i++) {
		TSNode n = m->captures[i].node;
		sl_capture *cap = &r.site.caps[i];
		uint32_t nl;
		const char *name = ts_query_capture_name_for_id(c->q, m->captures[i].index, &nl);

		cap->name = sl_xstrndup(name, nl);
		cap->start_byte = ts_node_start_byte(n);
		cap->end_byte = ts_node_end_byte(n);
		cap->text = dup_range(text, cap->start_byte, cap->end_byte);
	}

	un = site;
	r.unit = "capture";
	if (want == U_FILE) {
		r.unit = "file";
		r.ustart = 0;
		r.uend = (uint32_t)len;
		r.upt_end = end_point(text, len);
	} else {
		if (want != U_CAPTURE && unit_node(c->lang, want, site, &un))
			r.unit = unit_names[want];
		r.ustart = ts_node_start_byte(un);
		r.uend = ts_node_end_byte(un);
		r.upt_start = ts_node_start_point(un);
		r.upt_end = ts_node_end_point(un);
	}
	r.seq = *nraws;

	SL_ALLOC_GROW(*raws, *nraws + 1, *alloc);
	(*raws)[(*nraws)++] = r;
}

/* Turn one file's raw sites into targets appended to out; consumes the sites. */
static void group_targets(sl_target_list *out, struct raw *raws, size_t nraws,
			  const struct entry *e, const struct compiled *c, const char *text)
{
	sl_target *t = NULL;

	if (nraws > 1)
		qsort(raws, nraws, sizeof(*raws), raw_cmp);
	for (size_t i = 0; i < nraws; i++) {
		struct raw *r = &raws[i];

		if (!t || t->start_byte != r->ustart || t->end_byte != r->uend) {
			SL_ALLOC_GROW(out->v, out->n + 1, out->alloc);
			t = &out->v[out->n++];
			memset(t, 0, sizeof(*t));
			t->path = sl_xstrdup(e->path);
			t->lang = c->lang->name;
			git_oid_tostr(t->blob, sizeof(t->blob), &e->oid);
			t->unit = r->unit;
			t->start_byte = r->ustart;
			t->end_byte = r->uend;
			set_pos(&t->start_line, &t->start_col, r->upt_start);
			set_pos(&t->end_line, &t->end_col, r->upt_end);
			t->unit_text = dup_range(text, r->ustart, r->uend);
		} else {
			sl_site *prev = &t->sites[t->nsites - 1];

			if (prev->start_byte == r->site.start_byte &&
			    prev->end_byte == r->site.end_byte) {
				site_release(&r->site);
				continue;
			}
		}
		t->sites = sl_xrealloc(t->sites, sl_st_mult(t->nsites + 1, sizeof(*t->sites)));
		t->sites[t->nsites++] = r->site;
		memset(&r->site, 0, sizeof(r->site));
	}
}

/*
 * The cache encoding of one file's targets: little-endian u32 numbers and
 * length-prefixed strings; path, blob and language come from the key.
 */
static void put_u32(sl_buf *b, uint32_t v)
{
	unsigned char x[4] = { v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >> 24 };

	sl_buf_add(b, x, 4);
}

static void put_str(sl_buf *b, const char *s)
{
	size_t n = strlen(s);

	put_u32(b, (uint32_t)n);
	sl_buf_add(b, s, n);
}

/* A text the same as the target's unit text (a capture unit's site): no bytes again. */
#define SAME_AS_UNIT UINT32_MAX

static void encode_targets(sl_buf *b, const sl_target *v, size_t n)
{
	put_u32(b, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		const sl_target *t = &v[i];
		uint32_t u = 0;

		while (u < 4 && strcmp(unit_names[u], t->unit))
			u++;
		put_u32(b, u);
		put_u32(b, t->start_byte);
		put_u32(b, t->end_byte);
		put_u32(b, t->start_line);
		put_u32(b, t->start_col);
		put_u32(b, t->end_line);
		put_u32(b, t->end_col);
		put_str(b, t->unit_text);
		put_u32(b, (uint32_t)t->nsites);
		for (size_t j = 0; j < t->nsites; j++) {
			const sl_site *s = &t->sites[j];

			put_u32(b, s->start_byte);
			put_u32(b, s->end_byte);
			put_u32(b, s->start_line);
			put_u32(b, s->start_col);
			put_u32(b, s->end_line);
			put_u32(b, s->end_col);
			put_u32(b, (uint32_t)s->ncaps);
			for (size_t k = 0; k < s->ncaps; k++) {
				put_str(b, s->caps[k].name);
				put_u32(b, s->caps[k].start_byte);
				put_u32(b, s->caps[k].end_byte);
				if (!strcmp(s->caps[k].text, t->unit_text))
					put_u32(b, SAME_AS_UNIT);
				else
					put_str(b, s->caps[k].text);
			}
		}
	}
}

struct reader {
	const unsigned char *p;
	size_t left;
	int bad;
};

static uint32_t get_u32(struct reader *r)
{
	uint32_t v;

	if (r->left < 4) {
		r->bad = 1;
		return 0;
	}
	v = r->p[0] | (uint32_t)r->p[1] << 8 | (uint32_t)r->p[2] << 16 | (uint32_t)r->p[3] << 24;
	r->p += 4;
	r->left -= 4;
	return v;
}

/* A string, or when its length is SAME_AS_UNIT a copy of same. */
static char *get_str_or(struct reader *r, const char *same)
{
	uint32_t n = get_u32(r);
	char *s;

	if (n == SAME_AS_UNIT && same && !r->bad)
		return sl_xstrdup(same);
	if (r->bad || n > r->left) {
		r->bad = 1;
		return sl_xstrdup("");
	}
	s = sl_xstrndup((const char *)r->p, n);
	r->p += n;
	r->left -= n;
	return s;
}

static char *get_str(struct reader *r)
{
	return get_str_or(r, NULL);
}

/* Decode a cached result into out; 0, or -1 (nothing appended) if it is corrupt. */
static int decode_targets(sl_target_list *out, const void *data, size_t len,
			  const struct entry *e, const sl_lang *lang)
{
	struct reader r = { data, len, 0 };
	size_t base = out->n;
	uint32_t n = get_u32(&r);

	for (uint32_t i = 0; i < n && !r.bad; i++) {
		sl_target *t;
		uint32_t u;

		SL_ALLOC_GROW(out->v, out->n + 1, out->alloc);
		t = &out->v[out->n++];
		memset(t, 0, sizeof(*t));
		t->path = sl_xstrdup(e->path);
		t->lang = lang->name;
		git_oid_tostr(t->blob, sizeof(t->blob), &e->oid);
		u = get_u32(&r);
		t->unit = unit_names[u < 5 ? u : 0];
		t->start_byte = get_u32(&r);
		t->end_byte = get_u32(&r);
		t->start_line = get_u32(&r);
		t->start_col = get_u32(&r);
		t->end_line = get_u32(&r);
		t->end_col = get_u32(&r);
		t->unit_text = get_str(&r);
		t->nsites = get_u32(&r);
		if (r.bad || t->nsites > r.left / 28) {
			t->nsites = 0;
			r.bad = 1;
			break;
		}
		t->sites = sl_xcalloc(t->nsites ? t->nsites : 1, sizeof(*t->sites));
		for (size_t j = 0; j < t->nsites && !r.bad; j++) {
			sl_site *s = &t->sites[j];

			s->start_byte = get_u32(&r);
			s->end_byte = get_u32(&r);
			s->start_line = get_u32(&r);
			s->start_col = get_u32(&r);
			s->end_line = get_u32(&r);
			s->end_col = get_u32(&r);
			s->ncaps = get_u32(&r);
			if (r.bad || s->ncaps > r.left / 16) {
				s->ncaps = 0;
				r.bad = 1;
				break;
			}
			s->caps = sl_xcalloc(s->ncaps ? s->ncaps : 1, sizeof(*s->caps));
			for (size_t k = 0; k < s->ncaps; k++) {
				s->caps[k].name = get_str(&r);
				s->caps[k].start_byte = get_u32(&r);
				s->caps[k].end_byte = get_u32(&r);
				s->caps[k].text = get_str_or(&r, t->unit_text);
			}
		}
	}
	if (r.bad || r.left) {
		for (size_t i = base; i < out->n; i++)
			target_release(&out->v[i]);
		out->n = base;
		return -1;
	}
	return 0;
}

void sl_target_encode(sl_buf *out, const sl_target *t)
{
	encode_targets(out, t, 1);
}

int sl_target_decode(sl_target *out, const void *data, size_t len, const char *path,
		     const char *blob, const char *lang, sl_err *err)
{
	sl_target_list one = SL_TARGET_LIST_INIT;
	struct entry e = { .path = (char *)path };
	const sl_lang *l = sl_lang_find(lang);
	int ret = SL_OK;

	memset(out, 0, sizeof(*out));
	if (!l || git_oid_fromstr(&e.oid, blob))
		ret = sl_err_set(err, SL_EINPUT, "%s: a target of language '%s', blob '%s': "
				 "not scoped here", path, lang, blob);
	else if (decode_targets(&one, data, len, &e, l) || one.n != 1)
		ret = sl_err_set(err, SL_EINPUT, "%s: the stored target does not decode", path);
	else
		*out = one.v[0];
	if (ret)
		sl_target_list_release(&one);
	else
		free(one.v);
	return ret;
}

/* The cache key of a query and the options that change a file's result. */
static void query_key(char out[GIT_OID_HEXSZ + 1], const sl_scope_opts *opts,
		      const struct compiled *c, enum unit_kind unit)
{
	sl_buf b = SL_BUF_INIT;
	git_oid oid;
	uint32_t nl;
	const char *cap = ts_query_capture_name_for_id(c->q, c->site_cap, &nl);

	sl_buf_adds(&b, CACHE_FORMAT);
	sl_buf_add(&b, "", 1);
	sl_buf_adds(&b, c->lang->name);
	sl_buf_add(&b, "", 1);
	sl_buf_add(&b, cap, nl);
	sl_buf_add(&b, "", 1);
	sl_buf_adds(&b, unit_names[unit]);
	sl_buf_add(&b, "", 1);
	sl_buf_adds(&b, opts->query);
	if (git_odb_hash(&oid, b.buf, b.len, GIT_OBJECT_BLOB))
		memset(&oid, 0, sizeof(oid));
	git_oid_tostr(out, GIT_OID_HEXSZ + 1, &oid);
	sl_buf_release(&b);
}

/* State shared by the threads; `next`, `fail_at` and `deferred` are what they change. */
struct shared {
	const struct compiled *c;
	const sl_scope_opts *opts;
	enum unit_kind unit;
	struct entry *v;           /* each thread writes only the entries it took */
	size_t *todo;              /* indices into v of the files to scope */
	size_t ntodo;
	int want_enc;
	const char *gitdir;        /* the caller's repository, for the helpers' handles */
	const sl_worktree *wt;     /* NULL: every file is read from its blob */
	atomic_size_t next;        /* the next position in todo to take */
	atomic_size_t fail_at;     /* the first position in todo that failed; SIZE_MAX: none */
	pthread_mutex_t lock;      /* guards deferred */
	size_t *deferred;          /* positions a helper could not read on its own handle */
	size_t ndeferred, deferred_alloc;
	/* opts->emit: the main thread passes on the targets of v in order */
	size_t nv, emit_next;      /* entries; the first not passed on yet */
	int keep_enc;              /* the cache stores the results */
	int emit_err;              /* what opts->emit returned, if not 0 */
	/*
	 * With opts->emit and a cache, the results parsed now go to the cache
	 * as they are passed on, CACHE_PUT_BATCH files a transaction, so no
	 * more than that many encodings wait, and the cache hits' results are
	 * read again when their turn comes, those among the next
	 * CACHE_READ_BATCH files a transaction: memory does not grow with the
	 * tree, fresh or cached.
	 */
	sl_scope_cache *cache;
	size_t *puts, nputs;       /* entries passed on, not in the cache yet */
	sl_err cache_err;
	/*
	 * With opts->emit, a helper takes no file more than EMIT_AHEAD
	 * positions of todo past those passed on: else it parses the whole
	 * tree while the main thread's emit (a store's inserts, say) is
	 * slower, and every file's result waits in memory (200 MB at 300,000
	 * targets).
	 */
	size_t todo_emitted;       /* main thread: positions of todo passed on */
	atomic_size_t emitted_pos; /* the same, for the helpers */
	atomic_uint helpers_active;
	atomic_int no_wait;        /* a file was deferred, or emit failed: none waits */
	atomic_size_t nenc, nenc_max; /* encodings held (entry.enc), now and at the most */
};

#define CACHE_PUT_BATCH 256
#define CACHE_READ_BATCH 128
#define EMIT_AHEAD 64

/* Give e the encoding enc of len bytes, counted in sh->nenc. */
static void enc_keep(struct shared *sh, struct entry *e, char *enc, size_t len)
{
	size_t n = atomic_fetch_add(&sh->nenc, 1) + 1;
	size_t max = atomic_load(&sh->nenc_max);

	e->enc = enc;
	e->enc_len = len;
	while (n > max && !atomic_compare_exchange_weak(&sh->nenc_max, &max, n))
		;
}

/* Free e's encoding, if any. */
static void enc_drop(struct shared *sh, struct entry *e)
{
	if (!e->enc)
		return;
	free(e->enc);
	e->enc = NULL;
	atomic_fetch_sub(&sh->nenc, 1);
}

/* A thread that reads and parses: the main thread, or a helper. */
struct worker {
	struct shared *sh;
	git_repository *repo;      /* the caller's (main thread), or the helper's own */
	int helper;
	sl_target_list out;
	sl_scope_stats st;         /* counters only */
	sl_err err;
	size_t err_at;             /* position in todo of the file that failed; SIZE_MAX: none */
	pthread_t tid;
};

/* What a thread needs to parse and query: its own parser, cursor and scratch sites. */
struct parse_state {
	TSParser *parser;
	TSQueryCursor *cursor;
	struct raw *raws;
	size_t raws_alloc;
	sl_item *items;
	TSRange *ranges;
	char *code;                /* the file with comments and literals blanked */
	unsigned char *may;        /* per piece: 1 it may hold a match; 2 (an item's first
				      piece) its item is parsed whole (mark_errors) */
	size_t nitems;             /* the pieces in items */
	size_t items_alloc, ranges_alloc, code_alloc, may_alloc;
};

/* Record that the file at position k failed: fail_at becomes the least such position. */
static void note_failure(struct shared *sh, size_t k)
{
	size_t cur = atomic_load(&sh->fail_at);

	while (k < cur && !atomic_compare_exchange_weak(&sh->fail_at, &cur, k))
		;
}

/* A failure of the file at position k, kept in the worker; always SL_ERROR-or-worse. */
static int worker_fail(struct worker *wk, size_t k)
{
	wk->err_at = k;
	note_failure(wk->sh, k);
	return wk->err.code ? wk->err.code : SL_ERROR;
}

static int parse_state_init(struct parse_state *ps, const struct compiled *c, sl_err *err)
{
	memset(ps, 0, sizeof(*ps));
	ps->parser = ts_parser_new();
	ps->cursor = ts_query_cursor_new();
	if (!ts_parser_set_language(ps->parser, c->lang->grammar()))
		return sl_err_set(err, SL_ERROR, "grammar of '%s' not supported by this tree-sitter",
				  c->lang->name);
	return 0;
}

static void parse_state_release(struct parse_state *ps)
{
	free(ps->raws);
	free(ps->items);
	free(ps->code);
	free(ps->may);
	free(ps->ranges);
	ts_query_cursor_delete(ps->cursor);
	ts_parser_delete(ps->parser);
	memset(ps, 0, sizeof(*ps));
}

/*
 * Read e's blob into *out.  One read per blob: the object database
 * inflates it once (no separate header read) and, with strict hash
 * verification off (main.c), does not hash it again.
 */
static int read_blob(git_repository *repo, const struct entry *e, git_odb_object **out,
		     sl_err *err)
{
	git_odb *odb = NULL;
	int ret = SL_ERROR;

	*out = NULL;
	if (git_repository_odb(&odb, repo) || git_odb_read(out, odb, &e->oid)) {
		git_fail(err, "cannot read blob");
		sl_err_prefix(err, "%s: ", e->path);
		goto done;
	}
	if (git_odb_object_type(*out) != GIT_OBJECT_BLOB) {
		sl_err_set(err, SL_ERROR, "%s: not a blob", e->path);
		goto done;
	}
	ret = 0;
done:
	if (ret) {
		git_odb_object_free(*out);
		*out = NULL;
	}
	git_odb_free(odb);
	return ret;
}

/* Run the query on a parsed file; its sites go to ps->raws, *nraws counts them. */
static int run_query(struct worker *wk, struct parse_state *ps, const struct entry *e,
		     TSTree *tree, const char *text, size_t size, size_t *nraws)
{
	const struct compiled *c = wk->sh->c;
	TSQueryMatch m;
	int64_t t0;

	ts_query_cursor_set_match_limit(ps->cursor, SL_CAP_QUERY_MATCHES);
	ts_query_cursor_exec(ps->cursor, c->q, ts_tree_root_node(tree));
	t0 = sl_now_ms();
	for (unsigned long n = 0; ts_query_cursor_next_match(ps->cursor, &m); n++) {
		if (!(n & 255) && sl_now_ms() - t0 > SL_CAP_QUERY_FILE_MS)
			return sl_err_set(&wk->err, SL_EINPUT, "%s: the query ran longer than %d s on this file",
					  e->path, SL_CAP_QUERY_FILE_MS / 1000);
		if (sl_preds_eval(c->preds, &m, text, size))
			add_raw(&ps->raws, nraws, &ps->raws_alloc, c, wk->sh->unit, &m, text, size);
	}
	if (ts_query_cursor_did_exceed_match_limit(ps->cursor))
		return sl_err_set(&wk->err, SL_EINPUT, "%s: the query needs more than %d partial matches "
				  "at once on this file; make it more specific", e->path, SL_CAP_QUERY_MATCHES);
	return 0;
}

/* Append r to ps->ranges (kept of them so far), merged with the last where they touch. */
static size_t add_range(struct parse_state *ps, size_t kept, const TSRange *r)
{
	if (kept && ps->ranges[kept - 1].end_byte == r->start_byte) {
		ps->ranges[kept - 1].end_byte = r->end_byte;
		ps->ranges[kept - 1].end_point = r->end_point;
		return kept;
	}
	SL_ALLOC_GROW(ps->ranges, kept + 1, ps->ranges_alloc);
	ps->ranges[kept] = *r;
	return kept + 1;
}

/*
 * Add to ps->ranges (kept of them so far; merged where they touch) the
 * pieces of one item, ps->items[from .. to), that may hold a match, and
 * the item's frame with them; ps->may holds the verdicts.
 */
static size_t keep_item(struct parse_state *ps, size_t from, size_t to, size_t kept, int whole)
{
	int any = 0;

	for (size_t i = from; i < to; i++)
		any |= ps->may[i] & 1;
	for (size_t i = from; i < to; i++) {
		const sl_item *it = &ps->items[i];

		/* a conditional's line is parsed whatever it holds */
		if (!(whole || (ps->may[i] & 1) || it->kind == SL_ITEM_ALWAYS ||
		      (any && it->kind == SL_ITEM_FRAME)))
			continue;
		kept = add_range(ps, kept, &it->r);
	}
	return kept;
}

/*
 * Where tree, parsed from the pieces kept, has a syntax error (an ERROR
 * or MISSING node) that is not inside one statement of a function (an
 * SL_ITEM_MAY piece of an item split into several): error recovery
 * depends on what surrounds the error, which the pieces left out change.
 * An error elsewhere in a function split into statements (its head,
 * across statements) marks it to be parsed whole (bit 2 of ps->may at
 * its first piece); returns 1 if that adds pieces.  An error outside such
 * a function (a declaration, a directive, across items) returns -1: the
 * file is parsed whole.  Else 0.
 */
static int mark_errors(struct parse_state *ps, size_t n, TSTree *tree)
{
	TSTreeCursor cur = ts_tree_cursor_new(ts_tree_root_node(tree));
	size_t p = 0, first = 0;
	int ret = 0;

	/* depth first, into nodes that hold an error only: the errors come in order */
	for (;;) {
		TSNode node = ts_tree_cursor_current_node(&cur);
		const sl_item *it;
		uint32_t from, to;
		size_t end;

		if (!(ts_node_is_missing(node) || !strcmp(ts_node_type(node), "ERROR"))) {
			if (ts_node_has_error(node) && ts_tree_cursor_goto_first_child(&cur))
				continue;
			goto next;
		}
		from = ts_node_start_byte(node);
		to = ts_node_end_byte(node);
		while (p + 1 < n && ps->items[p].r.end_byte < from + (from < to))
			if (ps->items[++p].first)
				first = p;
		for (end = first + 1; end < n && !ps->items[end].first; end++)
			;
		if (to > ps->items[end - 1].r.end_byte) {
			ret = -1;
			break;
		}
		if (end - first < 2)
			goto next;
		it = &ps->items[p];
		/* inside one statement, or inside a function's head (SL_ITEMS_BODY's frame) */
		if ((it->kind == SL_ITEM_MAY && it->r.start_byte <= from && to <= it->r.end_byte) ||
		    (it->kind == SL_ITEM_FRAME && p == first && it->r.start_byte <= from &&
		     to < it->r.end_byte))
			goto next;
		if (!(ps->may[first] & 2))
			for (size_t i = first; i < end; i++)
				ret |= !(ps->may[i] & 1) && ps->items[i].kind != SL_ITEM_FRAME;
		ps->may[first] |= 2;
next:
		while (!ts_tree_cursor_goto_next_sibling(&cur))
			if (!ts_tree_cursor_goto_parent(&cur))
				goto done;
	}
done:
	ts_tree_cursor_delete(&cur);
	return ret;
}

/*
 * The ranges to parse of the n pieces in ps->items: of each item, the
 * pieces that may hold a match and its frame; all its pieces when it is
 * marked whole (mark_errors).
 */
static size_t keep_items(struct parse_state *ps, size_t n)
{
	size_t kept = 0;

	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && !ps->items[j].first; j++)
			;
		kept = keep_item(ps, i, j, kept, ps->may[i] & 2);
	}
	return kept;
}

/*
 * The ranges to parse again of the n pieces in ps->items: every piece of
 * each item marked whole (mark_errors), and the conditionals' lines, which
 * keep them in their branches as in the first parse.
 */
static size_t keep_marked(struct parse_state *ps, size_t n)
{
	size_t kept = 0;

	for (size_t i = 0, j; i < n; i = j) {
		int whole = ps->may[i] & 2;

		for (j = i + 1; j < n && !ps->items[j].first; j++)
			;
		for (size_t k = i; k < j; k++) {
			const sl_item *it = &ps->items[k];

			if (!whole && it->kind != SL_ITEM_ALWAYS)
				continue;
			kept = add_range(ps, kept, &it->r);
		}
	}
	return kept;
}

/* 1 if byte b lies in an item marked whole (mark_errors). */
static int in_marked(const struct parse_state *ps, uint32_t b)
{
	size_t lo = 0, hi = ps->nitems;

	/* the piece that holds b, then the first piece of its item */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ps->items[mid].r.end_byte <= b)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == ps->nitems)
		return 0;
	while (lo && !ps->items[lo].first)
		lo--;
	return !!(ps->may[lo] & 2);
}

/*
 * Of raws [from, *nraws), keep those whose site lies in an item marked
 * whole (inside), or those whose site does not (!inside); the others are
 * released.
 */
static void filter_raws(struct parse_state *ps, size_t from, size_t *nraws, int inside)
{
	size_t out = from;

	for (size_t i = from; i < *nraws; i++) {
		struct raw *r = &ps->raws[i];

		if (in_marked(ps, r->site.start_byte) == inside) {
			ps->raws[out] = *r;
			ps->raws[out].seq = out;
			out++;
		} else {
			site_release(&r->site);
		}
	}
	*nraws = out;
}

/* 1 if tree has a syntax error outside the items marked whole. */
static int error_outside_marked(const struct parse_state *ps, TSTree *tree)
{
	TSTreeCursor cur = ts_tree_cursor_new(ts_tree_root_node(tree));
	int found = 0;

	/* a cursor: ts_node_child(root, i) walks the i children before it */
	if (ts_tree_cursor_goto_first_child(&cur)) {
		do {
			TSNode child = ts_tree_cursor_current_node(&cur);

			found = (ts_node_has_error(child) || ts_node_is_missing(child)) &&
				!in_marked(ps, ts_node_start_byte(child));
		} while (!found && ts_tree_cursor_goto_next_sibling(&cur));
	}
	ts_tree_cursor_delete(&cur);
	return found;
}

/* The bytes in n ranges. */
static size_t ranges_bytes(const TSRange *r, size_t n)
{
	size_t sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += r[i].end_byte - r[i].start_byte;
	return sum;
}

/*
 * Parse only the top-level items of the file, or the statements of its
 * functions (c->split), that may hold a match, when the query allows it
 * (c->by_items): *tree, or NULL to parse the file whole (the items cannot
 * be told apart, or every item may hold a match).  Returns 1 when no item
 * may hold a match, else 0.
 */
static int parse_items(struct worker *wk, struct parse_state *ps, const char *text, size_t size,
		       TSTree **tree, TSTree **marked)
{
	const struct compiled *c = wk->sh->c;
	size_t n, kept = 0, may = 0;

	*tree = *marked = NULL;
	ps->nitems = 0;
	SL_ALLOC_GROW(ps->code, size, ps->code_alloc);
	n = sl_items_split(text, size, &ps->items, &ps->items_alloc, ps->code, c->split);
	if (n < 2)
		return 0;
	SL_ALLOC_GROW(ps->may, n, ps->may_alloc);
	for (size_t i = 0, judged = 0; i < n; i++) {
		const sl_item *it = &ps->items[i];
		uint32_t end = it->judge_end ? it->judge_end : it->r.end_byte;

		if (it->kind == SL_ITEM_WITH) {
			ps->may[i] = ps->may[judged];   /* kept with its statement's first piece */
			continue;
		}
		ps->may[i] = it->kind != SL_ITEM_NEVER &&
			sl_prefilter_pass_code(c->skip, text + it->r.start_byte,
					       ps->code + it->r.start_byte, end - it->r.start_byte);
		may += ps->may[i];
		if (it->kind == SL_ITEM_MAY)
			judged = i;
	}
	if (!may)
		return 1;
	kept = keep_items(ps, n);
	if ((kept == 1 && ps->ranges[0].start_byte == 0 && ps->ranges[0].end_byte == size) ||
	    !ts_parser_set_included_ranges(ps->parser, ps->ranges, (uint32_t)kept))
		return 0;
	wk->st.bytes_parsed += ranges_bytes(ps->ranges, kept);
	*tree = ts_parser_parse_string(ps->parser, NULL, text, (uint32_t)size);
	if (*tree && c->split && ts_node_has_error(ts_tree_root_node(*tree))) {
		int again = mark_errors(ps, n, *tree);

		if (again)
			wk->st.parsed_again++;
		/*
		 * The items marked are parsed again whole, by themselves: the
		 * first tree still serves for the others (an error across
		 * items gave -1)
		 */
		if (again > 0 && ts_parser_set_included_ranges(ps->parser, ps->ranges,
							       (uint32_t)(kept = keep_marked(ps, n)))) {
			wk->st.bytes_parsed += ranges_bytes(ps->ranges, kept);
			*marked = ts_parser_parse_string(ps->parser, NULL, text, (uint32_t)size);
			ps->nitems = n;
		}
		if (again && !*marked) {
			ts_tree_delete(*tree);
			*tree = NULL;
		}
	}
	ts_parser_set_included_ranges(ps->parser, NULL, 0);
	if (*tree)
		wk->st.parsed_in_part++;
	return 0;
}

/*
 * Whether the whole file may hold a match: its text passes the filter,
 * and where the language has a lexical scan (blank.h), its text with
 * comments and literals blanked too.
 */
static int pass_whole(struct worker *wk, struct parse_state *ps, const char *text, size_t size)
{
	const struct compiled *c = wk->sh->c;

	if (!sl_prefilter_pass(c->skip, text, size))
		return 0;
	if (!c->skip || c->by_items)
		return 1;
	SL_ALLOC_GROW(ps->code, size, ps->code_alloc);
	return !sl_blank_code(c->lang->name, text, size, ps->code) ||
	       sl_prefilter_pass_code(c->skip, text, ps->code, size);
}

/*
 * Scope one file from its blob's text: append its targets to the worker's
 * list, fill e's flags, encode the result when the cache or a duplicate
 * wants it.
 */
static int scope_text(struct worker *wk, struct parse_state *ps, struct entry *e,
		      const char *text, size_t size)
{
	const struct compiled *c = wk->sh->c;
	TSTree *tree = NULL, *marked = NULL;
	size_t nraws = 0, before = wk->out.n;
	int ret = SL_ERROR;

	/* the size check comes after the read: the waste is one oversized blob at a time */
	if (size > SL_CAP_SOURCE_BYTES || memchr(text, 0, size < BINARY_SNIFF ? size : BINARY_SNIFF)) {
		e->skipped = 1;
		ret = 0;
		goto done;
	}
	wk->st.bytes_read += size;
	if (!wk->sh->opts->no_prefilter &&
	    (!pass_whole(wk, ps, text, size) ||
	     (c->by_items && parse_items(wk, ps, text, size, &tree, &marked)))) {
		/* as if parsed: a literal with no match is still one */
		e->flags |= CF_PREFILTERED;
		if (c->pf && sl_prefilter_pass(c->pf, text, size))
			e->flags |= CF_LIT_NO_MATCH;
		wk->st.skipped_prefilter++;
		goto encode;
	}
	if (!tree)
		wk->st.bytes_parsed += size;
	if (!tree && !(tree = ts_parser_parse_string(ps->parser, NULL, text, (uint32_t)size))) {
		sl_err_set(&wk->err, SL_ERROR, "%s: tree-sitter could not parse the file", e->path);
		goto done;
	}
	wk->st.parsed++;
	if (marked ? ts_node_has_error(ts_tree_root_node(marked)) || error_outside_marked(ps, tree) :
	    ts_node_has_error(ts_tree_root_node(tree)))
		e->flags |= CF_PARSE_ERROR;
	if (run_query(wk, ps, e, tree, text, size, &nraws))
		goto done;
	if (marked) {
		/* the items marked whole: their sites from their own parse */
		size_t first;

		filter_raws(ps, 0, &nraws, 0);
		first = nraws;
		if (run_query(wk, ps, e, marked, text, size, &nraws))
			goto done;
		filter_raws(ps, first, &nraws, 1);
	}
	group_targets(&wk->out, ps->raws, nraws, e, c, text);
	nraws = 0;
	if (c->pf && wk->out.n == before && sl_prefilter_pass(c->pf, text, size))
		e->flags |= CF_LIT_NO_MATCH;
encode:
	if (wk->sh->want_enc || e->has_dups) {
		sl_buf b = SL_BUF_INIT;
		size_t len;
		char *enc;

		encode_targets(&b, wk->out.v + before, wk->out.n - before);
		enc = sl_buf_detach(&b, &len);
		enc_keep(wk->sh, e, enc, len);
	}
	if (wk->sh->opts->emit) {
		/* passed on from the encoding, in order, by the main thread */
		for (size_t i = before; i < wk->out.n; i++)
			target_release(&wk->out.v[i]);
		wk->out.n = before;
	}
	ret = 0;
done:
	for (size_t i = 0; i < nraws; i++)
		site_release(&ps->raws[i].site);
	if (tree)
		ts_tree_delete(tree);
	if (marked)
		ts_tree_delete(marked);
	e->scoped = !ret;
	if (!ret)
		atomic_store_explicit(&e->done, 1, memory_order_release);
	return ret;
}

/*
 * Pass on to opts->emit, in tree order (which is the order of paths), the
 * targets of every entry from sh->emit_next on whose result is in: a
 * cache hit's, a worker's, or for a duplicate its first's; stop at the
 * first entry still being scoped.  An encoding no one needs any more is
 * freed.  Main thread only.  Returns what emit returned, if not 0.
 */
static int flush_puts(struct shared *sh)
{
	char bhex[GIT_OID_HEXSZ + 1];
	int ret = 0;

	if (!sh->nputs)
		return 0;
	if (sl_scope_cache_begin(sh->cache, &sh->cache_err))
		ret = SL_ERROR;
	for (size_t i = 0; !ret && i < sh->nputs; i++) {
		const struct entry *e = &sh->v[sh->puts[i]];

		git_oid_tostr(bhex, sizeof(bhex), &e->oid);
		if (sl_scope_cache_put(sh->cache, bhex, e->flags, e->enc, e->enc_len, &sh->cache_err))
			ret = SL_ERROR;
	}
	if (!ret && sl_scope_cache_commit(sh->cache, &sh->cache_err))
		ret = SL_ERROR;
	if (ret) {
		sl_scope_cache_abort(sh->cache);
		return ret;
	}
	for (size_t i = 0; i < sh->nputs; i++) {
		struct entry *e = &sh->v[sh->puts[i]];

		e->put = 1;
		if (!e->dups_left)
			enc_drop(sh, e);
	}
	sh->nputs = 0;
	return 0;
}

/*
 * Read from the cache the encodings of the hits among the CACHE_READ_BATCH
 * entries from sh->emit_next on.  lookup_cache found and decoded them
 * already: a row gone or changed since (another campaign's run on the same
 * store pruning the cache) fails the run, which a rerun scopes afresh.
 */
static int reread_hits(struct shared *sh)
{
	size_t end = sh->nv - sh->emit_next > CACHE_READ_BATCH ?
		sh->emit_next + CACHE_READ_BATCH : sh->nv;
	char bhex[GIT_OID_HEXSZ + 1];
	int rc = 0;

	if (sl_scope_cache_begin(sh->cache, &sh->cache_err))
		return SL_ERROR;
	for (size_t i = sh->emit_next; rc >= 0 && i < end; i++) {
		struct entry *e = &sh->v[i];
		sl_scope_cache_val val;
		char *enc;

		if (!e->reread)
			continue;
		git_oid_tostr(bhex, sizeof(bhex), &e->oid);
		if ((rc = sl_scope_cache_get(sh->cache, bhex, &val, &sh->cache_err)) == 0)
			rc = sl_err_set(&sh->cache_err, SL_ERROR, "%s: its row of the scope cache "
					"went away while scoping; run again", e->path);
		if (rc < 0)
			break;
		enc = sl_xmalloc(val.len ? val.len : 1);
		memcpy(enc, val.data, val.len);
		enc_keep(sh, e, enc, val.len);
		e->reread = 0;
	}
	if (rc < 0) {
		sl_scope_cache_abort(sh->cache);
		return SL_ERROR;
	}
	return sl_scope_cache_commit(sh->cache, &sh->cache_err) ? SL_ERROR : 0;
}

static int emit_ready(struct shared *sh)
{
	sl_target_list one = SL_TARGET_LIST_INIT;

	while (!sh->emit_err && sh->emit_next < sh->nv) {
		struct entry *e = &sh->v[sh->emit_next];
		struct entry *src = e->dup_of ? &sh->v[e->dup_of - 1] : e;

		if (!src->from_cache && !atomic_load_explicit(&src->done, memory_order_acquire))
			break;
		if (src->reread && reread_hits(sh)) {
			sh->emit_err = SL_ERROR;
			break;
		}
		if (src->enc && decode_targets(&one, src->enc, src->enc_len, e, sh->c->lang)) {
			if (!src->from_cache)
				BUG("cannot decode the result of '%s'", src->path);
			sl_err_set(&sh->cache_err, SL_ERROR, "%s: its row of the scope cache "
				   "changed while scoping; run again", src->path);
			sh->emit_err = SL_ERROR;
			break;
		}
		if (one.n > 1)
			qsort(one.v, one.n, sizeof(*one.v), target_cmp);
		for (size_t i = 0; i < one.n && !sh->emit_err; i++)
			sh->emit_err = sh->opts->emit(&one.v[i], sh->opts->emit_arg);
		for (size_t i = 0; i < one.n; i++)
			target_release(&one.v[i]);
		one.n = 0;
		/* a duplicate comes after its first: the last one frees the encoding */
		if (e->dup_of)
			src->dups_left--;
		if (sh->cache && !e->dup_of && !e->from_cache && !e->skipped && e->enc) {
			if (!sh->puts)
				sh->puts = sl_xcalloc(CACHE_PUT_BATCH, sizeof(*sh->puts));
			sh->puts[sh->nputs++] = sh->emit_next;
		}
		if ((!sh->keep_enc || src->from_cache || src->put) && !src->dups_left)
			enc_drop(sh, src);
		sh->emit_next++;
		if (sh->nputs == CACHE_PUT_BATCH && flush_puts(sh))
			sh->emit_err = SL_ERROR;
	}
	free(one.v);
	while (sh->todo_emitted < sh->ntodo && sh->todo[sh->todo_emitted] < sh->emit_next)
		sh->todo_emitted++;
	atomic_store(&sh->emitted_pos, sh->todo_emitted);
	if (sh->emit_err)
		atomic_store(&sh->no_wait, 1);
	return sh->emit_err;
}

/*
 * Scope the file at position k: from the work tree when the file there
 * holds its blob (worktree.h), else from the blob.  Returns 1 when a
 * helper could not read the blob on its own handle (the caller defers
 * it), -1 when the file failed (the worker holds the error).
 */
static int scope_one(struct worker *wk, struct parse_state *ps, size_t k)
{
	struct entry *e = &wk->sh->v[wk->sh->todo[k]];
	git_odb_object *obj = NULL;
	char *text = NULL;
	size_t len;
	int ret;

	if (e->ie && !sl_worktree_read(wk->sh->wt, wk->repo, e->path, e->ie, &text, &len)) {
		wk->st.read_worktree++;
		ret = scope_text(wk, ps, e, text, len);
		free(text);
		return ret ? (worker_fail(wk, k), -1) : 0;
	}
	if (read_blob(wk->repo, e, &obj, &wk->err)) {
		if (!wk->helper)
			return worker_fail(wk, k), -1;
		sl_err_clear(&wk->err);
		return 1;
	}
	ret = scope_text(wk, ps, e, git_odb_object_data(obj), git_odb_object_size(obj));
	git_odb_object_free(obj);
	return ret ? (worker_fail(wk, k), -1) : 0;
}

/*
 * The next position in todo into *k: 0 when none is left or a file before
 * it failed.  A helper waits while it is EMIT_AHEAD past what was passed
 * on: the positions before it are done or being done by threads that do
 * not wait, and the main thread passes them on (run_workers, at the end).
 */
static int take(struct worker *wk, size_t *k)
{
	struct shared *sh = wk->sh;
	const struct timespec ms = { 0, 1000 * 1000 };

	*k = atomic_fetch_add(&sh->next, 1);
	while (wk->helper && sh->opts->emit && *k < sh->ntodo &&
	       *k >= atomic_load(&sh->emitted_pos) + EMIT_AHEAD && !atomic_load(&sh->no_wait) &&
	       *k <= atomic_load(&sh->fail_at))
		nanosleep(&ms, NULL);
	return *k < sh->ntodo && *k <= atomic_load(&sh->fail_at);
}

/* A blob a helper could not read: the main thread reads it at the end. */
static void defer(struct shared *sh, size_t k)
{
	/* it is read after the helpers end: none may wait for it to be passed on */
	atomic_store(&sh->no_wait, 1);
	pthread_mutex_lock(&sh->lock);
	SL_ALLOC_GROW(sh->deferred, sh->ndeferred + 1, sh->deferred_alloc);
	sh->deferred[sh->ndeferred++] = k;
	pthread_mutex_unlock(&sh->lock);
}

/*
 * Take positions in todo until none is left; read each blob on the
 * worker's repository handle and scope it.  Positions are taken in order
 * and none past the first failure, so every file before it is scoped and
 * which error is reported never depends on timing.  A helper that cannot
 * read a blob on its own handle defers it to the main thread, whose handle
 * is the caller's and sees every object the caller's does (an object
 * database backend the caller added, say).
 */
static void work(struct worker *wk)
{
	struct shared *sh = wk->sh;
	struct parse_state ps;
	size_t k;
	int rc;

	if (parse_state_init(&ps, sh->c, &wk->err)) {
		worker_fail(wk, 0);
		goto done;
	}
	while (take(wk, &k)) {
		if ((rc = scope_one(wk, &ps, k)) == 1) {
			defer(sh, k);
			continue;
		}
		if (rc)
			break;
		if (!wk->helper && sh->opts->emit && emit_ready(sh))
			break;
	}
done:
	parse_state_release(&ps);
}

/*
 * A helper thread: a repository handle of its own (libgit2 objects are
 * never shared between threads; the packs' maps and delta bases are, by
 * libgit2), then work.  A handle that cannot be opened leaves the work to
 * the others.
 */
static void *helper_main(void *arg)
{
	struct worker *wk = arg;

	if (!git_repository_open_ext(&wk->repo, wk->sh->gitdir, GIT_REPOSITORY_OPEN_NO_SEARCH,
				     NULL))
		work(wk);
	git_repository_free(wk->repo);
	wk->repo = NULL;
	atomic_fetch_sub(&wk->sh->helpers_active, 1);
	return NULL;
}

static int size_cmp(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The main thread reads, on the caller's handle, what the helpers could
 * not.  Its own failure, if it had one, lies past every position read here:
 * its error is put aside, and comes back unless one of these fails first
 * (an sl_err keeps its first message).
 */
static void scope_deferred(struct worker *wk)
{
	struct shared *sh = wk->sh;
	struct parse_state ps;
	sl_err later;

	if (!sh->ndeferred)
		return;
	later = wk->err;
	sl_err_clear(&wk->err);
	qsort(sh->deferred, sh->ndeferred, sizeof(*sh->deferred), size_cmp);
	if (parse_state_init(&ps, sh->c, &wk->err)) {
		worker_fail(wk, sh->deferred[0]);
		goto done;
	}
	for (size_t i = 0; i < sh->ndeferred; i++) {
		size_t k = sh->deferred[i];

		if (k > atomic_load(&sh->fail_at))
			break;
		if (scope_one(wk, &ps, k))
			break;
	}
done:
	parse_state_release(&ps);
	if (!wk->err.code)
		wk->err = later;
}

static unsigned thread_count(const sl_scope_opts *opts, size_t ntodo)
{
	long n = opts->threads ? (long)opts->threads : sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		n = 1;
	if (n > 64)
		n = 64;
	if ((size_t)n > ntodo)
		n = (long)ntodo;
	return (unsigned)n;
}

void sl_scope_stats_release(sl_scope_stats *s)
{
	if (!s)
		return;
	sl_strvec_release(&s->literal_no_match_paths);
	memset(s, 0, sizeof(*s));
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int entry_oid_cmp(const void *a, const void *b)
{
	return git_oid_cmp(&(*(struct entry *const *)a)->oid, &(*(struct entry *const *)b)->oid);
}

/* By blob id, then by position in the tree walk. */
static int entry_oid_pos_cmp(const void *a, const void *b)
{
	const struct entry *x = *(struct entry *const *)a, *y = *(struct entry *const *)b;
	int c = git_oid_cmp(&x->oid, &y->oid);

	return c ? c : x < y ? -1 : x > y;
}

/* A later entry with the same blob as an earlier one: it copies that result. */
struct dup {
	size_t entry, first;
};

/*
 * Keep in todo only the first entry of each blob id (in tree order); the
 * others go to *dups_out.  Identical files (vendored copies, generated
 * code) are then read and parsed once.
 */
static size_t split_dups(struct entry *v, size_t *todo, size_t *ntodo, struct dup **dups_out)
{
	struct entry **by = sl_xcalloc(*ntodo ? *ntodo : 1, sizeof(*by));
	struct dup *dups = NULL;
	size_t n = *ntodo, ndups = 0, alloc = 0, kept = 0;

	for (size_t i = 0; i < n; i++)
		by[i] = &v[todo[i]];
	if (n > 1)
		qsort(by, n, sizeof(*by), entry_oid_pos_cmp);
	for (size_t i = 0; i < n; i++) {
		if (i && git_oid_equal(&by[i]->oid, &by[kept - 1]->oid)) {
			by[kept - 1]->has_dups = 1;
			SL_ALLOC_GROW(dups, ndups + 1, alloc);
			dups[ndups].entry = (size_t)(by[i] - v);
			dups[ndups++].first = (size_t)(by[kept - 1] - v);
			continue;
		}
		by[kept++] = by[i];
	}
	for (size_t i = 0; i < kept; i++)
		todo[i] = (size_t)(by[i] - v);
	*ntodo = kept;
	if (kept > 1)
		qsort(todo, kept, sizeof(*todo), size_cmp);
	free(by);
	*dups_out = dups;
	return ndups;
}

static int parse_unit(const char *name, enum unit_kind *out)
{
	*out = U_CAPTURE;
	if (!name)
		return 0;
	for (size_t i = 0; i < sizeof(unit_names) / sizeof(unit_names[0]); i++)
		if (!strcmp(unit_names[i], name)) {
			*out = (enum unit_kind)i;
			return 0;
		}
	return -1;
}

/* Keep the scope cache bounded: once it is over its cap, only this query's rows stay. */
static int cache_bound(sl_store *st, const char *qkey, sl_err *err)
{
	long long rows;
	int ret;

	if (sl_scope_cache_rows(st, &rows, err))
		return -1;
	if (rows <= CACHE_MAX_ROWS)
		return 0;
	if (sl_store_begin(st, err))
		return -1;
	if ((ret = sl_scope_cache_prune(st, qkey, err))) {
		sl_store_rollback(st);
		return ret;
	}
	return sl_store_commit(st, err);
}

/* One call of sl_scope: what its steps share. */
struct scope_run {
	sl_target_list *out;       /* the caller's list; this call appends from base */
	size_t base;
	git_repository *repo;
	const sl_scope_opts *opts;
	sl_scope_stats *st;        /* opts->stats, or a local one */
	struct compiled c;
	enum unit_kind unit;
	struct walk w;             /* every file of the language, in tree order */
	sl_scope_cache *cache;     /* NULL without opts->cache */
	char qkey[GIT_OID_HEXSZ + 1];
	struct dup *dups;
	size_t ndups;
	struct shared sh;          /* sh.todo: the files left to parse */
	struct worker *wks;
	unsigned nthreads;
	sl_worktree *wt;           /* NULL: no work tree to read clean files from */
};

/* Refuse an unknown unit and overrides naming an unknown language (SL_EINPUT). */
static int check_opts(struct scope_run *r, sl_err *err)
{
	const sl_scope_opts *opts = r->opts;

	if (parse_unit(opts->unit, &r->unit))
		return sl_err_set(err, SL_EINPUT,
				  "unknown unit '%s' (known: capture, statement, function, class, file)",
				  opts->unit);
	for (size_t i = 0; i < opts->noverrides; i++)
		if (!opts->overrides[i].language || !sl_lang_known(opts->overrides[i].language))
			return sl_err_set(err, SL_EINPUT, "language override '%s': unknown language '%s' (known: %s)",
					  opts->overrides[i].glob ? opts->overrides[i].glob : "",
					  opts->overrides[i].language ? opts->overrides[i].language : "",
					  sl_lang_names());
	return 0;
}

/*
 * opts->paths into r->w, each looked up in tree: a file of a campaign's
 * target checked again needs its one path, not a walk of 100,000 (issue 29).
 */
static int walk_paths(struct scope_run *r, git_tree *tree, sl_err *err)
{
	sl_buf root = SL_BUF_INIT;
	int ret = 0;

	for (size_t i = 0; i < r->opts->npaths && !ret; i++) {
		const char *path = r->opts->paths[i], *slash = strrchr(path, '/');
		git_tree_entry *te = NULL;
		int rc = git_tree_entry_bypath(&te, tree, path);

		if (rc == GIT_ENOTFOUND)
			continue;
		if (rc) {
			ret = git_fail(err, "cannot read the tree of the commit");
			break;
		}
		sl_buf_reset(&root);
		sl_buf_add(&root, path, slash ? (size_t)(slash - path) + 1 : 0);
		walk_cb(root.buf, te, &r->w);
		git_tree_entry_free(te);
	}
	sl_buf_release(&root);
	return ret;
}

/* Walk the tree of commit into r->w (SL_ENOTFOUND: no such commit). */
static int walk_commit(struct scope_run *r, const git_oid *commit, sl_err *err)
{
	git_commit *gc = NULL;
	git_tree *tree = NULL;
	char hex[GIT_OID_HEXSZ + 1];
	int ret = SL_ERROR, rc;

	git_oid_tostr(hex, sizeof(hex), commit);
	if ((rc = git_commit_lookup(&gc, r->repo, commit))) {
		if (rc == GIT_ENOTFOUND)
			ret = sl_err_set(err, SL_ENOTFOUND, "commit '%s' not found", hex);
		else
			git_fail(err, "cannot read commit");
		goto done;
	}
	if (git_commit_tree(&tree, gc)) {
		git_fail(err, "cannot read the tree of the commit");
		goto done;
	}
	r->w.lang = r->c.lang;
	r->w.opts = r->opts;
	r->w.stats = r->st;
	if (r->opts->npaths)
		ret = walk_paths(r, tree, err);
	else if (git_tree_walk(tree, GIT_TREEWALK_PRE, walk_cb, &r->w))
		git_fail(err, "cannot walk the tree of the commit");
	else
		ret = 0;
done:
	git_tree_free(tree);
	git_commit_free(gc);
	return ret;
}

/*
 * A cache hit's targets into r->out; with opts->emit only whether it has
 * any: its encoding is read again when its turn to be passed on comes
 * (reread_hits), so a rerun of a large tree never holds every file's
 * result.  -1 if the cached value does not decode (the file is scoped
 * again and its row rewritten).
 */
static int cache_hit(struct scope_run *r, struct entry *e, const sl_scope_cache_val *val)
{
	sl_target_list check = SL_TARGET_LIST_INIT;

	if (!r->opts->emit)
		return decode_targets(r->out, val->data, val->len, e, r->c.lang);
	if (decode_targets(&check, val->data, val->len, e, r->c.lang))
		return -1;
	e->reread = check.n > 0;
	sl_target_list_release(&check);
	return 0;
}

/*
 * Answer from the cache what it holds (cache_hit); every other file goes
 * to r->sh.todo, in tree order.  Opens r->cache.
 */
static int lookup_cache(struct scope_run *r, sl_err *err)
{
	struct entry **order = NULL;
	struct walk *w = &r->w;
	int ret = SL_ERROR, rc;

	r->sh.todo = sl_xcalloc(w->n ? w->n : 1, sizeof(*r->sh.todo));
	if (r->opts->cache) {
		query_key(r->qkey, r->opts, &r->c, r->unit);
		if (sl_scope_cache_open(&r->cache, r->opts->cache, r->c.lang->name, r->qkey, err) ||
		    sl_scope_cache_begin(r->cache, err))
			goto done;
	}
	/* look up in blob-id order: the cache's B-tree is then read front to back */
	order = sl_xcalloc(w->n ? w->n : 1, sizeof(*order));
	for (size_t i = 0; i < w->n; i++)
		order[i] = &w->v[i];
	if (r->cache && w->n > 1)
		qsort(order, w->n, sizeof(*order), entry_oid_cmp);
	for (size_t k = 0; k < w->n; k++) {
		struct entry *e = order[k];
		sl_scope_cache_val val;
		char bhex[GIT_OID_HEXSZ + 1];

		if (r->cache) {
			git_oid_tostr(bhex, sizeof(bhex), &e->oid);
			if ((rc = sl_scope_cache_get(r->cache, bhex, &val, err)) < 0)
				goto done;
			if (rc == 1 && !cache_hit(r, e, &val)) {
				e->flags = val.flags;
				e->scoped = e->from_cache = 1;
				r->st->cache_hits++;
				continue;
			}
		}
		r->sh.todo[r->sh.ntodo++] = (size_t)(e - w->v);
	}
	/* back to tree order: neighbours in a tree are often neighbours in a pack */
	if (r->cache && r->sh.ntodo > 1)
		qsort(r->sh.todo, r->sh.ntodo, sizeof(*r->sh.todo), size_cmp);
	ret = 0;
done:
	free(order);
	return ret;
}

/*
 * Scope the files of r->sh.todo: the main thread and r->nthreads - 1
 * helpers each take the next file, read it and parse it.
 */
static int run_workers(struct scope_run *r, sl_err *err)
{
	struct shared *sh = &r->sh;
	unsigned started = 1;

	sh->c = &r->c;
	sh->opts = r->opts;
	sh->unit = r->unit;
	sh->v = r->w.v;
	sh->want_enc = r->cache != NULL || r->opts->emit;
	sh->keep_enc = r->cache != NULL;
	sh->cache = r->opts->emit ? r->cache : NULL;
	sh->nv = r->w.n;
	if (r->w.n >= UINT32_MAX)
		return sl_err_set(err, SL_EINPUT, "more than %u files to scope", UINT32_MAX - 1);
	for (size_t i = 0; i < r->ndups; i++) {
		r->w.v[r->dups[i].entry].dup_of = (uint32_t)(r->dups[i].first + 1);
		r->w.v[r->dups[i].first].dups_left++;
	}
	sh->gitdir = git_repository_path(r->repo);
	if (sh->ntodo && !r->opts->no_worktree) {
		sl_worktree_open(&r->wt, r->repo, sh->ntodo);
		for (size_t i = 0; r->wt && i < sh->ntodo; i++) {
			struct entry *e = &r->w.v[sh->todo[i]];

			e->ie = sl_worktree_entry(r->wt, e->path, &e->oid);
		}
		sh->wt = r->wt;
	}
	atomic_init(&sh->next, 0);
	atomic_init(&sh->fail_at, SIZE_MAX);
	pthread_mutex_init(&sh->lock, NULL);
	r->nthreads = sh->ntodo ? thread_count(r->opts, sh->ntodo) : 0;
	r->wks = sl_xcalloc(r->nthreads ? r->nthreads : 1, sizeof(*r->wks));
	for (unsigned i = 0; i < r->nthreads; i++) {
		r->wks[i].sh = sh;
		r->wks[i].repo = i ? NULL : r->repo;
		r->wks[i].helper = i != 0;
		r->wks[i].out = (sl_target_list)SL_TARGET_LIST_INIT;
		r->wks[i].err_at = SIZE_MAX;
		sl_err_clear(&r->wks[i].err);
	}
	atomic_init(&sh->emitted_pos, 0);
	atomic_init(&sh->no_wait, 0);
	atomic_init(&sh->helpers_active, 0);
	for (; started < r->nthreads; started++) {
		atomic_fetch_add(&sh->helpers_active, 1);
		if (pthread_create(&r->wks[started].tid, NULL, helper_main, &r->wks[started])) {
			atomic_fetch_sub(&sh->helpers_active, 1);
			break;
		}
	}
	if (r->nthreads)
		work(&r->wks[0]);
	/* the helpers may wait for their files' turn to be passed on */
	while (r->opts->emit && atomic_load(&sh->helpers_active)) {
		const struct timespec ms = { 0, 1000 * 1000 };

		emit_ready(sh);
		nanosleep(&ms, NULL);
	}
	for (unsigned i = 1; i < started; i++)
		pthread_join(r->wks[i].tid, NULL);
	if (r->nthreads)
		scope_deferred(&r->wks[0]);
	r->st->threads = r->nthreads;
	return 0;
}

/*
 * Move the workers' targets to out and add up their counters.  On failure
 * the error of the first file (in todo order) that failed: the same
 * whatever the thread count or timing.
 */
static int collect_workers(struct scope_run *r, sl_err *err)
{
	const struct worker *failed = NULL;

	for (unsigned i = 0; i < r->nthreads; i++)
		if (r->wks[i].err_at != SIZE_MAX && (!failed || r->wks[i].err_at < failed->err_at))
			failed = &r->wks[i];
	if (failed)
		return sl_err_set(err, failed->err.code ? failed->err.code : SL_ERROR, "%s",
				  failed->err.msg[0] ? failed->err.msg : "scoping failed");
	for (unsigned i = 0; i < r->nthreads; i++) {
		struct worker *wk = &r->wks[i];

		r->st->parsed += wk->st.parsed;
		r->st->skipped_prefilter += wk->st.skipped_prefilter;
		r->st->parsed_in_part += wk->st.parsed_in_part;
		r->st->parsed_again += wk->st.parsed_again;
		r->st->bytes_read += wk->st.bytes_read;
		r->st->bytes_parsed += wk->st.bytes_parsed;
		r->st->read_worktree += wk->st.read_worktree;
		for (size_t j = 0; j < wk->out.n; j++) {
			SL_ALLOC_GROW(r->out->v, r->out->n + 1, r->out->alloc);
			r->out->v[r->out->n++] = wk->out.v[j];
		}
		wk->out.n = 0;
	}
	return 0;
}

/* Give each later file with an already scoped blob that blob's result. */
static void copy_dups(struct scope_run *r)
{
	for (size_t i = 0; i < r->ndups; i++) {
		struct entry *e = &r->w.v[r->dups[i].entry];
		const struct entry *f = &r->w.v[r->dups[i].first];

		e->flags = f->flags;
		e->skipped = f->skipped;
		e->scoped = f->scoped;
		if (f->skipped)
			continue;
		/* with opts->emit, passed on already (emit_ready) */
		if (!r->opts->emit && f->enc && decode_targets(r->out, f->enc, f->enc_len, e, r->c.lang))
			BUG("cannot decode the result of '%s'", f->path);
		if (f->flags & CF_PREFILTERED)
			r->st->skipped_prefilter++;
	}
}

/* Count every file's outcome flags into the stats (skipped, parse errors, literal without match). */
static void count_files(struct scope_run *r)
{
	sl_scope_stats *st = r->st;

	for (size_t i = 0; i < r->w.n; i++) {
		const struct entry *e = &r->w.v[i];

		if (e->skipped)
			st->skipped_other++;
		if (e->flags & CF_PARSE_ERROR)
			st->parse_errors++;
		if (e->flags & CF_LIT_NO_MATCH) {
			st->literal_no_match++;
			sl_strvec_push(&st->literal_no_match_paths, e->path);
		}
	}
	if (st->literal_no_match_paths.n > 1)
		qsort(st->literal_no_match_paths.v, st->literal_no_match_paths.n, sizeof(char *), str_cmp);
}

/* Write the results of the files parsed now in one transaction, then bound the cache. */
static int store_cache(struct scope_run *r, sl_err *err)
{
	char bhex[GIT_OID_HEXSZ + 1];

	if (!r->cache || !r->sh.ntodo)
		return 0;
	if (sl_scope_cache_begin(r->cache, err))
		return SL_ERROR;
	for (size_t i = 0; i < r->sh.ntodo; i++) {
		const struct entry *e = &r->w.v[r->sh.todo[i]];

		if (!e->scoped || e->skipped || !e->enc || e->put)
			continue;
		git_oid_tostr(bhex, sizeof(bhex), &e->oid);
		if (sl_scope_cache_put(r->cache, bhex, e->flags, e->enc, e->enc_len, err))
			return SL_ERROR;
	}
	if (sl_scope_cache_commit(r->cache, err) || cache_bound(r->opts->cache, r->qkey, err))
		return SL_ERROR;
	return 0;
}

/* Free what the run holds; on failure drop what it appended to out. */
static void scope_run_release(struct scope_run *r, int failed)
{
	if (failed) {
		for (size_t i = r->base; i < r->out->n; i++)
			target_release(&r->out->v[i]);
		r->out->n = r->base;
	}
	for (unsigned i = 0; r->wks && i < r->nthreads; i++)
		sl_target_list_release(&r->wks[i].out);
	free(r->wks);
	if (r->wks)
		pthread_mutex_destroy(&r->sh.lock);
	free(r->sh.deferred);
	free(r->sh.puts);
	free(r->dups);
	free(r->sh.todo);
	for (size_t i = 0; i < r->w.n; i++) {
		free(r->w.v[i].path);
		free(r->w.v[i].enc);
	}
	free(r->w.v);
	sl_scope_cache_free(r->cache);
	sl_worktree_free(r->wt);
	compiled_release(&r->c);
}

int sl_scope(sl_target_list *out, git_repository *repo, const git_oid *commit,
	     const sl_scope_opts *opts, sl_err *err)
{
	struct scope_run r;
	sl_scope_stats local = SL_SCOPE_STATS_INIT;
	int64_t t0 = sl_now_ms();
	int ret;

	memset(&r, 0, sizeof(r));
	atomic_init(&r.sh.nenc, 0);
	atomic_init(&r.sh.nenc_max, 0);
	r.out = out;
	r.base = out->n;
	r.repo = repo;
	r.opts = opts;
	if (!opts) {
		ret = sl_err_set(err, SL_EINPUT, "no scope options");
		goto done;
	}
	r.st = opts->stats ? opts->stats : &local;
	sl_scope_stats_release(r.st);
	if ((ret = check_opts(&r, err)) ||
	    (ret = compile_query(&r.c, opts->language, opts->query, opts->capture, NULL, err)))
		goto done;
	r.st->literals = sl_prefilter_count(r.c.skip);
	/* a unit around the site is read off its ancestors: the function's head, an else */
	if (r.unit != U_CAPTURE && r.unit != U_FILE)
		r.c.split = 0;
	if ((ret = walk_commit(&r, commit, err)) || (ret = lookup_cache(&r, err)))
		goto done;
	r.ndups = split_dups(r.w.v, r.sh.todo, &r.sh.ntodo, &r.dups);
	/* no store transaction is held while parsing */
	if (r.cache && sl_scope_cache_commit(r.cache, err)) {
		ret = SL_ERROR;
		goto done;
	}
	if ((ret = run_workers(&r, err)) || (ret = collect_workers(&r, err)))
		goto done;
	if (opts->emit && ((ret = emit_ready(&r.sh)) || (ret = flush_puts(&r.sh)))) {
		if (r.sh.cache_err.code)
			*err = r.sh.cache_err;
		else
			sl_err_set(err, ret, "cannot pass the targets on");
		goto done;
	}
	if (opts->emit && r.sh.emit_next != r.w.n)
		BUG("%zu of %zu files passed on", r.sh.emit_next, r.w.n);
	copy_dups(&r);
	count_files(&r);
	if ((ret = store_cache(&r, err)) ||
	    (opts->cache && (ret = mark_compiled(opts->cache, r.c.lang, opts->query, err))))
		goto done;
	if (out->n > r.base)
		qsort(out->v + r.base, out->n - r.base, sizeof(*out->v), target_cmp);
done:
	scope_run_release(&r, ret != 0);
	if (opts && opts->stats) {
		opts->stats->results_held = atomic_load(&r.sh.nenc_max);
		opts->stats->ms = sl_now_ms() - t0;
	}
	sl_scope_stats_release(&local);
	return ret;
}
