// elementwise plugin: each ops_*.cpp adds its kernels to the plugin's table.
#pragma once

#include <switchyard/plugin.hpp>

#include <memory>
#include <vector>

namespace sy_elementwise {

void add_binary_kernels(std::vector<std::shared_ptr<sy::KernelEntry>>& kernels);
void add_unary_kernels(std::vector<std::shared_ptr<sy::KernelEntry>>& kernels);
void add_mean_kernel(std::vector<std::shared_ptr<sy::KernelEntry>>& kernels);
void add_rms_norm_kernel(std::vector<std::shared_ptr<sy::KernelEntry>>& kernels);
void add_rotary_kernel(std::vector<std::shared_ptr<sy::KernelEntry>>& kernels);

}  // namespace sy_elementwise
