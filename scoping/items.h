/*
 * items.h - a C or C++ file's top-level items, found without parsing.
 *
 * Scoping a query whose matches all lie inside one top-level item
 * (sl_prefilter_below_root) need not parse the items the prefilter rules
 * out: the parser is given the others as its included ranges.  An item
 * ends at a ';' or at the '}' of a body whose '{' follows a ')' and no '='
 * (a function's), outside every bracket, and outside every conditional
 * directive (#if, #ifdef, #ifndef) that began inside an item.  A directive
 * that starts an item is one.  A conditional that starts an item holds
 * items: its lines (#if, #else, #elif, #endif) are items of their own,
 * "fixed" ones that are always parsed so that the items kept between them
 * stay in their branch (an include guard is such a conditional).  When one
 * of its #else, #elif and #endif falls inside an item (two heads for one
 * body, a macro call with no ';' before #endif), the conditional's lines
 * and the items since its first become part of that item.  A boundary is
 * only ever placed where the text before it is a whole sequence of items,
 * so splitting too little merges items and never cuts one.  Anything the
 * lexing below cannot vouch for (unbalanced brackets or conditionals, an
 * unterminated comment, a C++ raw string, digraphs and trigraphs for
 * braces, an item that starts with '{' as a K&R function's body does, a
 * directive whose argument tree-sitter-c would read from a line below:
 * a name, path or condition missing, or blanks before the line's end where
 * a define's value or another directive's argument may come) gives no
 * items: the file is parsed whole.  A directive's line goes on
 * past a newline after a '\\', and after a '/' (tree-sitter-c reads a
 * directive's argument on, a '//' comment in one included).
 *
 * A syntax error is recovered from within the items parsed: where an
 * error's recovery in a parse of the whole file reaches into a
 * neighbouring item, the two parses differ, and item by item the
 * neighbour is read as if the error were not there.  Split into
 * statements (SL_ITEMS_STATEMENTS below), the same holds of statements,
 * and of a function's head, which is left out unless it may hold a match:
 * scope.c parses again, whole and by itself (the first parse serves the
 * rest of the file), a function where the part parsed has an error outside
 * one statement and outside its head, and the file where one crosses items.  On
 * git and curl (2,002 files, 574 of them with syntax errors) eighteen of
 * twenty-two queries gave the same targets either way, and the other four
 * differ by 17 of their 127,816 targets, all in files with syntax errors
 * (bench/scope-same.sh); in fmt's C++ tests, a whole-file parse thrown off
 * by gtest macros loses six if statements that item by item are found,
 * and reads ten TEST(a, b) heads and macro calls as calls.
 * --no-prefilter parses whole files.  tests/t/t1210-scope-items.sh and
 * t1211-scope-statements.sh hold the cases; tests/fuzz/fuzz_items.c checks
 * that where the whole file parses without error, any choice of items or
 * statements parses as in the whole file.
 */
#ifndef SL_SCOPING_ITEMS_H
#define SL_SCOPING_ITEMS_H

#include <stddef.h>
#include <tree_sitter/api.h>

enum sl_item_kind {
	SL_ITEM_MAY,               /* parsed if it may hold a match */
	SL_ITEM_ALWAYS,            /* a conditional's line: parsed whatever it holds */
	SL_ITEM_FRAME,             /* a function's head, a block's brace: parsed with the
				      other pieces of its item, or when it may hold a match */
	SL_ITEM_NEVER,             /* "else", "do": never parsed */
	SL_ITEM_WITH               /* parsed with the SL_ITEM_MAY piece before it
				      (SL_ITEMS_BODY_LEAF) */
};

typedef struct sl_item {
	TSRange r;                 /* bytes and points */
	unsigned char kind;        /* enum sl_item_kind */
	unsigned char first;       /* the first piece of its top-level item */
	uint32_t judge_end;        /* 0, or where the text judged for this piece ends
				      (SL_ITEMS_BODY_LEAF: its statement's end) */
} sl_item;

/*
 * Split function bodies into statements too: each top-level item whose
 * body is a function's becomes pieces, its head and each block's braces
 * SL_ITEM_FRAME, each statement (up to its ';', or to a block it controls)
 * SL_ITEM_MAY, "else" and "do" SL_ITEM_NEVER.  Parsing the frame and any
 * subset of the statements gives a function whose statements are those,
 * each parsed as in the whole file: "if (c)" keeps the block after it, an
 * if's "else" and a do's "do" go, which leaves a block, or a do's
 * "while (c);" as a loop with an empty body.  A '{' opens a block only at
 * a statement's start, after "if (...)", "while (...)", "for (...)",
 * "switch (...)" or a label's ':'; every other brace is a bracket and
 * stays in its statement (initialisers, compound literals, lambdas, the
 * bodies of loops written as macros).  An item whose function holds a
 * directive or a try stays one piece.  Only queries whose matches lie
 * inside one statement may be filtered this way (sl_prefilter_below_root).
 */
#define SL_ITEMS_STATEMENTS 1
/*
 * Split function bodies into the statements of their top level only:
 * each function's head and its body's braces SL_ITEM_FRAME, each
 * statement directly in the body one SL_ITEM_MAY piece, whole (the blocks
 * it controls, its "else" and a do's "while (c);" with it).  Parsing the
 * frame and any subset of those statements gives a body whose children
 * are those statements, each as in the whole file (no "else" is left
 * without its "if"); any other item is one piece.  For queries whose
 * matches are each one statement of a body's top level
 * (sl_prefilter_body_child).
 */
#define SL_ITEMS_BODY 2
/*
 * With SL_ITEMS_BODY, for queries whose match is the statement itself
 * and nothing inside it (a node with no child pattern): a statement's
 * first piece is SL_ITEM_MAY, judged on the whole statement (judge_end),
 * the rest of its own level, "else" and "do" included, and every brace
 * in it SL_ITEM_WITH, and the statements of the blocks it holds
 * SL_ITEM_NEVER: kept, it parses as the same statement with empty blocks.
 */
#define SL_ITEMS_BODY_LEAF 4

/*
 * The pieces of text (len bytes) into *v (grown, *alloc its capacity; the
 * caller frees it), which they tile from byte 0 to len: one per top-level
 * item, or with SL_ITEMS_STATEMENTS in flags, a function's statements.
 * Returns the number of pieces, or 0 when the file must be parsed whole.
 * When blanked is not NULL, its len bytes receive the text with every
 * comment but its first '/' and the inside of every string and character
 * literal blanked (where no keyword can be a token), as far as the split
 * got.
 */
size_t sl_items_split(const char *text, size_t len, sl_item **v, size_t *alloc, char *blanked,
		      unsigned flags);

/*
 * In blanked, the '(' of a function definition's parameter list (the last
 * '(' outside brackets before the body's '{') is this byte, so that a
 * count of an argument list's separators leaves the parameters out
 * (prefilter.h); the byte itself in the text is blanked.
 */
#define SL_ITEMS_PARAMS '\x01'


#endif
