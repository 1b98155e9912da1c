/* sw.h: status codes, error messages, allocation hook and small helpers shared by every module. */
#ifndef SW_H
#define SW_H

#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>

/* Status codes. 0 is success; everything else is negative. */
enum {
    SW_OK = 0,
    SW_EINVAL = -1,   /* bad input (file contents, option values) */
    SW_ENOMEM = -2,   /* host allocation failed */
    SW_EIO = -3,      /* file could not be read or written */
    SW_ENOFIT = -4,   /* the job does not fit in the memory budget */
    SW_EUNSAFE = -5,  /* a plan failed verification */
    SW_EDEADLOCK = -6,/* a plan's dependencies cannot all be satisfied */
    SW_ENOTFOUND = -7,/* unknown name (planner, model, device) */
    SW_EEXCEEDED = -8,/* a run gave up (overhead cap reached) */
    SW_EUNSUPPORTED = -9 /* a feature not available here (e.g. no CUDA device) */
};

/* Error context: one line of text describing the first error. */
typedef struct sw_err {
    int code;
    char msg[768];
} sw_err;

/* Set err (if not NULL) to code and a printf-style message; returns code. */
int sw_fail(sw_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prefix the existing message with a printf-style context string. */
void sw_err_prefix(sw_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Short name of a status code ("invalid input", ...). */
const char *sw_strerror(int code);

/* The recorded data directory (holding dtr-logs/, pipedream/,
   pytorch-traces/): $SWAPSIM_DATA when set, else the data/ folder of the
   source tree the binary was built from (SW_DATA_DIR, set by the Makefile). */
const char *sw_data_dir(void);

/* Allocation hook (Lua style): one function for malloc, realloc and free.
   fn(ud, NULL, 0, n) allocates, fn(ud, p, 0, n) resizes (NULL on failure, p
   left valid), fn(ud, p, 0, 0) frees; osize is always 0, so a hook that
   counts bytes keeps each block's size itself. Every allocation of the
   library goes through it (zlib's too; GSL's and hwloc's do not), so tests
   install a counting or failing allocator with sw_set_allocator
   (tests/test_alloc.c). fn is called from the GA's worker threads when it
   runs with more than one, so it must be thread-safe then (the default,
   malloc, is). sw_set_allocator itself is not: call it while no other
   thread uses the library, and free no block with another hook than the
   one that allocated it. NULL restores the default. */
typedef void *(*sw_alloc_fn)(void *ud, void *ptr, size_t osize, size_t nsize);
void sw_set_allocator(sw_alloc_fn fn, void *ud);
void *sw_malloc(size_t n);           /* NULL on failure */
void *sw_calloc(size_t n, size_t sz); /* zeroed; NULL on failure or overflow */
void *sw_realloc(void *p, size_t n);  /* NULL on failure (p left valid) */
void sw_free(void *p);
char *sw_strdup(const char *s);       /* NULL in, NULL out */
char *sw_strndup(const char *s, size_t n);

/* Grow *arr (element size esz) so it can hold at least need elements.
   Capacity doubles. Returns 0 or SW_ENOMEM. */
int sw_grow(void **arr, size_t *cap, size_t need, size_t esz);
#define SW_GROW(arr, cap, need) sw_grow((void **)&(arr), &(cap), (need), sizeof(*(arr)))

/* Growable byte buffer used by every writer. */
typedef struct sw_buf {
    char *data;
    size_t len, cap;
    int oom; /* set once an append failed; later appends are no-ops */
} sw_buf;
void sw_buf_init(sw_buf *b);
void sw_buf_free(sw_buf *b);
void sw_buf_put(sw_buf *b, const char *s, size_t n);
void sw_buf_puts(sw_buf *b, const char *s);
void sw_buf_putc(sw_buf *b, char c);
void sw_buf_printf(sw_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sw_buf_put_i64(sw_buf *b, int64_t v);
/* A double that reads back bit-exactly (shortest of %.15g/%.16g/%.17g). */
void sw_buf_put_f64(sw_buf *b, double v);
/* A JSON string literal with escapes. */
void sw_buf_put_jstr(sw_buf *b, const char *s);
/* Write the buffer to path ("-" is stdout). Returns 0 or SW_EIO with err set. */
int sw_buf_write_file(const sw_buf *b, const char *path, sw_err *err);

/* Read a whole file ("-" is stdin) into a NUL-terminated buffer. If the file
   is gzip-compressed (magic 1f 8b) it is decompressed. Caller frees *data. */
int sw_read_file(const char *path, char **data, size_t *len, sw_err *err);

/* Parse a byte size: "16GiB", "16G" (binary), "16GB" (decimal), "512MiB",
   "1234". Fractions of the ideal peak ("0.4x") are reported through
   *fraction (>0) with *bytes = 0. Returns 0 or SW_EINVAL. */
int sw_parse_size(const char *s, int64_t *bytes, double *fraction, sw_err *err);
/* Parse a non-negative rate such as "12GB/s", "12e9", "20GiB/s" (bytes/s). */
int sw_parse_rate(const char *s, double *bytes_per_s, sw_err *err);
/* Parse a duration in seconds: "10us", "1.5ms", "2s", "0.001". */
int sw_parse_seconds(const char *s, double *seconds, sw_err *err);
/* Strict integer / double parsing of a whole string. */
int sw_parse_i64(const char *s, int64_t *out);
int sw_parse_f64(const char *s, double *out);
/* Human-readable size ("1.50 GiB") into buf. */
const char *sw_fmt_bytes(int64_t bytes, char *buf, size_t n);

/* Monotonic wall clock in seconds. */
double sw_now(void);

/* 64-bit FNV-1a hash (for keys and fingerprints). */
uint64_t sw_hash64(const void *data, size_t n, uint64_t seed);

#define SW_MIN(a, b) ((a) < (b) ? (a) : (b))
#define SW_MAX(a, b) ((a) > (b) ? (a) : (b))
#define SW_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#endif
