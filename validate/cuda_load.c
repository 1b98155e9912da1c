/* cuda_load.c: the backend registry. "cpu" is built in; "cuda" lives in
   libswapsim_cuda.so (built by nvcc where it is present) and is loaded with
   dlopen the first time it is asked for, so bin/swapsim runs on machines
   without CUDA. calibrate-device's entry point lives in the same object. */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "replay.h"

#define CUDA_SO "libswapsim_cuda.so"

static pthread_mutex_t load_mu = PTHREAD_MUTEX_INITIALIZER;
static const val_backend_methods *cuda_methods; /* under load_mu */
static void *cuda_handle;

/* Try one path; on failure append dlerror's reason to why. */
static const val_backend_methods *try_load(const char *path, char *why, size_t n)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        size_t l = strlen(why);
        if (l + 4 < n && access(path, F_OK) == 0)
            snprintf(why + l, n - l, "; %s", e ? e : path);
        return NULL;
    }
    val_cuda_entry_fn entry;
    void *sym = dlsym(h, VAL_CUDA_ENTRY);
    memcpy(&entry, &sym, sizeof entry); /* object pointer to function pointer, as POSIX allows */
    const val_backend_methods *m = entry ? entry(VAL_ABI_VERSION) : NULL;
    if (!m) {
        size_t l = strlen(why);
        snprintf(why + l, n - l, "; %s was built for another version of swapsim (rebuild it)",
                 path);
        dlclose(h);
        return NULL;
    }
    cuda_handle = h;
    return m;
}

static const val_backend_methods *load_cuda(sw_err *err)
{
    pthread_mutex_lock(&load_mu);
    const val_backend_methods *m = cuda_methods;
    char why[1024] = "";
    if (!m) {
        const char *env = getenv("SWAPSIM_CUDA_LIB");
        if (env && *env) {
            m = try_load(env, why, sizeof why);
            if (!m && !why[0])
                snprintf(why, sizeof why, "; SWAPSIM_CUDA_LIB=%s does not exist", env);
        } else {
            char exe[PATH_MAX];
            ssize_t l = readlink("/proc/self/exe", exe, sizeof exe - 1);
            if (l > 0) {
                exe[l] = 0;
                char *slash = strrchr(exe, '/');
                if (slash)
                    *slash = 0;
                static const char *const rel[] = {"", "/../lib/swapsim", "/../build/rel", "/.."};
                for (size_t i = 0; i < SW_ARRAY_LEN(rel) && !m; i++) {
                    char path[PATH_MAX + 64];
                    snprintf(path, sizeof path, "%s%s/" CUDA_SO, exe, rel[i]);
                    m = try_load(path, why, sizeof why);
                }
            }
        }
        cuda_methods = m;
    }
    pthread_mutex_unlock(&load_mu);
    if (!m)
        sw_fail(err, SW_EUNSUPPORTED, "the CUDA backend is not available: %s was not found next "
                "to the executable (built by 'make' where nvcc is present; or set "
                "SWAPSIM_CUDA_LIB)%s", CUDA_SO, why);
    return m;
}

const val_backend_methods *val_backend_find(const char *name, sw_err *err)
{
    if (name && !strcmp(name, "cpu"))
        return &val_cpu_backend;
    if (name && !strcmp(name, "cuda"))
        return load_cuda(err);
    sw_fail(err, SW_ENOTFOUND, "unknown backend '%s' (expected cpu or cuda)", name ? name : "");
    return NULL;
}

val_cuda_calibrate_fn val_cuda_calibrate_find(sw_err *err)
{
    if (!load_cuda(err))
        return NULL;
    pthread_mutex_lock(&load_mu);
    void *sym = cuda_handle ? dlsym(cuda_handle, VAL_CUDA_CALIBRATE) : NULL;
    pthread_mutex_unlock(&load_mu);
    val_cuda_calibrate_fn fn = NULL;
    memcpy(&fn, &sym, sizeof fn); /* object pointer to function pointer, as POSIX allows */
    if (!fn)
        sw_fail(err, SW_EUNSUPPORTED, "%s has no calibrate-device (built from an older swapsim: "
                "rebuild it with make)", CUDA_SO);
    return fn;
}
