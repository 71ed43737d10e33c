"""Snapshots of a training state that training can run past while they are taken.

A checkpoint must hold the state of one step, but copying a model of tens of millions of
parameters and its optimizer state (several hundred MB) on the training thread stalls training
for as long as the copy takes. Most of that state only changes at the optimizer step: the
parameters and the optimizer's moments. `Staging.stage` copies everything else at once (buffers
such as batch-norm statistics change in the forward pass; RNG states, scheduler values) and
leaves the rest to `Copies.run` on the checkpoint thread, which overlaps the next step's data
loading, forward and backward passes. The training loop calls the checkpointer's
`before_update()` before its optimizer step, which waits only if the copy has not finished.

Buffers are allocated once and reused while the state's layout stays the same; on a GPU they are
pinned, and no copy waits for the GPU on the training thread. Device tensors that may change
before the optimizer step are copied on the training stream itself (ordered before whatever
changes them next); the deferred ones are copied on a stream of their own, which starts once the
training stream has reached the save and runs beside the next step's forward and backward
kernels; `Copies.wait_on_device` makes the training stream (not the host) wait for that copy
before the optimizer step. The checkpoint thread waits for both copies (CUDA events) before it
writes.
"""

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

Deferred = Callable[[torch.Tensor], bool]
"""True for a tensor that changes only at the optimizer step, so its copy may wait until then."""


def changed_by_step(model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> Deferred:
    """The tensors only `optimizer.step()` changes: `model`'s parameters and the optimizer's
    state (moments, step counts). Their copy may wait until the loop's next update."""
    owned = [*model.parameters()]
    owned += [value for state in optimizer.state.values() for value in state.values()]
    pointers = {t.data_ptr() for t in owned if isinstance(t, torch.Tensor)}
    return lambda tensor: tensor.data_ptr() in pointers


@dataclass
class Copies:
    """The tensor copies a staged snapshot still needs: host copies (`pairs`, made by `run`,
    which sets `done`) and device-to-host copies already queued on the GPU (`events`: recorded
    after them; `deferred`: those after the copies of the deferred tensors)."""

    pairs: list[tuple[torch.Tensor, torch.Tensor]] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)
    events: list[Any] = field(default_factory=list)
    deferred: list[tuple[torch.device, Any]] = field(default_factory=list)

    def run(self) -> None:
        """Copy each source into its buffer, on one core and without the GIL, then wait (without
        the GIL) until the GPU has made its copies: the buffers then hold the snapshot.

        Not with `Tensor.copy_`: from a second thread, torch runs a large copy as a parallel
        region with a team of its own, on top of the training thread's, and the two teams'
        spinning threads then thrash the cores. numpy copies contiguous bytes with one thread.
        """
        try:
            for buffer, source in self.pairs:
                if source.is_contiguous():
                    np.copyto(_bytes(buffer), _bytes(source))
                else:
                    buffer.copy_(source)
        finally:
            self.done.set()
        for event in self.events:
            event.synchronize()

    def wait_on_device(self) -> None:
        """Make the training stream wait for the copy of the deferred device tensors (the host
        goes on at once): call it before the optimizer step changes them."""
        for device, event in self.deferred:
            torch.cuda.current_stream(device).wait_event(event)
        self.deferred = []


def _bytes(tensor: torch.Tensor) -> np.ndarray:
    """A contiguous CPU tensor's memory as a numpy byte array (any dtype, bfloat16 too)."""
    return tensor.reshape(-1).view(torch.uint8).numpy()


class Staging:
    """Reusable host buffers for the tensors of a state, and the copies into them."""

    def __init__(self) -> None:
        self._layout: list[tuple[torch.Size, torch.dtype]] = []
        self._buffers: list[torch.Tensor] = []
        self._streams: dict[torch.device, Any] = {}
        """A side stream per GPU, for the copies of deferred tensors."""

    def stage(self, state: Any, deferred: Deferred) -> tuple[Any, Copies]:
        """`state` with each tensor replaced by its buffer, and the copies deferred to later.

        Everything `deferred` refuses is copied before this returns (a GPU tensor: queued on
        the training stream, before anything that changes it). The buffers are reused by the
        next call: the snapshot must be written before then.
        """
        tensors: list[torch.Tensor] = []
        skeleton = _replace(state, tensors)
        self._allocate(tensors)
        copies = Copies()
        on_device: dict[torch.device, list[tuple[torch.Tensor, torch.Tensor]]] = {}
        devices: set[torch.device] = set()
        for buffer, tensor in zip(self._buffers, tensors, strict=True):
            source = tensor.detach()
            if source.device.type == "cpu":
                if deferred(tensor):
                    copies.pairs.append((buffer, source))
                else:
                    buffer.copy_(source)
            elif source.device.type == "cuda" and deferred(tensor):
                on_device.setdefault(source.device, []).append((buffer, source))
            elif source.device.type == "cuda":  # on the training stream, before what changes it
                devices.add(source.device)
                buffer.copy_(source, non_blocking=True)
            else:  # another accelerator: copied now
                buffer.copy_(source)
        for device in devices - set(on_device):
            copies.events.append(torch.cuda.current_stream(device).record_event())
        for device, pairs in on_device.items():
            copies.deferred.append((device, self._copy_beside(device, pairs)))
        copies.events += [event for _, event in copies.deferred]
        if not copies.pairs:
            copies.done.set()
        return _fill(skeleton, iter(self._buffers)), copies

    def _copy_beside(
        self, device: torch.device, pairs: list[tuple[torch.Tensor, torch.Tensor]]
    ) -> Any:
        """Queue the copies of `pairs` on the side stream of `device`, after everything queued
        on its training stream so far; the event recorded after them."""
        training = torch.cuda.current_stream(device)
        side = self._streams.get(device)
        if side is None:
            side = self._streams[device] = torch.cuda.Stream(device)
        side.wait_stream(training)
        with torch.cuda.stream(side):
            for buffer, source in pairs:
                buffer.copy_(source, non_blocking=True)
                source.record_stream(side)  # its memory is not reused before the copy is made
        return side.record_event()

    def _allocate(self, tensors: list[torch.Tensor]) -> None:
        layout = [(t.shape, t.dtype) for t in tensors]
        if layout == self._layout:
            return
        pin = torch.cuda.is_available()
        self._buffers = [torch.zeros(s, dtype=d, device="cpu", pin_memory=pin) for s, d in layout]
        self._layout = layout


class _Slot:
    """Where the n-th tensor goes back in the skeleton."""

    __slots__ = ()


_SLOT = _Slot()


def _replace(value: Any, tensors: list[torch.Tensor]) -> Any:
    if isinstance(value, torch.Tensor):
        tensors.append(value)
        return _SLOT
    if isinstance(value, dict):
        return type(value)((k, _replace(v, tensors)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return type(value)(_replace(v, tensors) for v in value)
    return value


def _fill(value: Any, buffers: Any) -> Any:
    if value is _SLOT:
        return next(buffers)
    if isinstance(value, dict):
        return type(value)((k, _fill(v, buffers)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return type(value)(_fill(v, buffers) for v in value)
    return value
