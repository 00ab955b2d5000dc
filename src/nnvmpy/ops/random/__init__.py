"""Random sampling ops, all drawing from the device's Philox stream (the kRandom resource).

sample_op.py       _random_<dist> (scalar parameters), _random_<dist>_like, _random_randint
multisample_op.py  _sample_<dist> (per-row parameter arrays)
multinomial.py     _sample_multinomial (+ its get_prob gradient)
shuffle.py         _shuffle
unique_zipfian.py  _sample_unique_zipfian (distinct log-uniform classes, for sampled softmax)
pdf.py             _random_pdf_<dist> (densities of samples; kernels in pdf_kernels.py)
samplers.py        the distributions as device functions, and their loops
"""

from . import (  # noqa: F401 - registrations
    multinomial,
    multisample_op,
    pdf,
    sample_op,
    shuffle,
    unique_zipfian,
)
