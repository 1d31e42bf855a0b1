/*
 * sha256.h - SHA-256 (FIPS 180-4), small and self-contained.
 *
 * Used where sluice needs a stable content key that is not a git object id:
 * the key of a model request (provider.h, sl_request_key), which record and
 * replay match on.  Not constant-time; never used for secrets.
 *
 * Calling sequence: sl_sha256_init, sl_sha256_update (any number of times,
 * any lengths), sl_sha256_final.  Or sl_sha256_hex for one buffer.
 */
#ifndef SL_SHA256_H
#define SL_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct sl_sha256 {
	uint32_t h[8];
	uint64_t len;             /* bytes hashed so far */
	unsigned char block[64];  /* pending input, len % 64 bytes of it */
} sl_sha256;

void sl_sha256_init(sl_sha256 *c);
void sl_sha256_update(sl_sha256 *c, const void *data, size_t len);
/* The 32-byte digest; c must be re-initialised before reuse. */
void sl_sha256_final(sl_sha256 *c, unsigned char out[32]);
/* Lowercase hex of a digest: 64 characters and a NUL. */
void sl_sha256_tohex(char out[65], const unsigned char digest[32]);
/* Hex digest of one buffer. */
void sl_sha256_hex(char out[65], const void *data, size_t len);

#endif
