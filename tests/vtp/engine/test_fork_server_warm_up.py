"""The fork server's torch.export stage exports a tiny model once, so that an export task forked
from it does not pay torch.export's first call; it leaves torch's random generator as it found
it and the FakeTensor counters that torch reports at exit at zero."""

import torch
import torch.export._trace  # what the stage imports before it warms up
from torch._subclasses.fake_tensor import FakeTensorMode

from vtp.engine import fork_server


def test_the_warm_up_leaves_the_random_generator_and_the_reported_counters_as_they_were():
    state = torch.random.get_rng_state()
    fork_server._warm_torch_export()
    assert torch.equal(torch.random.get_rng_state(), state)
    assert (FakeTensorMode.cache_hits, FakeTensorMode.cache_misses) == (0, 0)
    assert not FakeTensorMode.cache_bypasses
