// The angles of rotary position embeddings (ggml's rope_ext semantics): the specification both
// backends rotate by. Pair k of a head turns by position · base^(−2k/n_rot) / factor_k, scaled
// linearly by freq_scale, with YaRN's ramp between the extrapolated and interpolated angle over
// its correction range, and cos/sin times the attention-magnitude factor.
#pragma once

#include "graph/graph.h"

namespace sinter {

// Fills cos_sin[2k], cos_sin[2k+1] for pairs k = 0 .. n_rot/2 − 1 at `position` (a negative
// delta for shifts). `freq_factors` (n_rot/2 values) may be null. `magnitude` false leaves out
// the attention-magnitude factors (a shift only rotates). Angles are computed in float, with the
// angle of pair k+1 the angle of pair k times base^(−2/n_rot), as llama.cpp computes them.
void rope_angles(const RopeParams& p, const float* freq_factors, float position, bool magnitude,
                 float* cos_sin);

}  // namespace sinter
