/*
 * png-probe - count the pixels of given colours in a PNG, for the tests
 * that check what a headless browser rendered.
 *
 *     png-probe FILE RRGGBB[~TOL]...
 *
 * Prints "size W H" and then, per colour, "RRGGBB COUNT MINY MAXY" (the
 * rows where it first and last appears; -1 when absent).  A pixel matches
 * when each channel is within TOL (default 8) of the colour.  Reads 8-bit
 * non-interlaced truecolour PNGs, with or without alpha (what Chromium
 * writes); anything else is an error (exit 2).  Uses zlib for the IDAT
 * stream; checks the chunk layout and the filter bytes, not the CRCs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define MAX_COLOURS 16
#define MAX_FILE (64u << 20)

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int die(const char *msg)
{
	fprintf(stderr, "png-probe: %s\n", msg);
	return 2;
}

static int paeth(int a, int b, int c)
{
	int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);

	return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

int main(int argc, char **argv)
{
	static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	unsigned char *file = NULL, *idat = NULL, *raw = NULL;
	size_t flen = 0, ilen = 0, pos = 8;
	uint32_t w = 0, h = 0, bpp = 0;
	unsigned ncol = 0, col[MAX_COLOURS][3], tol[MAX_COLOURS];
	long count[MAX_COLOURS] = { 0 }, miny[MAX_COLOURS], maxy[MAX_COLOURS];
	uLongf rawlen;
	FILE *fp;
	int ret = 2;

	if (argc < 3 || argc - 2 > MAX_COLOURS)
		return die("usage: png-probe FILE RRGGBB[~TOL]...");
	for (int i = 2; i < argc; i++, ncol++) {
		char *end;
		unsigned long v = strtoul(argv[i], &end, 16);

		if (end != argv[i] + 6)
			return die("colours are RRGGBB[~TOL]");
		col[ncol][0] = (unsigned)(v >> 16 & 255);
		col[ncol][1] = (unsigned)(v >> 8 & 255);
		col[ncol][2] = (unsigned)(v & 255);
		tol[ncol] = *end == '~' ? (unsigned)strtoul(end + 1, NULL, 10) : 8;
		miny[ncol] = maxy[ncol] = -1;
	}
	if (!(fp = fopen(argv[1], "rb")))
		return die("cannot open the file");
	file = malloc(MAX_FILE);
	flen = file ? fread(file, 1, MAX_FILE, fp) : 0;
	fclose(fp);
	if (flen < 8 + 25 || memcmp(file, sig, 8)) {
		ret = die("not a PNG");
		goto done;
	}
	while (pos + 12 <= flen) {
		uint32_t len = be32(file + pos);
		const unsigned char *type = file + pos + 4, *data = file + pos + 8;

		if (len > flen - pos - 12) {
			ret = die("truncated chunk");
			goto done;
		}
		if (!memcmp(type, "IHDR", 4)) {
			if (len != 13 || data[8] != 8 || data[12] != 0 ||
			    (data[9] != 2 && data[9] != 6)) {
				ret = die("only 8-bit non-interlaced RGB or RGBA");
				goto done;
			}
			w = be32(data);
			h = be32(data + 4);
			bpp = data[9] == 6 ? 4 : 3;
		} else if (!memcmp(type, "IDAT", 4)) {
			unsigned char *n = realloc(idat, ilen + len);

			if (!n)
				goto done;
			idat = n;
			memcpy(idat + ilen, data, len);
			ilen += len;
		} else if (!memcmp(type, "IEND", 4)) {
			break;
		}
		pos += 12 + (size_t)len;
	}
	if (!w || !h || w > 20000 || h > 20000 || !ilen) {
		ret = die("no image data");
		goto done;
	}
	rawlen = (uLongf)h * (1 + (uLongf)w * bpp);
	raw = malloc(rawlen);
	if (!raw || uncompress(raw, &rawlen, idat, ilen) != Z_OK ||
	    rawlen != (uLongf)h * (1 + (uLongf)w * bpp)) {
		ret = die("bad image data");
		goto done;
	}
	for (uint32_t y = 0; y < h; y++) {
		size_t stride = (size_t)w * bpp;
		unsigned char *row = raw + y * (stride + 1), *px = row + 1;
		unsigned char *up = y ? raw + (y - 1) * (stride + 1) + 1 : NULL;
		int f = row[0];

		if (f > 4) {
			ret = die("bad filter byte");
			goto done;
		}
		for (size_t x = 0; x < stride; x++) {
			int a = x >= bpp ? px[x - bpp] : 0, b = up ? up[x] : 0;
			int c = x >= bpp && up ? up[x - bpp] : 0;

			px[x] = (unsigned char)(px[x] + (f == 1 ? a : f == 2 ? b : f == 3 ?
					       (a + b) / 2 : f == 4 ? paeth(a, b, c) : 0));
		}
		for (uint32_t x = 0; x < w; x++) {
			const unsigned char *p = px + (size_t)x * bpp;

			for (unsigned k = 0; k < ncol; k++) {
				if ((unsigned)abs(p[0] - (int)col[k][0]) > tol[k] ||
				    (unsigned)abs(p[1] - (int)col[k][1]) > tol[k] ||
				    (unsigned)abs(p[2] - (int)col[k][2]) > tol[k])
					continue;
				count[k]++;
				if (miny[k] < 0)
					miny[k] = (long)y;
				maxy[k] = (long)y;
			}
		}
	}
	printf("size %u %u\n", w, h);
	for (unsigned k = 0; k < ncol; k++)
		printf("%.6s %ld %ld %ld\n", argv[2 + k], count[k], miny[k], maxy[k]);
	ret = 0;
done:
	free(raw);
	free(idat);
	free(file);
	return ret;
}
