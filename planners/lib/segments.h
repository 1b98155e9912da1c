/* segments.h: the segment checkpointing of sublinear.c, shared with the
   planners that choose their segments by another rule (checkpoint-blocks),
   and the block rule those planners use. */
#ifndef SEGMENTS_H
#define SEGMENTS_H

#include "../../sim/builder.h"
#include "../planner.h"

/* Plan g with the forward ops (in the profile's order) cut into segments
   after every forward op o with cut_after[o] set (n_ops entries): each
   segment keeps what a later segment's forward ops read (its checkpoints),
   drops what only the backward pass reads after its last forward use, and
   re-runs the forward ops that remake it just before the first op after
   the segment that reads it; the last segment is never dropped
   (sublinear.c's header has the rules). The planner's params must declare
   "allocator" and "alignment". who names the plan in messages and notes.
   Errors as a planner's (SW_ENOFIT "does not fit: ...", SW_ENOMEM). */
int sublinear_plan_cuts(const graph_profile *g, const planner_opts *o, const uint8_t *cut_after,
                        const char *who, plan **out, sw_err *err);

/* The block rule (docs/planners.md, checkpoint-blocks): a block is a
   maximal run of consecutive forward ops, in the profile's order, whose
   names share the prefix before the first '.' (the generators' scope:
   "layer3" of "layer3.q_proj"); an op whose name has no '.' is a block of
   its own. In an imported trace whose "MODULE.PATH:aten::op" names have
   indexed layers, an op's prefix is its module path up to the first
   numeric component (a layer of a ModuleList: "inner.transformer.h.3"),
   or empty outside the layers.
   block[o] (n_ops entries) receives each forward op's block, numbered
   from 0 in order, and for a backward op the block of its forward
   op (attribute fwd_op), or of the last forward block with its name's
   prefix; -1 for other ops. Returns the number of blocks, or SW_ENOMEM. */
int32_t seg_blocks(const graph_profile *g, int32_t *block);

/* Whether an op type is a fused attention kernel, the attention core as
   one op holding no sequence-squared scores: the decoder generator's
   `flash_attention`, or PyTorch's as an imported trace records it
   (aten::scaled_dot_product_attention and the kernels it dispatches to,
   aten::_scaled_dot_product_flash_attention, ..._efficient_attention,
   ..._cudnn_attention, aten::_flash_attention_forward,
   aten::_efficient_attention_forward). */
int seg_fused_attention(const char *type);

/* Recompute by op kind (selective, sac): every forward op o with cand[o]
   set (n_ops entries) whose outputs are all read by the backward pass, not
   mutated nor persistent, and whose inputs are persistent or still alive
   and kept (not dropped themselves) at the re-run, has its outputs dropped
   after their last forward use and is re-run just before the first
   backward op reading one of them; ops are decided in the profile's order.
   The planner's params must declare "allocator" and "alignment"; who names
   it in the notes. Errors as pb_finish's (SW_ENOFIT, SW_EINVAL, SW_ENOMEM). */
int seg_plan_recompute(const graph_profile *g, const planner_opts *o, const uint8_t *cand,
                       const char *who, plan **out, sw_err *err);

/* For a refusal with numbers: a builder whose arena holds every storage
   (each aligned) and the largest workspace, to place a refused plan's
   tasks in; *pers: the profile's persistent bytes. NULL: out of memory. */
plan_builder *seg_roomy_builder(const graph_profile *g, const planner_opts *o, mem_fit fit,
                               int64_t *pers);

/* The refusal e2 (a plan whose placement failed) restated once the same
   tasks were built into a roomy builder b (rc: that build's status; b is
   freed here): e2 as it is when rc; else SW_ENOFIT saying what (the method
   and its decisions) keeps at its peak against the budget, or, where that
   fits, that who's allocator fragments memory. */
int seg_refusal(const graph_profile *g, const planner_opts *o, plan_builder *b, int rc,
                int64_t pers, const char *what, const char *who, const sw_err *e2, sw_err *err);

#endif
