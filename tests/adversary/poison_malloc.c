/* LD_PRELOAD malloc interposer: every allocation is filled with 0xA5, every free'd block with 0x5A,
 * sizes recorded in a 16-byte header; realloc copies; calloc zeroes. Detects reads of
 * uninitialised or freed memory by changing what they see. Uses glibc's __libc_* underneath. */
#define _GNU_SOURCE
#include <stddef.h>
#include <string.h>
#include <errno.h>
extern void* __libc_malloc(size_t);
extern void __libc_free(void*);
extern void* __libc_memalign(size_t, size_t);
#define HDR 16
void* malloc(size_t n) {
  unsigned char* p = __libc_malloc(n + HDR);
  if (!p) return 0;
  *(size_t*)p = n;
  *(size_t*)(p + 8) = 0;
  memset(p + HDR, 0xA5, n);
  return p + HDR;
}
void free(void* q) {
  if (!q) return;
  unsigned char* p = (unsigned char*)q - HDR;
  size_t n = *(size_t*)p;
  if (*(size_t*)(p + 8) == 0xA11A11A1UL) {
    memset(q, 0x5A, n);
    __libc_free(*(void**)((unsigned char*)q - 24));
    return;
  }
  memset(q, 0x5A, n);
  __libc_free(p);
}
void* calloc(size_t a, size_t b) {
  size_t n;
  if (__builtin_mul_overflow(a, b, &n)) {
    errno = ENOMEM;
    return 0;
  }
  void* q = malloc(n);
  if (q) memset(q, 0, n);
  return q;
}
void* realloc(void* q, size_t n) {
  if (!q) return malloc(n);
  if (!n) {
    free(q);
    return 0;
  }
  size_t o = *(size_t*)((unsigned char*)q - HDR);
  void* r = malloc(n);
  if (!r) return 0;
  memcpy(r, q, o < n ? o : n);
  free(q);
  return r;
}
/* aligned: over-allocate, store base pointer at q-24 and a magic at q-8 */
static void* al(size_t a, size_t n) {
  if (a < 16) a = 16;
  unsigned char* b = __libc_malloc(n + a + 32);
  if (!b) return 0;
  unsigned char* q = (unsigned char*)(((size_t)b + 32 + a - 1) & ~(a - 1));
  *(void**)(q - 24) = b;
  *(size_t*)(q - 16) = n;
  *(size_t*)(q - 8) = 0xA11A11A1UL;
  memset(q, 0xA5, n);
  return q;
}
void* memalign(size_t a, size_t n) {
  return al(a, n);
}
void* aligned_alloc(size_t a, size_t n) {
  return al(a, n);
}
int posix_memalign(void** r, size_t a, size_t n) {
  void* q = al(a, n);
  if (!q) return ENOMEM;
  *r = q;
  return 0;
}
void* valloc(size_t n) {
  return al(4096, n);
}
void* pvalloc(size_t n) {
  return al(4096, (n + 4095) & ~4095UL);
}
