"""Per-op attribute keys: the name a pass looks up and the type stored under it.

The Python counterpart of nnvm/op_attr_types.h. Each built-in key documents what to
register, the behaviour when it is absent and who reads it. A key nobody declared is
created on its first registration and takes its value type from that first value.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

if TYPE_CHECKING:
    from nnvmpy.base import Shape
    from nnvmpy.kernel.elementwise import ScalarBody
    from nnvmpy.registry import NodeAttrs
    from nnvmpy.resource import OpContext, ResourceRequest

T = TypeVar("T")

#: value_type for keys whose values are functions (checked with callable()).
CALLABLE = "callable"


class AttrKey(Generic[T]):
    """One attribute name and the type of value every op must store under it."""

    __slots__ = ("declared", "doc", "name", "value_type")

    def __init__(
        self, name: str, doc: str, value_type: type | str = CALLABLE, *, declared: bool = True
    ) -> None:
        self.name = name
        self.doc = doc
        self.value_type = value_type
        self.declared = declared  # False: created by a first registration

    def accepts(self, value: object) -> bool:
        if self.value_type == CALLABLE:
            return callable(value)
        assert isinstance(self.value_type, type)
        return isinstance(value, self.value_type)

    def type_name(self) -> str:
        if isinstance(self.value_type, type):
            return self.value_type.__name__
        return self.value_type

    def __repr__(self) -> str:
        return f"AttrKey({self.name!r})"


# --- Protocols of the callable attributes ------------------------------------------------


class ListNamesFn(Protocol):
    def __call__(self, attrs: NodeAttrs, /) -> list[str]: ...


class InferShapeFn(Protocol):
    def __call__(
        self, attrs: NodeAttrs, in_shapes: list[Shape | None], out_shapes: list[Shape | None], /
    ) -> bool: ...


class InferTypeFn(Protocol):
    def __call__(self, attrs: NodeAttrs, in_types: list[Any], out_types: list[Any], /) -> bool: ...


class InplaceOptionFn(Protocol):
    def __call__(self, attrs: NodeAttrs, /) -> Sequence[tuple[int, int]]: ...


class InplaceIdentityFn(Protocol):
    def __call__(self, attrs: NodeAttrs, /) -> Sequence[bool]: ...


class GradientFn(Protocol):
    def __call__(self, node: Any, ograds: list[Any], /) -> list[Any]: ...


class ComputeFn(Protocol):
    def __call__(
        self,
        attrs: NodeAttrs,
        ctx: OpContext,
        inputs: list[Any],
        req: list[Any],
        outputs: list[Any],
        /,
    ) -> None: ...


class CreateOpStateFn(Protocol):
    def __call__(
        self, attrs: NodeAttrs, ctx: Any, in_shapes: list[Shape], in_types: list[Any], /
    ) -> Any: ...


class StatefulComputeFn(Protocol):
    def __call__(
        self, state: Any, ctx: OpContext, inputs: list[Any], req: list[Any], outputs: list[Any], /
    ) -> None: ...


class NumVisibleOutputsFn(Protocol):
    def __call__(self, attrs: NodeAttrs, /) -> int: ...


class MutateInputsFn(Protocol):
    def __call__(self, attrs: NodeAttrs, /) -> Sequence[int]: ...


class ResourceRequestFn(Protocol):
    def __call__(self, attrs: NodeAttrs, /) -> Sequence[ResourceRequest]: ...


class SetInputVarAttrOnComposeFn(Protocol):
    def __call__(self, attrs: NodeAttrs, var: Any, index: int, /) -> None: ...


class ScalarFunctionFn(Protocol):
    def __call__(self, attrs: NodeAttrs, /) -> ScalarBody | None: ...


# --- The key table -----------------------------------------------------------------------

_lock = threading.Lock()
_KEYS: dict[str, AttrKey[Any]] = {}


def declare(key: AttrKey[T]) -> AttrKey[T]:
    """Add a key to the table; declaring a name twice is a programming error."""
    with _lock:
        if key.name in _KEYS:
            raise ValueError(f"attribute key {key.name!r} is already declared")
        _KEYS[key.name] = key
    return key


def _key(name: str, doc: str, value_type: type | str = CALLABLE) -> AttrKey[Any]:
    return declare(AttrKey(name, doc, value_type))


FListInputNames: AttrKey[ListNamesFn] = _key(
    "FListInputNames",
    "attrs -> names of the inputs, in order. Read by nd/sym signatures, symbol composition "
    "(keyword inputs, auto-created '<node>_<input>' variables) and error messages. "
    "Absent: 'data' for one input, else 'arg0', 'arg1', ...",
)
FListOutputNames: AttrKey[ListNamesFn] = _key(
    "FListOutputNames",
    "attrs -> names of the outputs. Read by Symbol.list_outputs ('<node>_<name>'). "
    "Absent: 'output' for one output, else 'output0', 'output1', ...",
)
FNumVisibleOutputs: AttrKey[NumVisibleOutputsFn] = _key(
    "FNumVisibleOutputs",
    "attrs -> how many leading outputs users see (the rest are hidden, e.g. a mask kept "
    "for backward). Read by nd/sym. Absent: all outputs are visible.",
)
FInferShape: AttrKey[InferShapeFn] = _key(
    "FInferShape",
    "(attrs, in_shapes, out_shapes) -> bool. Fill unknown entries of both lists in place "
    "(mutual inference); return False when not enough is known yet, raise NNVMError on a "
    "conflict. Read by passes.infer_shape and imperative invoke. Absent: the op's shapes "
    "cannot be inferred (backward ops with TIsBackward take them from the forward node).",
)
FInferType: AttrKey[InferTypeFn] = _key(
    "FInferType",
    "(attrs, in_types, out_types) -> bool, numpy dtypes with None for unknown; same "
    "contract as FInferShape. Read by passes.infer_type and imperative invoke. Absent: "
    "all inputs and outputs share one dtype.",
)
FInplaceOption: AttrKey[InplaceOptionFn] = _key(
    "FInplaceOption",
    "attrs -> [(input_index, output_index), ...] pairs that may share memory. Read by "
    "passes.plan_memory and by nd's out= check. Absent: no in-place.",
)
FInplaceIdentity: AttrKey[InplaceIdentityFn] = _key(
    "FInplaceIdentity",
    "attrs -> one bool per FInplaceOption pair: True when the output equals the input "
    "(e.g. reshape), so sharing is safe even if the input is read again. Read by "
    "passes.plan_memory. Absent: all False.",
)
FGradient: AttrKey[GradientFn] = _key(
    "FGradient",
    "(node, ograds) -> one NodeEntry per input: the gradient graph of this node. Read by "
    "passes.gradient. Absent: the op is not differentiable (an error if a gradient is "
    "needed through it).",
)
FCreateOpState: AttrKey[CreateOpStateFn] = _key(
    "FCreateOpState",
    "(attrs, ctx, in_shapes, in_types) -> state object, created once per bound node and "
    "device, then given to FStatefulCompute<device>. Read by the executor and imperative "
    "invoke. Absent: the op is stateless (uses FCompute).",
)
FMutateInputs: AttrKey[MutateInputsFn] = _key(
    "FMutateInputs",
    "attrs -> indices of inputs the op writes (e.g. BatchNorm's moving mean/var). Read by "
    "symbol (they become auxiliary states), the executor and the engine dependencies. "
    "Absent: inputs are read-only.",
)
FResourceRequest: AttrKey[ResourceRequestFn] = _key(
    "FResourceRequest",
    "attrs -> [ResourceRequest.kTempSpace | kRandom, ...]; granted in OpContext.requested "
    "in the same order. Read by the executor and imperative invoke. Absent: none.",
)
FStampedInputs: AttrKey[MutateInputsFn] = _key(
    "FStampedInputs",
    "attrs -> indices of inputs whose content stamp the compute may read "
    "(nnvmpy.input_stamps: e.g. a cache of transformed weights skips its check while the "
    "weight is unchanged). Read by the executor. Absent: no stamps are published.",
)
TIsBackward: AttrKey[bool] = _key(
    "TIsBackward",
    "True for backward-only ops; their shapes and types come from the forward node "
    "(control dependency 0). Read by passes.infer_shape/infer_type. Absent: False.",
    bool,
)
TParseEveryCall: AttrKey[bool] = _key(
    "TParseEveryCall",
    "True: the attribute parser runs user code with visible effects (Custom builds the "
    "user's CustomOpProp), so each imperative call parses and infers anew, as MXNet does, "
    "instead of reusing the result of an earlier call with the same parameters and input "
    "signature. Read by imperative invoke. Absent: False, results are cached.",
    bool,
)
FSetInputVarAttrOnCompose: AttrKey[SetInputVarAttrOnComposeFn] = _key(
    "FSetInputVarAttrOnCompose",
    "(attrs, var_node, index) -> None: adjust attributes of a variable created for an "
    "input during composition (e.g. mark BatchNorm's gamma). Read by symbol composition. "
    "Absent: nothing.",
)

FScalarFunction: AttrKey[ScalarFunctionFn] = _key(
    "FScalarFunction",
    "attrs -> ScalarBody(kernels, params) or None: the op is element-wise and output k is "
    "kernels[k](*inputs[i], *params) at every i, for ops whose FCompute launches "
    "nv.kernel.elementwise kernels on same-shape inputs (set it with "
    "nv.kernel.scalar_function). Read by passes.fuse_pointwise, which composes the members "
    "of a fused group into one generated kernel. Absent or None (for these attrs): the node "
    "is not fused.",
)

FInferDynamicShape: AttrKey[Any] = _key(
    "FInferDynamicShape",
    "(attrs, input NDArrays) -> output shapes, for an op whose output shapes depend on "
    "its input values (MXNet's dynamic-shape ops: contrib.boolean_mask); it may wait for "
    "the inputs. Read by imperative invoke when FInferShape leaves an output unknown; a "
    "bound graph cannot run such a node (its memory is planned before any value exists). "
    "Absent: output shapes come from FInferShape alone.",
)

# --- Inference simplification and epilogues (passes/simplify_inference.py, fuse_epilogue.py) --

FScaleShift: AttrKey[Any] = _key(
    "FScaleShift",
    "attrs -> ScaleShift (ops/nn/inference.py) or None: at inference, output 0 is input 0 "
    "times scale[c] plus shift[c] along one channel axis, scale and shift computed from "
    "other inputs by a parallel_for loop (BatchNorm with its moving statistics). Read by "
    "passes.simplify_inference, which folds the node into a producer declaring "
    "FFoldScaleShift. Absent or None: never folded.",
)
FFoldScaleShift: AttrKey[Any] = _key(
    "FFoldScaleShift",
    "attrs -> FoldTarget (ops/nn/inference.py) or None: output 0 is linear in input "
    "`weight`, output channel c being weight[c] (axis 0) applied to the data plus bias[c], "
    "so a per-channel scale-shift after it folds into new weight and bias inputs "
    "(Convolution, FullyConnected). Read by passes.simplify_inference. Absent or None: "
    "not a fold target.",
)
FInferenceIdentity: AttrKey[Any] = _key(
    "FInferenceIdentity",
    "attrs -> input index or None: at inference (is_train=False) output 0 equals that "
    "input and the other outputs are only read by backward (Dropout in mode 'training'). "
    "Read by passes.simplify_inference, which removes the node. Absent or None: kept.",
)
TMemoizable: AttrKey[bool] = _key(
    "TMemoizable",
    "True: the outputs are a pure function of the input values (not of is_train, random "
    "draws or state), so the executor gives them memory nothing else writes and skips the "
    "push while no input was written since the node last ran (engine variable versions). "
    "Read by the executor. Absent: False, the node runs at every push.",
    bool,
)
FEpilogue: AttrKey[Any] = _key(
    "FEpilogue",
    "(attrs, ctx, inputs, req, outputs, epilogue) -> None: FCompute that also applies "
    "`epilogue` (Epilogue in ops/nn/inference.py: add the node's last input, then relu) to "
    "output 0 inside the op's own output loop. Read by passes.fuse_epilogue through the "
    "`_Epilogue` op. Absent: the op takes no epilogue.",
)
FEpilogueStep: AttrKey[Any] = _key(
    "FEpilogueStep",
    "attrs -> 'relu' | 'add' | None: the node is y = relu(x), or y = x + r of two "
    "same-shape inputs, so a producer declaring FEpilogue may apply it in its output loop. "
    "Read by passes.fuse_epilogue. Absent or None: not absorbed.",
)
FWithReLU: AttrKey[Any] = _key(
    "FWithReLU",
    "attrs -> (op, op with residual) or None: ops with the same inputs, outputs and "
    "parameters whose output 0 is relu of this op's output 0 (the second: relu of it plus "
    "a last input, the residual), computed in the same kernels, with gradients of their "
    "own (BatchNorm: _contrib_BatchNormWithReLU, _BatchNormAddReLU). Read by "
    "passes.fuse_bn_relu, which rewrites the node and the relu (FEpilogueStep 'relu'), or "
    "add ('add') then relu, reading its output into one node before the gradient is "
    "built. Absent or None: never rewritten.",
)

FChannelsLast: AttrKey[Any] = _key(
    "FChannelsLast",
    "(attrs, input shapes, dtype) -> ChannelsLastTwin (ops/nn/channels_last.py) or None: "
    "the node has a twin op that reads input `data` and writes output 0 channels-last "
    "(N, H, W, C) and computes it faster (the op's own judgement for these shapes), its "
    "weight packed by `_ChannelsLastWeight`. Read by passes.channels_last. Absent or None: "
    "the node stays channels-first.",
)

# --- bfloat16 inference (passes/amp_bfloat16.py, ops/amp_bf16.py) ------------------------------

FBFloat16Compute: AttrKey[Any] = _key(
    "FBFloat16Compute",
    "attrs -> BF16Weight (ops/amp_bf16.py) or None: the op can compute output 0 from "
    "bfloat16 operands with float32 accumulation. Its input `BF16Weight.weight` may then "
    "arrive as bfloat16 bits (uint16, in the packing order BF16Weight names) from a "
    "`_PackBFloat16` node, and the op rounds its float32 data to bfloat16 itself as it "
    "packs it for the GEMM (Convolution, FullyConnected). Read by passes.amp_bfloat16 and "
    "contrib.amp.convert_symbol, which mark such nodes `__amp_dtype__='bfloat16'`. Absent "
    "or None: the node always computes in its own dtype.",
)

_DEVICE_KEY = re.compile(r"^(FCompute|FStatefulCompute)<(\w+)>$")


def fcompute(device: str) -> AttrKey[ComputeFn]:
    """The FCompute<device> key, e.g. fcompute("cpu") is "FCompute<cpu>"."""
    return _device_key("FCompute", device)


def fstateful_compute(device: str) -> AttrKey[StatefulComputeFn]:
    """The FStatefulCompute<device> key."""
    return _device_key("FStatefulCompute", device)


def _device_key(prefix: str, device: str) -> AttrKey[Any]:
    name = f"{prefix}<{device}>"
    with _lock:
        key = _KEYS.get(name)
        if key is None:
            doc = (
                f"{'(attrs' if prefix == 'FCompute' else '(state'}, ctx, inputs, req, "
                f"outputs) -> None on {device} arrays. Read by the executor and "
                f"imperative invoke for {device} contexts. Absent: the op cannot run "
                f"on {device}."
            )
            key = _KEYS[name] = AttrKey(name, doc)
    return key


FCompute_cpu = fcompute("cpu")
FCompute_gpu = fcompute("gpu")
FStatefulCompute_cpu = fstateful_compute("cpu")
FStatefulCompute_gpu = fstateful_compute("gpu")


def get_key(name: str) -> AttrKey[Any] | None:
    """The key with this name, if declared or registered already."""
    match = _DEVICE_KEY.match(name)
    if match:
        return _device_key(match.group(1), match.group(2))
    return _KEYS.get(name)


def resolve_key(key: AttrKey[T] | str, value: object) -> AttrKey[T]:
    """Map a name to its key; an unknown name becomes a key typed by this first value."""
    if isinstance(key, AttrKey):
        # a key made without declare(): the table's key of that name wins, so one name
        # never carries two value types
        with _lock:
            return _KEYS.setdefault(key.name, key)
    found = get_key(key)
    if found is not None:
        return found
    value_type: type | str = CALLABLE if callable(value) else type(value)
    with _lock:
        return _KEYS.setdefault(
            key,
            AttrKey(
                key,
                "Registered without a declaration; its type is that of the first value.",
                value_type,
                declared=False,
            ),
        )


def list_keys() -> list[AttrKey[Any]]:
    with _lock:
        return list(_KEYS.values())


def snapshot_keys() -> dict[str, AttrKey[Any]]:
    with _lock:
        return dict(_KEYS)


def restore_keys(saved: dict[str, AttrKey[Any]]) -> None:
    """Forget keys created after `saved` was taken (test scopes)."""
    with _lock:
        _KEYS.clear()
        _KEYS.update(saved)


__all__ = [
    "CALLABLE",
    "AttrKey",
    "ComputeFn",
    "CreateOpStateFn",
    "FBFloat16Compute",
    "FChannelsLast",
    "FCompute_cpu",
    "FCompute_gpu",
    "FCreateOpState",
    "FGradient",
    "FInferDynamicShape",
    "FInferShape",
    "FInferType",
    "FInplaceIdentity",
    "FInplaceOption",
    "FListInputNames",
    "FListOutputNames",
    "FMutateInputs",
    "FNumVisibleOutputs",
    "FResourceRequest",
    "FScalarFunction",
    "FSetInputVarAttrOnCompose",
    "FStampedInputs",
    "FStatefulCompute_cpu",
    "FStatefulCompute_gpu",
    "GradientFn",
    "InferShapeFn",
    "InferTypeFn",
    "InplaceIdentityFn",
    "InplaceOptionFn",
    "ListNamesFn",
    "MutateInputsFn",
    "NumVisibleOutputsFn",
    "ResourceRequestFn",
    "ScalarFunctionFn",
    "SetInputVarAttrOnComposeFn",
    "StatefulComputeFn",
    "TIsBackward",
    "TParseEveryCall",
    "fcompute",
    "fstateful_compute",
    "get_key",
    "list_keys",
    "resolve_key",
]
