"""NumPy references written independently of Kiln's lowering: convolution sums shifted slices per
kernel position and transposed convolution scatters each input element's kernel-sized
contribution; pooling follows PyTorch's per-window rule for padding and ceil mode; gathers and
scatters loop over index positions in order; top-k is a stable sort; resize applies one
interpolation matrix per dimension (ONNX's formulas).
"""
import math

import numpy as np


def reference_conv(x, w, b, strides, dilations, pads_low, pads_high, groups):
    n, c = x.shape[:2]
    m, cg = w.shape[:2]
    kernel = w.shape[2:]
    xp = np.pad(x, [(0, 0), (0, 0)] + list(zip(pads_low, pads_high)))
    outs = [(xp.shape[2 + i] - dilations[i] * (kernel[i] - 1) - 1) // strides[i] + 1
            for i in range(len(kernel))]
    out = np.zeros((n, m) + tuple(outs), np.float64)
    mg = m // groups
    for g in range(groups):
        for k in np.ndindex(*kernel):
            window = tuple(slice(k[i] * dilations[i],
                                 k[i] * dilations[i] + (outs[i] - 1) * strides[i] + 1, strides[i])
                           for i in range(len(kernel)))
            patch = xp[(slice(None), slice(g * cg, (g + 1) * cg)) + window]
            wk = w[(slice(g * mg, (g + 1) * mg), slice(None)) + k]
            out[:, g * mg:(g + 1) * mg] += np.einsum("nc...,mc->nm...", patch, wk)
    if b is not None:
        out += b.reshape((1, m) + (1,) * len(kernel))
    return out


def reference_pool(x, kernel, strides, pads_low, pads_high, ceil_mode, kind,
                   count_include_pad=False):
    """PyTorch's pooling rule, one output element at a time (dilation 1)."""
    spatial = x.shape[2:]
    outs = []
    for i, d in enumerate(spatial):
        span = d + pads_low[i] + pads_high[i] - kernel[i]
        o = (-(-span // strides[i]) if ceil_mode else span // strides[i]) + 1
        if ceil_mode and (o - 1) * strides[i] >= d + pads_low[i]:
            o -= 1
        outs.append(o)
    out = np.zeros(x.shape[:2] + tuple(outs), np.float64)
    for o in np.ndindex(*outs):
        starts = [o[i] * strides[i] - pads_low[i] for i in range(len(o))]
        ends = [min(starts[i] + kernel[i], spatial[i] + pads_high[i]) for i in range(len(o))]
        size = np.prod([ends[i] - starts[i] for i in range(len(o))])
        lo = [max(s, 0) for s in starts]
        hi = [min(e, spatial[i]) for i, e in enumerate(ends)]
        window = x[(slice(None), slice(None)) + tuple(slice(l, h) for l, h in zip(lo, hi))]
        if kind == "max":
            out[(slice(None), slice(None)) + o] = window.max(axis=tuple(range(2, x.ndim)))
        else:
            count = size if count_include_pad else np.prod([h - l for l, h in zip(lo, hi)])
            out[(slice(None), slice(None)) + o] = window.sum(axis=tuple(range(2, x.ndim))) / count
    return out


def reference_conv_transpose(x, w, b, strides, dilations, pads_low, pads_high, output_padding,
                             groups):
    n, c = x.shape[:2]
    cg, mg = c // groups, w.shape[1]
    kernel = w.shape[2:]
    spatial = x.shape[2:]
    full = [strides[i] * (spatial[i] - 1) + output_padding[i] + dilations[i] * (kernel[i] - 1) + 1
            for i in range(len(kernel))]
    out = np.zeros((n, mg * groups) + tuple(full), np.float64)
    for g in range(groups):
        for i in np.ndindex(*spatial):
            for k in np.ndindex(*kernel):
                o = tuple(i[d] * strides[d] + k[d] * dilations[d] for d in range(len(kernel)))
                xi = x[(slice(None), slice(g * cg, (g + 1) * cg)) + i]
                wk = w[(slice(g * cg, (g + 1) * cg), slice(None)) + k]
                out[(slice(None), slice(g * mg, (g + 1) * mg)) + o] += xi @ wk
    crop = tuple(slice(pads_low[d], full[d] - pads_high[d]) for d in range(len(kernel)))
    out = out[(slice(None), slice(None)) + crop]
    if b is not None:
        out += b.reshape((1, -1) + (1,) * len(kernel))
    return out


def reference_gather_nd(x, indices, batch_dims):
    k = indices.shape[-1]
    out_shape = indices.shape[:-1] + x.shape[batch_dims + k:]
    out = np.zeros(out_shape, x.dtype)
    for pos in np.ndindex(*indices.shape[:-1]):
        vector = [int(v) % x.shape[batch_dims + j] for j, v in enumerate(indices[pos])]
        out[pos] = x[tuple(pos[:batch_dims]) + tuple(vector)]
    return out


def _combine(mode, old, new):
    return {"none": lambda: new, "add": lambda: old + new, "mul": lambda: old * new,
            "max": lambda: max(old, new), "min": lambda: min(old, new)}[mode]()


def reference_scatter_elements(x, indices, updates, axis, mode):
    out = x.copy()
    for pos in np.ndindex(*indices.shape):
        target = list(pos)
        target[axis] = int(indices[pos]) % x.shape[axis]
        out[tuple(target)] = _combine(mode, out[tuple(target)], updates[pos])
    return out


def reference_scatter_nd(x, indices, updates, mode):
    out = x.copy()
    k = indices.shape[-1]
    for pos in np.ndindex(*indices.shape[:-1]):
        target = tuple(int(v) % x.shape[j] for j, v in enumerate(indices[pos]))
        for inner in np.ndindex(*x.shape[k:]):
            out[target + inner] = _combine(mode, out[target + inner], updates[pos + inner])
    return out


def reference_top_k(x, k, axis, largest):
    """Values and indices of the k largest (smallest) along axis; ties keep the lower index."""
    key = -x.astype(np.float64) if largest else x.astype(np.float64)
    order = np.argsort(key, axis=axis, kind="stable")
    indices = np.take(order, range(k), axis=axis)
    return np.take_along_axis(x, indices, axis=axis), indices


def _resize_matrix(n_in, n_out, scale, mode, transform, rounding, a, exclude):
    """The (n_out, n_in) matrix interpolating one dimension, by ONNX Resize's formulas."""
    m = np.zeros((n_out, n_in))
    for x in range(n_out):
        if transform == "half_pixel":
            c = (x + 0.5) / scale - 0.5
        elif transform == "pytorch_half_pixel":
            c = (x + 0.5) / scale - 0.5 if n_out > 1 else 0.0
        elif transform == "align_corners":
            c = 0.0 if n_out == 1 else x * (n_in - 1) / (n_out - 1)
        elif transform == "asymmetric":
            c = x / scale
        else:  # half_pixel_symmetric
            adjustment = n_out / (scale * n_in)
            c = n_in / 2 * (1 - adjustment) + (x + 0.5) / scale - 0.5
        if mode == "nearest":
            if rounding == "round_prefer_floor":
                r = math.floor(c) if c == math.floor(c) + 0.5 else round(c)
            elif rounding == "round_prefer_ceil":
                r = math.ceil(c) if c == math.floor(c) + 0.5 else round(c)
            else:
                r = math.floor(c) if rounding == "floor" else math.ceil(c)
            m[x, min(max(int(r), 0), n_in - 1)] = 1
            continue
        base = math.floor(c)
        t = c - base
        if mode == "linear":
            taps = {base: 1 - t, base + 1: t}
        else:
            def cubic(s):
                s = abs(s)
                if s <= 1:
                    return (a + 2) * s ** 3 - (a + 3) * s ** 2 + 1
                if s < 2:
                    return a * s ** 3 - 5 * a * s ** 2 + 8 * a * s - 4 * a
                return 0.0
            taps = {base + o: cubic(t - o) for o in (-1, 0, 1, 2)}
            if exclude:
                taps = {i: v for i, v in taps.items() if 0 <= i < n_in}
                total = sum(taps.values())
                taps = {i: v / total for i, v in taps.items()}
        for i, v in taps.items():
            m[x, min(max(i, 0), n_in - 1)] += v
    return m


def reference_resize(x, sizes, scales, mode, transform, rounding, a, exclude):
    out = x.astype(np.float64)
    for d, (n_out, scale) in enumerate(zip(sizes, scales)):
        if n_out == x.shape[d] and scale == 1:
            continue
        m = _resize_matrix(x.shape[d], n_out, float(scale), mode, transform, rounding, a, exclude)
        out = np.moveaxis(np.tensordot(m, np.moveaxis(out, d, 0), axes=1), 0, d)
    return out
