"""esmm inside PyTorch: the custom op ``esmm::linear`` (opaque to
torch.compile) and ``Linear``, a drop-in for torch.nn.Linear that extracts
its weight's zero pattern once and reuses it.

Forward only: there is no backward, so use them for inference (under
torch.no_grad() or torch.inference_mode())."""
import itertools
import weakref
from typing import Optional

import torch

from . import _api

# Patterns of weights for the op, by a key no other pattern ever had: a
# custom op's arguments are tensors and numbers, so Linear passes the key of
# its pattern. Each entry also holds (weakly) the Linear that made it, which
# alone uses or drops it: a copy of the module makes its own.
_patterns = {}
_keys = itertools.count(1)


@torch.library.custom_op("esmm::linear", mutates_args=())
def linear(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor],
           pattern_key: int) -> torch.Tensor:
    """x @ weight.T + bias over the last dimension of x, as
    torch.nn.functional.linear; pattern_key 0 extracts weight's pattern in
    the call, else names a pattern registered by Linear."""
    rows = x.reshape(-1, x.shape[-1])
    if not rows.is_contiguous():
        rows = rows.contiguous()
    entry = _patterns.get(pattern_key)
    y = _api.matmul(rows, weight, transpose_b=True, pattern_b=entry and entry[1])
    if bias is not None:
        y += bias
    return y.reshape(*x.shape[:-1], weight.shape[0])


@linear.register_fake
def _(x, weight, bias, pattern_key):
    return x.new_empty((*x.shape[:-1], weight.shape[0]))


class Linear(torch.nn.Linear):
    """torch.nn.Linear whose forward runs esmm (forward only). The weight's
    zero pattern is extracted on the first forward and again only after the
    weight changes (its version counter moves) or moves device. A change
    made through weight.data moves no counter of the weight's: call
    refresh_pattern() after one, or the stale pattern skips products that
    are no longer zero. keep_copy: the pattern also keeps a copy of the
    weight laid out as the kernels read it fastest (esmm.pattern_b's
    keep_copy; as much memory again as the weight), which every forward
    reads instead of the weight: after a change through weight.data, until
    refresh_pattern(), the forward multiplies the old weight. A weight made
    under torch.inference_mode() has no version counter: call
    refresh_pattern() after changing it in place."""

    keep_copy = False

    def __init__(self, *args, keep_copy: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.keep_copy = keep_copy
        self._pattern_state = None

    @classmethod
    def from_linear(cls, module: torch.nn.Linear, *, keep_copy: bool = False) -> "Linear":
        """An esmm Linear sharing module's weight and bias."""
        new = cls.__new__(cls)
        torch.nn.Module.__init__(new)
        new.in_features, new.out_features = module.in_features, module.out_features
        new.weight, new.bias = module.weight, module.bias
        new.keep_copy = keep_copy
        new._pattern_state = None
        return new

    def _owns(self, key):
        entry = _patterns.get(key)
        return entry is not None and entry[0]() is self

    def _pattern_key(self):
        w = self.weight
        version = None if w.is_inference() else w._version
        state = (w.data_ptr(), w.device, version, self.keep_copy)
        current = self._pattern_state
        if current is None or current[0] != state or not self._owns(current[1]):
            self.refresh_pattern()
            key = next(_keys)
            # The entry goes with the module, however it is collected.
            owner = weakref.ref(self, lambda _, key=key: _patterns.pop(key, None))
            _patterns[key] = (owner, _api.pattern_b(w.detach(), transpose_b=True,
                                                    keep_copy=self.keep_copy))
            self._pattern_state = (state, key)
        return self._pattern_state[1]

    def refresh_pattern(self):
        """Extracts the weight's pattern again at the next forward."""
        if self._pattern_state is not None and self._owns(self._pattern_state[1]):
            del _patterns[self._pattern_state[1]]
        self._pattern_state = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        key = 0 if torch.compiler.is_compiling() else self._pattern_key()
        return linear(x, self.weight, self.bias, key)
