/*
 * test_items.c - sl_items_split (scoping/items.c): where a C or C++ file's
 * top-level items end, which lines are fixed, and when it gives up.
 */
#include <stdlib.h>

#include "unit.h"
#include "scoping/items.h"

/*
 * The pieces of text split with flags as "text|text|": a fixed item's
 * (SL_ITEM_ALWAYS) text in brackets, a frame's in angle brackets, one
 * never parsed in tildes, one parsed with the piece before in pluses (and
 * "=N" after a piece judged up to byte N), a '*' before the first piece of an item when it
 * follows a piece of another item in the same function... of flags, and
 * "none" when the split gives up.
 */
static const char *split(const char *text, unsigned flags)
{
	static char out[4096];
	static const char *const open[] = { "", "[", "<", "~", "+" };
	static const char *const close[] = { "", "]", ">", "~", "+" };
	sl_item *v = NULL;
	size_t alloc = 0, n = sl_items_split(text, strlen(text), &v, &alloc, NULL, flags), len = 0;

	out[0] = '\0';
	if (!n)
		snprintf(out, sizeof(out), "none");
	for (size_t i = 0; i < n && len < sizeof(out); i++) {
		const TSRange *r = &v[i].r;

		len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%s%.*s%s|",
					flags && i && v[i].first ? "*" : "", open[v[i].kind],
					(int)(r->end_byte - r->start_byte), text + r->start_byte,
					close[v[i].kind]);
		if (v[i].judge_end && len < sizeof(out))
			len += (size_t)snprintf(out + len, sizeof(out) - len, "=%u|", v[i].judge_end);
	}
	free(v);
	return out;
}

static const char *items(const char *text)
{
	return split(text, 0);
}

static const char *statements(const char *text)
{
	return split(text, SL_ITEMS_STATEMENTS);
}

static void test_declarations_and_functions(void)
{
	CHECK_STR(items("int a;\nint f(void) { return 0; }\nint b;\n"),
		  "int a;|\nint f(void) { return 0; }|\nint b;|\n|");
	/* a struct's '}' is not an item's end: its declarators follow */
	CHECK_STR(items("struct s { int a; } x, y;\nint z;"), "struct s { int a; } x, y;|\nint z;|");
	/* nor is a compound literal's, after an '=' */
	CHECK_STR(items("struct p o = (struct p) { 0 };\nint z;"),
		  "struct p o = (struct p) { 0 };|\nint z;|");
	/* ';' inside brackets and bodies */
	CHECK_STR(items("int f(void) { for (;;) { g(); } }\nint t[] = { 1, 2 };"),
		  "int f(void) { for (;;) { g(); } }|\nint t[] = { 1, 2 };|");
}

static void test_comments_and_literals(void)
{
	CHECK_STR(items("const char *s = \"};{\";\nchar c = '}';\n/* } ; */ int f(void) { return ';'; } // }\n"),
		  "const char *s = \"};{\";|\nchar c = '}';|\n/* } ; */ int f(void) { return ';'; }|"
		  " // }\n|");
	CHECK_STR(items("char *s = \"a\\\"};\";\nint x = 1'000'000;\nint y;"),
		  "char *s = \"a\\\"};\";|\nint x = 1'000'000;|\nint y;|");
}

static void test_directives(void)
{
	CHECK_STR(items("#include <a.h>\n#define X(a) \\\n\t{ a; }\nint x;"),
		  "#include <a.h>\n|#define X(a) \\\n\t{ a; }\n|int x;|");
	/* an include guard: its lines are fixed, the items inside are items */
	CHECK_STR(items("#ifndef G\n#define G\nint a;\n#endif\n"),
		  "[#ifndef G\n]|#define G\n|int a;|[\n#endif\n]|");
	CHECK_STR(items("#ifdef A\nint f(void) { return 1; }\n#else\nint f(void) { return 2; }\n#endif\n"),
		  "[#ifdef A\n]|int f(void) { return 1; }|[\n#else\n]|int f(void) { return 2; }|[\n#endif\n]|");
	/* a conditional begun inside an item stays in it */
	CHECK_STR(items("int x =\n#ifdef A\n1;\n#else\n2;\n#endif\nint y;"),
		  "int x =\n#ifdef A\n1;\n#else\n2;\n#endif\nint y;|");
	CHECK_STR(items("int f(void)\n#ifdef A\n/* a */\n#endif\n{ return 0; }\nint g;"),
		  "int f(void)\n#ifdef A\n/* a */\n#endif\n{ return 0; }|\nint g;|");
	/* a directive inside a function's body */
	CHECK_STR(items("int f(void) {\n#if A\n\treturn 1;\n#endif\n\treturn 0;\n}\nint g;"),
		  "int f(void) {\n#if A\n\treturn 1;\n#endif\n\treturn 0;\n}|\nint g;|");
}

static void test_joined_conditionals(void)
{
	/* a conditional begun between items that ends inside one is that item's */
	CHECK_STR(items("int a;\n#if 0\nthis is no C\n#endif\nint x;\nint y;"),
		  "int a;|\n#if 0\nthis is no C\n#endif\nint x;|\nint y;|");
	CHECK_STR(items("#ifdef _LIBC\nweak_alias (a, b)\n#endif\nint f(void) { return 0; }\nint z;"),
		  "#ifdef _LIBC\nweak_alias (a, b)\n#endif\nint f(void) { return 0; }|\nint z;|");
	/* an include guard around it stays fixed */
	CHECK_STR(items("#ifndef G\n#if A\nM(x)\n#else\nN(x)\n#endif\nint x;\n#endif\n"),
		  "[#ifndef G\n]|#if A\nM(x)\n#else\nN(x)\n#endif\nint x;|[\n#endif\n]|");
}

static void test_statements(void)
{
	/* the head is a piece, the braces a frame; blanks before an item are one */
	CHECK_STR(statements("int a;\nint f(int x)\n{\n\tg(x);\n\treturn x;\n}\n"),
		  "int a;|*\n|*int f(int x)\n|<{>|\n\tg(x);|\n\treturn x;|\n|<}>|*\n|");
	/* blocks after a control statement's head, a label, or alone */
	CHECK_STR(statements("f() { if (a) { b; } while (c) { d; } x: { e; } { g; } }"),
		  "f() |<{>| if (a) |<{>| b;| |<}>| while (c) |<{>| d;| |<}>| x: |<{>| e;| |<}>|"
		  " |<{>| g;| |<}>| |<}>|");
	/* else and do are never parsed; a do's while is a statement */
	CHECK_STR(statements("f() { if (a) b; else if (c) d; else { e; } do g; while (h); }"),
		  "f() |<{>| if (a) b;| |~else~| if (c) d;| |~else~| |<{>| e;| |<}>| |~do~| g;|"
		  " while (h);| |<}>|");
	/* braces that are brackets: initialisers, compound literals, macro loops */
	CHECK_STR(statements("f() { int t[] = { 1, 2 }; return (struct p){ 0 }; EACH(i) { k; } m; }"),
		  "f() |<{>| int t[] = { 1, 2 };| return (struct p){ 0 };| EACH(i) { k; } m;| |<}>|");
	/* a conditional between statements: its lines are frames */
	CHECK_STR(statements("f() {\n#ifdef A\n\ta;\n#else\n\tb;\n#endif\n}"),
		  "f() |<{>|\n|<#ifdef A\n>|\ta;|\n|<#else\n>|\tb;|\n|<#endif\n>|<}>|");
	/* a directive inside a statement, an else after #endif, a try: the item is one piece */
	CHECK_STR(statements("f() {\n\ta =\n#if A\n\t1;\n#endif\n}\nint z;"),
		  "f() {\n\ta =\n#if A\n\t1;\n#endif\n}|*\n|*int z;|");
	CHECK_STR(statements("f() {\n\tif (a) b;\n#ifdef B\n\telse c;\n#endif\n}"),
		  "f() {\n\tif (a) b;\n#ifdef B\n\telse c;\n#endif\n}|");
	CHECK_STR(statements("f() { try { a; } catch (...) { b; } }"),
		  "f() { try { a; } catch (...) { b; } }|");
	/* a block opened in each branch of a conditional: one piece */
	CHECK_STR(statements("f() {\n#if A\n\tif (a) {\n#else\n\tif (b) {\n#endif\n\t}\n}\n}"),
		  "f() {\n#if A\n\tif (a) {\n#else\n\tif (b) {\n#endif\n\t}\n}\n}|");
}

static const char *body(const char *text)
{
	return split(text, SL_ITEMS_BODY);
}

static void test_body(void)
{
	/* the head and the body's braces frame its statements, each whole */
	CHECK_STR(body("int a;\nint f(int x)\n{\n\tg(x);\n\treturn x;\n}\n"),
		  "int a;|*\n|*<int f(int x)\n>|<{>|\n\tg(x);|\n\treturn x;\n|<}>|*\n|");
	/* a block, an else, a do's while stay with the statement they belong to */
	CHECK_STR(body("f() { if (a) { for (;;) b; } else for (;;) { c; } x: { d; } { e; } }"),
		  "<f() >|<{>| if (a) { for (;;) b; } else for (;;) { c; }| x: { d; } |{ e; } |<}>|");
	CHECK_STR(body("f() { do g; while (h); do { i; } while (j); do while (k) l; while (m); n; }"),
		  "<f() >|<{>| do g; while (h); |do { i; } while (j); |do while (k) l; while (m);| n; |<}>|");
	CHECK_STR(body("f() { while (a) do b; while (c); d; }"),
		  "<f() >|<{>| while (a) do b; while (c);| d; |<}>|");
	/* a conditional's lines between statements are frames, inside one they are its */
	CHECK_STR(body("f() {\n#ifdef A\n\ta;\n#else\n\tif (b) {\n#if C\n\t\tc;\n#endif\n\t}\n#endif\n}"),
		  "<f() >|<{>|\n|<#ifdef A\n>|\ta;\n|<#else\n>|\tif (b) {\n#if C\n\t\tc;\n#endif\n\t}\n|"
		  "<#endif\n>|<}>|");
	/* a directive inside a statement, a try: the function is one piece */
	CHECK_STR(body("f() {\n\ta =\n#if A\n\t1;\n#endif\n}\nint z;"),
		  "f() {\n\ta =\n#if A\n\t1;\n#endif\n}|*\n|*int z;|");
	CHECK_STR(body("f() { try { a; } catch (...) { b; } }"),
		  "f() { try { a; } catch (...) { b; } }|");
}

static void test_body_leaf(void)
{
	/* a statement's own level and braces go with its first piece, its blocks' statements never */
	CHECK_STR(split("f() { a; if (b) { c; } else for (;;) { d; } do e; while (g); }",
			SL_ITEMS_BODY | SL_ITEMS_BODY_LEAF),
		  "<f() >|<{>| a;|=8| if (b) |=44|+{+|~ c;~|~ ~|+}+|+ +|+else+|+ for (;;) +|+{+|~ d;~|"
		  "~ ~|+}+|+ +|do|=61|+ e;+|+ while (g);+|+ +|<}>|");
}

static void test_gives_up(void)
{
	/* a K&R function's body starts an item */
	CHECK_STR(items("int f(a)\nint a;\n{ return a; }\n"), "none");
	/* two heads for one body */
	CHECK_STR(items("#ifdef A\nint f(int a) {\n#else\nint f(void) {\n#endif\nreturn 0; }\n"), "none");
	CHECK_STR(items("int f(void) { return 0; }}\n"), "none");
	CHECK_STR(items("int f(void) { return 0;\n"), "none");
	CHECK_STR(items("int f(void) { return (0; }\n"), "none");
	CHECK_STR(items("/* unterminated\nint x;"), "none");
	CHECK_STR(items("#endif\nint x;"), "none");
	CHECK_STR(items("#else\nint x;"), "none");
	CHECK_STR(items("#if A\nint x;\n"), "none");
	CHECK_STR(items("int f(void) <% return 0; %>\nint x;"), "none");
	CHECK_STR(items("int f(void) ?\?< return 0; ?\?>\nint x;"), "none");
	CHECK_STR(items("const char *s = R\"(})\";\nint x;"), "none");
	CHECK_STR(items("const char *s = u8R\"x(})x\";\nint x;"), "none");
	/* a directive with no name on its line: tree-sitter-c takes the next line's word */
	CHECK_STR(items("#define \nvoid a(char *d)\n{\n\tf(d);\n}\nint b;\n"), "none");
	CHECK_STR(items("#ifdef /* x */\nA\nint x;\n#endif\nint y;\n"), "none");
	CHECK_STR(items("#include\n<a.h>\nint x;\n"), "none");
	/* or with blanks where its argument would be: the next line that is not blank is it */
	CHECK_STR(items("#define X \n\nvoid a(char *d)\n{\n\tf(d);\n}\nint b;\n"), "none");
	CHECK_STR(items("#define F(a)\t\nint b;\n"), "none");
	CHECK_STR(items("#pragma \nint b;\n"), "none");
	/* blanks after an argument, or after else and endif, are nothing */
	CHECK_STR(items("#define X 1 \nint b;\n"), "#define X 1 \n|int b;|\n|");
	CHECK_STR(items("#define X\r\nint b;\r\n"), "#define X\r\n|int b;|\r\n|");
	CHECK_STR(items("#ifdef A \nint a;\n#else \nint b;\n#endif \nint c;\n"),
		  "[#ifdef A \n]|int a;|[\n#else \n]|int b;|[\n#endif \n]|int c;|\n|");
	/* one whose name comes after a continued line is split as before */
	CHECK_STR(items("#define \\\n A 1\nint x;\n"), "#define \\\n A 1\n|int x;|\n|");
	CHECK_STR(items("#define A \\\n\nint x;\n"), "none");
	/* an identifier ending in R before a string is no raw string */
	CHECK_STR(items("#define STR \"a\"\nconst char *s = BAR \"}\";\nint x;"),
		  "#define STR \"a\"\n|const char *s = BAR \"}\";|\nint x;|");
}

static void test_points(void)
{
	const char *text = "int a;\n\n  int f(void)\n{\n}\r\nint b;";
	sl_item *v = NULL;
	size_t alloc = 0, n = sl_items_split(text, strlen(text), &v, &alloc, NULL, 0);

	CHECK_INT(n, 3);
	if (n == 3) {
		CHECK_INT(v[1].r.start_byte, 6);
		CHECK_INT(v[1].r.start_point.row, 0);
		CHECK_INT(v[1].r.start_point.column, 6);
		CHECK_INT(v[1].r.end_point.row, 4);
		CHECK_INT(v[1].r.end_point.column, 1);
		CHECK_INT(v[2].r.start_point.row, 4);
		CHECK_INT(v[2].r.end_point.row, 5);
		CHECK_INT(v[2].r.end_point.column, 6);
		CHECK_INT(v[2].r.end_byte, strlen(text));
	}
	free(v);
	CHECK_STR(items(""), "none");
}

int main(void)
{
	RUN(test_declarations_and_functions);
	RUN(test_comments_and_literals);
	RUN(test_directives);
	RUN(test_joined_conditionals);
	RUN(test_statements);
	RUN(test_body);
	RUN(test_body_leaf);
	RUN(test_gives_up);
	RUN(test_points);
	return unit_done();
}
