// The emulator's globals and block launch (include once, after shim.h), shared by the drivers of
// attn_main.cpp (emu.sh attn) and ../../2026-12-06-s15-emu (mmq_main.cpp, dec_main.cpp).
#pragma once
#include <functional>
thread_local dim3 threadIdx, blockIdx;
dim3 blockDim, gridDim;
std::barrier<>* g_block_bar;
std::barrier<>* g_warp_bar[32];
std::atomic<int> g_or{0};
uint64_t g_shfl[32][32];
int g_mA[32][32][4], g_mB[32][32][2];
uint8_t* g_dyn;
uint32_t g_dyn_size;

// launch runs the grid's blocks one after another, a block's threads as std::threads, over smem bytes of
// dynamic shared memory (16-byte aligned, filled with 0xa5: what a kernel reads before it writes shows).
inline void launch(dim3 grid, int threads, size_t smem, std::function<void()> k) {
    std::vector<uint8_t> dyn(smem + 16);
    blockDim = dim3{(unsigned)threads, 1, 1};
    gridDim = grid;
    g_dyn_size = (uint32_t)smem;
    for (unsigned by = 0; by < grid.y; by++)
        for (unsigned bx = 0; bx < grid.x; bx++) {
            g_dyn = (uint8_t*)(((uintptr_t)dyn.data() + 15) & ~(uintptr_t)15);
            memset(g_dyn, 0xa5, smem);
            std::barrier<> bb(threads);
            g_block_bar = &bb;
            for (int w = 0; w < threads / 32; w++) g_warp_bar[w] = new std::barrier<>(32);
            std::vector<std::thread> ts;
            for (int t = 0; t < threads; t++)
                ts.emplace_back([&, t] { threadIdx = dim3{(unsigned)t, 0, 0}; blockIdx = dim3{bx, by, 0}; k(); });
            for (auto& t : ts) t.join();
            for (int w = 0; w < threads / 32; w++) delete g_warp_bar[w];
        }
}
inline void launch(unsigned grid, int threads, size_t smem, std::function<void()> k) { launch(dim3{grid, 1, 1}, threads, smem, k); }
