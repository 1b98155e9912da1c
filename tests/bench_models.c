/* bench_models.c: `make bench` figures of the generators: generating the
   SwapAdvisor paper's NASNet-25 (batch 64) and RNN-8-8K (batch 256). */
#include "../profiles/calibrate.h"
#include "tap.h"

static double best_of(const char *model, const char *const *kv, int n, int runs, int *ops)
{
    double best = 1e30;
    for (int i = 0; i < runs; i++) {
        graph_profile *g = NULL;
        sw_err e;
        double t0 = sw_now();
        if (cal_generate(model, kv, n, "v100", &g, &e)) {
            fprintf(stderr, "bench_models: %s\n", e.msg);
            return -1;
        }
        double t = sw_now() - t0;
        *ops = g->n_ops;
        graph_free(g);
        if (t < best)
            best = t;
    }
    return best;
}

int main(void)
{
    const char *nas[] = {"repeat=25", "batch=64"};
    const char *rnn[] = {"layers=8", "hidden=8192", "batch=256"};
    int ops = 0;
    double t = best_of("nasnet", nas, 2, 3, &ops);
    if (t < 0)
        return 1;
    printf("# nasnet --repeat 25 --batch 64: %d operators (target: under 1 s)\n", ops);
    printf("bench: gen_nasnet25_s %.3f s\n", t);
    t = best_of("rnn", rnn, 3, 3, &ops);
    if (t < 0)
        return 1;
    printf("# rnn --layers 8 --hidden 8192 --batch 256: %d operators\n", ops);
    printf("bench: gen_rnn_8_8k_s %.3f s\n", t);
    return 0;
}
