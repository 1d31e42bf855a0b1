/*
 * policy.c - the policy gate: limits checked on a candidate's diff.
 *
 * Reads only the diff text.  Forbidden patterns are compiled once per check
 * (regcomp is cheap next to everything else a candidate costs) and run on
 * every added line, NUL bytes turned to spaces so a pattern cannot be hidden
 * behind one.  Both the new and the old path of a renamed file are judged:
 * moving a build file away is as much an edit of it as changing it.
 */
#include <regex.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "validators/diff_lines.h"
#include "validators/policy.h"
#include "common/util.h"
#include "common/caps.h"

const char *const sl_policy_default_build_files[] = {
	/* make, autotools */
	"Makefile", "makefile", "GNUmakefile", "*.mk", "*.mak", "Makefile.am", "Makefile.in",
	"configure", "configure.ac", "configure.in", "*.m4",
	/* cmake, meson, ninja, scons, qmake */
	"CMakeLists.txt", "*.cmake", "CMakePresets.json", "meson.build", "meson_options.txt",
	"meson.options", "build.ninja", "*.ninja", "SConstruct", "SConscript", "*.pro",
	/* bazel, buck */
	"BUILD", "BUILD.bazel", "WORKSPACE", "WORKSPACE.bazel", "MODULE.bazel", "*.bazel",
	"*.bzl", ".bazelrc", ".bazelversion", "BUCK",
	/* CI */
	".github/**", ".gitlab-ci.yml", ".gitlab/**", ".circleci/**", ".travis.yml",
	"azure-pipelines.yml", "appveyor.yml", ".appveyor.yml", "Jenkinsfile", ".buildkite/**",
	".drone.yml", "bitbucket-pipelines.yml", ".pre-commit-config.yaml",
	/* language package managers and their build hooks */
	"package.json", "package-lock.json", "yarn.lock", "pnpm-lock.yaml", ".npmrc",
	"Cargo.toml", "Cargo.lock", "build.rs", ".cargo/**", "go.mod", "go.sum",
	"pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts",
	"gradle.properties", "gradlew", "gradlew.bat", "gradle/wrapper/**",
	"setup.py", "setup.cfg", "pyproject.toml", "tox.ini", "noxfile.py", "conftest.py",
	"requirements*.txt", "Pipfile", "Pipfile.lock", "Gemfile", "Gemfile.lock", "Rakefile",
	"*.gemspec", "*.csproj", "*.vcxproj", "*.sln", "Directory.Build.props",
	"Directory.Build.targets", "vcpkg.json", "conanfile.py", "conanfile.txt",
	/* containers, submodules, and the analyzers' own configuration */
	"Dockerfile", "*.dockerfile", "docker-compose*.yml", ".gitmodules", ".gitattributes",
	".clang-tidy", ".eslintrc*", ".pylintrc",
	NULL,
};

void sl_policy_result_init(sl_policy_result *r)
{
	memset(r, 0, sizeof(*r));
	r->pass = 1;
}

void sl_policy_result_release(sl_policy_result *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].file);
		free(r->v[i].message);
	}
	free(r->v);
	sl_policy_result_init(r);
}

static void add_violation(sl_policy_result *r, const char *file, unsigned line,
			  const char *rule, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void add_violation(sl_policy_result *r, const char *file, unsigned line,
			  const char *rule, const char *fmt, ...)
{
	sl_buf msg = SL_BUF_INIT;
	sl_violation *v;
	va_list ap;

	r->pass = 0;
	if (r->n >= SL_CAP_POLICY_VIOLATIONS) {
		r->dropped++;
		return;
	}
	va_start(ap, fmt);
	sl_buf_vaddf(&msg, fmt, ap);
	va_end(ap);
	SL_ALLOC_GROW(r->v, r->n + 1, r->alloc);
	v = &r->v[r->n++];
	v->file = sl_xstrdup_or_null(file);
	v->line = line;
	v->rule = rule;
	v->message = sl_buf_detach(&msg, NULL);
}

/* A pattern without '/' matches the base name at any depth. */
static int glob_path(const char *pattern, const char *path)
{
	const char *base;

	if (strchr(pattern, '/'))
		return sl_glob_match(pattern, path);
	base = strrchr(path, '/');
	return sl_glob_match(pattern, base ? base + 1 : path);
}

int sl_policy_glob_any(const char *const *patterns, const char *path)
{
	for (size_t i = 0; patterns && patterns[i]; i++)
		if (glob_path(patterns[i], path))
			return 1;
	return 0;
}

/* Why path may not be touched at all, or NULL. */
static const char *unsafe_path(const char *path)
{
	const char *s = path;

	if (!*path)
		return "empty path";
	if (path[0] == '/')
		return "absolute path";
	while (*s) {
		const char *e = strchr(s, '/');
		size_t n = e ? (size_t)(e - s) : strlen(s);

		if (n == 2 && !memcmp(s, "..", 2))
			return "path climbs out of the repository";
		if (n == 4 && !strncasecmp(s, ".git", 4))
			return "path inside .git";
		s += n;
		if (*s)
			s++;
	}
	return NULL;
}

static void check_path(sl_policy_result *r, const sl_policy_opts *opts, const char *path)
{
	const char *const *build = opts->build_files ? opts->build_files
						     : sl_policy_default_build_files;
	const char *why = unsafe_path(path);

	if (why) {
		add_violation(r, path, 0, "path", "%s", why);
		return;
	}
	if (opts->allow_paths && !sl_policy_glob_any(opts->allow_paths, path))
		add_violation(r, path, 0, "path", "file is outside the allowed paths");
	if (!opts->allow_build_files && sl_policy_glob_any(build, path))
		add_violation(r, path, 0, "build-file",
			      "build and CI files may not be changed by this campaign");
}

typedef struct forbid_ctx {
	sl_policy_result *r;
	const sl_policy_opts *opts;
	regex_t *re;
	size_t nre;
	sl_buf line;
} forbid_ctx;

static int on_added(void *data, const char *path, unsigned line, const char *text, size_t len)
{
	forbid_ctx *c = data;

	if (!c->nre)
		return 0;
	sl_buf_reset(&c->line);
	sl_buf_add(&c->line, text, len);
	for (size_t i = 0; i < c->line.len; i++)
		if (!c->line.buf[i])
			c->line.buf[i] = ' ';
	sl_buf_rtrim(&c->line);
	for (size_t i = 0; i < c->nre; i++) {
		if (regexec(&c->re[i], c->line.buf, 0, NULL, 0))
			continue;
		add_violation(c->r, path, line, "forbid", "added line matches forbidden pattern '%s': %.120s%s",
			      c->opts->forbid[i], c->line.buf, c->line.len > 120 ? "..." : "");
	}
	return 0;
}

/*
 * glibc's regcomp copies a bounded repetition once per count, nested ones
 * multiply, "x{1,32767}" alone takes seconds and gigabytes, and each '+'
 * doubles its operand (a run of 120 took gigabytes), stacked repetitions
 * ("b?????...+++") make its epsilon closures explode; its regexec backtracks
 * on back-references.  So a pattern is refused when it is long,
 * uses a back-reference, or would expand to more than SL_CAP_POLICY_RE_COST atoms.
 */

static unsigned long long re_mul(unsigned long long a, unsigned long long b)
{
	return b && a > (SL_CAP_POLICY_RE_COST + 1ULL) / b ? SL_CAP_POLICY_RE_COST + 1ULL : a * b;
}

/* NULL if pattern (an ERE) is cheap enough to compile, else why not. */
static const char *re_too_costly(const char *pattern)
{
	unsigned long long cost[SL_CAP_POLICY_RE_DEPTH + 1] = { 0 }, last = 0;
	size_t depth = 0, len = strlen(pattern);
	int repeated = 0;           /* the last thing read was a repetition */

	if (len > SL_CAP_POLICY_RE_BYTES)
		return "longer than 4096 bytes";
	for (size_t i = 0; i < len; i++) {
		char ch = pattern[i];

		/* undefined in POSIX; glibc's epsilon closure explodes on runs of them */
		if (repeated && (ch == '*' || ch == '+' || ch == '?' || ch == '{'))
			return "a repetition right after another is not supported";
		repeated = ch == '*' || ch == '+' || ch == '?';
		if (ch == '\\') {
			if (pattern[i + 1] >= '1' && pattern[i + 1] <= '9')
				return "back-references are not supported";
			i += pattern[i + 1] != '\0';
			last = 1;
		} else if (ch == '[') {
			size_t j = i + 1;

			j += pattern[j] == '^';
			j += pattern[j] == ']';
			while (j < len && pattern[j] != ']')
				j += pattern[j] == '[' && (pattern[j + 1] == ':' || pattern[j + 1] == '.' ||
							   pattern[j + 1] == '=') ?
					strcspn(pattern + j + 2, "]") + 3 : 1;
			i = j < len ? j : len;
			last = 1;
		} else if (ch == '(') {
			if (depth == SL_CAP_POLICY_RE_DEPTH)
				return "groups nested too deep";
			cost[++depth] = 0;
			continue;
		} else if (ch == ')' && depth) {
			last = cost[depth--];
		} else if (ch == '{' && last) {
			char *end;
			unsigned long lo = strtoul(pattern + i + 1, &end, 10), hi = lo;

			if (*end == ',' && end[1] == '}') {
				hi = lo + 1;        /* {m,}: m copies and a star */
				end++;
			} else if (*end == ',') {
				hi = strtoul(end + 1, &end, 10);
			}
			if (*end == '}') {
				unsigned long long n = hi > lo ? hi : lo;

				/* the atom is counted once already */
				cost[depth] += re_mul(last, n ? n - 1 : 0);
				last = re_mul(last, n);
				i = (size_t)(end - pattern);
				repeated = 1;
				if (cost[depth] > SL_CAP_POLICY_RE_COST)
					return "too large once its repetitions are expanded";
				continue;
			}
			last = 1;
		} else if (ch == '+') {
			/* x+ is compiled as x x*: each '+' doubles what it applies to */
			cost[depth] += last;
			last = re_mul(last, 2);
			if (cost[depth] > SL_CAP_POLICY_RE_COST)
				return "too large once its repetitions are expanded";
			continue;
		} else if (ch == '*' || ch == '?' || ch == '|' || ch == '^' || ch == '$') {
			continue;
		} else {
			last = 1;
		}
		cost[depth] += last;
		if (cost[depth] > SL_CAP_POLICY_RE_COST)
			return "too large once its repetitions are expanded";
	}
	return NULL;
}

static int compile_all(regex_t **out, size_t *nout, const sl_policy_opts *opts, sl_err *err)
{
	size_t n = 0;
	regex_t *re;

	*out = NULL;
	*nout = 0;
	while (opts->forbid && opts->forbid[n])
		n++;
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		const char *why = re_too_costly(opts->forbid[i]);

		if (why)
			return sl_err_set(err, SL_EINPUT, "bad forbid pattern '%.200s%s': %s",
					  opts->forbid[i], strlen(opts->forbid[i]) > 200 ? "..." : "",
					  why);
	}
	re = sl_xcalloc(n, sizeof(*re));
	for (size_t i = 0; i < n; i++) {
		int rc = regcomp(&re[i], opts->forbid[i], REG_EXTENDED | REG_NOSUB);

		if (rc) {
			char msg[256];

			regerror(rc, &re[i], msg, sizeof(msg));
			for (size_t j = 0; j < i; j++)
				regfree(&re[j]);
			free(re);
			return sl_err_set(err, SL_EINPUT, "bad forbid pattern '%s': %s",
					  opts->forbid[i], msg);
		}
	}
	*out = re;
	*nout = n;
	return 0;
}

int sl_policy_validate(const sl_policy_opts *opts, sl_err *err)
{
	regex_t *re;
	size_t n;
	int rc = compile_all(&re, &n, opts, err);

	for (size_t i = 0; i < n; i++)
		regfree(&re[i]);
	free(re);
	return rc;
}

int sl_policy_check(sl_policy_result *out, const sl_policy_opts *opts, const sl_changed *ch,
		    sl_err *err)
{
	forbid_ctx ctx = { out, opts, NULL, 0, SL_BUF_INIT };
	unsigned lines;
	int ret;

	sl_policy_result_release(out);
	if ((ret = compile_all(&ctx.re, &ctx.nre, opts, err)))
		goto done;
	sl_changed_each_added(ch, on_added, &ctx);
	if (ch->error) {
		add_violation(out, NULL, 0, "diff", "the diff does not parse: %s",
			      ch->error_msg ? ch->error_msg : "");
		goto done;
	}
	for (size_t i = 0; i < ch->nfiles; i++) {
		const sl_changed_file *f = &ch->files[i];

		check_path(out, opts, f->path);
		if (f->old_path && strcmp(f->old_path, f->path))
			check_path(out, opts, f->old_path);
	}
	if (opts->max_files && ch->nfiles > opts->max_files)
		add_violation(out, NULL, 0, "max-files", "%zu files changed, at most %u allowed",
			      ch->nfiles, opts->max_files);
	lines = ch->added + ch->removed;
	if (lines < ch->added)
		lines = ~0u;
	if (opts->max_lines && lines > opts->max_lines)
		add_violation(out, NULL, 0, "max-lines",
			      "%u lines changed (+%u -%u), at most %u allowed",
			      lines, ch->added, ch->removed, opts->max_lines);
done:
	for (size_t i = 0; i < ctx.nre; i++)
		regfree(&ctx.re[i]);
	free(ctx.re);
	sl_buf_release(&ctx.line);
	return ret;
}

void sl_policy_result_text(const sl_policy_result *r, sl_buf *out)
{
	size_t total = r->n + r->dropped;

	if (r->pass) {
		sl_buf_adds(out, "policy: pass\n");
		return;
	}
	sl_buf_addf(out, "policy: %zu violation%s\n", total, total == 1 ? "" : "s");
	for (size_t i = 0; i < r->n; i++) {
		const sl_violation *v = &r->v[i];

		if (v->file && v->line)
			sl_buf_addf(out, "%s:%u: ", v->file, v->line);
		else if (v->file)
			sl_buf_addf(out, "%s: ", v->file);
		sl_buf_addf(out, "%s: %s\n", v->rule, v->message);
	}
	if (r->dropped)
		sl_buf_addf(out, "... and %zu more\n", r->dropped);
}
