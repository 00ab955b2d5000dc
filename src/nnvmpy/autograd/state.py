"""The per-thread recording and training flags (MXNet's Imperative::is_recording_/is_train_).

Kept in a module of its own, with no imports, because imperative invoke reads both flags
on every op: `STATE.recording` is one thread-local attribute read.
"""

from __future__ import annotations

import threading


class _State(threading.local):
    """Class defaults make the read cheap on threads that never set a flag."""

    recording: bool = False
    training: bool = False


STATE = _State()


def is_recording() -> bool:
    """Whether operations on this thread are recorded for backward."""
    return STATE.recording


def is_training() -> bool:
    """Whether ops on this thread run in training mode (Dropout drops, BatchNorm uses batch
    statistics)."""
    return STATE.training


def set_recording(is_recording: bool) -> bool:
    """Set this thread's recording flag; returns the previous value."""
    prev = STATE.recording
    STATE.recording = bool(is_recording)
    return prev


def set_training(train_mode: bool) -> bool:
    """Set this thread's training flag; returns the previous value."""
    prev = STATE.training
    STATE.training = bool(train_mode)
    return prev


__all__ = ["STATE", "is_recording", "is_training", "set_recording", "set_training"]
