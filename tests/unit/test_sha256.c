/*
 * test_sha256.c - common/sha256 against the FIPS 180-4 / NIST example
 * vectors, fed whole and in every split, and against a reference digest (Python hashlib) of a
 * buffer that crosses many block boundaries.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/sha256.h"
#include "common/util.h"
#include "unit.h"

static const struct { const char *in, *hex; } vectors[] = {
	{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
	{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
	{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
	  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
	{ "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq"
	  "klmnopqrlmnopqrsmnopqrstnopqrstu",
	  "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
	/* 55, 56 and 64 bytes: the padding edge cases */
	{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	  "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318" },
	{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	  "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a" },
	{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	  "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb" },
};

static void test_vectors(void)
{
	char hex[65];

	for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		sl_sha256_hex(hex, vectors[i].in, strlen(vectors[i].in));
		CHECK_STR(hex, vectors[i].hex);
	}
}

static void test_splits(void)
{
	for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		size_t n = strlen(vectors[i].in);

		for (size_t cut = 0; cut <= n; cut++) {
			sl_sha256 c;
			unsigned char d[32];
			char hex[65];

			sl_sha256_init(&c);
			sl_sha256_update(&c, vectors[i].in, cut);
			sl_sha256_update(&c, vectors[i].in + cut, n - cut);
			sl_sha256_final(&c, d);
			sl_sha256_tohex(hex, d);
			CHECK_STR(hex, vectors[i].hex);
		}
	}
}

static void test_million_a(void)
{
	sl_sha256 c;
	unsigned char d[32];
	char hex[65], chunk[1000];

	memset(chunk, 'a', sizeof(chunk));
	sl_sha256_init(&c);
	for (int i = 0; i < 1000; i++)
		sl_sha256_update(&c, chunk, sizeof(chunk));
	sl_sha256_final(&c, d);
	sl_sha256_tohex(hex, d);
	CHECK_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/* Odd-sized updates over bytes 0..255 repeated, against a reference digest. */
static void test_uneven_updates(void)
{
	unsigned char data[5000];
	sl_sha256 c;
	unsigned char d[32];
	char whole[65], parts[65];
	size_t off = 0, step = 1;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(i * 7 + 3);
	sl_sha256_hex(whole, data, sizeof(data));
	sl_sha256_init(&c);
	while (off < sizeof(data)) {
		size_t n = step < sizeof(data) - off ? step : sizeof(data) - off;

		sl_sha256_update(&c, data + off, n);
		off += n;
		step = step * 3 % 97 + 1;
	}
	sl_sha256_final(&c, d);
	sl_sha256_tohex(parts, d);
	CHECK_STR(parts, whole);
	CHECK_STR(whole, "34398b85297bf7d9dfb59b8d511d8bbb44ab23e891570e4395e7871475fc8afb");
}

int main(void)
{
	RUN(test_vectors);
	RUN(test_splits);
	RUN(test_million_a);
	RUN(test_uneven_updates);
	return unit_done();
}
