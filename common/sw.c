/* sw.c: status codes, error messages, the allocation hook and small helpers. */
#define _POSIX_C_SOURCE 200809L
#include "sw.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

int sw_fail(sw_err *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}

void sw_err_prefix(sw_err *err, const char *fmt, ...)
{
    if (!err)
        return;
    char pre[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    if (n <= 0)
        return;
    size_t pl = SW_MIN((size_t)n, sizeof pre - 1), ol = strlen(err->msg);
    if (pl + ol >= sizeof err->msg)
        ol = sizeof err->msg - 1 - pl;
    memmove(err->msg + pl, err->msg, ol);
    memcpy(err->msg, pre, pl);
    err->msg[pl + ol] = 0;
}

const char *sw_strerror(int code)
{
    switch (code) {
    case SW_OK: return "ok";
    case SW_EINVAL: return "invalid input";
    case SW_ENOMEM: return "out of host memory";
    case SW_EIO: return "I/O error";
    case SW_ENOFIT: return "does not fit";
    case SW_EUNSAFE: return "unsafe plan";
    case SW_EDEADLOCK: return "deadlock";
    case SW_ENOTFOUND: return "not found";
    case SW_EEXCEEDED: return "exceeded";
    case SW_EUNSUPPORTED: return "unsupported";
    default: return "unknown error";
    }
}

/* ---- allocation hook ---- */

static void *default_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    (void)ud;
    (void)osize;
    if (nsize == 0) {
        free(ptr);
        return NULL;
    }
    return realloc(ptr, nsize);
}

static sw_alloc_fn g_alloc = default_alloc;
static void *g_alloc_ud;

void sw_set_allocator(sw_alloc_fn fn, void *ud)
{
    g_alloc = fn ? fn : default_alloc;
    g_alloc_ud = fn ? ud : NULL;
}

void *sw_malloc(size_t n) { return g_alloc(g_alloc_ud, NULL, 0, n ? n : 1); }

void *sw_calloc(size_t n, size_t sz)
{
    if (sz && n > SIZE_MAX / sz)
        return NULL;
    size_t t = n * sz;
    void *p = sw_malloc(t);
    if (p)
        memset(p, 0, t ? t : 1);
    return p;
}

void *sw_realloc(void *p, size_t n) { return g_alloc(g_alloc_ud, p, 0, n ? n : 1); }

void sw_free(void *p)
{
    if (p)
        g_alloc(g_alloc_ud, p, 0, 0);
}

char *sw_strndup(const char *s, size_t n)
{
    if (!s)
        return NULL;
    char *d = sw_malloc(n + 1);
    if (!d)
        return NULL;
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

char *sw_strdup(const char *s) { return s ? sw_strndup(s, strlen(s)) : NULL; }

int sw_grow(void **arr, size_t *cap, size_t need, size_t esz)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 8;
    while (nc < need) {
        if (nc > SIZE_MAX / 2 / esz)
            return SW_ENOMEM;
        nc *= 2;
    }
    void *p = sw_realloc(*arr, nc * esz);
    if (!p)
        return SW_ENOMEM;
    *arr = p;
    *cap = nc;
    return 0;
}

/* ---- byte buffer ---- */

void sw_buf_init(sw_buf *b) { memset(b, 0, sizeof *b); }

void sw_buf_free(sw_buf *b)
{
    sw_free(b->data);
    memset(b, 0, sizeof *b);
}

static int buf_reserve(sw_buf *b, size_t extra)
{
    if (b->oom)
        return -1;
    if (SW_GROW(b->data, b->cap, b->len + extra + 1)) {
        b->oom = 1;
        return -1;
    }
    return 0;
}

void sw_buf_put(sw_buf *b, const char *s, size_t n)
{
    if (buf_reserve(b, n))
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

void sw_buf_puts(sw_buf *b, const char *s) { sw_buf_put(b, s, strlen(s)); }

void sw_buf_putc(sw_buf *b, char c)
{
    if (b->len + 2 <= b->cap && !b->oom) {
        b->data[b->len++] = c;
        b->data[b->len] = 0;
        return;
    }
    sw_buf_put(b, &c, 1);
}

void sw_buf_printf(sw_buf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof tmp) {
        sw_buf_put(b, tmp, (size_t)n);
        return;
    }
    if (buf_reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void sw_buf_put_i64(sw_buf *b, int64_t v)
{
    char tmp[24];
    char *e = tmp + sizeof tmp, *p = e;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    sw_buf_put(b, p, (size_t)(e - p));
}

void sw_buf_put_f64(sw_buf *b, double v)
{
    char tmp[40];
    if (!isfinite(v)) {
        sw_buf_puts(b, "null");
        return;
    }
    if (v == floor(v) && fabs(v) < 1e15) {
        sw_buf_put_i64(b, (int64_t)v);
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, v);
        if (prec == 17 || strtod(tmp, NULL) == v)
            break;
    }
    sw_buf_puts(b, tmp);
}

void sw_buf_put_jstr(sw_buf *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    sw_buf_putc(b, '"');
    if (s) {
        const char *run = s;
        for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
            if (*p >= 0x20 && *p != '"' && *p != '\\')
                continue;
            sw_buf_put(b, run, (size_t)((const char *)p - run));
            run = (const char *)p + 1;
            switch (*p) {
            case '"': sw_buf_puts(b, "\\\""); break;
            case '\\': sw_buf_puts(b, "\\\\"); break;
            case '\n': sw_buf_puts(b, "\\n"); break;
            case '\t': sw_buf_puts(b, "\\t"); break;
            case '\r': sw_buf_puts(b, "\\r"); break;
            default: {
                char u[7] = {'\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15], 0};
                sw_buf_puts(b, u);
            }
            }
        }
        sw_buf_puts(b, run);
    }
    sw_buf_putc(b, '"');
}

int sw_buf_write_file(const sw_buf *b, const char *path, sw_err *err)
{
    if (b->oom)
        return sw_fail(err, SW_ENOMEM, "%s: out of memory while formatting output", path);
    int to_stdout = strcmp(path, "-") == 0;
    FILE *f = to_stdout ? stdout : fopen(path, "wb");
    if (!f)
        return sw_fail(err, SW_EIO, "%s: cannot open for writing: %s", path, strerror(errno));
    size_t n = b->len ? fwrite(b->data, 1, b->len, f) : 0;
    int bad = n != b->len;
    if (to_stdout)
        bad |= fflush(f) != 0;
    else
        bad |= fclose(f) != 0;
    if (bad)
        return sw_fail(err, SW_EIO, "%s: write failed: %s", path, strerror(errno));
    return 0;
}

/* ---- files ---- */

/* zlib's allocations go through the hook too. */
static voidpf z_alloc(voidpf opaque, uInt items, uInt size)
{
    (void)opaque;
    return sw_calloc(items, size);
}

static void z_free(voidpf opaque, voidpf p)
{
    (void)opaque;
    sw_free(p);
}

static int gunzip(const char *path, const char *src, size_t n, char **data, size_t *len, sw_err *err)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    zs.zalloc = z_alloc;
    zs.zfree = z_free;
    if (inflateInit2(&zs, 15 + 32) != Z_OK)
        return sw_fail(err, SW_ENOMEM, "%s: cannot initialise gzip decoder", path);
    size_t cap = n * 4 + 4096, used = 0;
    char *out = sw_malloc(cap);
    if (!out) {
        inflateEnd(&zs);
        return sw_fail(err, SW_ENOMEM, "%s: out of memory", path);
    }
    zs.next_in = (Bytef *)(uintptr_t)src;
    zs.avail_in = (uInt)n;
    int rc;
    for (;;) {
        if (cap - used < 2) {
            size_t nc = cap * 2;
            char *p = sw_realloc(out, nc);
            if (!p) {
                sw_free(out);
                inflateEnd(&zs);
                return sw_fail(err, SW_ENOMEM, "%s: out of memory", path);
            }
            out = p;
            cap = nc;
        }
        zs.next_out = (Bytef *)out + used;
        zs.avail_out = (uInt)SW_MIN(cap - used - 1, (size_t)1 << 30);
        rc = inflate(&zs, Z_NO_FLUSH);
        used = (size_t)((char *)zs.next_out - out);
        if (rc == Z_STREAM_END)
            break;
        if (rc != Z_OK && rc != Z_BUF_ERROR) {
            const char *m = zs.msg ? zs.msg : "corrupt data";
            sw_fail(err, SW_EINVAL, "%s: gzip error at compressed byte %lu: %s", path,
                    (unsigned long)zs.total_in, m);
            sw_free(out);
            inflateEnd(&zs);
            return SW_EINVAL;
        }
        if (rc == Z_BUF_ERROR && zs.avail_in == 0) {
            sw_fail(err, SW_EINVAL, "%s: gzip error: truncated stream after %lu compressed bytes",
                    path, (unsigned long)zs.total_in);
            sw_free(out);
            inflateEnd(&zs);
            return SW_EINVAL;
        }
    }
    inflateEnd(&zs);
    out[used] = 0;
    *data = out;
    *len = used;
    return 0;
}

int sw_read_file(const char *path, char **data, size_t *len, sw_err *err)
{
    int from_stdin = strcmp(path, "-") == 0;
    FILE *f = from_stdin ? stdin : fopen(path, "rb");
    if (!f)
        return sw_fail(err, SW_EIO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = sw_malloc(cap);
    if (!buf) {
        if (!from_stdin)
            fclose(f);
        return sw_fail(err, SW_ENOMEM, "%s: out of memory", path);
    }
    for (;;) {
        if (cap - n < 4096) {
            char *p = sw_realloc(buf, cap * 2);
            if (!p) {
                sw_free(buf);
                if (!from_stdin)
                    fclose(f);
                return sw_fail(err, SW_ENOMEM, "%s: out of memory", path);
            }
            buf = p;
            cap *= 2;
        }
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0)
            break;
    }
    int bad = ferror(f), eno = errno;
    if (!from_stdin)
        fclose(f);
    if (bad) {
        sw_free(buf);
        if (eno == EISDIR) /* fopen opens a directory; reading it fails */
            return sw_fail(err, SW_EIO, "%s: is a directory (expected a file)", path);
        return sw_fail(err, SW_EIO, "%s: read error: %s", path, strerror(eno));
    }
    buf[n] = 0;
    if (n >= 2 && (unsigned char)buf[0] == 0x1f && (unsigned char)buf[1] == 0x8b) {
        char *out = NULL;
        size_t olen = 0;
        int rc = gunzip(path, buf, n, &out, &olen, err);
        sw_free(buf);
        if (rc)
            return rc;
        *data = out;
        *len = olen;
        return 0;
    }
    *data = buf;
    *len = n;
    return 0;
}

/* ---- parsing ---- */

int sw_parse_i64(const char *s, int64_t *out)
{
    if (!s || !*s)
        return SW_EINVAL;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end)
        return SW_EINVAL;
    *out = v;
    return 0;
}

int sw_parse_f64(const char *s, double *out)
{
    if (!s || !*s)
        return SW_EINVAL;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v))
        return SW_EINVAL;
    *out = v;
    return 0;
}

struct unit {
    const char *name;
    double mult;
};

static const struct unit size_units[] = {
    {"", 1},          {"b", 1},          {"k", 1024.0},     {"kib", 1024.0},
    {"kb", 1e3},      {"m", 1048576.0},  {"mib", 1048576.0}, {"mb", 1e6},
    {"g", 1073741824.0}, {"gib", 1073741824.0}, {"gb", 1e9},
    {"t", 1099511627776.0}, {"tib", 1099511627776.0}, {"tb", 1e12},
};

static int lookup_unit(const struct unit *u, size_t n, const char *name, double *mult)
{
    char low[16];
    size_t l = strlen(name);
    if (l >= sizeof low)
        return -1;
    for (size_t i = 0; i <= l; i++)
        low[i] = (char)((name[i] >= 'A' && name[i] <= 'Z') ? name[i] + 32 : name[i]);
    for (size_t i = 0; i < n; i++)
        if (strcmp(u[i].name, low) == 0) {
            *mult = u[i].mult;
            return 0;
        }
    return -1;
}

int sw_parse_size(const char *s, int64_t *bytes, double *fraction, sw_err *err)
{
    *bytes = 0;
    if (fraction)
        *fraction = 0;
    if (!s || !*s)
        return sw_fail(err, SW_EINVAL, "empty size: expected e.g. 16GiB, 512MiB, 1234 or 0.4x");
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !isfinite(v) || v < 0)
        return sw_fail(err, SW_EINVAL,
                       "bad size '%s': expected a non-negative number with an optional unit "
                       "(B, K/KiB, M/MiB, G/GiB, T/TiB binary; KB, MB, GB, TB decimal) or a "
                       "fraction of the ideal peak such as 0.4x", s);
    if ((end[0] == 'x' || end[0] == 'X') && end[1] == 0) {
        if (!fraction)
            return sw_fail(err, SW_EINVAL, "bad size '%s': a fraction (x) is not allowed here", s);
        if (v <= 0)
            return sw_fail(err, SW_EINVAL, "bad size '%s': the fraction must be positive", s);
        *fraction = v;
        return 0;
    }
    double mult;
    if (lookup_unit(size_units, SW_ARRAY_LEN(size_units), end, &mult))
        return sw_fail(err, SW_EINVAL,
                       "bad size '%s': unknown unit '%s' (expected B, K, KiB, KB, M, MiB, MB, G, "
                       "GiB, GB, T, TiB, TB or x)", s, end);
    double b = v * mult;
    if (b > 9.2e18)
        return sw_fail(err, SW_EINVAL, "bad size '%s': too large", s);
    *bytes = (int64_t)llround(b);
    return 0;
}

int sw_parse_rate(const char *s, double *bytes_per_s, sw_err *err)
{
    char tmp[64];
    size_t l = s ? strlen(s) : 0;
    if (l == 0 || l >= sizeof tmp)
        return sw_fail(err, SW_EINVAL, "bad rate '%s': expected e.g. 12GB/s or 12e9", s ? s : "");
    memcpy(tmp, s, l + 1);
    if (l > 2 && strcmp(tmp + l - 2, "/s") == 0)
        tmp[l - 2] = 0;
    char *end;
    errno = 0;
    double v = strtod(tmp, &end);
    double mult;
    if (end == tmp || errno || !isfinite(v) || v <= 0 ||
        lookup_unit(size_units, SW_ARRAY_LEN(size_units), end, &mult))
        return sw_fail(err, SW_EINVAL, "bad rate '%s': expected a positive number of bytes per "
                       "second such as 12GB/s, 11.2GiB/s or 12e9", s);
    *bytes_per_s = v * mult;
    return 0;
}

int sw_parse_seconds(const char *s, double *seconds, sw_err *err)
{
    static const struct unit tu[] = {{"", 1}, {"s", 1}, {"ms", 1e-3}, {"us", 1e-6},
                                     {"ns", 1e-9}, {"m", 60}, {"min", 60}, {"h", 3600}};
    char *end;
    errno = 0;
    double v = s ? strtod(s, &end) : 0;
    double mult;
    if (!s || end == s || errno || !isfinite(v) || v < 0 ||
        lookup_unit(tu, SW_ARRAY_LEN(tu), end, &mult))
        return sw_fail(err, SW_EINVAL, "bad duration '%s': expected a non-negative number of "
                       "seconds with an optional unit (ns, us, ms, s, min, h)", s ? s : "");
    *seconds = v * mult;
    return 0;
}

const char *sw_fmt_bytes(int64_t bytes, char *buf, size_t n)
{
    static const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int i = 0;
    while (fabs(v) >= 1024 && i < 4) {
        v /= 1024;
        i++;
    }
    if (i == 0)
        snprintf(buf, n, "%lld B", (long long)bytes);
    else
        snprintf(buf, n, "%.2f %s", v, u[i]);
    return buf;
}

double sw_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint64_t sw_hash64(const void *data, size_t n, uint64_t seed)
{
    const unsigned char *p = data;
    uint64_t h = 1469598103934665603ULL ^ seed;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

#ifndef SW_DATA_DIR
#define SW_DATA_DIR "data"
#endif

const char *sw_data_dir(void)
{
    const char *d = getenv("SWAPSIM_DATA");
    return d && *d ? d : SW_DATA_DIR;
}
