/* The untracked cache of a git index read from its bytes (indexfile.h):
 * a cache as git writes it, and the agent's bytes cut or bent anywhere
 * refused without a read past the buffer (make asan). */
#define _GNU_SOURCE
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/git/indexfile.h"
#include "tests/unit/check_main.h"

struct buf {
	unsigned char b[1024];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	ck_assert_uint_le(b->n + n, sizeof(b->b));
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put32(struct buf *b, uint32_t v)
{
	unsigned char x[4] = {v >> 24, v >> 16, v >> 8, v};

	put(b, x, 4);
}

static void put64(struct buf *b, uint64_t v)
{
	put32(b, (uint32_t)(v >> 32));
	put32(b, (uint32_t)v);
}

/* An EWAH bitmap of nbits whose set bits are the low bits of word. */
static void ewah(struct buf *b, uint32_t nbits, uint64_t word)
{
	put32(b, nbits);
	put32(b, 2);
	put64(b, 1ull << 33); /* no run, one literal word */
	put64(b, word);
	put32(b, 0);
}

/* The UNTR payload git writes for a root holding the untracked "x" and
 * the directory tests/ (no untracked file), both valid. */
static void untr(struct buf *b)
{
	static const unsigned char zeros[2 * 36 + 4 + 2 * 20];
	unsigned char stat[36] = {0};

	put(b,
	    "\x03"
	    "id\0",
	    4); /* ident: 3 bytes */
	put(b, zeros, sizeof(zeros));
	put(b, ".gitignore", 11);
	put(b, "\x02", 1);	    /* two directories */
	put(b, "\x01\x01\0x", 5);   /* root: 1 name, 1 dir, "", "x" */
	put(b, "\x00\x00tests", 8); /* tests: none, none, "tests\0" */
	ewah(b, 2, 3);		    /* valid: both */
	ewah(b, 2, 0);		    /* check-only: none */
	ewah(b, 2, 0);		    /* .gitignore hashed: none */
	stat[11] = 7;		    /* the root's mtime */
	put(b, stat, sizeof(stat));
	stat[11] = 9;
	put(b, stat, sizeof(stat));
	put(b, "", 1);
}

START_TEST(untr_as_git_writes_it)
{
	struct buf b = {.n = 0};
	struct hx_untr u;

	untr(&b);
	ck_assert_int_eq(hx_untr_parse(b.b, b.n, &u), 0);
	ck_assert_uint_eq(u.n, 2);
	ck_assert_str_eq(u.dirs[0].path, "");
	ck_assert_uint_eq(u.dirs[0].nnames, 1);
	ck_assert_str_eq(u.dirs[0].names[0], "x");
	ck_assert_str_eq(u.dirs[1].path, "tests/");
	ck_assert_uint_eq(u.dirs[1].nnames, 0);
	ck_assert(u.dirs[0].valid && u.dirs[1].valid);
	ck_assert(!u.dirs[0].check_only && !u.dirs[1].check_only);
	ck_assert_uint_eq(u.dirs[0].stat[11], 7);
	ck_assert_uint_eq(u.dirs[1].stat[11], 9);
	hx_untr_free(&u);
}
END_TEST

START_TEST(untr_names_git_cannot_look_up)
{
	static const unsigned char zeros[2 * 36 + 4 + 2 * 20];
	struct buf b = {.n = 0};
	struct hx_untr u;

	/* The root named "zz" (git does not look), a child "a/b" (no
	 * directory has that name), its child "c". */
	put(&b, "\0", 1);
	put(&b, zeros, sizeof(zeros));
	put(&b, "", 1);
	put(&b, "\x03", 1);
	put(&b, "\x00\x01zz", 5);
	put(&b,
	    "\x00\x01"
	    "a/b",
	    6);
	put(&b,
	    "\x00\x00"
	    "c",
	    4);
	ewah(&b, 3, 0);
	ewah(&b, 3, 0);
	ewah(&b, 3, 0);
	ck_assert_int_eq(hx_untr_parse(b.b, b.n, &u), 0);
	ck_assert_uint_eq(u.n, 3);
	ck_assert_str_eq(u.dirs[0].path, "");
	ck_assert(u.dirs[0].reachable && !u.dirs[1].reachable &&
		  !u.dirs[2].reachable);
	ck_assert_uint_eq(u.dirs[2].parent, 1);
	hx_untr_free(&u);
}
END_TEST

START_TEST(untr_cut_anywhere_is_refused)
{
	struct buf b = {.n = 0};
	struct hx_untr u;

	untr(&b);
	/* Up to the stat data of the last valid directory, every cut is
	 * malformed (the trailing NUL is not needed). */
	for (size_t n = 0; n + 1 < b.n; n++) {
		unsigned char *p = malloc(n ? n : 1);

		memcpy(p, b.b, n);
		ck_assert_msg(hx_untr_parse(p, n, &u) == -1, "cut at %zu", n);
		ck_assert_ptr_null(u.dirs);
		free(p);
	}
}
END_TEST

START_TEST(untr_bent_bytes_do_not_crash)
{
	struct buf b = {.n = 0};
	struct hx_untr u;

	untr(&b);
	for (size_t i = 0; i < b.n; i++)
		for (int v = 0; v < 256; v += 51) {
			unsigned char *p = malloc(b.n);

			memcpy(p, b.b, b.n);
			p[i] = (unsigned char)v;
			if (!hx_untr_parse(p, b.n, &u))
				hx_untr_free(&u);
			free(p);
		}
}
END_TEST

START_TEST(ewah_runs_and_literals)
{
	struct buf b = {.n = 0};
	size_t *bits, n, used;

	/* A run of one word of ones, then a literal with bit 2. */
	put32(&b, 131);
	put32(&b, 2);
	put64(&b, 1 | 1ull << 1 | 1ull << 33);
	put64(&b, 4);
	put32(&b, 0);
	ck_assert_int_eq(hx_ewah_bits(b.b, b.n, 1000, &bits, &n, &used), 0);
	ck_assert_uint_eq(used, b.n);
	ck_assert_uint_eq(n, 65);
	ck_assert_uint_eq(bits[63], 63);
	ck_assert_uint_eq(bits[64], 66);
	free(bits);
	/* More literal words than the bitmap holds. */
	b.n = 8;
	put64(&b, 5ull << 33);
	ck_assert_int_eq(hx_ewah_bits(b.b, b.n + 4, 1000, &bits, &n, &used),
			 -1);
}
END_TEST

START_TEST(index_extensions_found_past_the_entries)
{
	struct buf b = {.n = 0};
	const unsigned char *ext;
	unsigned char entry[62] = {0};
	size_t len;

	put(&b, "DIRC", 4);
	put32(&b, 2);
	put32(&b, 1);
	entry[61] = 3; /* name length */
	put(&b, entry, sizeof(entry));
	put(&b, "a.c\0\0\0\0\0\0\0", 10); /* 62 + 3 + 7 NULs: 72 */
	put(&b, "TREE", 4);
	put32(&b, 2);
	put(&b, "xx", 2);
	put(&b, "UNTR", 4);
	put32(&b, 3);
	put(&b, "abc", 3);
	put(&b, "01234567890123456789", 20);
	ck_assert_int_eq(hx_index_extension(b.b, b.n, "UNTR", 0, &ext, &len),
			 1);
	ck_assert_uint_eq(len, 3);
	ck_assert(!memcmp(ext, "abc", 3));
	ck_assert_int_eq(hx_index_extension(b.b, b.n, "FSMN", 0, &ext, &len),
			 0);
	/* An extension that claims more than the file holds. */
	b.b[12 + 72 + 7] = 200;
	ck_assert_int_eq(hx_index_extension(b.b, b.n, "UNTR", 0, &ext, &len),
			 -1);
	ck_assert_int_eq(hx_index_extension(b.b, 30, "UNTR", 0, &ext, &len),
			 -1);
}
END_TEST

static Suite *indexfile_suite(void)
{
	Suite *s = suite_create("indexfile");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, untr_as_git_writes_it);
	tcase_add_test(tc, untr_names_git_cannot_look_up);
	tcase_add_test(tc, untr_cut_anywhere_is_refused);
	tcase_add_test(tc, untr_bent_bytes_do_not_crash);
	tcase_add_test(tc, ewah_runs_and_literals);
	tcase_add_test(tc, index_extensions_found_past_the_entries);
	suite_add_tcase(s, tc);
	return s;
}

HX_TEST_MAIN(indexfile_suite)
