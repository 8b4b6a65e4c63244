#!/usr/bin/python3
"""fit_tanh.py: derive the rational approximations of the AVX-512 Tanh kernel.

native/runtime/csrc/rx_kernels.c (rx_tanhq8) evaluates, in float64,

    tanh(x) ~= x * P(z) / Q(z),   z = x*x,   |x| <= XMAX,

with P of degree N and Q of degree M (Q monic), in three pieces:

    fit_tanh.py 2 3 1          |x| <= 1
    fit_tanh.py 4 5 6          |x| <= 6
    fit_tanh.py 5 5 9.03125    |x| <= 9.03125 (the default; tanh rounds to
                               +-1 in float32 beyond 9.0109)

then rounds the result to float32 and sends the lanes whose rounding is in
doubt to SLEEF (Ziv's test). This script finds P and Q by the rational
Remez algorithm for the minimax RELATIVE error of P/Q against
f(z) = tanh(sqrt(z))/sqrt(z) on [0, XMAX^2], in 60-digit arithmetic
(mpmath), then divides P and Q by Q's leading coefficient (Q monic: the
kernel starts Q's Horner scheme with an addition), rounds the coefficients
to float64 and reports the relative error of the rounded rational (exact
arithmetic on the float64 coefficients): the approximation error that the
kernel's Ziv band has to cover on top of its float64 rounding errors. The kernel's total error
(approximation and rounding, with its own evaluation order and FMAs) is then
measured on every float32 argument by scripts/tanh_err.c.

Usage: /usr/bin/python3 scripts/fit_tanh.py [N M [XMAX]]   (default 5 5 9.03125)
Prints the float64 coefficients as C hex literals, lowest degree first.
Needs mpmath (python3-mpmath); deterministic, a few seconds.
"""

import sys

import mpmath as mp

mp.mp.dps = 60


def f(z):
    """tanh(sqrt(z))/sqrt(z), the even function that P/Q approximates."""
    if z == 0:
        return mp.mpf(1)
    s = mp.sqrt(z)
    return mp.tanh(s) / s


def horner(c, z):
    r = mp.mpf(0)
    for a in reversed(c):
        r = r * z + a
    return r


def relerr(p, q, z):
    return horner(p, z) / (horner(q, z) * f(z)) - 1


def solve(nodes, n, m, qold):
    """Coefficients p[0..n], q[0..m] (q[0] = 1) and the levelled error E
    with P(z_i) = f(z_i) (1 + (-1)^i E) Q(z_i) at the n+m+2 nodes; E Q is
    linearised around the previous Q and iterated to a fixed point."""
    k = n + m + 2
    fz = [f(z) for z in nodes]
    e = mp.mpf(0)
    for _ in range(100):
        a = mp.matrix(k, k)
        b = mp.matrix(k, 1)
        for i, z in enumerate(nodes):
            s = 1 if i % 2 == 0 else -1
            for j in range(n + 1):
                a[i, j] = z**j
            for j in range(1, m + 1):
                a[i, n + j] = -fz[i] * z**j
            a[i, k - 1] = -s * fz[i] * horner(qold, z)
            b[i] = fz[i]
        x = mp.lu_solve(a, b)
        p = [x[j] for j in range(n + 1)]
        q = [mp.mpf(1)] + [x[n + j] for j in range(1, m + 1)]
        done = abs(x[k - 1] - e) <= abs(x[k - 1]) * mp.mpf(10) ** -30
        e, qold = x[k - 1], q
        if done:
            break
    return p, q, e


def extrema(p, q, zmax, k, grid=4000):
    """The k alternating extrema of the relative error on [0, zmax]: the
    extreme point of each run of one sign on a dense grid (denser towards
    0, where the error of x P/Q matters as much), refined by golden-section
    search; surplus runs at the ends with the smaller error are dropped."""
    zs = [zmax * (mp.mpf(i) / grid) ** 2 for i in range(grid + 1)]
    es = [relerr(p, q, z) for z in zs]
    runs = []  # (index of the extreme grid point, sign)
    for i, e in enumerate(es):
        s = 1 if e >= 0 else -1
        if runs and runs[-1][1] == s:
            if abs(e) > abs(es[runs[-1][0]]):
                runs[-1] = (i, s)
        else:
            runs.append((i, s))
    pts = []
    for i, s in runs:
        lo, hi = zs[max(i - 1, 0)], zs[min(i + 1, grid)]
        g = (mp.sqrt(5) - 1) / 2
        for _ in range(60):
            a, b = hi - g * (hi - lo), lo + g * (hi - lo)
            if abs(relerr(p, q, a)) > abs(relerr(p, q, b)):
                hi = b
            else:
                lo = a
        z = (lo + hi) / 2
        if abs(relerr(p, q, z)) < abs(es[i]):
            z = zs[i]
        pts.append(z)
    while len(pts) > k:
        if abs(relerr(p, q, pts[0])) < abs(relerr(p, q, pts[-1])):
            pts.pop(0)
        else:
            pts.pop()
    return pts


def remez(n, m, xmax):
    zmax = mp.mpf(xmax) ** 2
    k = n + m + 2
    # Start from Chebyshev extrema in x (squared), which crowd towards 0.
    nodes = [zmax * ((1 - mp.cos(mp.pi * i / (k - 1))) / 2) ** 2 for i in range(k)]
    q = [mp.mpf(1)] + [mp.mpf(0)] * m
    best = None
    for it in range(40):
        p, q, e = solve(nodes, n, m, q)
        pts = extrema(p, q, zmax, k)
        emax = max(abs(relerr(p, q, z)) for z in pts)
        if best is None or emax < best[3]:
            best = (p, q, e, emax)
        if len(pts) < k:
            break
        if emax - abs(e) <= abs(e) * mp.mpf("1e-6"):
            break
        nodes = pts
    return best


def maxrel(p, q, zmax, grid=20000):
    """The greatest relative error of P/Q against f on a dense grid."""
    return max(abs(relerr(p, q, zmax * (mp.mpf(i) / grid) ** 2)) for i in range(grid + 1))


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    m = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    xmax = sys.argv[3] if len(sys.argv) > 3 else "9.03125"
    p, q, e, emax = remez(n, m, xmax)
    # Round to float64, P and Q divided by Q's leading coefficient so that
    # Q is monic (its leading coefficient 1 exactly: the kernel's Horner
    # scheme for Q starts with an addition instead of an FMA).
    p64 = [mp.mpf(float(c / q[-1])) for c in p]
    q64 = [mp.mpf(float(c / q[-1])) for c in q]
    e64 = maxrel(p64, q64, mp.mpf(xmax) ** 2)
    print(f"# degree {n}/{m} in z = x^2 on |x| <= {xmax}")
    print(f"# minimax relative error {mp.nstr(abs(e), 6)} (2^{mp.nstr(mp.log(abs(e), 2), 5)}),"
          f" levelled max {mp.nstr(emax, 6)}")
    print(f"# with float64 coefficients: {mp.nstr(e64, 6)} (2^{mp.nstr(mp.log(e64, 2), 5)})")
    for name, cs in (("P", p64), ("Q", q64)):
        print(f"{name}: " + ", ".join(float(c).hex() for c in cs))


if __name__ == "__main__":
    main()
