"""The beta distribution LowRiskOverCommitment fits to a node's measured load (upstream's
``lowriskovercommitment/beta.go``): moments, moment matching, the density and the distribution
function (the regularised incomplete beta function, evaluated here by its continued fraction).
"""

from __future__ import annotations

import math
import sys

_EPS = 1e-15
_TINY = 1e-300
_MAX_ITERATIONS = 500


def complete(a: float, b: float) -> float:
    """B(a, b) for a, b > 0 (NaN otherwise)."""
    if a <= 0 or b <= 0:
        return math.nan
    return math.exp(math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b))


def _continued_fraction(x: float, a: float, b: float) -> float:
    """The continued fraction of I_x(a, b), by the modified Lentz method."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, _MAX_ITERATIONS + 1):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        step = d * c
        h *= step
        if abs(step - 1.0) < _EPS:
            break
    return h


def regularized_incomplete(x: float, a: float, b: float) -> float:
    """I_x(a, b) = B(x; a, b) / B(a, b) for a, b > 0 and x in [0, 1]; NaN otherwise."""
    if a <= 0 or b <= 0 or not 0 <= x <= 1 or math.isnan(x):
        return math.nan
    if x == 0:
        return 0.0
    if x == 1:
        return 1.0
    try:
        log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    except (ValueError, OverflowError):
        return math.nan
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _continued_fraction(x, a, b) / a
    return 1.0 - front * _continued_fraction(1.0 - x, b, a) / b


def max_variance(m1: float) -> float:
    """The largest variance a beta distribution of mean ``m1`` can have (0 outside (0, 1))."""
    return m1 * (1 - m1) if 0 < m1 < 1 else 0.0


class BetaDistribution:
    """Beta(alpha, beta), alpha > 0 and beta > 0, with its first three moments."""

    def __init__(self, alpha: float, beta: float) -> None:
        self.alpha = alpha
        self.beta = beta
        self.is_valid = alpha > 0 and beta > 0
        self.first_moment = self.second_moment = self.third_moment = 0.0
        self._moments()

    @classmethod
    def new(cls, alpha: float, beta: float) -> BetaDistribution | None:
        """The distribution, ``None`` for parameters that are not both above 0."""
        dist = cls(alpha, beta)
        return dist if dist.is_valid else None

    def _moments(self) -> bool:
        if not self.is_valid:
            return False
        a, b = self.alpha, self.beta
        self.first_moment = a / (a + b)
        self.second_moment = self.first_moment * (a + 1) / (a + b + 1)
        self.third_moment = self.second_moment * (a + 2) / (a + b + 2)
        return True

    def mean(self) -> float:
        return self.first_moment

    def variance(self) -> float:
        return self.second_moment - self.first_moment * self.first_moment

    def distribution_function(self, x: float) -> float:
        """P(X <= x); 0 where it cannot be evaluated."""
        p = regularized_incomplete(x, self.alpha, self.beta)
        return 0.0 if math.isnan(p) or p < 0 or p > 1 else p

    def density_function(self, x: float) -> float:
        """The density at ``x``; 0 where it cannot be evaluated."""
        try:
            pdf = math.pow(x, self.alpha - 1.0) * math.pow(1.0 - x, self.beta - 1.0) / complete(self.alpha, self.beta)
        except (ValueError, ZeroDivisionError, OverflowError):
            return 0.0
        return 0.0 if math.isnan(pdf) or pdf < 0 else pdf

    def match_moments(self, m1: float, m2: float) -> bool:
        """Fit alpha and beta to the first two moments; False where no beta distribution has
        them."""
        variance = m2 - m1 * m1
        if m1 < 0 or m1 > 1 or variance < 0 or variance >= m1 * (1 - m1):
            return False
        temp = max(m1 * (1 - m1) / variance - 1, sys.float_info.min * sys.float_info.epsilon)
        self.alpha = m1 * temp
        self.beta = (1 - m1) * temp
        self.is_valid = self.alpha > 0 and self.beta > 0
        return self._moments()

    def describe(self) -> str:
        return (
            f"BetaDistribution: alpha = {self.alpha:f}; beta = {self.beta:f}; "
            f"mean = {self.mean():f}; var = {self.variance():f}; "
            f"m1 = {self.first_moment:f}; m2 = {self.second_moment:f}; m3 = {self.third_moment:f}; "
        )


def compute_probability(mu: float, sigma: float, threshold: float) -> tuple[float, BetaDistribution | None]:
    """The probability that utilisation of mean ``mu`` and deviation ``sigma`` is at most
    ``threshold``, and the fitted distribution (``ComputeProbability``)."""
    if mu == 0 or (sigma == 0 and mu <= threshold):
        return 1.0, None
    if sigma == 0 and mu > threshold:
        return 0.0, None
    dist = BetaDistribution(1, 1)
    if not dist.match_moments(mu, sigma * sigma + mu * mu):
        return 0.0, None
    below = dist.distribution_function(threshold)
    return (1.0, dist) if math.isnan(below) else (below, dist)
