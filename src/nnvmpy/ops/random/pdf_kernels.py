"""The densities of the _random_pdf_* ops as device functions, and their loops.

Each distribution is its log-density and the partial derivatives of it, in float64:

    uniform(low, high)            -log(high - low)
    normal(mu, sigma)             -((x - mu) / sigma)^2 / 2 - log(sigma) - log(2 pi) / 2
    gamma(alpha, beta)            alpha log beta + (alpha - 1) log x - beta x - lgamma(alpha)
    exponential(lam)              log lam - lam x
    poisson(lam)                  x log lam - lam - lgamma(x + 1)
    negative_binomial(k, p)       lgamma(x + k) - lgamma(x + 1) - lgamma(k) + k log p
                                  + x log(1 - p)
    generalized_negative_binomial(mu, alpha)
                                  negative_binomial(1 / alpha, 1 / (1 + alpha mu))
    dirichlet(alpha)              sum (alpha_i - 1) log x_i + lgamma(sum alpha)
                                  - sum lgamma(alpha_i)

As in MXNet, beta is the gamma distribution's *rate* here (the samplers take a scale),
the formulas are evaluated without checking that x lies in the support (uniform's
density is 1 / (high - low) everywhere, exponential's lam e^(-lam x) also below 0), and
the discrete distributions take any real x (lgamma continues the factorials; a negative
integer has density 0). Parameters outside their domain give NaN. The pdf is the exp of
the log-density; the gradient of the pdf is the pdf times that of the log-density, which
the backward loops read back from the forward output. The sample gets no gradient from
uniform and the discrete distributions (MXNet's choice for samples that are counts).

The guarded log / lgamma / exp keep Python's math module (the CUDA simulator runs the
kernels as Python) from raising where C returns -inf, inf or NaN.
"""

from __future__ import annotations

import math

from ...kernel import device_function, parallel_for
from ...kernel.launch import store
from ..special import digamma, is_pole

UNIFORM, NORMAL, GAMMA, EXPONENTIAL, POISSON, NEGATIVE_BINOMIAL, GENERALIZED_NEGATIVE_BINOMIAL = (
    range(7)
)
_NAN = math.nan
_INF = math.inf
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_EXP_OVERFLOW = 709.0  # exp(x) > 8e307 beyond this


@device_function
def safe_log(y):
    """log y, -inf at 0 and NaN below."""
    if y > 0.0:
        return math.log(y)
    if y == 0.0:
        return -_INF
    return _NAN


@device_function
def xlogy(c, y):
    """c log y, 0 where c is 0 (so Poisson(0) has density 1 at 0, as SciPy's)."""
    if c == 0.0:
        return 0.0
    return c * safe_log(y)


@device_function
def safe_lgamma(x):
    """log |gamma(x)|: inf at the poles 0, -1, -2, ... and at +-inf."""
    if x != x:
        return _NAN
    if is_pole(x) or x == _INF or x == -_INF:
        return _INF
    return math.lgamma(x)


@device_function
def safe_exp(v):
    if v > _EXP_OVERFLOW:
        return _INF
    return math.exp(v)


@device_function
def nb_log_density(x, n, log_p, log_q):
    """Negative binomial with n successes of log-probability log_p (log_q = log(1 - p))."""
    if not n > 0.0:
        return _NAN
    v = safe_lgamma(x + n) - safe_lgamma(x + 1.0) - safe_lgamma(n) + n * log_p
    return v if x == 0.0 else v + x * log_q


@device_function
def log_density(dist, x, a, b):
    """log pdf(x; a, b) of distribution `dist` (b unused by one-parameter distributions)."""
    if dist == UNIFORM:
        return -safe_log(b - a)
    if dist == NORMAL:
        if not b > 0.0:
            return _NAN
        z = (x - a) / b
        return -0.5 * z * z - math.log(b) - _HALF_LOG_2PI
    if dist == GAMMA:
        if not (a > 0.0 and b > 0.0):
            return _NAN
        return a * math.log(b) + xlogy(a - 1.0, x) - b * x - safe_lgamma(a)
    if dist == EXPONENTIAL:
        if not a > 0.0:
            return _NAN
        return math.log(a) - a * x
    if dist == POISSON:
        if not a >= 0.0:
            return _NAN
        return xlogy(x, a) - a - safe_lgamma(x + 1.0)
    if dist == NEGATIVE_BINOMIAL:
        if not (b > 0.0 and b <= 1.0):
            return _NAN
        return nb_log_density(x, a, math.log(b), safe_log(1.0 - b))
    # GENERALIZED_NEGATIVE_BINOMIAL: n = 1 / alpha, p = 1 / (1 + alpha mu)
    if not (a >= 0.0 and b > 0.0):
        return _NAN
    am = b * a
    return nb_log_density(x, 1.0 / b, -math.log1p(am), safe_log(am) - math.log1p(am))


@device_function
def log_density_grad(dist, x, a, b):
    """(d/dx, d/da, d/db) of log_density(dist, x, a, b); d/dx is 0 where MXNet has none."""
    if dist == UNIFORM:
        d = 1.0 / (b - a)
        return 0.0, d, -d
    if dist == NORMAL:
        u = (x - a) / (b * b)
        return -u, u, (x - a) * u / b - 1.0 / b
    if dist == GAMMA:
        return (a - 1.0) / x - b, safe_log(b) + safe_log(x) - digamma(a), a / b - x
    if dist == EXPONENTIAL:
        return -a, 1.0 / a - x, 0.0
    if dist == POISSON:
        return 0.0, x / a - 1.0, 0.0
    if dist == NEGATIVE_BINOMIAL:
        dk = digamma(x + a) - digamma(a) + safe_log(b)
        return 0.0, dk, a / b - x / (1.0 - b)
    # GENERALIZED_NEGATIVE_BINOMIAL (a = mu, b = alpha)
    s = 1.0 + a * b
    dmu = (x - a) / (a * s)
    n = 1.0 / b
    dalpha = (math.log1p(a * b) - digamma(x + n) + digamma(n)) * n * n + (x - a) / (b * s)
    return 0.0, dmu, dalpha


@parallel_for
def pdf_loop(i, out, mode, sample, p1, p2, n, dist, is_log):
    """out[i] = (log) pdf of sample[i] under the parameters of its row r = i // n."""
    r = i // n
    v = log_density(dist, float(sample[i]), float(p1[r]), float(p2[r]))
    store(out, i, v if is_log else safe_exp(v), mode)


@parallel_for
def pdf_grad_loop(r, gx, gp1, gp2, dy, sample, p1, p2, out, n, dist, is_log, mx, m1, m2):
    """Row r's gradients: the sample's per element, the parameters' summed over its n."""
    a = float(p1[r])
    b = float(p2[r])
    s1 = 0.0
    s2 = 0.0
    for j in range(n):
        i = r * n + j
        dx, da, db = log_density_grad(dist, float(sample[i]), a, b)
        w = float(dy[i]) if is_log else float(dy[i]) * float(out[i])
        store(gx, i, dx * w, mx)
        s1 += da * w
        s2 += db * w
    store(gp1, r, s1, m1)
    store(gp2, r, s2, m2)


@parallel_for
def dirichlet_loop(i, out, mode, sample, alpha, n, k, is_log):
    """out[i] = (log) density of the k-vector sample[i] under alpha's row r = i // n."""
    r = i // n
    total = 0.0
    v = 0.0
    for c in range(k):
        a = float(alpha[r * k + c])
        if not a > 0.0:
            v = _NAN
        total += a
        v += xlogy(a - 1.0, float(sample[i * k + c])) - safe_lgamma(a)
    v += safe_lgamma(total)
    store(out, i, v if is_log else safe_exp(v), mode)


@parallel_for
def dirichlet_grad_loop(r, gx, ga, dy, sample, alpha, out, n, k, is_log, mx, ma):
    """Row r's gradients: d/dx_c = (alpha_c - 1) / x_c per sample, d/dalpha_c summed."""
    total = 0.0
    for c in range(k):
        total += float(alpha[r * k + c])
    psi_total = digamma(total)
    for c in range(k):
        a = float(alpha[r * k + c])
        base = psi_total - digamma(a)
        s = 0.0
        for j in range(n):
            i = r * n + j
            w = float(dy[i]) if is_log else float(dy[i]) * float(out[i])
            x = float(sample[i * k + c])
            store(gx, i * k + c, w * (a - 1.0) / x, mx)
            s += w * (base + safe_log(x))
        store(ga, r * k + c, s, ma)
