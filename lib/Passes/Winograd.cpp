//===- Winograd.cpp - 3x3 convolutions as Winograd F(2x2, 3x3) ---*- C++ -*-===//
// On CPU targets, a 3x3 stride-1 convolution of weights becomes 16 batched matmuls between transformed input tiles
// and transformed weights: 2.25x fewer multiply-adds than the direct convolution (Lavin and Gray, 2016).
//===----------------------------------------------------------------------===//
//
// The output is cut into 2x2 tiles, each computed from a 4x4 input tile d (tiles overlap by 2). With the 4x4
// matrices B^T and the 4x3 G and 2x4 A^T of F(2x2, 3x3), for every output channel k and input channel c:
//   U[xi, nu, k, c] = (G w[k, c] G^T)[xi, nu]            weights alone: computed once (plan-memory's run-once calls)
//   V[xi, nu, c, t] = (B^T d[c, t] B)[xi, nu]            t: the tile, over the batch and the tile rows and columns
//   M[xi, nu] = U[xi, nu] @ V[xi, nu]                    16 matmuls [K, C] @ [C, T], reducing over c
//   y[k, t] = A^T M[., ., k, t] A                        the 2x2 outputs of tile t
// The transforms are sums of a few slices with coefficients 0, +-1, +-1/2: each of the 16 parts of V, U and the 4
// of y is its own small kernel writing its slice of a concat (rangeify's regions), so no element computes all of
// them. The input is stored once, padded, with its even and odd columns apart, so each part reads runs along the
// tiles. The matmuls take their vector lanes along the tiles, whose count is rounded up to a multiple of two
// vectors with rows and columns of tiles computed on zeros and dropped (a 14x14 map: 8 x 8 tiles, not 7 x 7); the
// layer's output is read from y through a permute, with the bias added after.
//
// Applies to f32 conv2d with groups 1, a 3x3 kernel, stride and dilation 1, static shapes, weights that depend on
// no input, at least kMinChannels input and output channels, kMinTiles tiles and kMinMultiplies multiply-adds
// (smaller convolutions leave the matmuls too small to pay for the transforms: MNIST's 6x6 map of 64 channels). GPU
// targets are left alone. Sums are reassociated: results differ from the direct convolution's in the last bits.

#include "IR/Rewrite.h"
#include "Passes/Pass.h"
#include "Passes/TensorBuilder.h"

#include <array>

namespace tgc {
namespace {

constexpr int64_t kMinChannels = 96;
constexpr int64_t kMinTiles = 16;           // fewer tiles leave each of the 16 matmuls a few rows
constexpr int64_t kMinMultiplies = 1 << 23; // of the direct convolution: below, the ~22 small kernels cost more
constexpr int64_t kTile = 2;                // outputs per tile side
constexpr int64_t kInput = 4;               // inputs per tile side: kTile + 3 - 1

// F(2, 3): y = A^T [(G g) * (B^T d)]
constexpr std::array<std::array<double, 4>, 4> kBT = {{{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}}};
constexpr std::array<std::array<double, 3>, 4> kG = {{{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}}};
constexpr std::array<std::array<double, 4>, 2> kAT = {{{1, 1, 1, 0}, {0, 1, -1, -1}}};

/// sum_i coef[i] * terms[i], skipping zero coefficients (every row of the matrices has a nonzero one).
template <size_t N> Tensor combine(const std::array<double, N> &coef, const std::vector<Tensor> &terms) {
  std::optional<Tensor> acc;
  for (size_t i = 0; i < N; ++i) {
    if (coef[i] == 0)
      continue;
    Tensor t = coef[i] == 1 ? terms[i] : coef[i] == -1 ? terms[i].neg() : terms[i] * coef[i];
    acc = acc ? *acc + t : t;
  }
  return *acc;
}

/// Every `stride`-th element of `axis` from `first`, `count` of them (x must extend to first + stride * count).
Tensor strided(const Tensor &x, size_t axis, int64_t first, int64_t count, int64_t stride) {
  Shape s = x.shape();
  std::vector<std::pair<int64_t, int64_t>> window;
  for (size_t a = 0; a < s.size(); ++a)
    window.push_back(a == axis ? std::pair{first, first + count * stride} : std::pair{int64_t(0), s[a]});
  Shape split = s;
  split[axis] = count;
  split.insert(split.begin() + int64_t(axis) + 1, stride);
  std::vector<std::pair<int64_t, int64_t>> keep;
  for (size_t a = 0; a < split.size(); ++a)
    keep.push_back(a == axis + 1 ? std::pair{int64_t(0), int64_t(1)} : std::pair{int64_t(0), split[a]});
  Shape out = s;
  out[axis] = count;
  return x.shrink(window).reshape(split).shrink(keep).reshape(out);
}

Tensor concat(const std::vector<Tensor> &parts, int64_t axis) {
  std::vector<const UOp *> src;
  for (const Tensor &p : parts)
    src.push_back(p.uop());
  Shape s = parts[0].shape();
  s[size_t(axis)] *= int64_t(parts.size());
  return Tensor(parts[0].ctx().make(Op::Concat, parts[0].dtype(), src, Arg(axis), s));
}

bool dependsOnInput(const UOp *u) {
  for (const UOp *n : toposort(u))
    if (n->op() == Op::Input || n->op() == Op::DefineVar)
      return true;
  return false;
}

/// The convolution's padding [top, bottom, left, right] when the rewrite applies to it.
std::optional<std::array<int64_t, 4>> applicable(const UOp *u) {
  if (u->dtype() != dt::F32 || u->hasDimVars() || u->src(0)->hasDimVars())
    return std::nullopt;
  const auto &arg = u->arg().getTuple();
  const UOp *w = u->src(1);
  if (arg[0].getInt() != 1 || arg[1].intTuple() != std::vector<int64_t>{1, 1} ||
      arg[2].intTuple() != std::vector<int64_t>{1, 1} || w->rank() != 4 || w->shape()[2] != 3 || w->shape()[3] != 3)
    return std::nullopt;
  if (w->shape()[0] < kMinChannels || w->shape()[1] < kMinChannels || dependsOnInput(w))
    return std::nullopt;
  int64_t n = u->shape()[0], oh = u->shape()[2], ow = u->shape()[3];
  int64_t tiles = n * ((oh + kTile - 1) / kTile) * ((ow + kTile - 1) / kTile);
  if (tiles < kMinTiles || n * oh * ow * w->shape()[0] * w->shape()[1] * 9 < kMinMultiplies)
    return std::nullopt;
  std::vector<int64_t> p = arg[3].intTuple();
  return std::array<int64_t, 4>{p[0], p[1], p[2], p[3]};
}

/// V: the input tiles transformed, [16, C, T]. The padded input is first stored with
/// its even and odd columns apart ([N, C, PH, 2, PW/2]), so that the column of every tile a part reads is a
/// contiguous run over the tiles, not every second element.
Tensor inputTransform(const Tensor &x, const std::array<int64_t, 4> &pad, int64_t th, int64_t tw) {
  int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  int64_t ph = th * kTile + kInput, pw = tw * kTile + kInput; // room for every strided window; pw is even
  Tensor xp = x.pad({{0, 0}, {0, 0}, {pad[0], ph - h - pad[0]}, {pad[2], pw - w - pad[2]}});
  Tensor split = xp.reshape({n, c, ph, pw / 2, 2}).permute({0, 1, 2, 4, 3});
  Tensor xd = split.contiguous();
  std::vector<Tensor> rows;
  for (int64_t k = 0; k < kInput; ++k)
    rows.push_back(strided(xd, 2, k, th, kTile));
  std::vector<Tensor> parts;
  for (const auto &bi : kBT) {
    Tensor r = combine(bi, rows); // [N, C, TH, 2, PW/2]
    std::vector<Tensor> cols;     // column l of every tile: r[..., l % 2, l / 2 + tile]
    for (int64_t l = 0; l < kInput; ++l)
      cols.push_back(
          r.shrink({{0, n}, {0, c}, {0, th}, {l % 2, l % 2 + 1}, {l / 2, l / 2 + tw}}).reshape({n, c, th, tw}));
    for (const auto &bj : kBT) {
      Tensor v = combine(bj, cols); // [N, C, TH, TW]
      parts.push_back(v.permute({1, 0, 2, 3}).reshape({1, c, n * th * tw}));
    }
  }
  return concat(parts, 0);
}

/// U: the weights transformed, [16, K, C].
Tensor weightTransform(const Tensor &w) {
  int64_t k = w.dim(0), c = w.dim(1);
  std::vector<std::vector<Tensor>> taps(3); // taps[i][j] = w[:, :, i, j]
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 3; ++j)
      taps[size_t(i)].push_back(w.shrink({{0, k}, {0, c}, {i, i + 1}, {j, j + 1}}).reshape({k, c}));
  std::vector<Tensor> parts;
  for (const auto &gi : kG) {
    std::vector<Tensor> rows; // (G w)[i, j] for each tap column j
    for (size_t j = 0; j < 3; ++j)
      rows.push_back(combine(gi, {taps[0][j], taps[1][j], taps[2][j]}));
    for (const auto &gj : kG) {
      Tensor u = combine(gj, rows); // [K, C]
      parts.push_back(u.reshape({1, k, c}));
    }
  }
  return concat(parts, 0);
}

/// The fewest rows and columns of tiles, at least th x tw, whose count over the batch is a multiple of `multiple`
/// (two vectors: the register tile of the matmuls is 4 x 2 vectors; extra tiles are computed on zeros, dropped).
std::pair<int64_t, int64_t> tileGrid(int64_t n, int64_t th, int64_t tw, int64_t multiple) {
  std::pair<int64_t, int64_t> best = {th, (tw + multiple - 1) / multiple * multiple}; // always a multiple
  for (int64_t r = th; r <= th + multiple; ++r)
    for (int64_t c = tw; c <= tw + multiple; ++c)
      if ((n * r * c) % multiple == 0 && r * c < best.first * best.second)
        best = {r, c};
  return best;
}

/// The rewritten convolution `u`, or nullptr when the rewrite does not apply.
const UOp *winograd(const UOp *u, const TargetDesc &t) {
  std::optional<std::array<int64_t, 4>> pad = applicable(u);
  if (!pad)
    return nullptr;
  Context &ctx = u->ctx();
  // the input is read by 16 kernels, 4 times each: what computes it (the epilogue of the layer before) runs once
  const UOp *in = u->src(0);
  Tensor x = in->op() == Op::Input || in->op() == Op::Contiguous ? Tensor(in) : Tensor(in).contiguous();
  Tensor w(u->src(1));
  int64_t n = x.dim(0), k = w.dim(0);
  int64_t oh = u->shape()[2], ow = u->shape()[3];
  auto [th, tw] = tileGrid(n, (oh + kTile - 1) / kTile, (ow + kTile - 1) / kTile, 2 * t.vectorLanes(4));
  int64_t tiles = n * th * tw;
  Tensor v = inputTransform(x, *pad, th, tw);
  Tensor uw = weightTransform(w);
  Shape ms = {16, k, tiles};
  Tensor m(ctx.make(Op::Matmul, dt::F32, {uw.uop(), v.uop()}, Arg(), ms));
  Shape slice = {ms[1], ms[2]};
  std::vector<std::vector<Tensor>> mp(kInput); // mp[i][j] = M[i, j]
  for (int64_t i = 0; i < kInput * kInput; ++i)
    mp[size_t(i / kInput)].push_back(m.shrink({{i, i + 1}, {0, ms[1]}, {0, ms[2]}}).reshape(slice));
  std::vector<Tensor> parts;
  for (const auto &ar : kAT) {
    std::vector<Tensor> cols; // (A^T M)[r, j]
    for (size_t j = 0; j < size_t(kInput); ++j)
      cols.push_back(combine(ar, {mp[0][j], mp[1][j], mp[2][j], mp[3][j]}));
    for (const auto &as : kAT)
      parts.push_back(combine(as, cols).reshape({1, ms[1], ms[2]}));
  }
  Tensor yt = concat(parts, 0).contiguous();
  Tensor y = yt.reshape({kTile, kTile, k, n, th, tw}).permute({3, 2, 4, 0, 5, 1});
  y = y.reshape({n, k, th * kTile, tw * kTile}).shrink({{0, n}, {0, k}, {0, oh}, {0, ow}});
  if (u->numSrc() > 2)
    y = y + Tensor(u->src(2)).reshape({1, k, 1, 1});
  return y.uop();
}

} // namespace

const UOp *runWinograd(const UOp *root, PassContext &pc) {
  if (pc.target.isGPU())
    return root;
  int64_t rewritten = 0;
  root = substituteOneByOne(
      root, [&](const UOp *u) { return u->op() == Op::Conv2d ? winograd(u, pc.target) : nullptr; }, rewritten);
  if (rewritten > 0)
    pc.stats["winograd.rewritten"] += rewritten;
  return root;
}

} // namespace tgc
