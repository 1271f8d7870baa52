// What the session-16 flash kernels (fattn.cu) use beyond the shim of session 1 (emu_fa.sh).
#pragma once
inline unsigned atomicOr(unsigned* p, unsigned v) { return std::atomic_ref<unsigned>(*p).fetch_or(v); }
inline int __ffs(unsigned x) { return __builtin_ffs(x); }
// attn_used (ops.cu) since session 8: a warp's maximum in one instruction.
inline unsigned __reduce_max_sync(unsigned, unsigned v) {
    for (int o = 16; o > 0; o >>= 1) v = std::max(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
inline unsigned max(int a, unsigned b) { return std::max((unsigned)a, b); }
