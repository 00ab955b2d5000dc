"""Fit the polynomial coefficients of kernel/vmath that are not textbook series.

    .venv/bin/python tools/fit_vmath.py

Chebyshev least-squares fits (on Chebyshev nodes, converted to the power basis of the
variable the body evaluates, highest power first for Horner); each prints its largest
relative error in float64 and evaluated in float32 as the body does. Needs scipy (the
test extra).

- log(erfc(x)) on [0.875, 3.95] as a degree-6 polynomial in x (erf = 1 - exp(P(x)) there:
  no division, 6 multiply-adds, where erfcx in 1/x took a division and 10). The fit is
  weighted by erfc(x) / erf(x), the factor that turns an error in P into a relative error
  of erf, and reweighted towards its largest errors (a cheap stand-in for minimax).
- erf(x) / x on [0, 0.875] as a degree-5 polynomial in z = x^2 (f32.py's erf below 0.875,
  replacing an 11-term Taylor series).
- lgamma(x) = (x - 1)(x - 2) R(x) on [0.5, 1.25), [1.25, 2.75) and [2.75, 6.5) (gamma.py's
  gammaln below 6.5): one degree-11 polynomial per piece in x less the piece's centre,
  picked per element by two comparisons; both roots of lgamma factored out, weighted for
  the relative error of lgamma.
- log(1 + m) = m - m^2/2 + m^3 P(m) on m in [-1/3, 1/3] (f32.py's logs: the split of x
  at 2/3 leaves 2/3 <= 1 + m < 4/3), degree 7, weighted by m^3 / log(1 + m) (relative
  error of the log) and reweighted towards the largest errors.
- Gamma(2 + t) = 1 + t (t + 1) K(t) on t in [-1, 1/2] (gamma.py's near region), degree
  10 in v = t + 1/4, weighted by t (t + 1) / Gamma(2 + t) (the relative error of Gamma).
- log(1 + m) = m + m^2 Q(m) on the same m, degree 6, to an *absolute* error of 4.3e-8
  (f32.py's erfinv_c: erfinv needs w = -log(1 - y^2) only to ~1e-7 absolute, which saves
  two multiply-adds against the log above).
"""

from __future__ import annotations

import numpy as np
from numpy.polynomial import chebyshev
from scipy.special import erf as special_erf
from scipy.special import erfc, gammaln

LO, HI, DEGREE = 0.875, 3.95, 6


def _horner32(coeffs: np.ndarray, v: np.ndarray) -> np.ndarray:
    c32 = coeffs.astype(np.float32)
    p = np.full(v.shape, c32[0], np.float32)
    for c in c32[1:]:
        p = (p * v + c).astype(np.float32)
    return p


def _nodes(n: int, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    """(u, x): n Chebyshev nodes u in (-1, 1) and the same points x in (lo, hi)."""
    u = np.cos(np.pi * (np.arange(n) + 0.5) / n)
    return u, lo + (u + 1) / 2 * (hi - lo)


def _minimax(
    u: np.ndarray, g: np.ndarray, weight: np.ndarray, degree: int, rounds: int
) -> tuple[np.ndarray, float]:
    """(Chebyshev coefficients, largest weighted error) of g: weighted least squares,
    reweighted `rounds` times towards its largest errors (a cheap stand-in for minimax)."""
    v = chebyshev.chebvander(u, degree)
    w = weight.copy()
    for _ in range(rounds):
        cheb, *_ = np.linalg.lstsq(v * w[:, None], g * w, rcond=None)
        err = np.abs(v @ cheb - g) * weight
        w = w * (1 + err / err.max())
    return cheb, float(err.max())


def _power_basis(cheb: np.ndarray, lo: float, hi: float, shift: float = 0.0) -> np.ndarray:
    """The Chebyshev series on u = 2 (x - lo) / (hi - lo) - 1 as a polynomial in
    v = x + shift, highest power first (Horner's order)."""
    from numpy.polynomial import polynomial

    a, b = 2 / (hi - lo), -2 * (shift + lo) / (hi - lo) - 1  # u = a v + b
    power = np.zeros(1)
    for i, c in enumerate(chebyshev.cheb2poly(cheb)):
        power = polynomial.polyadd(power, c * polynomial.polypow([b, a], i))
    return power[::-1]


def fit_log_erfc() -> None:
    k = np.arange(6000)
    u = np.cos(np.pi * (k + 0.5) / k.size)
    x = LO + (u + 1) / 2 * (HI - LO)
    g = np.log(erfc(x))
    weight = erfc(x) / special_erf(x)  # d(erf) / erf per unit error of P
    v = chebyshev.chebvander(u, DEGREE)
    w = weight
    for _ in range(30):  # iteratively reweighted least squares towards the minimax fit
        cheb, *_ = np.linalg.lstsq(v * w[:, None], g * w, rcond=None)
        err = np.abs(v @ cheb - g) * weight
        w = weight * (1 + err / err.max()) ** 2
    coeffs = _power_basis(cheb, LO, HI)
    print("LOG_ERFC_X = (" + ", ".join(repr(float(c)) for c in coeffs) + ")")
    x32 = np.linspace(LO, HI, 200001).astype(np.float32)
    y = 1 - np.exp(_horner32(coeffs, x32).astype(np.float64))
    exact = special_erf(x32.astype(np.float64))
    ulps = np.abs(y.astype(np.float32) - exact) / np.spacing(exact.astype(np.float32))
    print(f"# largest weighted error: {err.max():.2e}; erf in float32 with an exact exp:")
    print(f"# {ulps.max():.2f} ulp")


def fit_erf_small() -> None:
    from numpy.polynomial import polynomial

    hi, degree = 0.875, 5
    k = np.arange(4000)
    u = np.cos(np.pi * (k + 0.5) / k.size)
    z = (u + 1) / 2 * hi * hi  # u = 2 z / hi^2 - 1
    x = np.sqrt(z)
    g = special_erf(x) / x
    cheb = chebyshev.chebfit(u, g, degree)
    power = np.zeros(1)
    for i, c in enumerate(chebyshev.cheb2poly(cheb)):  # substitute u = 2 z / hi^2 - 1
        power = polynomial.polyadd(power, c * polynomial.polypow([-1.0, 2 / hi**2], i))
    coeffs = power[::-1]
    print("ERF_Z = (" + ", ".join(repr(float(c)) for c in coeffs) + ")")
    err = np.max(np.abs(chebyshev.chebval(u, cheb) / g - 1))
    print(f"# largest relative error of the fit: {err:.2e}")


LGAMMA_PIECES = ((0.5, 1.25), (1.25, 2.75), (2.75, 6.5))
LGAMMA_DEGREE = 11


def fit_lgamma_pieces() -> None:
    """lgamma(x) = (x - 1)(x - 2) R(x) on [0.5, 6.5), R one degree-11 polynomial per
    piece in s = x - (the piece's centre), weighted for the relative error of lgamma."""
    for k, (lo, hi) in enumerate(LGAMMA_PIECES):
        u, x = _nodes(8000, lo, hi)  # Chebyshev nodes: never the roots 1 and 2
        r = gammaln(x) / ((x - 1) * (x - 2))
        cheb, err = _minimax(u, r, 1 / np.abs(r), LGAMMA_DEGREE, 40)
        coeffs = _power_basis(cheb, lo, hi, shift=-(lo + hi) / 2)
        print(f"_R{k} = (" + ", ".join(repr(float(c)) for c in coeffs) + ")")
        x32 = np.linspace(lo, hi, 200001).astype(np.float32)[:-1]
        exact = gammaln(x32.astype(np.float64))
        s = (x32 - np.float32((lo + hi) / 2)).astype(np.float32)
        a = (x32 - np.float32(1)).astype(np.float64)
        g = (a * x32 - 2 * a).astype(np.float32)  # fma(a, x, -2a): one rounding
        got = (_horner32(coeffs, s) * g).astype(np.float32)
        ulps = np.abs(got - exact) / np.spacing(np.abs(exact).astype(np.float32))
        print(f"# [{lo}, {hi}): largest relative error of the fit {err:.2e}, in float32")
        print(f"# {ulps.max():.2f} ulp (Horner's multiply-adds rounded twice here)")


def _log_tail(m: np.ndarray) -> np.ndarray:
    """(log(1 + m) - m + m^2/2) / m^3, by its series where the difference cancels."""
    out = np.empty_like(m)
    small = np.abs(m) < 0.02
    ms = m[small]
    out[small] = sum((-1) ** (k + 1) * ms ** (k - 3) / k for k in range(3, 30))
    mb = m[~small]
    out[~small] = (np.log1p(mb) - mb + mb * mb / 2) / mb**3
    return out


def fit_log() -> None:
    lo, hi = -1 / 3, 1 / 3
    u, m = _nodes(8000, lo, hi)
    weight = np.abs(m**3 / np.log1p(m))  # relative error of the log
    cheb, err = _minimax(u, _log_tail(m), weight, 7, 40)
    coeffs = _power_basis(cheb, lo, hi)
    print("LOG_P = (" + ", ".join(repr(float(c)) for c in coeffs) + ")")
    print(f"# largest relative error of log(1 + m): {err:.2e}")


def fit_log_absolute() -> None:
    lo, hi = -1 / 3, 1 / 3
    u, m = _nodes(8000, lo, hi)
    g = _log_tail(m) * m - 0.5  # (log(1 + m) - m) / m^2
    cheb, err = _minimax(u, g, m * m, 6, 40)  # an error in Q is one of m^2 Q, absolute
    coeffs = _power_basis(cheb, lo, hi)
    print("ERFINV_LOG_Q = (" + ", ".join(repr(float(c)) for c in coeffs) + ")")
    print(f"# largest absolute error of log(1 + m): {err:.2e}")


def fit_gamma_k() -> None:
    from scipy.special import gamma

    lo, hi = -1.0, 0.5
    u, t = _nodes(8000, lo, hi)
    g2 = gamma(2 + t)
    weight = np.abs(t * (t + 1)) / g2  # relative error of Gamma(2 + t)
    cheb, err = _minimax(u, (g2 - 1) / (t * (t + 1)), weight, 10, 60)
    coeffs = _power_basis(cheb, lo, hi, shift=0.25)
    print("GAMMA_K = (" + ", ".join(repr(float(c)) for c in coeffs) + ")")
    print(f"# largest relative error of Gamma(2 + t): {err:.2e}")


def main() -> None:
    fit_log()
    fit_log_absolute()
    fit_gamma_k()
    fit_log_erfc()
    fit_erf_small()
    fit_lgamma_pieces()


if __name__ == "__main__":
    main()
