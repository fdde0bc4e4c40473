//! Template (string.Template, filled by codegen.recording_launcher): the wheel's launcher template, declared
//! with the wheel's own parameters, defined to record its template arguments instead of launching.
//! Lines that start with //! are this template's notes and are not written out.
namespace tensorrt_llm::kernels::cutlass_kernels_oss {
template <${tparams}>
void tma_warp_specialized_generic_moe_gemm_kernelLauncher(${params}) {
  ::reprokit_probe::Json j;
${body}
  j.boolean("runtime_swap_ab", ${input_name}.swap_ab);
  ::reprokit_probe::dispatched = j.done();
}
}  // namespace tensorrt_llm::kernels::cutlass_kernels_oss
