// Issue 17 probe: does a persistent layer kernel (phases separated by a
// grid-wide barrier) beat one launch a GEMV?  Not a product: CUDA C written
// for this measurement only, driven by layer_barrier.py (which says how to
// build and run it).
//
// One Qwen3-4B decoder layer at batch 1, bf16 weights, f32 sums:
//   Q   qkv[6144]   = Wqkv[6144, 2560] . rmsnorm(xr)
//   A   ob[4096]    = bf16(qkv[0:4096])            (a stand-in for the attention)
//   O   xr[2560]   += Wo[2560, 4096] . ob           (K split in 4, atomic adds)
//   GU  h[9728]     = bf16(silu(g) u), g/u = rows 2j/2j+1 of Wgu[19456, 2560] . rmsnorm(xr)
//   D   xr[2560]   += Wd[2560, 9728] . h             (K split in 2, atomic adds)
//
// Every form runs the same phase code (`gemv` below: one warp walks a
// contiguous range of units, each unit R rows x one K slice, its 16-byte
// weight chunks loaded first, then the products against the block's copy of
// the input vector in shared memory); only the boundaries differ:
//   k_qkv .. k_down    one launch a phase (form a; with PDL when the launch
//                      has the attribute: griddepcontrol.wait first,
//                      launch_dependents after the loop)
//   mega               the layers l0..l1 in one launch, phases separated by
//                      grid_sync (form b)
//   mega_pre           as mega, each warp loading its first weight batch of
//                      the next phase into registers before it waits (form c)
//   k_bar              n grid barriers and nothing else (form d)
//   k_empty            an empty kernel (the launch boundary alone)
//   e_qkv .. e_down    form e: one block an SM (half an SM's registers and
//                      shared memory, so the next kernel's block fits beside
//                      it), PDL trigger at entry, the block's weight rows
//                      streamed through a shared-memory ring by cp.async.bulk
//                      + mbarrier, the ring filled before griddepcontrol.wait
//   e_att, a_att5      a stand-in for the attention with a realistic latency:
//                      128 blocks read their 32 KB of a layer's KV in 4
//                      dependent rounds, then wait out `att_ns` after the
//                      PDL wait, then copy q into O's input (trigger at entry
//                      for form e, at exit for form a5)
#include <cuda_bf16.h>
#include <stdint.h>

namespace {

constexpr int WARPS = 8;
constexpr int THREADS = WARPS * 32;
constexpr int HID = 2560, QKV_N = 6144, QN = 4096, FF = 9728;

// Unit shapes: K (row length), N (rows), S (K slices), R (rows a unit), U
// (units a batch), P (passes a unit: its chunks loaded in P rounds).
// Units are slice-major (u = s * N / R + row group): a batch's U units are
// consecutive rows of one slice, so their atomic adds go to U addresses.
template <int K_, int N_, int S_, int R_, int U_, int P_>
struct Shape {
  static constexpr int K = K_, N = N_, S = S_, R = R_, U = U_, P = P_;
  static constexpr int KS = K / S;     // elements of a row one unit covers
  static constexpr int C = KS / 256;   // 16-byte chunks a lane loads of each row of a unit
  static constexpr int CP = C / P;     // of them in one pass
  static constexpr int L = U * R * CP; // 16-byte loads a lane has in flight a pass
  static constexpr int G = N / R;      // row groups
  static constexpr int T = G * S;      // units of the phase
  static_assert(C * 256 == KS && KS * S == K && N % R == 0 && CP * P == C && U <= 32, "shape");
};
using QS = Shape<HID, QKV_N, 1, 1, 1, 1>;   // 10 loads a pass, 6,144 units
using OS = Shape<QN, HID, 4, 1, 4, 1>;      // 16 loads, 10,240 units
using GS = Shape<HID, 2 * FF, 1, 2, 1, 2>;  // 10 loads (gate and up rows), 9,728 units, 2 passes
using DS = Shape<FF, HID, 19, 1, 8, 1>;     // 16 loads, 48,640 units

__device__ __forceinline__ uint4 ldw(const __nv_bfloat16* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

__device__ __forceinline__ float dot2(uint32_t w, float a, float b, float acc) {
  acc = fmaf(__uint_as_float(w << 16), a, acc);
  return fmaf(__uint_as_float(w & 0xffff0000u), b, acc);
}

__device__ __forceinline__ float dot8(uint4 w, const float* x, float acc) {
  float4 x0 = *reinterpret_cast<const float4*>(x);
  float4 x1 = *reinterpret_cast<const float4*>(x + 4);
  acc = dot2(w.x, x0.x, x0.y, acc);
  acc = dot2(w.y, x0.z, x0.w, acc);
  acc = dot2(w.z, x1.x, x1.y, acc);
  return dot2(w.w, x1.z, x1.w, acc);
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// The warp's contiguous share [u0, u1) of a phase's units.
template <class G>
__device__ __forceinline__ void share(int gw, int nw, int& u0, int& u1) {
  u0 = (int)((long long)G::T * gw / nw);
  u1 = (int)((long long)G::T * (gw + 1) / nw);
}

// Pass p's chunks of units u .. u + U - 1.
template <class G>
__device__ __forceinline__ void load_pass(uint4 (&w)[G::L], const __nv_bfloat16* W, int u, int u1, int p,
                                          int lane) {
#pragma unroll
  for (int j = 0; j < G::U; ++j) {
    // past the share's end: the share's last unit again (no new bytes from
    // memory, and no register that is written on one path only: such an
    // array stays live, and spills, across the whole layer)
    const int uu = max(min(u + j, u1 - 1), 0);
    const int g = uu % G::G, s = uu / G::G;
#pragma unroll
    for (int r = 0; r < G::R; ++r) {
      const __nv_bfloat16* row = W + (size_t)(g * G::R + r) * G::K + s * G::KS + (p * G::CP * 32 + lane) * 8;
#pragma unroll
      for (int c = 0; c < G::CP; ++c) w[(j * G::R + r) * G::CP + c] = ldw(row + c * 256);
    }
  }
}

template <class G>
__device__ __forceinline__ void compute_pass(const uint4 (&w)[G::L], const float* xs, int u, int u1, int p,
                                             int lane, float (&acc)[G::U * G::R]) {
#pragma unroll
  for (int j = 0; j < G::U; ++j) {
    const int s = (u + j) / G::G;
    if (u + j < u1) {
#pragma unroll
      for (int c = 0; c < G::CP; ++c) {
        const float* x = xs + s * G::KS + ((p * G::CP + c) * 32 + lane) * 8;
#pragma unroll
        for (int r = 0; r < G::R; ++r) acc[j * G::R + r] = dot8(w[(j * G::R + r) * G::CP + c], x, acc[j * G::R + r]);
      }
    }
  }
}

// The units' sums across the warp; lane j hands unit j's R sums to out(g, sums).
template <class G, class Out>
__device__ __forceinline__ void finish(float (&acc)[G::U * G::R], int u, int u1, int lane, const Out& out) {
#pragma unroll
  for (int i = 0; i < G::U * G::R; ++i) acc[i] = warp_sum(acc[i]);
#pragma unroll
  for (int j = 0; j < G::U; ++j)
    if (lane == j && u + j < u1) out((u + j) % G::G, acc + j * G::R);
}

// The first pass of the warp's first batch, loaded ahead (form c).
template <class G>
__device__ __forceinline__ void load_first(uint4 (&w)[G::L], const __nv_bfloat16* W, int gw, int nw, int lane) {
  int u0, u1;
  share<G>(gw, nw, u0, u1);
  load_pass<G>(w, W, u0, u1, 0, lane);
}

template <class G>
__device__ __forceinline__ void units(const __nv_bfloat16* W, const float* xs, int u, int u1, int p0, int lane,
                                      float (&acc)[G::U * G::R]) {
#pragma unroll 1
  for (int p = p0; p < G::P; ++p) {
    uint4 w[G::L];
    load_pass<G>(w, W, u, u1, p, lane);
    compute_pass<G>(w, xs, u, u1, p, lane, acc);
  }
}

template <class G, bool PRE, class Out>
__device__ __forceinline__ void gemv(const __nv_bfloat16* W, const float* xs, int gw, int nw, int lane, Out out,
                                     const uint4 (&pre)[G::L]) {
  int u0, u1;
  share<G>(gw, nw, u0, u1);
  int u = u0;
  if (PRE && u < u1) {  // the first batch: pass 0 from the registers loaded ahead
    float acc[G::U * G::R] = {};
    compute_pass<G>(pre, xs, u, u1, 0, lane, acc);
    units<G>(W, xs, u, u1, 1, lane, acc);
    finish<G>(acc, u, u1, lane, out);
    u += G::U;
  }
#pragma unroll 1
  for (; u < u1; u += G::U) {
    float acc[G::U * G::R] = {};
    units<G>(W, xs, u, u1, 0, lane, acc);
    finish<G>(acc, u, u1, lane, out);
  }
}

struct OutStore {  // Q: the row's sum
  float* y;
  __device__ void operator()(int g, const float* a) const { y[g] = a[0]; }
};
struct OutAdd {  // O, D: the slice's sum added into the residual
  float* y;
  __device__ void operator()(int g, const float* a) const { atomicAdd(y + g, a[0]); }
};
struct OutSilu {  // GU: h[j] = silu(g) u
  __nv_bfloat16* h;
  __device__ void operator()(int j, const float* a) const {
    const float g = a[0];
    h[j] = __float2bfloat16(__fdividef(g, 1.f + __expf(-g)) * a[1]);
  }
};

// xs = xr / rms(xr), every thread of the block; ends with a block barrier.
__device__ __forceinline__ void stage_rms(float* xs, const float* xr, float* red) {
  constexpr int PER = HID / THREADS;  // 10
  float v[PER], ss = 0.f;
#pragma unroll
  for (int i = 0; i < PER; ++i) {
    v[i] = __ldcg(xr + threadIdx.x + i * THREADS);
    ss = fmaf(v[i], v[i], ss);
  }
  ss = warp_sum(ss);
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = ss;
  __syncthreads();
  float t = 0.f;
#pragma unroll
  for (int i = 0; i < WARPS; ++i) t += red[i];
  const float rinv = rsqrtf(t / HID + 1e-6f);
#pragma unroll
  for (int i = 0; i < PER; ++i) xs[threadIdx.x + i * THREADS] = v[i] * rinv;
  __syncthreads();
}

// xs = float(src[0:n]); ends with a block barrier.
__device__ __forceinline__ void stage_bf16(float* xs, const __nv_bfloat16* src, int n) {
  const uint4* s = reinterpret_cast<const uint4*>(src);
  for (int i = threadIdx.x; i < n / 8; i += THREADS) {
    const uint4 w = __ldcg(s + i);
    float* x = xs + i * 8;
    const uint32_t p[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      x[2 * k] = __uint_as_float(p[k] << 16);
      x[2 * k + 1] = __uint_as_float(p[k] & 0xffff0000u);
    }
  }
  __syncthreads();
}

__device__ __forceinline__ void attention_standin(const float* qkv, __nv_bfloat16* ob) {
  for (int j = blockIdx.x * THREADS + threadIdx.x; j < QN; j += gridDim.x * THREADS)
    ob[j] = __float2bfloat16(__ldcg(qkv + j));
}

// Every block of the grid arrives, then waits until all have arrived. The
// counter's low 31 bits return to their value after each barrier (block 0
// adds 2^31 - (nblocks - 1), the others 1 each), so it never needs zeroing;
// a barrier has passed when bit 31 differs from the value this block saw.
// Split in two so that a block can issue loads between its arrival and its
// wait (form c): loads issued before the release atomic would make thread 0
// wait for them (a release orders every earlier memory access of the thread).
__device__ __forceinline__ unsigned grid_arrive(unsigned* bar) {
  __syncthreads();
  unsigned old = 0;
  if (threadIdx.x == 0) {
    const unsigned add = blockIdx.x == 0 ? 0x80000000u - (gridDim.x - 1) : 1u;
    asm volatile("atom.add.release.gpu.u32 %0, [%1], %2;" : "=r"(old) : "l"(bar), "r"(add) : "memory");
  }
  return old;
}

__device__ __forceinline__ void grid_wait(const unsigned* bar, unsigned old) {
  if (threadIdx.x == 0) {
    unsigned cur;
    do {
      asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(cur) : "l"(bar) : "memory");
    } while (((old ^ cur) & 0x80000000u) == 0);
  }
  __syncthreads();
}

__device__ __forceinline__ void grid_sync(unsigned* bar) { grid_wait(bar, grid_arrive(bar)); }

__device__ __forceinline__ void pdl_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }
__device__ __forceinline__ void pdl_trigger() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }

struct Ctx {
  int lane, gw, nw;
  __device__ Ctx() : lane(threadIdx.x & 31), gw(blockIdx.x * WARPS + (threadIdx.x >> 5)), nw(gridDim.x * WARPS) {}
};

using W = const __nv_bfloat16*;

// PRE: each warp loads its first weight pass of the next phase across the
// barrier; AF (arrive first): those loads are issued after the block's arrival
// (else before it, which delays the arrival by their latency: measured).
template <bool PRE, bool AF>
__device__ __forceinline__ void layers(W const* wl, int l0, int l1, float* xr, float* qkv, __nv_bfloat16* ob,
                                       __nv_bfloat16* h, unsigned* bar, float* xs, float* red) {
  const Ctx c;
  {
    uint4 none[QS::L];
    stage_rms(xs, xr, red);
    gemv<QS, false>(wl[4 * l0], xs, c.gw, c.nw, c.lane, OutStore{qkv}, none);
  }
  // The loop starts after layer l's Q, so that no register array loaded
  // ahead is carried around the loop (it would be spilled there).
#pragma unroll 1
  for (int l = l0; l < l1; ++l) {
    W wo = wl[4 * l + 1], wg = wl[4 * l + 2], wd = wl[4 * l + 3];
    grid_sync(bar);

    attention_standin(qkv, ob);
    uint4 po[OS::L];
    {
      if (PRE && !AF) load_first<OS>(po, wo, c.gw, c.nw, c.lane);
      const unsigned t = grid_arrive(bar);
      if (PRE && AF) load_first<OS>(po, wo, c.gw, c.nw, c.lane);
      grid_wait(bar, t);
    }

    stage_bf16(xs, ob, QN);
    gemv<OS, PRE>(wo, xs, c.gw, c.nw, c.lane, OutAdd{xr}, po);
    uint4 pg[GS::L];
    {
      if (PRE && !AF) load_first<GS>(pg, wg, c.gw, c.nw, c.lane);
      const unsigned t = grid_arrive(bar);
      if (PRE && AF) load_first<GS>(pg, wg, c.gw, c.nw, c.lane);
      grid_wait(bar, t);
    }

    stage_rms(xs, xr, red);
    gemv<GS, PRE>(wg, xs, c.gw, c.nw, c.lane, OutSilu{h}, pg);
    uint4 pd[DS::L];
    {
      if (PRE && !AF) load_first<DS>(pd, wd, c.gw, c.nw, c.lane);
      const unsigned t = grid_arrive(bar);
      if (PRE && AF) load_first<DS>(pd, wd, c.gw, c.nw, c.lane);
      grid_wait(bar, t);
    }

    stage_bf16(xs, h, FF);
    gemv<DS, PRE>(wd, xs, c.gw, c.nw, c.lane, OutAdd{xr}, pd);
    if (l + 1 < l1) {
      W wq = wl[4 * (l + 1)];
      uint4 pq[QS::L];
      {
        if (PRE && !AF) load_first<QS>(pq, wq, c.gw, c.nw, c.lane);
        const unsigned t = grid_arrive(bar);
        if (PRE && AF) load_first<QS>(pq, wq, c.gw, c.nw, c.lane);
        grid_wait(bar, t);
      }
      stage_rms(xs, xr, red);
      gemv<QS, PRE>(wq, xs, c.gw, c.nw, c.lane, OutStore{qkv}, pq);
    }
  }
}

}  // namespace

#define PARAMS                                                                                             \
  W const *wl, int l0, int l1, float *xr, float *qkv, __nv_bfloat16 *ob, __nv_bfloat16 *h, unsigned *bar

extern "C" {

__global__ void __launch_bounds__(THREADS, 2) mega(PARAMS) {
  __shared__ __align__(16) float xs[FF];
  __shared__ float red[WARPS];
  layers<false, false>(wl, l0, l1, xr, qkv, ob, h, bar, xs, red);
}

__global__ void __launch_bounds__(THREADS, 2) mega_pre(PARAMS) {
  __shared__ __align__(16) float xs[FF];
  __shared__ float red[WARPS];
  layers<true, false>(wl, l0, l1, xr, qkv, ob, h, bar, xs, red);
}

__global__ void __launch_bounds__(THREADS, 2) mega_pre_af(PARAMS) {
  __shared__ __align__(16) float xs[FF];
  __shared__ float red[WARPS];
  layers<true, true>(wl, l0, l1, xr, qkv, ob, h, bar, xs, red);
}

__global__ void __launch_bounds__(THREADS, 2) k_qkv(PARAMS) {
  __shared__ __align__(16) float xs[HID];
  __shared__ float red[WARPS];
  const Ctx c;
  uint4 none[QS::L];
  pdl_wait();
  stage_rms(xs, xr, red);
  gemv<QS, false>(wl[4 * l0], xs, c.gw, c.nw, c.lane, OutStore{qkv}, none);
  pdl_trigger();
}

__global__ void __launch_bounds__(THREADS, 2) k_att(PARAMS) {
  pdl_wait();
  attention_standin(qkv, ob);
  pdl_trigger();
}

__global__ void __launch_bounds__(THREADS, 2) k_o(PARAMS) {
  __shared__ __align__(16) float xs[QN];
  const Ctx c;
  uint4 none[OS::L];
  pdl_wait();
  stage_bf16(xs, ob, QN);
  gemv<OS, false>(wl[4 * l0 + 1], xs, c.gw, c.nw, c.lane, OutAdd{xr}, none);
  pdl_trigger();
}

__global__ void __launch_bounds__(THREADS, 2) k_gu(PARAMS) {
  __shared__ __align__(16) float xs[HID];
  __shared__ float red[WARPS];
  const Ctx c;
  uint4 none[GS::L];
  pdl_wait();
  stage_rms(xs, xr, red);
  gemv<GS, false>(wl[4 * l0 + 2], xs, c.gw, c.nw, c.lane, OutSilu{h}, none);
  pdl_trigger();
}

__global__ void __launch_bounds__(THREADS, 2) k_down(PARAMS) {
  __shared__ __align__(16) float xs[FF];
  const Ctx c;
  uint4 none[DS::L];
  pdl_wait();
  stage_bf16(xs, h, FF);
  gemv<DS, false>(wl[4 * l0 + 3], xs, c.gw, c.nw, c.lane, OutAdd{xr}, none);
  pdl_trigger();
}

// l0 grid barriers, nothing else.
__global__ void __launch_bounds__(THREADS) k_bar(PARAMS) {
  for (int i = 0; i < l0; ++i) grid_sync(bar);
}

__global__ void __launch_bounds__(THREADS) k_empty(PARAMS) {
  pdl_wait();
  pdl_trigger();
}

}  // extern "C"

// --- form e: a weight stream through shared memory that does not drain at
// kernel boundaries.
//
// Each GEMV block owns a contiguous range of whole rows (units of U rows:
// gate/up pairs for GU), so it stores its outputs with no atomics. Its rows
// pass through a ring of NST stages of RS rows in shared memory: thread 0
// fills a stage with one cp.async.bulk (the rows are contiguous in memory)
// completing on the stage's mbarrier. The first NST stages are issued before
// griddepcontrol.wait: weights are never written by the chain, so loading
// them while the previous kernel still runs is race-free; everything the
// chain writes (xr, qkv, ob, h) is read only after the wait. The trigger is at
// entry, so the next kernel's blocks become resident (beside this one: each
// block takes at most half an SM) and fill their rings while this one drains.
namespace {

constexpr int ATT_BLOCKS5 = 128, ATT_THREADS = 128;
constexpr int KV_BLOCK = 32768;                     // bytes of KV an attention block reads a layer
constexpr int KV_LAYER = ATT_BLOCKS5 * KV_BLOCK;    // 4 MB a layer
constexpr int MAXR = 152;                           // rows a block may own (GU: 148 at 132 blocks)
constexpr int STAMP_STRIDE = 256;
static_assert(MAXR <= 256, "a thread a row when the warps' sums are added");                   // stamp records a launch (blocks <= 256)

__device__ __forceinline__ unsigned long long gtime() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ unsigned smem_u32(const void* p) {
  return (unsigned)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void mbar_init(uint64_t* b, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(b)), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_expect(uint64_t* b, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(b)), "r"(bytes) : "memory");
}

__device__ __forceinline__ void mbar_wait(uint64_t* b, unsigned parity) {
  asm volatile(
      "{\n .reg .pred p;\n W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra W;\n}" ::"r"(
          smem_u32(b)),
      "r"(parity)
      : "memory");
}

__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned bytes, uint64_t* b) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(smem_u32(dst)),
      "l"(src), "r"(bytes), "r"(smem_u32(b))
      : "memory");
}

// A launch's block stamps: entry, after the PDL wait, exit, SM (for the
// timeline; null in the timed graphs).
struct Stamp {
  unsigned long long* p;
  __device__ void at(int launch, int i, unsigned long long v) const {
    if (p && threadIdx.x == 0) p[((size_t)launch * STAMP_STRIDE + blockIdx.x) * 4 + i] = v;
  }
};

__device__ __forceinline__ unsigned smid() {
  unsigned r;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
  return r;
}

// IN: 0 = rmsnorm(xr) in f32, 1 = a bf16 vector; OUT: 0 store, 1 add, 2 silu(g) u
// XG: the bf16 input vector straight from global memory into the lanes'
// registers (CONS 3, 4), no copy of it in shared memory
template <int K_, int N_, int U_, int RS_, int NST_, int IN_, int OUT_, int XG_ = 0>
struct EShape {
  static constexpr int K = K_, N = N_, U = U_, RS = RS_, NST = NST_, IN = IN_, OUT = OUT_, XG = XG_;
  static constexpr int STAGE = RS * K * 2;                   // bytes
  static constexpr int RING = NST * STAGE;
  static constexpr int XS = XG ? 0 : IN == 0 ? K * 4 : K * 2;
  static constexpr int SMEM = RING + XS + MAXR * 4 * WARPS + NST * 8 + 64;  // sums: a row x a warp
  static constexpr int C32 = K / 256;                        // warp steps (32 chunks of 8) a row
  static_assert(K % 256 == 0 && RS % U == 0 && STAGE % 16 == 0 && (!XG || IN == 1), "eshape");
};
// ring ~80 KB, shared memory <= 106 KB a block: two blocks an SM
using EQ = EShape<HID, QKV_N, 1, 4, 4, 0, 0>;     // 20 KB stages, 90.7 KB
using EO = EShape<QN, HID, 1, 2, 5, 1, 1>;        // 16 KB stages, 88.7 KB
using EG = EShape<HID, 2 * FF, 2, 4, 4, 0, 2>;    // 20 KB stages, 90.7 KB
using ED = EShape<FF, HID, 1, 1, 4, 1, 1>;        // 19 KB stages, 95.7 KB
// family s: half the stage, twice the stages (down: a row is the least)
using SQ = EShape<HID, QKV_N, 1, 2, 8, 0, 0>;     // 10 KB x 8
using SO = EShape<QN, HID, 1, 1, 10, 1, 1>;       // 8 KB x 10
using SG = EShape<HID, 2 * FF, 2, 2, 8, 0, 2>;    // 10 KB x 8
// family w: a row a warp, 8 rows a stage where they fit
using WQ = EShape<HID, QKV_N, 1, 8, 2, 0, 0>;     // 40 KB x 2
using WO = EShape<QN, HID, 1, 4, 3, 1, 1>;        // 32 KB x 3, 104.7 KB
using WG = EShape<HID, 2 * FF, 2, 8, 2, 0, 2>;    // 40 KB x 2
using YQ = EShape<HID, QKV_N, 1, 6, 3, 0, 0>;     // 30 KB x 3
using YG = EShape<HID, 2 * FF, 2, 6, 3, 0, 2>;    // 30 KB x 3
// family z: rings of small stages as deep as half an SM holds (more bytes in
// flight: a ring's rate is about its bytes in flight over the loaded latency),
// each row split across the warps (CONS 3), O's and down's input straight
// from global memory into registers
using ZQ = EShape<HID, QKV_N, 1, 2, 9, 0, 0>;     // 10 KB x 9, 105 KB
using ZO = EShape<QN, HID, 1, 1, 12, 1, 1, 1>;    // 8 KB x 12, 97 KB
using ZG = EShape<HID, 2 * FF, 2, 2, 9, 0, 2>;    // 10 KB x 9, 105 KB
using ZD = EShape<FF, HID, 1, 1, 5, 1, 1, 1>;     // 19 KB x 5, 96 KB

struct EArgs {
  W const* wl;
  int layer;
  float* xr;
  float* qkv;
  __nv_bfloat16* ob;
  __nv_bfloat16* h;
  const uint4* kv;
  unsigned long long* stamps;
  int slot;
  int att_ns;
};

// MECH: how a stage is filled: 0 one cp.async.bulk by thread 0 (complete_tx on
// the stage's mbarrier), 1 cp.async of 16 bytes by every thread
// (cp.async.mbarrier.arrive.noinc: the barrier counts the block's threads).
// CONS: how a stage is consumed: 0 each warp a strided share of the stage's
// 32-chunk steps (a warp sum and a shared atomic when its row changes), 1 a
// row a warp (rows w, w + 8, ...: one warp sum a row, no atomic), 2 not at all
// (the ring's rate alone: the outputs are wrong).
template <class S, int MECH, int CONS>
__device__ __forceinline__ void e_gemv(const __nv_bfloat16* Wm, const EArgs& a, const void* xin) {
  extern __shared__ __align__(128) unsigned char sm[];
  unsigned char* ring = sm;
  float* racc = reinterpret_cast<float*>(sm + S::RING + S::XS);
  uint64_t* bar = reinterpret_cast<uint64_t*>(sm + S::RING + S::XS + MAXR * 4 * WARPS);
  float* red = reinterpret_cast<float*>(bar + S::NST);
  const Stamp st{a.stamps};
  const unsigned long long t_in = gtime();
  pdl_trigger();
  constexpr int G = S::N / S::U;
  const int u0 = (int)((long long)G * blockIdx.x / gridDim.x), u1 = (int)((long long)G * (blockIdx.x + 1) / gridDim.x);
  const int r0 = u0 * S::U, nrows = (u1 - u0) * S::U;
  const int ns = (nrows + S::RS - 1) / S::RS;
  if (nrows > MAXR) __trap();
  // stage s into its slot; MECH 0: thread 0 alone, MECH 1: every thread
  auto issue = [&](int s) {
    const int slot = s % S::NST, row = s * S::RS;
    const int bytes = min(S::RS, nrows - row) * S::K * 2;
    unsigned char* dst = ring + slot * S::STAGE;
    const unsigned char* src = reinterpret_cast<const unsigned char*>(Wm + (size_t)(r0 + row) * S::K);
    if constexpr (MECH == 0) {
      mbar_expect(bar + slot, bytes);
      bulk_load(dst, src, bytes, bar + slot);
    } else {
      for (int i = threadIdx.x * 16; i < bytes; i += THREADS * 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_u32(dst + i)), "l"(src + i) : "memory");
      asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(smem_u32(bar + slot)) : "memory");
    }
  };
  if (threadIdx.x == 0) {
    for (int i = 0; i < S::NST; ++i) mbar_init(bar + i, MECH == 0 ? 1 : THREADS);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  if constexpr (MECH == 0) {
    if (threadIdx.x == 0)
      for (int s = 0; s < min(S::NST, ns); ++s) issue(s);
  } else {
    __syncthreads();  // the barriers' init before any thread's arrive
    for (int s = 0; s < min(S::NST, ns); ++s) issue(s);
  }
  pdl_wait();
  const unsigned long long t_wait = gtime();
  // the input vector
  if constexpr (S::IN == 0) {
    stage_rms(reinterpret_cast<float*>(sm + S::RING), a.xr, red);
  } else if constexpr (!S::XG) {
    const uint4* src = reinterpret_cast<const uint4*>(xin);
    uint4* dst = reinterpret_cast<uint4*>(sm + S::RING);
    for (int i = threadIdx.x; i < S::K / 8; i += THREADS) dst[i] = __ldcg(src + i);
  }
  for (int i = threadIdx.x; i < MAXR * WARPS; i += THREADS) racc[i] = 0.f;
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  auto dotx = [&](uint4 w, int c, float acc) {
    if constexpr (S::IN == 0) {
      return dot8(w, reinterpret_cast<const float*>(sm + S::RING) + c * 8, acc);
    } else {
      const uint4 xv = reinterpret_cast<const uint4*>(sm + S::RING)[c];
      acc = dot2(w.x, __uint_as_float(xv.x << 16), __uint_as_float(xv.x & 0xffff0000u), acc);
      acc = dot2(w.y, __uint_as_float(xv.y << 16), __uint_as_float(xv.y & 0xffff0000u), acc);
      acc = dot2(w.z, __uint_as_float(xv.z << 16), __uint_as_float(xv.z & 0xffff0000u), acc);
      return dot2(w.w, __uint_as_float(xv.w << 16), __uint_as_float(xv.w & 0xffff0000u), acc);
    }
  };
  // CONS 3, 4: the lane's x chunks in registers (CONS 4: chunk t * 32 + lane,
  // t < C32; CONS 3: chunk (warp + 8 j) * 32 + lane, j < XJ), f32 or packed bf16
  constexpr int XJ = CONS == 4 ? S::C32 : CONS == 3 ? (S::C32 + WARPS - 1) / WARPS : 1;
  constexpr bool XR = CONS == 3 || CONS == 4;
  float4 xf[XR && S::IN == 0 ? XJ : 1][2];
  uint4 xb[XR && S::IN == 1 ? XJ : 1];
  if constexpr (XR) {
#pragma unroll
    for (int j = 0; j < XJ; ++j) {
      const int q = CONS == 4 ? j : min(warp + WARPS * j, S::C32 - 1);
      const int c = q * 32 + lane;
      if constexpr (S::IN == 0) {
        const float* xs = reinterpret_cast<const float*>(sm + S::RING) + c * 8;
        xf[j][0] = *reinterpret_cast<const float4*>(xs);
        xf[j][1] = *reinterpret_cast<const float4*>(xs + 4);
      } else if constexpr (S::XG) {
        xb[j] = __ldcg(reinterpret_cast<const uint4*>(xin) + c);
      } else {
        xb[j] = reinterpret_cast<const uint4*>(sm + S::RING)[c];
      }
    }
  }
  auto dotr = [&](uint4 w, int j, float acc) {
    if constexpr (S::IN == 0) {
      acc = dot2(w.x, xf[j][0].x, xf[j][0].y, acc);
      acc = dot2(w.y, xf[j][0].z, xf[j][0].w, acc);
      acc = dot2(w.z, xf[j][1].x, xf[j][1].y, acc);
      return dot2(w.w, xf[j][1].z, xf[j][1].w, acc);
    } else {
      const uint4 xv = xb[j];
      acc = dot2(w.x, __uint_as_float(xv.x << 16), __uint_as_float(xv.x & 0xffff0000u), acc);
      acc = dot2(w.y, __uint_as_float(xv.y << 16), __uint_as_float(xv.y & 0xffff0000u), acc);
      acc = dot2(w.z, __uint_as_float(xv.z << 16), __uint_as_float(xv.z & 0xffff0000u), acc);
      return dot2(w.w, __uint_as_float(xv.w << 16), __uint_as_float(xv.w & 0xffff0000u), acc);
    }
  };
#pragma unroll 1
  for (int s = 0; s < ns; ++s) {
    const int slot = s % S::NST;
    mbar_wait(bar + slot, (s / S::NST) & 1);
    const int n = min(S::RS, nrows - s * S::RS);
    const uint4* wst = reinterpret_cast<const uint4*>(ring + slot * S::STAGE);
    if constexpr (CONS == 0) {
      const int steps = n * S::C32;
      int row = -1;
      float acc = 0.f;
#pragma unroll 2
      for (int q = warp; q < steps; q += WARPS) {
        const int r = q / S::C32, c = (q - r * S::C32) * 32 + lane;  // chunk of the row
        if (r != row) {
          if (row >= 0) {
            acc = warp_sum(acc);
            if (lane == 0) atomicAdd(racc + s * S::RS + row, acc);
          }
          row = r;
          acc = 0.f;
        }
        acc = dotx(wst[r * (S::K / 8) + c], c, acc);
      }
      if (row >= 0) {
        acc = warp_sum(acc);
        if (lane == 0) atomicAdd(racc + s * S::RS + row, acc);
      }
    } else if constexpr (CONS == 3) {  // a row split across the warps, x in registers
#pragma unroll 1
      for (int r = 0; r < n; ++r) {
        const uint4* wr = wst + r * (S::K / 8) + lane;
        float acc0 = 0.f, acc1 = 0.f;
#pragma unroll
        for (int j = 0; j < XJ; ++j) {
          const int q = warp + WARPS * j;
          if (q < S::C32) {
            const uint4 w = wr[q * 32];
            if (j & 1) acc1 = dotr(w, j, acc1);
            else acc0 = dotr(w, j, acc0);
          }
        }
        // each warp's sum of the row in its own word (shared float atomics of 8
        // warps on one word cost ~0.9 us a stage: measured), summed at the end
        const float acc = warp_sum(acc0 + acc1);
        if (lane == 0) racc[(s * S::RS + r) * WARPS + warp] = acc;
      }
    } else if constexpr (CONS == 4) {  // a row a warp, x in registers
      for (int r = warp; r < n; r += WARPS) {
        const uint4* wr = wst + r * (S::K / 8) + lane;
        float acc0 = 0.f, acc1 = 0.f;
#pragma unroll
        for (int t = 0; t < S::C32; ++t) {
          const uint4 w = wr[t * 32];
          if (t & 1) acc1 = dotr(w, t, acc1);
          else acc0 = dotr(w, t, acc0);
        }
        const float acc = warp_sum(acc0 + acc1);
        if (lane == 0) racc[s * S::RS + r] = acc;
      }
    } else if constexpr (CONS == 1) {
      for (int r = warp; r < n; r += WARPS) {
        float acc0 = 0.f, acc1 = 0.f;
        const uint4* wr = wst + r * (S::K / 8) + lane;
#pragma unroll
        for (int t = 0; t + 1 < S::C32; t += 2) {
          const uint4 w0 = wr[t * 32], w1 = wr[t * 32 + 32];
          acc0 = dotx(w0, t * 32 + lane, acc0);
          acc1 = dotx(w1, t * 32 + 32 + lane, acc1);
        }
        if (S::C32 % 2) acc0 = dotx(wr[(S::C32 - 1) * 32], (S::C32 - 1) * 32 + lane, acc0);
        const float acc = warp_sum(acc0 + acc1);
        if (lane == 0) racc[s * S::RS + r] = acc;
      }
    }
    __syncthreads();  // every thread is done with the slot: refill it
    if (s + S::NST < ns) {
      if (MECH == 1 || threadIdx.x == 0) issue(s + S::NST);
    }
  }
  if constexpr (CONS == 3) {  // the warps' sums of each row
    float v = 0.f;
    if (threadIdx.x < nrows)
#pragma unroll
      for (int w = 0; w < WARPS; ++w) v += racc[threadIdx.x * WARPS + w];
    __syncthreads();
    if (threadIdx.x < nrows) racc[threadIdx.x] = v;
    __syncthreads();
  }
  // outputs: the block's own rows
  if constexpr (S::OUT == 0) {
    for (int i = threadIdx.x; i < nrows; i += THREADS) a.qkv[r0 + i] = racc[i];
  } else if constexpr (S::OUT == 1) {
    for (int i = threadIdx.x; i < nrows; i += THREADS) a.xr[r0 + i] += racc[i];
  } else {
    for (int i = threadIdx.x; i < nrows / 2; i += THREADS) {
      const float g = racc[2 * i];
      a.h[u0 + i] = __float2bfloat16(__fdividef(g, 1.f + __expf(-g)) * racc[2 * i + 1]);
    }
  }
  if (a.stamps) {
    __syncthreads();
    st.at(a.slot, 0, t_in);
    st.at(a.slot, 1, t_wait);
    st.at(a.slot, 2, gtime());
    st.at(a.slot, 3, smid());
  }
}

// The attention stand-in: KV rounds, then the rest of att_ns after the wait.
template <bool EARLY>
__device__ __forceinline__ void e_attention(const EArgs& a) {
  __shared__ unsigned part[ATT_THREADS];
  const Stamp st{a.stamps};
  const unsigned long long t_in = gtime();
  if (EARLY) pdl_trigger();
  pdl_wait();
  const unsigned long long t_wait = gtime();
  const uint4* kv = a.kv + ((size_t)a.layer * KV_LAYER + (size_t)blockIdx.x * KV_BLOCK) / 16;
  unsigned acc = 0;
#pragma unroll 1
  for (int r = 0; r < 4; ++r) {  // 4 dependent rounds of 8 KB
    uint4 v[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) v[i] = __ldcs(kv + (r * 4 + i) * ATT_THREADS + threadIdx.x + (acc & 0x80000000u ? 1 : 0));
#pragma unroll
    for (int i = 0; i < 4; ++i) acc += v[i].x ^ v[i].y ^ v[i].z ^ v[i].w;
    part[threadIdx.x] = acc;
    __syncthreads();
    acc = part[(threadIdx.x + 1) % ATT_THREADS] & 0x7fffffffu;
    __syncthreads();
  }
  if (threadIdx.x == 0)
    while (gtime() - t_wait < (unsigned long long)a.att_ns) __nanosleep(200);
  __syncthreads();
  const int per = QN / gridDim.x;
  for (int j = threadIdx.x; j < per; j += ATT_THREADS) {
    const int i = blockIdx.x * per + j;
    a.ob[i] = __float2bfloat16(__ldcg(a.qkv + i) + (acc == 0x7fffffffu ? 1.f : 0.f));
  }
  if (a.stamps) {
    __syncthreads();
    st.at(a.slot, 0, t_in);
    st.at(a.slot, 1, t_wait);
    st.at(a.slot, 2, gtime());
    st.at(a.slot, 3, smid());
  }
  if (!EARLY) pdl_trigger();
}

}  // namespace

extern "C" {

#define EK(name, S, M, C, w, x) \
  __global__ void __launch_bounds__(THREADS, 2) name(EArgs a) { e_gemv<S, M, C>(a.wl[4 * a.layer + w], a, x); }
// the families (form e's layer) and the ring-rate diagnostics (nc_: not consumed)
EK(e_qkv, EQ, 0, 0, 0, nullptr) EK(e_o, EO, 0, 0, 1, a.ob) EK(e_gu, EG, 0, 0, 2, nullptr) EK(e_down, ED, 0, 0, 3, a.h)
EK(s_qkv, SQ, 0, 0, 0, nullptr) EK(s_o, SO, 0, 0, 1, a.ob) EK(s_gu, SG, 0, 0, 2, nullptr) EK(s_down, ED, 0, 0, 3, a.h)
EK(p_qkv, EQ, 1, 0, 0, nullptr) EK(p_o, EO, 1, 0, 1, a.ob) EK(p_gu, EG, 1, 0, 2, nullptr) EK(p_down, ED, 1, 0, 3, a.h)
EK(w_qkv, WQ, 0, 1, 0, nullptr) EK(w_o, WO, 0, 1, 1, a.ob) EK(w_gu, WG, 0, 1, 2, nullptr) EK(w_down, ED, 0, 0, 3, a.h)
EK(nc_e_gu, EG, 0, 2, 2, nullptr) EK(nc_s_gu, SG, 0, 2, 2, nullptr) EK(nc_p_gu, EG, 1, 2, 2, nullptr)
EK(nc_w_gu, WG, 0, 2, 2, nullptr)
// family x: as w with x in registers; down a row split across the warps
EK(x_qkv, WQ, 0, 4, 0, nullptr) EK(x_o, WO, 0, 4, 1, a.ob) EK(x_gu, WG, 0, 4, 2, nullptr) EK(x_down, ED, 0, 3, 3, a.h)
// family y: as x, the gate/up and QKV rings one 40 KB stage deeper (120 KB x 2 does not fit: 3 x 32 KB)
EK(y_qkv, YQ, 0, 4, 0, nullptr) EK(y_o, WO, 0, 4, 1, a.ob) EK(y_gu, YG, 0, 4, 2, nullptr) EK(y_down, ED, 0, 3, 3, a.h)
EK(z_qkv, ZQ, 0, 3, 0, nullptr) EK(z_o, ZO, 0, 3, 1, a.ob) EK(z_gu, ZG, 0, 3, 2, nullptr) EK(z_down, ZD, 0, 3, 3, a.h)
EK(nc_x_down, ED, 0, 2, 3, a.h) EK(nc_z_down, ZD, 0, 2, 3, a.h)
__global__ void __launch_bounds__(ATT_THREADS) e_att(EArgs a) { e_attention<true>(a); }
__global__ void __launch_bounds__(ATT_THREADS) a_att5(EArgs a) { e_attention<false>(a); }

}  // extern "C"

// shared memory a block of each form-e GEMV (the host sets the dynamic limit)
// in the order of layer_stream.py's E_KERNELS
extern "C" __constant__ int e_smem[34] = {EQ::SMEM, EO::SMEM, EG::SMEM, ED::SMEM, SQ::SMEM, SO::SMEM, SG::SMEM,
                                          ED::SMEM, EQ::SMEM, EO::SMEM, EG::SMEM, ED::SMEM, WQ::SMEM, WO::SMEM,
                                          WG::SMEM, ED::SMEM, EG::SMEM, SG::SMEM, EG::SMEM, WG::SMEM,
                                          WQ::SMEM, WO::SMEM, WG::SMEM, ED::SMEM, YQ::SMEM, WO::SMEM,
                                          YG::SMEM, ED::SMEM, ZQ::SMEM, ZO::SMEM, ZG::SMEM, ZD::SMEM,
                                          ED::SMEM, ZD::SMEM};
