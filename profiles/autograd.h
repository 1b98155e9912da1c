/* autograd.h: build a training graph from a recorded forward pass: backward
   operators in reverse order with gradient tensors (accumulated in place
   where a tensor feeds several operators, as frameworks do with
   grad_req=add), then one optimizer update per parameter. Generators record
   the forward pass here and get forward, backward and update for free. */
#ifndef AUTOGRAD_H
#define AUTOGRAD_H

#include "graph.h"

typedef enum { AG_SGD, AG_MOMENTUM, AG_ADAM } ag_optimizer;

/* Which forward tensors the backward operator reads. */
#define AG_SAVE_IN(i) (1u << (i)) /* forward input i (i < 24) */
#define AG_SAVE_OUT (1u << 30)    /* the forward outputs */
#define AG_SAVE_ALL_IN 0x00FFFFFFu

typedef struct ag_fwd {
    int32_t op;        /* forward op id */
    uint32_t save;     /* AG_SAVE_* */
    double bwd_time_s; /* backward compute time */
    int64_t bwd_workspace;
    char *bwd_type;    /* backward op type (NULL: type + "_backward") */
} ag_fwd;

typedef struct ag_graph {
    graph_profile *g;
    ag_fwd *fwd;
    int32_t n_fwd;
    size_t fcap;
    double update_bytes_per_s; /* memory bandwidth used to time updates */
    double launch_s;           /* added to every generated op */
    int state_mult;            /* optimizer state bytes per parameter byte (0: 1; 2: fp32
                                  states for 16-bit parameters, mixed precision) */
    int master_copy;           /* 1: an fp32 master copy of each parameter as one more
                                  state tensor (mixed precision), state_mult times its bytes */
} ag_graph;

/* Start a graph on a new profile. Returns 0 or SW_ENOMEM. */
int ag_init(ag_graph *a, const char *name, const dev_spec *dev);
/* Free the recorder (not the profile unless ag_finish was not reached). */
void ag_release(ag_graph *a);

/* Tensors of the forward pass. The data batch is persistent: it is the
   input buffer the data loader refills between iterations. */
int32_t ag_input(ag_graph *a, const char *name, int64_t bytes);
int32_t ag_param(ag_graph *a, const char *name, int64_t bytes);

/* Record a forward op with the given inputs (tensor ids) and n_out fresh
   activation outputs of the given sizes (their ids returned in out_ids).
   Returns the op id or -1 on allocation failure. */
int32_t ag_op(ag_graph *a, const char *name, const char *type, double fwd_time_s,
              double bwd_time_s, const int32_t *in, int n_in, const int64_t *out_bytes,
              int n_out, int32_t *out_ids, uint32_t save, int64_t workspace);
/* A forward op whose output is a view of input 0 (reshape, transpose): no
   new storage; backward is a view too (zero time, grad shares storage). */
int32_t ag_view(ag_graph *a, const char *name, int32_t base, int64_t bytes);

/* Finish an inference profile (forward only). On success the profile is
   finished (graph_finish) and returned in *out. The recorder is released
   either way (on failure with its profile; ag_release again is harmless). */
int ag_finish_inference(ag_graph *a, graph_profile **out, sw_err *err);
/* Append backward (from loss, a forward tensor) and updates, then finish;
   the recorder is released either way, as for ag_finish_inference. */
int ag_finish_training(ag_graph *a, int32_t loss, ag_optimizer opt, graph_profile **out,
                       sw_err *err);

int ag_parse_optimizer(const char *s, ag_optimizer *out);

#endif
