#!/usr/bin/env python3
"""Writes the Winograd transforms of cl_kernels/winograd.cl and winograd_gpu.cl (a development tool, not run at
build time): for each F(m x m, r x r) the matrices A^T, G, B^T from Toom-Cook interpolation at
the points 0, +-1, +-2 (and infinity), checked exactly against direct correlation, and those
of F(r x r, m x m) for the weight gradient, then emitted as straight-line code that skips
zero coefficients and multiplications by +-1.

    python3 tools/dev/winograd_transforms.py > cl_kernels/winograd_h.cl
Needs sympy."""
import sympy as sp
import sys

def derive(m, r, pts):
    a = len(pts) + 1
    assert a == m + r - 1
    AT = sp.zeros(m, a)
    for i in range(m):
        for j in range(a-1): AT[i,j] = sp.Rational(pts[j])**i
        AT[i,a-1] = 1 if i == m-1 else 0
    G = sp.zeros(a, r)
    for j in range(a-1):
        f = 1
        for l in range(a-1):
            if l != j: f *= (sp.Rational(pts[j]) - sp.Rational(pts[l]))
        for k in range(r): G[j,k] = sp.Rational(pts[j])**k / f
    G[a-1, r-1] = 1
    BT = sp.Matrix(a, a, lambda i,j: sp.Symbol('b%d_%d'%(i,j)))
    eqs = []
    for i in range(m):
        for k in range(r):
            for p in range(a):
                eqs.append(sum(AT[i,j]*G[j,k]*BT[j,p] for j in range(a)) - (1 if p == i+k else 0))
    sol = sp.solve(eqs, list(BT), dict=True)
    assert sol, "no solution"
    BTs = BT.subs(sol[0]).subs({s:0 for s in BT.free_symbols})
    # verify
    for i in range(m):
        for k in range(r):
            for p in range(a):
                assert sum(AT[i,j]*G[j,k]*BTs[j,p] for j in range(a)) == (1 if p == i+k else 0)
    return AT, G, BTs
def lit(c):
    c = sp.nsimplify(c)
    if c.q == 1: return "%d.0f" % c.p
    return "(%d.0f / %d.0f)" % (c.p, c.q)
def combo(coefs, names):
    terms = []
    for c, n in zip(coefs, names):
        if c == 0: continue
        if c == 1: terms.append(("+", n))
        elif c == -1: terms.append(("-", n))
        elif c < 0: terms.append(("-", "%s * %s" % (lit(-c), n)))
        else: terms.append(("+", "%s * %s" % (lit(c), n)))
    if not terms: return "0.0f"
    s = ("-" if terms[0][0] == "-" else "") + terms[0][1]
    for sg, t in terms[1:]: s += " %s %s" % (sg, t)
    return s
def matmul_lines(M, src, dst, rows_in, cols, left=True, indent="    "):
    # left: dst[i][j] = sum_k M[i][k] src[k][j]; right: dst[i][j] = sum_k src[i][k] M[j][k]
    out = []
    if left:
        for i in range(M.rows):
            for j in range(cols):
                out.append("%s%s = %s;" % (indent, dst(i, j), combo([M[i, k] for k in range(M.cols)], [src(k, j) for k in range(M.cols)])))
    else:
        for i in range(rows_in):
            for j in range(M.rows):
                out.append("%s%s = %s;" % (indent, dst(i, j), combo([M[j, k] for k in range(M.cols)], [src(i, k) for k in range(M.cols)])))
    return out
def variant(m, r, pts):
    AT, G, BT = derive(m, r, [sp.Rational(p) for p in pts])
    a = m + r - 1
    L = []
    L.append("#elif WM == %d && WR == %d" % (m, r))
    # input transform: v = BT d BT^T
    L.append("/* V = B^T d B */")
    L.append("static inline void wino_in_tf(const WINO_VEC *d, WINO_VEC *v)")
    L.append("{")
    L.append("    WINO_VEC t[%d];" % (a * a))
    L += matmul_lines(BT, lambda k, j: "d[%d]" % (k * a + j), lambda i, j: "t[%d]" % (i * a + j), a, a, True)
    L += matmul_lines(BT, lambda i, k: "t[%d]" % (i * a + k), lambda i, j: "v[%d]" % (i * a + j), a, a, False)
    L.append("}")
    L.append("/* Y = A^T m A */")
    L.append("static inline void wino_out_tf(const WINO_VEC *mm, WINO_VEC *y)")
    L.append("{")
    L.append("    WINO_VEC t[%d];" % (m * a))
    L += matmul_lines(AT, lambda k, j: "mm[%d]" % (k * a + j), lambda i, j: "t[%d]" % (i * a + j), a, a, True)
    L += matmul_lines(AT, lambda i, k: "t[%d]" % (i * a + k), lambda i, j: "y[%d]" % (i * m + j), m, a, False)
    L.append("}")
    L.append("/* U = G g G^T */")
    L.append("static inline void wino_filter_tf(const float *g, float *u)")
    L.append("{")
    L.append("    float t[%d];" % (a * r))
    L += matmul_lines(G, lambda k, j: "g[%d]" % (k * r + j), lambda i, j: "t[%d]" % (i * r + j), r, r, True)
    L += matmul_lines(G, lambda i, k: "t[%d]" % (i * r + k), lambda i, j: "u[%d]" % (i * a + j), a, r, False)
    L.append("}")
    # The weight gradient is F(r x r, m x m) at the same points: dy tiles take the place of
    # the filter (E = G' e G'^T) and dW = A'^T dU A' (its B^T is the same as above).
    AT2, G2, BT2 = derive(r, m, [sp.Rational(p) for p in pts])
    assert BT2 == BT
    L.append("/* E = G' e G'^T for an m x m tile e of dy (weight gradient) */")
    L.append("static inline void wino_dy_tf(const WINO_VEC *e, WINO_VEC *u)")
    L.append("{")
    L.append("    WINO_VEC t[%d];" % (a * m))
    L += matmul_lines(G2, lambda k, j: "e[%d]" % (k * m + j), lambda i, j: "t[%d]" % (i * m + j), m, m, True)
    L += matmul_lines(G2, lambda i, k: "t[%d]" % (i * m + k), lambda i, j: "u[%d]" % (i * a + j), a, m, False)
    L.append("}")
    L.append("/* dW = A'^T dU A' (weight gradient) */")
    L.append("static inline void wino_dw_tf(const float *mm, float *w)")
    L.append("{")
    L.append("    float t[%d];" % (r * a))
    L += matmul_lines(AT2, lambda k, j: "mm[%d]" % (k * a + j), lambda i, j: "t[%d]" % (i * a + j), a, a, True)
    L += matmul_lines(AT2, lambda i, k: "t[%d]" % (i * a + k), lambda i, j: "w[%d]" % (i * r + j), r, a, False)
    L.append("}")
    return "\n".join(L)
parts = [variant(4, 3, [0, 1, -1, 2, -2]), variant(2, 5, [0, 1, -1, 2, -2])]
txt = "\n".join(parts)
txt = txt.replace("#elif", "#if", 1)
HEADER = """/* Winograd transforms for cl_kernels/winograd.cl, generated by tools/dev/winograd_transforms.py
 * (do not edit: run `python3 tools/dev/winograd_transforms.py > cl_kernels/winograd_h.cl`).
 * Put before winograd.cl and winograd_gpu.cl in their programs (their "_h" source). For
 * F(WM x WM, WR x WR) at the points 0, +-1, +-2 and infinity: the input, output and filter
 * transforms, and those of F(WR x WR, WM x WM) for the weight gradient. The tiles' elements
 * are WINO_VEC: a float16 of channels on CPUs (winograd.cl), one float on GPUs. */
#ifndef WINO_VEC
#define WINO_VEC float16
#endif
#ifndef WM
#define WM 4
#endif
#ifndef WR
#define WR 3
#endif
"""
print(HEADER + txt + "\n#else\n#error \"Winograd: WM x WR must be 4x3 or 2x5\"\n#endif")
