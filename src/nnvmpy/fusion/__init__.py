"""Element-wise fusion: groups of element-wise nodes run as one generated kernel.

The FusePointwise pass (passes/fuse_pointwise.py) finds the groups (grouping.py) and
replaces each by a `_FusedOp` node (fused_op.py) whose FusedSpec (spec.py) lists the
members; its compute (compute.py) launches one kernel generated from the members'
scalar functions (codegen.py). See docs/fusion.md.
"""
