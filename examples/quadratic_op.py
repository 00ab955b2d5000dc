"""MXNet's "create a new operator" tutorial, done on nnvmpy from scratch.

The tutorial writes quadratic_op-inl.h, quadratic_op.cc and quadratic_op.cu; here the
three become the sections of this file: the Parameter, shape/type inference, the
kernels and compute functions, the CPU registration, and a separate GPU block that finds
the op again by name. nnvmpy already ships the tutorial's op as `quadratic`, so this one
is `my_quadratic`. Running the file then performs every step of the tutorial on it and
prints a report:

    python examples/quadratic_op.py

    y = a*x^2 + b*x + c          dL/dx = dL/dy * (2*a*x + b)
"""

from __future__ import annotations

from typing import Any

import nnvmpy as nv

# --- quadratic_op-inl.h: the parameter struct ------------------------------------------------


class QuadraticParam(nv.Parameter):
    """a, b, c default to 0, so users only pass the ones they need (DMLC_DECLARE_FIELD)."""

    a = nv.field(float, default=0.0, describe="Coefficient of the quadratic term in the equation.")
    b = nv.field(float, default=0.0, describe="Coefficient of the linear term in the equation.")
    c = nv.field(float, default=0.0, describe="Constant term in the quadratic equation.")


# --- quadratic_op-inl.h: attribute inference --------------------------------------------------


def quadratic_op_shape(attrs: nv.NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """The tutorial's QuadraticOpShape: mutual inference, output from input and back.

    nv.shape_assign is SHAPE_ASSIGN_CHECK: it fills unknown dimensions and raises
    nv.NNVMError when two known ones differ. `nv.elemwise_shape(1, 1)` does all this for
    any number of inputs and outputs; it is spelled out here to show the idea.
    """
    assert len(in_shapes) == 1
    assert len(out_shapes) == 1
    nv.shape_assign(out_shapes, 0, in_shapes[0])
    nv.shape_assign(in_shapes, 0, out_shapes[0])
    shape = out_shapes[0]
    return shape is not None and all(d is not None for d in shape)


# --- quadratic_op-inl.h: forward and backward ---------------------------------------------------


@nv.kernel.elementwise
def quadratic_map(x, a, b, c):  # struct quadratic_forward
    return a * x * x + b * x + c


@nv.kernel.elementwise
def quadratic_grad_map(dy, x, a, b):  # dL/dx = dL/dy (2ax + b)
    return dy * (2.0 * a * x + b)


def quadratic_op_forward(
    attrs: nv.NodeAttrs, ctx: nv.OpContext, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    """One launch, every device and every req: launch() is Kernel::Launch + KERNEL_ASSIGN."""
    assert len(inputs) == len(outputs) == len(req) == 1
    p = attrs.parsed
    quadratic_map.launch(ctx, outputs[0], req[0], inputs[0], p.a, p.b, p.c)


def quadratic_op_backward(
    attrs: nv.NodeAttrs, ctx: nv.OpContext, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    """inputs = (dL/dy, x), as ElemwiseGradUseIn wires them; outputs = (dL/dx,)."""
    assert len(inputs) == 2
    assert len(outputs) == len(req) == 1
    p = attrs.parsed
    quadratic_grad_map.launch(ctx, outputs[0], req[0], inputs[0], inputs[1], p.a, p.b)


# --- quadratic_op.cc: registration for the CPU --------------------------------------------------

(
    nv.register_op("my_quadratic")
    .describe(
        "This operators implements the quadratic function:\n\n"
        "    f(x) = a * x^2 + b * x + c\n\n"
        "where x is an input tensor and all operations in the function are element-wise.\n"
    )
    .set_attr_parser(QuadraticParam)
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr("FListInputNames", lambda attrs: ["data"])
    .set_attr("FInferShape", quadratic_op_shape)
    .set_attr("FInferType", nv.elemwise_type(1, 1))
    .set_attr("FCompute<cpu>", quadratic_op_forward)
    # the output may take the input's memory (only a hint: PlanMemory decides)
    .set_attr("FInplaceOption", lambda attrs: [(0, 0)])
    .set_attr("FGradient", nv.ElemwiseGradUseIn("_backward_my_quadratic"))
    .add_argument("data", "NDArray-or-Symbol", "Input ndarray")
    .add_arguments(QuadraticParam.fields())
)

(
    nv.register_op("_backward_my_quadratic")
    .set_attr_parser(QuadraticParam)
    .set_num_inputs(2)
    .set_num_outputs(1)
    .set_attr("TIsBackward", True)  # shapes and types come from the forward node
    .set_attr("FCompute<cpu>", quadratic_op_backward)
)

# --- quadratic_op.cu: the same ops, fetched again by name, gain their GPU compute ------------

nv.register_op("my_quadratic").set_attr("FCompute<gpu>", quadratic_op_forward)
nv.register_op("_backward_my_quadratic").set_attr("FCompute<gpu>", quadratic_op_backward)


# --- the tutorial's unit test, as a report ------------------------------------------------------


def describe_op(name: str) -> None:
    op = nv.Op.get(name)
    print(f"registered {name!r}: {op.num_inputs} input, {op.num_outputs} output")
    for key, entry in op.attr_entries().items():
        fn = getattr(entry.value, "__qualname__", None) or repr(entry.value)
        print(f"  {key:<16} {fn}")


def main() -> int:
    from nnvmpy import test_utils
    from nnvmpy.demo import tutorial_steps

    print("MXNet's quadratic-op tutorial with an op registered in this script\n")
    describe_op("my_quadratic")
    describe_op("_backward_my_quadratic")
    print()
    tutorial_steps("my_quadratic")
    # nnvmpy's opcheck: the attributes above checked against each other
    test_utils.check_op("my_quadratic", params={"a": 2.0, "b": 3.0, "c": 1.0})
    print(
        "\ncheck_op('my_quadratic'): shape/type inference both ways, req='add', "
        "in-place, gradient: passed"
    )
    if nv.num_gpus() > 0:
        x = nv.nd.array([[1, 2], [3, 4]], ctx=nv.gpu(0))
        y = nv.nd.my_quadratic(x, a=1, b=2, c=3).asnumpy()
        print(f"on {nv.gpu(0)}: nv.nd.my_quadratic(x, a=1, b=2, c=3) = {y.tolist()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
