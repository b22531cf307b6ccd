// The cost of a thread-block cluster's parts on the GPU, for the cluster
// exchange (`cluster_gather`, tilelang/backend/codegen/cluster.py):
//
//   nvcc -O3 -std=c++17 -arch=sm_90a -o /tmp/cluster_micro benchmarks/cluster_micro.cu && /tmp/cluster_micro
//
// Every number is the time a kernel of the row's grid takes in a CUDA graph of
// 20 launches (replayed, median of 7), in microseconds:
//   empty     a kernel that does nothing, launched with cluster size C (C = 1: none)
//   bar+      the same with 1 / 33 cluster barriers (release arrive + acquire wait):
//             the difference / 32 is one barrier; `relaxed` with arrive.relaxed
//   push      each block of a cluster sends a 2 KB f32 record (128 threads) to
//             every block of its cluster, then sums the C records it holds:
//               s32-bar  4-byte st.shared::cluster at a 16-byte stride (as the
//                        first cluster_gather) + barrier.cluster (release/acquire)
//               v4-bar   16-byte st.shared::cluster + barrier.cluster
//               v4-rlx   16-byte stores + a relaxed barrier (not ordered: the
//                        fence's cost, not a usable form; only with the argument
//                        `unordered`: a block may exit while a peer's stores into it
//                        are in flight, the likely cause of the "unspecified launch
//                        failure" that ended both H200 runs of 2026-12-04 at a later
//                        launch, 8 x 16 and 64 x 4)
//               async    16-byte st.async completing bytes on the peer's mbarrier
//                        (the current cluster_gather)
//               global   no cluster: each block reads its group's C records from
//                        global memory (L2), the second launch's merge
// The consumers check their sums against the host's; a wrong one is printed.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            printf("CUDA error %s at line %d: %s\n", cudaGetErrorString(e_), __LINE__, #x);    \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

constexpr int T = 128;
constexpr int N = 512;  // floats a record: 2 KB

__device__ __forceinline__ unsigned ctarank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
__device__ __forceinline__ unsigned nctarank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
    return r;
}
__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ unsigned mapa(unsigned a, unsigned c) {
    unsigned r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(c));
    return r;
}
__device__ __forceinline__ void cluster_sync_release() {
    asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
}
__device__ __forceinline__ void cluster_sync_relaxed() {
    asm volatile("barrier.cluster.arrive.relaxed;\n\tbarrier.cluster.wait;" ::: "memory");
}

__global__ void k_empty(int* out) {
    if (out != nullptr && threadIdx.x == 0 && blockIdx.x == 0x7fffffff) out[0] = 1;
}

template <int MODE>
__global__ void k_bar(int* out, int iters) {
    for (int i = 0; i < iters; ++i) {
        if (MODE == 0) cluster_sync_release();
        else cluster_sync_relaxed();
    }
    if (out != nullptr && threadIdx.x == 0 && blockIdx.x == 0x7fffffff) out[0] = 1;
}

enum { S32_BAR = 0, V4_BAR = 1, V4_RLX = 2, ASYNC = 3, A2A = 4 };

template <int MODE>
__global__ void k_push(const float* in, float* out, int cg) {
    extern __shared__ __align__(16) float buf[];  // [C][N], then the mbarrier
    const int t = threadIdx.x;
    const unsigned C = nctarank();
    const unsigned r = ctarank();
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    unsigned long long* bar = reinterpret_cast<unsigned long long*>(buf + C * N);
    const float4 v = reinterpret_cast<const float4*>(in + (size_t)blockIdx.x * N)[t];
    if ((MODE == ASYNC || MODE == A2A) && t == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n\tfence.mbarrier_init.release.cluster;"
                     ::"r"(smem_addr(bar)) : "memory");
    }
    cluster_sync_relaxed();  // every block started (and its barrier set up)
    const unsigned mine = smem_addr(buf + r * N + 4 * t);
    if (MODE == S32_BAR) {
        const float e[4] = {v.x, v.y, v.z, v.w};
        for (unsigned c = 0; c < C; ++c)
            for (int j = 0; j < 4; ++j)
                asm volatile("st.shared::cluster.f32 [%0], %1;" ::"r"(mapa(mine + 4 * j, c)), "f"(e[j]) : "memory");
        cluster_sync_release();
    } else if (MODE == V4_BAR || MODE == V4_RLX) {
        for (unsigned c = 0; c < C; ++c)
            asm volatile("st.shared::cluster.v4.f32 [%0], {%1, %2, %3, %4};"
                         ::"r"(mapa(mine, c)), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w) : "memory");
        if (MODE == V4_BAR) cluster_sync_release();
        else cluster_sync_relaxed();
    } else if (MODE == ASYNC) {
        const unsigned b = smem_addr(bar);
        if (t == 0)
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"((C - 1) * N * 4)
                         : "memory");
        reinterpret_cast<float4*>(buf + r * N)[t] = v;
        for (unsigned d = 1; d < C; ++d) {
            const unsigned c = (r + d) % C;
            asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, [%5];"
                         ::"r"(mapa(mine, c)), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w), "r"(mapa(b, c)) : "memory");
        }
        unsigned ok = 0;
        while (!ok)
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], 0; "
                         "selp.u32 %0, 1, 0, p; }" : "=r"(ok) : "r"(b) : "memory");
        __syncthreads();  // the own record, written by this block's threads
    }
    if (MODE == A2A) {
        // float4 t of the record belongs to block t / (N / 4 / C); it lands in
        // that block's slot r (N / C floats a slot)
        const unsigned b = smem_addr(bar);
        const unsigned per = N / C;  // floats a slot
        if (t == 0)
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"((C - 1) * per * 4)
                         : "memory");
        const unsigned dst = (4 * t) / per;
        const unsigned at = smem_addr(buf + r * per + (4 * t) % per);
        if (dst == r) {
            reinterpret_cast<float4*>(buf + r * per)[((4 * t) % per) / 4] = v;
        } else {
            asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, [%5];"
                         ::"r"(mapa(at, dst)), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w), "r"(mapa(b, dst)) : "memory");
        }
        unsigned ok = 0;
        while (!ok)
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], 0; "
                         "selp.u32 %0, 1, 0, p; }" : "=r"(ok) : "r"(b) : "memory");
        __syncthreads();
        if (4 * t < per) {  // the block's N / C columns: the sum of the C slots
            for (unsigned c = 0; c < C; ++c) {
                float4 w = reinterpret_cast<const float4*>(buf + c * per)[t];
                acc.x += w.x; acc.y += w.y; acc.z += w.z; acc.w += w.w;
            }
            reinterpret_cast<float4*>(out + (size_t)blockIdx.x * N + r * per)[t] = acc;
        }
        return;
    }
    for (unsigned c = 0; c < C; ++c) {
        float4 w = reinterpret_cast<const float4*>(buf + c * N)[t];
        acc.x += w.x; acc.y += w.y; acc.z += w.z; acc.w += w.w;
    }
    reinterpret_cast<float4*>(out + (size_t)blockIdx.x * N)[t] = acc;
}

// no cluster: each block reads its group's records (blocks g*cg .. g*cg+cg-1) from global memory
__global__ void k_global(const float* in, float* out, int cg) {
    const int t = threadIdx.x;
    const int g = blockIdx.x / cg;
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int c = 0; c < cg; ++c) {
        float4 v = reinterpret_cast<const float4*>(in + (size_t)(g * cg + c) * N)[t];
        acc.x += v.x; acc.y += v.y; acc.z += v.z; acc.w += v.w;
    }
    reinterpret_cast<float4*>(out + (size_t)blockIdx.x * N)[t] = acc;
}

static cudaStream_t stream;

template <typename F>
static float time_graph(F launch) {
    constexpr int REPS = 20;
    launch();  // warm (and any launch error now)
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(stream));
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    for (int i = 0; i < REPS; ++i) launch();
    CK(cudaStreamEndCapture(stream, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int i = 0; i < 5; ++i) CK(cudaGraphLaunch(ge, stream));
    std::vector<float> ts;
    for (int rep = 0; rep < 7; ++rep) {
        CK(cudaEventRecord(a, stream));
        for (int i = 0; i < 25; ++i) CK(cudaGraphLaunch(ge, stream));
        CK(cudaEventRecord(b, stream));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        ts.push_back(ms * 1000.f / (25 * REPS));
    }
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(g));
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    std::sort(ts.begin(), ts.end());
    return ts[ts.size() / 2];
}

template <typename K, typename... Args>
static void launch(K kernel, int blocks, int c, size_t smem, Args... args) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(blocks, 1, 1);
    cfg.blockDim = dim3(T, 1, 1);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = c;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = c > 1 ? 1 : 0;
    CK(cudaLaunchKernelEx(&cfg, kernel, args...));
}

template <typename K>
static void allow16(K kernel) {
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 16 * N * 4 + 16));
}

int main(int argc, char** argv) {
    const bool unordered = argc > 1 && std::string(argv[1]) == "unordered";
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    printf("device %s, %d SMs\n", p.name, p.multiProcessorCount);
    allow16(k_empty);
    allow16(k_bar<0>);
    allow16(k_bar<1>);
    allow16(k_push<S32_BAR>);
    allow16(k_push<V4_BAR>);
    allow16(k_push<V4_RLX>);
    allow16(k_push<ASYNC>);
    allow16(k_push<A2A>);
    const int maxb = 64 * 16;
    float *in, *out;
    CK(cudaMalloc(&in, (size_t)maxb * N * 4));
    CK(cudaMalloc(&out, (size_t)maxb * N * 4));
    std::vector<float> h((size_t)maxb * N);
    for (size_t i = 0; i < h.size(); ++i) h[i] = static_cast<float>((i * 2654435761u) % 1000) / 1000.f;
    CK(cudaMemcpy(in, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
    std::vector<float> got((size_t)maxb * N);
    int wrong = 0;
    auto check = [&](const char* name, int blocks, int c, bool own_columns = false) {
        CK(cudaStreamSynchronize(stream));
        CK(cudaMemcpy(got.data(), out, (size_t)blocks * N * 4, cudaMemcpyDeviceToHost));
        for (int b = 0; b < blocks; ++b) {
            const int g = b / c;
            for (int i = 0; i < N; i += 37) {
                if (own_columns && i / (N / c) != b % c) continue;
                double want = 0;
                for (int k = 0; k < c; ++k) want += h[(size_t)(g * c + k) * N + i];
                if (std::abs(got[(size_t)b * N + i] - want) > 1e-3) {
                    if (wrong++ < 5) printf("WRONG %s blocks=%d C=%d block %d [%d]: %f vs %f\n", name, blocks, c, b, i,
                                            got[(size_t)b * N + i], want);
                    return;
                }
            }
        }
    };
    const int heads_list[2] = {8, 64};
    const int cs[5] = {1, 2, 4, 8, 16};
    printf("\n| groups | C | CTAs | empty | bar x1 | bar x33 | one bar | rlx x33 | one rlx | maxActiveClusters(push) |\n");
    printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (int heads : heads_list) {
        for (int c : cs) {
            const int blocks = heads * c;
            float te = time_graph([&] { launch(k_empty, blocks, c, 0, (int*)nullptr); });
            float b1 = 0, b33 = 0, r33 = 0;
            if (c > 1) {
                b1 = time_graph([&] { launch(k_bar<0>, blocks, c, 0, (int*)nullptr, 1); });
                b33 = time_graph([&] { launch(k_bar<0>, blocks, c, 0, (int*)nullptr, 33); });
                r33 = time_graph([&] { launch(k_bar<1>, blocks, c, 0, (int*)nullptr, 33); });
            }
            int active = 0;
            if (c > 1) {
                cudaLaunchConfig_t cfg = {};
                cfg.gridDim = dim3(blocks);
                cfg.blockDim = dim3(T);
                cfg.dynamicSmemBytes = c * N * 4 + 16;
                cudaLaunchAttribute attr[1];
                attr[0].id = cudaLaunchAttributeClusterDimension;
                attr[0].val.clusterDim.x = c;
                attr[0].val.clusterDim.y = 1;
                attr[0].val.clusterDim.z = 1;
                cfg.attrs = attr;
                cfg.numAttrs = 1;
                CK(cudaOccupancyMaxActiveClusters(&active, k_push<ASYNC>, &cfg));
            }
            printf("| %d | %d | %d | %.2f | %.2f | %.2f | %.3f | %.2f | %.3f | %d |\n", heads, c, blocks, te, b1, b33,
                   (b33 - b1) / 32, r33, (r33 - b1) / 32, active);
        }
    }
    printf("\n| groups | C | CTAs | s32-bar | v4-bar | v4-rlx | async | a2a | global |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (int heads : heads_list) {
        for (int c : cs) {
            if (c == 1 || c == 16) continue;
            const int blocks = heads * c;
            const size_t sm = c * N * 4 + 16;
            float t0 = time_graph([&] { launch(k_push<S32_BAR>, blocks, c, sm, (const float*)in, out, c); });
            check("s32-bar", blocks, c);
            float t1 = time_graph([&] { launch(k_push<V4_BAR>, blocks, c, sm, (const float*)in, out, c); });
            check("v4-bar", blocks, c);
            float t2 = unordered ? time_graph([&] { launch(k_push<V4_RLX>, blocks, c, sm, (const float*)in, out, c); })
                                 : 0.f;
            float t3 = time_graph([&] { launch(k_push<ASYNC>, blocks, c, sm, (const float*)in, out, c); });
            check("async", blocks, c);
            float t5 = time_graph([&] { launch(k_push<A2A>, blocks, c, sm, (const float*)in, out, c); });
            check("a2a", blocks, c, true);
            float t4 = time_graph([&] { launch(k_global, blocks, 1, 0, (const float*)in, out, c); });
            check("global", blocks, c);
            printf("| %d | %d | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", heads, c, blocks, t0, t1, t2, t3, t5, t4);
        }
    }
    printf("\nwrong: %d\n", wrong);
    return wrong ? 1 : 0;
}
