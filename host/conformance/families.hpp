// The case families all_cases() gathers, one per cases_<family>.cpp.
#pragma once

#include <switchyard/conformance.hpp>

namespace switchyard::conformance {

void add_elementwise_cases(CaseTable& table);
void add_linalg_cases(CaseTable& table);
void add_conv_cases(CaseTable& table);
void add_attention_cases(CaseTable& table);
void add_shape_cases(CaseTable& table);

}  // namespace switchyard::conformance
