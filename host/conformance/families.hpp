// The case families all_cases() gathers, one per cases_<family>.cpp.
#pragma once

#include <switchyard/conformance.hpp>

namespace switchyard::conformance {

void add_elementwise_cases(CaseTable& table);
void add_linalg_cases(CaseTable& table);
void add_conv_cases(CaseTable& table);
void add_pool_norm_cases(CaseTable& table);  // the conv family's pooling and batch norm
void add_attention_cases(CaseTable& table);
void add_shape_cases(CaseTable& table);

}  // namespace switchyard::conformance
