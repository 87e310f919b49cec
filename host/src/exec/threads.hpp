// Applies [runtime] intra_op_threads to the threaded libraries plugins run on. The SDK has
// no thread setting yet, so the host reaches them two ways: environment variables read at
// load (SWITCHYARD_INTRA_OP_THREADS, which the aten plugin hands to at::set_num_threads,
// and OMP_NUM_THREADS before libgomp loads), and, once plugins are loaded, the thread
// setters of OpenBLAS and OpenMP where they are in the process (found with dlopen
// RTLD_NOLOAD, so the host links neither).
#pragma once

namespace switchyard::exec {

// Before plugins load. `threads` <= 0 leaves everything at the libraries' defaults.
void prepare_thread_environment(int threads);
// After plugins load: OpenBLAS's pool (process-wide) and OpenMP on the calling thread.
void apply_library_threads(int threads);
// OpenBLAS's current thread count, or -1 if no OpenBLAS is loaded.
int openblas_threads();
// OpenMP's thread count for parallel regions started from the calling thread (e.g. an
// inter-op worker); nothing if no OpenMP runtime is loaded or `threads` <= 0.
void set_this_thread_openmp(int threads);
// The calling thread's OpenMP thread count (omp_get_max_threads), or 0 without OpenMP.
int this_thread_openmp();

}  // namespace switchyard::exec
