"""Fit the polynomial coefficients of kernel/vmath.py that are not textbook series.

    .venv/bin/python tools/fit_vmath.py

erfc(x) = exp(-x^2) * erfcx(x): on [0.875, 3.95] erfcx is smooth in s = 1/x, so vmath's
erf evaluates a degree-10 polynomial in u = (2s - (1/lo + 1/hi)) / (1/lo - 1/hi) in [-1, 1]
(a Chebyshev least-squares fit on 20,001 points, converted to the power basis). This prints
the coefficients (highest power first, for Horner) and the fit's largest relative error.
Needs scipy (the test extra).
"""

from __future__ import annotations

import numpy as np
from numpy.polynomial import chebyshev
from scipy.special import erfcx

LO, HI, DEGREE = 0.875, 3.95, 10


def main() -> None:
    x = np.linspace(LO, HI, 20001)
    s_lo, s_hi = 1 / HI, 1 / LO
    u = (2 / x - (s_lo + s_hi)) / (s_hi - s_lo)
    cheb = chebyshev.chebfit(u, erfcx(x), DEGREE)
    power = chebyshev.cheb2poly(cheb)
    print(f"# u = (2/x - {s_lo + s_hi!r}) / {s_hi - s_lo!r}")
    print("ERFCX_U = (" + ", ".join(repr(float(c)) for c in power[::-1]) + ")")
    err = np.max(np.abs(chebyshev.chebval(u, cheb) / erfcx(x) - 1))
    print(f"# largest relative error of the fit: {err:.2e}")


if __name__ == "__main__":
    main()
